using Scenarios;
using Xunit;

namespace System.MP.Tests;

/// <summary>
/// The harness every job test runs through (<see cref="Job.Run"/>): a process a run started that
/// outlives it, out of its tree, is ended with the run (as a daemon on a host whose link went
/// down must be: MultiHostTests), and the run is reported as timed out.
/// </summary>
public class JobTests
{
    [Fact]
    public void AProcessLeftHoldingTheOutputIsEndedWithTheRun()
    {
        // sh ends at once; its child, reparented, keeps the output open.
        Job.Result r = Job.Run("sh", "-c \"sleep 300 & echo $!\"", 60, outputGraceSeconds: 2);
        int pid = int.Parse(r.Output.Split('\n')[0].Trim(), Globalization.CultureInfo.InvariantCulture);
        Assert.True(r.TimedOut, r.ToString());
        Assert.Contains($"ended what the run left behind: {pid} (sleep 300)", r.Output);
        var clock = Diagnostics.Stopwatch.StartNew();
        while (Running(pid) && clock.Elapsed < TimeSpan.FromSeconds(30))
            Thread.Sleep(50);
        Assert.False(Running(pid), $"pid {pid} still runs after the run ended:\n{r}");
    }

    [Fact]
    public void ARunThatEndsWithItsProcessesEndsNothingElse()
    {
        Job.Result r = Job.Run("sh", "-c \"echo $" + Job.JobTagVariable + "\"", 60);
        Assert.False(r.TimedOut, r.ToString());
        Assert.Equal(32, r.Output.Trim().Length); // the run's tag reached its process
        Assert.DoesNotContain("ended what the run left behind", r.Output);
    }

    /// <summary>
    /// Open MPI's report of its own exit race is told apart from a rank that really ended without
    /// finishing MPI_Finalize (which mpirun reports in the same words) by every rank's line saying
    /// its MPI_Finalize returned; only the race is run again.
    /// </summary>
    [Fact]
    public void OnlyOpenMpisExitRaceIsRunAgain()
    {
        const string Report = "--------------------------------------------------------------------------\n" +
                              "mpirun.openmpi has exited due to process rank 0 with PID 0 on\n" +
                              "node vm exiting improperly. There are three reasons this could occur:\n";
        string both = $"PASS x rank 1 (19 checks)\nPASS x rank 0 (19 checks)\n{Job.FinalizedLine} 1\n{Job.FinalizedLine} 0\n" + Report;
        Assert.True(Job.OpenMpiExitRace(new Job.Result(1, both, false), 2));
        Assert.False(Job.OpenMpiExitRace(new Job.Result(0, both, false), 2), "a job that ended well");
        Assert.False(Job.OpenMpiExitRace(new Job.Result(1, both, true), 2), "a job that hung");
        Assert.False(Job.OpenMpiExitRace(new Job.Result(1, both.Replace($"{Job.FinalizedLine} 0\n", "", StringComparison.Ordinal), false), 2),
                     "rank 0 did not say its MPI_Finalize returned");
        Assert.False(Job.OpenMpiExitRace(new Job.Result(1, both, false), 3), "rank 2 did not say so");
    }

    /// <summary>
    /// A rank that ends inside MPI_Finalize (the finalize watchdog's ending, under Open MPI) is not
    /// taken for the race: it never says its MPI_Finalize returned, so it is not run again.
    /// </summary>
    [Fact]
    public void ARankEndedInsideFinalizeIsNotTakenForTheExitRace()
    {
        var env = new Dictionary<string, string>
        {
            ["MOTOR_TEST_FINALIZE_NEVER_RETURNS"] = "1", ["MOTOR_FINALIZE_TIMEOUT"] = "2", [Job.FinalizedVariable] = "1",
        };
        Job.Result r = Job.Mpi(2, Job.ScenariosProgram, Scenario.Ordering.Name(), 90, env, hosted: true, launcher: Job.Launcher.OpenMpi);
        Assert.False(r.TimedOut, r.ToString());
        Assert.Contains("exited without calling \"finalize\"", r.Output);
        Assert.DoesNotContain(Job.FinalizedLine, r.Output);
        Assert.False(Job.OpenMpiExitRace(r, 2), r.ToString());
    }

    /// <summary>Whether the process exists and is not a zombie.</summary>
    private static bool Running(int pid)
    {
        try
        {
            string stat = File.ReadAllText($"/proc/{pid}/stat");
            return stat[(stat.LastIndexOf(')') + 2)..][0] != 'Z';
        }
        catch (IOException)
        {
            return false;
        }
    }
}
