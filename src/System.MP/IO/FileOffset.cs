namespace System.MP;

/// <summary>
/// Where an explicit-offset access of an <see cref="MpiFile"/> starts, with its unit named:
/// <see cref="Elements"/> counts elements of the buffer's type, <see cref="Bytes"/> counts bytes.
/// Both count the data the file's view shows (from its displacement on, holes of a block
/// view skipped), so they mean the same on a fresh file and after <c>SetView</c>.
/// </summary>
/// <remarks>
/// MPI itself counts offsets in elements of the view's etype: bytes until <c>SetView</c>,
/// elements of the view's type after, so that the same number means different places before
/// and after.  <see cref="MpiFile"/> converts: <c>FileOffset.Elements(rank * count)</c> with an
/// <c>int[]</c> is byte <c>4 * rank * count</c> of a fresh file and element
/// <c>rank * count</c> of an <c>int</c> view.  An offset that falls inside one of the view's
/// elements is refused (<see cref="ArgumentException"/>).
/// </remarks>
/// <example>
/// <code>
/// using MpiFile f = MpiFile.Open(world, "out.bin", MpiFileMode.Create | MpiFileMode.WriteOnly);
/// int[] mine = new int[count];
/// f.WriteAtAll(FileOffset.Elements((long)world.Rank * count), mine); // rank r's ints after r·count ints
/// f.WriteAt(FileOffset.Bytes(0), header);                             // a byte position
/// </code>
/// </example>
public readonly struct FileOffset : IEquatable<FileOffset>
{
    private readonly long _value;
    private readonly bool _bytes;

    private FileOffset(long value, bool bytes)
    {
        _value = value;
        _bytes = bytes;
    }

    /// <summary>An offset of <paramref name="count"/> elements of the buffer's type (what the access reads or writes).</summary>
    /// <param name="count">Elements before the position (not negative).</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="count"/> is negative.</exception>
    public static FileOffset Elements(long count) => new(NonNegative(count, nameof(count)), bytes: false);

    /// <summary>An offset of <paramref name="count"/> bytes of the view's data.</summary>
    /// <param name="count">Bytes before the position (not negative).</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="count"/> is negative.</exception>
    public static FileOffset Bytes(long count) => new(NonNegative(count, nameof(count)), bytes: true);

    /// <summary>The start of the view.</summary>
    public static FileOffset Zero => default;

    /// <summary>The number of elements or bytes.</summary>
    public long Value => _value;

    /// <summary>True for an offset in bytes (<see cref="Bytes"/>), false for one in elements (<see cref="Elements"/>).</summary>
    public bool IsBytes => _bytes;

    /// <summary>
    /// The offset in elements of an <paramref name="etypeSize"/>-byte etype, for an access with
    /// <paramref name="elementSize"/>-byte elements.
    /// </summary>
    internal long InEtypes(int elementSize, int etypeSize)
    {
        long bytes;
        if (_bytes)
            bytes = _value;
        else if (_value > long.MaxValue / elementSize)
            throw new ArgumentOutOfRangeException("offset", _value, SR.Format(SR.FileOffsetTooLarge, this, elementSize));
        else
            bytes = _value * elementSize;
        if (bytes % etypeSize != 0)
            throw new ArgumentException(SR.Format(SR.FileOffsetInsideElement, this, bytes, etypeSize), "offset");
        return bytes / etypeSize;
    }

    private static long NonNegative(long count, string name) =>
        count >= 0 ? count : throw new ArgumentOutOfRangeException(name, count, SR.Format(SR.FileOffsetNegative, count));

    /// <inheritdoc/>
    public bool Equals(FileOffset other) => _value == other._value && (_bytes == other._bytes || _value == 0);

    /// <inheritdoc/>
    public override bool Equals(object? obj) => obj is FileOffset o && Equals(o);

    /// <inheritdoc/>
    public override int GetHashCode() => _value == 0 ? 0 : HashCode.Combine(_value, _bytes);

    /// <summary>True when both name the same position.</summary>
    public static bool operator ==(FileOffset left, FileOffset right) => left.Equals(right);

    /// <summary>True when they name different positions.</summary>
    public static bool operator !=(FileOffset left, FileOffset right) => !left.Equals(right);

    /// <summary>"12 bytes" or "3 elements".</summary>
    public override string ToString() => _bytes ? $"{_value} bytes" : $"{_value} elements";
}
