using System.Collections.Generic;
using System.MP.Interop;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;

namespace System.MP;

/// <summary>
/// A persistent request (MPI-4.0 §3.9; collectives §6.12): an operation whose
/// arguments are bound once (<see cref="Communicator.SendInit{T}(T[], int, int)"/>,
/// <see cref="Communicator.RecvInit{T}(T[], int, int)"/>, <see cref="Communicator.BcastInit{T}(T[], int)"/>, …)
/// and that is then run many times: <see cref="Start"/> begins an instance,
/// <see cref="Wait"/> or <see cref="Test"/> (or the static set operations) completes
/// it, and the request is ready to start again.  Dispose it when done.
/// </summary>
/// <remarks>
/// Buffer lifetime: the array is pinned (registered with motor's GC extension,
/// or held by a pinned GCHandle under plain dotnet) only while an instance is
/// active; between instances the GC may move it, and the next <see cref="Start"/>
/// makes the MPI request again on its new address (counted in
/// <see cref="MpiStatistics.PersistentRecreated"/>).  A persistent collective
/// cannot be made again by one rank alone (its initialization is collective), so
/// on an ordinary array it runs on a staging copy the request owns: the data is
/// copied in at <see cref="Start"/> and out at completion.  A large array the GC keeps
/// on its large object heap (85,000 bytes or more) is pinned instead, from the collective's
/// making until <see cref="Dispose"/>, and used in place.  Arrays from
/// <see cref="Mpi.AllocatePinned{T}"/> never move: they are used in place, with no
/// pin and no copy.  A request dropped without <see cref="Dispose"/> is freed
/// once its last instance completes.  Not thread-safe: use it from one thread.
/// </remarks>
public unsafe class PersistentRequest : MpiRequest
{
    /// <summary>Requests started by one MPI_Startall (their arrays are fixed by as many nested frames).</summary>
    private const int StartChunk = 32;

    /// <summary>One buffer of a collective: the array, the bytes MPI uses, and its staging copy or pin.</summary>
    private protected struct Side
    {
        internal Array? Array;
        internal long Bytes;
        internal bool In, Out; // copied to the staging buffer at Start, from it at completion
        internal byte* Stage;  // owned by the core; null when the array is used in place
        internal BufferHold? Pinned; // a large array used in place: pinned until the request is freed
    }

    private RequestHandle _handle;
    private readonly Array? _buffer;     // point-to-point: the array (kept alive by the request)
    private readonly long _byteOffset; // long: an offset into an array above 2 GiB
    private readonly BufferHoldKind _hold; // how each start holds the array (BufferPolicy)
    private (CommHandle Comm, int Source)? _anyTagFrom; // a receive with any tag: each start waits for pieces arriving (ReservedPieces.AwaitStreams)
    private protected Side _send, _recv; // collectives and staged partitioned requests
    private bool _active;
    private BufferHold? _pin;
    private Status _status;

    private protected PersistentRequest(RequestHandle handle, Array? buffer, long byteOffset, long bytes)
    {
        _handle = handle;
        _buffer = buffer;
        _byteOffset = byteOffset;
        _hold = BufferPolicy.For(buffer, bytes);
    }

    /// <summary>True from <see cref="Start"/> until the instance is completed (Wait, Test, the sets).</summary>
    public bool IsActive => _active;

    /// <summary>The status of the last completed instance (empty before the first).</summary>
    internal Status LastStatus => _status;

    /// <summary>True while this request holds a pinned GCHandle on its array (library mode, while active).</summary>
    internal bool HoldsPin => _pin is not null;

    // ---- making ----

    internal static PersistentRequest InitPointToPoint<T>(T[] buffer, int offset, int count, int peer, int tag, CommHandle comm, int mode, bool receive)
        where T : unmanaged
    {
        RequestHandle req = RequestHandle.Null;
        int rc;
        long bytes = (long)count * sizeof(T);
        fixed (T* p = buffer)
            rc = receive ? Core.RecvInit(p + offset, bytes, peer, tag, comm, &req)
                         : Core.SendInit(p + offset, bytes, peer, tag, comm, mode, &req);
        ThrowHelper.Check(rc);
        return new PersistentRequest(req, buffer, (long)offset * sizeof(T), bytes)
        {
            _anyTagFrom = receive && tag == Mpi.AnyTag ? (comm, peer) : null,
        };
    }

    /// <summary>
    /// Makes a persistent collective: <paramref name="send"/> is read by MPI;
    /// <paramref name="recv"/> is written (<paramref name="recvOut"/>) and, for a
    /// broadcast's root, read (<paramref name="recvIn"/>).  Arrays that may move are staged.
    /// </summary>
    internal static PersistentRequest InitCollective<T>(CommHandle comm, CollDesc d, T[]? send, long sendCount,
                                                        T[]? recv, long recvCount, bool recvIn, bool recvOut,
                                                        bool neighbor = false)
        where T : unmanaged
    {
        Side s = NewSide(send, sendCount * sizeof(T), (send?.LongLength ?? 0) * sizeof(T), true, false);
        Side r = NewSide(recv, recvCount * sizeof(T), (recv?.LongLength ?? 0) * sizeof(T), recvIn, recvOut);
        long* stageBytes = stackalloc long[2] { s.In ? s.Bytes : 0, r.In || r.Out ? r.Bytes : 0 };
        void** stages = stackalloc void*[2] { null, null };
        RequestHandle req = RequestHandle.Null;
        int rc;
        fixed (T* sp = send)
        fixed (T* rp = recv)
        {
            d.SendBuf = stageBytes[0] > 0 ? null : sp; // in place: a pinned-heap array, or nothing to move
            d.RecvBuf = stageBytes[1] > 0 ? null : rp;
            rc = neighbor ? Core.NeighborInit(comm, &d, stageBytes, stages, &req)
                          : Core.CollInit(comm, &d, stageBytes, stages, &req);
        }
        if (rc < 0)
        {
            BufferHold.Release(ref s.Pinned);
            BufferHold.Release(ref r.Pinned);
            ThrowHelper.ThrowCore(rc);
        }
        s.Stage = (byte*)stages[0];
        r.Stage = (byte*)stages[1];
        return new PersistentRequest(req, null, 0, 0) { _send = s, _recv = r };
    }

    /// <summary>How one array of a collective is held: in place (never moves, or pinned for life), or staged.</summary>
    private static Side NewSide(Array? array, long bytes, long arrayBytes, bool copyIn, bool copyOut)
    {
        if (!BufferPolicy.Moves(array, bytes))
            return new Side { Array = array, Bytes = bytes };
        if (BufferPolicy.MayPinForLife(array!, arrayBytes))
            return new Side { Array = array, Bytes = bytes, Pinned = BufferPolicy.PinForLife(array!) };
        return new Side { Array = array, Bytes = bytes, In = copyIn, Out = copyOut };
    }

    // ---- starting ----

    /// <summary>Starts an instance of the operation (MPI_Start).</summary>
    /// <exception cref="ObjectDisposedException">The request was disposed.</exception>
    /// <exception cref="InvalidOperationException">An instance is active: complete it first.</exception>
    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    public void Start()
    {
        RequestHandle h = StartableHandle();
        int rc;
        AwaitPieces();
        if (_buffer is null)
        {
            CopyIn();
            rc = Core.ReqStart(h, null, null);
        }
        else
        {
            if (_hold == BufferHoldKind.Pin)
                _pin = BufferPolicy.Pin(_buffer);
            Array a = _buffer;
            // Under `fixed` until the core has the slot ACTIVE with the array
            // registered (motor) or until the pin above holds it (dotnet).
            fixed (byte* p = &MemoryMarshal.GetArrayDataReference(a))
                rc = Core.ReqStart(h, p + _byteOffset, _hold == BufferHoldKind.Register ? BufferPolicy.ObjectOf(ref a) : null);
        }
        if (rc < 0)
            StartFailed(rc);
        _active = true;
    }

    /// <summary>Starts every request (MPI_Startall): all are checked before any starts.</summary>
    /// <param name="requests">Inactive persistent requests, each at most once.</param>
    /// <exception cref="ArgumentException">A request is in the set twice.</exception>
    /// <exception cref="InvalidOperationException">A request is active.</exception>
    public static void StartAll(params PersistentRequest[] requests)
    {
        ArgumentNullException.ThrowIfNull(requests);
        StartAll(new ReadOnlySpan<PersistentRequest>(requests));
    }

    /// <summary>Starts every request (MPI_Startall) without allocating: all are checked before any starts.</summary>
    /// <param name="requests">Inactive persistent requests, each at most once.</param>
    /// <exception cref="ArgumentException">A request is in the set twice.</exception>
    /// <exception cref="InvalidOperationException">A request is active.</exception>
    [MethodImpl(MethodImplOptions.AggressiveOptimization), SkipLocalsInit]
    public static void StartAll(ReadOnlySpan<PersistentRequest> requests)
    {
        int n = requests.Length;
        RequestHandle[]? heap = n > RequestSet.StackRequests ? new RequestHandle[n] : null;
        Span<RequestHandle> handles = heap ?? stackalloc RequestHandle[RequestSet.StackRequests];
        handles = handles[..n];
        for (int i = 0; i < n; i++)
        {
            if (requests[i] is null)
                ThrowHelper.ThrowNullRequest(i);
            handles[i] = requests[i].StartableHandle();
        }
        RequestSet.CheckDistinct(handles);
        RequestHandle* h = stackalloc RequestHandle[StartChunk];
        void** bufs = stackalloc void*[StartChunk];
        void** objs = stackalloc void*[StartChunk];
        for (int first = 0; first < n; first += StartChunk)
        {
            ReadOnlySpan<PersistentRequest> chunk = requests.Slice(first, Math.Min(StartChunk, n - first));
            foreach (PersistentRequest r in chunk)
            {
                r.CopyIn();
                if (r._hold == BufferHoldKind.Pin)
                    r._pin = BufferPolicy.Pin(r._buffer!);
            }
            foreach (PersistentRequest r in chunk)
                r.AwaitPieces();
            int started = 0;
            int rc = StartFixed(chunk, 0, h, bufs, objs, &started);
            foreach (PersistentRequest r in chunk)
                if (started != 0)
                    r._active = true;
                else
                    BufferHold.Release(ref r._pin);
            ThrowHelper.Check(rc);
        }
    }

    /// <summary>A receive with any tag waits while pieces of an object payload it could match arrive on another thread.</summary>
    private void AwaitPieces()
    {
        if (_anyTagFrom is (CommHandle comm, int source) && ReservedPieces.StreamCount != 0)
            ReservedPieces.AwaitStreams(source, comm);
    }

    /// <summary>Fixes the array of request <paramref name="i"/> of the chunk, and the rest in nested frames, then starts them all.</summary>
    private static int StartFixed(ReadOnlySpan<PersistentRequest> chunk, int i, RequestHandle* handles, void** bufs, void** objs, int* started)
    {
        if (i == chunk.Length)
            return Core.ReqStartall(chunk.Length, handles, bufs, objs, started);
        PersistentRequest r = chunk[i];
        handles[i] = r._handle;
        if (r._buffer is not Array a)
        {
            bufs[i] = objs[i] = null;
            return StartFixed(chunk, i + 1, handles, bufs, objs, started);
        }
        fixed (byte* p = &MemoryMarshal.GetArrayDataReference(a))
        {
            bufs[i] = p + r._byteOffset;
            objs[i] = r._hold == BufferHoldKind.Register ? BufferPolicy.ObjectOf(ref a) : null;
            return StartFixed(chunk, i + 1, handles, bufs, objs, started);
        }
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private void StartFailed(int rc)
    {
        BufferHold.Release(ref _pin);
        ThrowHelper.ThrowCore(rc);
    }

    private RequestHandle StartableHandle()
    {
        RequestHandle h = LiveHandle();
        if (_active)
            ThrowHelper.ThrowRequestActive();
        return h;
    }

    // ---- completing ----

    /// <summary>
    /// Waits for the active instance to complete (MPI_Wait).  On a request that is
    /// not active it returns at once with an empty status (MPI-4.0 §3.7.3).
    /// </summary>
    /// <returns>The instance's status (for a receive: source, tag, size).</returns>
    /// <exception cref="MessageTruncatedException">A receive got a message longer than its buffer (the request stays usable).</exception>
    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    public override Status Wait()
    {
        RequestHandle h = LiveHandle();
        if (!_active)
            return EmptyStatus;
        Status st = default;
        int rc = Completion.PollThenBlock(new Completion.OneRequest(h, &st));
        return Finish(rc, st);
    }

    /// <summary>Tests whether the active instance completed, without waiting (MPI_Test); true at once when none is active.</summary>
    /// <param name="status">The instance's status when the result is true (empty when none was active).</param>
    /// <exception cref="MessageTruncatedException">A receive got a message longer than its buffer.</exception>
    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    public override bool Test(out Status status)
    {
        RequestHandle h = LiveHandle();
        if (!_active)
        {
            status = EmptyStatus;
            return true;
        }
        return TestCore(h, out status);
    }


    /// <summary>Asks MPI to cancel the active instance (MPI_Cancel); complete it afterwards.  Nothing happens when none is active.</summary>
    public override void Cancel()
    {
        RequestHandle h = LiveHandle();
        if (!_active)
            return;
        int rc = Core.ReqCancel(h);
        ThrowHelper.Check(rc);
    }

    /// <summary>True when no instance is active, or the active one has completed (it is then completed: see <see cref="Test"/>).</summary>
    public override bool IsCompleted => Test(out _);

    /// <summary>Waits for every active instance (MPI_Waitall); requests that are not active contribute an empty status.</summary>
    /// <param name="requests">The requests, each at most once.</param>
    /// <returns>The statuses, in the order of <paramref name="requests"/>.</returns>
    /// <exception cref="MessageTruncatedException">A receive was truncated (after all completed).</exception>
    public static Status[] WaitAll(params PersistentRequest[] requests) => MpiRequest.WaitAll((MpiRequest[])requests);

    /// <summary>Waits for every active instance (MPI_Waitall) without allocating: the form for exchange loops.</summary>
    /// <param name="requests">The requests, each at most once.</param>
    /// <exception cref="MessageTruncatedException">A receive was truncated (after all completed).</exception>
    public static void WaitAll(ReadOnlySpan<PersistentRequest> requests) => MpiRequest.WaitAll(requests);

    /// <summary>Waits for every active instance (MPI_Waitall) and writes the statuses, without allocating.</summary>
    /// <param name="requests">The requests, each at most once.</param>
    /// <param name="statuses">Receives the statuses in the order of <paramref name="requests"/>; at least as long.</param>
    /// <exception cref="MessageTruncatedException">A receive was truncated (after all completed).</exception>
    public static void WaitAll(ReadOnlySpan<PersistentRequest> requests, Span<Status> statuses) =>
        MpiRequest.WaitAll(requests, statuses);

    /// <summary>Tests whether every active instance completed (MPI_Testall); completes them all when so.</summary>
    /// <param name="requests">The requests, each at most once.</param>
    public static bool TestAll(ReadOnlySpan<PersistentRequest> requests) => MpiRequest.TestAll(requests);

    /// <summary>Waits until one active instance completes (MPI_Waitany).</summary>
    /// <param name="requests">The requests, each at most once; those not active are skipped.</param>
    /// <param name="status">The status of the one that completed.</param>
    /// <returns>Its index, or <see cref="Mpi.Undefined"/> when none was active.</returns>
    public static int WaitAny(PersistentRequest[] requests, out Status status) => MpiRequest.WaitAny(requests, out status);

    internal override RequestHandle SetEntry()
    {
        RequestHandle h = LiveHandle();
        return _active ? h : RequestHandle.Null;
    }

    internal override Status IdleStatus() => EmptyStatus;

    // The set was checked first, so an error is an operation's own.  An instance the failed set
    // left pending (MPI_ERR_PENDING: MPICH's MPI_Waitall stops at the first failed operation) is
    // still active in MPI and the core: it stays active here, for a later Wait or Test.
    internal override void CompletedInSet(int rc, RequestHandle handle, in Status status)
    {
        if (status.ErrorCode != CoreError.Pending)
            Completed(status);
    }

    internal sealed override Status FinishAlone(int rc, in Status status) => Finish(rc, status);

    internal override bool CancelAwaited()
    {
        if (!_active || Core.ReqIsRecv(LiveHandle()) != 1)
            return false;
        Cancel();
        return true;
    }

    private Status Finish(int rc, Status st)
    {
        Exception? error = rc < 0 ? ThrowHelper.CoreException(rc) : null;
        Completed(st);
        if (Request.OrphanedHolds != 0)
            Request.SweepOrphans();
        if (error is not null)
            throw error;
        return st;
    }

    /// <summary>The instance is over: the array may move again; a collective's result is copied out.</summary>
    private void Completed(in Status st)
    {
        _active = false;
        _status = st;
        BufferHold.Release(ref _pin);
        if (st.ErrorCode == 0)
            CopyOut();
    }

    private void CopyIn()
    {
        if (_send.In)
            Copy(ref _send, toStage: true);
        if (_recv.In)
            Copy(ref _recv, toStage: true);
    }

    private void CopyOut()
    {
        if (_recv.Out)
            Copy(ref _recv, toStage: false);
    }

    private static void Copy(ref Side side, bool toStage)
    {
        fixed (byte* p = &MemoryMarshal.GetArrayDataReference(side.Array!))
        {
            if (toStage)
                Buffer.MemoryCopy(p, side.Stage, side.Bytes, side.Bytes);
            else
                Buffer.MemoryCopy(side.Stage, p, side.Bytes, side.Bytes);
        }
    }

    // ---- freeing ----

    /// <summary>
    /// Frees the request (MPI_Request_free).  An active instance still
    /// completes; its buffer is let go when it does.
    /// </summary>
    public override void Dispose()
    {
        RequestHandle h = _handle;
        if (h == RequestHandle.Null)
            return;
        _handle = RequestHandle.Null;
        GC.SuppressFinalize(this);
        if (_active)
        {
            Status st;
            if (Core.ReqTest(h, &st) == 0)
            {
                Abandon(h);
                return;
            }
            _active = false;
            BufferHold.Release(ref _pin);
        }
        int rc = Core.ReqFree(h);
        ThrowHelper.Check(rc);
        BufferHold.Release(ref _send.Pinned);
        BufferHold.Release(ref _recv.Pinned);
    }

    /// <summary>Hands the request to the core, which frees it once no instance is active (calls no MPI: any thread).</summary>
    private void Abandon(RequestHandle h)
    {
        Core.ReqOrphan(h);
        // A collective holds no per-instance pin, only its arrays' pins for life.
        BufferHold? first = _pin ?? _send.Pinned, second = _pin is null ? _recv.Pinned : null;
        _pin = _send.Pinned = _recv.Pinned = null;
        if (first is not null || second is not null)
            Request.AbandonPins(h, first, second);
    }

    /// <summary>Dropped without <see cref="Dispose"/>: the core frees it at its next sweep.</summary>
    ~PersistentRequest()
    {
        if (_handle != RequestHandle.Null)
            Abandon(_handle);
    }

    private protected RequestHandle LiveHandle()
    {
        RequestHandle h = _handle;
        if (h == RequestHandle.Null)
            ThrowHelper.ThrowRequestDisposed();
        return h;
    }
}
