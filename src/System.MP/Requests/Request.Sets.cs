using System.MP.Interop;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Threading;

namespace System.MP;

// Sets of requests: WaitAll, TestAll, WaitAny (allocation-free for up to StackRequests).
public sealed unsafe partial class Request
{
    /// <summary>WaitAll polls before waiting only for sets smaller than this.</summary>
    private const int SpinAllLimit = 16;

    /// <summary>
    /// How many fast tests a WaitAll of <paramref name="n"/> requests makes before it blocks:
    /// polling saves the GC transition of the blocking call, which matters for a few requests;
    /// a larger set shares one transition, so it waits in MPI_Waitall (which polls the same way) at once.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static int SetPolls(int n) => n < SpinAllLimit ? Completion.SpinPolls / Math.Max(1, n) : 0;

    /// <summary>Waits for every request (MPI_Waitall).</summary>
    /// <param name="requests">The requests; completed ones contribute their stored status.</param>
    /// <returns>The statuses, in the order of <paramref name="requests"/>.</returns>
    /// <exception cref="MessageTruncatedException">A receive was truncated (after all requests completed).</exception>
    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    public static Status[] WaitAll(params Request[] requests)
    {
        ArgumentNullException.ThrowIfNull(requests);
        var statuses = new Status[requests.Length];
        WaitAllCore(requests, statuses);
        return statuses;
    }

    /// <summary>
    /// Waits for every request (MPI_Waitall) without allocating: the form for
    /// loops that post and complete windows of operations.
    /// </summary>
    /// <param name="requests">The requests; completed ones are skipped.</param>
    /// <exception cref="MessageTruncatedException">A receive was truncated (after all requests completed).</exception>
    [MethodImpl(MethodImplOptions.AggressiveOptimization), SkipLocalsInit] // every entry is written before it is read
    public static void WaitAll(ReadOnlySpan<Request> requests)
    {
        Status[]? heap = requests.Length > StackRequests ? new Status[requests.Length] : null;
        Span<Status> statuses = heap ?? stackalloc Status[StackRequests];
        WaitAllCore(requests, statuses[..requests.Length]);
    }

    /// <summary>Waits for every request (MPI_Waitall) and writes their statuses, without allocating.</summary>
    /// <param name="requests">The requests; completed ones contribute their stored status.</param>
    /// <param name="statuses">Receives the statuses, in the order of <paramref name="requests"/>; at least as long.</param>
    /// <exception cref="ArgumentException"><paramref name="statuses"/> is shorter than <paramref name="requests"/>.</exception>
    /// <exception cref="MessageTruncatedException">A receive was truncated (after all requests completed).</exception>
    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    public static void WaitAll(ReadOnlySpan<Request> requests, Span<Status> statuses)
    {
        if (statuses.Length < requests.Length)
            ThrowHelper.ThrowStatusesTooShort(statuses.Length, requests.Length);
        WaitAllCore(requests, statuses[..requests.Length]);
    }

    [MethodImpl(MethodImplOptions.AggressiveOptimization), SkipLocalsInit] // every entry is written before it is read
    private static void WaitAllCore(ReadOnlySpan<Request> requests, Span<Status> statuses)
    {
        int n = requests.Length, rc;
        RequestHandle[]? heap = n > StackRequests ? new RequestHandle[n] : null;
        Span<RequestHandle> handles = heap ?? stackalloc RequestHandle[StackRequests];
        handles = handles[..n];
        Handles(requests, handles);
        fixed (RequestHandle* h = handles)
        fixed (Status* s = statuses)
        {
            var all = new Completion.AllRequests(n, h, s);
            rc = Completion.PollThenBlock(ref all, SetPolls(n));
        }
        FinishAll(requests, handles, statuses, rc);
    }

    /// <summary>Tests whether every request completed (MPI_Testall); completes them all when so.</summary>
    /// <param name="requests">The requests.</param>
    public static bool TestAll(Request[] requests)
    {
        ArgumentNullException.ThrowIfNull(requests);
        return TestAll(new ReadOnlySpan<Request>(requests));
    }

    /// <summary>Tests whether every request completed (MPI_Testall); completes them all when so, without allocating.</summary>
    /// <param name="requests">The requests.</param>
    public static bool TestAll(ReadOnlySpan<Request> requests) => MpiRequest.TestAll(requests);

    /// <summary>Waits until one of the requests completes (MPI_Waitany).</summary>
    /// <param name="requests">The requests; already completed ones are skipped.</param>
    /// <param name="status">The status of the one that completed (empty when none was pending).</param>
    /// <returns>Its index, or <see cref="Mpi.Undefined"/> when none was still pending.</returns>
    public static int WaitAny(Request[] requests, out Status status) => MpiRequest.WaitAny(requests, out status);

    /// <summary>Checks every request (not null, not disposed) before anything is waited for.</summary>
    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    private static void Handles(ReadOnlySpan<Request> requests, Span<RequestHandle> handles)
    {
        // One length check for the set, none per request (the JIT cannot tell
        // that the two spans are as long as each other; WaitAllCore made them so).
        if (handles.Length < requests.Length)
            ThrowHelper.ThrowStatusesTooShort(handles.Length, requests.Length);
        ref RequestHandle h = ref MemoryMarshal.GetReference(handles);
        for (int i = 0; i < requests.Length; i++)
        {
            Request r = requests[i];
            if (r is null)
                ThrowHelper.ThrowNullRequest(i);
            Unsafe.Add(ref h, i) = r.ActiveHandle();
        }
    }

    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    private static void FinishAll(ReadOnlySpan<Request> requests, ReadOnlySpan<RequestHandle> handles, Span<Status> statuses, int rc)
    {
        if (rc < 0)
        {
            FinishFailed(requests, handles, statuses, rc);
            return;
        }
        // The loop of a set that completed: nothing in it can throw, so the
        // JIT keeps it in registers; the spans' lengths are checked once, as in Handles.
        if (Math.Min(handles.Length, statuses.Length) < requests.Length)
            ThrowHelper.ThrowStatusesTooShort(Math.Min(handles.Length, statuses.Length), requests.Length);
        ref RequestHandle h = ref MemoryMarshal.GetReference(handles);
        ref Status st = ref MemoryMarshal.GetReference(statuses);
        for (int i = 0; i < requests.Length; i++)
        {
            Request r = requests[i];
            if (Unsafe.Add(ref h, i) == RequestHandle.Null)
                Unsafe.Add(ref st, i) = r._status;
            else
                r.Complete(Unsafe.Add(ref st, i));
        }
        if (Volatile.Read(ref Orphans.Count) != 0)
            SweepOrphans();
    }

    /// <summary>A set that failed: the requests the core finished are completed, a refused set (bad or repeated request) stays as it was.</summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    private static void FinishFailed(ReadOnlySpan<Request> requests, ReadOnlySpan<RequestHandle> handles, Span<Status> statuses, int rc)
    {
        Exception error = ThrowHelper.CoreException(rc);
        for (int i = 0; i < requests.Length; i++)
        {
            if (handles[i] == RequestHandle.Null)
                statuses[i] = requests[i]._status;
            else if (Core.ReqLive(handles[i]) == 0)
                requests[i].Complete(statuses[i]);
        }
        if (Volatile.Read(ref Orphans.Count) != 0)
            SweepOrphans();
        throw error;
    }
}
