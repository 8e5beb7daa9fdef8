using Scenarios;
using Xunit;

namespace System.MP.Tests;

/// <summary>
/// Graph and distributed-graph topologies and neighborhood collectives (TopologyCommunicator and its
/// classes): 2-rank jobs (tests/Scenarios/Communicators/Topologies.cs) in library mode and under motor, on the MPICH
/// core and on the Open MPI core — queries, misuse refused before MPI and an error inside MPI, every
/// neighborhood collective checked value by value on Cartesian, graph and dist-graph communicators
/// (persistent forms on MPICH 4, NotSupportedException on Open MPI 4.1) — and a 3-rank directed,
/// weighted graph on each core.
/// </summary>
public class TopologyTests
{
    public static TheoryData<Scenario, bool, bool> Jobs() =>
        Job.EveryCoreAndMode(Scenario.TopologyGraphs, Scenario.TopologyNeighborhood);

    [Theory]
    [MemberData(nameof(Jobs))]
    public void TwoRanks(Scenario scenario, bool hosted, bool openMpi) =>
        Job.RunTwoRanks(scenario, hosted, openMpi);

    // One mode per core keeps the 3-rank jobs few: MPICH in library mode, Open MPI under motor.
    [Theory]
    [InlineData(false, false)]
    [InlineData(true, true)]
    public void ADirectedWeightedGraphOnThreeRanks(bool hosted, bool openMpi) =>
        Job.RunScenario(Scenario.TopologyDirected, 3, hosted: hosted, launcher: openMpi ? Job.Launcher.OpenMpi : Job.Launcher.Mpich);
}
