using System.MP.Interop;
using System.Runtime.CompilerServices;
using System.Threading;

namespace System.MP;

/// <summary>
/// Point-to-point operations on native memory and a communicator handle, for callers that
/// have checked every argument: the public API (<see cref="Communicator"/>, <see cref="Message"/>)
/// and the object transport (System.MP.Transport.PayloadChannel) both sit on it.  Errors are
/// thrown as the public API throws them.
/// </summary>
/// <remarks>
/// Tags above <see cref="Mpi.TagUpperBound"/> are the object transport's: the continuation
/// pieces of large payloads travel under them on the user's communicator (see
/// <see cref="ReservedPieces"/>).  MPI matches MPI_ANY_TAG against every tag, so a receive or
/// probe with <see cref="Mpi.AnyTag"/> goes through a matched probe here: a piece it meets is
/// received aside for the transport and the probe repeats, so neither the user nor another
/// caller of this class ever gets or sees one.  A receive with a tag of its own takes one fast
/// call.  A nonblocking receive posted with MPI_ANY_TAG (IRecv, RecvInit, a RequestList's
/// IRecv) is matched by MPI itself, and a piece that arrives while it is pending can match it.
/// Blocking calls are one blocking call into the core, unless hang reports are on: then they
/// take two steps (a fast post, then polls and a wait that HangReport can time and describe).
/// Send and Recv are inlined, so their P/Invoke is too; the JIT inlines a P/Invoke only outside
/// exception regions (inside, it calls an IL stub: ~40 instructions more), so a caller inside a
/// try calls them through a method of its own (PayloadChannel.ReceiveFirst).
/// </remarks>
internal static unsafe class PointToPointCore
{
    /// <summary>True for a tag of the object transport's continuation pieces.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static bool IsReserved(int tag) => tag > Mpi.TagUpperBound;

    /// <summary>Sends <paramref name="bytes"/> bytes at <paramref name="p"/> (MPI_Send or MPI_Ssend by <paramref name="mode"/>).</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static void Send(void* p, long bytes, int dest, int tag, CommHandle comm, int mode)
    {
        long t0 = MpiProfile.Begin();
        if (!HangReport.Enabled)
        {
            int done = Core.Send(p, bytes, dest, tag, comm, mode);
            MpiProfile.End(mode == CoreSendMode.Sync ? ProfiledCall.Ssend : ProfiledCall.Send, t0, bytes, dest);
            ThrowHelper.Check(done);
            return;
        }
        TokenHandle token;
        int rc = Core.SendStart(p, bytes, dest, tag, comm, mode, &token);
        HangReport.Describe(mode == CoreSendMode.Sync ? "Ssend" : "Send", comm, dest, tag, "dest");
        if (rc == 0)
            rc = Completion.PollThenBlock(new Completion.Token(token, null));
        MpiProfile.End(mode == CoreSendMode.Sync ? ProfiledCall.Ssend : ProfiledCall.Send, t0, bytes, dest);
        ThrowHelper.Check(rc);
    }

    /// <summary>Receives into <paramref name="bytes"/> bytes at <paramref name="p"/> (MPI_Recv) and returns the status.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static Status Recv(void* p, long bytes, int source, int tag, CommHandle comm)
    {
        Status status;
        int rc = Recv(p, bytes, source, tag, comm, &status);
        ThrowHelper.Check(rc);
        return status;
    }

    /// <summary>
    /// <see cref="Recv(void*, long, int, int, CommHandle)"/> with the core's result returned (0 or 1,
    /// or a negative MP_E*) instead of thrown: for callers that turn an error into another.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static int Recv(void* p, long bytes, int source, int tag, CommHandle comm, Status* status)
    {
        long t0 = MpiProfile.Begin();
        int rc = RecvCore(p, bytes, source, tag, comm, status);
        MpiProfile.End(ProfiledCall.Recv, t0, bytes, source);
        return rc;
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static int RecvCore(void* p, long bytes, int source, int tag, CommHandle comm, Status* status)
    {
        if (tag == Mpi.AnyTag)
            return RecvAnyTag(p, bytes, source, comm, status);
        if (!HangReport.Enabled)
            return Core.Recv(p, bytes, source, tag, comm, status);
        TokenHandle token;
        int rc = Core.RecvStart(p, bytes, source, tag, comm, status, &token);
        HangReport.Describe("Recv", comm, source, tag);
        if (rc == 0)
            rc = Completion.PollThenBlock(new Completion.Token(token, status));
        return rc;
    }

    /// <summary>A receive with any tag: a matched probe that passes over reserved pieces, then the message's receive.</summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    private static int RecvAnyTag(void* p, long bytes, int source, CommHandle comm, Status* status)
    {
        if (HangReport.Enabled)
            HangReport.Describe("Recv", comm, source, Mpi.AnyTag);
        MessageHandle msg;
        int rc = MProbe(source, Mpi.AnyTag, comm, &msg, status, block: true);
        return rc < 0 ? rc : MRecv(p, bytes, msg, status);
    }

    /// <summary>
    /// Sends and receives in one operation: one blocking call (mp_sendrecv: MPI_Sendrecv, the
    /// buffers pinned by the caller); with hang reports on, the same call with its wait recorded.
    /// It is not split into a receive and a send posted from here: mp_sendrecv alone knows to
    /// post a message to the calling rank itself before its receive, which Open MPI 4.1 needs to
    /// report that message's truncation.  With any tag for the receive, the send is posted first
    /// (the same order), the receive goes through <see cref="RecvAnyTag"/>, then the send completes.
    /// </summary>
    internal static Status SendRecv(void* s, long sendBytes, int dest, int sendTag,
                                    void* r, long recvBytes, int source, int recvTag, CommHandle comm)
    {
        long t0 = MpiProfile.Begin();
        Status status;
        int done;
        if (recvTag == Mpi.AnyTag)
            done = SendRecvAnyTag(s, sendBytes, dest, sendTag, r, recvBytes, source, comm, &status);
        else
            done = HangReport.Enabled
                ? HangReport.SendRecv(s, sendBytes, dest, sendTag, r, recvBytes, source, recvTag, comm, &status)
                : Core.Sendrecv(s, sendBytes, dest, sendTag, r, recvBytes, source, recvTag, comm, &status);
        MpiProfile.End(ProfiledCall.SendRecv, t0, sendBytes + recvBytes, dest);
        ThrowHelper.Check(done);
        return status;
    }

    private static int SendRecvAnyTag(void* s, long sendBytes, int dest, int sendTag,
                                      void* r, long recvBytes, int source, CommHandle comm, Status* status)
    {
        TokenHandle token;
        int sent = Core.SendStart(s, sendBytes, dest, sendTag, comm, CoreSendMode.Standard, &token);
        if (sent < 0)
            return sent;
        int rc = RecvAnyTag(r, recvBytes, source, comm, status);
        if (sent == 0)
        {
            int sendRc = Completion.PollThenBlock(new Completion.Token(token, null));
            if (rc >= 0 && sendRc < 0)
                rc = sendRc;
        }
        return rc;
    }

    /// <summary>
    /// Waits for a matching message (MPI_Probe), or with <paramref name="block"/> false looks
    /// for one (MPI_Iprobe): 1 with its status (a blocking probe: 0 or 1), 0 for none, or a negative MP_E*.
    /// </summary>
    internal static int Probe(int source, int tag, CommHandle comm, Status* status, bool block)
    {
        long t0 = MpiProfile.Begin();
        int rc = ProbeCore(source, tag, comm, status, block);
        MpiProfile.End(ProfiledCall.Probe, t0, 0, source);
        return rc;
    }

    private static int ProbeCore(int source, int tag, CommHandle comm, Status* status, bool block)
    {
        while (true)
        {
            int rc = block
                ? Completion.PollThenBlock(new Completion.Probe(source, tag, comm, status))
                : Core.Iprobe(source, tag, comm, status);
            if (rc < 0 || (rc == 0 && !block) || tag != Mpi.AnyTag || !IsReserved(status->Tag))
                return rc; // a blocking probe's 0 (MPI_Probe's success) is a message found too
            rc = ReservedPieces.TakeAside(status->Source, status->Tag, comm);
            if (rc < 0)
                return rc;
        }
    }

    /// <summary>
    /// Takes a matching message out of matching (MPI_Mprobe; MPI_Improbe when
    /// <paramref name="block"/> is false): 1 with its handle and status, 0 for none (only when
    /// not blocking), or a negative MP_E*.  A reserved piece met by any tag is received aside.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static int MProbe(int source, int tag, CommHandle comm, MessageHandle* message, Status* status, bool block)
    {
        if (tag == Mpi.AnyTag)
            return block
                ? Completion.PollThenBlock(new AnyTagMatch(source, comm, message, status))
                : ReservedPieces.MatchAnyTag(source, comm, message, status);
        return block
            ? Completion.PollThenBlock(new Completion.MatchedProbe(source, tag, comm, message, status))
            : Core.Improbe(source, tag, comm, message, status);
    }

    /// <summary>
    /// A matched probe with any tag (see <see cref="ReservedPieces"/>): polled, and its wait a
    /// loop of polls that yields the processor between them, so that hang reports time it as
    /// they time a wait in MPI.
    /// </summary>
    private readonly struct AnyTagMatch(int source, CommHandle comm, MessageHandle* message, Status* status) : IPollThenBlock
    {
        public string Describe() => "MProbe";
        public int Poll() => ReservedPieces.MatchAnyTag(source, comm, message, status);

        public int Block()
        {
            int rc;
            while ((rc = Poll()) == 0)
                Thread.Yield();
            return rc;
        }
    }

    /// <summary>Blocking matched probe that throws the core's error (the public MProbe).</summary>
    internal static Status MProbe(int source, int tag, CommHandle comm, out MessageHandle message)
    {
        if (HangReport.Enabled)
            HangReport.Describe("MProbe", comm, source, tag);
        if (tag == Mpi.AnyTag)
            return MProbeAnyTag(source, comm, out message);
        Status status;
        MessageHandle msg;
        long t0 = MpiProfile.Begin();
        int rc = Completion.PollThenBlock(new Completion.MatchedProbe(source, tag, comm, &msg, &status));
        MpiProfile.End(ProfiledCall.MProbe, t0, 0, source);
        ThrowHelper.Check(rc);
        message = msg;
        return status;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static Status MProbeAnyTag(int source, CommHandle comm, out MessageHandle message)
    {
        MProbeOrThrow(source, Mpi.AnyTag, comm, block: true, out message, out Status status);
        return status;
    }

    /// <summary>Nonblocking matched probe that throws the core's error (the public IMProbe).</summary>
    internal static bool TryMProbe(int source, int tag, CommHandle comm, out MessageHandle message, out Status status) =>
        MProbeOrThrow(source, tag, comm, block: false, out message, out status) == 1;

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static int MProbeOrThrow(int source, int tag, CommHandle comm, bool block, out MessageHandle message, out Status status)
    {
        Status st;
        MessageHandle msg;
        int rc = MProbe(source, tag, comm, &msg, &st, block);
        ThrowHelper.Check(rc);
        message = msg;
        status = st;
        return rc;
    }

    /// <summary>
    /// Receives a matched message into <paramref name="bytes"/> bytes at <paramref name="p"/>
    /// (MPI_Mrecv): 0 with the status, or a negative MP_E*.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static int MRecv(void* p, long bytes, MessageHandle message, Status* status)
    {
        if (!HangReport.Enabled)
            return Core.Mrecv(p, bytes, message, status);
        TokenHandle token;
        int rc = Core.MrecvStart(p, bytes, message, status, &token);
        if (rc == 0)
            rc = Completion.PollThenBlock(new Completion.Token(token, status));
        return rc;
    }

    /// <summary>
    /// <see cref="MRecv(void*, long, MessageHandle, Status*)"/> that throws the core's error.  Never
    /// inlined: the object transport calls it inside exception regions, where the JIT would
    /// call the P/Invoke through an IL stub.
    /// </summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    internal static Status MRecv(void* p, long bytes, MessageHandle message)
    {
        Status status;
        long t0 = MpiProfile.Begin();
        int rc = MRecv(p, bytes, message, &status);
        MpiProfile.End(ProfiledCall.MRecv, t0, bytes, status.Source);
        ThrowHelper.Check(rc);
        return status;
    }
}
