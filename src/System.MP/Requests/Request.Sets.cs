using System.MP.Interop;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Threading;
using System.Threading.Tasks;

namespace System.MP;

// Sets of requests: WaitAll, TestAll, WaitAny (allocation-free for up to StackRequests).
// The forms that take an array write the null request over the entries they complete, as
// MPI sets completed handles to MPI_REQUEST_NULL (MPI-4.0 §3.7.5): a WaitAny loop over
// one array skips those it has completed.
public readonly unsafe partial struct Request
{
    /// <summary>Requests the sets handle without allocating (handles and statuses on the stack).</summary>
    private const int StackRequests = 128;

    /// <summary>WaitAll polls before waiting only for sets smaller than this.</summary>
    private const int SpinAllLimit = 16;

    /// <summary>
    /// How many fast tests a WaitAll of <paramref name="n"/> requests makes before it blocks:
    /// polling saves the GC transition of the blocking call, which matters for a few requests;
    /// a larger set shares one transition, so it waits in MPI_Waitall (which polls the same way) at once.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static int SetPolls(int n) => n < SpinAllLimit ? Completion.SpinPolls / Math.Max(1, n) : 0;

    /// <summary>Waits for every request (MPI_Waitall) and sets each entry to the null request.</summary>
    /// <param name="requests">The requests; null requests contribute the empty status.</param>
    /// <returns>The statuses, in the order of <paramref name="requests"/>.</returns>
    /// <exception cref="MessageTruncatedException">A receive was truncated (after all requests completed).</exception>
    /// <exception cref="ObjectDisposedException">A request was already completed or disposed (nothing is waited for).</exception>
    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    public static Status[] WaitAll(params Request[] requests)
    {
        ArgumentNullException.ThrowIfNull(requests);
        var statuses = new Status[requests.Length];
        try
        {
            WaitAllCore(requests, statuses);
        }
        catch
        {
            ClearCompleted(requests);
            throw;
        }
        Array.Clear(requests); // every entry consumed
        return statuses;
    }

    /// <summary>
    /// Waits for every request (MPI_Waitall) without allocating: the form for
    /// loops that post and complete windows of operations.
    /// </summary>
    /// <param name="requests">The requests; each is consumed (a later use of it throws).</param>
    /// <exception cref="MessageTruncatedException">A receive was truncated (after all requests completed).</exception>
    /// <exception cref="ObjectDisposedException">A request was already completed or disposed (nothing is waited for).</exception>
    [MethodImpl(MethodImplOptions.AggressiveOptimization), SkipLocalsInit] // every entry is written before it is read
    public static void WaitAll(ReadOnlySpan<Request> requests)
    {
        Status[]? heap = requests.Length > StackRequests ? new Status[requests.Length] : null;
        Span<Status> statuses = heap ?? stackalloc Status[StackRequests];
        WaitAllCore(requests, statuses[..requests.Length]);
    }

    /// <summary>Waits for every request (MPI_Waitall) and writes their statuses, without allocating.</summary>
    /// <param name="requests">The requests; each is consumed (a later use of it throws).</param>
    /// <param name="statuses">Receives the statuses, in the order of <paramref name="requests"/>; at least as long.</param>
    /// <exception cref="ArgumentException"><paramref name="statuses"/> is shorter than <paramref name="requests"/>.</exception>
    /// <exception cref="MessageTruncatedException">A receive was truncated (after all requests completed).</exception>
    /// <exception cref="ObjectDisposedException">A request was already completed or disposed (nothing is waited for).</exception>
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
            long t0 = MpiProfile.Begin();
            rc = Completion.PollThenBlock(ref all, SetPolls(n));
            MpiProfile.End(ProfiledCall.WaitAll, t0);
        }
        FinishAll(requests, handles, statuses, rc);
    }

    /// <summary>Tests whether every request completed (MPI_Testall); completes them all when so, setting each entry to the null request.</summary>
    /// <param name="requests">The requests.</param>
    /// <returns>True when every request has completed (all are then consumed).</returns>
    /// <exception cref="ObjectDisposedException">A request was already completed or disposed.</exception>
    public static bool TestAll(Request[] requests)
    {
        ArgumentNullException.ThrowIfNull(requests);
        bool all;
        try
        {
            all = TestAll(new ReadOnlySpan<Request>(requests));
        }
        finally
        {
            ClearCompleted(requests);
        }
        return all;
    }

    /// <summary>Tests whether every request completed (MPI_Testall); completes them all when so, without allocating.</summary>
    /// <param name="requests">The requests.</param>
    /// <returns>True when every request has completed (all are then consumed).</returns>
    /// <exception cref="ObjectDisposedException">A request was already completed or disposed.</exception>
    [SkipLocalsInit]
    public static bool TestAll(ReadOnlySpan<Request> requests)
    {
        int n = requests.Length, rc;
        RequestHandle[]? heapH = n > StackRequests ? new RequestHandle[n] : null;
        Status[]? heapS = n > StackRequests ? new Status[n] : null;
        Span<RequestHandle> handles = heapH ?? stackalloc RequestHandle[StackRequests];
        Span<Status> statuses = heapS ?? stackalloc Status[StackRequests];
        handles = handles[..n];
        statuses = statuses[..n];
        Handles(requests, handles);
        MpiRequest.CheckDistinct(handles);
        fixed (RequestHandle* h = handles)
        fixed (Status* s = statuses)
            rc = Core.ReqTestall(n, h, s);
        if (rc == 0)
            return false;
        FinishAll(requests, handles, statuses, rc);
        return true;
    }

    /// <summary>Waits until one of the requests completes (MPI_Waitany) and sets its entry to the null request.</summary>
    /// <param name="requests">The requests; null requests (those completed by earlier calls) are skipped.</param>
    /// <param name="status">The status of the one that completed (empty when none was pending).</param>
    /// <returns>Its index, or <see cref="Mpi.Undefined"/> when none was still pending.</returns>
    /// <exception cref="ObjectDisposedException">A request was already completed or disposed (nothing is waited for).</exception>
    [SkipLocalsInit]
    public static int WaitAny(Request[] requests, out Status status)
    {
        ArgumentNullException.ThrowIfNull(requests);
        int n = requests.Length;
        RequestHandle[]? heap = n > StackRequests ? new RequestHandle[n] : null;
        Span<RequestHandle> handles = heap ?? stackalloc RequestHandle[StackRequests];
        handles = handles[..n];
        Handles(requests, handles);
        MpiRequest.CheckDistinct(handles);
        int index = Array.FindIndex(requests, static r => r._slot is { Done: true }); // found complete by IsCompleted
        int result = 0;
        Status st = default;
        if (index < 0)
            index = Completion.WaitAny(handles, out result, out st);
        if (index == Mpi.Undefined)
        {
            status = EmptyStatus;
            return index;
        }
        Request r = requests[index];
        requests[index] = default;
        RequestSlot s = r._slot!;
        status = s.Done ? Finish(s, s.Result, s.Status) : Finish(s, result, st);
        return index;
    }

    /// <summary>Waits for every request of a mixed set (<see cref="MpiRequest.WaitAll(MpiRequest[])"/>).</summary>
    /// <param name="requests">The requests, each at most once.</param>
    /// <returns>The statuses, in the order of <paramref name="requests"/>.</returns>
    public static Status[] WaitAll(params MpiRequest[] requests) => MpiRequest.WaitAll(requests);

    /// <summary>Completes when every request has completed (<see cref="MpiRequest.WhenAll"/>).</summary>
    /// <param name="requests">The requests, each at most once.</param>
    /// <returns>The statuses in the order of <paramref name="requests"/>.</returns>
    public static Task<Status[]> WhenAll(params MpiRequest[] requests) => MpiRequest.WhenAll(requests);

    /// <summary>Completes when one of the requests has completed, with its index (<see cref="MpiRequest.WhenAny"/>).</summary>
    /// <param name="requests">The requests, each at most once; at least one.</param>
    /// <returns>The index of a request that completed.</returns>
    public static Task<int> WhenAny(params MpiRequest[] requests) => MpiRequest.WhenAny(requests);

    /// <summary>Checks every request (none completed or disposed already) before anything is waited for: the core handles of a set.</summary>
    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    private static void Handles(ReadOnlySpan<Request> requests, Span<RequestHandle> handles)
    {
        // One length check for the set, none per request (the JIT cannot tell
        // that the two spans are as long as each other; WaitAllCore made them so).
        if (handles.Length < requests.Length)
            ThrowHelper.ThrowStatusesTooShort(handles.Length, requests.Length);
        ref RequestHandle h = ref MemoryMarshal.GetReference(handles);
        for (int i = 0; i < requests.Length; i++)
            Unsafe.Add(ref h, i) = requests[i].SetEntry();
    }

    /// <summary>After the core completed the set: every request is consumed (and the first error thrown).</summary>
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
        RequestPoster poster = RequestPoster.Current;
        int failed = 0;
        for (int i = 0; i < requests.Length; i++)
        {
            RequestSlot? s = requests[i]._slot;
            if (s is null)
                Unsafe.Add(ref st, i) = EmptyStatus;
            else if (Unsafe.Add(ref h, i) != RequestHandle.Null)
                Release(s, poster);
            else
                failed |= TakeDone(s, requests[i]._version, ref Unsafe.Add(ref st, i), poster);
        }
        if (Volatile.Read(ref Orphans.Count) != 0)
            SweepOrphans();
        if (failed < 0)
            throw ThrowHelper.CoreException(failed);
    }

    /// <summary>
    /// A set's entry that <see cref="IsCompleted"/> found complete: its kept status, consumed;
    /// the negative result it failed with, else 0.  A second copy of it in the same set finds
    /// it consumed and gets the empty status.
    /// </summary>
    private static int TakeDone(RequestSlot s, int version, ref Status status, RequestPoster poster)
    {
        if (s.Version != version)
        {
            status = EmptyStatus;
            return 0;
        }
        status = s.Status;
        int rc = s.Result;
        Release(s, poster);
        return rc;
    }

    /// <summary>A set that failed: the requests the core finished are consumed, a refused set (bad or repeated request) stays as it was.</summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    private static void FinishFailed(ReadOnlySpan<Request> requests, ReadOnlySpan<RequestHandle> handles, Span<Status> statuses, int rc)
    {
        Exception error = ThrowHelper.CoreException(rc);
        RequestPoster poster = RequestPoster.Current;
        for (int i = 0; i < requests.Length; i++)
        {
            RequestSlot? s = requests[i]._slot;
            if (s is null)
                statuses[i] = EmptyStatus;
            else if (handles[i] == RequestHandle.Null)
                TakeDone(s, requests[i]._version, ref statuses[i], poster);
            else if (Core.ReqLive(handles[i]) == 0)
                Release(s, poster);
        }
        if (Volatile.Read(ref Orphans.Count) != 0)
            SweepOrphans();
        throw error;
    }

    /// <summary>Sets to the null request every entry of an array set that is no longer live (completed by the set).</summary>
    private static void ClearCompleted(Request[] requests)
    {
        for (int i = 0; i < requests.Length; i++)
        {
            if (requests[i]._slot is not null && !requests[i].IsLive)
                requests[i] = default;
        }
    }
}
