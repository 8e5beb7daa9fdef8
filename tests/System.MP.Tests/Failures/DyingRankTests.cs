using System.Diagnostics;
using System.Text.RegularExpressions;
using Scenarios;
using Xunit;
using Xunit.Abstractions;

namespace System.MP.Tests;

/// <summary>
/// A rank that dies ends the whole job, with a non-zero exit, no process left behind, and the
/// launcher's word on which rank failed and how: rank 1 killed with SIGKILL while every rank
/// waits for it in a receive, a collective or a window of nonblocking operations
/// (tests/Scenarios/Faults.cs), or rank 1 leaving early with Environment.Exit(3) (System.MP
/// then aborts the job rather than let the others wait for it forever).  The time from the
/// fault to the end of the job is printed, never asserted; a job that does not end within a
/// minute fails the test.
/// </summary>
public class FaultTests(ITestOutputHelper log)
{
    public static TheoryData<Scenario, bool, bool> Kills()
    {
        var data = new TheoryData<Scenario, bool, bool>();
        foreach (Scenario s in new[] { Scenario.FaultRecv, Scenario.FaultCollective, Scenario.FaultWindow })
            foreach (var (hosted, openMpi) in new[] { (true, false), (false, false), (true, true) })
                data.Add(s, hosted, openMpi);
        return data;
    }

    [Theory]
    [MemberData(nameof(Kills))]
    public void ARankKilledWhileOthersWaitForItEndsTheJob(Scenario scenario, bool hosted, bool openMpi)
    {
        using var job = LiveJob.Scenario(scenario, hosted, openMpi);
        Dictionary<int, int> pids = job.WaitReady();
        var clock = Stopwatch.StartNew();
        Process.GetProcessById(pids[1]).Kill(); // SIGKILL
        bool ended = job.WaitExit(60);
        log.WriteLine($"{scenario.Name()} {(hosted ? "motor" : "dotnet")} {(openMpi ? "Open MPI" : "MPICH")}: SIGKILL to job end {clock.Elapsed.TotalSeconds:F2} s");
        Assert.True(ended, $"the job did not end within 60 s of SIGKILL to rank 1:\n{job.Output}");
        Assert.NotEqual(0, job.ExitCode);
        job.AssertNoneLeft(pids);
        // The launcher says who died and how.
        // The whole output goes into the message: Assert.Matches would show only its first 50 characters
        // (one MPICH run in CI matched neither form, and its launcher lines were cut off).
        // Hydra names one process: the first it finds ended abnormally.  Once rank 1 is gone it ends
        // rank 0 with SIGKILL too, and sometimes names that one (seen in a clean-clone run on
        // 2026-11-25: "PID <rank 0> ... EXIT CODE: 9"), so either of the job's pids is its answer.
        var said = openMpi ? new Regex(@"process rank 1 with PID \d+ .* exited on signal 9")
                           : new Regex($@"PID ({pids[1]}|{pids[0]}) RUNNING AT .*\n.*(KILLED BY SIGNAL: 9|EXIT CODE: 9)");
        Assert.True(said.IsMatch(job.Output), $"the launcher did not say that a rank of the job (rank 1: pid {pids[1]}) was killed by signal 9:\n{job.Output}");
    }

    [Theory]
    [InlineData(true, false)]
    [InlineData(false, false)]
    [InlineData(true, true)]
    public void ARankLeavingEarlyWithAFailureCodeEndsTheJob(bool hosted, bool openMpi)
    {
        using var job = LiveJob.Scenario(Scenario.FaultExitEarly, hosted, openMpi);
        Dictionary<int, int> pids = job.WaitReady();
        var clock = Stopwatch.StartNew();
        bool ended = job.WaitExit(60);
        log.WriteLine($"fault-exit-early {(hosted ? "motor" : "dotnet")} {(openMpi ? "Open MPI" : "MPICH")}: READY to job end {clock.Elapsed.TotalSeconds:F2} s");
        Assert.True(ended, $"rank 1 left with Environment.Exit(3) and the job did not end within 60 s:\n{job.Output}");
        Assert.Equal(3, job.ExitCode);
        job.AssertNoneLeft(pids);
        Assert.Contains("[rank 1] exiting with code 3 while MPI is in use; aborting the MPI job", job.Output);
        Assert.DoesNotContain("FAIL", job.Output);
    }

    /// <summary>
    /// The finalize watchdog, every run (the real case, MPICH over UCX's TCP transport hanging
    /// in MPI_Finalize across hosts, happens in about half of MultiHostTests' collectives jobs,
    /// not reliably): MOTOR_TEST_FINALIZE_NEVER_RETURNS makes the core wait forever where it
    /// would call MPI_Finalize, after every rank passed its barrier.  Each rank's watchdog must
    /// end it MOTOR_FINALIZE_TIMEOUT seconds later, saying so, and the job must end by itself.
    /// Each watchdog ends its rank with the program's code (0: every scenario passed); under
    /// MPICH that is normally the job's code too.  Open MPI's mpirun counts a rank that ends
    /// without finishing MPI_Finalize as an abnormal end and says so (exit 1): there the
    /// watchdog ends the job, but loudly.
    /// </summary>
    [Theory]
    [InlineData(true, false)]
    [InlineData(false, false)]
    [InlineData(true, true)]
    public void AFinalizeThatNeverReturnsIsEndedByTheWatchdog(bool hosted, bool openMpi)
    {
        var env = new Dictionary<string, string> { ["MOTOR_TEST_FINALIZE_NEVER_RETURNS"] = "1", ["MOTOR_FINALIZE_TIMEOUT"] = "2" };
        Job.Result r = Job.Mpi(2, Job.ScenariosProgram, Scenario.Ordering.Name(), 90, env, hosted,
                               launcher: openMpi ? Job.Launcher.OpenMpi : Job.Launcher.Mpich);
        Assert.False(r.TimedOut, $"the job did not end by itself:\n{r}");
        for (int rank = 0; rank < 2; rank++)
            Assert.Contains($"PASS {Scenario.Ordering.Name()} rank {rank} ", r.Output);
        Assert.Equal(2, Regex.Matches(r.Output, @"motor: MPI_Finalize has not returned although every rank entered it.*\(pid \d+, 2 s\); ending it with code 0").Count);
        if (openMpi)
        {
            Assert.NotEqual(0, r.ExitCode);
            Assert.Contains("exited without calling \"finalize\"", r.Output);
        }
        else if (r.ExitCode != 0)
        {
            // Seen once in a full run on a loaded machine: both watchdogs said code 0, yet Hydra
            // reported one rank with exit code 1 ("BAD TERMINATION"), the other having ended
            // first.  The watchdog gives each rank the program's code (checked above); what the
            // launcher makes of ranks ending without MPI_Finalize is MPICH's.
            Assert.Contains("BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES", r.Output);
            log.WriteLine($"the launcher ended with {r.ExitCode} although each watchdog used code 0:\n{r.Output}");
        }
    }

    /// <summary>
    /// The same with the watchdog off (MOTOR_FINALIZE_TIMEOUT=0): the hang is then the user's
    /// choice and nothing ends it, which shows the ending above is the watchdog's.
    /// </summary>
    [Fact]
    public void WithoutTheWatchdogAFinalizeThatNeverReturnsHangs()
    {
        var env = new Dictionary<string, string> { ["MOTOR_TEST_FINALIZE_NEVER_RETURNS"] = "1", ["MOTOR_FINALIZE_TIMEOUT"] = "0" };
        Job.Result r = Job.Mpi(2, Job.ScenariosProgram, Scenario.Ordering.Name(), 20, env, hosted: true);
        Assert.True(r.TimedOut, $"the job ended although nothing should have ended it:\n{r}");
        Assert.DoesNotContain("MPI_Finalize has not returned", r.Output);
    }
}
