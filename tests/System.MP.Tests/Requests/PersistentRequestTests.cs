using Scenarios;
using Xunit;

namespace System.MP.Tests;

/// <summary>
/// Persistent requests (PersistentRequest.cs, the Init methods of Communicator): on one rank in
/// process (self messages), and as 2-rank jobs (tests/Scenarios/Requests/Persistent.cs) in library mode and
/// under motor, on the MPICH core and on the Open MPI core: a 1000-round halo exchange, arrays moved
/// by the GC between instances (and never during one), dropped requests, misuse, and persistent
/// collectives against their blocking forms (NotSupportedException on Open MPI 4.1, which lacks them).
/// </summary>
public class PersistentRequestTests
{
    private static Communicator Self => Communicator.Self;

    public static TheoryData<Scenario, bool, bool> Jobs() =>
        Job.EveryCoreAndMode(Scenario.PersistentHalo, Scenario.PersistentGcTorture, Scenario.PersistentDropped, Scenario.PersistentMisuse, Scenario.PersistentCollectives);

    [Theory]
    [MemberData(nameof(Jobs))]
    public void TwoRanks(Scenario scenario, bool hosted, bool openMpi) =>
        Job.RunTwoRanks(scenario, hosted, openMpi);

    [Fact]
    public void ASendAndReceiveRunManyInstances()
    {
        var send = new long[3];
        var recv = new long[5];
        using PersistentRequest r = Self.RecvInit(recv, 1, 3, 0, 40);
        using PersistentRequest s = Self.SendInit(send, 0, 40);
        for (int i = 0; i < 10; i++)
        {
            send[0] = i;
            send[2] = -i;
            PersistentRequest.StartAll(r, s);
            Assert.True(r.IsActive && s.IsActive);
            Status[] st = PersistentRequest.WaitAll(r, s);
            Assert.Equal(3, st[0].GetCount<long>());
            Assert.Equal(new long[] { 0, i, 0, -i, 0 }, recv);
            Assert.False(r.IsActive || s.IsActive);
        }
    }

    [Fact]
    public void AnInactiveRequestCompletesAtOnceWithAnEmptyStatus()
    {
        using PersistentRequest r = Self.RecvInit(new int[1], 0, 41);
        Status st = r.Wait();
        Assert.Equal(Mpi.AnySource, st.Source);
        Assert.Equal(Mpi.AnyTag, st.Tag);
        Assert.Equal(0, st.ByteCount);
        Assert.True(r.Test(out Status tested));
        Assert.Equal(st, tested);
        Assert.Equal(Mpi.Undefined, PersistentRequest.WaitAny([r], out _));
        Assert.True(PersistentRequest.TestAll([r]));
    }

    [Fact]
    public void MisuseIsRefusedBeforeMpi()
    {
        var buffer = new int[2];
        PersistentRequest r = Self.RecvInit(buffer, 0, 42);
        r.Start();
        Assert.Throws<InvalidOperationException>(r.Start);
        Assert.Throws<InvalidOperationException>(() => PersistentRequest.StartAll(r));
        using PersistentRequest s = Self.SendInit(new[] { 7, 8 }, 0, 42);
        Assert.Throws<ArgumentException>(() => PersistentRequest.StartAll(s, s));
        Assert.False(s.IsActive);
        Assert.Throws<ArgumentException>(() => PersistentRequest.WaitAll(r, r));
        s.Start();
        PersistentRequest.WaitAll(r, s);
        Assert.Equal(new[] { 7, 8 }, buffer);
        r.Dispose();
        r.Dispose();
        Assert.Throws<ObjectDisposedException>(r.Start);
        Assert.Throws<ObjectDisposedException>(() => r.Wait());
        Assert.Throws<ArgumentOutOfRangeException>(() => Self.SendInit(buffer, 1, 0));
        Assert.Throws<ArgumentOutOfRangeException>(() => Self.RecvInit(buffer, 1, 2, 0, 0));
    }

    [Fact]
    public void ATruncatedInstanceThrowsAndLeavesTheRequestUsable()
    {
        var small = new int[1];
        using PersistentRequest r = Self.RecvInit(small, 0, 43);
        r.Start();
        Self.Send(new[] { 1, 2 }, 0, 43);
        MessageTruncatedException e = Assert.Throws<MessageTruncatedException>(() => r.Wait());
        Assert.NotEqual(0, e.ErrorClass);
        r.Start();
        Self.Send(new[] { 3 }, 0, 43);
        Assert.Equal(1, r.Wait().GetCount<int>());
        Assert.Equal(3, small[0]);
    }

    [Fact]
    public void DisposingAnActiveRequestLetsItCompleteAndFreesIt()
    {
        long before = Mpi.GetStatistics().PersistentRequests;
        var buffer = new int[4];
        PersistentRequest r = Self.RecvInit(buffer, 0, 44);
        r.Start();
        Assert.True(r.HoldsPin, "an ordinary array is pinned while active in library mode");
        r.Dispose();
        Assert.Equal(before + 1, Mpi.GetStatistics().PersistentRequests);
        Self.Send(new[] { 1, 2, 3, 4 }, 0, 44);
        Self.Barrier(); // a blocking call sweeps the orphan
        Assert.Equal(new[] { 1, 2, 3, 4 }, buffer);
        Assert.Equal(before, Mpi.GetStatistics().PersistentRequests);
    }

    [Fact]
    public void AnOrdinaryArrayIsPinnedOnlyWhileActive()
    {
        int[] poh = Mpi.AllocatePinned<int>(4);
        using PersistentRequest r = Self.RecvInit(new int[4], 0, 45);
        using PersistentRequest p = Self.RecvInit(poh, 0, 46);
        Assert.False(r.HoldsPin);
        r.Start();
        p.Start();
        Assert.True(r.HoldsPin);
        Assert.False(p.HoldsPin, "a pinned-heap array needs no pin");
        Self.Send(new int[4], 0, 45);
        Self.Send(new[] { 5, 6, 7, 8 }, 0, 46);
        PersistentRequest.WaitAll(r, p);
        Assert.False(r.HoldsPin);
        Assert.Equal(new[] { 5, 6, 7, 8 }, poh);
    }
}
