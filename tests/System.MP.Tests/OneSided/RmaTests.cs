using Scenarios;
using Xunit;

namespace System.MP.Tests;

/// <summary>
/// One-sided communication (Window.cs, Window.Typed.cs, Info.cs) as 2-rank jobs
/// (tests/Scenarios/OneSided/Rma.cs) in library mode and under motor, on the MPICH core and on the Open MPI
/// core, plus one 3-rank job: every operation under every kind of epoch with its values checked,
/// arrays moved by compacting GCs while operations on others are in flight, and every failure mode;
/// dynamic windows (attach, detach, operations at addresses, their misuse, attached arrays under
/// compacting GCs).
/// </summary>
public class RmaTests
{
    public static TheoryData<Scenario, bool, bool> Jobs() =>
        Job.EveryCoreAndMode(Scenario.RmaOperations, Scenario.RmaGcTorture, Scenario.RmaMisuse,
            Scenario.RmaDynamic, Scenario.RmaDynamicGcTorture, Scenario.RmaOrdinaryArray);

    [Theory]
    [MemberData(nameof(Jobs))]
    public void TwoRanks(Scenario scenario, bool hosted, bool openMpi) =>
        Job.RunTwoRanks(scenario, hosted, openMpi);

    [Fact]
    public void ThreeRanksRunEveryOperation() => Job.RunScenario(Scenario.RmaOperations, 3, hosted: true);
}
