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
