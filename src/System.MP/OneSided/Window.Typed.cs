using System.Buffers;
using System.Collections.Generic;
using System.MP.Interop;
using System.Runtime.CompilerServices;

namespace System.MP;

/// <summary>
/// A window of elements of <typeparamref name="T"/> on every rank (MPI-4.0 chapter 12).
/// Target positions are element indices into the target rank's window; each
/// operation is checked against that rank's window length (every rank's is known
/// from creation) and throws <see cref="ArgumentOutOfRangeException"/>, with the
/// numbers, before anything is sent: its ParamName is <c>target</c> for a rank outside
/// the window's group, <c>targetIndex</c> for a position outside the target's window.
/// </summary>
/// <remarks>
/// <para>The window's memory is memory MPI may access at any time, so the GC never
/// owns it: <see cref="Allocate"/> and <see cref="AllocateShared"/> take it from MPI,
/// <see cref="Create(Communicator, int, Info)"/> uses an array of the pinned object heap
/// that the window keeps alive, and <see cref="Create(Communicator, T[], Info)"/> over an ordinary
/// array pins it for the window's life.  <see cref="Memory"/> and <see cref="Span"/> give this
/// rank's part; once the window is disposed they throw <see cref="ObjectDisposedException"/>.
/// A <see cref="Span{T}"/> taken before <see cref="Window.Dispose"/> cannot be revoked:
/// do not keep one across it (memory from MPI is gone then).</para>
/// <para>Put, Get and the accumulates are nonblocking in MPI: the array passed stays
/// in use (held in place by the window) until the synchronization call that completes the
/// operation (Fence, Unlock, UnlockAll, the flushes, Complete).  FetchAndOp and
/// CompareAndSwap return their result, so they complete before returning and need a
/// passive-target epoch (Lock or LockAll).</para>
/// <para>A dynamic window (<see cref="CreateDynamic"/>) has no memory of its own: each rank
/// attaches arrays of the pinned object heap (<see cref="Attach"/>) and detaches them
/// (<see cref="Detach"/>), and the target position of every operation on it is the address
/// at the target that <see cref="Attach"/> returned there (plus a byte offset), not an index.</para>
/// </remarks>
public sealed unsafe class Window<T> : Window where T : unmanaged
{
    private readonly T* _base;       // MPI's memory (Allocate, AllocateShared), else null
    private readonly T[]? _array;    // the array of Create, else null
    private BufferHold? _pin;        // pins an ordinary array of Create until the window is freed
    private readonly int _length;
    private readonly bool _shared;
    private readonly Segment _local;
    private readonly List<T[]>? _attached; // a dynamic window's attached arrays, held until detached; else null
    // Create's windows start at a 16-byte boundary at or below the array's first element (MPICH 4.0
    // with UCX misplaces data at a base that is 8 bytes past one, and a .NET array's elements may
    // start there): in MPI units of _unit bytes, element i of rank r's array is at _skip[r] + i * _scale.
    private readonly int _unit, _scale = 1;
    private readonly long[]? _skip;

    private Window(WindowHandle handle, Communicator comm, T* baseAddress, T[]? array, int length, bool shared, bool dynamic = false,
                   BufferHold? pin = null, int unit = 0, long[]? skip = null)
        : base(handle, comm)
    {
        _pin = pin;
        _unit = unit == 0 ? sizeof(T) : unit;
        _scale = sizeof(T) / _unit;
        _skip = skip;
        _attached = dynamic ? [] : null;
        _base = baseAddress;
        _array = array;
        _length = length;
        _shared = shared;
        _local = new Segment(this, baseAddress, array, length);
    }

    /// <summary>
    /// A window of <paramref name="length"/> elements on this rank, in memory MPI allocates
    /// (MPI_Win_allocate).  Collective; lengths may differ between ranks.
    /// </summary>
    /// <param name="comm">The ranks that share the window (an intracommunicator).</param>
    /// <param name="length">Elements of this rank's window (0 allowed).</param>
    /// <param name="info">Hints such as <c>no_locks</c> or <c>accumulate_ordering</c>, or null.</param>
    public static Window<T> Allocate(Communicator comm, int length, Info? info = null) =>
        Allocated(comm, length, info, CoreWin.Allocate);

    /// <summary>
    /// A window in memory that every rank of <paramref name="comm"/> can load and store
    /// directly (MPI_Win_allocate_shared); <see cref="SharedMemory"/> gives another rank's
    /// part.  Collective; the ranks must share a node (<see cref="Communicator.SplitShared"/>).
    /// </summary>
    public static Window<T> AllocateShared(Communicator comm, int length, Info? info = null) =>
        Allocated(comm, length, info, CoreWin.AllocateShared);

    /// <summary>
    /// A window over a new array of <paramref name="length"/> elements on the pinned object heap,
    /// which the window keeps alive (MPI_Win_create).  Collective.
    /// </summary>
    public static Window<T> Create(Communicator comm, int length, Info? info = null)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(length);
        return Create(comm, Mpi.AllocatePinned<T>(length), info);
    }

    /// <summary>
    /// A window over <paramref name="array"/>, which the window keeps alive and in place until
    /// disposed (MPI_Win_create).  Collective.
    /// </summary>
    /// <remarks>
    /// MPI may access a window's memory at any time, so the array must not move while the window
    /// lives.  An array from <see cref="Mpi.AllocatePinned{T}"/> never moves; any other array is
    /// pinned (a pinned GCHandle, in both modes) from here until <see cref="Window.Dispose"/>.
    /// Operations on either run at the same speed; a long-lived pin in the middle of the heap keeps
    /// the GC from compacting past it, which is what the pinned object heap avoids, so arrays made
    /// for a window are best made by <see cref="Mpi.AllocatePinned{T}"/> (or use
    /// <see cref="Create(Communicator, int, Info)"/> or <see cref="Allocate"/>).
    /// </remarks>
    /// <param name="comm">The ranks that share the window (an intracommunicator).</param>
    /// <param name="array">This rank's part of the window (any length, 0 allowed).</param>
    /// <param name="info">Hints, or null.</param>
    public static Window<T> Create(Communicator comm, T[] array, Info? info = null)
    {
        ArgumentNullException.ThrowIfNull(comm);
        ArgumentNullException.ThrowIfNull(array);
        CommHandle c = comm.Handle;
        InfoHandle i = Info.HandleOf(info);
        WindowHandle win = WindowHandle.Null;
        int rc;
        BufferHold? pin = BufferPolicy.HoldForLife(array);
        // The unit divides both the element size and 8, so the 0 or 8 bytes down to the boundary
        // (the array's own length field) are whole units.
        int unit = Math.Min(sizeof(T) & -sizeof(T), 8), below;
        fixed (T* p = array)
        {
            below = (int)((nint)p % 16) % unit == 0 ? (int)((nint)p % 16) : 0;
            rc = Core.WinCreate(c, p == null ? null : (byte*)p - below, (long)array.Length * sizeof(T) + below, unit, i, &win);
        }
        if (rc < 0)
            BufferHold.Release(ref pin);
        ThrowHelper.Check(rc);
        long[] skip = comm.Allgather((long)(below / unit));
        return new Window<T>(win, comm, null, array, array.Length, shared: false, pin: pin, unit: unit, skip: skip);
    }

    /// <summary>
    /// A dynamic window (MPI_Win_create_dynamic, MPI-4.0 12.2.4): no memory at creation; each rank
    /// then attaches arrays with <see cref="Attach"/> and detaches them with <see cref="Detach"/>.
    /// Collective.
    /// </summary>
    /// <remarks>
    /// <para>The displacement unit is one byte and the <c>targetIndex</c> of every operation (Put, Get,
    /// the accumulates, FetchAndOp, CompareAndSwap, Rput, Rget) is an address at the target: the value
    /// <see cref="Attach"/> returned on that rank, which the program shares with the others (by
    /// <c>Bcast</c> or <c>Allgather</c>), plus <c>i * sizeof(T)</c> for element <c>i</c>.</para>
    /// <para>Only the target knows what it has attached, so this process checks the count, the origin
    /// slice and the epoch but not the address: an operation on memory outside the target's attached arrays
    /// is MPI's error.  What MPI reports comes back as an <see cref="MpiException"/> with MPI's error class:
    /// Open MPI 4.1 refuses such an operation at the origin (MPI_ERR_RMA_RANGE from the Put, Get or
    /// accumulate itself).  MPICH 4.0 does not check: on one node the target process writes or reads
    /// wherever the address points and may crash (a segmentation fault, nothing reported); keep the
    /// addresses right.  <see cref="Window{T}.Length"/>, <see cref="LengthOf"/>, <see cref="Memory"/> and
    /// <see cref="Span"/> describe no memory (0, empty).</para>
    /// </remarks>
    /// <param name="comm">The ranks that share the window (an intracommunicator).</param>
    /// <param name="info">Hints, or null.</param>
    public static Window<T> CreateDynamic(Communicator comm, Info? info = null)
    {
        ArgumentNullException.ThrowIfNull(comm);
        CommHandle c = comm.Handle;
        InfoHandle i = Info.HandleOf(info);
        WindowHandle win = WindowHandle.Null;
        int rc = Core.WinCreateDynamic(c, i, &win);
        ThrowHelper.Check(rc);
        return new Window<T>(win, comm, null, null, 0, shared: false, dynamic: true);
    }

    /// <summary>
    /// Attaches <paramref name="array"/> to this dynamic window (MPI_Win_attach): other ranks may access it
    /// from now on, until <see cref="Detach"/> or <see cref="Window.Dispose"/>, and the window keeps it alive
    /// meanwhile.  Local (not collective).
    /// </summary>
    /// <param name="array">An array from <see cref="Mpi.AllocatePinned{T}"/>: other ranks may write it at any
    /// time, so it must never move.</param>
    /// <returns>The array's address (MPI_Get_address of its first element): the target position other ranks
    /// pass to operations on it; element <c>i</c> is at <c>address + i * sizeof(T)</c>.</returns>
    /// <exception cref="ArgumentException">The array is not on the pinned object heap, is empty, or is attached already.</exception>
    /// <exception cref="InvalidOperationException">The window was not made by <see cref="CreateDynamic"/>.</exception>
    /// <exception cref="ObjectDisposedException">The window is disposed.</exception>
    public long Attach(T[] array)
    {
        WindowHandle h = Handle;
        ArgumentNullException.ThrowIfNull(array);
        List<T[]> attached = Attached();
        if (array.Length == 0)
            throw new ArgumentException(SR.WindowAttachEmpty, nameof(array));
        if (!PinnedBuffers.Contains(array))
            throw new ArgumentException(SR.WindowAttachNotPinned, nameof(array));
        lock (attached)
        {
            if (attached.FindIndex(a => ReferenceEquals(a, array)) >= 0)
                throw new ArgumentException(SR.WindowAttachedTwice, nameof(array));
            long address = 0;
            fixed (T* p = array)
                ThrowHelper.Check(Core.WinAttach(h, p, (long)array.Length * sizeof(T), &address));
            attached.Add(array);
            return address;
        }
    }

    /// <summary>
    /// Detaches <paramref name="array"/>, attached by <see cref="Attach"/> (MPI_Win_detach): other ranks must
    /// not access it any more, and the window lets go of it.  Local (not collective).
    /// </summary>
    /// <exception cref="ArgumentException">The array is not attached to this window.</exception>
    /// <exception cref="InvalidOperationException">The window was not made by <see cref="CreateDynamic"/>.</exception>
    /// <exception cref="ObjectDisposedException">The window is disposed (which detached everything).</exception>
    public void Detach(T[] array)
    {
        WindowHandle h = Handle;
        ArgumentNullException.ThrowIfNull(array);
        List<T[]> attached = Attached();
        lock (attached)
        {
            int at = attached.FindIndex(a => ReferenceEquals(a, array));
            if (at < 0)
                throw new ArgumentException(SR.WindowNotAttached, nameof(array));
            fixed (T* p = array)
                ThrowHelper.Check(Core.WinDetach(h, p));
            attached.RemoveAt(at);
        }
    }

    private List<T[]> Attached() => _attached ?? throw new InvalidOperationException(SR.WindowNotDynamic);

    private static Window<T> Allocated(Communicator comm, int length, Info? info, int flavor)
    {
        ArgumentNullException.ThrowIfNull(comm);
        ArgumentOutOfRangeException.ThrowIfNegative(length);
        CommHandle c = comm.Handle;
        InfoHandle i = Info.HandleOf(info);
        WindowHandle win = WindowHandle.Null;
        void* mem = null;
        int rc = Core.WinAllocate(c, (long)length * sizeof(T), sizeof(T), flavor, i, &mem, &win);
        ThrowHelper.Check(rc);
        return new Window<T>(win, comm, (T*)mem, null, length, flavor == CoreWin.AllocateShared);
    }

    /// <summary>Elements of this rank's window.</summary>
    public int Length => _length;

    /// <summary>This rank's window memory.  Throws <see cref="ObjectDisposedException"/> once the window is disposed.</summary>
    public Memory<T> Memory
    {
        get
        {
            _ = Handle;
            return _local.Memory;
        }
    }

    /// <summary>
    /// This rank's window memory as a span.  Local loads and stores race with other ranks'
    /// operations unless an epoch orders them (MPI-4.0 12.7); do not keep the span past
    /// <see cref="Window.Dispose"/>.
    /// </summary>
    public Span<T> Span => _local.GetSpan();

    /// <summary>Elements of <paramref name="rank"/>'s window (known to every rank from creation).</summary>
    public long LengthOf(int rank)
    {
        long bytes = 0;
        int unit = 0;
        WindowHandle h = Handle;

        CheckRank(rank);
        ThrowHelper.Check(Core.WinSize(h, rank, &bytes, &unit));
        return (bytes - (_skip is null ? 0 : _skip[rank] * _unit)) / sizeof(T);
    }

    /// <summary>
    /// <paramref name="rank"/>'s part of a shared-memory window, for direct loads and stores
    /// (MPI_Win_shared_query).  Throws <see cref="ObjectDisposedException"/> once the window is disposed.
    /// </summary>
    /// <exception cref="InvalidOperationException">The window was not made by <see cref="AllocateShared"/>.</exception>
    public Memory<T> SharedMemory(int rank)
    {
        WindowHandle h = Handle;
        if (!_shared)
            throw new InvalidOperationException(SR.WindowNotShared);
        CheckRank(rank);
        long bytes = 0;
        int unit = 0;
        void* mem = null;
        ThrowHelper.Check(Core.WinSharedQuery(h, rank, &bytes, &unit, &mem));
        return rank == Rank ? _local.Memory : new Segment(this, (T*)mem, null, checked((int)(bytes / sizeof(T)))).Memory;
    }

    /// <summary>Writes <paramref name="data"/> to <paramref name="target"/>'s window at element <paramref name="targetIndex"/> (MPI_Put).</summary>
    public void Put(T[] data, int target, long targetIndex) => Put(data, 0, Whole(data), target, targetIndex);

    /// <summary>Writes <paramref name="count"/> elements of <paramref name="data"/> from <paramref name="offset"/> (MPI_Put).</summary>
    public void Put(T[] data, int offset, int count, int target, long targetIndex) =>
        Transfer(data, offset, count, target, targetIndex, put: true);

    /// <summary>Reads <paramref name="buffer"/>'s length of elements from <paramref name="target"/>'s window (MPI_Get); they arrive by the completing synchronization.</summary>
    public void Get(T[] buffer, int target, long targetIndex) => Get(buffer, 0, Whole(buffer), target, targetIndex);

    /// <summary>Reads <paramref name="count"/> elements into <paramref name="buffer"/> from <paramref name="offset"/> (MPI_Get).</summary>
    public void Get(T[] buffer, int offset, int count, int target, long targetIndex) =>
        Transfer(buffer, offset, count, target, targetIndex, put: false);

    private void Transfer(T[] array, int offset, int count, int target, long targetIndex, bool put)
    {
        WindowHandle h = Handle;
        ThrowHelper.CheckSlice(array, offset, count, nameof(array));
        CheckTarget(target, targetIndex);
        BufferHoldKind hold = HoldFor(array, count, target);
        fixed (T* p = array)
        {
            void* obj = hold == BufferHoldKind.Register ? BufferPolicy.ObjectOf(ref array) : null;
            CheckOp(put ? Core.WinPut(h, p + offset, count, ElementType<T>.Code, sizeof(T), target, Disp(target, targetIndex), obj, null)
                        : Core.WinGet(h, p + offset, count, ElementType<T>.Code, sizeof(T), target, Disp(target, targetIndex), obj, null));
            if (hold == BufferHoldKind.Pin)
                Hold(array, target);
        }
    }

    /// <summary>Combines <paramref name="data"/> into <paramref name="target"/>'s window with <paramref name="op"/>, atomically per element (MPI_Accumulate).</summary>
    public void Accumulate(T[] data, Op op, int target, long targetIndex) => Accumulate(data, 0, Whole(data), op, target, targetIndex);

    /// <summary>Accumulates <paramref name="count"/> elements of <paramref name="data"/> from <paramref name="offset"/> (MPI_Accumulate).</summary>
    public void Accumulate(T[] data, int offset, int count, Op op, int target, long targetIndex)
    {
        WindowHandle h = Handle;
        OpHandle code = OpCode(op);
        ThrowHelper.CheckSlice(data, offset, count, nameof(data));
        CheckTarget(target, targetIndex);
        BufferHoldKind hold = HoldFor(data, count, target);
        fixed (T* p = data)
        {
            void* obj = hold == BufferHoldKind.Register ? BufferPolicy.ObjectOf(ref data) : null;
            CheckOp(Core.WinAccumulateHeld(h, p + offset, null, count, ElementType<T>.Code, sizeof(T), code, target, Disp(target, targetIndex), obj, null));
            if (hold == BufferHoldKind.Pin)
                Hold(data, target);
        }
    }

    /// <summary>
    /// Accumulates <paramref name="data"/> like <see cref="Accumulate(T[], Op, int, long)"/> and fetches the
    /// target's elements as they were before into <paramref name="result"/> (MPI_Get_accumulate);
    /// with <see cref="Op.NoOp"/> it is an atomic read.  The result arrives by the completing synchronization.
    /// </summary>
    /// <exception cref="ArgumentException"><paramref name="result"/> is <paramref name="data"/> (MPI forbids
    /// overlapping origin and result buffers), or shorter than it.</exception>
    public void GetAccumulate(T[] data, T[] result, Op op, int target, long targetIndex)
    {
        WindowHandle h = Handle;
        OpHandle code = OpCode(op);
        int count = Whole(data);
        ArgumentNullException.ThrowIfNull(result);
        Communicator.CheckDistinct(data, result, nameof(result), SR.GetAccumulateSameArray);
        if (result.Length < count)
            throw new ArgumentException(SR.Format(SR.WindowResultShort, result.Length, count), nameof(result));
        CheckTarget(target, targetIndex);
        BufferHoldKind holdData = HoldFor(data, count, target), holdResult = HoldFor(result, count, target);
        fixed (T* p = data)
        fixed (T* r = result)
        {
            void* dataObj = holdData == BufferHoldKind.Register ? BufferPolicy.ObjectOf(ref data) : null;
            void* resultObj = holdResult == BufferHoldKind.Register ? BufferPolicy.ObjectOf(ref result) : null;
            CheckOp(Core.WinAccumulateHeld(h, p, r, count, ElementType<T>.Code, sizeof(T), code, target, Disp(target, targetIndex), dataObj, resultObj));
            if (holdData == BufferHoldKind.Pin)
                Hold(data, target);
            if (holdResult == BufferHoldKind.Pin)
                Hold(result, target);
        }
    }

    /// <summary>
    /// Combines <paramref name="value"/> into one element of <paramref name="target"/>'s window and returns
    /// the element as it was before (MPI_Fetch_and_op), completed before returning; needs a Lock or LockAll
    /// epoch.  With <see cref="Op.NoOp"/> an atomic read, with <see cref="Op.Replace"/> an atomic swap.
    /// </summary>
    public T FetchAndOp(T value, Op op, int target, long targetIndex)
    {
        WindowHandle h = Handle;
        OpHandle code = OpCode(op);
        CheckTarget(target, targetIndex);
        T result = default;
        CheckOp(Core.WinFetch(h, &value, null, &result, ElementType<T>.Code, sizeof(T), code, target, Disp(target, targetIndex)));
        return result;
    }

    /// <summary>
    /// Replaces one element of <paramref name="target"/>'s window by <paramref name="value"/> when it equals
    /// <paramref name="compare"/>, and returns the element as it was before (MPI_Compare_and_swap), completed
    /// before returning; needs a Lock or LockAll epoch.  T must be an integer type or bool.
    /// </summary>
    /// <remarks>
    /// Open MPI 4.1 crashes (a segmentation fault inside its shared-memory transport, btl/vader; Open
    /// MPI issues 7967 and 11349) on a compare-and-swap of 8-byte elements between ranks of one node;
    /// 4-byte elements work.  MPICH has no such limit.
    /// </remarks>
    public T CompareAndSwap(T value, T compare, int target, long targetIndex)
    {
        WindowHandle h = Handle;
        if (!ElementType<T>.IsInteger && ElementType<T>.Code != CoreDType.Bool)
            throw new ArgumentException(SR.Format(SR.WindowCasType, typeof(T).Name));
        CheckTarget(target, targetIndex);
        T result = default;
        CheckOp(Core.WinFetch(h, &value, &compare, &result, ElementType<T>.Code, sizeof(T), OpHandle.None, target, Disp(target, targetIndex)));
        return result;
    }

    /// <summary>A Put whose completion is a request (MPI_Rput); needs a Lock or LockAll epoch.</summary>
    public Request Rput(T[] data, int target, long targetIndex) => Rput(data, 0, Whole(data), target, targetIndex);

    /// <summary>A Put of <paramref name="count"/> elements from <paramref name="offset"/> whose completion is a request (MPI_Rput).</summary>
    public Request Rput(T[] data, int offset, int count, int target, long targetIndex) =>
        PostRequest(data, offset, count, target, targetIndex, put: true);

    /// <summary>A Get whose completion is a request: the data is in <paramref name="buffer"/> once it completes (MPI_Rget); needs a Lock or LockAll epoch.</summary>
    public Request Rget(T[] buffer, int target, long targetIndex) => Rget(buffer, 0, Whole(buffer), target, targetIndex);

    /// <summary>A Get of <paramref name="count"/> elements into <paramref name="buffer"/> from <paramref name="offset"/> (MPI_Rget).</summary>
    public Request Rget(T[] buffer, int offset, int count, int target, long targetIndex) =>
        PostRequest(buffer, offset, count, target, targetIndex, put: false);

    private Request PostRequest(T[] buffer, int offset, int count, int target, long targetIndex, bool put)
    {
        WindowHandle h = Handle;
        RequestHandle req = RequestHandle.Null;
        int rc;
        ThrowHelper.CheckSlice(buffer, offset, count, nameof(buffer));
        CheckTarget(target, targetIndex);
        RequestPoster poster = RequestPoster.Current;
        bool register = BufferPolicy.Hold(buffer, count, poster, out BufferHold? pin);
        void* obj = register ? BufferPolicy.ObjectOf(ref buffer) : null;
        fixed (T* p = buffer)
            rc = put ? Core.WinPut(h, p + offset, count, ElementType<T>.Code, sizeof(T), target, Disp(target, targetIndex), obj, &req)
                     : Core.WinGet(h, p + offset, count, ElementType<T>.Code, sizeof(T), target, Disp(target, targetIndex), obj, &req);
        if (rc < 0)
            Request.ThrowPostFailed(rc, pin, nameof(targetIndex)); // as CheckOp
        return Request.Posted(poster, rc, req, pin);
    }

    private protected override void OnFreed()
    {
        _local.Revoke();
        BufferHold.Release(ref _pin); // MPI no longer touches the array: it may move again
        if (_attached is not null) // the core detached them before MPI_Win_free
        {
            lock (_attached)
                _attached.Clear();
        }
    }

    /// <summary>
    /// How <paramref name="count"/> elements of <paramref name="array"/> stay in place from the
    /// operation until the synchronization that completes it (none towards ProcNull): a pin
    /// (<see cref="BufferHoldKind.Pin"/>) is the window's (EpochPins), let go at that synchronization.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static BufferHoldKind HoldFor(T[] array, int count, int target) =>
        BufferPolicy.For(array, target == Mpi.ProcNull ? 0 : count);

    private static OpHandle OpCode(Op op)
    {
        ArgumentNullException.ThrowIfNull(op);
        if (op.IsUserDefined)
            throw new ArgumentException(SR.Format(SR.WindowUserOp, op), nameof(op));
        return op.HandleFor<T>(nameof(op));
    }

    private static int Whole(T[] array)
    {
        ArgumentNullException.ThrowIfNull(array);
        return array.Length;
    }

    /// <summary>
    /// Checks an operation's target before the core: a rank of the window's group or
    /// <see cref="Mpi.ProcNull"/>, and a position that can be one there (an index is not negative,
    /// a dynamic window's address is positive).  Whether the elements fit the target's window
    /// only the core knows (every rank's length): <see cref="CheckOp"/> names the index then.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private void CheckTarget(int target, long targetIndex)
    {
        if ((uint)target < (uint)Size)
        {
            if (targetIndex < (_attached is null ? 0 : 1))
                ThrowHelper.ThrowTargetIndex(targetIndex, dynamic: _attached is not null);
        }
        else if (target != Mpi.ProcNull)
        {
            ThrowHelper.ThrowRank(target, Size, "Mpi.ProcNull", nameof(target));
        }
    }

    /// <summary>The MPI displacement of element <paramref name="targetIndex"/> of <paramref name="target"/>'s window (checked already).</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private long Disp(int target, long targetIndex) =>
        _skip is null || target == Mpi.ProcNull ? targetIndex : _skip[target] + targetIndex * _scale;

    /// <summary>An operation's core result: its range error (the elements do not fit the target's window) names targetIndex.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static void CheckOp(int rc)
    {
        ThrowHelper.Check(rc, "targetIndex");
    }

    /// <summary>
    /// Window memory as <see cref="Memory{T}"/>: every span it hands out is checked against the
    /// window's life, so none can be taken once the window is freed.
    /// </summary>
    private sealed class Segment(Window owner, T* address, T[]? array, int length) : MemoryManager<T>
    {
        private volatile bool _revoked;

        internal void Revoke() => _revoked = true;

        public override Span<T> GetSpan()
        {
            if (_revoked || owner.IsDisposed)
                throw new ObjectDisposedException(owner.GetType().Name);
            return array is not null ? array.AsSpan() : new Span<T>(address, length);
        }

        public override MemoryHandle Pin(int elementIndex = 0)
        {
            Span<T> s = GetSpan();
            if ((uint)elementIndex > (uint)s.Length)
                throw new ArgumentOutOfRangeException(nameof(elementIndex));
            // Pinned-heap arrays, arrays the window pins and MPI's memory never move: nothing to pin.
            return new MemoryHandle(Unsafe.AsPointer(ref Unsafe.Add(ref System.Runtime.InteropServices.MemoryMarshal.GetReference(s), elementIndex)));
        }

        public override void Unpin()
        {
        }

        protected override void Dispose(bool disposing)
        {
        }
    }
}
