using Scenarios;
using Xunit;

namespace System.MP.Tests;

/// <summary>
/// RequestList (src/System.MP/Requests/RequestList.cs, the list overloads of ISend/ISsend/IRecv in
/// Communicator.PointToPoint.cs): windows posted into a reusable list and completed
/// together without allocating per operation.  As 2-rank jobs (tests/Scenarios/Requests/RequestLists.cs)
/// in library mode and under motor, on both cores, and on one rank in this process.
/// </summary>
public class RequestListTests
{
    private static Communicator Self => Communicator.Self;

    public static TheoryData<Scenario, bool, bool> Jobs() =>
        Job.EveryCoreAndMode(Scenario.RequestListWindows, Scenario.RequestListErrors, Scenario.RequestListAbandoned);

    [Theory]
    [MemberData(nameof(Jobs))]
    public void TwoRanks(Scenario scenario, bool hosted, bool openMpi) =>
        Job.RunTwoRanks(scenario, hosted, openMpi);

    [Fact]
    public void AWindowToSelfCompletesInPostingOrder()
    {
        using var list = new RequestList(8);
        var got = new int[4][];
        for (int i = 0; i < 4; i++)
            Assert.Equal(i, Self.IRecv(got[i] = new int[i + 1], 0, 40 + i, list));
        for (int i = 0; i < 4; i++)
            Assert.Equal(4 + i, Self.ISend(Enumerable.Repeat(i, i + 1).ToArray(), 0, 40 + i, list));
        var statuses = new Status[8];
        list.WaitAll(statuses);
        Assert.Equal(0, list.Count);
        for (int i = 0; i < 4; i++)
        {
            Assert.Equal(Enumerable.Repeat(i, i + 1), got[i]);
            Assert.Equal(40 + i, statuses[i].Tag);
            Assert.Equal(4L * (i + 1), statuses[i].ByteCount);
        }
        Assert.Equal(0L, Mpi.GetStatistics().PinnedHandles);
    }

    [Fact]
    public void ARefusedPostLeavesTheListAsItWas()
    {
        using var list = new RequestList(1);
        var got = new int[1];
        Self.IRecv(got, 0, 50, list);
        Assert.Throws<InvalidOperationException>(() => Self.ISend(new[] { 1 }, 0, 50, list));
        Assert.Throws<ArgumentOutOfRangeException>(() => Self.ISend(new[] { 1 }, 0, -1, list));
        Assert.Equal(1, list.Count);
        Assert.False(list.TestAll());
        Self.Send(new[] { 7 }, 0, 50);
        Assert.True(SpinTestAll(list));
        Assert.Equal(7, got[0]);
    }

    [Fact]
    public void ATruncatedReceiveThrowsAndWhatMpiLeftPendingCompletesLater()
    {
        using var list = new RequestList(3);
        var other = new int[2];
        Self.IRecv(new int[1], 0, 51, list);
        Self.IRecv(other, 0, 52, list);
        Self.ISend(new[] { 1, 2, 3 }, 0, 51, list);
        Self.Send(new[] { 8, 9 }, 0, 52);
        Assert.Throws<MessageTruncatedException>(() => list.WaitAll());
        if (list.Count > 0) // MPICH stops at the error: the rest stays in the list
            list.WaitAll();
        Assert.Equal(0, list.Count);
        Assert.Equal(new[] { 8, 9 }, other);
        Assert.Equal(0L, Mpi.GetStatistics().PinnedHandles);
    }

    [Fact]
    public void ACapacityOutsideOneToMaxCapacityIsRefused()
    {
        Assert.Throws<ArgumentOutOfRangeException>(() => new RequestList(0));
        Assert.Throws<ArgumentOutOfRangeException>(() => new RequestList(RequestList.MaxCapacity + 1));
        using var list = new RequestList(2);
        Assert.Equal(2, list.Capacity);
    }

    [Fact]
    public void AProcNullReceiveCompletesWithProcNullsStatusAndItsPinIsReleased()
    {
        var statuses = new Status[2];
        var data = new int[3];
        using (var list = new RequestList(2))
        {
            Assert.Equal(0, Self.IRecv(data, Mpi.ProcNull, 5, list));
            Assert.Equal(1, Self.ISend(data, Mpi.ProcNull, 5, list));
            Assert.True(list.TestAll(statuses)); // complete at once: MPICH's MPI_Testall would not write its status
            Assert.Equal(Mpi.ProcNull, statuses[0].Source);
            Assert.Equal(Mpi.AnyTag, statuses[0].Tag);
            Assert.Equal(0L, statuses[0].ByteCount);
            // Disposed with a ProcNull receive posted: complete, so its pin goes at once.
            Self.IRecv(data, Mpi.ProcNull, 5, list);
        }
        Assert.Equal(0L, Mpi.GetStatistics().PinnedHandles);
        Assert.Equal(0, Request.OrphanedHolds);
    }

    private static bool SpinTestAll(RequestList list)
    {
        for (int i = 0; i < 1_000_000; i++)
            if (list.TestAll())
                return true;
        return false;
    }
}
