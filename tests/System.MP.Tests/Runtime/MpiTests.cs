using Scenarios;
using Xunit;

namespace System.MP.Tests;

/// <summary>
/// The environment (Mpi.cs, Diagnostics/): initialization on first use, environment queries,
/// statistics and the published meter.  What fails (calls after shutdown, an abort, managed
/// exceptions under MPI) is tested in Failures/.
/// </summary>
public class MpiTests
{
    private static Communicator World => Communicator.World;

    [Fact]
    public void WorldInitializesOnFirstUse()
    {
        Assert.Equal(0, World.Rank);
        Assert.Equal(1, World.Size);
        Assert.True(Mpi.IsInitialized);
        Assert.False(Mpi.IsHosted);
        Assert.Equal(1, Communicator.Self.Size);
        Mpi.Init(ThreadLevel.Multiple); // idempotent: keeps the first level
        Assert.True(Mpi.ThreadLevel >= ThreadLevel.Single);
    }

    [Fact]
    public void EnvironmentQueries()
    {
        _ = World;
        Assert.Contains("MPICH", Mpi.LibraryVersion);
        Assert.False(string.IsNullOrEmpty(Mpi.LibraryPath));
        Assert.False(string.IsNullOrEmpty(Mpi.ProcessorName));
        double t0 = Mpi.Wtime();
        Thread.Sleep(20);
        Assert.True(Mpi.Wtime() - t0 >= 0.015);
        Assert.True(Mpi.Wtick > 0 && Mpi.Wtick < 1);
        Assert.Throws<ArgumentOutOfRangeException>(() => Mpi.Init((ThreadLevel)9));
    }

    [Fact]
    public void StatisticsCountOperationsAndThePublishedMeterAgrees()
    {
        var c = Communicator.Self;
        MpiStatistics before = Mpi.GetStatistics();
        Request r = c.IRecv(new byte[100], 0, 21);
        c.Send(new byte[100], 0, 21);
        r.Wait();
        c.Allreduce(1, Op.Sum);
        MpiStatistics after = Mpi.GetStatistics();
        Assert.Equal(2, after.PointToPointOperations - before.PointToPointOperations);
        Assert.Equal(200, after.PointToPointBytes - before.PointToPointBytes);
        Assert.Equal(1, after.CollectiveOperations - before.CollectiveOperations);
        Assert.Equal(2, after.PinsAvoided - before.PinsAvoided); // the blocking send and the allreduce
        Assert.Equal(0, after.BuffersRegistered - before.BuffersRegistered); // library mode pins with GCHandles
        Assert.Equal(0, after.ActiveRequests);

        long seen = MeterProbe.ObserveOperations();
        Assert.True(seen >= after.PointToPointOperations + after.CollectiveOperations, $"meter reported {seen}");
    }
}
