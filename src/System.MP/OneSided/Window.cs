using System.Collections.Generic;
using System.MP.Interop;
using System.Runtime.CompilerServices;

namespace System.MP;

/// <summary>The kind of lock <see cref="Window.Lock"/> takes on a rank's window (MPI-4.0 12.5.3).</summary>
public enum LockType
{
    /// <summary>No other process holds any lock on the window meanwhile (MPI_LOCK_EXCLUSIVE).</summary>
    Exclusive,
    /// <summary>Other processes may hold shared locks meanwhile (MPI_LOCK_SHARED).</summary>
    Shared,
}

/// <summary>
/// Promises about a synchronization call that let MPI skip work (MPI_MODE_*,
/// MPI-4.0 12.5.5).  A false promise makes the program erroneous.
/// </summary>
[Flags]
public enum WindowAssert
{
    /// <summary>No promise.</summary>
    None = 0,
    /// <summary>No conflicting lock or matching Post is pending (MPI_MODE_NOCHECK).</summary>
    NoCheck = CoreWinAssert.Nocheck,
    /// <summary>The local window was not updated by local stores since the last synchronization (MPI_MODE_NOSTORE).</summary>
    NoStore = CoreWinAssert.Nostore,
    /// <summary>The local window will not be updated by Put or Accumulate until the next synchronization (MPI_MODE_NOPUT).</summary>
    NoPut = CoreWinAssert.Noput,
    /// <summary>The fence completes no operations of this process (MPI_MODE_NOPRECEDE).</summary>
    NoPrecede = CoreWinAssert.Noprecede,
    /// <summary>The fence starts no epoch: no operations follow it (MPI_MODE_NOSUCCEED).</summary>
    NoSucceed = CoreWinAssert.Nosucceed,
}

/// <summary>
/// A window for one-sided communication (MPI_Win, MPI-4.0 chapter 12): memory
/// of every rank of a communicator that the others may read and write with
/// <see cref="Window{T}"/>'s Put, Get and accumulates.  This base class holds
/// what does not depend on the element type: the synchronization calls that
/// open and close epochs (<see cref="Fence"/>; <see cref="Lock"/>/<see cref="Unlock"/>,
/// <see cref="LockAll"/>/<see cref="UnlockAll"/> and the flushes; <see cref="Post"/>,
/// <see cref="Start"/>, <see cref="Complete"/>, <see cref="Wait"/>) and <see cref="Dispose"/>.
/// </summary>
/// <remarks>
/// <para>The epochs this process opened are tracked: an operation towards a rank
/// no open epoch covers, or a synchronization call that contradicts them, throws
/// <see cref="InvalidOperationException"/> before anything reaches MPI; an operation whose
/// target range is also wrong throws <see cref="ArgumentOutOfRangeException"/> for the range
/// first, in an epoch or not.  Errors MPI
/// reports (the window's error handler returns them) surface as <see cref="MpiException"/>
/// with MPI's error class.</para>
/// <para>Until the synchronization call that completes an operation, MPI may read or
/// write the array it was given, so the GC must not move it until then.  Under motor
/// the window registers the array with the GC extension, which keeps it in place
/// (no GCHandle: counted in <see cref="MpiStatistics.BuffersRegistered"/>); in library
/// mode the window pins it with a GCHandle (counted in <see cref="MpiStatistics.PinnedHandles"/>),
/// which it reuses for later operations once it let go of the array; a flush towards one rank
/// keeps the arrays it completed pinned until the next synchronization, so that a loop of
/// operations and flushes on one array pins it once.  FlushAll, FlushLocalAll, Unlock,
/// UnlockAll, Fence and Complete let go of every array they complete.
/// Operations on the same array towards the same rank share one hold.</para>
/// <para>A window's synchronization calls must not race each other; its memory stays
/// alive until <see cref="Dispose"/>, even when the window object is dropped, since
/// other ranks may still access it.</para>
/// </remarks>
public abstract unsafe class Window : IDisposable
{
    // Windows not yet freed: other ranks may write into their memory at any time,
    // so neither the window nor its array may be collected before Dispose.
    private static readonly HashSet<Window> s_live = [];

    private WindowHandle _handle;
    private readonly int _rank, _size;
    // Library mode: the arrays of operations not yet completed (BufferHoldKind.Pin).
    private readonly EpochPins _pins = new();

    private protected Window(WindowHandle handle, Communicator comm)
    {
        _handle = handle;
        _rank = comm.Rank;
        _size = comm.Size;
        lock (s_live)
            s_live.Add(this);
    }

    /// <summary>This process's rank in the window's group (that of its communicator).</summary>
    public int Rank => _rank;

    /// <summary>Number of ranks sharing the window.</summary>
    public int Size => _size;

    /// <summary>True after <see cref="Dispose"/>.</summary>
    public bool IsDisposed => _handle == WindowHandle.Null;

    /// <summary>The core handle; throws <see cref="ObjectDisposedException"/> once disposed.</summary>
    internal WindowHandle Handle
    {
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        get
        {
            WindowHandle h = _handle;
            if (h == WindowHandle.Null)
                ThrowDisposed();
            return h;
        }
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private protected void ThrowDisposed() => throw new ObjectDisposedException(GetType().Name);

    /// <summary>
    /// Ends the active-target epoch and starts the next (MPI_Win_fence).  Collective.
    /// Operations issued since the last fence are complete at every rank afterwards.
    /// </summary>
    /// <param name="assert">Promises MPI may rely on; <see cref="WindowAssert.NoSucceed"/> starts no new epoch.</param>
    public void Fence(WindowAssert assert = WindowAssert.None) => Sync(CoreWin.Fence, 0, assert, -1);

    /// <summary>Starts a passive-target epoch towards <paramref name="rank"/> (MPI_Win_lock).</summary>
    /// <exception cref="ArgumentOutOfRangeException">The rank is outside [0, <see cref="Size"/>).</exception>
    /// <exception cref="InvalidOperationException">The rank is locked already, or another epoch forbids it.</exception>
    public void Lock(int rank, LockType type = LockType.Exclusive, WindowAssert assert = WindowAssert.None) =>
        SyncTowards(type == LockType.Shared ? CoreWin.LockShared : CoreWin.LockExclusive, rank, assert, int.MinValue);

    /// <summary>Ends the passive-target epoch towards <paramref name="rank"/> (MPI_Win_unlock): its operations are complete there.</summary>
    public void Unlock(int rank) => SyncTowards(CoreWin.Unlock, rank, WindowAssert.None, rank);

    /// <summary>Starts a passive-target epoch towards every rank with shared locks (MPI_Win_lock_all).</summary>
    public void LockAll(WindowAssert assert = WindowAssert.None) => Sync(CoreWin.LockAll, 0, assert, int.MinValue);

    /// <summary>Ends the epoch of <see cref="LockAll"/> (MPI_Win_unlock_all).</summary>
    public void UnlockAll() => Sync(CoreWin.UnlockAll, 0, WindowAssert.None, -1);

    /// <summary>Completes every operation towards <paramref name="rank"/> at both ends, inside a passive-target epoch (MPI_Win_flush).</summary>
    public void Flush(int rank) => SyncTowards(CoreWin.Flush, rank, WindowAssert.None, rank, keep: true);

    /// <summary>Completes every operation of this process at both ends (MPI_Win_flush_all).</summary>
    public void FlushAll() => Sync(CoreWin.FlushAll, 0, WindowAssert.None, -1);

    /// <summary>Completes the operations towards <paramref name="rank"/> locally: their arrays may be reused (MPI_Win_flush_local).</summary>
    public void FlushLocal(int rank) => SyncTowards(CoreWin.FlushLocal, rank, WindowAssert.None, rank, keep: true);

    /// <summary>Completes every operation of this process locally (MPI_Win_flush_local_all).</summary>
    public void FlushLocalAll() => Sync(CoreWin.FlushLocalAll, 0, WindowAssert.None, -1);

    /// <summary>Exposes this rank's window to the ranks of <paramref name="group"/> until <see cref="Wait"/> (MPI_Win_post).</summary>
    public void Post(Group group, WindowAssert assert = WindowAssert.None)
    {
        ArgumentNullException.ThrowIfNull(group);
        Sync(CoreWin.Post, group.Handle.Value, assert, int.MinValue, rangeParam: nameof(group)); // win_sync's arg: a group handle for Post
    }

    /// <summary>Starts an access epoch towards the ranks of <paramref name="group"/>, which must Post (MPI_Win_start).</summary>
    public void Start(Group group, WindowAssert assert = WindowAssert.None)
    {
        ArgumentNullException.ThrowIfNull(group);
        Sync(CoreWin.Start, group.Handle.Value, assert, int.MinValue, rangeParam: nameof(group)); // and for Start

    }

    /// <summary>Ends the access epoch of <see cref="Start"/> (MPI_Win_complete).</summary>
    public void Complete() => Sync(CoreWin.Complete, 0, WindowAssert.None, -1);

    /// <summary>Ends the exposure epoch of <see cref="Post"/> once every origin completed (MPI_Win_wait).</summary>
    public void Wait() => Sync(CoreWin.Wait, 0, WindowAssert.None, int.MinValue);

    /// <summary>
    /// Frees the window (MPI_Win_free).  Collective.  Afterwards its memory is gone:
    /// <see cref="Window{T}.Memory"/> and <see cref="Window{T}.Span"/> throw.
    /// </summary>
    /// <exception cref="InvalidOperationException">This process has a Lock, LockAll, Start or Post epoch open on it.</exception>
    public void Dispose()
    {
        WindowHandle h = _handle;
        if (h == WindowHandle.Null)
            return;
        if (Mpi.IsInitialized)
        {
            int rc = Core.WinFree(h);
            if (rc == CoreError.State && Mpi.IsInitialized)
                ThrowHelper.ThrowCore(rc); // an epoch is open: the window stays usable
            _handle = WindowHandle.Null;
            _pins.Free();
            lock (s_live)
                s_live.Remove(this);
            OnFreed();
            ThrowHelper.Check(rc);
            return;
        }
        _handle = WindowHandle.Null;
        _pins.Free();
        lock (s_live)
            s_live.Remove(this);
        OnFreed();
    }

    /// <summary>What a typed window lets go of once freed.</summary>
    private protected abstract void OnFreed();

    /// <summary>A synchronization call towards one rank (Lock, Unlock, the flushes of one rank), checked first.</summary>
    private void SyncTowards(int kind, int rank, WindowAssert assert, int completes, bool keep = false)
    {
        CheckRank(rank);
        Sync(kind, rank, assert, completes, keep);
    }

    /// <summary>
    /// Refuses a rank outside the window's group, naming the parameter, before the core (whose
    /// refusal could not name it).
    /// </summary>
    private protected void CheckRank(int rank)
    {
        if ((uint)rank >= (uint)_size)
            ThrowHelper.ThrowRank(rank, _size, "a member", nameof(rank));
    }

    /// <summary>
    /// Runs a synchronization call; afterwards lets go of the arrays of the operations
    /// it completed: those towards <paramref name="completes"/> (-1: all; int.MinValue: none).
    /// </summary>
    /// <remarks>
    /// Under motor the core lets go of what it holds itself; this is library mode's part.
    /// <paramref name="keep"/>: the arrays completed stay pinned until the next synchronization.
    /// </remarks>
    private void Sync(int kind, int arg, WindowAssert assert, int completes, bool keep = false, string? rangeParam = null)
    {
        // Operations racing the call may not be complete after it: only the earlier ones are released.
        long before = _pins.Seq;
        int rc = Core.WinSync(Handle, kind, arg, (int)assert);
        if (rc < 0)
            throw ThrowHelper.CoreException(rc, rangeParam); // rangeParam: Post's and Start's group, whose ranks only the core checks
        if (completes != int.MinValue && _pins.Any)
            _pins.Release(completes, before, keep);
    }

    /// <summary>
    /// Library mode (<see cref="BufferHoldKind.Pin"/>): keeps <paramref name="array"/> in place until the
    /// synchronization that completes an operation towards <paramref name="target"/>.  Called while
    /// the array is fixed, right after MPI took its address.
    /// </summary>
    private protected void Hold(Array array, int target) => _pins.Hold(array, target);
}

