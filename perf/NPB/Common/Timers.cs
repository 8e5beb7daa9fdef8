using System.MP;

namespace Npb.Common;

/// <summary>
/// Named wall-clock timers over MPI_Wtime, as NPB's timer_clear / timer_start / timer_stop /
/// timer_read: each accumulates the time between its starts and stops. Benchmarks keep one
/// for the whole timed region and, when <see cref="Detailed"/>, more for the split between
/// computation and communication.
/// </summary>
public sealed class Timers
{
    private readonly string[] _names;
    private readonly double[] _elapsed;
    private readonly double[] _started;

    /// <summary>Creates one timer per name; index i of every call is <paramref name="names"/>[i].</summary>
    public Timers(params string[] names)
    {
        _names = names;
        _elapsed = new double[names.Length];
        _started = new double[names.Length];
    }

    /// <summary>
    /// Whether the per-phase timers are wanted: NPB's convention of a file <c>timer.flag</c> in
    /// the working directory, or the environment variable <c>NPB_TIMERS=1</c>.
    /// </summary>
    public static bool Detailed { get; } =
        File.Exists("timer.flag") || Environment.GetEnvironmentVariable("NPB_TIMERS") == "1";

    /// <summary>The number of timers.</summary>
    public int Count => _names.Length;

    /// <summary>The name of timer <paramref name="t"/>.</summary>
    public string Name(int t) => _names[t];

    /// <summary>Sets timer <paramref name="t"/> to zero.</summary>
    public void Clear(int t) => _elapsed[t] = 0;

    /// <summary>Sets every timer to zero.</summary>
    public void ClearAll() => Array.Clear(_elapsed);

    /// <summary>Starts timer <paramref name="t"/>.</summary>
    public void Start(int t) => _started[t] = Mpi.Wtime();

    /// <summary>Stops timer <paramref name="t"/>, adding the time since its start.</summary>
    public void Stop(int t) => _elapsed[t] += Mpi.Wtime() - _started[t];

    /// <summary>The seconds accumulated by timer <paramref name="t"/>.</summary>
    public double Read(int t) => _elapsed[t];

    /// <summary>
    /// Prints, on rank 0, each timer's minimum, maximum and mean over the ranks (collective:
    /// every rank calls it). Used when <see cref="Detailed"/> is on.
    /// </summary>
    public void PrintSummary(Communicator world)
    {
        var min = new double[Count];
        var max = new double[Count];
        var sum = new double[Count];
        world.Allreduce(_elapsed, min, Op.Min);
        world.Allreduce(_elapsed, max, Op.Max);
        world.Allreduce(_elapsed, sum, Op.Sum);
        if (world.Rank != 0)
            return;
        Console.WriteLine(" Timer                 min (s)     max (s)    mean (s)");
        for (int t = 0; t < Count; t++)
            Console.WriteLine(FormattableString.Invariant($" {_names[t],-16} {min[t],12:F4} {max[t],12:F4} {sum[t] / world.Size,12:F4}"));
    }
}
