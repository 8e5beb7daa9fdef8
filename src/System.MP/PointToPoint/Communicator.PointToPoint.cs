using System.MP.Interop;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;

namespace System.MP;

// Point-to-point communication (MPI-4.0 chapter 3).  Buffer operations are
// zero-copy: the message moves straight between the arrays of the two ranks.
// A blocking operation keeps its buffer under `fixed` for its whole life, so a
// pin exists only if a GC happens meanwhile; it is posted and tested by one
// fast call and, only when not complete, waited for in a blocking call.
public unsafe partial class Communicator
{
    /// <summary>Sends the whole array to <paramref name="dest"/> (MPI_Send).</summary>
    /// <param name="buffer">The elements to send.</param>
    /// <param name="dest">Destination rank, or <see cref="Mpi.ProcNull"/>.</param>
    /// <param name="tag">Message tag in [0, MPI_TAG_UB].</param>
    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    public unsafe void Send<T>(T[] buffer, int dest, int tag) where T : unmanaged
    {
        if (buffer is null)
            ThrowHelper.ThrowNull(nameof(buffer));
        CommHandle h = Handle;
        CheckDest(dest);
        CheckSendTag(tag);
        fixed (T* p = buffer)
            PointToPointCore.Send(p, (long)buffer.Length * sizeof(T), dest, tag, h, CoreSendMode.Standard);
    }

    /// <summary>Sends <paramref name="count"/> elements starting at <paramref name="offset"/> (MPI_Send).</summary>
    /// <param name="buffer">The array holding the elements.</param>
    /// <param name="offset">Index of the first element to send.</param>
    /// <param name="count">Number of elements to send.</param>
    /// <param name="dest">Destination rank, or <see cref="Mpi.ProcNull"/>.</param>
    /// <param name="tag">Message tag in [0, MPI_TAG_UB].</param>
    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    public unsafe void Send<T>(T[] buffer, int offset, int count, int dest, int tag) where T : unmanaged
    {
        ThrowHelper.CheckSlice(buffer, offset, count, nameof(buffer));
        CommHandle h = Handle;
        CheckDest(dest);
        CheckSendTag(tag);
        fixed (T* p = buffer)
            PointToPointCore.Send(p + offset, (long)count * sizeof(T), dest, tag, h, CoreSendMode.Standard);
    }

    /// <summary>Sends the elements of a span (MPI_Send).</summary>
    /// <param name="buffer">The elements to send.</param>
    /// <param name="dest">Destination rank, or <see cref="Mpi.ProcNull"/>.</param>
    /// <param name="tag">Message tag in [0, MPI_TAG_UB].</param>
    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    public unsafe void Send<T>(ReadOnlySpan<T> buffer, int dest, int tag) where T : unmanaged
    {
        CommHandle h = Handle;
        CheckDest(dest);
        CheckSendTag(tag);
        fixed (T* p = buffer)
            PointToPointCore.Send(p, (long)buffer.Length * sizeof(T), dest, tag, h, CoreSendMode.Standard);
    }

    /// <summary>Sends one value (MPI_Send of one element).</summary>
    /// <param name="value">The value to send.</param>
    /// <param name="dest">Destination rank, or <see cref="Mpi.ProcNull"/>.</param>
    /// <param name="tag">Message tag in [0, MPI_TAG_UB].</param>
    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    public unsafe void Send<T>(T value, int dest, int tag) where T : unmanaged
    {
        CommHandle h = Handle;
        CheckDest(dest);
        CheckSendTag(tag);
        PointToPointCore.Send(&value, sizeof(T), dest, tag, h, CoreSendMode.Standard);
    }

    /// <summary>
    /// Sends the whole array and returns only once the matching receive has
    /// started (MPI_Ssend).
    /// </summary>
    /// <param name="buffer">The elements to send.</param>
    /// <param name="dest">Destination rank, or <see cref="Mpi.ProcNull"/>.</param>
    /// <param name="tag">Message tag in [0, MPI_TAG_UB].</param>
    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    public unsafe void SyncSend<T>(T[] buffer, int dest, int tag) where T : unmanaged
    {
        if (buffer is null)
            ThrowHelper.ThrowNull(nameof(buffer));
        CommHandle h = Handle;
        CheckDest(dest);
        CheckSendTag(tag);
        fixed (T* p = buffer)
            PointToPointCore.Send(p, (long)buffer.Length * sizeof(T), dest, tag, h, CoreSendMode.Sync);
    }

    /// <summary>Receives into the whole array (MPI_Recv).</summary>
    /// <param name="buffer">Where the message goes; it may be longer than the message.</param>
    /// <param name="source">Source rank, <see cref="Mpi.AnySource"/> or <see cref="Mpi.ProcNull"/>.</param>
    /// <param name="tag">Message tag, or <see cref="Mpi.AnyTag"/>.</param>
    /// <returns>Who sent it, its tag and how much arrived.</returns>
    /// <exception cref="MessageTruncatedException">The message was longer than the array; only the array was written.</exception>
    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    public unsafe Status Recv<T>(T[] buffer, int source, int tag) where T : unmanaged
    {
        if (buffer is null)
            ThrowHelper.ThrowNull(nameof(buffer));
        CommHandle h = Handle;
        CheckSource(source);
        CheckRecvTag(tag);
        fixed (T* p = buffer)
            return PointToPointCore.Recv(p, (long)buffer.Length * sizeof(T), source, tag, h);
    }

    /// <summary>Receives into <paramref name="count"/> elements starting at <paramref name="offset"/> (MPI_Recv).</summary>
    /// <param name="buffer">The array to receive into.</param>
    /// <param name="offset">Index of the first element to write.</param>
    /// <param name="count">Capacity in elements; nothing outside [offset, offset + count) is written.</param>
    /// <param name="source">Source rank, <see cref="Mpi.AnySource"/> or <see cref="Mpi.ProcNull"/>.</param>
    /// <param name="tag">Message tag, or <see cref="Mpi.AnyTag"/>.</param>
    /// <returns>Who sent it, its tag and how much arrived.</returns>
    /// <exception cref="MessageTruncatedException">The message was longer than <paramref name="count"/> elements.</exception>
    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    public unsafe Status Recv<T>(T[] buffer, int offset, int count, int source, int tag) where T : unmanaged
    {
        ThrowHelper.CheckSlice(buffer, offset, count, nameof(buffer));
        CommHandle h = Handle;
        CheckSource(source);
        CheckRecvTag(tag);
        fixed (T* p = buffer)
            return PointToPointCore.Recv(p + offset, (long)count * sizeof(T), source, tag, h);
    }

    /// <summary>Receives into a span (MPI_Recv).</summary>
    /// <param name="buffer">Where the message goes.</param>
    /// <param name="source">Source rank, <see cref="Mpi.AnySource"/> or <see cref="Mpi.ProcNull"/>.</param>
    /// <param name="tag">Message tag, or <see cref="Mpi.AnyTag"/>.</param>
    /// <returns>Who sent it, its tag and how much arrived.</returns>
    /// <exception cref="MessageTruncatedException">The message was longer than the span.</exception>
    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    public unsafe Status Recv<T>(Span<T> buffer, int source, int tag) where T : unmanaged
    {
        CommHandle h = Handle;
        CheckSource(source);
        CheckRecvTag(tag);
        fixed (T* p = buffer)
            return PointToPointCore.Recv(p, (long)buffer.Length * sizeof(T), source, tag, h);
    }

    /// <summary>Receives one value (MPI_Recv of one element).</summary>
    /// <param name="source">Source rank, <see cref="Mpi.AnySource"/> or <see cref="Mpi.ProcNull"/>.</param>
    /// <param name="tag">Message tag, or <see cref="Mpi.AnyTag"/>.</param>
    /// <returns>The value; default when <paramref name="source"/> is <see cref="Mpi.ProcNull"/>.</returns>
    /// <exception cref="MpiException">The message was shorter than one value.</exception>
    public T Recv<T>(int source, int tag) where T : unmanaged => Recv<T>(source, tag, out _);

    /// <summary>Receives one value (MPI_Recv of one element) and its status.</summary>
    /// <param name="source">Source rank, <see cref="Mpi.AnySource"/> or <see cref="Mpi.ProcNull"/>.</param>
    /// <param name="tag">Message tag, or <see cref="Mpi.AnyTag"/>.</param>
    /// <param name="status">Who sent it and with which tag.</param>
    /// <returns>The value; default when <paramref name="source"/> is <see cref="Mpi.ProcNull"/>.</returns>
    /// <exception cref="MpiException">The message was shorter than one value.</exception>
    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    public unsafe T Recv<T>(int source, int tag, out Status status) where T : unmanaged
    {
        CommHandle h = Handle;
        CheckSource(source);
        CheckRecvTag(tag);
        T value = default;
        status = PointToPointCore.Recv(&value, sizeof(T), source, tag, h);
        if (status.ByteCount != sizeof(T) && status.Source != Mpi.ProcNull)
            ThrowHelper.ThrowShortScalar(status.ByteCount, typeof(T), sizeof(T));
        return value;
    }

    /// <summary>
    /// Sends one array and receives another in one operation, free of the
    /// deadlock two blocking calls could cause (MPI_Sendrecv).
    /// </summary>
    /// <param name="sendBuffer">The elements to send.</param>
    /// <param name="dest">Destination rank, or <see cref="Mpi.ProcNull"/>.</param>
    /// <param name="sendTag">Tag of the outgoing message.</param>
    /// <param name="recvBuffer">Where the incoming message goes (a different array).</param>
    /// <param name="source">Source rank, <see cref="Mpi.AnySource"/> or <see cref="Mpi.ProcNull"/>.</param>
    /// <param name="recvTag">Tag of the incoming message, or <see cref="Mpi.AnyTag"/>.</param>
    /// <returns>The status of the receive.</returns>
    /// <exception cref="ArgumentException">Both buffers are the same non-empty array (use <see cref="SendRecvReplace{T}"/>); nothing was sent.</exception>
    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    public unsafe Status SendRecv<T>(T[] sendBuffer, int dest, int sendTag,
                                     T[] recvBuffer, int source, int recvTag) where T : unmanaged
    {
        if (sendBuffer is null)
            ThrowHelper.ThrowNull(nameof(sendBuffer));
        if (recvBuffer is null)
            ThrowHelper.ThrowNull(nameof(recvBuffer));
        CommHandle h = Handle;
        CheckSendRecv(dest, sendTag, source, recvTag);
        CheckDistinct(sendBuffer, recvBuffer, nameof(recvBuffer), SR.SendRecvSameArray);
        fixed (T* r = recvBuffer)
        fixed (T* s = sendBuffer)
            return PointToPointCore.SendRecv(s, (long)sendBuffer.Length * sizeof(T), dest, sendTag,
                                r, (long)recvBuffer.Length * sizeof(T), source, recvTag, h);
    }

    /// <summary>
    /// Sends one value and receives one, in one operation free of the deadlock two blocking
    /// calls could cause (MPI_Sendrecv of one element each way).
    /// </summary>
    /// <param name="value">The value to send.</param>
    /// <param name="dest">Destination rank, or <see cref="Mpi.ProcNull"/>.</param>
    /// <param name="sendTag">Tag of the outgoing message.</param>
    /// <param name="source">Source rank, <see cref="Mpi.AnySource"/> or <see cref="Mpi.ProcNull"/>.</param>
    /// <param name="recvTag">Tag of the incoming message, or <see cref="Mpi.AnyTag"/>.</param>
    /// <returns>The value received; default when <paramref name="source"/> is <see cref="Mpi.ProcNull"/>.</returns>
    /// <exception cref="MpiException">The incoming message was shorter than one value.</exception>
    public T SendRecv<T>(T value, int dest, int sendTag, int source, int recvTag) where T : unmanaged =>
        SendRecv(value, dest, sendTag, source, recvTag, out _);

    /// <summary>Sends one value and receives one (MPI_Sendrecv of one element each way), with the receive's status.</summary>
    /// <param name="value">The value to send.</param>
    /// <param name="dest">Destination rank, or <see cref="Mpi.ProcNull"/>.</param>
    /// <param name="sendTag">Tag of the outgoing message.</param>
    /// <param name="source">Source rank, <see cref="Mpi.AnySource"/> or <see cref="Mpi.ProcNull"/>.</param>
    /// <param name="recvTag">Tag of the incoming message, or <see cref="Mpi.AnyTag"/>.</param>
    /// <param name="status">Who sent the incoming value and with which tag.</param>
    /// <returns>The value received; default when <paramref name="source"/> is <see cref="Mpi.ProcNull"/>.</returns>
    /// <exception cref="MpiException">The incoming message was shorter than one value.</exception>
    public unsafe T SendRecv<T>(T value, int dest, int sendTag, int source, int recvTag, out Status status) where T : unmanaged
    {
        CommHandle h = Handle;
        CheckSendRecv(dest, sendTag, source, recvTag);
        T result = default;
        status = PointToPointCore.SendRecv(&value, sizeof(T), dest, sendTag, &result, sizeof(T), source, recvTag, h);
        if (status.ByteCount != sizeof(T) && status.Source != Mpi.ProcNull)
            ThrowHelper.ThrowShortScalar(status.ByteCount, typeof(T), sizeof(T));
        return result;
    }

    /// <summary>
    /// Sends the array and receives into it the incoming message, which may have
    /// another length, in one step (MPI_Sendrecv_replace): what leaves is the
    /// array's content before the call.
    /// </summary>
    /// <param name="buffer">The elements to send, then where the incoming message goes.</param>
    /// <param name="dest">Destination rank, or <see cref="Mpi.ProcNull"/>.</param>
    /// <param name="sendTag">Tag of the outgoing message.</param>
    /// <param name="source">Source rank, <see cref="Mpi.AnySource"/> or <see cref="Mpi.ProcNull"/>.</param>
    /// <param name="recvTag">Tag of the incoming message, or <see cref="Mpi.AnyTag"/>.</param>
    /// <returns>The status of the receive.</returns>
    /// <exception cref="MessageTruncatedException">The incoming message was longer than the array.</exception>
    public unsafe Status SendRecvReplace<T>(T[] buffer, int dest, int sendTag, int source, int recvTag) where T : unmanaged
    {
        if (buffer is null)
            ThrowHelper.ThrowNull(nameof(buffer));
        CommHandle h = Handle;
        CheckSendRecv(dest, sendTag, source, recvTag);
        // The outgoing copy lives in native memory: MPI's own replace stages the same way.
        long bytes = (long)buffer.Length * sizeof(T);
        void* copy = NativeMemory.Alloc((nuint)Math.Max(bytes, 1));
        try
        {
            fixed (T* p = buffer)
            {
                Buffer.MemoryCopy(p, copy, bytes, bytes);
                return PointToPointCore.SendRecv(copy, bytes, dest, sendTag, p, bytes, source, recvTag, h);
            }
        }
        finally
        {
            NativeMemory.Free(copy);
        }
    }

    private void CheckSendRecv(int dest, int sendTag, int source, int recvTag)
    {
        CheckDest(dest);
        CheckSource(source);
        if ((uint)sendTag > (uint)Mpi.TagUpperBound)
            ThrowHelper.ThrowTag(sendTag, allowAny: false, nameof(sendTag));
        if ((uint)recvTag > (uint)Mpi.TagUpperBound && recvTag != Mpi.AnyTag)
            ThrowHelper.ThrowTag(recvTag, allowAny: true, nameof(recvTag));
    }

    /// <summary>Waits until a matching message is pending and returns its status, without receiving it (MPI_Probe).</summary>
    /// <param name="source">Source rank, <see cref="Mpi.AnySource"/> or <see cref="Mpi.ProcNull"/>.</param>
    /// <param name="tag">Message tag, or <see cref="Mpi.AnyTag"/>.</param>
    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    public unsafe Status Probe(int source, int tag)
    {
        CommHandle h = Handle;
        CheckSource(source);
        CheckRecvTag(tag);
        Status status;
        if (HangReport.Enabled)
            HangReport.Describe("Probe", h, source, tag);
        int rc = PointToPointCore.Probe(source, tag, h, &status, block: true);
        ThrowHelper.Check(rc);
        return status;
    }

    /// <summary>Checks, without waiting, whether a matching message is pending (MPI_Iprobe).</summary>
    /// <param name="source">Source rank, <see cref="Mpi.AnySource"/> or <see cref="Mpi.ProcNull"/>.</param>
    /// <param name="tag">Message tag, or <see cref="Mpi.AnyTag"/>.</param>
    /// <param name="status">The pending message's status when the result is true.</param>
    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    public unsafe bool IProbe(int source, int tag, out Status status)
    {
        CommHandle h = Handle;
        CheckSource(source);
        CheckRecvTag(tag);
        Status st;
        int rc = PointToPointCore.Probe(source, tag, h, &st, block: false);
        ThrowHelper.Check(rc);
        status = rc == 1 ? st : default;
        return rc == 1;
    }

    /// <summary>
    /// Waits for a matching message and takes it out of matching (MPI_Mprobe):
    /// its size is known before receiving, and no other receive can take it.
    /// </summary>
    /// <param name="source">Source rank, <see cref="Mpi.AnySource"/> or <see cref="Mpi.ProcNull"/>.</param>
    /// <param name="tag">Message tag, or <see cref="Mpi.AnyTag"/>.</param>
    /// <returns>The message; receive it with <see cref="Message.Recv{T}(T[])"/>.</returns>
    public Message MProbe(int source, int tag)
    {
        CommHandle h = Handle;
        CheckSource(source);
        CheckRecvTag(tag);
        Status status = PointToPointCore.MProbe(source, tag, h, out MessageHandle msg);
        return new Message(msg, status);
    }

    /// <summary>Takes a matching message out of matching if one is pending (MPI_Improbe).</summary>
    /// <param name="source">Source rank, <see cref="Mpi.AnySource"/> or <see cref="Mpi.ProcNull"/>.</param>
    /// <param name="tag">Message tag, or <see cref="Mpi.AnyTag"/>.</param>
    /// <param name="message">The message when the result is true.</param>
    public bool IMProbe(int source, int tag, [Diagnostics.CodeAnalysis.NotNullWhen(true)] out Message? message)
    {
        CommHandle h = Handle;
        CheckSource(source);
        CheckRecvTag(tag);
        bool matched = PointToPointCore.TryMProbe(source, tag, h, out MessageHandle msg, out Status status);
        message = matched ? new Message(msg, status) : null;
        return matched;
    }

    /// <summary>Starts sending the whole array (MPI_Isend).  The array must not change until the request completes.</summary>
    /// <param name="buffer">The elements to send.</param>
    /// <param name="dest">Destination rank, or <see cref="Mpi.ProcNull"/>.</param>
    /// <param name="tag">Message tag in [0, MPI_TAG_UB].</param>
    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    public Request ISend<T>(T[] buffer, int dest, int tag) where T : unmanaged
    {
        if (buffer is null)
            ThrowHelper.ThrowNull(nameof(buffer));
        return ISend(buffer, 0, buffer.Length, dest, tag);
    }

    /// <summary>Starts sending <paramref name="count"/> elements from <paramref name="offset"/> (MPI_Isend).</summary>
    /// <param name="buffer">The array holding the elements.</param>
    /// <param name="offset">Index of the first element to send.</param>
    /// <param name="count">Number of elements to send.</param>
    /// <param name="dest">Destination rank, or <see cref="Mpi.ProcNull"/>.</param>
    /// <param name="tag">Message tag in [0, MPI_TAG_UB].</param>
    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    public Request ISend<T>(T[] buffer, int offset, int count, int dest, int tag) where T : unmanaged
    {
        ThrowHelper.CheckSlice(buffer, offset, count, nameof(buffer));
        CommHandle h = Handle;
        CheckDest(dest);
        CheckSendTag(tag);
        return Request.PostSend(buffer, offset, count, dest, tag, h, CoreSendMode.Standard);
    }

    /// <summary>
    /// Starts a synchronous send of the whole array (MPI_Issend): the request
    /// completes only once the receiver has started receiving the message.
    /// </summary>
    /// <param name="buffer">The elements to send; unchanged until the request completes.</param>
    /// <param name="dest">Destination rank, or <see cref="Mpi.ProcNull"/>.</param>
    /// <param name="tag">Message tag in [0, MPI_TAG_UB].</param>
    /// <remarks>
    /// Buffered (MPI_Bsend) and ready (MPI_Rsend) sends are not offered.  A buffered
    /// send decouples the sender from the receiver by copying into a buffer the
    /// program attached to MPI; <see cref="ISend{T}(T[], int, int)"/> already returns at
    /// once without any copy, and a request that is dropped is completed by the
    /// core, so nothing is gained but a fixed-size buffer whose overflow is an MPI
    /// error.  A ready send is only correct when the matching receive is already
    /// posted, which no library can check: a mistake is undefined behaviour, not an
    /// exception, and neither MPICH nor Open MPI gains from it on shared memory or TCP.
    /// </remarks>
    public Request ISsend<T>(T[] buffer, int dest, int tag) where T : unmanaged =>
        ISsend(buffer, 0, WholeLength(buffer), dest, tag);

    /// <summary>Starts a synchronous send of <paramref name="count"/> elements from <paramref name="offset"/> (MPI_Issend).</summary>
    /// <param name="buffer">The array holding the elements.</param>
    /// <param name="offset">Index of the first element to send.</param>
    /// <param name="count">Number of elements to send.</param>
    /// <param name="dest">Destination rank, or <see cref="Mpi.ProcNull"/>.</param>
    /// <param name="tag">Message tag in [0, MPI_TAG_UB].</param>
    public Request ISsend<T>(T[] buffer, int offset, int count, int dest, int tag) where T : unmanaged
    {
        ThrowHelper.CheckSlice(buffer, offset, count, nameof(buffer));
        CommHandle h = Handle;
        CheckDest(dest);
        CheckSendTag(tag);
        return Request.PostSend(buffer, offset, count, dest, tag, h, CoreSendMode.Sync);
    }

    /// <summary>Starts receiving into the whole array (MPI_Irecv).  Do not touch the array until the request completes.</summary>
    /// <param name="buffer">Where the message goes.</param>
    /// <param name="source">Source rank, <see cref="Mpi.AnySource"/> or <see cref="Mpi.ProcNull"/>.</param>
    /// <param name="tag">Message tag, or <see cref="Mpi.AnyTag"/>.</param>
    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    public Request IRecv<T>(T[] buffer, int source, int tag) where T : unmanaged
    {
        if (buffer is null)
            ThrowHelper.ThrowNull(nameof(buffer));
        return IRecv(buffer, 0, buffer.Length, source, tag);
    }

    /// <summary>
    /// Starts receiving one value (MPI_Irecv of one element); the request's
    /// <see cref="ValueRequest{T}.Result"/> (or <c>await</c>) gives it once it has arrived.
    /// </summary>
    /// <param name="source">Source rank, <see cref="Mpi.AnySource"/> or <see cref="Mpi.ProcNull"/>.</param>
    /// <param name="tag">Message tag, or <see cref="Mpi.AnyTag"/>.</param>
    /// <returns>The receive in flight.</returns>
    public ValueRequest<T> IRecv<T>(int source, int tag) where T : unmanaged
    {
        var box = new T[1];
        CommHandle h = Handle;
        CheckSource(source);
        CheckRecvTag(tag);
        // On a slot: the value's reader is attached to the request, which an entry of a block would first leave.
        return new ValueRequest<T>(Request.PostRecv(box, 0, 1, source, tag, h, onSlot: true), box);
    }

    /// <summary>Starts receiving into <paramref name="count"/> elements from <paramref name="offset"/> (MPI_Irecv).</summary>
    /// <param name="buffer">The array to receive into.</param>
    /// <param name="offset">Index of the first element to write.</param>
    /// <param name="count">Capacity in elements.</param>
    /// <param name="source">Source rank, <see cref="Mpi.AnySource"/> or <see cref="Mpi.ProcNull"/>.</param>
    /// <param name="tag">Message tag, or <see cref="Mpi.AnyTag"/>.</param>
    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    public Request IRecv<T>(T[] buffer, int offset, int count, int source, int tag) where T : unmanaged
    {
        ThrowHelper.CheckSlice(buffer, offset, count, nameof(buffer));
        CommHandle h = Handle;
        CheckSource(source);
        CheckRecvTag(tag);
        return Request.PostRecv(buffer, offset, count, source, tag, h);
    }

    // ---- into a RequestList: nothing allocated per operation ----

    /// <summary>Starts sending the whole array (MPI_Isend) as the next operation of <paramref name="requests"/>.</summary>
    /// <param name="buffer">The elements to send; unchanged until the list completes.</param>
    /// <param name="dest">Destination rank, or <see cref="Mpi.ProcNull"/>.</param>
    /// <param name="tag">Message tag in [0, MPI_TAG_UB].</param>
    /// <param name="requests">The list the operation joins; complete it with <see cref="RequestList.WaitAll()"/>.</param>
    /// <returns>The operation's index in the list (its entry in the statuses of a WaitAll).</returns>
    /// <exception cref="InvalidOperationException">The list is full (nothing is sent).</exception>
    /// <exception cref="InsufficientMemoryException">The process's pending requests fill the MPI library's pool (see <see cref="RequestList"/>; nothing is sent).</exception>
    /// <exception cref="ObjectDisposedException">The list or the communicator was disposed.</exception>
    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    public int ISend<T>(T[] buffer, int dest, int tag, RequestList requests) where T : unmanaged =>
        ISend(buffer, 0, WholeLength(buffer), dest, tag, requests);

    /// <summary>Starts sending <paramref name="count"/> elements from <paramref name="offset"/> (MPI_Isend) as the next operation of <paramref name="requests"/>.</summary>
    /// <param name="buffer">The array holding the elements; unchanged until the list completes.</param>
    /// <param name="offset">Index of the first element to send.</param>
    /// <param name="count">Number of elements to send.</param>
    /// <param name="dest">Destination rank, or <see cref="Mpi.ProcNull"/>.</param>
    /// <param name="tag">Message tag in [0, MPI_TAG_UB].</param>
    /// <param name="requests">The list the operation joins.</param>
    /// <returns>The operation's index in the list.</returns>
    /// <exception cref="InvalidOperationException">The list is full (nothing is sent).</exception>
    /// <exception cref="InsufficientMemoryException">The process's pending requests fill the MPI library's pool (see <see cref="RequestList"/>; nothing is sent).</exception>
    /// <exception cref="ObjectDisposedException">The list or the communicator was disposed.</exception>
    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    public int ISend<T>(T[] buffer, int offset, int count, int dest, int tag, RequestList requests) where T : unmanaged =>
        PostSend(buffer, offset, count, dest, tag, requests, CoreSendMode.Standard);

    /// <summary>Starts a synchronous send of the whole array (MPI_Issend) as the next operation of <paramref name="requests"/>.</summary>
    /// <param name="buffer">The elements to send; unchanged until the list completes.</param>
    /// <param name="dest">Destination rank, or <see cref="Mpi.ProcNull"/>.</param>
    /// <param name="tag">Message tag in [0, MPI_TAG_UB].</param>
    /// <param name="requests">The list the operation joins.</param>
    /// <returns>The operation's index in the list.</returns>
    /// <exception cref="InvalidOperationException">The list is full (nothing is sent).</exception>
    /// <exception cref="InsufficientMemoryException">The process's pending requests fill the MPI library's pool (see <see cref="RequestList"/>; nothing is sent).</exception>
    /// <exception cref="ObjectDisposedException">The list or the communicator was disposed.</exception>
    public int ISsend<T>(T[] buffer, int dest, int tag, RequestList requests) where T : unmanaged =>
        ISsend(buffer, 0, WholeLength(buffer), dest, tag, requests);

    /// <summary>Starts a synchronous send of <paramref name="count"/> elements from <paramref name="offset"/> (MPI_Issend) as the next operation of <paramref name="requests"/>.</summary>
    /// <param name="buffer">The array holding the elements; unchanged until the list completes.</param>
    /// <param name="offset">Index of the first element to send.</param>
    /// <param name="count">Number of elements to send.</param>
    /// <param name="dest">Destination rank, or <see cref="Mpi.ProcNull"/>.</param>
    /// <param name="tag">Message tag in [0, MPI_TAG_UB].</param>
    /// <param name="requests">The list the operation joins.</param>
    /// <returns>The operation's index in the list.</returns>
    /// <exception cref="InvalidOperationException">The list is full (nothing is sent).</exception>
    /// <exception cref="InsufficientMemoryException">The process's pending requests fill the MPI library's pool (see <see cref="RequestList"/>; nothing is sent).</exception>
    /// <exception cref="ObjectDisposedException">The list or the communicator was disposed.</exception>
    public int ISsend<T>(T[] buffer, int offset, int count, int dest, int tag, RequestList requests) where T : unmanaged =>
        PostSend(buffer, offset, count, dest, tag, requests, CoreSendMode.Sync);

    /// <summary>Checks a send's arguments, then posts it into the list (ISend and ISsend into a RequestList).</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private int PostSend<T>(T[] buffer, int offset, int count, int dest, int tag, RequestList requests, int mode)
        where T : unmanaged
    {
        ThrowHelper.CheckSlice(buffer, offset, count, nameof(buffer));
        CommHandle h = Handle;
        CheckDest(dest);
        CheckSendTag(tag);
        if (requests is null)
            ThrowHelper.ThrowNull(nameof(requests));
        return requests.PostSend(buffer, offset, count, dest, tag, h, mode);
    }

    /// <summary>Starts receiving into the whole array (MPI_Irecv) as the next operation of <paramref name="requests"/>.</summary>
    /// <param name="buffer">Where the message goes; not to be touched until the list completes.</param>
    /// <param name="source">Source rank, <see cref="Mpi.AnySource"/> or <see cref="Mpi.ProcNull"/>.</param>
    /// <param name="tag">Message tag, or <see cref="Mpi.AnyTag"/>.</param>
    /// <param name="requests">The list the operation joins.</param>
    /// <returns>The operation's index in the list (its entry in the statuses of a WaitAll).</returns>
    /// <exception cref="InvalidOperationException">The list is full (nothing is posted).</exception>
    /// <exception cref="InsufficientMemoryException">The process's pending requests fill the MPI library's pool (see <see cref="RequestList"/>; nothing is posted).</exception>
    /// <exception cref="ObjectDisposedException">The list or the communicator was disposed.</exception>
    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    public int IRecv<T>(T[] buffer, int source, int tag, RequestList requests) where T : unmanaged =>
        IRecv(buffer, 0, WholeLength(buffer), source, tag, requests);

    /// <summary>Starts receiving into <paramref name="count"/> elements from <paramref name="offset"/> (MPI_Irecv) as the next operation of <paramref name="requests"/>.</summary>
    /// <param name="buffer">The array to receive into.</param>
    /// <param name="offset">Index of the first element to write.</param>
    /// <param name="count">Capacity in elements.</param>
    /// <param name="source">Source rank, <see cref="Mpi.AnySource"/> or <see cref="Mpi.ProcNull"/>.</param>
    /// <param name="tag">Message tag, or <see cref="Mpi.AnyTag"/>.</param>
    /// <param name="requests">The list the operation joins.</param>
    /// <returns>The operation's index in the list.</returns>
    /// <exception cref="InvalidOperationException">The list is full (nothing is posted).</exception>
    /// <exception cref="InsufficientMemoryException">The process's pending requests fill the MPI library's pool (see <see cref="RequestList"/>; nothing is posted).</exception>
    /// <exception cref="ObjectDisposedException">The list or the communicator was disposed.</exception>
    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    public int IRecv<T>(T[] buffer, int offset, int count, int source, int tag, RequestList requests) where T : unmanaged
    {
        ThrowHelper.CheckSlice(buffer, offset, count, nameof(buffer));
        CommHandle h = Handle;
        CheckSource(source);
        CheckRecvTag(tag);
        if (requests is null)
            ThrowHelper.ThrowNull(nameof(requests));
        return requests.PostRecv(buffer, offset, count, source, tag, h);
    }

    // ---- persistent requests (MPI-4.0 3.9) ----

    /// <summary>
    /// Makes a persistent send of the whole array (MPI_Send_init): start it with
    /// <see cref="PersistentRequest.Start"/> as often as needed.  Each instance sends
    /// what the array holds when it starts.
    /// </summary>
    /// <param name="buffer">The elements to send (the array may move between instances).</param>
    /// <param name="dest">Destination rank, or <see cref="Mpi.ProcNull"/>.</param>
    /// <param name="tag">Message tag in [0, MPI_TAG_UB].</param>
    public PersistentRequest SendInit<T>(T[] buffer, int dest, int tag) where T : unmanaged =>
        SendInit(buffer, 0, WholeLength(buffer), dest, tag, CoreSendMode.Standard);

    /// <summary>Makes a persistent send of <paramref name="count"/> elements from <paramref name="offset"/> (MPI_Send_init).</summary>
    /// <param name="buffer">The array holding the elements.</param>
    /// <param name="offset">Index of the first element to send.</param>
    /// <param name="count">Number of elements to send.</param>
    /// <param name="dest">Destination rank, or <see cref="Mpi.ProcNull"/>.</param>
    /// <param name="tag">Message tag in [0, MPI_TAG_UB].</param>
    public PersistentRequest SendInit<T>(T[] buffer, int offset, int count, int dest, int tag) where T : unmanaged =>
        SendInit(buffer, offset, count, dest, tag, CoreSendMode.Standard);

    /// <summary>
    /// Makes a persistent synchronous send of the whole array (MPI_Ssend_init): each
    /// instance completes only once the matching receive has started.
    /// </summary>
    /// <param name="buffer">The elements to send (the array may move between instances).</param>
    /// <param name="dest">Destination rank, or <see cref="Mpi.ProcNull"/>.</param>
    /// <param name="tag">Message tag in [0, MPI_TAG_UB].</param>
    public PersistentRequest SsendInit<T>(T[] buffer, int dest, int tag) where T : unmanaged =>
        SendInit(buffer, 0, WholeLength(buffer), dest, tag, CoreSendMode.Sync);

    /// <summary>The length of an array passed whole, refusing null.</summary>
    private static int WholeLength(Array buffer)
    {
        if (buffer is null)
            ThrowHelper.ThrowNull(nameof(buffer));
        return buffer.Length;
    }

    /// <summary>Makes a persistent synchronous send of <paramref name="count"/> elements from <paramref name="offset"/> (MPI_Ssend_init).</summary>
    /// <param name="buffer">The array holding the elements.</param>
    /// <param name="offset">Index of the first element to send.</param>
    /// <param name="count">Number of elements to send.</param>
    /// <param name="dest">Destination rank, or <see cref="Mpi.ProcNull"/>.</param>
    /// <param name="tag">Message tag in [0, MPI_TAG_UB].</param>
    public PersistentRequest SsendInit<T>(T[] buffer, int offset, int count, int dest, int tag) where T : unmanaged =>
        SendInit(buffer, offset, count, dest, tag, CoreSendMode.Sync);

    private PersistentRequest SendInit<T>(T[] buffer, int offset, int count, int dest, int tag, int mode) where T : unmanaged
    {
        ThrowHelper.CheckSlice(buffer, offset, count, nameof(buffer));
        CommHandle h = Handle;
        CheckDest(dest);
        CheckSendTag(tag);
        return PersistentRequest.InitPointToPoint(buffer, offset, count, dest, tag, h, mode, receive: false);
    }

    /// <summary>
    /// Makes a persistent receive into the whole array (MPI_Recv_init).  A message
    /// longer than the array makes that instance throw <see cref="MessageTruncatedException"/>.
    /// </summary>
    /// <param name="buffer">Where each message goes (the array may move between instances).</param>
    /// <param name="source">Source rank, <see cref="Mpi.AnySource"/> or <see cref="Mpi.ProcNull"/>.</param>
    /// <param name="tag">Message tag, or <see cref="Mpi.AnyTag"/>.</param>
    public PersistentRequest RecvInit<T>(T[] buffer, int source, int tag) where T : unmanaged =>
        RecvInit(buffer, 0, WholeLength(buffer), source, tag);

    /// <summary>Makes a persistent receive into <paramref name="count"/> elements from <paramref name="offset"/> (MPI_Recv_init).</summary>
    /// <param name="buffer">The array to receive into.</param>
    /// <param name="offset">Index of the first element to write.</param>
    /// <param name="count">Capacity in elements.</param>
    /// <param name="source">Source rank, <see cref="Mpi.AnySource"/> or <see cref="Mpi.ProcNull"/>.</param>
    /// <param name="tag">Message tag, or <see cref="Mpi.AnyTag"/>.</param>
    public PersistentRequest RecvInit<T>(T[] buffer, int offset, int count, int source, int tag) where T : unmanaged
    {
        ThrowHelper.CheckSlice(buffer, offset, count, nameof(buffer));
        CommHandle h = Handle;
        CheckSource(source);
        CheckRecvTag(tag);
        return PersistentRequest.InitPointToPoint(buffer, offset, count, source, tag, h, 0, receive: true);
    }
}
