using Scenarios;
using Xunit;

namespace System.MP.Tests;

/// <summary>
/// Use that System.MP refuses before anything reaches MPI, as 2-rank jobs
/// (tests/Scenarios/Failures/RefusedBeforeMpi.cs): bad ranks, tags, slices and null buffers in
/// blocking, nonblocking and list posts (nothing sent, no request left); a freed communicator
/// (no MPI call or core operation counted, its parent goes on); every call after shutdown.
/// </summary>
public class RefusedBeforeMpiTests
{
    [Theory]
    [InlineData(false)]
    [InlineData(true)] // under motor: nonblocking posts reach the core's entries, which trust System.MP's checks
    public void BadArgumentsNeverReachTheWire(bool hosted) => Job.RunScenario(Scenario.BadArgs, 2, hosted: hosted);

    public static TheoryData<int, bool, bool> FreedCommunicatorVariants() => new()
    {
        // ranks, under motor, on the Open MPI core
        { 2, false, false },
        { 2, true, false },
        { 3, false, false },
        { 2, false, true },
        { 2, true, true },
    };

    [Theory]
    [MemberData(nameof(FreedCommunicatorVariants))]
    public void AFreedCommunicatorNeverReachesMpi(int ranks, bool hosted, bool openMpi) =>
        Job.RunScenario(Scenario.FreedCommunicator, ranks, hosted: hosted, launcher: openMpi ? Job.Launcher.OpenMpi : Job.Launcher.Mpich);

    [Fact]
    public void NothingWorksAfterShutdown() => Job.RunScenario(Scenario.AfterShutdown, 2);
}
