using System.Diagnostics;
using System.MP.Interop;
using System.Runtime.CompilerServices;
using System.Threading;
using System.Threading.Tasks;

namespace System.MP;

/// <summary>
/// A nonblocking operation in flight (an MPI request).  Complete it once, with
/// <see cref="Wait"/>, a <see cref="Test"/> that returns true, a set (WaitAll, WaitAny,
/// TestAll, WaitSome, TestSome), an await, or give it up with <see cref="Dispose"/>; until
/// then the operation's array must not be touched.
/// </summary>
/// <remarks>
/// <para>
/// A Request is a small handle (a value type) on pooled state: posting allocates nothing in
/// steady state.  Each handle records the use of the state it was made for, and every
/// call checks it, so a copy of a request that has already completed (or been disposed)
/// throws <see cref="ObjectDisposedException"/> and never touches the newer operation that
/// reuses the state.  <see cref="IsCompleted"/> does not complete the request: after it
/// says true, Wait or Test returns the status.  The default value is the null request
/// (MPI_REQUEST_NULL): complete, with the empty status.  The sets that take an array of
/// requests write the null request over those they complete, as MPI does.
/// </para>
/// <para>
/// Buffer lifetime: under motor with its GC extension the array is recorded in the core's
/// in-flight table by the same call that posts the operation, and the GC treats it as pinned
/// only while the operation is in flight.  Under plain dotnet the array is held by a pinned
/// GCHandle until completion (one handle shared by all operations in flight on the same
/// array).  A request dropped without completion is noticed by the finalizer of its state and
/// released once the operation completes; the array is never moved while MPI may touch it.
/// A Request is not thread-safe: complete it from one thread.
/// </para>
/// <para>
/// Sets: below <see cref="ThreadLevel.Multiple"/>, once a thread completes its requests in sets
/// (WaitAll or TestAll of eight or more), its sends and receives to a rank with a tag are posted
/// as entries of a block of 64 (one array of MPI requests in the core), and WaitAll or TestAll of
/// requests in the order they were posted is one MPI_Waitall or MPI_Testall over that part of the
/// array.  Every other use (Wait, Test, a set in another order, an await, a conversion to
/// <see cref="MpiRequest"/>) behaves exactly as described here: the block's requests first move
/// to states of their own, and the thread posts that way until it has completed twice as many
/// sets again.  A dropped request on a block is noticed once its block is no longer posted into
/// and no other request names it.
/// </para>
/// </remarks>
public readonly unsafe partial struct Request : IDisposable, IEquatable<Request>
{
    private readonly object? _state; // the request's RequestSlot, or the RequestBlock whose entry it is
    private readonly long _version; // the slot's Version, or the block's epoch and the entry's index (RequestBlock.VersionOf)

    private Request(RequestSlot slot)
    {
        _state = slot;
        _version = slot.Version;
    }

    private Request(object state, long version)
    {
        _state = state;
        _version = version;
    }

    /// <summary>The request on <paramref name="slot"/> for its use <paramref name="version"/>.</summary>
    internal static Request OnSlot(RequestSlot slot, int version) => new(slot, version);

    /// <summary>The request on entry <paramref name="index"/> of <paramref name="block"/>'s epoch.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static Request OnBlock(RequestBlock block, int index) => new(block, block.VersionOf(index));

    /// <summary>A request every use refuses as completed already (a block's entry of an older epoch, or done).</summary>
    internal static Request Stale => new(RequestSlot.Retired, -1);

    /// <summary>The slot of a request in its slot form (see <see cref="Slotted"/>); null for the null request.</summary>
    private RequestSlot? _slot
    {
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        get => _state as RequestSlot;
    }

    /// <summary>True when the request is an entry of a <see cref="RequestBlock"/> (not yet in its slot form).</summary>
    internal bool OnBlockEntry => _state is RequestBlock;

    /// <summary>
    /// The request in its slot form: an entry of a block is moved to a slot first (its block
    /// dissolved, <see cref="RequestBlock.Slotted"/>); any other request is itself.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal Request Slotted() => _state is RequestBlock b ? b.Slotted(_version) : this;

    /// <summary>The status of a null request (MPI-4.0 §3.7.3).</summary>
    internal static Status EmptyStatus => new(Mpi.AnySource, Mpi.AnyTag, 0);

    /// <summary>True while this request holds a pinned GCHandle on a buffer (library mode, movable arrays).</summary>
    internal bool HoldsPin => _state is RequestBlock b ? b.HoldsPin(_version)
                              : _slot is { } s && s.Version == _version && (s.Pin is not null || s.Pin2 is not null);

    /// <summary>
    /// True once the operation has completed: the null request, one already completed or
    /// disposed, or one that MPI reports done (tested when not yet known).  Completes nothing:
    /// <see cref="Wait"/> or <see cref="Test"/> still returns the status (or the error).
    /// </summary>
    public bool IsCompleted
    {
        get
        {
            object? state = _state;
            if (state is RequestBlock)
                return Slotted().IsCompleted;
            RequestSlot? s = NotOnBlock(state);
            if (s is null || s.Version != _version || s.Done)
                return true;
            Status st;
            int rc = Core.ReqTest(s.Handle, &st);
            if (rc == 0)
            {
                GC.KeepAlive(s);
                return false;
            }
            s.Status = st;
            s.Result = rc < 0 ? rc : 0;
            s.Done = true;
            ReleaseHolds(s, st);
            return true;
        }
    }

    /// <summary>Waits for the operation to complete (MPI_Wait).</summary>
    /// <returns>The operation's status (for a receive: source, tag, size); the empty status for the null request.</returns>
    /// <exception cref="MessageTruncatedException">A receive got a message longer than its buffer.</exception>
    /// <exception cref="ObjectDisposedException">The request was already completed or disposed.</exception>
    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    public Status Wait()
    {
        object? state = _state;
        if (state is RequestBlock)
            return Slotted().Wait();
        RequestSlot? s = Live(NotOnBlock(state));
        if (s is null)
            return EmptyStatus;
        if (s.Done)
            return Finish(s, s.Result, s.Status);
        Status st = default;
        long t0 = MpiProfile.Begin();
        int rc = Completion.PollThenBlock(new Completion.OneRequest(s.Handle, &st));
        MpiProfile.End(ProfiledCall.Wait, t0);
        return Finish(s, rc, st);
    }

    /// <summary>Tests whether the operation completed, without waiting (MPI_Test); true completes the request.</summary>
    /// <param name="status">The status when the result is true.</param>
    /// <returns>True once the operation has completed (the request is then consumed).</returns>
    /// <remarks>
    /// A test never waits.  When MPI's test fails and MPI keeps the operation, it is cancelled;
    /// while MPI still holds it (an operation under way that it can no longer cancel) the result
    /// is false and the array stays held, and the test after MPI has let go throws the failure.
    /// </remarks>
    /// <exception cref="MessageTruncatedException">A receive got a message longer than its buffer.</exception>
    /// <exception cref="MpiException">MPI failed the operation or its test (named MPI_Test).</exception>
    /// <exception cref="ObjectDisposedException">The request was already completed or disposed.</exception>
    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    public bool Test(out Status status)
    {
        object? state = _state;
        if (state is RequestBlock)
            return Slotted().Test(out status);
        RequestSlot? s = Live(NotOnBlock(state));
        if (s is null)
        {
            status = EmptyStatus;
            return true;
        }
        if (s.Done)
        {
            status = Finish(s, s.Result, s.Status);
            return true;
        }
        Status st;
        long t0 = MpiProfile.Begin();
        int rc = Core.ReqTest(s.Handle, &st);
        MpiProfile.End(ProfiledCall.Test, t0);
        if (rc == 0)
        {
            GC.KeepAlive(s);
            status = default;
            return false;
        }
        status = Finish(s, rc, st);
        return true;
    }

    /// <summary>
    /// Asks MPI to cancel the operation (MPI_Cancel); complete the request
    /// afterwards and check <see cref="Status.Cancelled"/>.  A receive that has
    /// not matched a message can always be cancelled.
    /// </summary>
    /// <exception cref="ObjectDisposedException">The request was already completed or disposed.</exception>
    public void Cancel()
    {
        if (_state is RequestBlock)
        {
            Slotted().Cancel();
            return;
        }
        RequestSlot? s = Live();
        if (s is null || s.Done)
            return;
        int rc = Core.ReqCancel(s.Handle);
        GC.KeepAlive(s);
        ThrowHelper.Check(rc);
    }

    /// <summary>
    /// Gives up the request without waiting (MPI_Request_free): the operation
    /// still completes, and its buffer is released when it does.  Disposing a
    /// request already completed or disposed does nothing.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    public void Dispose()
    {
        object? state = _state;
        if (state is RequestBlock)
        {
            Slotted().Dispose();
            return;
        }
        RequestSlot? s = NotOnBlock(state);
        if (s is null || s.Version != _version)
            return;
        s.DropReader(); // a disposed request reports no status
        if (!s.Done)
        {
            // On a user thread the request can be tested now: one that is already
            // complete (a send that went out eagerly, ProcNull) is released at once.
            Status st;
            RequestHandle h = s.Handle;
            if (Core.ReqTest(h, &st) == 0)
            {
                Abandon(h, s.Pin, s.Pin2);
                s.Handle = RequestHandle.Null;
                s.Pin = null;
                s.Second = null;
            }
        }
        Release(s, RequestPoster.Current, EmptyStatus);
    }

    /// <summary>Waits for the operation asynchronously through the progress engine (see <see cref="MpiRequest.WaitAsync"/>).</summary>
    /// <param name="cancellationToken">Cancels the wait, as for <see cref="MpiRequest.WaitAsync"/>.</param>
    /// <returns>A task with the operation's status, or its exception.</returns>
    public Task<Status> WaitAsync(CancellationToken cancellationToken = default) => ((MpiRequest)this).WaitAsync(cancellationToken);

    /// <summary>
    /// Makes <c>await request</c> work: tests the operation on the awaiting thread first
    /// (<see cref="AsyncProgress.CallerPolls"/> times; allocates nothing when it completes then),
    /// else waits through the progress engine as <see cref="WaitAsync"/> does and resumes where the
    /// engine completed it (its own thread, see <see cref="AsyncProgress.InlineContinuations"/>),
    /// not on the captured context.
    /// </summary>
    /// <returns>The awaiter; the await's result is the operation's <see cref="Status"/>.</returns>
    /// <exception cref="InvalidOperationException">MPI's thread level is below <see cref="ThreadLevel.Multiple"/> (see <see cref="MpiRequest.WaitAsync"/>).</exception>
    public RequestAwaiter GetAwaiter() => new(this, continueOnCapturedContext: false);

    /// <summary>Awaits the operation as <see cref="GetAwaiter"/> does, resuming on the captured context when <paramref name="continueOnCapturedContext"/> is true and the engine completed it.</summary>
    /// <param name="continueOnCapturedContext">True: a continuation the engine completes runs on the captured context; false (what <c>await request</c> does): where the operation completed (see <see cref="AsyncProgress.InlineContinuations"/>).</param>
    /// <returns>An awaitable whose result is the operation's <see cref="Status"/>.</returns>
    public RequestAwaitable ConfigureAwait(bool continueOnCapturedContext) => new(this, continueOnCapturedContext);

    /// <summary>The request's <see cref="MpiRequest"/> form when it has been converted (which then owns it: awaits go through it), else null.</summary>
    internal MpiRequest? Boxed() => _slot is { } s && s.Box is { } box && box.Holds(this) ? box : null;

    /// <summary>
    /// The request as an <see cref="MpiRequest"/>, for sets and awaits that mix it with object and
    /// persistent requests.  The object takes over the request: complete it through the object,
    /// which keeps the status and answers repeated waits with it.  Converting the same request
    /// again gives the same object (an await pending on it returns the same task) until its
    /// state serves a newer operation.
    /// </summary>
    /// <param name="request">The request.</param>
    public static implicit operator MpiRequest(Request request)
    {
        request = request.Slotted();
        RequestSlot? s = request._slot;
        if (s is null)
            return new BoxedRequest(request);
        if (s.Box is { } box && box.Holds(request))
            return box;
        var b = new BoxedRequest(request);
        if (request.IsLive)
            s.Box = b;
        return b;
    }

    /// <summary>True when both name the same use of the same operation (or both are the null request).</summary>
    /// <param name="other">The other request.</param>
    public bool Equals(Request other) => ReferenceEquals(_state, other._state) && _version == other._version;

    /// <inheritdoc/>
    public override bool Equals(object? obj) => obj is Request r && Equals(r);

    /// <inheritdoc/>
    public override int GetHashCode() => HashCode.Combine(RuntimeHelpers.GetHashCode(_state), _version);

    /// <summary>True when both name the same use of the same operation.</summary>
    /// <param name="left">A request.</param>
    /// <param name="right">Another request.</param>
    public static bool operator ==(Request left, Request right) => left.Equals(right);

    /// <summary>True unless both name the same use of the same operation.</summary>
    /// <param name="left">A request.</param>
    /// <param name="right">Another request.</param>
    public static bool operator !=(Request left, Request right) => !left.Equals(right);

    /// <summary>The request's state, null for the null request; throws for a request already completed or disposed.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private RequestSlot? Live() => Live(_slot);

    /// <summary><see cref="Live()"/> of the request's slot <paramref name="s"/>, read already.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private RequestSlot? Live(RequestSlot? s)
    {
        if (s is not null && s.Version != _version)
            ThrowHelper.ThrowStaleRequest();
        return s;
    }

    /// <summary>
    /// The slot in <paramref name="state"/>, the request's <see cref="_state"/> read by a caller that
    /// has excluded a block: it then holds a <see cref="RequestSlot"/> or null (no second type test).
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static RequestSlot? NotOnBlock(object? state)
    {
        Debug.Assert(state is null or RequestSlot);
        return Unsafe.As<RequestSlot?>(state);
    }

    /// <summary>True for the null request (the default value).</summary>
    internal bool IsNull => _state is null;

    /// <summary>True while this request names an operation not yet completed here (not null, not stale).</summary>
    internal bool IsLive => _state is RequestBlock b ? b.IsLive(_version) : _slot is { } s && s.Version == _version;

    /// <summary>The core's handle of a set's entry: ReqNull for the null request and one completed already; throws when stale.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal RequestHandle SetEntry() => Live() is { } s ? s.Handle : RequestHandle.Null;

    /// <summary>The core completed the operation alone (rc its result): finishes it, throws its error.</summary>
    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    internal Status FinishAlone(int rc, in Status status) => Finish(_slot!, rc, status);

    /// <summary>Finishes a completed operation: the request is consumed, then its error is thrown.</summary>
    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    private static Status Finish(RequestSlot s, int rc, Status st)
    {
        Exception? error = rc < 0 ? ThrowHelper.CoreException(rc) : null;
        Release(s, RequestPoster.Current, st);
        if (Volatile.Read(ref Orphans.Count) != 0)
            SweepOrphans();
        if (error is not null)
            throw error;
        return st;
    }

    /// <summary>
    /// Attaches <paramref name="reader"/> to the operation: whichever copy of this request completes it
    /// (Wait, Test, a set, an await) hands the reader its status.  For an operation on one buffer.
    /// </summary>
    /// <exception cref="ObjectDisposedException">The request was already completed or disposed.</exception>
    internal void ReportStatusTo(IStatusReader reader)
    {
        if (_state is RequestBlock)
        {
            Slotted().ReportStatusTo(reader);
            return;
        }
        RequestSlot? s = Live();
        if (s is null)
            return;
        if (s.Second is not null)
            throw new InvalidOperationException("The request already holds a second buffer or a status reader.");
        if (s.Done)
            reader.Completed(s.Status);
        else
        {
            Interlocked.Increment(ref RequestSlot.StatusReaders);
            s.Second = reader;
        }
    }

    /// <summary>Lets go of the operation's core handle and holds (completed by the caller with <paramref name="status"/>).</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static void ReleaseHolds(RequestSlot s, in Status status)
    {
        s.Handle = RequestHandle.Null;
        if (s.Pin is not null)
        {
            s.Pin.Release();
            s.Pin = null;
        }
        if (s.Second is not null)
            ReleaseSecond(s, status);
    }

    /// <summary>The rare second hold: a second buffer's pin let go, or a status reader told.</summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    private static void ReleaseSecond(RequestSlot s, in Status status)
    {
        object second = s.Second!;
        s.Second = null;
        if (second is BufferHold pin)
            pin.Release();
        else
        {
            Interlocked.Decrement(ref RequestSlot.StatusReaders);
            ((IStatusReader)second).Completed(status);
        }
    }

    /// <summary>Consumes the request (completed with <paramref name="status"/>): its state moves to a new version and back to the pool.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static void Release(RequestSlot s, RequestPoster poster, in Status status)
    {
        s.Done = false;
        ReleaseInFlight(s, poster, status);
    }

    /// <summary>
    /// <see cref="Release"/> of a request whose slot is not <see cref="RequestSlot.Done"/>: one that still
    /// had its core handle (<see cref="IsCompleted"/> gives the handle up when it marks the slot done).
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static void ReleaseInFlight(RequestSlot s, RequestPoster poster, in Status status)
    {
        ReleaseHolds(s, status);
        s.Version++;
        poster.Return(s);
    }
}
