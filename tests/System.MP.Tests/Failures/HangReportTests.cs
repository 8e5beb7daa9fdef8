using System.Text.RegularExpressions;
using Scenarios;
using Xunit;

namespace System.MP.Tests;

/// <summary>
/// The hang report (src/System.MP/Diagnostics/HangReport.cs): a deadlocked job says, rank by
/// rank, which call each rank waits in, on which communicator, for whom and with which tag,
/// for how long, and from where in the program (the blocked thread's managed stack); with
/// <c>abort</c> it then ends the job instead of hanging.  Turned on by
/// <c>motor --hang-report</c> and, in library mode, <c>MOTOR_HANG_REPORT</c>.
/// </summary>
public class HangReportTests
{
    private static string Scenarios => Job.ManagedProgram("Scenarios");

    public static TheoryData<bool, bool> Modes => new() { { true, false }, { false, false }, { true, true } };

    /// <summary>A 2-rank run of a scenario with the hang report on (1 s, abort unless said otherwise).</summary>
    private static Job.Result Run(Scenario scenario, bool hosted, bool openMpi, string setting = "1,abort") =>
        Job.Mpi(2, Scenarios, scenario.Name(), timeoutSeconds: 90, hosted: hosted,
                motorOptions: hosted ? $"--hang-report {setting}" : "",
                env: hosted ? null : new Dictionary<string, string> { ["MOTOR_HANG_REPORT"] = setting },
                launcher: openMpi ? Job.Launcher.OpenMpi : Job.Launcher.Mpich);

    private static void AssertReport(Job.Result r, int rank, string call, string method)
    {
        string head = $"motor hang report: rank {rank} of 2 (pid ";
        int at = r.Output.IndexOf(head, StringComparison.Ordinal);
        Assert.True(at >= 0, $"no hang report from rank {rank}:\n{r}");
        string report = r.Output[at..];
        string first = report[..report.IndexOf('\n')];
        Assert.Matches($@"has waited [0-9.]+ s in {Regex.Escape(call)} \(thread \d+", first);
        // The blocked thread's stack, from the scenario's method out.
        Assert.Contains($"Scenarios.Hangs.{method}(", report);
    }

    [Theory]
    [MemberData(nameof(Modes))]
    public void AReceiveReceiveDeadlockNamesBothReceivesAndEnds(bool hosted, bool openMpi) =>
        Deadlock(Scenario.HangRecvRecv, hosted, openMpi, "RecvRecv", "Recv(source 1, tag 7) on World", "Recv(source 0, tag 7) on World");

    [Theory]
    [MemberData(nameof(Modes))]
    public void ACollectiveMismatchNamesBothCollectivesAndEnds(bool hosted, bool openMpi) =>
        Deadlock(Scenario.HangBcastBarrier, hosted, openMpi, "BcastBarrier", "Bcast(root 1) on World", "Barrier on World");

    [Theory]
    [MemberData(nameof(Modes))]
    public void ASendRecvWaitingForAnUnsentTagNamesBothPeersAndEnds(bool hosted, bool openMpi) =>
        Deadlock(Scenario.HangSendRecvTags, hosted, openMpi, "SendRecvTags",
                 "SendRecv(dest 1, tag 1; source 1, tag 2) on World", "SendRecv(dest 0, tag 1; source 0, tag 2) on World");

    /// <summary>
    /// With hang reports on, SendRecv is still the core's one call, which posts a message to the
    /// calling rank itself before the receive: Open MPI 4.1 reports that message's truncation
    /// only in that order (scenario truncate's SendRecv to itself; two steps from System.MP,
    /// receive first, lost the error there).
    /// </summary>
    [Theory]
    [InlineData(true, true)]
    [InlineData(false, true)]
    [InlineData(true, false)]
    public void TruncationOfASendRecvToItselfIsReportedWithHangReportsOn(bool hosted, bool openMpi)
    {
        Job.Result r = Run(Scenario.Truncate, hosted, openMpi, setting: "60");
        Assert.True(r.ExitCode == 0, r.ToString());
        Assert.Contains("PASS truncate rank 1 ", r.Output);
        Assert.DoesNotContain("FAIL", r.Output);
    }

    /// <summary>Both ranks report their call, then the hang report ends the job (the scenario never gets past the deadlock).</summary>
    private static void Deadlock(Scenario scenario, bool hosted, bool openMpi, string method, string call0, string call1)
    {
        Job.Result r = Run(scenario, hosted, openMpi);
        Assert.False(r.TimedOut, $"the deadlock was not ended by the hang report:\n{r}");
        Assert.NotEqual(0, r.ExitCode);
        AssertReport(r, 0, call0, method);
        AssertReport(r, 1, call1, method);
        Assert.Contains("is still blocked; aborting the job", r.Output);
        Assert.DoesNotContain("FAIL", r.Output);
    }

    /// <summary>Without abort the report is printed once and the rank goes on waiting; served, it finishes.</summary>
    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public void ALongWaitIsReportedOnceAndTheJobGoesOn(bool hosted)
    {
        Job.Result r = Run(Scenario.HangServedLate, hosted, openMpi: false, setting: "1");
        Assert.True(r.ExitCode == 0, r.ToString());
        AssertReport(r, 1, "Recv(source 0, tag 8) on World", "ServedLate");
        Assert.Equal(1, r.Output.Split("motor hang report: rank 1 of 2").Length - 1);
        Assert.DoesNotContain("aborting", r.Output);
        Assert.Contains("PASS hang-served-late rank 1 ", r.Output);
    }

    [Fact]
    public void AMalformedSettingIsRefusedBeforeMpiStarts()
    {
        Job.Result motor = Job.Run(Job.Motor, $"--hang-report soon {Scenarios} {Scenario.HangServedLate.Name()}", 60);
        Assert.Equal(2, motor.ExitCode); // motor's bad-usage status
        Assert.Contains("motor: --hang-report 'soon' is not SECONDS or SECONDS,abort", motor.Output);

        Job.Result library = Job.Run("dotnet", $"{Scenarios} {Scenario.HangServedLate.Name()}", 60,
                                     new Dictionary<string, string> { ["MOTOR_HANG_REPORT"] = "0,abort" });
        Assert.NotEqual(0, library.ExitCode);
        Assert.Contains("System.ArgumentException: The hang report setting '0,abort'", library.Output);
    }
}
