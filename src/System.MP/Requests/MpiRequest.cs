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

    /// <summary>
    /// One MPI_Test of the core request <paramref name="h"/> (a buffer or persistent request's active
    /// operation): false while it is in flight, else the request finishes as after a wait
    /// (<see cref="FinishAlone"/>, devirtualized where this is inlined into a sealed request's Test).
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private protected bool TestCore(RequestHandle h, out Status status)
    {
        Status st;
        int rc = Core.ReqTest(h, &st);
        if (rc == 0)
        {
            status = default;
            return false;
        }
        status = FinishAlone(rc, st);
        return true;
    }


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
    public static void WaitAll(ReadOnlySpan<MpiRequest> requests)
    {
        var set = new Set(requests);
        RequestSet.WaitAllPolled(ref set);
    }

    /// <summary>Waits for every request (MPI_Waitall) and writes their statuses.</summary>
    /// <param name="requests">The requests, each at most once.</param>
    /// <param name="statuses">Receives the statuses, in the order of <paramref name="requests"/>; at least as long.</param>
    /// <exception cref="ArgumentException"><paramref name="statuses"/> is shorter than <paramref name="requests"/>, or a request is in the set twice.</exception>
    /// <exception cref="MpiException">An operation failed (thrown after every request completed).</exception>
    public static void WaitAll(ReadOnlySpan<MpiRequest> requests, Span<Status> statuses)
    {
        if (statuses.Length < requests.Length)
            ThrowHelper.ThrowStatusesTooShort(statuses.Length, requests.Length);
        var set = new Set(requests);
        RequestSet.WaitAllPolled(ref set, statuses[..requests.Length]);
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
    public static bool TestAll(ReadOnlySpan<MpiRequest> requests)
    {
        var set = new Set(requests);
        return RequestSet.TestAllPolled(ref set);
    }

    /// <summary>Waits until one of the requests completes (MPI_Waitany); any mix of kinds.</summary>
    /// <param name="requests">The requests, each at most once; completed ones (and persistent ones not active) are skipped.</param>
    /// <param name="status">The status of the one that completed (empty when none was pending).</param>
    /// <returns>Its index, or <see cref="Mpi.Undefined"/> when none was pending.</returns>
    /// <exception cref="MpiException">The operation that completed failed.</exception>
    public static int WaitAny(MpiRequest[] requests, out Status status)
    {
        ArgumentNullException.ThrowIfNull(requests);
        var set = new Set(requests);
        return RequestSet.WaitAnyPolled(ref set, out status);
    }

    /// <summary>A set of any kinds of request for <see cref="RequestSet"/>: polled when it holds object requests in flight.</summary>
    private readonly ref struct Set(ReadOnlySpan<MpiRequest> requests) : IPolledRequestSet
    {
        private readonly ReadOnlySpan<MpiRequest> _requests = requests;

        public int Count => _requests.Length;

        public static bool RepeatsLeftToCore => false;

        public static bool HandlesVouched => false;

        public static bool StatusesForReadersOnly => false;

        public void Gather(scoped Span<RequestHandle> handles) => Entries(_requests, handles);

        public void PollAll(scoped Span<RequestHandle> handles, scoped Span<Status> statuses) => MpiRequest.PollAll(_requests, handles, statuses);

        public bool TestObjects(scoped Span<RequestHandle> handles)
        {
            // Object requests first: completing one early changes nothing its owner can see.
            bool all = true;
            for (int i = 0; i < handles.Length; i++)
            {
                if (handles[i] != ObjectPending)
                    continue;
                if (_requests[i].Test(out _))
                    handles[i] = RequestHandle.Null;
                else
                    all = false;
            }
            return all;
        }

        public int PollAny(scoped ReadOnlySpan<RequestHandle> handles, out Status status) => MpiRequest.PollAny(_requests, handles, out status);

        public int KnownComplete() => -1;

        public void FinishAll(scoped ReadOnlySpan<RequestHandle> handles, scoped Span<Status> statuses, int rc) => FinishSet(_requests, handles, statuses, rc);

        public Status FinishOne(int index, int rc, in Status status) => _requests[index].FinishAlone(rc, status);
    }

    /// <summary>MPI's empty status (MPI-4.0 §3.7.3): what a set reports when nothing was pending.</summary>
    private protected static Status EmptyStatus => Request.EmptyStatus;

    /// <summary>Checks every request (not null, not disposed) and writes each one's entry (<see cref="ObjectPending"/> for an object request in flight).</summary>
    private static void Entries(ReadOnlySpan<MpiRequest> requests, Span<RequestHandle> handles)
    {
        for (int i = 0; i < requests.Length; i++)
        {
            MpiRequest r = requests[i];
            if (r is null)
                ThrowHelper.ThrowNullRequest(i);
            handles[i] = r.SetEntry();
        }
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
