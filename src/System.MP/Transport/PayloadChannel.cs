using System.Diagnostics.CodeAnalysis;
using System.MP.Interop;
using System.Runtime.CompilerServices;
using System.Threading;

namespace System.MP.Transport;

/// <summary>
/// Point-to-point transport of object payloads (OSend/ORecv, OISend/OIRecv).
/// </summary>
/// <remarks>
/// A payload up to <see cref="WireFormat.FirstChunkBytes"/> travels as one message on the
/// user's communicator and tag.  A larger one travels as a first message of exactly
/// <see cref="WireFormat.FirstChunkBytes"/> there, marked chunked, whose header names a
/// continuation tag; the rest follows, in pieces of <see cref="WireFormat.ChunkBytes"/>, on the same
/// communicator under that tag, one of the tags above <see cref="Mpi.TagUpperBound"/> that user
/// messages never carry.  So continuation messages match no receive of the user's with a tag,
/// nor the user's messages them, and two chunked payloads in flight from one rank never mix;
/// no communicator needs a private duplicate, whose making would be a collective call that
/// ranks of other programs in an MPMD job never make.
/// The receiver checks the first message's header (signature, version, flags, the
/// first-chunk size, the continuation tag) before it waits for anything more: a
/// malformed or foreign first message fails at once with <see cref="TransportException"/>,
/// and every later message of the same source and tag stays receivable.
/// </remarks>
internal static unsafe class PayloadChannel
{
    private static int s_lastContinuationTag;

    /// <summary>Marks <paramref name="payload"/> for sending and returns how many messages carry it.</summary>
    private static int Prepare(ObjectTransport.Encoded payload, out int continuationTag)
    {
        long length = payload.Length;
        int first = WireFormat.FirstChunkBytes, chunk = WireFormat.ChunkBytes;
        if (length <= first)
        {
            continuationTag = 0;
            return 1;
        }
        uint span = (uint)(Mpi.MpiTagUpperBound - Mpi.TagUpperBound);
        continuationTag = Mpi.TagUpperBound + 1 + (int)((uint)Interlocked.Increment(ref s_lastContinuationTag) % span);
        byte* p = payload.Pointer;
        *(uint*)(p + WireFormat.OffsetFlags) |= WireFormat.FlagChunked;
        *(int*)(p + WireFormat.OffsetContinuationTag) = continuationTag;
        return 1 + (int)((length - first + chunk - 1) / chunk);
    }

    /// <summary>Message <paramref name="i"/> of a prepared payload: its bytes, communicator and tag.</summary>
    private static (long Offset, long Bytes, CommHandle Comm, int Tag) Piece(int i, long length, CommHandle comm, int tag, int continuationTag)
    {
        if (i == 0)
            return (0, Math.Min(WireFormat.FirstChunkBytes, length), comm, tag);
        long off = WireFormat.FirstChunkBytes + (long)(i - 1) * WireFormat.ChunkBytes;
        return (off, Math.Min(WireFormat.ChunkBytes, length - off), comm, continuationTag);
    }

    /// <summary>Sends a payload and returns when all of it has left (OSend).</summary>
    internal static void Send(ObjectTransport.Encoded payload, int dest, int tag, CommHandle comm)
    {
        int n = Prepare(payload, out int continuationTag);
        for (int i = 0; i < n; i++)
        {
            var (off, bytes, c, t) = Piece(i, payload.Length, comm, tag, continuationTag);
            try
            {
                PointToPointCore.Send(payload.Pointer + off, bytes, dest, t, c, CoreSendMode.Standard);
            }
            catch (Exception) when (i > 0) // the first message went: the receiver is waiting for the rest
            {
                Abandon(dest, c, t);
                throw;
            }
        }
    }

    /// <summary>
    /// Tells the receiver of a chunked payload whose first message went that the rest will not
    /// come (MPI failed a later piece): an empty message on the continuation tag, which no piece
    /// is (every piece has bytes), so that its receive throws instead of waiting forever.  Best
    /// effort: MPI has just failed, and if this send fails too the receiver waits as it would
    /// have.  <paramref name="comm"/> and <paramref name="continuationTag"/> are a piece's.
    /// </summary>
    private static void Abandon(int dest, CommHandle comm, int continuationTag)
    {
        byte none = 0;
        try
        {
            PointToPointCore.Send(&none, 0, dest, continuationTag, comm, CoreSendMode.Standard);
        }
        catch (Exception e) when (e is MpiException or InsufficientMemoryException)
        {
        }
    }

    /// <summary>
    /// Posts a payload's messages (OISend): one request each, holding the payload's
    /// buffer until the last of them completes; the first message's request is returned,
    /// those of the rest of a chunked payload in <paramref name="more"/> (null for a payload
    /// in one message, which needs no array).  On failure nothing stays posted that
    /// could still need the buffer: the requests already posted are orphaned.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    internal static Request Post(ObjectTransport.Encoded payload, int dest, int tag, CommHandle comm, out Request[]? more)
    {
        int n = Prepare(payload, out int continuationTag);
        var hold = BufferHold.ForPayload(payload.Buffer, n);
        if (n == 1)
        {
            more = null;
            return Request.PostHeldSend(payload.Pointer, payload.Length, dest, tag, comm, hold);
        }
        var requests = new Request[n];
        for (int i = 0; i < n; i++)
        {
            var (off, bytes, c, t) = Piece(i, payload.Length, comm, tag, continuationTag);
            try
            {
                requests[i] = Request.PostHeldSend(payload.Pointer + off, bytes, dest, t, c, hold);
            }
            catch // whatever the core refused with (MPI's error, a full request table, a freed communicator)
            {
                for (int k = i + 1; k < n; k++)
                    hold.Release(); // never posted
                for (int k = 0; k < i; k++)
                    requests[k].Dispose();
                if (i > 0)
                    Abandon(dest, c, t);
                throw;
            }
        }
        more = requests[1..];
        return requests[0];
    }

    /// <summary>
    /// Waits for a payload from <paramref name="source"/> with <paramref name="tag"/>, receives and
    /// decodes it.  The first message is taken by one posted receive of
    /// <see cref="WireFormat.FirstChunkBytes"/> into the thread's receive buffer (ObjectReader.TakeReceiveBuffer; the sender never makes a first
    /// message longer), so it matches exactly what a matched probe with the same source, tag and
    /// communicator would; a longer message (not an object payload's) is consumed and refused.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    internal static object? Receive(int source, int tag, CommHandle comm, out Status status)
    {
        NativeBuffer buffer = ObjectReader.TakeReceiveBuffer();
        Status first;
        int rc = ReceiveFirst(buffer.Pointer, source, tag, comm, &first);
        if (rc < 0)
        {
            ObjectReader.KeepReceiveBuffer(buffer);
            throw rc == CoreError.Truncate
                ? TransportErrors.Malformed(SR.Format(SR.PayloadFirstMessageTooLong, WireFormat.FirstChunkBytes))
                : ThrowHelper.CoreException(rc);
        }
        try
        {
            return Complete(buffer, first, comm, out status);
        }
        finally
        {
            ObjectReader.KeepReceiveBuffer(buffer);
        }
    }

    /// <summary>
    /// The first message's blocking receive, apart from <see cref="Receive"/>'s exception regions:
    /// the JIT inlines a P/Invoke's transition only outside them (inside, the call goes through an
    /// IL stub, about 40 instructions more per object message).
    /// </summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    private static int ReceiveFirst(void* p, int source, int tag, CommHandle comm, Status* first) =>
        PointToPointCore.Recv(p, WireFormat.FirstChunkBytes, source, tag, comm, first);

    /// <summary>Takes a matching first message out of matching if one is pending (MPI_Improbe).</summary>
    internal static bool TryMatch(int source, int tag, CommHandle comm, out Status first, out MessageHandle message) =>
        PointToPointCore.TryMProbe(source, tag, comm, out message, out first);

    /// <summary>Receives a matched first message, then (for a chunked payload) the rest, and decodes the whole.</summary>
    internal static object? ReceiveMatched(Status first, MessageHandle msg, CommHandle comm, out Status status)
    {
        NativeBuffer buffer = BufferPool.Rent(first.ByteCount);
        try
        {
            return Complete(buffer, PointToPointCore.MRecv(buffer.Pointer, first.ByteCount, msg), comm, out status);
        }
        finally
        {
            BufferPool.Return(buffer);
        }
    }

    /// <summary>After the first message arrived in <paramref name="buffer"/>: the rest of a chunked payload, then the decoded whole.</summary>
    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    private static object? Complete(NativeBuffer buffer, Status first, CommHandle comm, out Status status)
    {
        status = first;
        if (first.Source == Mpi.ProcNull)
            return null;
        long length = first.ByteCount;
        Header header = ReadHeader(buffer.Pointer, length, whole: false);
        if (header.Chunked)
            length = ReceiveContinuation(buffer, length, header.Total, first.Source, header.ContinuationTag, comm);
        status = new Status(first.Source, first.Tag, length);
        return ObjectReader.Decode(buffer.Pointer + WireFormat.HeaderBytes, length - WireFormat.HeaderBytes, header.TableBytes);
    }

    /// <summary>
    /// Decodes a payload that is whole in memory (object collectives, tests): its header is
    /// checked here, the decoder sees the body.
    /// </summary>
    internal static object? Decode(byte* payload, long length)
    {
        Header header = ReadHeader(payload, length, whole: true);
        return ObjectReader.Decode(payload + WireFormat.HeaderBytes, length - WireFormat.HeaderBytes, header.TableBytes);
    }

    /// <summary>A payload's header, checked (<see cref="ReadHeader"/>).</summary>
    internal readonly struct Header(long total, int tableBytes, int continuationTag, bool chunked)
    {
        /// <summary>The whole payload's bytes, header included.</summary>
        internal readonly long Total = total;

        /// <summary>Bytes of the type table at the start of the body.</summary>
        internal readonly int TableBytes = tableBytes;

        /// <summary>The tag of the continuation pieces of a chunked payload.</summary>
        internal readonly int ContinuationTag = continuationTag;

        /// <summary>True when more messages follow the first (<see cref="WireFormat.FlagChunked"/>).</summary>
        internal readonly bool Chunked = chunked;
    }

    /// <summary>
    /// Reads a payload's header without trusting it, the one place it is checked: signature,
    /// version and flags, a type table inside the payload, and a total that is the bytes
    /// received, or (a chunked payload's first message, unless <paramref name="whole"/>) exactly
    /// the first-chunk size of a larger total, with a continuation tag in the reserved range.
    /// Anything else throws <see cref="TransportException"/> before a single further message
    /// is waited for.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    internal static Header ReadHeader(byte* p, long received, bool whole)
    {
        if (received < WireFormat.HeaderBytes + 8) // the header and the two counts every body has
            throw TransportErrors.Malformed(SR.Format(SR.PayloadTruncated, WireFormat.HeaderBytes + 8, received));
        if (SignatureProblem(p) is string problem)
            throw TransportErrors.Malformed(problem);
        long total = *(long*)(p + WireFormat.OffsetTotal);
        int tableBytes = *(int*)(p + WireFormat.OffsetTableBytes);
        int continuationTag = *(int*)(p + WireFormat.OffsetContinuationTag);
        bool chunked = !whole && (*(uint*)(p + WireFormat.OffsetFlags) & WireFormat.FlagChunked) != 0;
        if (!chunked && total != received)
            throw TransportErrors.Malformed(SR.Format(SR.PayloadLength, total, received));
        if (chunked)
        {
            if (received != WireFormat.FirstChunkBytes || total <= received)
                throw TransportErrors.Malformed(SR.Format(SR.PayloadFirstChunk, received, total, WireFormat.FirstChunkBytes));
            if (continuationTag <= Mpi.TagUpperBound || continuationTag > Mpi.MpiTagUpperBound)
                throw TransportErrors.Malformed(SR.Format(SR.PayloadContinuationTag, continuationTag, Mpi.TagUpperBound + 1, Mpi.MpiTagUpperBound));
        }
        if (tableBytes < 0 || tableBytes > total - WireFormat.HeaderBytes)
            throw TransportErrors.Malformed(SR.Format(SR.PayloadCount, tableBytes, total - WireFormat.HeaderBytes));
        return new Header(total, tableBytes, continuationTag, chunked);
    }

    /// <summary>
    /// What is wrong with a header's signature and flags (at least <see cref="WireFormat.HeaderBytes"/>
    /// bytes at <paramref name="p"/>), or null: checked before anything in it is trusted.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static string? SignatureProblem(byte* p)
    {
        uint flags = *(uint*)(p + WireFormat.OffsetFlags);
        if (*(uint*)p == WireFormat.Magic && (flags & ~WireFormat.FlagChunked) == WireFormat.VersionBits)
            return null;
        return *(uint*)p != WireFormat.Magic ? SR.PayloadMagic : SR.Format(SR.PayloadVersion, flags, WireFormat.VersionBits);
    }

    /// <summary>
    /// Receives the continuation messages under their tag, each exactly the size the sender's
    /// split makes it; the buffer grows only by bytes that arrived.
    /// </summary>
    private static long ReceiveContinuation(NativeBuffer buffer, long received, long announced, int source, int continuationTag, CommHandle comm)
    {
        string? lost = null;
        ReservedPieces.BeginStream(comm, source);
        try
        {
            received = ReceivePieces(buffer, received, announced, source, continuationTag, comm, ref lost);
        }
        finally
        {
            ReservedPieces.EndStream(comm, source);
        }
        // A lost piece fails the payload once all of it is received, so that no piece of it is left in matching.
        if (lost is not null)
            throw new TransportException(lost);
        return received;
    }

    /// <summary>
    /// Receives the pieces that follow a payload's first message, counting them: once one was taken
    /// (<paramref name="lost"/> says why) their sizes no longer tell where each belongs, since the
    /// next piece may have come in its stead, but every one is still taken out of matching.
    /// </summary>
    private static long ReceivePieces(NativeBuffer buffer, long received, long announced, int source, int continuationTag, CommHandle comm, ref string? lost)
    {
        long pieces = (announced - received + WireFormat.ChunkBytes - 1) / WireFormat.ChunkBytes;
        for (long i = 0; i < pieces; i++)
        {
            long expected = Math.Min(WireFormat.ChunkBytes, announced - received);
            // Received in full either way: this source sends this payload's pieces only under this tag.
            long bytes = ReceivePiece(buffer, received, expected, source, continuationTag, comm, ref lost);
            if (bytes == 0) // no piece is empty: the sender's Abandon
                throw TransportErrors.Abandoned(received, announced);
            if (bytes != expected && lost is null)
            {
                // The last piece where another was due: unless a piece went to a receive with any
                // tag (which then counts as one of them), the payload is malformed.
                lost = TakenPiece(source, continuationTag, comm) ?? throw TransportErrors.Malformed(SR.Format(SR.PayloadChunk, bytes, expected, announced));
                i++;
            }
            received = Math.Min(announced, received + expected);
        }
        return announced;
    }

    /// <summary>
    /// Why a piece is missing when a nonblocking receive with any tag took it (the core recorded
    /// it, <c>piece_taken</c>), waiting while such a receive that could hold it is still to be
    /// completed by its thread; null when none did.
    /// </summary>
    private static string? TakenPiece(int source, int continuationTag, CommHandle comm)
    {
        for (int polls = 0; ; polls++)
        {
            int pending;
            int took = Core.PieceTaken(comm, source, continuationTag, &pending);
            if (took == CoreError.ObjectPiece)
                return ThrowHelper.CoreException(took).Message;
            ThrowHelper.Check(took);
            if (pending == 0)
                return null;
            if (polls >= Completion.SpinPolls)
                Thread.Yield();
        }
    }

    /// <summary>
    /// Receives the next piece from <paramref name="source"/> under <paramref name="continuationTag"/>
    /// (<paramref name="expected"/> bytes) to <paramref name="at"/> in <paramref name="buffer"/> and
    /// returns its length: one that a blocking receive or probe with any tag kept aside
    /// (<see cref="ReservedPieces"/>), else one matched here.  Polled, never a blocking probe: a
    /// piece can move aside between the looks, and then a blocking probe would wait for a message
    /// that is no longer in matching.
    /// </summary>
    /// <remarks>
    /// A piece that a nonblocking receive posted with any tag took (which failed saying so) is
    /// lost: the core records it (<c>piece_taken</c>), <paramref name="lost"/> gets why, and the
    /// expected length is returned, so that the rest of the payload is still taken out of matching.
    /// </remarks>
    private static long ReceivePiece(NativeBuffer buffer, long at, long expected, int source, int continuationTag, CommHandle comm, ref string? lost)
    {
        for (int polls = 0; ; polls++)
        {
            MessageHandle msg;
            Status next;
            int took = Core.PieceTaken(comm, source, continuationTag, null);
            if (took == CoreError.ObjectPiece)
            {
                lost ??= ThrowHelper.CoreException(took).Message;
                return expected;
            }
            ThrowHelper.Check(took);
            int rc = ReservedPieces.Next(source, continuationTag, comm, out ReservedPieces.Piece? kept, &msg, &next);
            ThrowHelper.Check(rc);
            if (rc == 1)
            {
                buffer.EnsureCapacity(at + kept!.Length);
                kept.MoveTo(buffer.Pointer + at);
                return kept.Length;
            }
            if (rc == 2)
            {
                buffer.EnsureCapacity(at + next.ByteCount);
                PointToPointCore.MRecv(buffer.Pointer + at, next.ByteCount, msg);
                return next.ByteCount;
            }
            if (polls >= Completion.SpinPolls)
                Thread.Yield();
        }
    }
}
