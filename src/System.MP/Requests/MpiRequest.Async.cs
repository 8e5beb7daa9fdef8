using System.Collections.Generic;
using System.MP.Interop;
using System.Runtime.CompilerServices;
using System.Threading;
using System.Threading.Tasks;

namespace System.MP;

// Awaiting: the request is handed to the process's progress engine (ProgressEngine.cs).
public abstract partial class MpiRequest
{
    private AwaitEntry? _await;

    /// <summary>
    /// Waits for the operation asynchronously: the process's progress engine completes it
    /// (see <see cref="AsyncProgress"/>).  From the call until the task completes the engine
    /// owns the request: do not Wait, Test, Cancel or Dispose it meanwhile (cancel through
    /// <paramref name="cancellationToken"/>).  The operation's buffer stays pinned (or
    /// registered with the GC under motor) until the operation completes, as for
    /// <see cref="Wait"/>.
    /// </summary>
    /// <param name="cancellationToken">
    /// Cancels the wait.  A receive (buffer, persistent or object) is cancelled in MPI
    /// (MPI_Cancel): the task ends with <see cref="OperationCanceledException"/> when the
    /// cancellation took effect, or with the receive's status when its message had already
    /// matched.  Any other operation (a send, a collective, a file or window access) is not
    /// cancelled (MPI-4.1 deprecates cancelling sends; collectives cannot be): the task ends at
    /// once with <see cref="OperationCanceledException"/>, the operation stays in flight with its
    /// buffer pinned, and the request is its owner's again, to complete (Wait, Test, await
    /// again) or dispose.
    /// </param>
    /// <returns>
    /// A task with the operation's status, or the operation's exception (for example
    /// <see cref="MessageTruncatedException"/>).  Awaiting the task resumes on the captured
    /// context like any task; <c>await request</c> resumes on the progress engine's thread when the
    /// engine completed the operation (see <see cref="AsyncProgress.InlineContinuations"/>).  An operation
    /// already completed gives a completed task.  Awaiting again while an await without token
    /// is pending returns the same task.
    /// </returns>
    /// <exception cref="InvalidOperationException">
    /// MPI's thread level is below <see cref="ThreadLevel.Multiple"/> (the engine calls MPI from
    /// its own thread; the message says how to ask for Multiple), MPI is not initialized or was
    /// shut down, or the request is already awaited with a cancellation token.
    /// </exception>
    /// <exception cref="ObjectDisposedException">The request was disposed.</exception>
    public Task<Status> WaitAsync(CancellationToken cancellationToken = default)
    {
        ProgressEngine.RequireMultiple();
        return AwaitCore(cancellationToken, AsyncProgress.CallerPolls);
    }

    /// <summary><see cref="WaitAsync(CancellationToken)"/> testing the request at most <paramref name="polls"/> times on the caller first.</summary>
    private Task<Status> AwaitCore(CancellationToken cancellationToken, int polls)
    {
        if (Volatile.Read(ref _await) is { } awaited)
        {
            if (cancellationToken.CanBeCanceled)
                throw new InvalidOperationException(SR.AlreadyAwaited);
            return awaited.Task;
        }
        if (SetEntry() == RequestHandle.Null)
            return Completed();
        if (polls > 0 && !cancellationToken.IsCancellationRequested && CallerProgress(polls) is { } done)
            return done;
        var e = new AwaitEntry(this, cancellationToken);
        if (Interlocked.CompareExchange(ref _await, e, null) is not null)
            throw new InvalidOperationException(SR.AlreadyAwaited); // two threads at once: against the rules
        ProgressEngine.Add(e);
        return e.Task;
    }

    /// <summary><see cref="WaitAsync"/> without a token, testing at most <paramref name="polls"/> times on the caller (for <see cref="RequestAwaiter"/>).</summary>
    internal Task<Status> AwaitAfter(int polls) => AwaitCore(CancellationToken.None, polls);

    /// <summary>One test on the caller for a set (not awaited already): the request's task if it has completed, else null.</summary>
    private Task<Status>? PollOnCaller() =>
        Volatile.Read(ref _await) is not null ? null
        : SetEntry() == RequestHandle.Null ? Completed()
        : CallerProgress(1);

    /// <summary>Tests the request up to <paramref name="polls"/> times on the awaiting thread; its task once it completed, else null.</summary>
    private Task<Status>? CallerProgress(int polls)
    {
        for (int i = polls; i > 0; i--)
        {
            try
            {
                if (Test(out Status status))
                    return Task.FromResult(status);
            }
            catch (Exception e) when (e is MpiException or TransportException)
            {
                return Task.FromException<Status>(e);
            }
        }
        return null;
    }

    /// <summary>The task of a request that has completed: its status or its error.</summary>
    private Task<Status> Completed()
    {
        try
        {
            return Task.FromResult(Wait()); // completed: returns at once
        }
        catch (Exception e) when (e is MpiException or TransportException)
        {
            return Task.FromException<Status>(e);
        }
    }

    /// <summary>
    /// Makes <c>await request</c> work: waits through the progress engine
    /// (<see cref="WaitAsync"/>) and resumes where the engine completed it (its own thread, see
    /// <see cref="AsyncProgress.InlineContinuations"/>), not on the captured context.
    /// </summary>
    /// <returns>The awaiter; the await's result is the operation's <see cref="Status"/>.</returns>
    public ConfiguredTaskAwaitable<Status>.ConfiguredTaskAwaiter GetAwaiter() => WaitAsync().ConfigureAwait(false).GetAwaiter();

    /// <summary>Awaits the operation, resuming on the captured context when <paramref name="continueOnCapturedContext"/> is true.</summary>
    /// <param name="continueOnCapturedContext">True: the continuation runs on the awaiting code's <see cref="SynchronizationContext"/> (or task scheduler); false (what <c>await request</c> does): where the operation completed (the engine's thread, see <see cref="AsyncProgress.InlineContinuations"/>).</param>
    /// <returns>An awaitable whose result is the operation's <see cref="Status"/>.</returns>
    public ConfiguredTaskAwaitable<Status> ConfigureAwait(bool continueOnCapturedContext) =>
        WaitAsync().ConfigureAwait(continueOnCapturedContext);

    /// <summary>
    /// Completes when every request has completed (the progress engine tests them together in one
    /// MPI_Testsome per round); any mix of buffer, object and persistent requests.
    /// </summary>
    /// <param name="requests">The requests, each at most once.</param>
    /// <returns>The statuses in the order of <paramref name="requests"/>; or the first error, after all completed.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="requests"/> or an entry is null.</exception>
    /// <exception cref="ArgumentException">A request is in the set twice.</exception>
    /// <exception cref="InvalidOperationException">The thread level is below <see cref="ThreadLevel.Multiple"/> (see <see cref="WaitAsync"/>).</exception>
    public static Task<Status[]> WhenAll(params MpiRequest[] requests) => Task.WhenAll(AwaitEach(requests));

    /// <summary>
    /// Completes when one of the requests has completed, with its index; the others stay in
    /// flight, still completed by the engine (await them, or call WhenAny again, for theirs).
    /// </summary>
    /// <param name="requests">The requests, each at most once; at least one.</param>
    /// <returns>The index in <paramref name="requests"/> of a request that completed (its outcome: await it).</returns>
    /// <exception cref="ArgumentNullException"><paramref name="requests"/> or an entry is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="requests"/> is empty, or a request is in the set twice.</exception>
    /// <exception cref="InvalidOperationException">The thread level is below <see cref="ThreadLevel.Multiple"/> (see <see cref="WaitAsync"/>).</exception>
    public static Task<int> WhenAny(params MpiRequest[] requests)
    {
        ArgumentNullException.ThrowIfNull(requests);
        if (requests.Length == 0)
            throw new ArgumentException(SR.WhenAnyEmpty, nameof(requests));
        Task<Status>[] tasks = AwaitEach(requests);
        return Task.WhenAny(tasks).ContinueWith(static (t, s) => Array.IndexOf((Task<Status>[])s!, t.Result), tasks,
                                                CancellationToken.None, TaskContinuationOptions.ExecuteSynchronously,
                                                TaskScheduler.Default);
    }

    /// <summary>Checks the whole set first (nothing is awaited when one entry is wrong), then awaits each.</summary>
    private static Task<Status>[] AwaitEach(MpiRequest[] requests)
    {
        ArgumentNullException.ThrowIfNull(requests);
        ProgressEngine.RequireMultiple();
        var seen = new Dictionary<MpiRequest, int>(requests.Length, ReferenceEqualityComparer.Instance);
        for (int i = 0; i < requests.Length; i++)
        {
            if (requests[i] is null)
                ThrowHelper.ThrowNullRequest(i);
            if (!seen.TryAdd(requests[i], i))
                ThrowHelper.ThrowRepeatedRequest(seen[requests[i]], i);
            _ = requests[i].SetEntry(); // a disposed request throws here, before any other entry is polled or awaited
        }
        // Progress on the caller over the whole set: CallerPolls tests in all, one per
        // unfinished request a round; what is left goes to the engine.
        var tasks = new Task<Status>[requests.Length];
        int left = requests.Length, budget = AsyncProgress.CallerPolls;
        while (budget > 0 && left > 0)
        {
            for (int i = 0; i < requests.Length && budget > 0; i++)
            {
                if (tasks[i] is not null)
                    continue;
                budget--;
                if (requests[i].PollOnCaller() is { } done)
                {
                    tasks[i] = done;
                    left--;
                }
            }
        }
        for (int i = 0; i < requests.Length; i++)
            tasks[i] ??= requests[i].AwaitCore(CancellationToken.None, 0);
        return tasks;
    }

    /// <summary>The engine finished the await: the request is its owner's again.</summary>
    internal void AwaitEnded(AwaitEntry e) => Interlocked.CompareExchange(ref _await, null, e);

    /// <summary>
    /// On the engine's thread, for a cancelled await: cancels the operation in MPI when it is a
    /// receive and returns true (it then completes through the usual test); false for any other
    /// operation, which is not cancelled.
    /// </summary>
    internal abstract bool CancelAwaited();
}
