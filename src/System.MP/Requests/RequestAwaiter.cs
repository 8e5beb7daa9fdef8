using System.MP.Interop;
using System.Runtime.CompilerServices;
using System.Runtime.ExceptionServices;
using System.Threading.Tasks;

namespace System.MP;

/// <summary>
/// What <c>await request</c> and <c>await request.ConfigureAwait(…)</c> of a <see cref="Request"/>
/// give: an awaitable that first tests the operation on the awaiting thread
/// (<see cref="AsyncProgress.CallerPolls"/> times) and hands it to the progress engine only when
/// it has not completed by then.  An operation that completes on the awaiting thread (a reply
/// already on its way) allocates nothing; one handed to the engine is awaited as
/// <see cref="Request.WaitAsync"/>'s task is.
/// </summary>
public readonly struct RequestAwaitable
{
    private readonly Request _request;
    private readonly bool _onCapturedContext;

    internal RequestAwaitable(Request request, bool continueOnCapturedContext)
    {
        _request = request;
        _onCapturedContext = continueOnCapturedContext;
    }

    /// <summary>The awaiter (called by <c>await</c>).</summary>
    /// <returns>The awaiter; the await's result is the operation's <see cref="Status"/>.</returns>
    /// <exception cref="InvalidOperationException">MPI's thread level is below <see cref="ThreadLevel.Multiple"/>, or MPI is not initialized or was shut down.</exception>
    public RequestAwaiter GetAwaiter() => new(_request, _onCapturedContext);
}

/// <summary>
/// The awaiter of a <see cref="Request"/> (see <see cref="RequestAwaitable"/>); used by <c>await</c>,
/// not called directly.  <see cref="IsCompleted"/> does the work: it tests the operation on the
/// awaiting thread, and when it has not completed, hands it to the progress engine (after which
/// the engine owns the request, as after <see cref="Request.WaitAsync"/>).
/// </summary>
public struct RequestAwaiter : ICriticalNotifyCompletion
{
    private readonly Request _request;
    private readonly bool _onCapturedContext;
    private Status _status;
    private object? _outcome; // null until IsCompleted; then CompletedHere (_status), the engine's Task<Status>, or the operation's exception

    /// <summary><see cref="_outcome"/> of an operation completed on the awaiting thread: its status is <see cref="_status"/>.</summary>
    private static readonly object CompletedHere = new();

    internal RequestAwaiter(Request request, bool continueOnCapturedContext)
    {
        ProgressEngine.RequireMultiple(); // as WaitAsync: the first await below Multiple says how to ask for it
        _request = request.Slotted();
        _onCapturedContext = continueOnCapturedContext;
    }

    /// <summary>
    /// True once the operation has completed on the awaiting thread (or through the engine).  The
    /// first call tests it up to <see cref="AsyncProgress.CallerPolls"/> times, then hands it to
    /// the engine.
    /// </summary>
    /// <exception cref="ObjectDisposedException">The request was already completed or disposed.</exception>
    public bool IsCompleted
    {
        get
        {
            if (_outcome is null)
            {
                if (_request.Boxed() is { } owner) // converted to MpiRequest (WaitAsync, a set): awaited through it
                    _outcome = owner.AwaitAfter(AsyncProgress.CallerPolls);
                else if (TestOnCaller(AsyncProgress.CallerPolls))
                    _outcome ??= CompletedHere;
                else
                    _outcome = ((MpiRequest)_request).AwaitAfter(0);
            }
            return _outcome is not Task<Status> t || t.IsCompleted;
        }
    }

    /// <summary>Up to <paramref name="polls"/> tests; true when the operation completed (status or error kept for <see cref="GetResult"/>).</summary>
    private bool TestOnCaller(int polls)
    {
        for (int i = polls; i > 0; i--)
        {
            try
            {
                if (_request.Test(out _status))
                    return true;
            }
            catch (Exception e) when (e is MpiException or TransportException)
            {
                _outcome = e;
                return true;
            }
        }
        return false;
    }

    /// <summary>The operation's status (called by <c>await</c> once it has completed; before <see cref="IsCompleted"/>, waits as <see cref="Request.Wait"/>).</summary>
    /// <returns>The operation's status.</returns>
    /// <exception cref="ObjectDisposedException">The request was already completed or disposed.</exception>
    /// <exception cref="MessageTruncatedException">A receive got a message longer than its buffer.</exception>
    /// <exception cref="MpiException">MPI failed the operation.</exception>
    /// <exception cref="OperationCanceledException">The operation was cancelled through the engine.</exception>
    public Status GetResult()
    {
        switch (_outcome)
        {
            case null:
                return _request.Wait();
            case Task<Status> t:
                return t.ConfigureAwait(false).GetAwaiter().GetResult();
            case Exception e:
                ExceptionDispatchInfo.Throw(e);
                return default;
            default:
                return _status;
        }
    }

    /// <summary>Schedules <paramref name="continuation"/> for when the engine has completed the operation.</summary>
    /// <param name="continuation">The continuation.</param>
    public void OnCompleted(Action continuation) => Engine().OnCompleted(continuation);

    /// <summary>Schedules <paramref name="continuation"/> for when the engine has completed the operation, without flowing the execution context.</summary>
    /// <param name="continuation">The continuation.</param>
    public void UnsafeOnCompleted(Action continuation) => Engine().UnsafeOnCompleted(continuation);

    private ConfiguredTaskAwaitable<Status>.ConfiguredTaskAwaiter Engine()
    {
        if (_outcome is not Task<Status> t)
            throw new InvalidOperationException(SR.AwaiterNotPending);
        return t.ConfigureAwait(_onCapturedContext).GetAwaiter();
    }
}
