using System.Globalization;

namespace Scenarios;

/// <summary>
/// Collections all the time, for any scenario: with <c>MOTOR_GC_STRESS=1</c> a thread forces one
/// blocking, compacting gen-2 collection after another (a millisecond apart) while the program
/// runs, and frees one of the small arrays it keeps before each, so that the objects allocated
/// after it slide to a new address every time: a buffer MPI still reads or writes that nothing
/// pins moves within a millisecond.  The Scenarios program starts it before MPI (one per rank,
/// so MPI's own calls, the transport and the scenario's checks all run under it) and the tests'
/// host starts it too when the variable is set (GcStressHost.cs).
/// <c>MOTOR_GC_STRESS_MIN=N</c> (the Scenarios program only) runs each scenario again until every
/// rank has seen at least N of these collections during its runs, so that a fast scenario is
/// stressed as much as a slow one; each scenario reports the collections that ran
/// (<see cref="Report"/>), also written into the folder <c>MOTOR_GC_STRESS_LOG</c> names (a file
/// per process), where tests/gc-stress.sh gathers those of a whole suite.
/// </summary>
internal sealed class GcStress : IDisposable
{
    internal const string Variable = "MOTOR_GC_STRESS";
    internal const string MinimumVariable = "MOTOR_GC_STRESS_MIN";
    internal const string LogVariable = "MOTOR_GC_STRESS_LOG";

    /// <summary>A scenario runs at most this many times to reach <see cref="MinimumVariable"/>.</summary>
    internal const int MaxRounds = 20_000;

    private readonly Thread _thread;
    private readonly CancellationTokenSource _stop = new();
    private long _forced;

    private GcStress()
    {
        _thread = new Thread(Collect) { IsBackground = true, Name = "gc-stress" };
        _thread.Start();
    }

    /// <summary>The forced collections so far.</summary>
    internal long Forced => Interlocked.Read(ref _forced);

    /// <summary>
    /// Starts the collector when <see cref="Variable"/> asks for it; null when it is unset or 0.
    /// Any other value is an error naming the variable.
    /// </summary>
    internal static GcStress? FromEnvironment()
    {
        string? v = Environment.GetEnvironmentVariable(Variable);
        return v switch
        {
            null or "" or "0" => null,
            "1" => new GcStress(),
            _ => throw new ArgumentException($"{Variable}={v}: give 1 (collect all the time) or 0 (off)"),
        };
    }

    /// <summary>
    /// The forced collections each scenario must see on every rank (<see cref="MinimumVariable"/>),
    /// 0 when unset; anything but a positive integer is an error naming the variable.
    /// </summary>
    internal static long MinimumFromEnvironment()
    {
        string? v = Environment.GetEnvironmentVariable(MinimumVariable);
        if (string.IsNullOrEmpty(v))
            return 0;
        if (!long.TryParse(v, NumberStyles.None, CultureInfo.InvariantCulture, out long n) || n <= 0)
            throw new ArgumentException($"{MinimumVariable}={v}: give the number of forced collections each scenario must see (a positive integer)");
        return n;
    }

    private void Collect()
    {
        var keep = new byte[64][];
        for (int i = 0; !_stop.IsCancellationRequested; i++)
        {
            keep[i % keep.Length] = new byte[16 + (i * 37 % 64) * 64]; // the array it replaces leaves a hole
            GC.Collect(2, GCCollectionMode.Forced, blocking: true, compacting: true);
            Interlocked.Increment(ref _forced);
            Thread.Sleep(1);
        }
    }

    /// <summary>The counts a scenario's report is the difference of.</summary>
    internal readonly record struct Counts(long Forced, int Gen0, int Gen1, int Gen2)
    {
        internal static Counts Now(GcStress stress) =>
            new(stress.Forced, GC.CollectionCount(0), GC.CollectionCount(1), GC.CollectionCount(2));
    }

    /// <summary>
    /// The line a scenario ends with under stress: the runs it took, the collections this thread
    /// forced, every collection by generation, and those the allocation budget started (gen 0
    /// and gen 1 ones: every forced one is gen 2).
    /// </summary>
    internal static string Report(string scenario, int rank, int rounds, Counts before, Counts after)
    {
        int gen0 = after.Gen0 - before.Gen0, gen1 = after.Gen1 - before.Gen1, gen2 = after.Gen2 - before.Gen2;
        return $"GC-STRESS {scenario} rank {rank}: {rounds} runs, {after.Forced - before.Forced} forced compacting collections, " +
               $"collections gen0 {gen0} gen1 {gen1} gen2 {gen2} (ephemeral {gen0 - gen2})";
    }

    /// <summary>Prints a report line, and adds it to this process's file in the folder <see cref="LogVariable"/> names.</summary>
    internal static void Print(string line)
    {
        Console.WriteLine(line);
        if (Environment.GetEnvironmentVariable(LogVariable) is { Length: > 0 } folder)
            File.AppendAllText(Path.Combine(folder, $"gc-stress-{Environment.ProcessId}.log"), line + "\n");
    }

    public void Dispose()
    {
        _stop.Cancel();
        _thread.Join();
        _stop.Dispose();
    }
}
