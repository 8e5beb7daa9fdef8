using System.Collections.Generic;
using System.MP.Interop;
using System.Runtime.CompilerServices;

namespace System.MP;

/// <summary>
/// Any operation in flight that can be waited for: a buffer operation (<see cref="Request"/>),
/// an object operation (<see cref="ObjectRequest"/>) or an instance of a persistent one
/// (<see cref="PersistentRequest"/>).  <see cref="WaitAll(MpiRequest[])"/>,
/// <see cref="WaitAny(MpiRequest[], out Status)"/> and <see cref="TestAll(MpiRequest[])"/>
/// take any mix of them.
/// </summary>
/// <remarks>
/// A set of buffer and persistent requests only is completed by one MPI_Waitall or
/// MPI_Testall, as <see cref="Request.WaitAll(Request[])"/> does; a set with object
/// requests among them is polled (an object receive matches its message only when
/// tested) until every one has completed.  Not thread-safe: complete a request from one thread.
/// </remarks>
public abstract unsafe partial class MpiRequest : IDisposable
{
    /// <summary>Requests the sets handle without allocating (handles and statuses on the stack).</summary>
    private protected const int StackRequests = 128;

    /// <summary>The set entry of an object request still pending: no core handle, it completes through its own Test.</summary>
    internal static RequestHandle ObjectPending => new(int.MinValue);

    private protected MpiRequest()
    {
    }

    /// <summary>True once the operation has completed (tests it when not yet known).</summary>
    public abstract bool IsCompleted { get; }

    /// <summary>Waits for the operation to complete.</summary>
    /// <returns>The operation's status (for a receive: source, tag, size).</returns>
    public abstract Status Wait();

    /// <summary>Tests whether the operation completed, without waiting.</summary>
    /// <param name="status">The status when the result is true.</param>
    public abstract bool Test(out Status status);

    /// <summary>
    /// Asks for the operation to be cancelled; complete the request afterwards and check
    /// <see cref="Status.Cancelled"/>.  A receive that has not matched a message can always
    /// be cancelled.
    /// </summary>
    public abstract void Cancel();

    /// <summary>Gives up the request; see each kind for what becomes of an operation in flight.</summary>
    public abstract void Dispose();

    // ---- what the sets need of each kind ----

    /// <summary>
    /// Checks the request (throws once disposed) and says what a set does with it: its core
    /// handle while pending, ReqNull when there is nothing to wait for (completed, or a
    /// persistent request not active), or <see cref="ObjectPending"/>.
    /// </summary>
    internal abstract RequestHandle SetEntry();

    /// <summary>The status a set reports for an entry that was ReqNull.</summary>
    internal abstract Status IdleStatus();

    /// <summary>The core completed the operation in a set (rc: the set's result; an error is thrown after the set).</summary>
    internal abstract void CompletedInSet(int rc, RequestHandle handle, in Status status);

    /// <summary>The core completed the operation alone (rc its result): finishes it, throws its error.</summary>
    internal abstract Status FinishAlone(int rc, in Status status);

    // ---- sets ----

    /// <summary>Waits for every request (MPI_Waitall); any mix of buffer, object and persistent requests.</summary>
    /// <param name="requests">The requests, each at most once; completed ones contribute their stored status.</param>
    /// <returns>The statuses, in the order of <paramref name="requests"/>.</returns>
    /// <exception cref="MpiException">An operation failed (thrown after every request completed).</exception>
    public static Status[] WaitAll(params MpiRequest[] requests)
    {
        ArgumentNullException.ThrowIfNull(requests);
        var statuses = new Status[requests.Length];
        WaitAll(new ReadOnlySpan<MpiRequest>(requests), statuses);
        return statuses;
    }

    /// <summary>Waits for every request (MPI_Waitall) without allocating for up to 128 requests.</summary>
    /// <param name="requests">The requests, each at most once.</param>
    /// <exception cref="MpiException">An operation failed (thrown after every request completed).</exception>
    [SkipLocalsInit] // every entry is written before it is read
    public static void WaitAll(ReadOnlySpan<MpiRequest> requests)
    {
        Status[]? heap = requests.Length > StackRequests ? new Status[requests.Length] : null;
        Span<Status> statuses = heap ?? stackalloc Status[StackRequests];
        WaitAll(requests, statuses[..requests.Length]);
    }

    /// <summary>Waits for every request (MPI_Waitall) and writes their statuses.</summary>
    /// <param name="requests">The requests, each at most once.</param>
    /// <param name="statuses">Receives the statuses, in the order of <paramref name="requests"/>; at least as long.</param>
    /// <exception cref="ArgumentException"><paramref name="statuses"/> is shorter than <paramref name="requests"/>, or a request is in the set twice.</exception>
    /// <exception cref="MpiException">An operation failed (thrown after every request completed).</exception>
    [SkipLocalsInit]
    public static void WaitAll(ReadOnlySpan<MpiRequest> requests, Span<Status> statuses)
    {
        int n = requests.Length;
        if (statuses.Length < n)
            ThrowHelper.ThrowStatusesTooShort(statuses.Length, n);
        RequestHandle[]? heap = n > StackRequests ? new RequestHandle[n] : null;
        Span<RequestHandle> handles = heap ?? stackalloc RequestHandle[StackRequests];
        handles = handles[..n];
        statuses = statuses[..n];
        if (Entries(requests, handles))
        {
            PollAll(requests, handles, statuses);
            return;
        }
        int rc;
        fixed (RequestHandle* h = handles)
        fixed (Status* s = statuses)
        {
            var all = new Completion.AllRequests(n, h, s);
            rc = Completion.PollThenBlock(ref all, Completion.SpinPolls / Math.Max(1, n));
        }
        FinishSet(requests, handles, statuses, rc);
    }

    /// <summary>
    /// Tests whether every request completed (MPI_Testall); completes them all when so.
    /// Object requests found complete are completed either way (their outcome is kept).
    /// </summary>
    /// <param name="requests">The requests, each at most once.</param>
    public static bool TestAll(MpiRequest[] requests)
    {
        ArgumentNullException.ThrowIfNull(requests);
        return TestAll(new ReadOnlySpan<MpiRequest>(requests));
    }

    /// <inheritdoc cref="TestAll(MpiRequest[])"/>
    [SkipLocalsInit]
    public static bool TestAll(ReadOnlySpan<MpiRequest> requests)
    {
        int n = requests.Length, rc;
        RequestHandle[]? heapH = n > StackRequests ? new RequestHandle[n] : null;
        Status[]? heapS = n > StackRequests ? new Status[n] : null;
        Span<RequestHandle> handles = heapH ?? stackalloc RequestHandle[StackRequests];
        Span<Status> statuses = heapS ?? stackalloc Status[StackRequests];
        handles = handles[..n];
        statuses = statuses[..n];
        if (Entries(requests, handles))
        {
            // Object requests first: completing one early changes nothing its owner can see.
            bool all = true;
            for (int i = 0; i < n; i++)
            {
                if (handles[i] != ObjectPending)
                    continue;
                if (requests[i].Test(out _))
                    handles[i] = RequestHandle.Null;
                else
                    all = false;
            }
            if (!all)
                return false;
        }
        fixed (RequestHandle* h = handles)
        fixed (Status* s = statuses)
            rc = Core.ReqTestall(n, h, s);
        if (rc == 0)
            return false;
        FinishSet(requests, handles, statuses, rc);
        return true;
    }

    /// <summary>Waits until one of the requests completes (MPI_Waitany); any mix of kinds.</summary>
    /// <param name="requests">The requests, each at most once; completed ones (and persistent ones not active) are skipped.</param>
    /// <param name="status">The status of the one that completed (empty when none was pending).</param>
    /// <returns>Its index, or <see cref="Mpi.Undefined"/> when none was pending.</returns>
    /// <exception cref="MpiException">The operation that completed failed.</exception>
    [SkipLocalsInit]
    public static int WaitAny(MpiRequest[] requests, out Status status)
    {
        ArgumentNullException.ThrowIfNull(requests);
        int n = requests.Length;
        RequestHandle[]? heap = n > StackRequests ? new RequestHandle[n] : null;
        Span<RequestHandle> handles = heap ?? stackalloc RequestHandle[StackRequests];
        handles = handles[..n];
        if (Entries(requests, handles))
            return PollAny(requests, handles, out status);
        int index = Completion.WaitAny(handles, out int result, out Status st);
        status = index == Mpi.Undefined ? EmptyStatus : requests[index].FinishAlone(result, st);
        return index;
    }

    /// <summary>MPI's empty status (MPI-4.0 §3.7.3): what a set reports when nothing was pending.</summary>
    private protected static Status EmptyStatus => new(Mpi.AnySource, Mpi.AnyTag, 0);

    /// <summary>Checks every request (not null, not disposed, none twice) and writes each one's entry; true when object requests are pending.</summary>
    private static bool Entries(ReadOnlySpan<MpiRequest> requests, Span<RequestHandle> handles)
    {
        bool objects = false;
        for (int i = 0; i < requests.Length; i++)
        {
            MpiRequest r = requests[i];
            if (r is null)
                ThrowHelper.ThrowNullRequest(i);
            handles[i] = r.SetEntry();
            objects |= handles[i] == ObjectPending;
        }
        CheckDistinct(handles);
        return objects;
    }

    /// <summary>
    /// Refuses a set that holds one pending request twice, by its core handle: MPI would
    /// complete one request twice.  Completed requests may repeat, and so may an object request
    /// (testing it twice is harmless).
    /// </summary>
    internal static void CheckDistinct(ReadOnlySpan<RequestHandle> handles)
    {
        if (handles.Length <= 32)
        {
            for (int i = 1; i < handles.Length; i++)
                for (int j = 0; j < i; j++)
                    if (handles[i] == handles[j] && handles[i] != RequestHandle.Null && handles[i] != ObjectPending)
                        ThrowHelper.ThrowRepeatedRequest(j, i);
            return;
        }
        var seen = new Dictionary<RequestHandle, int>(handles.Length);
        for (int i = 0; i < handles.Length; i++)
            if (handles[i] != RequestHandle.Null && handles[i] != ObjectPending && !seen.TryAdd(handles[i], i))
                ThrowHelper.ThrowRepeatedRequest(seen[handles[i]], i);
    }

    /// <summary>After the core completed a set of buffer and persistent requests: each finishes, then the first error is thrown.</summary>
    private static void FinishSet(ReadOnlySpan<MpiRequest> requests, ReadOnlySpan<RequestHandle> handles, Span<Status> statuses, int rc)
    {
        Exception? error = rc < 0 ? ThrowHelper.CoreException(rc) : null;
        for (int i = 0; i < requests.Length; i++)
        {
            if (handles[i] == RequestHandle.Null)
                statuses[i] = IdleStatusOrError(requests[i], ref error);
            else
                requests[i].CompletedInSet(rc, handles[i], statuses[i]);
        }
        if (Request.OrphanedHolds != 0)
            Request.SweepOrphans();
        if (error is not null)
            throw error;
    }

    /// <summary>
    /// The status of a request that completed before the set: an object request that failed then
    /// gives its error, which is kept (the first one) and thrown only once every other request of
    /// the set has finished, so that none of them is left completed in the core but not here.
    /// </summary>
    private static Status IdleStatusOrError(MpiRequest request, ref Exception? error)
    {
        try
        {
            return request.IdleStatus();
        }
        catch (Exception e) when (e is MpiException or TransportException)
        {
            error ??= e;
            return EmptyStatus;
        }
    }

    /// <summary>A set with object requests: every pending one is tested in turn until all completed; the first error is thrown then.</summary>
    private static void PollAll(ReadOnlySpan<MpiRequest> requests, Span<RequestHandle> handles, Span<Status> statuses)
    {
        Exception? error = null;
        for (int i = 0; i < requests.Length; i++)
        {
            if (handles[i] == RequestHandle.Null)
                statuses[i] = IdleStatusOrError(requests[i], ref error);
        }
        for (int left = Pending(handles); left > 0;)
        {
            for (int i = 0; i < requests.Length; i++)
            {
                if (handles[i] == RequestHandle.Null)
                    continue;
                try
                {
                    if (!requests[i].Test(out statuses[i]))
                        continue;
                }
                catch (Exception e) when (e is MpiException or TransportException)
                {
                    error ??= e;
                }
                handles[i] = RequestHandle.Null;
                left--;
            }
        }
        if (error is not null)
            throw error;
    }

    /// <summary>WaitAny over a set with object requests: the pending ones are tested in turn.</summary>
    private static int PollAny(ReadOnlySpan<MpiRequest> requests, ReadOnlySpan<RequestHandle> handles, out Status status)
    {
        if (Pending(handles) == 0)
        {
            status = EmptyStatus;
            return Mpi.Undefined;
        }
        for (; ; )
        {
            for (int i = 0; i < requests.Length; i++)
            {
                if (handles[i] != RequestHandle.Null && requests[i].Test(out status))
                    return i;
            }
        }
    }

    private static int Pending(ReadOnlySpan<RequestHandle> handles)
    {
        int n = 0;
        foreach (RequestHandle h in handles)
            n += h != RequestHandle.Null ? 1 : 0;
        return n;
    }
}
