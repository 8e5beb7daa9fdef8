using Scenarios;
using Xunit;

namespace System.MP.Tests;

/// <summary>
/// Motor ranks in MPMD jobs with ranks of other languages: world rank 0 is a C program (MPICH and
/// Open MPI), a Fortran program (gfortran, MPICH) or an mpi4py program (Debian's, Open MPI) from
/// tests/native/mixed, the other ranks run the scenario mixed-world under dotnet, under motor,
/// or one of each.  Each job is bounded: a rank that waits for a call the others never make (a
/// collective the other languages do not know of) fails the test instead of blocking the suite.
/// </summary>
public class MixedJobTests
{
    /// <summary>How long one mixed job may take; a hang ends it.</summary>
    private const int TimeoutSeconds = 90;

    /// <summary>The programs of the other languages, as built (build/native/tests/mixed) or kept in the tree.</summary>
    private static string Peer(string language, bool openMpi) => language switch
    {
        "c" => Path.Combine(Job.Root, "build", "native", "tests", "mixed", openMpi ? "peer-c-ompi" : "peer-c"),
        "fortran" => Path.Combine(Job.Root, "build", "native", "tests", "mixed", "peer-fortran"),
        _ => "/usr/bin/python3 " + Path.Combine(Job.Root, "tests", "native", "mixed", "peer.py"),
    };

    /// <summary>(peer language, Motor ranks as "dotnet", "motor" or "dotnet+motor", Open MPI).</summary>
    public static TheoryData<string, string, bool> Jobs() => new()
    {
        { "c", "dotnet", false },
        { "c", "motor", false },
        { "c", "dotnet", true },
        { "c", "motor", true },
        { "c", "dotnet+motor", false },
        { "fortran", "dotnet", false },
        { "fortran", "motor", false },
        { "python", "dotnet", true },
        { "python", "motor", true },
    };

    [Theory]
    [MemberData(nameof(Jobs))]
    public void MotorRanksBesideAnotherLanguage(string language, string motorRanks, bool openMpi)
    {
        Job.Result r = RunMixed(Peer(language, openMpi), motorRanks, openMpi, Scenario.MixedWorld);
        string what = $"{language} rank with {motorRanks} ranks{(openMpi ? " (Open MPI)" : "")}";
        Assert.False(r.TimedOut, $"{what} hung:\n{r}");
        Assert.True(r.ExitCode == 0, $"{what} failed:\n{r}");
        Assert.Contains($"PASS mixed-peer {(language == "python" ? "python" : language)} rank 0 (3 ranks)", r.Output);
        Assert.Contains($"PASS {Scenario.MixedWorld.Name()} rank 1 ", r.Output);
        Assert.Contains($"PASS {Scenario.MixedWorld.Name()} rank 2 ", r.Output);
        Assert.DoesNotContain("FAIL", r.Output);
    }

    /// <summary>
    /// A Motor rank that ends long before the other program's rank (a C rank in MPI_Finalize 6 s
    /// after MPI_Init) waits for it in MPI_Finalize: with no barrier over the world in an MPMD job,
    /// nothing tells a slow peer from a stuck finalize, so the finalize watchdog (here 1 s) stays
    /// away and the job ends 0.
    /// </summary>
    [Theory]
    [InlineData("motor")]
    [InlineData("dotnet")]
    public void AMotorRankEndingBeforeTheOtherProgramIsNotEndedByTheFinalizeWatchdog(string motorRanks)
    {
        var env = new Dictionary<string, string> { ["MOTOR_FINALIZE_TIMEOUT"] = "1" };
        string program = $"{Job.ScenariosProgram} {Scenario.MixedApart.Name()}";
        string rank = motorRanks == "motor" ? $"{Job.Motor} {program}" : $"dotnet {program}";
        Job.Result r = Job.Run(Job.FindLauncher(Job.Launcher.Mpich), $"-n 1 {Peer("c", false)} apart 6 : -n 2 {rank}", TimeoutSeconds, env);
        Assert.False(r.TimedOut, r.ToString());
        Assert.True(r.ExitCode == 0, r.ToString());
        Assert.DoesNotContain("MPI_Finalize has not returned", r.Output);
        Assert.Contains("PASS mixed-peer c apart", r.Output);
        Assert.Contains($"PASS {Scenario.MixedApart.Name()} rank 1 ", r.Output);
    }

    /// <summary>
    /// A Motor program started first in an MPICH MPMD job cannot tell that another program follows
    /// (MPICH's launcher says nothing of it), so it keeps its barrier over the world before
    /// MPI_Finalize, which the C rank never enters: after MOTOR_FINALIZE_BARRIER_HINT seconds each
    /// Motor rank says what to set, and with MOTOR_FINALIZE_BARRIER=0 the same job ends 0.  The
    /// waiting job is ended after 30 s, room for a slow start on a loaded machine.
    /// </summary>
    [Fact]
    public void AMotorProgramFirstBeforeAnotherLanguageSaysWhatToSetAndEndsWithIt()
    {
        string program = $"{Job.Motor} {Job.ScenariosProgram} {Scenario.MixedApart.Name()}";
        string launcher = Job.FindLauncher(Job.Launcher.Mpich), args = $"-n 2 {program} : -n 1 {Peer("c", false)} apart 0";
        Job.Result waits = Job.Run(launcher, args, 30, new Dictionary<string, string> { ["MOTOR_FINALIZE_BARRIER_HINT"] = "1" });
        Assert.True(waits.TimedOut, $"the barrier before MPI_Finalize did not wait for the C rank:\n{waits}");
        Assert.Contains("set MOTOR_FINALIZE_BARRIER=0", waits.Output);
        Job.Result ends = Job.Run(launcher, args, TimeoutSeconds, new Dictionary<string, string> { ["MOTOR_FINALIZE_BARRIER"] = "0" });
        Assert.False(ends.TimedOut, ends.ToString());
        Assert.True(ends.ExitCode == 0, ends.ToString());
        Assert.DoesNotContain("MOTOR_FINALIZE_BARRIER", ends.Output);
        Assert.Contains("PASS mixed-peer c apart", ends.Output);
    }

    /// <summary>
    /// `launcher -n 1 peer : -n 2 dotnet|motor Scenarios.dll scenario` (or one dotnet and one motor
    /// rank, each its own application), bounded by <see cref="TimeoutSeconds"/>.
    /// </summary>
    internal static Job.Result RunMixed(string peer, string motorRanks, bool openMpi, Scenario scenario)
    {
        string program = $"{Job.ScenariosProgram} {scenario.Name()}";
        string dotnet = $"dotnet {program}", motor = $"{Job.Motor} {program}";
        string apps = motorRanks switch
        {
            "dotnet" => $"-n 2 {dotnet}",
            "motor" => $"-n 2 {motor}",
            _ => $"-n 1 {dotnet} : -n 1 {motor}",
        };
        var env = new Dictionary<string, string>();
        string launcher = Job.FindLauncher(openMpi ? Job.Launcher.OpenMpi : Job.Launcher.Mpich);
        string args = $"-n 1 {peer} : {apps}";
        if (openMpi)
        {
            Job.RequireOpenMpi();
            foreach (var (k, v) in Job.OpenMpiEnvironment)
                env[k] = v;
            args = "--oversubscribe " + args;
        }
        return Job.Run(launcher, args, TimeoutSeconds, env);
    }
}
