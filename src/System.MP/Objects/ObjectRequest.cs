using System.Diagnostics;
using System.Diagnostics.CodeAnalysis;
using System.MP.Interop;
using System.MP.Transport;
using System.Runtime.CompilerServices;
using System.Threading;
using System.Threading.Tasks;

namespace System.MP;

/// <summary>
/// A nonblocking object operation (<see cref="Communicator.OISend"/>, or
/// <see cref="Communicator.OIRecv{T}"/> as <see cref="ObjectRequest{T}"/>).
/// Complete it with <see cref="Wait"/> or <see cref="Test"/>.
/// </summary>
/// <remarks>
/// A send serializes its graph when posted, into native memory that MPI
/// reads until completion (nothing is pinned); the objects may change at
/// once.  A receive cannot be posted before its size is known: it matches its
/// message by matched probe (MPI_Improbe/MPI_Mprobe) when tested or waited
/// for, so a blocking receive with the same source and tag issued meanwhile
/// may take the message first.  Not thread-safe: complete it from one thread.
/// </remarks>
public abstract class ObjectRequest : MpiRequest
{
    private Status _status;
    private Exception? _error;
    private bool _completed;
    private bool _disposed;

    private protected ObjectRequest()
    {
    }

    /// <summary>True once the operation has completed (tests it when not yet known).</summary>
    public override bool IsCompleted => Test(out _);

    /// <summary>Waits for the operation to complete.</summary>
    /// <returns>For a receive: sender, tag and payload size; for a send: empty.</returns>
    /// <exception cref="TransportException">A received payload was malformed, named a type that may not travel, or was given up by its sender part way.</exception>
    public override Status Wait()
    {
        if (!_completed)
            Complete(block: true);
        return Outcome();
    }

    /// <summary>Tests whether the operation completed, without waiting for it.</summary>
    /// <param name="status">The status when the result is true.</param>
    /// <exception cref="TransportException">A received payload was malformed, named a type that may not travel, or was given up by its sender part way.</exception>
    public override bool Test(out Status status)
    {
        if (!_completed && !Complete(block: false))
        {
            status = default;
            return false;
        }
        status = Outcome();
        return true;
    }

    /// <summary>Gives up the request: a send still completes (its buffer is freed then); a receive that has not matched a message never will.</summary>
    public override void Dispose()
    {
        if (_disposed)
            return;
        _disposed = true;
        if (!_completed)
            Abandon();
    }

    /// <summary>
    /// Cancels a receive that has not matched its message: it completes at once with
    /// <see cref="Status.Cancelled"/> set and no result, and the message stays for a later
    /// receive.  A send is not cancelled (MPI-4.1 deprecates cancelling sends; a payload
    /// cancelled part way would leave its receiver waiting for the rest): it completes as usual.
    /// </summary>
    /// <exception cref="ObjectDisposedException">The request was disposed before it completed.</exception>
    public override void Cancel()
    {
        ObjectDisposedException.ThrowIf(_disposed && !_completed, this);
        if (_completed || !CancelPending())
            return;
        _status = Status.CancelledReceive;
        _completed = true;
    }

    /// <summary>Cancels the operation if it has not started to move data: true when it did.</summary>
    private protected abstract bool CancelPending();

    internal override RequestHandle SetEntry()
    {
        ObjectDisposedException.ThrowIf(_disposed && !_completed, this);
        return _completed ? RequestHandle.Null : ObjectPending;
    }

    internal override Status IdleStatus() => Outcome();

    // An object request has no core handle: a set completes it through Test.
    internal override void CompletedInSet(int rc, RequestHandle handle, in Status status) => throw new UnreachableException();

    internal override Status FinishAlone(int rc, in Status status) => throw new UnreachableException();

    // A receive completes cancelled at once; a send is not cancelled (see Cancel).
    internal override bool CancelAwaited()
    {
        Cancel();
        return _completed;
    }

    private Status Outcome()
    {
        ObjectDisposedException.ThrowIf(_disposed && !_completed, this);
        if (_error is not null)
            throw _error;
        return _status;
    }

    private bool Complete(bool block)
    {
        ObjectDisposedException.ThrowIf(_disposed, this);
        try
        {
            if (!Progress(block, out _status))
                return false;
        }
        catch (TransportException e)
        {
            _error = e;
        }
        _completed = true;
        return true;
    }

    /// <summary>Advances the operation; true once it has completed.</summary>
    private protected abstract bool Progress(bool block, out Status status);

    /// <summary>Releases what an incomplete operation holds (called at most once).</summary>
    private protected abstract void Abandon();

    internal static ObjectRequest PostSend(ObjectTransport.Encoded payload, int dest, int tag, CommHandle comm) =>
        new SendRequest(payload, dest, tag, comm);

    /// <summary>
    /// A posted send: one <see cref="Request"/> per message of the payload
    /// (<see cref="PayloadChannel.Post"/>), which keep its buffer until the last completes.  Dropped
    /// before completion, its requests are orphaned like any other (no finalizer
    /// here): the core completes them and the payload is freed then.
    /// </summary>
    private sealed unsafe class SendRequest : ObjectRequest
    {
        private readonly Request _first;
        private readonly Request[]? _more; // the rest of a chunked payload
        private int _next; // chunks before this one have completed

        internal SendRequest(ObjectTransport.Encoded payload, int dest, int tag, CommHandle comm) =>
            _first = PayloadChannel.Post(payload, dest, tag, comm, out _more);

        private int Chunks => 1 + (_more?.Length ?? 0);

        private Request Chunk(int i) => i == 0 ? _first : _more![i - 1];

        private protected override bool Progress(bool block, out Status status)
        {
            status = default;
            for (int n = Chunks; _next < n; _next++)
            {
                Request r = Chunk(_next);
                if (block)
                    r.Wait();
                else if (!r.Test(out _))
                    return false;
            }
            return true;
        }

        private protected override void Abandon()
        {
            for (int i = _next, n = Chunks; i < n; i++)
                Chunk(i).Dispose();
        }

        private protected override bool CancelPending() => false;
    }
}

/// <summary>
/// A nonblocking receive of an object graph whose root is a <typeparamref name="T"/>
/// (<see cref="Communicator.OIRecv{T}"/>).  <see cref="Result"/> is the object.
/// </summary>
/// <typeparam name="T">The type the received root must have.</typeparam>
public sealed class ObjectRequest<T> : ObjectRequest
{
    private readonly Communicator _comm;
    private readonly int _source;
    private readonly int _tag;
    private readonly CommHandle _handle;
    private T? _result;

    internal ObjectRequest(Communicator comm, int source, int tag, CommHandle handle)

    {
        _comm = comm;
        _source = source;
        _tag = tag;
        _handle = handle;
    }

    /// <summary>The received object; waits for it when the request has not completed.</summary>
    /// <exception cref="TransportException">The payload was malformed, named a type that may not travel, was given up by its sender part way, or its root is not a <typeparamref name="T"/>.</exception>
    public T? Result
    {
        get
        {
            Wait();
            return _result;
        }
    }

    /// <summary>
    /// Waits for the object asynchronously, through the progress engine (see
    /// <see cref="MpiRequest.WaitAsync"/>, which says what cancelling does and which thread
    /// level it needs).
    /// </summary>
    /// <param name="cancellationToken">Cancels the receive if it has not matched its message (then <see cref="OperationCanceledException"/>).</param>
    /// <returns>The received object.</returns>
    /// <exception cref="InvalidOperationException">The thread level is below <see cref="ThreadLevel.Multiple"/>.</exception>
    public async Task<T?> ResultAsync(CancellationToken cancellationToken = default)
    {
        await WaitAsync(cancellationToken).ConfigureAwait(false);
        return _result;
    }

    /// <summary>Makes <c>await request</c> give the received object (<see cref="ResultAsync"/>), resuming where the engine completed it (see <see cref="AsyncProgress.InlineContinuations"/>).</summary>
    /// <returns>The awaiter; the await's result is the object.</returns>
    public new ConfiguredTaskAwaitable<T?>.ConfiguredTaskAwaiter GetAwaiter() => ResultAsync().ConfigureAwait(false).GetAwaiter();

    private protected override bool Progress(bool block, out Status status)
    {
        status = default;
        _ = _comm.Handle; // throws once the communicator is disposed
        object? obj;
        if (block)
            obj = PayloadChannel.Receive(_source, _tag, _handle, out status);
        else if (PayloadChannel.TryMatch(_source, _tag, _handle, out Status first, out MessageHandle msg))
            obj = PayloadChannel.ReceiveMatched(first, msg, _handle, out status);
        else
            return false;
        _result = Communicator.Expect<T>(obj);
        return true;
    }

    private protected override void Abandon()
    {
    }

    // Nothing is posted before the message is matched, and a matched one is received at once.
    private protected override bool CancelPending() => true;
}
