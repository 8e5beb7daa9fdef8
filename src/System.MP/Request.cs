using System.Collections.Concurrent;
using System.MP.Interop;
using System.Runtime.CompilerServices;
using System.Threading;

namespace System.MP;

/// <summary>
/// A nonblocking operation in flight (an MPI request).  Complete it with
/// <see cref="Wait"/>, <see cref="Test"/> or the static WaitAll/WaitAny/TestAll;
/// until then the operation's array must not be touched.
/// </summary>
/// <remarks>
/// Buffer lifetime: under motor with its GC extension the array is recorded in
/// the core's in-flight table by the same call that posts the operation, and
/// the GC treats it as pinned only while the operation is in flight.  Under
/// plain dotnet the array is held by a pinned GCHandle until completion (one
/// handle shared by all operations in flight on the same array).  A request
/// dropped without completion is noticed by a finalizer (of the group of
/// requests its thread posted around it) and released once the operation
/// completes; the array is never moved while MPI may touch it.
/// A Request is not thread-safe: complete it from one thread.
/// </remarks>
public sealed unsafe class Request : IDisposable
{
    /// <summary>
    /// True when the GC extension is attached to the core this process uses, so
    /// registered buffers are pinned by the GC itself and no GCHandle is needed.
    /// The core says so only after the runtime accepted the extension at startup.
    /// </summary>
    internal static readonly bool s_registerBuffers = GcExtensionAttached();

    private static bool GcExtensionAttached()
    {
        CoreStats s;
        CoreLoader.EnsureLoaded();
        Core.Stats(&s);
        return s.GcExtension != 0;
    }

    private static readonly ConcurrentQueue<(int Handle, ArrayPin? Pin, ArrayPin? Pin2)> s_orphans = new();
    private static int s_orphanCount;

    /// <summary>Requests WaitAll/TestAll/WaitAny handle without allocating (handles and statuses on the stack).</summary>
    private const int StackRequests = 128;

    /// <summary>WaitAll polls before waiting only for sets smaller than this.</summary>
    private const int SpinAllLimit = 16;

    // The core handle and pins live in the group (see RequestGroup): no
    // finalizer per request.
    private readonly RequestGroup _group;
    private readonly int _index;
    private bool _disposed;
    private Status _status;

    private Request(RequestGroup.Poster poster, int handle, ArrayPin? pin, ArrayPin? pin2) =>
        _group = RequestGroup.Add(poster, handle, pin, pin2, out _index);

    private ref int Handle
    {
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        get => ref _group.Handles[_index];
    }

    /// <summary>Posts a nonblocking collective over up to two arrays (send, receive).</summary>
    internal static Request PostCollective<T>(int comm, CollDesc* d, T[]? send, T[]? recv) where T : unmanaged
    {
        int req = 0, rc;
        bool sendImmobile = send is not { Length: > 0 } || PinnedBuffers.Contains(send);
        bool recvImmobile = recv is not { Length: > 0 } || PinnedBuffers.Contains(recv);
        if (s_registerBuffers || (sendImmobile && recvImmobile))
        {
            fixed (T* s = send)
            fixed (T* r = recv)
            {
                d->SendBuf = s;
                d->RecvBuf = r;
                rc = Core.CollPost(comm, d, sendImmobile ? null : ObjectAddress(ref send!),
                                   recvImmobile ? null : ObjectAddress(ref recv!), &req);
            }
            return Posted(RequestGroup.CurrentPoster, rc, req, null);
        }
        // The pins keep the arrays in place, so the addresses taken under
        // `fixed` stay valid after it.
        RequestGroup.Poster poster = RequestGroup.CurrentPoster;
        ArrayPin? ps = sendImmobile ? null : ArrayPin.Acquire(send!, ref poster.LastPin);
        ArrayPin? pr = recvImmobile ? null : ArrayPin.Acquire(recv!, ref poster.LastPin);
        fixed (T* s = send)
        fixed (T* r = recv)
        {
            d->SendBuf = s;
            d->RecvBuf = r;
        }
        rc = Core.CollPost(comm, d, null, null, &req);
        if (rc < 0)
        {
            Exception e = ThrowHelper.CoreException(rc);
            ps?.Release();
            pr?.Release();
            throw e;
        }
        return new Request(poster, req, ps, pr);
    }

    /// <summary>True while this request holds a pinned GCHandle on a buffer (library mode, movable arrays).</summary>
    internal bool HoldsPin => _group.PinSlots is { } p && (p[_index].Pin is not null || p[_index].Pin2 is not null);

    /// <summary>True once the operation has completed (tests it when not yet known).</summary>
    public bool IsCompleted => Handle == CoreConst.ReqNull || Test(out _);

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static unsafe Request PostSend<T>(T[] buffer, int offset, int count, int dest, int tag, int comm, int mode)
        where T : unmanaged
    {
        int req = 0, rc;
        RequestGroup.Poster poster = RequestGroup.CurrentPoster;
        bool register = Hold(buffer, count, poster, out ArrayPin? pin);
        // Under `fixed` until the posting call has registered the array; a
        // pinned (or immobile) array keeps its address after it.
        fixed (T* p = buffer)
            rc = Core.ISend(p + offset, (long)count * sizeof(T), dest, tag, comm, mode,
                            register ? ObjectAddress(ref buffer) : null, &req);
        return Posted(poster, rc, req, pin);
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static unsafe Request PostRecv<T>(T[] buffer, int offset, int count, int source, int tag, int comm)
        where T : unmanaged
    {
        int req = 0, rc;
        RequestGroup.Poster poster = RequestGroup.CurrentPoster;
        bool register = Hold(buffer, count, poster, out ArrayPin? pin);
        fixed (T* p = buffer)
            rc = Core.IRecv(p + offset, (long)count * sizeof(T), source, tag, comm,
                            register ? ObjectAddress(ref buffer) : null, &req);
        return Posted(poster, rc, req, pin);
    }

    /// <summary>
    /// How an array stays in place while an operation on it is in flight: true
    /// when the posting call must register it with the core (under motor with
    /// the GC extension), else <paramref name="pin"/> holds it (library mode),
    /// or nothing is needed (no elements, or a pinned-heap array).
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static bool Hold<T>(T[] buffer, int count, RequestGroup.Poster poster, out ArrayPin? pin)
    {
        pin = null;
        if (count <= 0 || PinnedBuffers.Contains(buffer, ref poster.LastImmobile))
            return false;
        if (s_registerBuffers)
            return true;
        pin = ArrayPin.Acquire(buffer, ref poster.LastPin);
        return false;
    }

    /// <summary>The array object's address; stable only while the array is fixed.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static unsafe void* ObjectAddress<T>(ref T[] array) => (void*)Unsafe.As<T[], nint>(ref array);

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static Request Posted(RequestGroup.Poster poster, int rc, int req, ArrayPin? pin)
    {
        if (rc < 0)
            ThrowPostFailed(rc, pin);
        if (Volatile.Read(ref s_orphanCount) != 0)
            SweepOrphans();
        return new Request(poster, req, pin, null);
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static void ThrowPostFailed(int rc, ArrayPin? pin)
    {
        Exception e = ThrowHelper.CoreException(rc);
        pin?.Release();
        throw e;
    }

    /// <summary>Waits for the operation to complete (MPI_Wait).</summary>
    /// <returns>The operation's status (for a receive: source, tag, size).</returns>
    /// <exception cref="MessageTruncatedException">A receive got a message longer than its buffer.</exception>
    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    public unsafe Status Wait()
    {
        int h = ActiveHandle();
        if (h == CoreConst.ReqNull)
            return _status;
        Status st = default;
        int rc = 0;
        for (int i = Core.SpinPolls; i > 0 && rc == 0; i--)
            rc = Core.ReqTest(h, &st);
        if (rc == 0)
            rc = Core.ReqWait(h, &st);
        return Finish(rc, st);
    }

    /// <summary>Tests whether the operation completed, without waiting (MPI_Test).</summary>
    /// <param name="status">The status when the result is true.</param>
    /// <exception cref="MessageTruncatedException">A receive got a message longer than its buffer.</exception>
    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    public unsafe bool Test(out Status status)
    {
        int h = ActiveHandle();
        if (h == CoreConst.ReqNull)
        {
            status = _status;
            return true;
        }
        Status st;
        int rc = Core.ReqTest(h, &st);
        if (rc == 0)
        {
            status = default;
            return false;
        }
        status = Finish(rc, st);
        return true;
    }

    /// <summary>
    /// Asks MPI to cancel the operation (MPI_Cancel); complete the request
    /// afterwards and check <see cref="Status.Cancelled"/>.  A receive that has
    /// not matched a message can always be cancelled.
    /// </summary>
    public void Cancel()
    {
        int h = ActiveHandle();
        if (h == CoreConst.ReqNull)
            return;
        int rc = Core.ReqCancel(h);
        if (rc < 0)
            ThrowHelper.ThrowCore(rc);
    }

    /// <summary>
    /// Gives up the request without waiting (MPI_Request_free): the operation
    /// still completes, and its buffer is released when it does.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    public void Dispose()
    {
        if (_disposed)
            return;
        _disposed = true;
        // On a user thread the request can be tested now: one that is already
        // complete (a send that went out eagerly, ProcNull) is released at once.
        Status st;
        int h = Handle;
        if (h != CoreConst.ReqNull && Core.ReqTest(h, &st) != 0)
            ReleasePins();
        else
            Abandon(_group, _index);
    }

    /// <summary>Gives up an operation nobody will complete (disposed, or its request dropped).</summary>
    internal static void Abandon(RequestGroup group, int index)
    {
        int h = group.Handles[index];
        if (h == CoreConst.ReqNull)
            return;
        group.Handles[index] = CoreConst.ReqNull;
        // The core owns completion: it frees the slot once it sees the
        // operation done (in a later wait, a sweep, or at a GC mark under
        // motor).  This touches no MPI state, so the finalizer thread may call it.
        Core.ReqOrphan(h);
        if (group.PinSlots is { } slots && (slots[index].Pin is not null || slots[index].Pin2 is not null))
        {
            ref RequestGroup.Pins op = ref slots[index];
            s_orphans.Enqueue((h, op.Pin, op.Pin2));
            op.Pin = op.Pin2 = null;
            if (Interlocked.Increment(ref s_orphanCount) == 1)
                GcSweep.Arm();
        }
    }

    /// <summary>
    /// On a user thread: lets the core complete dropped requests (MPI_Test),
    /// then releases the pins of those it freed.
    /// </summary>
    internal static void SweepOrphans()
    {
        Core.ReqSweep();
        ReleaseCompletedOrphans();
    }

    /// <summary>Frees the pins of dropped requests the core has finished with; calls no MPI (any thread).</summary>
    private static void ReleaseCompletedOrphans()
    {
        for (int n = s_orphans.Count; n > 0 && s_orphans.TryDequeue(out var o); n--)
        {
            if (Core.ReqLive(o.Handle) != 0)
            {
                s_orphans.Enqueue(o);
                continue;
            }
            o.Pin?.Release();
            o.Pin2?.Release();
            Interlocked.Decrement(ref s_orphanCount);
        }
    }

    /// <summary>
    /// The GC-triggered sweep of library mode: an object that is finalized after
    /// each GC that finds it unreachable (re-registering itself while dropped
    /// requests hold pins), so pins of completed orphans are released even
    /// when the program makes no further nonblocking calls.
    /// </summary>
    private sealed class GcSweep
    {
        private static int s_armed;

        internal static void Arm()
        {
            if (Interlocked.Exchange(ref s_armed, 1) == 0)
                _ = new GcSweep();
        }

        ~GcSweep()
        {
            ReleaseCompletedOrphans();
            if (Volatile.Read(ref s_orphanCount) != 0 && !Environment.HasShutdownStarted)
            {
                GC.ReRegisterForFinalize(this);
                return;
            }
            Volatile.Write(ref s_armed, 0);
            if (Volatile.Read(ref s_orphanCount) != 0)
                Arm(); // an orphan arrived meanwhile
        }
    }

    /// <summary>Forgets the core's request (completed by the caller) and frees the pins.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private void ReleasePins()
    {
        Handle = CoreConst.ReqNull;
        if (_group.PinSlots is { } slots)
        {
            ref RequestGroup.Pins op = ref slots[_index];
            if (op.Pin is not null)
            {
                op.Pin.Release();
                op.Pin = null;
            }
            if (op.Pin2 is not null)
            {
                op.Pin2.Release();
                op.Pin2 = null;
            }
        }
        if (_index == RequestGroup.Capacity - 1)
            _group.LastCompleted();
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private int ActiveHandle()
    {
        if (_disposed)
            throw new ObjectDisposedException(nameof(Request));
        return Handle;
    }

    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    private Status Finish(int rc, Status st)
    {
        Exception? error = rc < 0 ? ThrowHelper.CoreException(rc) : null;
        Complete(st);
        if (Volatile.Read(ref s_orphanCount) != 0)
            SweepOrphans();
        if (error is not null)
            throw error;
        return st;
    }

    /// <summary>Records the status of an operation the core has finished and lets go of it.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private void Complete(in Status st)
    {
        _status = st;
        ReleasePins();
    }

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
        int n = requests.Length, rc = 0;
        int[]? heap = n > StackRequests ? new int[n] : null;
        Span<int> handles = heap ?? stackalloc int[StackRequests];
        handles = handles[..n];
        Handles(requests, handles);
        fixed (int* h = handles)
        fixed (Status* s = statuses)
        {
            // Polling first saves the GC transition of the blocking call, which
            // matters for a few requests; a larger set shares one transition,
            // so it waits in MPI_Waitall (which polls the same way) at once.
            for (int i = n < SpinAllLimit ? Core.SpinPolls / Math.Max(1, n) : 0; i > 0 && rc == 0; i--)
                rc = Core.ReqTestAll(n, h, s);
            if (rc == 0)
                rc = Core.ReqWaitAll(n, h, s);
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
    [MethodImpl(MethodImplOptions.AggressiveOptimization), SkipLocalsInit] // every entry is written before it is read
    public static bool TestAll(ReadOnlySpan<Request> requests)
    {
        int n = requests.Length, rc;
        int[]? heapH = n > StackRequests ? new int[n] : null;
        Status[]? heapS = n > StackRequests ? new Status[n] : null;
        Span<int> handles = heapH ?? stackalloc int[StackRequests];
        Span<Status> statuses = heapS ?? stackalloc Status[StackRequests];
        handles = handles[..n];
        statuses = statuses[..n];
        Handles(requests, handles);
        fixed (int* h = handles)
        fixed (Status* s = statuses)
            rc = Core.ReqTestAll(n, h, s);
        if (rc == 0)
            return false;
        FinishAll(requests, handles, statuses, rc);
        return true;
    }

    /// <summary>Waits until one of the requests completes (MPI_Waitany).</summary>
    /// <param name="requests">The requests; already completed ones are skipped.</param>
    /// <param name="status">The status of the one that completed.</param>
    /// <returns>Its index, or <see cref="Mpi.Undefined"/> when none was still pending.</returns>
    [MethodImpl(MethodImplOptions.AggressiveOptimization), SkipLocalsInit] // every entry is written before it is read
    public static int WaitAny(Request[] requests, out Status status)
    {
        ArgumentNullException.ThrowIfNull(requests);
        int n = requests.Length;
        int[]? heap = n > StackRequests ? new int[n] : null;
        Span<int> handles = heap ?? stackalloc int[StackRequests];
        handles = handles[..n];
        Handles(requests, handles);
        Status st = default;
        for (int round = Core.SpinPolls; round > 0; round--)
        {
            for (int i = 0; i < n; i++)
            {
                if (handles[i] == CoreConst.ReqNull)
                    continue;
                int trc = Core.ReqTest(handles[i], &st);
                if (trc != 0)
                {
                    status = requests[i].Finish(trc, st);
                    return i;
                }
            }
        }
        int rc;
        fixed (int* h = handles)
            rc = Core.ReqWaitAny(n, h, &st);
        if (rc == Mpi.Undefined)
        {
            status = default;
            return Mpi.Undefined;
        }
        if (rc < 0)
            ThrowHelper.ThrowCore(rc);
        status = requests[rc].Finish(st.ErrorCode, st); // throws when that operation failed
        return rc;
    }

    /// <summary>Checks every request (not null, not disposed) before anything is waited for.</summary>
    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    private static void Handles(ReadOnlySpan<Request> requests, Span<int> handles)
    {
        for (int i = 0; i < requests.Length; i++)
        {
            Request r = requests[i];
            if (r is null)
                ThrowHelper.ThrowNullRequest(i);
            handles[i] = r.ActiveHandle();
        }
    }

    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    private static void FinishAll(ReadOnlySpan<Request> requests, ReadOnlySpan<int> handles, Span<Status> statuses, int rc)
    {
        Exception? error = rc < 0 ? ThrowHelper.CoreException(rc) : null;
        for (int i = 0; i < requests.Length; i++)
        {
            if (handles[i] == CoreConst.ReqNull)
                statuses[i] = requests[i]._status;
            else if (error is null || Core.ReqLive(handles[i]) == 0) // a refused set (bad or repeated request) stays as it was
                requests[i].Complete(statuses[i]);
        }
        if (Volatile.Read(ref s_orphanCount) != 0)
            SweepOrphans();
        if (error is not null)
            throw error;
    }
}
