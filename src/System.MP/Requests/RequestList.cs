using System.MP.Interop;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Threading;

namespace System.MP;

/// <summary>
/// A reusable list of nonblocking sends and receives completed together: the
/// allocation-free way to post windows of operations, as a C program fills an
/// array of <c>MPI_Request</c> and calls <c>MPI_Waitall</c> on it.
/// </summary>
/// <remarks>
/// <para>
/// Post into the list with the <c>ISend</c>, <c>ISsend</c> and <c>IRecv</c> overloads of
/// <see cref="Communicator"/> that take a <see cref="RequestList"/>; each returns the
/// operation's index in the list, which is its place in the statuses of
/// <see cref="WaitAll(Span{Status})"/>.  <see cref="WaitAll()"/> and a successful
/// <see cref="TestAll()"/> complete every operation and empty the list, ready for
/// the next window.  Posting allocates nothing: no <see cref="Request"/> object,
/// no status array (under plain dotnet an ordinary array still takes one pinned
/// GCHandle per window, shared by the operations on it, as with <see cref="Request"/>).
/// </para>
/// <para>
/// Buffers are held exactly as for <see cref="Request"/>: until its operation
/// completes an array must not be touched, and it does not move.  A list disposed,
/// or dropped, with operations in flight gives them up as
/// <see cref="Request.Dispose"/> does: they still complete, and their buffers are
/// released when they do.  A list is not thread-safe: post into it and complete it
/// from one thread at a time.
/// </para>
/// <para>
/// A list's operations count against the MPI library's pool of pending requests together
/// with every <see cref="Request"/>.  MPICH's pool holds 2^18 and aborts the process past
/// it, so under MPICH the process's pending requests and list entries stay within
/// 2^18 - 2^14: a post past that throws <see cref="InsufficientMemoryException"/> and
/// posts nothing, and the list stays usable.  A list reserves entries as it fills and
/// keeps them until it is disposed, so dispose lists that are no longer used.
/// </para>
/// </remarks>
public sealed unsafe class RequestList : IDisposable
{
    /// <summary>The largest capacity a list can have.</summary>
    public const int MaxCapacity = CoreLimit.ListMaxCapacity;

    private ListHandle _list; // the core's request list; default (NULL) once disposed
    private int _room; // entries the core counted against the request pool (mp_list_reserve, at most the capacity), 0 once disposed: one check per post for all three
    private BufferHold?[]? _pins; // each entry's pin (library mode, movable arrays): allocated with the list's first pin
    private int _count; // the core list's count, mirrored: posts and completions keep them equal
    private readonly int _capacity;
    private readonly bool _registerBuffers = BufferPolicy.RegistersBuffers; // read here once: no class-initialization check per post

    /// <summary>Buffers of operations a list could not hand over when it was dropped (the core had no room left
    /// for them): held for the rest of the process, since MPI may still write into them.</summary>
    private static readonly Collections.Concurrent.ConcurrentBag<BufferHold> s_stuck = [];

    /// <summary>Creates an empty list.</summary>
    /// <param name="capacity">How many operations it holds between two completions (1 to <see cref="MaxCapacity"/>).</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="capacity"/> is below 1 or above <see cref="MaxCapacity"/>.</exception>
    public RequestList(int capacity)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(capacity, 1);
        ArgumentOutOfRangeException.ThrowIfGreaterThan(capacity, MaxCapacity);
        CoreLoader.EnsureLoaded();
        ListHandle list;
        int rc = Core.ListCreate(capacity, &list);
        ThrowHelper.Check(rc);
        _list = list;
        _capacity = capacity; // _room 0: the first post asks the core for its entries
    }

    /// <summary>How many operations the list holds between two completions.</summary>
    public int Capacity => _capacity;

    /// <summary>Operations posted since the list was last completed (or created).</summary>
    public int Count => _count;

    /// <summary>
    /// Waits for every operation in the list (MPI_Waitall) and empties it.
    /// </summary>
    /// <exception cref="MessageTruncatedException">A receive got a message longer than its buffer (an <see cref="MpiException"/>: as below).</exception>
    /// <exception cref="ObjectDisposedException">The list was disposed.</exception>
    /// <exception cref="MpiException">MPI failed an operation.  The operations MPI completed are released (their entries become null: complete, with an empty status); any it left pending (MPI_ERR_PENDING, MPI-4.0 §3.7.5) stay in the list at their indices, for another WaitAll to complete or <see cref="Dispose"/> to give up.  The list is empty when none is left.  A list of sends only is completed without MPI's statuses (as <c>MPI_STATUSES_IGNORE</c>), so when one send fails MPI does not say which: the exception is MPI_ERR_IN_STATUS for the list.</exception>
    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    public void WaitAll() => WaitAllCore(null);

    /// <summary>Waits for every operation in the list (MPI_Waitall), writes their statuses and empties it.</summary>
    /// <param name="statuses">Receives the statuses in posting order (entry i for the operation posted at index i); at least <see cref="Count"/> long.</param>
    /// <exception cref="ArgumentException"><paramref name="statuses"/> is shorter than <see cref="Count"/> (nothing is waited for).</exception>
    /// <exception cref="MessageTruncatedException">A receive got a message longer than its buffer (an <see cref="MpiException"/>: see <see cref="WaitAll()"/>).</exception>
    /// <exception cref="ObjectDisposedException">The list was disposed.</exception>
    /// <exception cref="MpiException">MPI failed an operation; see <see cref="WaitAll()"/>.</exception>
    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    public void WaitAll(Span<Status> statuses)
    {
        if (statuses.Length < _count)
            ThrowHelper.ThrowStatusesTooShort(statuses.Length, _count);
        fixed (Status* s = statuses)
            WaitAllCore(s);
    }

    /// <summary>
    /// Tests whether every operation in the list completed (MPI_Testall); when so,
    /// completes them all and empties the list.  An empty list tests true.
    /// </summary>
    /// <exception cref="MessageTruncatedException">A receive got a message longer than its buffer (an <see cref="MpiException"/>: see <see cref="WaitAll()"/>).</exception>
    /// <exception cref="ObjectDisposedException">The list was disposed.</exception>
    /// <exception cref="MpiException">MPI failed an operation; see <see cref="WaitAll()"/>.</exception>
    public bool TestAll() => TestAllCore(null);

    /// <summary>
    /// Tests whether every operation in the list completed (MPI_Testall); when so,
    /// writes their statuses, completes them all and empties the list.
    /// </summary>
    /// <param name="statuses">Receives the statuses in posting order when the result is true; at least <see cref="Count"/> long.</param>
    /// <exception cref="ArgumentException"><paramref name="statuses"/> is shorter than <see cref="Count"/> (nothing is tested).</exception>
    /// <exception cref="MessageTruncatedException">A receive got a message longer than its buffer (an <see cref="MpiException"/>: see <see cref="WaitAll()"/>).</exception>
    /// <exception cref="ObjectDisposedException">The list was disposed.</exception>
    /// <exception cref="MpiException">MPI failed an operation; see <see cref="WaitAll()"/>.</exception>
    public bool TestAll(Span<Status> statuses)
    {
        if (statuses.Length < _count)
            ThrowHelper.ThrowStatusesTooShort(statuses.Length, _count);
        fixed (Status* s = statuses)
            return TestAllCore(s);
    }

    /// <summary>
    /// Gives up the operations still in flight, as <see cref="Request.Dispose"/> does (they
    /// complete, and their buffers are released when they do), and makes the list unusable.
    /// </summary>
    public void Dispose()
    {
        if (_list == default)
            return;
        Abandon();
        GC.SuppressFinalize(this);
    }

    /// <summary>Dropped with operations in flight: they are given up, their buffers held until the core sees them complete.</summary>
    ~RequestList() => Abandon();

    /// <summary>
    /// Frees the core's list: the operations still in flight become ordinary requests, which
    /// are given up as <see cref="Request.Dispose"/> gives one up (their pins kept until the core
    /// has seen them complete).  Calls no MPI: the finalizer thread may run it.
    /// </summary>
    private void Abandon()
    {
        ListHandle list = _list;
        if (list == default)
            return;
        AbandonEntries(list, _count, _pins);
        if (_pins is not null)
            Array.Clear(_pins, 0, _count);
        _list = default;
        _room = 0;
        _count = 0;
    }

    /// <summary>
    /// Frees the core's list <paramref name="list"/> of <paramref name="n"/> entries (a
    /// <see cref="RequestList"/>'s, or a <see cref="RequestBlock"/>'s): those still in flight are
    /// given up as <see cref="Request.Dispose"/> gives one up, each with its pin from
    /// <paramref name="pins"/>.  Calls no MPI: the finalizer thread may run it.
    /// </summary>
    internal static void AbandonEntries(ListHandle list, int n, BufferHold?[]? pins)
    {
        int rc;
        RequestHandle[] pending = n > 0 ? new RequestHandle[n] : [];
        fixed (RequestHandle* p = pending)
            rc = Core.ListFree(list, n > 0 ? p : null);
        for (int i = 0; i < n; i++)
        {
            BufferHold? pin = pins?[i];
            if (pending[i] != RequestHandle.Null)
                Request.Abandon(pending[i], pin, null);
            else if (rc < 0 && Core.ListPending(list, i) == 1)
            {
                if (pin is not null)
                    HoldForever(pin); // the request table was full: the core's list keeps the operation
            }
            else
                pin?.Release(); // complete (ProcNull, or completed by a WaitAll that failed on another entry)
        }
    }

    /// <summary>Holds the buffer of an operation the core's list kept when it could not hand it over: for the rest of the process, since MPI may still write into it.</summary>
    internal static void HoldForever(BufferHold pin) => s_stuck.Add(pin);

    // ---- posting (Communicator.PointToPoint.cs checks the arguments first: the core's entries trust them) ----

    /// <summary>Posts a send the caller has checked (slice, communicator, rank, tag) into the next entry.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal int PostSend<T>(T[] buffer, int offset, int count, int dest, int tag, CommHandle comm, int mode) where T : unmanaged
    {
        int i = NextEntry(), rc;
        if (Registers)
        {
            fixed (T* p = &MemoryMarshal.GetArrayDataReference(buffer)) // as Request.PostSend
                rc = Isend(p + offset, (long)count * sizeof(T), dest, tag, comm, mode, count > 0 ? BufferPolicy.ObjectOf(ref buffer) : null);
            return Added(i, rc, null);
        }
        bool register = HoldByPolicy(buffer, count, out BufferHold? pin);
        fixed (T* p = &MemoryMarshal.GetArrayDataReference(buffer))
            rc = Isend(p + offset, (long)count * sizeof(T), dest, tag, comm, mode, register ? BufferPolicy.ObjectOf(ref buffer) : null);
        return Added(i, rc, pin);
    }

    /// <summary>Posts a receive the caller has checked into the next entry.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal int PostRecv<T>(T[] buffer, int offset, int count, int source, int tag, CommHandle comm) where T : unmanaged
    {
        if (tag == Mpi.AnyTag && ReservedPieces.StreamCount != 0)
            ReservedPieces.AwaitStreams(source, comm);
        int i = NextEntry(), rc;
        if (Registers)
        {
            fixed (T* p = &MemoryMarshal.GetArrayDataReference(buffer))
                rc = Irecv(p + offset, (long)count * sizeof(T), source, tag, comm, count > 0 ? BufferPolicy.ObjectOf(ref buffer) : null);
            return Added(i, rc, null);
        }
        bool register = HoldByPolicy(buffer, count, out BufferHold? pin);
        fixed (T* p = &MemoryMarshal.GetArrayDataReference(buffer))
            rc = Irecv(p + offset, (long)count * sizeof(T), source, tag, comm, register ? BufferPolicy.ObjectOf(ref buffer) : null);
        return Added(i, rc, pin);
    }

    /// <summary>The core's list_isend into this list, through the profile's timed call when it is on (as Request.PostSend).</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private int Isend(void* buf, long bytes, int dest, int tag, CommHandle comm, int mode, void* obj) =>
        MpiProfile.Enabled ? ProfiledIsend(_list, buf, bytes, dest, tag, comm, mode, obj)
                           : Core.ListIsend(_list, buf, bytes, dest, tag, comm, mode, obj);

    /// <summary>The core's list_irecv into this list, as <see cref="Isend"/>.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private int Irecv(void* buf, long bytes, int source, int tag, CommHandle comm, void* obj) =>
        MpiProfile.Enabled ? ProfiledIrecv(_list, buf, bytes, source, tag, comm, obj)
                           : Core.ListIrecv(_list, buf, bytes, source, tag, comm, obj);

    /// <summary>Core.ListIsend, timed for the profile.</summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    internal static int ProfiledIsend(ListHandle list, void* buf, long bytes, int dest, int tag, CommHandle comm, int mode, void* obj)
    {
        long t0 = MpiProfile.Begin();
        int rc = Core.ListIsend(list, buf, bytes, dest, tag, comm, mode, obj);
        MpiProfile.End(mode == CoreSendMode.Sync ? ProfiledCall.ISsend : ProfiledCall.ISend, t0, bytes, dest);
        return rc;
    }

    /// <summary>Core.ListIrecv, timed for the profile.</summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    internal static int ProfiledIrecv(ListHandle list, void* buf, long bytes, int source, int tag, CommHandle comm, void* obj)
    {
        long t0 = MpiProfile.Begin();
        int rc = Core.ListIrecv(list, buf, bytes, source, tag, comm, obj);
        MpiProfile.End(ProfiledCall.IRecv, t0, bytes, source);
        return rc;
    }

    /// <summary>
    /// BufferPolicy.Hold's answer without the posting thread's state, where it needs none: under
    /// motor with the GC extension, while no pinned-heap array exists, every array with
    /// elements is registered with the core (its object in the entry), and none is held.
    /// </summary>
    private bool Registers
    {
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        get => _registerBuffers && !PinnedBuffers.AnyAllocated;
    }

    /// <summary>BufferPolicy.Hold, out of the posting loop: the loop keeps its values in registers.</summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    private static bool HoldByPolicy<T>(T[] buffer, int count, out BufferHold? pin) =>
        BufferPolicy.Hold(buffer, count, RequestPoster.Current, out pin);

    /// <summary>The index the next post takes; a full or disposed list, or one whose next entry the
    /// request pool has no room for, refuses it before anything is posted.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private int NextEntry()
    {
        int i = _count;
        if ((uint)i >= (uint)_room)
            Reserve(i);
        return i;
    }

    /// <summary>
    /// The post of entry <paramref name="i"/> passes what the core counted for the list: it counts
    /// more (under MPICH, in steps, against the pool of pending requests it shares with every
    /// request; otherwise the whole capacity at once), or the post is refused.
    /// </summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    private void Reserve(int i)
    {
        if (_list == default || i >= _capacity)
            ThrowFull();
        int rc = Core.ListReserve(_list, i);
        ThrowHelper.Check(rc);
        _room = rc;
    }

    /// <summary>A post's end: refused (nothing posted, <paramref name="pin"/> released), or the entry
    /// counted with its pin (a registered post has none: null, which the inlined check folds away).</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private int Added(int i, int rc, BufferHold? pin)
    {
        if (rc != 0)
            Refused(i, rc, pin);
        if (pin is not null)
            (_pins ??= new BufferHold?[_capacity])[i] = pin;
        _count = i + 1;
        return i;
    }

    /// <summary>
    /// A checked post that did not happen: the core refused it (rc &lt; 0, nothing posted), or MPI
    /// did (rc &gt; 0, MPI's own code, which the core's tail call into MPI returned as it was: the
    /// entry is still counted, and list_refused gives it back and records the error).  Throws.
    /// </summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    private void Refused(int i, int rc, BufferHold? pin) => Refused(_list, i, rc, pin);

    /// <summary>A post into entry <paramref name="i"/> of <paramref name="list"/> that did not happen (see the instance form); throws.</summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    internal static void Refused(ListHandle list, int i, int rc, BufferHold? pin)
    {
        if (rc > 0)
            rc = Core.ListRefused(list, i, rc);
        Request.ThrowPostFailed(rc, pin);
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private void ThrowFull()
    {
        if (_list == default)
            throw new ObjectDisposedException(nameof(RequestList));
        throw new InvalidOperationException(SR.Format(SR.RequestListFull, _capacity));
    }

    // ---- completion ----

    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    private void WaitAllCore(Status* statuses)
    {
        int n = _count, rc;
        if (n == 0)
        {
            if (_list == default)
                throw new ObjectDisposedException(nameof(RequestList));
            return;
        }
        var all = new Completion.ListRequests(_list, n, statuses);
        long t0 = MpiProfile.Begin();
        rc = Completion.PollThenBlock(ref all, RequestSet.SetPolls(n));
        MpiProfile.End(ProfiledCall.WaitAll, t0);
        Finish(n, rc);
    }

    private bool TestAllCore(Status* statuses)
    {
        int n = _count, rc;
        if (_list == default)
            throw new ObjectDisposedException(nameof(RequestList));
        if (n == 0)
            return true;
        rc = Core.ListTestall(_list, statuses);
        if (rc == 0)
            return false;
        Finish(n, rc);
        return true;
    }

    /// <summary>The list's n operations were completed (rc &gt;= 0), or MPI failed the set (FinishFailed).</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private void Finish(int n, int rc)
    {
        if (rc < 0)
            FinishFailed(n, rc);
        if (_pins is not null)
        {
            for (int i = 0; i < n; i++)
                BufferHold.Release(ref _pins[i]);
        }
        _count = 0;
        if (Request.OrphanedHolds != 0)
            Request.SweepOrphans();
    }

    /// <summary>
    /// MPI failed the set (MPI-4.0 3.7.5): the operations it completed, with or without an
    /// error, are released (complete, with an empty status in a later call); those it left
    /// pending (MPI_ERR_PENDING) stay in the list at their indices, so that a second WaitAll
    /// completes them.  The core's list says which; it is empty when none is left.
    /// </summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    private void FinishFailed(int n, int rc)
    {
        Exception error = ThrowHelper.CoreException(rc);
        int left = Core.ListCount(_list);
        if (_pins is not null)
        {
            for (int i = 0; i < n; i++)
            {
                if (left == 0 || Core.ListPending(_list, i) == 0)
                    BufferHold.Release(ref _pins[i]);
            }
        }
        _count = left;
        if (Request.OrphanedHolds != 0)
            Request.SweepOrphans();
        throw error;
    }
}
