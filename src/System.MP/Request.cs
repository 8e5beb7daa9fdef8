using System.Collections.Concurrent;
using System.MP.Interop;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
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
/// plain dotnet the array is held by a pinned GCHandle until completion.  A
/// request dropped without completion is noticed by its finalizer and released
/// once the operation completes; the array is never moved while MPI may touch it.
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

    private static readonly ConcurrentQueue<(int Handle, GCHandle Pin, GCHandle Pin2)> s_orphans = new();
    private static int s_orphanCount;

    private int _handle;
    private GCHandle _pin;
    private GCHandle _pin2; // a collective's second buffer (library mode)
    private Status _status;
    private bool _disposed;

    private Request(int handle, GCHandle pin, GCHandle pin2 = default)
    {
        _handle = handle;
        _pin = pin;
        _pin2 = pin2;
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
            return Posted(rc, req, default);
        }
        GCHandle ps = send is { Length: > 0 } ? GCHandle.Alloc(send, GCHandleType.Pinned) : default;
        GCHandle pr = recv is { Length: > 0 } ? GCHandle.Alloc(recv, GCHandleType.Pinned) : default;
        d->SendBuf = ps.IsAllocated ? (void*)ps.AddrOfPinnedObject() : null;
        d->RecvBuf = pr.IsAllocated ? (void*)pr.AddrOfPinnedObject() : null;
        rc = Core.CollPost(comm, d, null, null, &req);
        if (rc < 0)
        {
            Exception e = ThrowHelper.CoreException(rc);
            if (ps.IsAllocated)
                ps.Free();
            if (pr.IsAllocated)
                pr.Free();
            throw e;
        }
        return new Request(req, ps, pr);
    }

    /// <summary>True while this request holds a pinned GCHandle on a buffer (library mode, movable arrays).</summary>
    internal bool HoldsPin => _pin.IsAllocated || _pin2.IsAllocated;

    /// <summary>True once the operation has completed (tests it when not yet known).</summary>
    public bool IsCompleted => _handle == CoreConst.ReqNull || Test(out _);

    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    internal static unsafe Request PostSend<T>(T[] buffer, int offset, int count, int dest, int tag, int comm, int mode)
        where T : unmanaged
    {
        long bytes = (long)count * sizeof(T);
        int req = 0, rc;
        bool immobile = PinnedBuffers.Contains(buffer);
        if (s_registerBuffers || immobile)
        {
            // Under `fixed` until the posting call has registered the array
            // (or it never moves at all).
            fixed (T* p = buffer)
                rc = Core.ISend(p + offset, bytes, dest, tag, comm, mode, immobile ? null : ObjectAddress(ref buffer), &req);
            return Posted(rc, req, default);
        }
        GCHandle pin = count > 0 ? GCHandle.Alloc(buffer, GCHandleType.Pinned) : default;
        rc = Core.ISend(count > 0 ? (T*)pin.AddrOfPinnedObject() + offset : null, bytes, dest, tag, comm, mode, null, &req);
        return Posted(rc, req, pin);
    }

    internal static unsafe Request PostRecv<T>(T[] buffer, int offset, int count, int source, int tag, int comm)
        where T : unmanaged
    {
        long bytes = (long)count * sizeof(T);
        int req = 0, rc;
        bool immobile = PinnedBuffers.Contains(buffer);
        if (s_registerBuffers || immobile)
        {
            fixed (T* p = buffer)
                rc = Core.IRecv(p + offset, bytes, source, tag, comm, immobile ? null : ObjectAddress(ref buffer), &req);
            return Posted(rc, req, default);
        }
        GCHandle pin = count > 0 ? GCHandle.Alloc(buffer, GCHandleType.Pinned) : default;
        rc = Core.IRecv(count > 0 ? (T*)pin.AddrOfPinnedObject() + offset : null, bytes, source, tag, comm, null, &req);
        return Posted(rc, req, pin);
    }

    /// <summary>The array object's address; stable only while the array is fixed.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static unsafe void* ObjectAddress<T>(ref T[] array) => (void*)Unsafe.As<T[], nint>(ref array);

    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    private static Request Posted(int rc, int req, GCHandle pin)
    {
        if (rc < 0)
        {
            Exception e = ThrowHelper.CoreException(rc);
            if (pin.IsAllocated)
                pin.Free();
            throw e;
        }
        if (Volatile.Read(ref s_orphanCount) != 0)
            SweepOrphans();
        return new Request(req, pin);
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
        if (_handle != CoreConst.ReqNull && Core.ReqTest(_handle, &st) != 0)
            ReleasePins();
        else
            Abandon();
        GC.SuppressFinalize(this);
    }

    /// <summary>Releases a request that was dropped without completion.</summary>
    ~Request() => Abandon();

    private void Abandon()
    {
        int h = _handle;
        if (h == CoreConst.ReqNull)
            return;
        _handle = CoreConst.ReqNull;
        // The core owns completion: it frees the slot once it sees the
        // operation done (in a later wait, a sweep, or at a GC mark under
        // motor).  This touches no MPI state, so the finalizer thread may call it.
        Core.ReqOrphan(h);
        if (_pin.IsAllocated || _pin2.IsAllocated)
        {
            s_orphans.Enqueue((h, _pin, _pin2));
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
            if (o.Pin.IsAllocated)
                o.Pin.Free();
            if (o.Pin2.IsAllocated)
                o.Pin2.Free();
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
    private void ReleasePins()
    {
        _handle = CoreConst.ReqNull;
        if (_pin.IsAllocated)
            _pin.Free();
        if (_pin2.IsAllocated)
            _pin2.Free();
    }

    private int ActiveHandle()
    {
        if (_disposed)
            throw new ObjectDisposedException(nameof(Request));
        return _handle;
    }

    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    private Status Finish(int rc, Status st)
    {
        Exception? error = rc < 0 ? ThrowHelper.CoreException(rc) : null;
        _status = st;
        ReleasePins();
        GC.SuppressFinalize(this);
        if (Volatile.Read(ref s_orphanCount) != 0)
            SweepOrphans();
        if (error is not null)
            throw error;
        return st;
    }

    /// <summary>Waits for every request (MPI_Waitall).</summary>
    /// <param name="requests">The requests; completed ones contribute their stored status.</param>
    /// <returns>The statuses, in the order of <paramref name="requests"/>.</returns>
    /// <exception cref="MessageTruncatedException">A receive was truncated (after all requests completed).</exception>
    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    public static unsafe Status[] WaitAll(params Request[] requests)
    {
        int[] handles = Handles(requests);
        var statuses = new Status[requests.Length];
        int rc = 0;
        fixed (int* h = handles)
        fixed (Status* s = statuses)
        {
            // Each test scans the whole set: spend about SpinPolls slot tests in
            // all before waiting in one MPI_Waitall.
            for (int i = Math.Max(1, Core.SpinPolls / Math.Max(1, handles.Length)); i > 0 && rc == 0; i--)
                rc = Core.ReqTestAll(handles.Length, h, s);
            if (rc == 0)
                rc = Core.ReqWaitAll(handles.Length, h, s);
        }
        return FinishAll(requests, handles, statuses, rc);
    }

    /// <summary>Tests whether every request completed (MPI_Testall); completes them all when so.</summary>
    /// <param name="requests">The requests.</param>
    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    public static unsafe bool TestAll(Request[] requests)
    {
        int[] handles = Handles(requests);
        var statuses = new Status[requests.Length];
        int rc;
        fixed (int* h = handles)
        fixed (Status* s = statuses)
            rc = Core.ReqTestAll(handles.Length, h, s);
        if (rc == 0)
            return false;
        FinishAll(requests, handles, statuses, rc);
        return true;
    }

    /// <summary>Waits until one of the requests completes (MPI_Waitany).</summary>
    /// <param name="requests">The requests; already completed ones are skipped.</param>
    /// <param name="status">The status of the one that completed.</param>
    /// <returns>Its index, or <see cref="Mpi.Undefined"/> when none was still pending.</returns>
    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    public static unsafe int WaitAny(Request[] requests, out Status status)
    {
        int[] handles = Handles(requests);
        Status st = default;
        for (int round = Core.SpinPolls; round > 0; round--)
        {
            for (int i = 0; i < handles.Length; i++)
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
            rc = Core.ReqWaitAny(handles.Length, h, &st);
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

    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    private static int[] Handles(Request[] requests)
    {
        ArgumentNullException.ThrowIfNull(requests);
        var handles = new int[requests.Length];
        for (int i = 0; i < requests.Length; i++)
        {
            Request r = requests[i] ?? throw new ArgumentNullException(nameof(requests), $"requests[{i}] is null.");
            handles[i] = r.ActiveHandle();
        }
        return handles;
    }

    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    private static Status[] FinishAll(Request[] requests, int[] handles, Status[] statuses, int rc)
    {
        Exception? error = rc < 0 ? ThrowHelper.CoreException(rc) : null;
        for (int i = 0; i < requests.Length; i++)
        {
            if (handles[i] == CoreConst.ReqNull)
                statuses[i] = requests[i]._status;
            else
                requests[i].Finish(0, statuses[i]);
        }
        if (error is not null)
            throw error;
        return statuses;
    }
}
