// The problems the Service sample solves, as the objects that travel between ranks
// ([Transportable]) and the serial code each rank runs on its part.  The tests link
// this file to compute the serial answers they compare with.
using System.MP;

namespace MotorService;

/// <summary>What a call asks of the job.</summary>
public enum ProblemKind
{
    /// <summary>The workers stop (sent once, after the last call).</summary>
    Shutdown,

    /// <summary>Midpoint-rule sum of 4/(1+x²) over a range of intervals.</summary>
    Pi,

    /// <summary>Jacobi relaxation of a block of plates.</summary>
    Heat,

    /// <summary>Stop the block of call <see cref="Work.Call"/> where it is (its caller's deadline passed, it cancelled, or the job stops).</summary>
    Stop,
}

/// <summary>A plate as it travels: interior size, fixed edge temperatures.</summary>
[Transportable]
public sealed class PlateSpec
{
    public int Id, Width, Height;
    public double Top, Bottom, Left, Right;
}

/// <summary>A relaxed plate.</summary>
[Transportable]
public sealed class PlateOutcome
{
    public int Id, Rank;
    public double Mean, Change;
}

/// <summary>One rank's part of a call: rank 0 sends block r to rank r, tagged with the call's tag.</summary>
[Transportable]
public sealed class Work
{
    public ProblemKind Kind;
    public long Call;

    /// <summary>Pi: all intervals, and this rank's range [First, End).</summary>
    public long Intervals, First, End;

    /// <summary>Heat: this rank's block of plates.</summary>
    [Transportable]
    public PlateSpec[]? Plates;

    public int Steps;

    /// <summary>A rank that throws on purpose (-1: none).</summary>
    public int FaultRank = -1;

    /// <summary>Each rank answers only once this many later calls' blocks have reached it (<see cref="Arrivals"/>).</summary>
    public int HoldForLaterCalls;
}

/// <summary>The blocks that reached this rank, counted, so that a call can wait for later ones.</summary>
public static class Arrivals
{
    private static readonly TimeSpan Limit = TimeSpan.FromSeconds(30);
    private static readonly object s_lock = new();
    private static long s_count;

    /// <summary>Counts a block that arrived; returns its number on this rank.</summary>
    public static long Record()
    {
        lock (s_lock)
        {
            Monitor.PulseAll(s_lock);
            return ++s_count;
        }
    }

    /// <summary>Waits until <paramref name="later"/> blocks arrived after block number <paramref name="mine"/>, or <paramref name="stop"/>.</summary>
    public static void AwaitLater(long mine, int later, CancellationToken stop)
    {
        var deadline = DateTime.UtcNow + Limit;
        using CancellationTokenRegistration wake = stop.Register(() =>
        {
            lock (s_lock)
                Monitor.PulseAll(s_lock);
        });
        lock (s_lock)
            while (s_count < mine + later)
            {
                stop.ThrowIfCancellationRequested();
                if (deadline <= DateTime.UtcNow || !Monitor.Wait(s_lock, deadline - DateTime.UtcNow))
                    throw new TimeoutException($"no {later} later calls reached this rank in {Limit.TotalSeconds} s");
            }
    }
}

/// <summary>One rank's answer: its partial result, or the exception it raised.</summary>
[Transportable]
public sealed class Outcome
{
    public int Rank;
    public double PartialSum;

    [Transportable]
    public PlateOutcome[]? Plates;

    /// <summary>The exception's type name and message when the rank failed, else null.</summary>
    [Transportable]
    public string? ErrorType;

    [Transportable]
    public string? ErrorMessage;

    /// <summary>
    /// Runs a rank's part (<paramref name="arrival"/>: its number from <see cref="Arrivals.Record"/>)
    /// until it is done or <paramref name="stop"/> fires, turning an exception into a failed outcome
    /// (the job keeps serving; a stopped part fails with <see cref="OperationCanceledException"/>).
    /// </summary>
    public static Outcome Of(Work work, int rank, long arrival, CancellationToken stop)
    {
        try
        {
            if (work.HoldForLaterCalls > 0)
                Arrivals.AwaitLater(arrival, work.HoldForLaterCalls, stop);
            if (work.FaultRank == rank)
                throw new InvalidOperationException($"fault injected into call {work.Call}");
            return work.Kind switch
            {
                ProblemKind.Pi => new Outcome { Rank = rank, PartialSum = Solvers.PiPart(work.Intervals, work.First, work.End, stop) },
                ProblemKind.Heat => new Outcome { Rank = rank, Plates = Solvers.Relax(work.Plates ?? [], work.Steps, rank, stop) },
                _ => throw new ArgumentException($"problem kind {work.Kind} is not a computation"),
            };
        }
        catch (Exception e)
        {
            return new Outcome { Rank = rank, ErrorType = e.GetType().Name, ErrorMessage = e.Message };
        }
    }
}

/// <summary>
/// The serial computations (the same code runs on each rank's part and in the tests).  Each looks at
/// its stop token between bounded pieces of work (a chunk of intervals, a sweep of a plate), so a
/// stopped part ends within one piece, whatever the size of the request.
/// </summary>
public static class Solvers
{
    /// <summary>Intervals summed between two looks at the stop token (about a millisecond).</summary>
    private const long PiChunk = 1 << 20;

    /// <summary>Midpoint-rule terms i in [first, end) of π ≈ h·Σ 4/(1+x_i²), x_i = (i+½)h, h = 1/intervals.</summary>
    public static double PiPart(long intervals, long first, long end, CancellationToken stop = default)
    {
        if (intervals < 1)
            throw new ArgumentOutOfRangeException(nameof(intervals), intervals, "at least one interval");
        if (first >= end)
            throw new ArgumentException($"no intervals for this rank ({intervals} intervals are too few for the job)");
        double h = 1.0 / intervals, sum = 0;
        for (long chunk = first; chunk < end; chunk += PiChunk)
        {
            stop.ThrowIfCancellationRequested();
            for (long i = chunk, last = Math.Min(end, chunk + PiChunk); i < last; i++)
            {
                double x = (i + 0.5) * h;
                sum += 4.0 / (1.0 + x * x);
            }
        }
        return sum * h;
    }

    /// <summary>Relaxes each plate for <paramref name="steps"/> Jacobi sweeps (the 5-point stencil of Heat2D).</summary>
    public static PlateOutcome[] Relax(PlateSpec[] plates, int steps, int rank, CancellationToken stop = default)
    {
        if (steps < 1)
            throw new ArgumentOutOfRangeException(nameof(steps), steps, "at least one sweep");
        var outcomes = new PlateOutcome[plates.Length];
        for (int k = 0; k < plates.Length; k++)
            outcomes[k] = Relax(plates[k], steps, rank, stop);
        return outcomes;
    }

    private static PlateOutcome Relax(PlateSpec p, int steps, int rank, CancellationToken stop)
    {
        if (p.Width < 1 || p.Height < 1)
            throw new ArgumentException($"plate {p.Id} is {p.Width}x{p.Height}: a plate needs at least one interior cell");
        int w = p.Width + 2, h = p.Height + 2; // with the fixed edges
        var u = new double[w * h];
        var next = new double[w * h];
        for (int x = 1; x < w - 1; x++)
        {
            u[x] = next[x] = p.Top;
            u[(h - 1) * w + x] = next[(h - 1) * w + x] = p.Bottom;
        }
        for (int y = 1; y < h - 1; y++)
        {
            u[y * w] = next[y * w] = p.Left;
            u[y * w + w - 1] = next[y * w + w - 1] = p.Right;
        }
        double change = 0;
        for (int s = 0; s < steps; s++)
        {
            stop.ThrowIfCancellationRequested();
            change = 0;
            for (int y = 1; y < h - 1; y++)
                for (int x = 1; x < w - 1; x++)
                {
                    int i = y * w + x;
                    double v = 0.25 * (u[i - 1] + u[i + 1] + u[i - w] + u[i + w]);
                    change = Math.Max(change, Math.Abs(v - u[i]));
                    next[i] = v;
                }
            (u, next) = (next, u);
        }
        double sum = 0;
        for (int y = 1; y < h - 1; y++)
            for (int x = 1; x < w - 1; x++)
                sum += u[y * w + x];
        return new PlateOutcome { Id = p.Id, Rank = rank, Mean = sum / (p.Width * p.Height), Change = change };
    }

    /// <summary>The block of <paramref name="n"/> items rank r of p gets (OScatterBlocks' rule): n/p, plus one when r &lt; n % p.</summary>
    public static (long First, long End) Block(long n, int p, int r)
    {
        long q = n / p, extra = n % p;
        long first = r * q + Math.Min(r, extra);
        return (first, first + q + (r < extra ? 1 : 0));
    }
}
