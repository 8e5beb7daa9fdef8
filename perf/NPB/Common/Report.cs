using System.MP;

namespace Npb.Common;

/// <summary>
/// The end of every benchmark run: NPB's standard report (the layout of print_results)
/// printed by rank 0, and the process exit code, which is 0 only when verification succeeded.
/// The verdict is rank 0's, broadcast, so every rank exits with the same code.
/// </summary>
public sealed class Report
{
    /// <summary>The version of the NPB specification the benchmarks follow.</summary>
    public const string NpbVersion = "3.4";

    /// <summary>The exit code of a run whose verification failed.</summary>
    public const int VerificationFailedExitCode = 1;

    /// <summary>Two-letter benchmark name (EP, IS, CG, MG, FT, LU).</summary>
    public required string Name { get; init; }

    /// <summary>The class letter.</summary>
    public required char Class { get; init; }

    /// <summary>The problem size as NPB prints it: see <see cref="Size1"/>, <see cref="Size3"/>, <see cref="SizePowerOfTwo"/>.</summary>
    public required string Size { get; init; }

    /// <summary>Iterations of the timed loop.</summary>
    public required int Iterations { get; init; }

    /// <summary>Seconds of the timed region (the maximum over ranks, as NPB reports).</summary>
    public required double Seconds { get; init; }

    /// <summary>Millions of operations per second over all ranks.</summary>
    public required double Mops { get; init; }

    /// <summary>What an operation is (NPB's optype: "Random numbers generated", "keys ranked", "floating point").</summary>
    public required string OperationType { get; init; }

    /// <summary>Whether verification succeeded (rank 0's verdict is the one reported).</summary>
    public required bool Verified { get; init; }

    /// <summary>Processes that took part in the computation (fewer than the job's when NPB_NPROCS_STRICT left some idle).</summary>
    public required int Processes { get; init; }

    /// <summary>A one-number size (IS, CG): right-aligned in 12 columns.</summary>
    public static string Size1(long n) => FormattableString.Invariant($"{n,24}");

    /// <summary>EP's size, 2^m written out in full.</summary>
    public static string SizePowerOfTwo(int m) => FormattableString.Invariant($"{Math.Pow(2, m),24:F0}");

    /// <summary>A grid size n1 x n2 x n3 (MG, FT, LU).</summary>
    public static string Size3(int n1, int n2, int n3) => FormattableString.Invariant($"{"",10}{n1,4}x{n2,4}x{n3,4}");

    /// <summary>
    /// The report of a benchmark on an n1 x n2 x n3 grid whose operations are floating-point
    /// ones (MG, FT, LU, BT, SP).
    /// </summary>
    public static Report FloatingPoint(string name, char problemClass, (int N1, int N2, int N3) grid,
        int iterations, double seconds, double mops, bool verified, int processes) => new()
    {
        Name = name,
        Class = problemClass,
        Size = Size3(grid.N1, grid.N2, grid.N3),
        Iterations = iterations,
        Seconds = seconds,
        Mops = mops,
        OperationType = "floating point",
        Verified = verified,
        Processes = processes,
    };

    /// <summary>
    /// The banner NPB prints at the start of a run, on rank 0: the benchmark, the class and
    /// process count, then the benchmark's own lines.
    /// </summary>
    public static void Banner(Communicator world, string title, params string[] lines)
    {
        if (world.Rank != 0)
            return;
        Console.WriteLine();
        Console.WriteLine($" NAS Parallel Benchmarks {NpbVersion} -- {title}");
        Console.WriteLine();
        foreach (string line in lines)
            Console.WriteLine(line);
        Console.WriteLine(FormattableString.Invariant($" Number of active processes: {world.Size,5}"));
        Console.WriteLine();
    }

    /// <summary>
    /// Prints the report on rank 0 and returns the exit code every rank should return:
    /// 0 when verified, <see cref="VerificationFailedExitCode"/> otherwise (collective).
    /// </summary>
    public int Finish(Communicator world)
    {
        bool verified = world.Bcast(Verified, 0);
        if (world.Rank == 0)
            Print(Console.Out);
        Console.Out.Flush();
        return verified ? 0 : VerificationFailedExitCode;
    }

    /// <summary>
    /// <see cref="Finish(Communicator)"/>, then, when <see cref="Timers.Detailed"/>, each of
    /// <paramref name="timers"/>' minimum, maximum and mean over the ranks (collective).
    /// </summary>
    public int Finish(Communicator world, Timers timers)
    {
        int exit = Finish(world);
        if (Timers.Detailed)
            timers.PrintSummary(world);
        return exit;
    }

    /// <summary>Writes the report in NPB's layout.</summary>
    public void Print(TextWriter o)
    {
        o.WriteLine();
        o.WriteLine();
        o.WriteLine($" {Name} Benchmark Completed.");
        o.WriteLine($" Class           = {Class,24}");
        o.WriteLine($" Size            = {Size}");
        o.WriteLine(FormattableString.Invariant($" Iterations      = {Iterations,24}"));
        o.WriteLine(FormattableString.Invariant($" Time in seconds = {Seconds,24:F2}"));
        o.WriteLine(FormattableString.Invariant($" Total processes = {Math.Max(ActiveProcesses.JobSize, Processes),24}"));
        if (ActiveProcesses.JobSize > Processes)
            o.WriteLine(FormattableString.Invariant($" Active processes= {Processes,24}"));
        o.WriteLine(FormattableString.Invariant($" Mop/s total     = {Mops,24:F2}"));
        o.WriteLine(FormattableString.Invariant($" Mop/s/process   = {Mops / Processes,24:F2}"));
        o.WriteLine($" Operation type  = {OperationType,24}");
        o.WriteLine($" Verification    = {(Verified ? "SUCCESSFUL" : "UNSUCCESSFUL"),24}");
        o.WriteLine($" Version         = {NpbVersion,24}");
        o.WriteLine($" Runtime         = {(Mpi.IsHosted ? "motor" : "dotnet") + " " + Environment.Version,24}");
        o.WriteLine($" MPI library     = {FirstLine(Mpi.LibraryVersion)}");
        o.WriteLine();
    }

    private static string FirstLine(string text)
    {
        int end = text.IndexOfAny(['\n', '\r']);
        return (end < 0 ? text : text[..end]).Trim();
    }
}
