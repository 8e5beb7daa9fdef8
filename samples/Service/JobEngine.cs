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
//
// Stopping a call (its caller's deadline or cancellation, or the job's shutdown) keeps
// the same exchange whole: rank 0 sends each worker a Stop naming the call, every rank
// ends its block within one bounded piece of work and answers it as usual, and the call
// ends once every rank has answered.  A block is computed by its rank alone (no message
// between ranks while it runs), so no rank can be left waiting in an exchange the
// others have left, and no answer is left unreceived for a later call to trip over.
using System.MP;

namespace MotorService;

/// <summary>A call failed on one or more ranks: each failure names its rank, exception type and message.</summary>
public sealed class RankFailureException(IReadOnlyList<Outcome> failures)
    : Exception(string.Join("; ", failures.Select(f => $"rank {f.Rank}: {f.ErrorType}: {f.ErrorMessage}")))
{
    /// <summary>The failed ranks' outcomes, in rank order.</summary>
    public IReadOnlyList<Outcome> Failures { get; } = failures;
}

/// <summary>A call was stopped on every rank before it was answered: by its caller, or abandoned by the job's shutdown.</summary>
public sealed class CallStoppedException(long call, bool abandoned) : Exception(abandoned
    ? $"call {call} abandoned: the job is shutting down (stopped on every rank)"
    : $"call {call} stopped on every rank: its caller's deadline passed or it cancelled")
{
    /// <summary>The call's number.</summary>
    public long Call { get; } = call;

    /// <summary>True when the job's shutdown stopped the call, false when its caller did.</summary>
    public bool Abandoned { get; } = abandoned;
}

/// <summary>What the job reports when told to stop: calls taken (running ones included) and those abandoned, in call order.</summary>
public sealed record ShutdownReport(long Calls, long[] Abandoned);

/// <summary>The job's calls: taken (running ones included), ended, running now (in call order), stopped by their callers.</summary>
public sealed record EngineStatus(long Calls, long Answered, long[] Running, long Stopped);

/// <summary>Rank 0's calls: posts each call's blocks, awaits the answers by tag, and stops the workers at the end.</summary>
public sealed class JobEngine
{
    /// <summary>Tag of the message that stops a worker.</summary>
    public const int ShutdownTag = 0;

    // Calls use tags 1..TagSpan in turn; MPI guarantees tags up to 32767 (MPI-4.1 §3.2.3).
    // No more than MaxInFlight calls are posted at once, so no two calls in flight share a tag.
    private const int TagSpan = 32000;
    private const int MaxInFlight = 512;

    /// <summary>Tag of the message that stops one call's block on a worker.</summary>
    public const int StopTag = TagSpan + 1;

    private readonly Communicator _comm;
    private readonly SemaphoreSlim _slots = new(MaxInFlight);
    private readonly TaskCompletionSource _stopping = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly object _gate = new();
    private readonly SortedDictionary<long, Call> _running = []; // calls taken and not yet ended on every rank
    private long _taken;
    private long _answered;
    private long _stopped;
    private ShutdownReport? _shutdown;

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

    /// <summary>Calls ended on every rank so far, whatever their outcome.</summary>
    public long Answered
    {
        get
        {
            lock (_gate)
                return _answered;
        }
    }

    /// <summary>The report of <see cref="RequestShutdown"/>, null until it is called.</summary>
    public ShutdownReport? Report
    {
        get
        {
            lock (_gate)
                return _shutdown;
        }
    }

    /// <summary>The calls so far and those running now. Thread-safe.</summary>
    public EngineStatus Status()
    {
        lock (_gate)
            return new EngineStatus(_taken, _answered, [.. _running.Keys], _stopped);
    }

    /// <summary>
    /// Solves a call: <paramref name="blocks"/>(call number) gives rank r's work as element r.
    /// The task ends with every rank's outcome in rank order, or a <see cref="RankFailureException"/>;
    /// when <paramref name="cancel"/> fires (or the job shuts down) every rank stops its block and the
    /// task ends with a <see cref="CallStoppedException"/>. Thread-safe; called from gRPC handlers.
    /// </summary>
    public Task<Outcome[]> Submit(Func<long, Work[]> blocks, CancellationToken cancel = default)
    {
        Call call;
        lock (_gate)
        {
            if (_shutdown is not null)
                return Task.FromException<Outcome[]>(new InvalidOperationException("the job is shutting down"));
            call = new Call(++_taken);
            _running.Add(call.Id, call);
        }
        Work[] work;
        try
        {
            work = blocks(call.Id);
            if (work.Length != Size)
                throw new ArgumentException($"{work.Length} blocks for {Size} ranks", nameof(blocks));
        }
        catch
        {
            End(call);
            throw;
        }
        return Solve(call, work, cancel);
    }

    /// <summary>
    /// Stops taking calls and stops every call still running on every rank (their callers get a
    /// <see cref="CallStoppedException"/>); <see cref="Run"/> returns once they have ended.
    /// Returns the calls taken and those abandoned; a second request returns the first one's report. Thread-safe.
    /// </summary>
    public ShutdownReport RequestShutdown()
    {
        Call[] abandoned;
        lock (_gate)
        {
            if (_shutdown is not null)
                return _shutdown;
            abandoned = [.. _running.Values];
            foreach (Call c in abandoned)
                c.Abandoned = true;
            _shutdown = new ShutdownReport(_taken, [.. abandoned.Select(c => c.Id)]);
            if (_running.Count == 0)
                _stopping.TrySetResult();
        }
        foreach (Call c in abandoned)
            c.Stop.Cancel(); // outside the gate: the Stop messages are sent from here
        return _shutdown;
    }

    /// <summary>Waits until <see cref="RequestShutdown"/> and the last call taken has ended, then stops the workers.</summary>
    public void Run()
    {
        _stopping.Task.Wait();
        for (int r = 1; r < Size; r++)
            _comm.OSend(new Work { Kind = ProblemKind.Shutdown }, r, ShutdownTag);
    }

    private async Task<Outcome[]> Solve(Call call, Work[] work, CancellationToken cancel)
    {
        Outcome[]? all;
        (bool Abandoned, bool Stopped) ended;
        try
        {
            using CancellationTokenRegistration caller = cancel.Register(static c => ((Call)c!).Stop.Cancel(), call);
            all = await Gather(call, work).ConfigureAwait(false);
        }
        finally
        {
            ended = End(call);
        }
        if (ended.Abandoned || ended.Stopped || all is null)
            throw new CallStoppedException(call.Id, ended.Abandoned);
        Outcome[] failures = [.. all.Where(o => o.ErrorType is not null)];
        return failures.Length > 0 ? throw new RankFailureException(failures) : all;
    }

    /// <summary>Every rank's outcome of the call in rank order; null when it was stopped before its blocks were sent.</summary>
    private async Task<Outcome[]?> Gather(Call call, Work[] work)
    {
        try
        {
            await _slots.WaitAsync(call.Stop.Token).ConfigureAwait(false);
        }
        catch (OperationCanceledException)
        {
            return null;
        }
        try
        {
            int tag = 1 + (int)(call.Id % TagSpan);
            long arrival = Arrivals.Record();
            Task<Outcome> local = Task.Run(() => Outcome.Of(work[0], 0, arrival, call.Stop.Token));
            var sends = new MpiRequest[Size - 1];
            var answers = new Task<Outcome>[Size - 1];
            for (int r = 1; r < Size; r++)
            {
                sends[r - 1] = _comm.OISend(work[r], r, tag);
                answers[r - 1] = Answer(r, tag);
            }
            // Registered after the blocks were posted, so each worker receives its Stop after its block.
            var stops = new List<MpiRequest>();
            Outcome[] all;
            using (call.Stop.Token.Register(() =>
            {
                lock (stops)
                    for (int r = 1; r < Size; r++)
                        stops.Add(_comm.OISend(new Work { Kind = ProblemKind.Stop, Call = call.Id }, r, StopTag));
            }))
            {
                await MpiRequest.WhenAll(sends).ConfigureAwait(false);
                foreach (MpiRequest s in sends)
                    s.Dispose();
                all = [await local.ConfigureAwait(false), .. await Task.WhenAll(answers).ConfigureAwait(false)];
            }
            // The registration is gone (its callback, if it ran, has returned): no more Stops.
            await MpiRequest.WhenAll([.. stops]).ConfigureAwait(false);
            foreach (MpiRequest s in stops)
                s.Dispose();
            return all;
        }
        finally
        {
            _slots.Release();
        }
    }

    /// <summary>The call has ended on every rank (or never reached them): whether the shutdown abandoned it, or else its caller stopped it.</summary>
    private (bool Abandoned, bool Stopped) End(Call call)
    {
        lock (_gate)
        {
            _running.Remove(call.Id);
            _answered++;
            bool stopped = !call.Abandoned && call.Stop.IsCancellationRequested;
            if (stopped)
                _stopped++;
            if (_shutdown is not null && _running.Count == 0)
                _stopping.TrySetResult();
            return (call.Abandoned, stopped);
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

    /// <summary>A call taken: its number, the token that stops its blocks, and whether the shutdown abandoned it.</summary>
    private sealed class Call(long id)
    {
        public long Id { get; } = id;

        public CancellationTokenSource Stop { get; } = new();

        public bool Abandoned { get; set; } // written and read under the engine's gate
    }
}
