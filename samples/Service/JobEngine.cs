// Rank 0's side of the job: the one thread that talks MPI for every call.
//
// gRPC handlers run on the thread pool and never call MPI.  They hand a call (one
// Work block per rank) to this engine through a channel and await a
// TaskCompletionSource.  The engine's thread (the main thread) posts each call's
// blocks with nonblocking object sends, tagged with the call's own tag, posts one
// object receive per worker for the answers under that tag, computes rank 0's own
// block on the thread pool, and tests everything in flight in one loop.  Calls
// therefore overlap: a new call's blocks go out while earlier calls' answers are
// still on their way, and MPI's tag matching keeps each answer with its call.
using System.MP;
using System.Threading.Channels;

namespace MotorService;

/// <summary>A call failed on one or more ranks: each failure names its rank, exception type and message.</summary>
public sealed class RankFailureException(IReadOnlyList<Outcome> failures)
    : Exception(string.Join("; ", failures.Select(f => $"rank {f.Rank}: {f.ErrorType}: {f.ErrorMessage}")))
{
    /// <summary>The failed ranks' outcomes, in rank order.</summary>
    public IReadOnlyList<Outcome> Failures { get; } = failures;
}

/// <summary>Rank 0's MPI thread: posts calls, matches answers by tag, completes the callers' tasks.</summary>
public sealed class JobEngine
{
    /// <summary>Tag of the message that stops a worker.</summary>
    public const int ShutdownTag = 0;

    // Calls use tags 1..TagSpan in turn; MPI guarantees tags up to 32767 (MPI-4.1 §3.2.3).
    // No more than MaxInFlight calls are posted at once, so no two calls in flight share a tag.
    private const int TagSpan = 32000;
    private const int MaxInFlight = 512;

    private readonly Communicator _comm;
    private readonly Channel<Call> _calls = Channel.CreateUnbounded<Call>(new UnboundedChannelOptions { SingleReader = true });
    private readonly List<Call> _inFlight = [];
    private long _nextCall;
    private long _answered;

    /// <summary>An engine over <paramref name="comm"/>, whose rank 0 is this process.</summary>
    public JobEngine(Communicator comm)
    {
        _comm = comm;
        Size = comm.Size;
    }

    /// <summary>Ranks of the job.</summary>
    public int Size { get; }

    /// <summary>Calls answered so far (successfully or not).</summary>
    public long Answered => Interlocked.Read(ref _answered);

    /// <summary>
    /// Queues a call: <paramref name="blocks"/>(call number) gives rank r's work as element r.
    /// The task ends with every rank's outcome in rank order, or a <see cref="RankFailureException"/>.
    /// Thread-safe; called from gRPC handlers.
    /// </summary>
    public Task<Outcome[]> Submit(Func<long, Work[]> blocks)
    {
        long id = Interlocked.Increment(ref _nextCall);
        Work[] work = blocks(id);
        if (work.Length != Size)
            throw new ArgumentException($"{work.Length} blocks for {Size} ranks", nameof(blocks));
        var call = new Call(id, work);
        if (!_calls.Writer.TryWrite(call))
            call.Done.SetException(new InvalidOperationException("the job is shutting down"));
        return call.Done.Task;
    }

    /// <summary>Stops taking calls; <see cref="Run"/> returns once the calls already taken are answered. Thread-safe.</summary>
    public void RequestShutdown() => _calls.Writer.TryComplete();

    /// <summary>The MPI loop (on the thread that may call MPI): runs until <see cref="RequestShutdown"/>, then stops the workers.</summary>
    public void Run()
    {
        var backoff = new Backoff();
        while (true)
        {
            bool progressed = false;
            while (_inFlight.Count < MaxInFlight && _calls.Reader.TryRead(out Call? call))
            {
                Post(call);
                progressed = true;
            }
            for (int i = _inFlight.Count - 1; i >= 0; i--)
                if (Advance(_inFlight[i], ref progressed))
                {
                    _inFlight.RemoveAt(i);
                    Interlocked.Increment(ref _answered);
                }
            if (_inFlight.Count == 0 && _calls.Reader.Completion.IsCompleted)
                break;
            if (!progressed && _inFlight.Count == 0)
                _calls.Reader.WaitToReadAsync().AsTask().Wait(100); // nothing in flight: MPI has nothing to progress
            else
                backoff.After(progressed);
        }
        for (int r = 1; r < Size; r++)
            _comm.OSend(new Work { Kind = ProblemKind.Shutdown }, r, ShutdownTag);
    }

    private void Post(Call call)
    {
        call.Tag = 1 + (int)(call.Id % TagSpan);
        long arrival = Arrivals.Record();
        call.Local = Task.Run(() => Outcome.Of(call.Work[0], 0, arrival));
        for (int r = 1; r < Size; r++)
        {
            call.Sends[r] = _comm.OISend(call.Work[r], r, call.Tag);
            call.Receives[r] = _comm.OIRecv<Outcome>(r, call.Tag);
        }
        _inFlight.Add(call);
    }

    /// <summary>Tests a call's requests; true once every rank answered and the caller's task is completed.</summary>
    private bool Advance(Call call, ref bool progressed)
    {
        int missing = 0;
        for (int r = 1; r < Size; r++)
        {
            if (call.Sends[r] is { } send && send.Test(out _))
            {
                send.Dispose();
                call.Sends[r] = null;
                progressed = true;
            }
            if (call.Results[r] is null && call.Receives[r] is { } recv)
            {
                try
                {
                    if (recv.Test(out _))
                        call.Results[r] = recv.Result ?? Failed(r, "NullReferenceException", "the rank answered nothing");
                }
                catch (TransportException e)
                {
                    call.Results[r] = Failed(r, e.GetType().Name, e.Message);
                }
                if (call.Results[r] is not null)
                {
                    recv.Dispose();
                    progressed = true;
                }
            }
            if (call.Results[r] is null || call.Sends[r] is not null)
                missing++;
        }
        if (call.Results[0] is null && call.Local!.IsCompleted)
        {
            call.Results[0] = call.Local.Result;
            progressed = true;
        }
        if (missing > 0 || call.Results[0] is null)
            return false;
        Outcome[] all = call.Results!;
        Outcome[] failures = all.Where(o => o.ErrorType is not null).ToArray();
        if (failures.Length > 0)
            call.Done.SetException(new RankFailureException(failures));
        else
            call.Done.SetResult(all);
        return true;
    }

    private static Outcome Failed(int rank, string type, string message) =>
        new() { Rank = rank, ErrorType = type, ErrorMessage = message };

    private sealed class Call(long id, Work[] work)
    {
        public readonly long Id = id;
        public readonly Work[] Work = work;
        public readonly ObjectRequest?[] Sends = new ObjectRequest?[work.Length];
        public readonly ObjectRequest<Outcome>?[] Receives = new ObjectRequest<Outcome>?[work.Length];
        public readonly Outcome?[] Results = new Outcome?[work.Length];
        public readonly TaskCompletionSource<Outcome[]> Done = new(TaskCreationOptions.RunContinuationsAsynchronously);
        public int Tag;
        public Task<Outcome>? Local;
    }
}
