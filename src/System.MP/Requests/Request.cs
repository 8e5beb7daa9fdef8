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
public sealed unsafe partial class Request : MpiRequest
{
    // The core handle and pins live in the group (see RequestFinalizerBatch): no
    // finalizer per request.
    private readonly RequestFinalizerBatch _group;
    private readonly int _index;
    private bool _disposed;
    private Status _status;

    private Request(RequestFinalizerBatch.Poster poster, RequestHandle handle, BufferHold? pin, BufferHold? pin2) =>
        _group = RequestFinalizerBatch.Add(poster, handle, pin, pin2, out _index);

    private ref RequestHandle Handle
    {
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        get => ref _group.Handles[_index];
    }

    /// <summary>True while this request holds a pinned GCHandle on a buffer (library mode, movable arrays).</summary>
    internal bool HoldsPin => _group.PinSlots is { } p && (p[_index].Pin is not null || p[_index].Pin2 is not null);

    /// <summary>True once the operation has completed (tests it when not yet known).</summary>
    public override bool IsCompleted => Handle == RequestHandle.Null || Test(out _);

    /// <summary>Waits for the operation to complete (MPI_Wait).</summary>
    /// <returns>The operation's status (for a receive: source, tag, size).</returns>
    /// <exception cref="MessageTruncatedException">A receive got a message longer than its buffer.</exception>
    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    public override unsafe Status Wait()
    {
        RequestHandle h = ActiveHandle();
        if (h == RequestHandle.Null)
            return _status;
        Status st = default;
        int rc = Completion.PollThenBlock(new Completion.OneRequest(h, &st));
        return Finish(rc, st);
    }

    /// <summary>Tests whether the operation completed, without waiting (MPI_Test).</summary>
    /// <param name="status">The status when the result is true.</param>
    /// <returns>True once the operation has completed.</returns>
    /// <remarks>
    /// A test never waits.  When MPI's test fails and MPI keeps the operation, it is cancelled;
    /// while MPI still holds it (an operation under way that it can no longer cancel) the result
    /// is false and the array stays held, and the test after MPI has let go throws the failure.
    /// </remarks>
    /// <exception cref="MessageTruncatedException">A receive got a message longer than its buffer.</exception>
    /// <exception cref="MpiException">MPI failed the operation or its test (named MPI_Test).</exception>
    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    public override unsafe bool Test(out Status status)
    {
        RequestHandle h = ActiveHandle();
        if (h == RequestHandle.Null)
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
    public override void Cancel()
    {
        RequestHandle h = ActiveHandle();
        if (h == RequestHandle.Null)
            return;
        int rc = Core.ReqCancel(h);
        ThrowHelper.Check(rc);
    }

    /// <summary>
    /// Gives up the request without waiting (MPI_Request_free): the operation
    /// still completes, and its buffer is released when it does.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    public override void Dispose()
    {
        if (_disposed)
            return;
        _disposed = true;
        // On a user thread the request can be tested now: one that is already
        // complete (a send that went out eagerly, ProcNull) is released at once.
        Status st;
        RequestHandle h = Handle;
        if (h != RequestHandle.Null && Core.ReqTest(h, &st) != 0)
            ReleasePins();
        else
            Abandon(_group, _index);
    }

    /// <summary>Forgets the core's request (completed by the caller) and frees the pins.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private void ReleasePins()
    {
        Handle = RequestHandle.Null;
        if (_group.PinSlots is { } slots)
        {
            ref RequestFinalizerBatch.Pins op = ref slots[_index];
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
        if (_index == RequestFinalizerBatch.Capacity - 1)
            _group.LastCompleted();
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private RequestHandle ActiveHandle()
    {
        if (_disposed)
            throw new ObjectDisposedException(nameof(Request));
        return Handle;
    }

    internal override RequestHandle SetEntry() => ActiveHandle();

    internal override Status IdleStatus() => _status;

    internal override void CompletedInSet(int rc, RequestHandle handle, in Status status)
    {
        if (rc >= 0 || Core.ReqLive(handle) == 0) // a refused set (bad or repeated request) stays as it was
            Complete(status);
    }

    internal override Status FinishAlone(int rc, in Status status) => Finish(rc, status);

    internal override bool CancelAwaited()
    {
        RequestHandle h = Handle;
        if (h == RequestHandle.Null || Core.ReqIsRecv(h) != 1)
            return false;
        Cancel();
        return true;
    }

    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    private Status Finish(int rc, Status st)
    {
        Exception? error = rc < 0 ? ThrowHelper.CoreException(rc) : null;
        Complete(st);
        if (Volatile.Read(ref Orphans.Count) != 0)
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
}
