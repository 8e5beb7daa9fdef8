using Scenarios;
using Xunit;

namespace System.MP.Tests;

/// <summary>
/// The object reductions (OReduce, OAllreduce, OScan, OExscan, OReduceScatter), OAlltoall(v),
/// OScatterv/OGatherv, buffer ReduceScatter across an intercommunicator and communicator
/// attributes — as jobs (tests/Scenarios/Objects/ObjectCollectives.cs) on the MPICH and
/// the Open MPI core, in library mode and under motor; and on one rank in process.
/// </summary>
public class ObjectCollectiveTests
{
    private static Communicator Self => Communicator.Self;

    /// <summary>Both scenarios in one job (the attributes last: it ends with Shutdown), on both cores in both modes.</summary>
    [Theory]
    [InlineData(false, false)]
    [InlineData(false, true)]
    [InlineData(true, false)]
    [InlineData(true, true)]
    public void RunOnTwoRanks(bool hosted, bool openMpi) =>
        Job.RunScenarios([Scenario.ObjectCollectivesReductions, Scenario.CommunicatorAttributes], 2, hosted: hosted,
                         launcher: openMpi ? Job.Launcher.OpenMpi : Job.Launcher.Mpich);

    /// <summary>Three ranks (uneven blocks, the order of three operands) once per core, one of them hosted.</summary>
    [Theory]
    [InlineData(true, false)]
    [InlineData(false, true)]
    public void RunsOnThreeRanks(bool hosted, bool openMpi) =>
        Job.RunScenario(Scenario.ObjectCollectivesReductions, 3, hosted: hosted, launcher: openMpi ? Job.Launcher.OpenMpi : Job.Launcher.Mpich);

    /// <summary>
    /// The symmetric OBcast, OSendRecv, OScatter of one element per rank, element-wise operations
    /// on arrays, Op.Create over a [Transportable] class and the object collectives across an
    /// intercommunicator: 2 ranks in both modes on both MPIs, and 3 (a group of two) once per MPI.
    /// </summary>
    [Theory]
    [InlineData(2, false, false)]
    [InlineData(2, false, true)]
    [InlineData(2, true, false)]
    [InlineData(2, true, true)]
    [InlineData(3, true, false)]
    [InlineData(3, false, true)]
    public void EverydayForms(int ranks, bool hosted, bool openMpi) =>
        Job.RunScenario(Scenario.ObjectEverydayForms, ranks, hosted: hosted, launcher: openMpi ? Job.Launcher.OpenMpi : Job.Launcher.Mpich);

    [Fact]
    public void OneRankReducesToItsOwnValue()
    {
        Assert.Equal("a", Self.OAllreduce("a", (x, y) => x + y));
        Assert.Equal("a", Self.OReduce("a", Op.Max, 0));
        Assert.Equal("a", Self.OScan("a", Op.Sum));
        Assert.Null(Self.OExscan("a", Op.Sum));
        Assert.Equal(new[] { 4, 5 }, Self.OReduceScatter(new[] { 4, 5 }, [2], Op.Sum));
        Assert.Equal(new[] { "x" }, Self.OAlltoall(new[] { "x" }));
        Assert.Equal(new[] { 1, 2 }, Self.OAlltoallv(new[] { new[] { 1, 2 } })[0]);
        Assert.Equal(new[] { 3 }, Self.OScatterv(new[] { new[] { 3 } }, 0));
        Assert.Equal(new[] { 7 }, Self.OGatherv(new[] { 7 }, 0)![0]);
        // The function never runs on one value, so even a throwing one gives the value back.
        Assert.Equal(1, Self.OAllreduce(1, (x, y) => throw new InvalidOperationException()));
        Assert.Throws<ArgumentException>(() => Self.OReduceScatter(new[] { 1 }, [2], Op.Sum));
    }
}
