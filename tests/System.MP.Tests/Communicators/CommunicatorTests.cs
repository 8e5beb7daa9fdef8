using Scenarios;
using Xunit;

namespace System.MP.Tests;

/// <summary>
/// Communicators (Communicator.cs, Communicator.Groups.cs, Group.cs): Dup, Split, disposal,
/// groups, names and Cartesian topologies, on one rank in process and on 1 to 4 ranks
/// (tests/Scenarios/Communicators/Communicators.cs, PointToPointBuffers.cs).
/// </summary>
public class CommunicatorTests
{
    public static TheoryData<Scenario, int> Jobs()
    {
        var data = new TheoryData<Scenario, int>();
        foreach (Scenario scenario in new[] { Scenario.Groups, Scenario.Cartesian })
            for (int ranks = 1; ranks <= 4; ranks++)
                data.Add(scenario, ranks);
        return data;
    }

    [Theory]
    [MemberData(nameof(Jobs))]
    public void MultiRank(Scenario scenario, int ranks)
    {
        Job.Result r = Job.RunScenario(scenario, ranks);
        Assert.DoesNotContain("leaked", r.Output); // MPI objects are freed before finalize
    }

    [Fact]
    public void DupAndSplitGiveIndependentCommunicators() => Job.RunScenario(Scenario.DupSplit, 4);

    [Fact]
    public void DisposedCommunicatorThrows()
    {
        Communicator world = Communicator.World;
        Communicator d = world.Dup();
        Assert.Equal(1, d.Size);
        d.Dispose();
        Assert.True(d.IsDisposed);
        Assert.Throws<ObjectDisposedException>(() => d.Send(new int[1], 0, 0));
        Assert.Throws<ObjectDisposedException>(() => d.Recv(new int[1], 0, 0));
        Assert.Throws<ObjectDisposedException>(() => d.ISend(new int[1], 0, 0));
        Assert.Throws<ObjectDisposedException>(() => d.Barrier());
        Assert.Throws<ObjectDisposedException>(() => d.Dup());
        Assert.Throws<ObjectDisposedException>(() => _ = d.Size);
        world.Dispose();
        Assert.False(world.IsDisposed);
        Assert.Null(world.Split(Mpi.Undefined, 0));
    }
}
