using Xunit;

namespace System.MP.Tests;

/// <summary>
/// In-process tests on a singleton MPI job (the test host is rank 0 of 1):
/// argument checks before any native call, self messaging, statuses, requests.
/// </summary>
public class SingleRankTests
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
    public void PinnedHeapBuffersNeedNoPin()
    {
        int[] poh = Mpi.AllocatePinned<int>(64), ordinary = new int[64];
        Assert.Throws<ArgumentOutOfRangeException>(() => Mpi.AllocatePinned<byte>(-1));
        Request r1 = World.IRecv(poh, 0, 31), r2 = World.IRecv(ordinary, 0, 32);
        Assert.False(r1.HoldsPin, "a pinned-heap buffer needs no GCHandle");
        Assert.True(r2.HoldsPin, "an ordinary array is held by a GCHandle in library mode");
        using (World.ISend(Enumerable.Range(0, 64).ToArray(), 0, 31))
        using (World.ISend(Enumerable.Range(100, 64).ToArray(), 0, 32))
            Request.WaitAll(r1, r2);
        Assert.Equal(Enumerable.Range(0, 64), poh);
        Assert.Equal(Enumerable.Range(100, 64), ordinary);
        Assert.False(r2.HoldsPin, "the pin is released at completion");
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
    public void SelfMessagesArriveIntact()
    {
        var c = Communicator.Self;
        var data = Enumerable.Range(0, 300).Select(i => i * 1.5).ToArray();
        var got = new double[300];
        Request r = c.IRecv(got, 0, 7);
        c.Send(data, 0, 7); // matches the posted receive
        Status st = r.Wait();
        Assert.Equal(data, got);
        Assert.Equal(0, st.Source);
        Assert.Equal(7, st.Tag);
        Assert.Equal(300, st.GetCount<double>());
        Assert.Equal(600, st.GetCount<float>());
        Assert.Equal(150, st.GetCount<Guid>()); // 2400 bytes
        Assert.Equal(st, r.Wait()); // waiting again returns the stored status

        // A blocking send to self may wait for its receive (MPI-4.0 3.5), so
        // self messages below start nonblocking.
        Request s = c.ISend(new[] { 42L }, 0, 1);
        Assert.Equal(42L, c.Recv<long>(0, 1, out Status s1));
        Assert.Equal(8, s1.ByteCount);
        s.Wait();
    }

    [Fact]
    public void CountIsUndefinedForPartialElements()
    {
        var c = Communicator.Self;
        Request s = c.ISend(new byte[6], 0, 2);
        Status st = c.Recv(new byte[16], 0, 2);
        s.Wait();
        Assert.Equal(6, st.GetCount<byte>());
        Assert.Equal(3, st.GetCount<short>());
        Assert.Equal(Mpi.Undefined, st.GetCount<int>());
    }

    [Fact]
    public void TruncationWritesNothingOutsideTheWindow()
    {
        var c = Communicator.Self;
        Request s = c.ISend(Enumerable.Range(1, 10).ToArray(), 0, 3);
        var buf = Enumerable.Repeat(-1, 9).ToArray();
        var e = Assert.Throws<MessageTruncatedException>(() => c.Recv(buf, 2, 5, 0, 3));
        Assert.NotEqual(0, e.ErrorClass);
        Assert.Contains("runcat", e.Message);
        Assert.Equal(-1, buf[0]);
        Assert.Equal(-1, buf[1]);
        Assert.Equal(-1, buf[7]);
        Assert.Equal(-1, buf[8]);
        s.Wait();
        // A short scalar message is reported, not silently accepted.
        Request s2 = c.ISend(new byte[] { 1 }, 0, 4);
        Assert.Throws<MpiException>(() => c.Recv<int>(0, 4));
        s2.Wait();
    }

    [Fact]
    public void BadArgumentsThrowBeforeAnythingIsSent()
    {
        var c = Communicator.Self;
        var a = new int[4];
        Assert.Equal("dest", Assert.Throws<ArgumentOutOfRangeException>(() => c.Send(a, 1, 0)).ParamName);
        Assert.Equal("dest", Assert.Throws<ArgumentOutOfRangeException>(() => c.Send(5, 1, 0)).ParamName);
        Assert.Equal("tag", Assert.Throws<ArgumentOutOfRangeException>(() => c.Send(a, 0, -2)).ParamName);
        Assert.Equal("count", Assert.Throws<ArgumentOutOfRangeException>(() => c.Send(a, 0, 5, 0, 0)).ParamName);
        Assert.Equal("count", Assert.Throws<ArgumentOutOfRangeException>(() => c.Recv(a, 1, -1, 0, 0)).ParamName);
        Assert.Equal("offset", Assert.Throws<ArgumentOutOfRangeException>(() => c.ISend(a, 5, 0, 0, 0)).ParamName);
        Assert.Equal("offset", Assert.Throws<ArgumentOutOfRangeException>(() => c.IRecv(a, -1, 1, 0, 0)).ParamName);
        Assert.Equal("source", Assert.Throws<ArgumentOutOfRangeException>(() => c.Recv(a, 1, 0)).ParamName);
        Assert.Equal("source", Assert.Throws<ArgumentOutOfRangeException>(() => c.IRecv(a, -4, 0)).ParamName);
        Assert.Equal("sendTag", Assert.Throws<ArgumentOutOfRangeException>(() => c.SendRecv(a, 0, -1, a, 0, 0)).ParamName);
        Assert.Equal("recvTag", Assert.Throws<ArgumentOutOfRangeException>(() => c.SendRecv(a, 0, 0, a, 0, -5)).ParamName);
        Assert.Equal("buffer", Assert.Throws<ArgumentNullException>(() => c.Send((int[])null!, 0, 0)).ParamName);
        Assert.Throws<ArgumentNullException>(() => c.SendRecv(null!, 0, 0, a, 0, 0));
        Assert.Throws<ArgumentNullException>(() => Request.WaitAll(new Request[] { null! }));
        Assert.False(c.IProbe(Mpi.AnySource, Mpi.AnyTag, out _)); // nothing was sent
    }

    [Fact]
    public void RequestsCancelDisposeAndCompleteOnce()
    {
        var c = Communicator.Self;
        Request r = c.IRecv(new int[2], 0, 11);
        Assert.False(r.Test(out _));
        r.Cancel();
        Assert.True(r.Wait().Cancelled);
        r.Cancel(); // completed: nothing to do

        Request d = c.IRecv(new int[2], 0, 12);
        d.Dispose();
        Assert.Throws<ObjectDisposedException>(() => d.Wait());
        c.Send(new[] { 1, 2 }, 0, 12); // completes the abandoned receive
        Assert.False(c.IProbe(0, 12, out _));

        var reqs = new[] { c.IRecv(new int[1], 0, 13), c.ISend(new[] { 3 }, 0, 13) };
        Assert.True(SpinTestAll(reqs));
        Assert.Equal(Mpi.Undefined, Request.WaitAny(reqs, out _));
        Status[] sts = Request.WaitAll(reqs);
        Assert.Equal(13, sts[0].Tag);
    }

    private static bool SpinTestAll(Request[] reqs)
    {
        for (int i = 0; i < 1_000_000; i++)
            if (Request.TestAll(reqs))
                return true;
        return false;
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

        long seen = -1;
        using var listener = new System.Diagnostics.Metrics.MeterListener();
        listener.InstrumentPublished = (instrument, l) =>
        {
            if (instrument.Meter.Name == "System.MP" && instrument.Name == "mp.operations")
                l.EnableMeasurementEvents(instrument);
        };
        listener.SetMeasurementEventCallback<long>((_, value, _, _) => seen = value);
        listener.Start();
        listener.RecordObservableInstruments();
        Assert.True(seen >= after.PointToPointOperations + after.CollectiveOperations, $"meter reported {seen}");
    }

    [Fact]
    public void DisposedCommunicatorThrows()
    {
        Communicator d = World.Dup();
        Assert.Equal(1, d.Size);
        d.Dispose();
        Assert.True(d.IsDisposed);
        Assert.Throws<ObjectDisposedException>(() => d.Send(new int[1], 0, 0));
        Assert.Throws<ObjectDisposedException>(() => d.Recv(new int[1], 0, 0));
        Assert.Throws<ObjectDisposedException>(() => d.ISend(new int[1], 0, 0));
        Assert.Throws<ObjectDisposedException>(() => d.Barrier());
        Assert.Throws<ObjectDisposedException>(() => d.Dup());
        Assert.Throws<ObjectDisposedException>(() => _ = d.Size);
        World.Dispose();
        Assert.False(World.IsDisposed);
        Assert.Null(World.Split(Mpi.Undefined, 0));
    }
}
