using System.Text.RegularExpressions;
using Xunit;

namespace System.MP.Tests;

/// <summary>
/// The NAS Parallel Benchmarks of perf/NPB, run as users run them (<c>mpiexec -n 2 motor
/// Npb.dll cg S</c>): each must print NPB's report with <c>Verification = SUCCESSFUL</c>
/// and exit 0; a run NPB does not define must be refused with a message and exit 2.
/// </summary>
public class NpbTests
{
    private static string Program => Job.ManagedProgram("Npb");

    private const int Timeout = 600;   // class S is seconds of work, but the test machine is shared

    private static void AssertVerified(Job.Result r, string benchmark, int ranks)
    {
        Assert.True(r.ExitCode == 0, r.ToString());
        Assert.Matches($@"(?m)^ {benchmark.ToUpperInvariant()} Benchmark Completed\.$", r.Output);
        Assert.Matches(@"(?m)^ Class\s+=\s+S$", r.Output);
        Assert.Matches($@"(?m)^ Total processes =\s+{ranks}$", r.Output);
        Assert.Matches(@"(?m)^ Verification\s+=\s+SUCCESSFUL$", r.Output);
        Assert.Matches(@"(?m)^ Mop/s total\s+=\s+[0-9]+\.[0-9]{2}$", r.Output);
    }

    /// <summary>Class S on 2 ranks over MPICH, in library mode and under motor.</summary>
    [Theory]
    [InlineData("ep")]
    [InlineData("is")]
    [InlineData("cg")]
    [InlineData("mg")]
    [InlineData("ft")]
    [InlineData("lu")]
    public void ClassSVerifiesOnTwoRanks(string benchmark)
    {
        AssertVerified(Job.Mpi(2, Program, $"{benchmark} S", Timeout), benchmark, 2);
        AssertVerified(Job.Mpi(2, Program, $"{benchmark} S", Timeout, hosted: true), benchmark, 2);
    }

    /// <summary>
    /// SP on a square number of ranks: one rank holds the single cell of the multi-partition;
    /// four hold two cells each, so every line solve crosses ranks in a two-stage pipeline and
    /// the face exchange pairs cells of different ranks along all three axes.
    /// </summary>
    [Theory]
    [InlineData(1)]
    [InlineData(4)]
    public void SpClassSVerifiesOnSquareRankCounts(int ranks)
    {
        AssertVerified(Job.Mpi(ranks, Program, "sp S", Timeout), "sp", ranks);
        AssertVerified(Job.Mpi(ranks, Program, "sp S", Timeout, hosted: true), "sp", ranks);
    }

    /// <summary>SP's persistent pipeline and face requests through the Open MPI core, on four ranks.</summary>
    [Fact]
    public void SpVerifiesOnOpenMpi() =>
        AssertVerified(Job.Mpi(4, Program, "sp S", Timeout, hosted: true, launcher: Job.Launcher.OpenMpi), "sp", 4);

    /// <summary>CG on a 2 x 2 process grid: the row reductions and the transpose between different ranks.</summary>
    [Fact]
    public void CgVerifiesOnFourRanks() =>
        AssertVerified(Job.Mpi(4, Program, "cg S", Timeout, hosted: true), "cg", 4);

    /// <summary>IS's Alltoallv, EP's reductions, MG's persistent requests, FT's Alltoall and LU's persistent wavefront and halo requests through the Open MPI core.</summary>
    [Theory]
    [InlineData("is")]
    [InlineData("ep")]
    [InlineData("mg")]
    [InlineData("ft")]
    [InlineData("lu")]
    public void VerifiesOnOpenMpi(string benchmark) =>
        AssertVerified(Job.Mpi(2, Program, $"{benchmark} S", Timeout, hosted: true, launcher: Job.Launcher.OpenMpi), benchmark, 2);

    /// <summary>
    /// NPB_NPROCS_STRICT=off: a count the decomposition cannot use in full runs on the largest
    /// one it can (IS: a power of two, LU: a grid, BT and SP: a square), the other ranks wait
    /// idle, and the report says both counts; the job ends in order in both modes.
    /// </summary>
    [Theory]
    [InlineData(3, "is", 2, false)]
    [InlineData(3, "lu", 2, true)]
    [InlineData(2, "bt", 1, false)]
    [InlineData(2, "sp", 1, true)]
    public void LenientCountsLeaveRanksIdle(int ranks, string benchmark, int active, bool hosted)
    {
        var env = new Dictionary<string, string> { ["NPB_NPROCS_STRICT"] = "off" };
        Job.Result r = Job.Mpi(ranks, Program, $"{benchmark} S", Timeout, env, hosted);
        AssertVerified(r, benchmark, ranks);
        Assert.Matches($@"(?m)^ Active processes=\s+{active}$", r.Output);
    }

    /// <summary>
    /// BT on 1 and 4 ranks (the multi-partition wants a square number of processes: on 4, each
    /// rank's two cells, the face exchange and the pipelined line solves between ranks), in
    /// library mode and under motor.
    /// </summary>
    [Theory]
    [InlineData(1)]
    [InlineData(4)]
    public void BtVerifies(int ranks)
    {
        AssertVerified(Job.Mpi(ranks, Program, "bt S", Timeout), "bt", ranks);
        AssertVerified(Job.Mpi(ranks, Program, "bt S", Timeout, hosted: true), "bt", ranks);
    }

    /// <summary>
    /// BT-IO on 4 ranks: the solution written every five steps with collective MPI-IO writes
    /// into one file of NPB's layout (12 dumps of the 12³ grid), read back and verified dump by
    /// dump against NPB's BT-IO reference norms; under motor, through ROMIO (MPICH) and OMPIO (Open MPI).
    /// </summary>
    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void BtIoVerifiesOnFourRanks(bool openMpi)
    {
        string path = Path.Combine(Path.GetTempPath(), $"btio-{Guid.NewGuid():N}.out");
        try
        {
            Job.Result r = Job.Mpi(4, Program, "bt S full", Timeout, env: new Dictionary<string, string> { ["NPB_BTIO_FILE"] = path },
                hosted: true, launcher: openMpi ? Job.Launcher.OpenMpi : Job.Launcher.Mpich);
            AssertVerified(r, "bt", 4);
            Assert.Contains("BTIO -- FULL MPI-IO write interval:   5", r.Output);
            Assert.Equal(12, Regex.Matches(r.Output, @"(?m)^ Reading data set \d+$").Count);
            Assert.Equal(12L * 12 * 12 * 12 * 5 * sizeof(double), new FileInfo(path).Length);
        }
        finally
        {
            File.Delete(path);
        }
    }

    /// <summary>
    /// Runs NPB does not define end with NPB's kind of refusal, exit code 2, and no report; every
    /// rank ends MPI in order (no rank aborts the job for leaving with MPI in use).
    /// </summary>
    [Theory]
    [InlineData(3, "is S", "IS: the number of processes (3) must be a power of two.")]
    [InlineData(3, "cg S", "CG: the number of processes (3) must be a power of two.")]
    [InlineData(2, "is D", "IS: class D is not defined; classes: S W A B C.")]
    [InlineData(3, "mg S", "MG: the number of processes (3) must be a power of two.")]
    [InlineData(3, "ft S", "FT: the number of processes (3) must be a power of two.")]
    [InlineData(2, "ft D", "FT: class D is not defined; classes: S W A B C.")]
    [InlineData(3, "lu S", "LU: no process grid for 3 processes; expecting nx*ny processes with nx/2 <= ny <= nx (such as 2).")]
    [InlineData(2, "sp S", "SP: no process grid for 2 processes; expecting a square number of processes (such as 1).")]
    [InlineData(2, "ep Q", "unknown class 'Q': NPB classes are S, W, A, B, C, D, E and F.")]
    [InlineData(2, "bt S", "BT: no process grid for 2 processes; expecting a square number of processes (such as 1).")]
    [InlineData(1, "bt S simple", "BT: I/O subtype 'simple' is not implemented here; subtypes: full (collective MPI-IO).")]
    public void UndefinedRunsAreRefused(int ranks, string args, string message)
    {
        Job.Result r = Job.Mpi(ranks, Program, args, Timeout);
        Assert.True(r.ExitCode == 2, r.ToString());
        Assert.Contains(message, r.Output);
        Assert.Single(Regex.Matches(r.Output, Regex.Escape(message)));   // rank 0 alone says it
        Assert.DoesNotContain("Verification", r.Output);
        Assert.DoesNotContain("abort", r.Output, StringComparison.OrdinalIgnoreCase);
    }
}
