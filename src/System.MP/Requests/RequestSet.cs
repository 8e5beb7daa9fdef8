using System.Collections.Generic;
using System.MP.Interop;
using System.Runtime.CompilerServices;
using System.Threading;

namespace System.MP;

/// <summary>
/// The requests of one set operation as <see cref="RequestSet"/> sees them: a ref struct over the
/// caller's requests (<see cref="Request"/> values or <see cref="MpiRequest"/> objects), so that the
/// JIT compiles the set operations once per kind, with these calls inlined and nothing allocated.
/// </summary>
internal interface IRequestSet
{
    /// <summary>The number of requests in the set.</summary>
    int Count { get; }

    /// <summary>
    /// True when WaitAll leaves a repeated request to the core, which refuses the set before
    /// anything is waited for (the other set operations check for repeats here first).
    /// </summary>
    static abstract bool RepeatsLeftToCore { get; }

    /// <summary>
    /// True when <see cref="Gather"/> vouches for every handle it writes that is not null: one the
    /// core gave for an operation not completed, freed or given up since (a <see cref="Request"/>
    /// whose version it checked), so WaitAll calls mp_req_waitall_owned.
    /// </summary>
    static abstract bool HandlesVouched { get; }

    /// <summary>
    /// True when <see cref="FinishAll"/> of a set whose caller wants no statuses reads the core's
    /// statuses only to hand them to status readers (<see cref="RequestSlot.StatusReaders"/>): while
    /// none is attached, the core writes none.
    /// </summary>
    static abstract bool StatusesForReadersOnly { get; }

    /// <summary>
    /// Checks every request (throws for one completed or disposed) and writes its core handle:
    /// ReqNull when there is nothing to wait for, and in a set that can hold object requests
    /// (<see cref="IPolledRequestSet"/>) <see cref="MpiRequest.ObjectPending"/> for one in flight.
    /// </summary>
    void Gather(scoped Span<RequestHandle> handles);

    /// <summary>The index of a request known complete already (so WaitAny need not ask MPI), else -1.</summary>
    int KnownComplete();

    /// <summary>After the core completed the set (rc its result): every request finishes, then the first error is thrown.</summary>
    void FinishAll(scoped ReadOnlySpan<RequestHandle> handles, scoped Span<Status> statuses, int rc);

    /// <summary>After WaitAny completed the request at <paramref name="index"/> (rc its result): it finishes, its error is thrown.</summary>
    Status FinishOne(int index, int rc, in Status status);
}

/// <summary>
/// A set that can hold object requests, which MPI cannot complete (their operation is a series
/// of messages): while one is in flight (<see cref="MpiRequest.ObjectPending"/> among the
/// gathered handles) the set is polled, each request tested in turn, instead of being completed
/// by one call of the core.
/// </summary>
internal interface IPolledRequestSet : IRequestSet
{
    /// <summary>WaitAll of a set with object requests in flight: tests each in turn until all completed.</summary>
    void PollAll(scoped Span<RequestHandle> handles, scoped Span<Status> statuses);

    /// <summary>TestAll of a set with object requests in flight: tests each once; true when every one has completed.</summary>
    bool TestObjects(scoped Span<RequestHandle> handles);

    /// <summary>WaitAny of a set with object requests in flight: tests each in turn until one completes.</summary>
    int PollAny(scoped ReadOnlySpan<RequestHandle> handles, out Status status);
}

/// <summary>
/// WaitAll, TestAll and WaitAny over any kind of request (<see cref="IRequestSet"/>): the core
/// handles of the set gathered on the stack (up to <see cref="StackRequests"/>), checked, completed
/// by one call of the core, and finished by the set's kind.
/// </summary>
internal static unsafe class RequestSet
{
    /// <summary>Requests the sets handle without allocating (handles and statuses on the stack).</summary>
    internal const int StackRequests = 128;

    /// <summary>WaitAll polls before waiting only for sets smaller than this.</summary>
    private const int SpinAllLimit = 16;

    /// <summary>
    /// How many fast tests a WaitAll of <paramref name="n"/> requests makes before it blocks:
    /// polling saves the GC transition of the blocking call, which matters for a few requests;
    /// a larger set shares one transition, so it waits in MPI_Waitall (which polls the same way) at once.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static int SetPolls(int n) => n < SpinAllLimit ? Completion.SpinPolls / Math.Max(1, n) : 0;

    /// <summary>WaitAll with the statuses on the stack (up to <see cref="StackRequests"/>), for callers that do not want them.</summary>
    [MethodImpl(MethodImplOptions.AggressiveOptimization), SkipLocalsInit] // every entry is written before it is read
    internal static void WaitAll<TSet>(scoped ref TSet set) where TSet : struct, IRequestSet, allows ref struct
    {
        WaitAll(ref set, Buffer(set.Count, stackalloc Status[StackRequests]),
                unread: TSet.StatusesForReadersOnly && Volatile.Read(ref RequestSlot.StatusReaders) == 0);
    }

    /// <summary>
    /// Waits for every request of the set (MPI_Waitall); <paramref name="statuses"/> is exactly as long as the set.
    /// <paramref name="unread"/>: no one reads the core's statuses (the core writes none).
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveOptimization), SkipLocalsInit] // every entry is written before it is read
    internal static void WaitAll<TSet>(scoped ref TSet set, scoped Span<Status> statuses, bool unread = false)
        where TSet : struct, IRequestSet, allows ref struct
    {
        Span<RequestHandle> handles = Buffer(set.Count, stackalloc RequestHandle[StackRequests]);
        set.Gather(handles);
        if (!TSet.RepeatsLeftToCore)
            CheckDistinct(handles);
        WaitGathered(ref set, handles, statuses, unread);
    }

    /// <summary><see cref="WaitAll{TSet}(ref TSet)"/> of a set that can hold object requests.</summary>
    [SkipLocalsInit]
    internal static void WaitAllPolled<TSet>(scoped ref TSet set) where TSet : struct, IPolledRequestSet, allows ref struct
    {
        WaitAllPolled(ref set, Buffer(set.Count, stackalloc Status[StackRequests]));
    }

    /// <summary><see cref="WaitAll{TSet}(ref TSet, Span{Status}, bool)"/> of a set that can hold object requests: polled while one is in flight.</summary>
    [SkipLocalsInit]
    internal static void WaitAllPolled<TSet>(scoped ref TSet set, scoped Span<Status> statuses) where TSet : struct, IPolledRequestSet, allows ref struct
    {
        Span<RequestHandle> handles = Buffer(set.Count, stackalloc RequestHandle[StackRequests]);
        set.Gather(handles);
        CheckDistinct(handles);
        if (ObjectsPending(handles))
            set.PollAll(handles, statuses);
        else
            WaitGathered(ref set, handles, statuses, unread: false);
    }

    /// <summary>
    /// Room for the core handles or the statuses of <paramref name="n"/> requests: <paramref name="stack"/>
    /// (<see cref="StackRequests"/> long) when they fit, else an array.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static Span<T> Buffer<T>(int n, Span<T> stack) where T : unmanaged => n > StackRequests ? new T[n] : stack[..n];

    /// <summary>The core's MPI_Waitall over the gathered handles, then every request finishes.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static void WaitGathered<TSet>(scoped ref TSet set, scoped Span<RequestHandle> handles, scoped Span<Status> statuses, bool unread)
        where TSet : struct, IRequestSet, allows ref struct
    {
        int n = handles.Length, rc;
        fixed (RequestHandle* h = handles)
        fixed (Status* given = statuses)
        {
            Status* s = unread ? null : given;
            long t0 = MpiProfile.Begin();
            if (TSet.HandlesVouched)
            {
                var owned = new Completion.OwnedRequests(n, h, s);
                rc = Completion.PollThenBlock(ref owned, SetPolls(n));
            }
            else
            {
                var all = new Completion.AllRequests(n, h, s);
                rc = Completion.PollThenBlock(ref all, SetPolls(n));
            }
            MpiProfile.End(ProfiledCall.WaitAll, t0);
        }
        set.FinishAll(handles, statuses, rc);
    }

    /// <summary>Tests whether every request of the set completed (MPI_Testall); finishes them all when so.</summary>
    [SkipLocalsInit]
    internal static bool TestAll<TSet>(scoped ref TSet set) where TSet : struct, IRequestSet, allows ref struct
    {
        Span<RequestHandle> handles = Buffer(set.Count, stackalloc RequestHandle[StackRequests]);
        set.Gather(handles);
        CheckDistinct(handles);
        return TestGathered(ref set, handles);
    }

    /// <summary><see cref="TestAll{TSet}"/> of a set that can hold object requests: those in flight are tested first, one by one.</summary>
    [SkipLocalsInit]
    internal static bool TestAllPolled<TSet>(scoped ref TSet set) where TSet : struct, IPolledRequestSet, allows ref struct
    {
        Span<RequestHandle> handles = Buffer(set.Count, stackalloc RequestHandle[StackRequests]);
        set.Gather(handles);
        CheckDistinct(handles);
        if (ObjectsPending(handles) && !set.TestObjects(handles))
            return false;
        return TestGathered(ref set, handles);
    }

    /// <summary>The core's MPI_Testall over the gathered handles; when every request completed, each finishes.</summary>
    [SkipLocalsInit]
    private static bool TestGathered<TSet>(scoped ref TSet set, scoped Span<RequestHandle> handles) where TSet : struct, IRequestSet, allows ref struct
    {
        int n = handles.Length, rc;
        Span<Status> statuses = Buffer(n, stackalloc Status[StackRequests]);
        fixed (RequestHandle* h = handles)
        fixed (Status* s = statuses)
            rc = Core.ReqTestall(n, h, s);
        if (rc == 0)
            return false;
        set.FinishAll(handles, statuses, rc);
        return true;
    }

    /// <summary>Waits until one request of the set completes (MPI_Waitany) and finishes it.</summary>
    /// <returns>Its index, or <see cref="Mpi.Undefined"/> (and the empty status) when none was pending.</returns>
    [SkipLocalsInit]
    internal static int WaitAny<TSet>(scoped ref TSet set, out Status status) where TSet : struct, IRequestSet, allows ref struct
    {
        Span<RequestHandle> handles = Buffer(set.Count, stackalloc RequestHandle[StackRequests]);
        set.Gather(handles);
        CheckDistinct(handles);
        return WaitAnyGathered(ref set, handles, out status);
    }

    /// <summary><see cref="WaitAny{TSet}"/> of a set that can hold object requests: polled while one is in flight.</summary>
    [SkipLocalsInit]
    internal static int WaitAnyPolled<TSet>(scoped ref TSet set, out Status status) where TSet : struct, IPolledRequestSet, allows ref struct
    {
        Span<RequestHandle> handles = Buffer(set.Count, stackalloc RequestHandle[StackRequests]);
        set.Gather(handles);
        CheckDistinct(handles);
        if (ObjectsPending(handles))
            return set.PollAny(handles, out status);
        return WaitAnyGathered(ref set, handles, out status);
    }

    /// <summary>The core's MPI_Waitany over the gathered handles (unless a request is known complete), then that request finishes.</summary>
    private static int WaitAnyGathered<TSet>(scoped ref TSet set, scoped Span<RequestHandle> handles, out Status status)
        where TSet : struct, IRequestSet, allows ref struct
    {
        int index = set.KnownComplete(), result = 0;
        Status st = default;
        if (index < 0)
        {
            long t0 = MpiProfile.Begin();
            index = Completion.WaitAny(handles, out result, out st);
            MpiProfile.End(ProfiledCall.WaitAny, t0);
        }
        if (index == Mpi.Undefined)
        {
            status = Request.EmptyStatus;
            return index;
        }
        status = set.FinishOne(index, result, st);
        return index;
    }

    /// <summary>True when an object request of the set is in flight (its gathered handle is <see cref="MpiRequest.ObjectPending"/>).</summary>
    private static bool ObjectsPending(ReadOnlySpan<RequestHandle> handles) => handles.Contains(MpiRequest.ObjectPending);

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
                    if (handles[i] == handles[j] && handles[i] != RequestHandle.Null && handles[i] != MpiRequest.ObjectPending)
                        ThrowHelper.ThrowRepeatedRequest(j, i);
            return;
        }
        var seen = new Dictionary<RequestHandle, int>(handles.Length);
        for (int i = 0; i < handles.Length; i++)
            if (handles[i] != RequestHandle.Null && handles[i] != MpiRequest.ObjectPending && !seen.TryAdd(handles[i], i))
                ThrowHelper.ThrowRepeatedRequest(seen[handles[i]], i);
    }
}
