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
    /// Open MPI's report of its own exit race (a rank that finished with PID 0) is told apart from
    /// a rank that really ended without MPI_Finalize (named by its PID), which is never run again.
    /// </summary>
    [Fact]
    public void OnlyOpenMpisExitRaceIsRunAgain()
    {
        const string Race = "PASS x rank 1 (19 checks)\nPASS x rank 0 (19 checks)\n" +
                            "--------------------------------------------------------------------------\n" +
                            "mpirun.openmpi has exited due to process rank 0 with PID 0 on\n" +
                            "node vm exiting improperly. There are three reasons this could occur:\n";
        Assert.True(Job.OpenMpiExitRace(new Job.Result(1, Race, false)));
        Assert.False(Job.OpenMpiExitRace(new Job.Result(0, Race, false)), "a job that ended well");
        Assert.False(Job.OpenMpiExitRace(new Job.Result(1, Race, true)), "a job that hung");
        Assert.False(Job.OpenMpiExitRace(new Job.Result(1, Race.Replace("PID 0 on", "PID 4242 on", StringComparison.Ordinal), false)),
                     "a rank that ended improperly, named by its PID");
        Assert.False(Job.OpenMpiExitRace(new Job.Result(1, "mpirun.openmpi has exited due to process rank 1 with PID 4242 on\n" +
                                                           "node vm exited without calling \"finalize\".", false)),
                     "a rank that ended without MPI_Finalize");
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
