using System.MP.Interop;
using System.Runtime.CompilerServices;

namespace System.MP;

/// <summary>
/// A blocking operation's completion in two steps: fast polls (no GC transition), then
/// one blocking call (a GC transition, so the GC runs while the thread waits).
/// </summary>
internal interface IPollThenBlock
{
    /// <summary>One fast test: 0 while pending, else the result (1 done, or a negative MP_E*).</summary>
    int Poll();

    /// <summary>Waits in a blocking call: the result (0 or 1 done, or a negative MP_E*).</summary>
    int Block();

    /// <summary>What the wait is, for the hang report when the caller did not describe it.</summary>
    string Describe();
}

/// <summary>
/// The one "poll, then block" policy the waits of System.MP follow: requests, sets of
/// requests, probes, matched probes, and the pending part of a blocking send or receive
/// when hang reports are on (otherwise Send, Recv and Message.Recv are one blocking call each,
/// PointToPointCore.Send; SendRecv always is).  Polling first keeps short waits free of GC transitions
/// (the JIT places a GC poll after each fast call, so GCs still proceed); the
/// operations are structs, so each use compiles to the loop written out by hand.
/// </summary>
internal static unsafe class Completion
{
    /// <summary>
    /// How many fast tests come before the blocking call ($MOTOR_SPIN_POLLS, default 64).
    /// </summary>
    internal static readonly int SpinPolls = ReadSpinPolls();

    private static int ReadSpinPolls()
    {
        string? s = Environment.GetEnvironmentVariable("MOTOR_SPIN_POLLS");
        return s is not null && int.TryParse(s, out int n) && n >= 0 ? n : 64;
    }

    /// <summary>Polls <paramref name="polls"/> times, then blocks; returns the first result.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static int PollThenBlock<TOp>(ref TOp op, int polls) where TOp : struct, IPollThenBlock
    {
        for (int i = polls; i > 0; i--)
        {
            int rc = op.Poll();
            if (rc != 0)
                return rc;
        }
        ProgressEngine.BeforeBlocking(); // a continuation on the engine's thread gives the engine away first
        return HangReport.Enabled ? HangReport.Block(ref op) : op.Block();
    }

    /// <inheritdoc cref="PollThenBlock{TOp}(ref TOp, int)"/>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static int PollThenBlock<TOp>(TOp op) where TOp : struct, IPollThenBlock => PollThenBlock(ref op, SpinPolls);

    /// <summary>The pending part of a blocking send or receive (mp_token_*).</summary>
    internal readonly struct Token(TokenHandle token, Status* status) : IPollThenBlock
    {
        public string Describe() => "a send or receive";
        public int Poll() => Core.TokenTest(token, status);
        public int Block() => Core.TokenWait(token, status);
    }

    /// <summary>One nonblocking request (mp_req_test / mp_req_wait).</summary>
    internal readonly struct OneRequest(RequestHandle handle, Status* status) : IPollThenBlock
    {
        public string Describe() => "Request.Wait";
        public int Poll() => Core.ReqTest(handle, status);
        public int Block() => Core.ReqWait(handle, status);
    }

    /// <summary>A set of requests completed together (mp_req_testall / mp_req_waitall).</summary>
    internal readonly struct AllRequests(int n, RequestHandle* handles, Status* statuses) : IPollThenBlock
    {
        public string Describe() => $"Request.WaitAll ({n} requests)";
        public int Poll() => Core.ReqTestall(n, handles, statuses);
        public int Block() => Core.ReqWaitall(n, handles, statuses);
    }

    /// <summary>
    /// <see cref="AllRequests"/> of handles whose owner vouches for them (mp_req_waitall_owned):
    /// each one that is not null came from a request whose version was checked, so the core
    /// does not check its bounds and generation again.
    /// </summary>
    internal readonly struct OwnedRequests(int n, RequestHandle* handles, Status* statuses) : IPollThenBlock
    {
        public string Describe() => $"Request.WaitAll ({n} requests)";
        public int Poll() => Core.ReqTestall(n, handles, statuses);
        public int Block() => Core.ReqWaitallOwned(n, handles, statuses);
    }

    /// <summary>A request list's operations, completed together (mp_list_testall / mp_list_waitall).</summary>
    internal readonly struct ListRequests(ListHandle list, int n, Status* statuses) : IPollThenBlock
    {
        public string Describe() => $"RequestList.WaitAll ({n} operations)";
        public int Poll() => Core.ListTestall(list, statuses);
        public int Block() => Core.ListWaitall(list, statuses);
    }

    /// <summary>Entries [first, first + n) of a request list, completed together (mp_list_testall_range / mp_list_waitall_range).</summary>
    internal readonly struct ListRange(ListHandle list, int first, int n, Status* statuses) : IPollThenBlock
    {
        public string Describe() => $"Request.WaitAll ({n} requests)";
        public int Poll() => Core.ListTestallRange(list, first, n, statuses);
        public int Block() => Core.ListWaitallRange(list, first, n, statuses);
    }

    /// <summary>
    /// The first of a set of requests to complete: a poll tests every pending one once;
    /// <see cref="Index"/> and <see cref="Result"/> say which completed and how.
    /// </summary>
    internal struct AnyRequest(int n, RequestHandle* handles, Status* status) : IPollThenBlock
    {
        public string Describe() => $"Request.WaitAny ({n} requests)";
        /// <summary>The completed request's index, or <see cref="Mpi.Undefined"/> when none was pending.</summary>
        public int Index;

        /// <summary>Its own result (1, or a negative MP_E* of that operation).</summary>
        public int Result;

        public int Poll()
        {
            for (int i = 0; i < n; i++)
            {
                if (handles[i] == RequestHandle.Null)
                    continue;
                int rc = Core.ReqTest(handles[i], status);
                if (rc != 0)
                {
                    (Index, Result) = (i, rc);
                    return 1;
                }
            }
            return 0;
        }

        public int Block()
        {
            int rc = Core.ReqWaitany(n, handles, status);
            if (rc < 0)
                return rc; // the set itself was refused
            (Index, Result) = rc == n ? (Mpi.Undefined, 1) : (rc, status->ErrorCode == 0 ? 1 : status->ErrorCode);
            return 1;
        }
    }

    /// <summary>
    /// Waits for the first of a set of requests to complete (mp_req_test polls, then
    /// mp_req_waitany); ReqNull entries are skipped, and the set holds no repeat.
    /// </summary>
    /// <returns>Its index, or <see cref="Mpi.Undefined"/> when none was pending.</returns>
    internal static int WaitAny(ReadOnlySpan<RequestHandle> handles, out int result, out Status status)
    {
        Status st = default;
        AnyRequest any;
        int rc;
        fixed (RequestHandle* h = handles)
        {
            any = new AnyRequest(handles.Length, h, &st);
            rc = PollThenBlock(ref any, SpinPolls);
        }
        ThrowHelper.Check(rc); // the set itself was refused
        (result, status) = (any.Result, st);
        return any.Index;
    }

    /// <summary>A probe (mp_iprobe / mp_probe).</summary>
    internal readonly struct Probe(int source, int tag, CommHandle comm, Status* status) : IPollThenBlock
    {
        public string Describe() => "Probe";
        public int Poll() => Core.Iprobe(source, tag, comm, status);
        public int Block() => Core.Probe(source, tag, comm, status);
    }

    /// <summary>A matched probe (mp_improbe / mp_mprobe).</summary>
    internal readonly struct MatchedProbe(int source, int tag, CommHandle comm, MessageHandle* message, Status* status) : IPollThenBlock
    {
        public string Describe() => "MProbe";
        public int Poll() => Core.Improbe(source, tag, comm, message, status);
        public int Block() => Core.Mprobe(source, tag, comm, message, status);
    }
}
