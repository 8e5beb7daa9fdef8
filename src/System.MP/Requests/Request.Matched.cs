using System.MP.Interop;

namespace System.MP;

// Requests made outside the send/receive hot path: the nonblocking receive of a
// matched message, and the core handle that outlives the C# side of a request.
public readonly unsafe partial struct Request
{
    /// <summary>
    /// The core's handle of the operation, as posted: the core frees it once the
    /// operation completed and was finished, or once it saw a dropped one complete
    /// (<see cref="Core.ReqLive"/> tells).  ReqNull when already completed here.
    /// </summary>
    internal RequestHandle CoreHandle => Slotted().SetEntry();

    /// <summary>Posts the receive of a matched message into <paramref name="count"/> elements at <paramref name="offset"/> (MPI_Imrecv).</summary>
    internal static Request PostMatchedRecv<T>(T[] buffer, int offset, int count, MessageHandle message) where T : unmanaged
    {
        RequestHandle req = RequestHandle.Null;
        int rc;
        RequestPoster poster = RequestPoster.Current;
        bool register = BufferPolicy.Hold(buffer, count, poster, out BufferHold? pin);
        fixed (T* p = buffer)
            rc = Core.Imrecv(p + offset, (long)count * sizeof(T), message,
                             register ? BufferPolicy.ObjectOf(ref buffer) : null, &req);
        return Posted(poster, rc, req, pin);
    }
}
