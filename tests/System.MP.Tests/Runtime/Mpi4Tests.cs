using Scenarios;
using Xunit;

namespace System.MP.Tests;

/// <summary>
/// MPI-4 (tests/Scenarios/Runtime/Mpi4.cs) as 2-rank jobs on the MPICH core and on the Open MPI core, in
/// library mode and under motor: sessions beside the world and on their own (before the world is
/// initialized), partitioned exchanges, the persistent v-collectives, scans and reduce-scatters,
/// each misuse and an error raised inside MPI; on Open MPI 4.1, which lacks them, each call
/// throws NotSupportedException naming the library.  Spawn with an Info where spawning works
/// (Open MPI): the "wdir" hint is honoured.
/// </summary>
public class Mpi4Tests
{
    private static readonly Scenario[] Together = [Scenario.Mpi4Sessions, Scenario.Mpi4Partitioned, Scenario.Mpi4PersistentCollectives, Scenario.Mpi4Supports];

    public static TheoryData<bool, bool> CoresAndModes() => Job.CoresAndModes();

    private static Job.Launcher LauncherOf(bool openMpi) => openMpi ? Job.Launcher.OpenMpi : Job.Launcher.Mpich;

    [Theory]
    [MemberData(nameof(CoresAndModes))]
    public void SessionsPartitionedAndPersistentCollectives(bool hosted, bool openMpi) =>
        Job.RunScenarios(Together, 2, hosted: hosted, launcher: LauncherOf(openMpi));

    /// <summary>
    /// Messages above int.MaxValue bytes: whole on MPICH; on Open MPI 4.1 refused before anything
    /// is posted, also by a SendRecv on both ranks at once (which waited forever before).
    /// </summary>
    [Theory]
    [MemberData(nameof(CoresAndModes))]
    public void LargeMessagesTravelWholeOrAreRefusedBeforeAnythingIsPosted(bool hosted, bool openMpi) =>
        Job.RunScenario(Scenario.Mpi4LargeCount, 2, hosted: hosted, launcher: LauncherOf(openMpi));

    [Theory]
    [MemberData(nameof(CoresAndModes))]
    public void SessionsOnTheirOwn(bool hosted, bool openMpi) =>
        Job.RunScenario(Scenario.Mpi4SessionsAlone, 2, hosted: hosted, launcher: LauncherOf(openMpi));

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void SpawnHonoursTheWdirHintUnderOpenMpi(bool hosted) =>
        Job.RunScenario(Scenario.Mpi4SpawnInfo, 2, hosted: hosted, launcher: Job.Launcher.OpenMpi,
                        env: new Dictionary<string, string> { ["MOTOR_TEST_DYNAMIC"] = "required" });

    [Fact]
    public void SpawnWithAnInfoFailsClearlyWithoutDynamicProcesses() => Job.RunScenario(Scenario.Mpi4SpawnInfo, 2);

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void SpawnMultipleStartsEveryCommandWithItsHintsUnderOpenMpi(bool hosted) =>
        Job.RunScenario(Scenario.Mpi4SpawnMultiple, 2, hosted: hosted, launcher: Job.Launcher.OpenMpi,
                        env: new Dictionary<string, string> { ["MOTOR_TEST_DYNAMIC"] = "required" });

    [Fact]
    public void SpawnMultipleFailsClearlyWithoutDynamicProcesses() => Job.RunScenario(Scenario.Mpi4SpawnMultiple, 2);
}
