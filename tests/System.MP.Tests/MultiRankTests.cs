using Xunit;

namespace System.MP.Tests;

/// <summary>
/// Point-to-point behaviour across real MPI jobs: each scenario runs on every
/// rank, checks the data it received and prints PASS or FAIL per rank.
/// </summary>
public class MultiRankTests
{
    public static TheoryData<string, int> Scenarios => new()
    {
        { "types", 2 },
        { "zero-length", 2 },
        { "procnull", 2 },
        { "any-source-tag", 3 },
        { "ordering", 2 },
        { "probe", 2 },
        { "mprobe", 2 },
        { "nonblocking", 2 },
        { "cancel", 2 },
        { "syncsend", 2 },
        { "truncate", 2 },
        { "sendrecv-ring", 3 },
        { "dup-split", 4 },
        { "bad-args", 2 },
        { "managed-exceptions", 2 },
        { "gc-not-starved", 2 },
        { "after-shutdown", 2 },
        { "dropped-request", 2 },
    };

    [Theory]
    [MemberData(nameof(Scenarios))]
    public void Scenario(string name, int ranks) => Job.Scenario(name, ranks);

    /// <summary>
    /// A send to the rank itself, disposed while pending, is still received, in order, and
    /// released (scenario dropped-self-send): on 2 ranks, both cores, library mode and motor.
    /// </summary>
    [Theory]
    [InlineData(false, false)]
    [InlineData(true, false)]
    [InlineData(false, true)]
    [InlineData(true, true)]
    public void ADisposedSendToOwnRankIsStillReceived(bool hosted, bool openMpi) =>
        Job.Scenario("dropped-self-send", 2, timeoutSeconds: 60, hosted: hosted,
                     launcher: openMpi ? Job.Launcher.OpenMpi : Job.Launcher.Mpich);

    [Fact]
    public void AbortEndsTheWholeJob()
    {
        Job.Result r = Job.Mpi(2, Job.ManagedProgram("Scenarios"), "abort", timeoutSeconds: 60);
        Assert.False(r.TimedOut, $"the job hung after Mpi.Abort:\n{r}");
        Assert.Equal(7, r.ExitCode); // hydra passes the abort code on
        Assert.Contains("rank 1 aborting with 7", r.Output);
        Assert.DoesNotContain("must not get past", r.Output);
    }

    [Fact]
    public void UnknownScenarioIsAnError()
    {
        Job.Result r = Job.Run("dotnet", $"{Job.ManagedProgram("Scenarios")} no-such-scenario", 60);
        Assert.Equal(2, r.ExitCode);
        Assert.Contains("usage", r.Output);
    }
}
