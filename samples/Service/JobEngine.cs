// Rank 0's side of the job: every call, solved by all ranks, as one async method.
//
// gRPC handlers run on the thread pool and call Submit, which posts the call's blocks
// (one Work per rank) with nonblocking object sends, tagged with the call's own tag,
// posts one object receive per worker for the answers under that tag, computes rank
// 0's own block on the thread pool, and awaits it all.  The process's progress engine
// (System.MP's AsyncProgress) completes the awaited requests, so no thread of this
// sample polls MPI.  Calls therefore overlap: a new call's blocks go out while earlier
// calls' answers are still on their way, and MPI's tag matching keeps each answer with
// its call.  That is why the blocks travel by tagged OISend/OIRecv and not by
// OScatter/OGather: those are blocking collectives on one communicator, so a call
// would hold the communicator until every rank had answered it, one call at a time.
using System.MP;

namespace MotorService;

/// <summary>A call failed on one or more ranks: each failure names its rank, exception type and message.</summary>
public sealed class RankFailureException(IReadOnlyList<Outcome> failures)
    : Exception(string.Join("; ", failures.Select(f => $"rank {f.Rank}: {f.ErrorType}: {f.ErrorMessage}")))
{
    /// <summary>The failed ranks' outcomes, in rank order.</summary>
    public IReadOnlyList<Outcome> Failures { get; } = failures;
}

/// <summary>Rank 0's calls: posts each call's blocks, awaits the answers by tag, and stops the workers at the end.</summary>
public sealed class JobEngine
{
    /// <summary>Tag of the message that stops a worker.</summary>
    public const int ShutdownTag = 0;

    // Calls use tags 1..TagSpan in turn; MPI guarantees tags up to 32767 (MPI-4.1 §3.2.3).
    // No more than MaxInFlight calls are posted at once, so no two calls in flight share a tag.
    private const int TagSpan = 32000;
    private const int MaxInFlight = 512;

    private readonly Communicator _comm;
    private readonly SemaphoreSlim _slots = new(MaxInFlight);
    private readonly TaskCompletionSource _stopping = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly object _gate = new();
    private long _nextCall;
    private long _answered;
    private int _running; // calls taken and not yet answered
    private bool _closed;

    /// <summary>An engine over <paramref name="comm"/>, whose rank 0 is this process (MPI at thread level Multiple).</summary>
    public JobEngine(Communicator comm)
    {
        if (Mpi.ThreadLevel != ThreadLevel.Multiple)
            throw new InvalidOperationException($"the service awaits MPI requests from gRPC handlers: it needs thread level Multiple (has {Mpi.ThreadLevel})");
        _comm = comm;
        Size = comm.Size;
    }

    /// <summary>Ranks of the job.</summary>
    public int Size { get; }

    /// <summary>Calls answered so far (successfully or not).</summary>
    public long Answered => Interlocked.Read(ref _answered);

    /// <summary>
    /// Solves a call: <paramref name="blocks"/>(call number) gives rank r's work as element r.
    /// The task ends with every rank's outcome in rank order, or a <see cref="RankFailureException"/>.
    /// Thread-safe; called from gRPC handlers.
    /// </summary>
    public Task<Outcome[]> Submit(Func<long, Work[]> blocks)
    {
        long id = Interlocked.Increment(ref _nextCall);
        Work[] work = blocks(id);
        if (work.Length != Size)
            throw new ArgumentException($"{work.Length} blocks for {Size} ranks", nameof(blocks));
        lock (_gate)
        {
            if (_closed)
                return Task.FromException<Outcome[]>(new InvalidOperationException("the job is shutting down"));
            _running++;
        }
        return Solve(id, work);
    }

    /// <summary>Stops taking calls; <see cref="Run"/> returns once the calls already taken are answered. Thread-safe.</summary>
    public void RequestShutdown()
    {
        lock (_gate)
        {
            _closed = true;
            if (_running == 0)
                _stopping.TrySetResult();
        }
    }

    /// <summary>Waits until <see cref="RequestShutdown"/> and the last call taken is answered, then stops the workers.</summary>
    public void Run()
    {
        _stopping.Task.Wait();
        for (int r = 1; r < Size; r++)
            _comm.OSend(new Work { Kind = ProblemKind.Shutdown }, r, ShutdownTag);
    }

    private async Task<Outcome[]> Solve(long id, Work[] work)
    {
        await _slots.WaitAsync().ConfigureAwait(false);
        try
        {
            int tag = 1 + (int)(id % TagSpan);
            long arrival = Arrivals.Record();
            Task<Outcome> local = Task.Run(() => Outcome.Of(work[0], 0, arrival));
            var sends = new MpiRequest[Size - 1];
            var answers = new Task<Outcome>[Size - 1];
            for (int r = 1; r < Size; r++)
            {
                sends[r - 1] = _comm.OISend(work[r], r, tag);
                answers[r - 1] = Answer(r, tag);
            }
            await MpiRequest.WhenAll(sends).ConfigureAwait(false);
            foreach (MpiRequest s in sends)
                s.Dispose();
            Outcome[] all = [await local.ConfigureAwait(false), .. await Task.WhenAll(answers).ConfigureAwait(false)];
            Outcome[] failures = [.. all.Where(o => o.ErrorType is not null)];
            return failures.Length > 0 ? throw new RankFailureException(failures) : all;
        }
        finally
        {
            _slots.Release();
            Interlocked.Increment(ref _answered);
            lock (_gate)
                if (--_running == 0 && _closed)
                    _stopping.TrySetResult();
        }
    }

    /// <summary>Rank <paramref name="rank"/>'s answer under <paramref name="tag"/>; a payload that cannot be read is that rank's failure.</summary>
    private async Task<Outcome> Answer(int rank, int tag)
    {
        using ObjectRequest<Outcome> recv = _comm.OIRecv<Outcome>(rank, tag);
        try
        {
            return await recv ?? Failed(rank, "NullReferenceException", "the rank answered nothing");
        }
        catch (TransportException e)
        {
            return Failed(rank, e.GetType().Name, e.Message);
        }
    }

    private static Outcome Failed(int rank, string type, string message) =>
        new() { Rank = rank, ErrorType = type, ErrorMessage = message };
}
