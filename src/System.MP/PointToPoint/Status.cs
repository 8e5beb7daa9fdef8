using System.Runtime.InteropServices;

namespace System.MP;

/// <summary>
/// The outcome of a receive or probe: who sent the message, with which tag,
/// and how much arrived.  Its layout is mpcore's <c>mp_status_t</c>, so the
/// core fills it in place.
/// </summary>
[StructLayout(LayoutKind.Sequential)]
public readonly struct Status : IEquatable<Status>
{
    private readonly int _source;
    private readonly int _tag;
    private readonly int _error;
    private readonly int _cancelled;
    private readonly long _bytes;

    internal Status(int source, int tag, long bytes)
    {
        _source = source;
        _tag = tag;
        _error = 0;
        _cancelled = 0;
        _bytes = bytes;
    }

    private Status(int source, int tag, long bytes, bool cancelled)
        : this(source, tag, bytes) => _cancelled = cancelled ? 1 : 0;

    /// <summary>The status of a receive cancelled before it matched a message (an object receive: <see cref="ObjectRequest.Cancel"/>).</summary>
    internal static Status CancelledReceive => new(Mpi.AnySource, Mpi.AnyTag, 0, cancelled: true);

    /// <summary>Rank of the sender (<see cref="Mpi.ProcNull"/> for a receive from ProcNull).</summary>
    public int Source => _source;

    /// <summary>Tag of the message (<see cref="Mpi.AnyTag"/> for a receive from ProcNull).</summary>
    public int Tag => _tag;

    /// <summary>True when the operation was cancelled (<see cref="Request.Cancel"/>).</summary>
    public bool Cancelled => _cancelled != 0;

    /// <summary>Number of bytes the message carried into the buffer.</summary>
    public long ByteCount => _bytes;

    internal int ErrorCode => _error;

    /// <summary>
    /// Number of elements of type <typeparamref name="T"/> received, or
    /// <see cref="Mpi.Undefined"/> when the byte count is not a whole number of
    /// elements or does not fit in an <see cref="int"/> (as MPI_Get_count).
    /// </summary>
    public unsafe int GetCount<T>() where T : unmanaged
    {
        long n = _bytes / sizeof(T);
        return _bytes % sizeof(T) != 0 || n > int.MaxValue ? Mpi.Undefined : (int)n;
    }

    /// <inheritdoc/>
    public bool Equals(Status other) =>
        _source == other._source && _tag == other._tag && _error == other._error &&
        _cancelled == other._cancelled && _bytes == other._bytes;

    /// <inheritdoc/>
    public override bool Equals(object? obj) => obj is Status s && Equals(s);

    /// <inheritdoc/>
    public override int GetHashCode() => HashCode.Combine(_source, _tag, _cancelled, _bytes);

    /// <summary>Compares two statuses field by field.</summary>
    public static bool operator ==(Status left, Status right) => left.Equals(right);

    /// <summary>Compares two statuses field by field.</summary>
    public static bool operator !=(Status left, Status right) => !left.Equals(right);

    /// <inheritdoc/>
    public override string ToString() =>
        $"Status(Source={_source}, Tag={_tag}, Bytes={_bytes}{(Cancelled ? ", Cancelled" : "")})";
}
