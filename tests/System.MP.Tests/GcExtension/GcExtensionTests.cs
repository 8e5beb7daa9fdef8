using Scenarios;
using Xunit;

namespace System.MP.Tests;

/// <summary>
/// The GC and message passing (gc-patches/, tests/Scenarios/GcExtension/GcExtension.cs): nonblocking
/// buffers across compacting GCs, where under motor the GC extension pins them at mark time
/// while in flight and under plain dotnet pinned GCHandles do (each job verifies every byte
/// received), and a rank waiting in MPI that leaves the GC free to run.
/// </summary>
public class GcExtensionTests
{
    [Theory]
    [InlineData(2, false)]
    [InlineData(2, true)]
    [InlineData(3, false)]
    [InlineData(3, true)]
    public void TortureExchangesSurviveCompactingGcs(int ranks, bool hosted) =>
        Job.RunScenario(Scenario.GcTorture, ranks, timeoutSeconds: 240, hosted: hosted);

    /// <summary>
    /// A blocking Send or Recv is one blocking MPI call (mp_send/mp_recv): compacting GCs run
    /// while a rank is inside one, and the arrays, pinned by the caller, receive and send every
    /// element, under both cores and modes.
    /// </summary>
    public static TheoryData<Scenario, bool, bool> BlockingJobs() => Job.EveryCoreAndMode(Scenario.GcBlockingPointToPoint);

    [Theory]
    [MemberData(nameof(BlockingJobs))]
    public void BlockingSendsAndReceivesKeepTheirArraysAcrossCompactingGcs(Scenario scenario, bool hosted, bool openMpi) =>
        Job.RunTwoRanks(scenario, hosted, openMpi);

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void TortureWithATinyGen0BudgetSoGcsHappenInsideOperations(bool hosted) =>
        Job.RunScenario(Scenario.GcTorture, 2, timeoutSeconds: 240, hosted: hosted,
                     env: new Dictionary<string, string> { ["DOTNET_GCgen0size"] = "0x10000" });

    [Theory]
    [InlineData("-p System.GC.Server=true")] // one report per GC from heap 0, with several heaps scanning
    [InlineData("--gc segments")]            // the extension over the segments GC
    public void TortureUnderOtherGcConfigurations(string motorOptions) =>
        Job.RunScenario(Scenario.GcTorture, 2, timeoutSeconds: 240, hosted: true, motorOptions: motorOptions);

    [Theory]
    [InlineData(false, "")]
    [InlineData(true, "")]
    [InlineData(true, "--no-gc-extension")]
    [InlineData(true, "--gc segments")]
    public void AnInFlightBufferKeepsItsAddressAndIsReportedAtMark(bool hosted, string motorOptions) =>
        Job.RunScenario(Scenario.GcPinsInFlight, 2, hosted: hosted, motorOptions: motorOptions);

    /// <summary>
    /// A receive a GC mark finds truncated (under motor, tested on the collecting thread) throws
    /// on its owner's thread with MPI's error class and message, plain and persistent.
    /// </summary>
    public static TheoryData<Scenario, bool, bool> MarkErrorJobs() => Job.EveryCoreAndMode(Scenario.GcMarkCompletesAnError);

    [Theory]
    [MemberData(nameof(MarkErrorJobs))]
    public void AnErrorAGcMarkFindsReachesTheOwnerWithMpisClass(Scenario scenario, bool hosted, bool openMpi) =>
        Job.RunTwoRanks(scenario, hosted, openMpi);

    /// <summary>
    /// The receive of a matched message (MProbe, Message.IRecv) keeps its young array while part
    /// of a long message arrives after compacting GCs, under both cores and modes (and under
    /// constant compaction in GcStressTests).
    /// </summary>
    public static TheoryData<Scenario, bool, bool> MatchedReceiveJobs() => Job.EveryCoreAndMode(Scenario.GcMatchedReceiveInFlight);

    [Theory]
    [MemberData(nameof(MatchedReceiveJobs))]
    public void AMatchedReceiveKeepsItsArrayAcrossCompactingGcs(Scenario scenario, bool hosted, bool openMpi) =>
        Job.RunTwoRanks(scenario, hosted, openMpi);

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void PinnedHeapBuffersAreNeitherPinnedNorRegistered(bool hosted) =>
        Job.RunScenario(Scenario.PinnedHeapBuffers, 2, hosted: hosted);

    /// <summary>
    /// Large and pinned-heap arrays start their data on a cache line under motor (background GC
    /// off by default), and not where the extension cannot do it safely (background GC on) or is
    /// told not to; in every case large arrays, some pinned and some in flight, keep every element
    /// through large-object-heap compactions.
    /// </summary>
    [Theory]
    [InlineData(false, "", "", false)]
    [InlineData(true, "", "", true)]
    [InlineData(true, "--gc segments", "", true)]
    [InlineData(true, "-p System.GC.Server=true", "", true)]
    [InlineData(true, "-p System.GC.Concurrent=true", "", false)]
    [InlineData(true, "", "DOTNET_gcConcurrent=1", false)]
    [InlineData(true, "", "MOTOR_GC_ALIGN=0", false)]
    [InlineData(true, "", "DOTNET_GCgen0size=0x10000", true)]
    public void LargeArraysStartOnCacheLinesAndSurviveCompaction(bool hosted, string motorOptions, string setting, bool aligned)
    {
        var env = new Dictionary<string, string> { ["MOTOR_TEST_EXPECT_ALIGNED"] = aligned ? "1" : "0" };
        if (setting.Length > 0)
            env[setting.Split('=')[0]] = setting.Split('=')[1];
        Job.RunScenario(Scenario.GcLargeArrays, 2, timeoutSeconds: 240, hosted: hosted, env: env, motorOptions: motorOptions);
    }

    /// <summary>
    /// The gen0 budget: motor's default (4 MiB) for workstation GC; MOTOR_GC_GEN0,
    /// DOTNET_GCgen0size (which wins) and the runtime property System.GC.Gen0Size set it;
    /// MOTOR_GC_GEN0=0, server GC, the stock GC alone (--no-gc-extension) and library mode
    /// leave the GC's own.  Server GC asked for on a process that may use one processor
    /// (an affinity mask, a container's quota, DOTNET_PROCESSOR_COUNT) runs as workstation
    /// GC, and gets motor's.  In each case the GC collects at that rate while object graphs
    /// travel between the ranks.
    /// </summary>
    [Theory]
    [InlineData(true, "", "", "default")]
    [InlineData(true, "--gc segments", "", "default")]
    [InlineData(true, "", "MOTOR_GC_GEN0=0x300000", "3145728")]
    [InlineData(true, "", "MOTOR_GC_GEN0=6291456", "6291456")]
    [InlineData(true, "", "MOTOR_GC_GEN0=0", "0")]
    [InlineData(true, "", "DOTNET_GCgen0size=0x500000", "5242880")]
    [InlineData(true, "", "DOTNET_GCgen0size=0x500000;MOTOR_GC_GEN0=0x300000", "5242880")]
    [InlineData(true, "-p System.GC.Gen0Size=0x280000", "", "2621440")]
    [InlineData(true, "-p System.GC.Server=true", "", "server")]
    [InlineData(true, "-p System.GC.Server=true", "DOTNET_PROCESSOR_COUNT=1", "default")]
    [InlineData(true, "--no-gc-extension", "", "0")]
    [InlineData(false, "", "", "0")]
    public void TheGen0BudgetIsMotorsUnlessSetAndTheGcKeepsToIt(bool hosted, string motorOptions, string settings, string expected)
    {
        var env = new Dictionary<string, string> { ["MOTOR_TEST_EXPECT_GEN0"] = expected };
        foreach (string setting in settings.Split(';', StringSplitOptions.RemoveEmptyEntries))
            env[setting.Split('=')[0]] = setting.Split('=')[1];
        Job.RunScenario(Scenario.GcGen0Budget, 2, hosted: hosted, env: env, motorOptions: motorOptions);
    }

    /// <summary>
    /// A MOTOR_GC_GEN0 or a runtime property System.GC.Gen0Size that is not a budget the GC
    /// takes stops motor before the app runs, saying why (a bad MOTOR_GC_GEN0 also with server GC).
    /// </summary>
    [Theory]
    [InlineData("2M", "", "MOTOR_GC_GEN0=2M")]
    [InlineData("65535", "", "MOTOR_GC_GEN0=65535")]
    [InlineData("-1", "", "MOTOR_GC_GEN0=-1")]
    [InlineData("0x", "", "MOTOR_GC_GEN0=0x")]
    [InlineData("abc", "-p System.GC.Server=true", "MOTOR_GC_GEN0=abc")]
    [InlineData("", "-p System.GC.Gen0Size=4M", "the runtime property System.GC.Gen0Size=4M")]
    [InlineData("", "-p System.GC.Gen0Size=1000", "the runtime property System.GC.Gen0Size=1000")]
    public void ABadGen0BudgetIsRefusedAtStart(string value, string motorOptions, string named)
    {
        var env = new Dictionary<string, string> { ["MOTOR_TEST_EXPECT_GEN0"] = "default" };
        if (value.Length > 0)
            env["MOTOR_GC_GEN0"] = value;
        Job.Result r = Job.Mpi(2, Job.ScenariosProgram, Job.ScenarioArguments([Scenario.GcGen0Budget]), hosted: true,
                               env: env, motorOptions: motorOptions);
        Assert.False(r.TimedOut, r.ToString());
        Assert.NotEqual(0, r.ExitCode);
        Assert.Contains($"{named} is not a gen0 budget", r.Output);
        Assert.DoesNotContain("PASS", r.Output);
    }

    /// <summary>The GC extension over the Open MPI core.</summary>
    [Theory]
    [InlineData(Scenario.GcPinsInFlight)]
    [InlineData(Scenario.GcTorture)]
    [InlineData(Scenario.GcLargeArrays)]
    [InlineData(Scenario.GcGen0Budget)]
    public void UnderOpenMpi(Scenario scenario) =>
        Job.RunScenario(scenario, 2, hosted: true, launcher: Job.Launcher.OpenMpi,
                        env: new Dictionary<string, string> { ["MOTOR_TEST_EXPECT_ALIGNED"] = "1", ["MOTOR_TEST_EXPECT_GEN0"] = "default" });

    /// <summary>A rank waiting in a blocking receive never holds off the GC of its other threads.</summary>
    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void AWaitingRankDoesNotStarveTheGc(bool hosted) => Job.RunScenario(Scenario.GcNotStarved, 2, hosted: hosted);
}
