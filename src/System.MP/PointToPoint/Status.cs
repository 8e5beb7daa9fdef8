using System.MP.Interop;
using System.Runtime.InteropServices;

namespace System.MP;

/// <summary>
/// The outcome of a receive or probe: who sent the message, with which tag,
/// and how much arrived.
/// </summary>
/// <remarks>
/// Its one field is mpcore's <c>mp_status_t</c>, generated from the core's list of
/// its fields, so the core fills it in place.
/// </remarks>
[StructLayout(LayoutKind.Sequential)]
public readonly struct Status : IEquatable<Status>
{
    private readonly CoreStatus _s;

    internal Status(int source, int tag, long bytes)
    {
        _s.Source = source;
        _s.Tag = tag;
        _s.Bytes = bytes;
    }

    private Status(int source, int tag, long bytes, bool cancelled)
        : this(source, tag, bytes) => _s.Cancelled = cancelled ? 1 : 0;

    /// <summary>The status of a receive cancelled before it matched a message (an object receive: <see cref="ObjectRequest.Cancel"/>).</summary>
    internal static Status CancelledReceive => new(Mpi.AnySource, Mpi.AnyTag, 0, cancelled: true);

    /// <summary>Rank of the sender (<see cref="Mpi.ProcNull"/> for a receive from ProcNull).</summary>
    public int Source => _s.Source;

    /// <summary>Tag of the message (<see cref="Mpi.AnyTag"/> for a receive from ProcNull).</summary>
    public int Tag => _s.Tag;

    /// <summary>True when the operation was cancelled (<see cref="Request.Cancel"/>).</summary>
    public bool Cancelled => _s.Cancelled != 0;

    /// <summary>Number of bytes the message carried into the buffer.</summary>
    public long ByteCount => _s.Bytes;

    internal int ErrorCode => _s.Error;

    /// <summary>
    /// Number of elements of type <typeparamref name="T"/> received, or
    /// <see cref="Mpi.Undefined"/> when the byte count is not a whole number of
    /// elements or does not fit in an <see cref="int"/> (as MPI_Get_count).
    /// </summary>
    public unsafe int GetCount<T>() where T : unmanaged
    {
        long n = _s.Bytes / sizeof(T);
        return _s.Bytes % sizeof(T) != 0 || n > int.MaxValue ? Mpi.Undefined : (int)n;
    }

    /// <inheritdoc/>
    public bool Equals(Status other) =>
        _s.Source == other._s.Source && _s.Tag == other._s.Tag && _s.Error == other._s.Error &&
        _s.Cancelled == other._s.Cancelled && _s.Bytes == other._s.Bytes;

    /// <inheritdoc/>
    public override bool Equals(object? obj) => obj is Status s && Equals(s);

    /// <inheritdoc/>
    public override int GetHashCode() => HashCode.Combine(_s.Source, _s.Tag, _s.Cancelled, _s.Bytes);

    /// <summary>Compares two statuses field by field.</summary>
    public static bool operator ==(Status left, Status right) => left.Equals(right);

    /// <summary>Compares two statuses field by field.</summary>
    public static bool operator !=(Status left, Status right) => !left.Equals(right);

    /// <inheritdoc/>
    public override string ToString() =>
        $"Status(Source={_s.Source}, Tag={_s.Tag}, Bytes={_s.Bytes}{(Cancelled ? ", Cancelled" : "")})";
}
