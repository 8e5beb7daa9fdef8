using System.Runtime.CompilerServices;
using Scenarios;
using Xunit;

namespace System.MP.Tests;

/// <summary>
/// Requests (Request*.cs, RequestSlot.cs, Completion.cs, BufferHold.cs): test, wait, cancel
/// and dispose; the sets (WaitAll, TestAll, WaitAny, WaitSome, TestSome) and their allocation-free overloads; the pin
/// shared by the operations in flight on one array (library mode); dropped requests noticed
/// through their finalizer batch and released.  On one rank (self messages), and a dropped receive in
/// multi-rank jobs (scenario dropped-request) in library mode, under motor and on Open MPI.
/// </summary>
public class RequestTests
{
    private static Communicator Self => Communicator.Self;
    private static Communicator World => Communicator.World;

    /// <summary>
    /// A receive dropped without Wait: once its message arrives, its buffer is collectable and
    /// its slot freed, though the program makes only blocking calls afterwards.
    /// </summary>
    [Theory]
    [InlineData(false, false)]
    [InlineData(true, false)]
    [InlineData(true, true)]
    public void ADroppedReceiveLeaksNeitherItsBufferNorItsSlot(bool hosted, bool openMpi) =>
        Job.RunScenario(Scenario.DroppedRequest, 2, hosted: hosted, launcher: openMpi ? Job.Launcher.OpenMpi : Job.Launcher.Mpich);

    /// <summary>
    /// A dropped receive of one value (IRecv&lt;T&gt;, a status reader): once its state is finalized it is
    /// no longer counted among the status readers that make span sets ask the core for statuses; a kept
    /// one completed by a span WaitAll still gets its value, a disposed one is uncounted once (scenario dropped-status-reader).
    /// </summary>
    [Theory]
    [InlineData(false, false)]
    [InlineData(true, false)]
    [InlineData(true, true)]
    public void ADroppedValueReceiveIsNoLongerCountedAsAStatusReader(bool hosted, bool openMpi) =>
        Job.RunScenario(Scenario.DroppedStatusReader, 2, hosted: hosted, launcher: openMpi ? Job.Launcher.OpenMpi : Job.Launcher.Mpich);

    /// <summary>
    /// Pooled request state: a spent request (waited twice, or a stale copy whose state a newer
    /// operation reuses) is refused with ObjectDisposedException and leaves the newer operation
    /// alone; dropped requests are reclaimed after a forced collection (scenario request-reuse).
    /// </summary>
    [Theory]
    [InlineData(false, false)]
    [InlineData(true, false)]
    [InlineData(true, true)]
    public void SpentAndStaleRequestsAreRefusedAndDroppedOnesReclaimed(bool hosted, bool openMpi) =>
        Job.RunScenario(Scenario.RequestReuse, 2, hosted: hosted, launcher: openMpi ? Job.Launcher.OpenMpi : Job.Launcher.Mpich);

    /// <summary>
    /// Requests on blocks (entries of a core request list, once a rank completes its requests in
    /// sets): windows and their statuses, sets in any order, spent copies refused, a truncated
    /// receive in a run, mixed sets, requests completed one by one (the block dissolved), Cancel,
    /// and a dropped block's receives reclaimed (scenario request-blocks).
    /// </summary>
    [Theory]
    [InlineData(false, false)]
    [InlineData(true, false)]
    [InlineData(true, true)]
    public void RequestsOnBlocksBehaveAsRequestsOnSlots(bool hosted, bool openMpi) =>
        Job.RunScenario(Scenario.RequestBlocks, 2, hosted: hosted, launcher: openMpi ? Job.Launcher.OpenMpi : Job.Launcher.Mpich);

    [Fact]
    public void RequestsCancelDisposeAndCompleteOnce()
    {
        var c = Communicator.Self;
        Request r = c.IRecv(new int[2], 0, 11);
        Assert.False(r.Test(out _));
        r.Cancel();
        Assert.True(r.Wait().Cancelled);
        Assert.Throws<ObjectDisposedException>(() => r.Cancel()); // completed: this request is spent
        Assert.True(r.IsCompleted);
        r.Dispose(); // spent: nothing to give up

        Request d = c.IRecv(new int[2], 0, 12);
        d.Dispose();
        Assert.Throws<ObjectDisposedException>(() => d.Wait());
        c.Send(new[] { 1, 2 }, 0, 12); // completes the abandoned receive
        Assert.False(c.IProbe(0, 12, out _));

        var reqs = new[] { c.IRecv(new int[1], 0, 13), c.ISend(new[] { 3 }, 0, 13) };
        Request copy = reqs[0];
        Assert.True(SpinTestAll(reqs));
        Assert.All(reqs, q => Assert.Equal(default, q)); // completed entries become the null request, as in MPI
        Assert.Throws<ObjectDisposedException>(() => copy.Wait());
        Assert.Equal(Mpi.Undefined, Request.WaitAny(reqs, out _));
        Status[] sts = Request.WaitAll(reqs);
        Assert.Equal(Mpi.AnyTag, sts[0].Tag); // the null request's empty status
    }

    private static bool SpinTestAll(Request[] reqs)
    {
        for (int i = 0; i < 1_000_000; i++)
            if (Request.TestAll(reqs))
                return true;
        return false;
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
    public void WaitAllOverSpansFillsStatusesInOrder()
    {
        var recv = new int[4][];
        var reqs = new Request[8];
        for (int i = 0; i < 4; i++)
            reqs[i] = Self.IRecv(recv[i] = new int[8], 0, 40 + i);
        for (int i = 0; i < 4; i++)
            reqs[4 + i] = Self.ISend(Enumerable.Range(i * 10, i + 1).ToArray(), 0, 40 + i);
        Span<Status> statuses = stackalloc Status[9];
        statuses[8] = new Status(7, 7, 7); // past the requests: left alone
        Request.WaitAll(reqs, statuses);
        for (int i = 0; i < 4; i++)
        {
            Assert.Equal(40 + i, statuses[i].Tag);
            Assert.Equal(i + 1, statuses[i].GetCount<int>());
            Assert.Equal(Enumerable.Range(i * 10, i + 1), recv[i].Take(i + 1));
        }
        Assert.Equal(7, statuses[8].Source);
        // The span form leaves the spent requests in the array: waiting for them again is refused.
        Assert.Throws<ObjectDisposedException>(() => Request.WaitAll(reqs.AsSpan()));
        Assert.Throws<ObjectDisposedException>(() => Request.WaitAll(reqs)); // which sets them to the null request
        Assert.True(Request.TestAll(reqs.AsSpan()));
        Assert.Equal(Mpi.AnyTag, Request.WaitAll(reqs)[2].Tag);
    }

    [Fact]
    public void WaitAllOverSpansChecksEverythingBeforeWaiting()
    {
        var buffer = new int[1];
        Request r = Self.IRecv(buffer, 0, 50);
        Assert.Throws<ArgumentException>(() => Request.WaitAll(new[] { r, r }, new Status[1]));
        // The same request twice: MPI would wait on one request twice.
        Request other = Self.IRecv(new int[1], 0, 51);
        Assert.Contains("twice (entries 0 and 2)", Assert.Throws<ArgumentException>(() => Request.WaitAll(r, other, r)).Message);
        Assert.Contains("twice", Assert.Throws<ArgumentException>(() => Request.TestAll(new[] { r, r })).Message);
        Assert.Contains("twice (entries 0 and 1)", Assert.Throws<ArgumentException>(() => Request.WaitAny([r, r], out _)).Message);
        Request done = Self.ISend(new[] { 1 }, Mpi.ProcNull, 0); // complete at the first test: a repeat is refused all the same
        Assert.Contains("twice (entries 1 and 2)", Assert.Throws<ArgumentException>(() => Request.WaitAny([r, done, done], out _)).Message);
        done.Wait();
        Assert.True(r.HoldsPin || Mpi.IsHosted, "a refused set keeps its requests' pins");
        Assert.False(r.IsCompleted, "a rejected WaitAll completes nothing");
        Self.Send(new[] { 5 }, 0, 50);
        Self.Send(new[] { 6 }, 0, 51);
        Request.WaitAll(new[] { r, other }.AsSpan());
        Assert.Equal(5, buffer[0]);
        Request.WaitAll(ReadOnlySpan<Request>.Empty);
        Assert.True(Request.TestAll(ReadOnlySpan<Request>.Empty));
    }

    /// <summary>
    /// A set whose entries take each way out of WaitAll: one in flight (its status the core's), one
    /// found complete by IsCompleted (its kept status), the null request (the empty status); the
    /// two requests are consumed, and their states serve the next posts.
    /// </summary>
    [Fact]
    public void WaitAllFinishesEachKindOfEntry()
    {
        var a = new int[1];
        var b = new int[2];
        Request inFlight = Self.IRecv(a, 0, 60);
        Request found = Self.IRecv(b, 0, 61);
        Self.Send(new[] { 7, 8 }, 0, 61);
        Assert.True(found.IsCompleted);
        Self.Send(new[] { 9 }, 0, 60);
        Status[] st = Request.WaitAll(inFlight, found, default);
        Assert.Equal((0, 60, 1), (st[0].Source, st[0].Tag, st[0].GetCount<int>()));
        Assert.Equal((0, 61, 2), (st[1].Source, st[1].Tag, st[1].GetCount<int>()));
        Assert.Equal((Mpi.AnySource, Mpi.AnyTag, 0), (st[2].Source, st[2].Tag, st[2].GetCount<int>()));
        Assert.Equal((9, 7, 8), (a[0], b[0], b[1]));
        Assert.Throws<ObjectDisposedException>(() => inFlight.Wait());
        Assert.Throws<ObjectDisposedException>(() => found.Wait());
        Request next = Self.ISend(new[] { 1 }, Mpi.ProcNull, 0);
        Assert.True(next.IsLive && next != found && next != inFlight);
        next.Wait();
    }

    [Fact]
    public void WaitAllOfMoreRequestsThanTheStackHolds()
    {
        const int n = 300; // beyond the stack-allocated handles and statuses
        long before = Mpi.GetStatistics().ActiveRequests;
        var data = new byte[n];
        var reqs = new Request[2 * n];
        for (int i = 0; i < n; i++)
            reqs[i] = Self.IRecv(data, i, 1, 0, 60);
        for (int i = 0; i < n; i++)
            reqs[n + i] = Self.ISend(new[] { (byte)i }, 0, 60);
        var statuses = new Status[2 * n];
        Request.WaitAll(reqs, statuses);
        Assert.Equal(Enumerable.Range(0, n).Select(i => (byte)i), data);
        Assert.All(statuses.Take(n), s => Assert.Equal(1, s.GetCount<byte>()));
        Assert.Equal(before, Mpi.GetStatistics().ActiveRequests);
    }

    [Fact]
    public void OperationsOnOneArrayShareAPinHeldUntilTheLastCompletes()
    {
        if (BufferPolicy.RegistersBuffers)
            return; // under motor the GC extension pins; no GCHandles at all
        var buffer = new int[4];
        Request a = Self.IRecv(buffer, 0, 1, 0, 70), b = Self.IRecv(buffer, 1, 1, 0, 71);
        Assert.True(a.HoldsPin && b.HoldsPin);
        Self.Send(new[] { 1 }, 0, 70);
        a.Wait();
        Assert.False(a.HoldsPin);
        Assert.True(b.HoldsPin, "the other receive still holds the array pinned");
        Self.Send(new[] { 2 }, 0, 71);
        b.Wait();
        Assert.False(b.HoldsPin);
        // A later operation pins anew (the released pin is never revived).
        Request c = Self.IRecv(buffer, 2, 1, 0, 72);
        Assert.True(c.HoldsPin);
        Self.Send(new[] { 3 }, 0, 72);
        c.Wait();
        Assert.Equal(new[] { 1, 2, 3, 0 }, buffer);
    }

    [Fact]
    public void DroppedRequestsAreOrphanedOnceUnreachable()
    {
        Collect();
        long before = Mpi.GetStatistics().ActiveRequests;
        PostAndDrop(3); // complete at once (ProcNull), never waited for
        Assert.Equal(before + 3, Mpi.GetStatistics().ActiveRequests);
        Collect();
        Assert.Equal(before, Mpi.GetStatistics().ActiveRequests);

        // Each request's state has its own finalizer: a dropped request is released while one
        // posted beside it is still held.
        Request kept = PostKeepOneDropOne();
        Collect();
        Assert.Equal(before + 1, Mpi.GetStatistics().ActiveRequests); // the kept one only
        kept.Wait();
        Assert.Equal(before, Mpi.GetStatistics().ActiveRequests);
    }

    [Fact]
    public void GroupsOfCompletedRequestsLeaveNothingBehind()
    {
        long before = Mpi.GetStatistics().ActiveRequests;
        var data = new byte[1];
        for (int round = 0; round < 5; round++)
        {
            var reqs = new Request[3 * 32 + 5]; // several groups, the last one partly filled
            for (int i = 0; i < reqs.Length; i++)
                reqs[i] = Self.ISend(data, Mpi.ProcNull, 0);
            Request.WaitAll(reqs.AsSpan());
            Collect(); // suppressed and finalized groups alike: nothing is orphaned twice
        }
        Assert.Equal(before, Mpi.GetStatistics().ActiveRequests);
    }

    [Fact]
    public void ADroppedObjectSendKeepsItsPayloadUntilTheMessageIsReceived()
    {
        _ = Self.Size; // initializes MPI when this test runs alone
        Collect();
        long before = Mpi.GetStatistics().ActiveRequests;
        int holds = Request.OrphanedHolds;
        PostObjectAndDrop(); // 1 MiB to self: pending (rendezvous) until received
        Collect(); // the request is unreachable: orphaned, its payload still held
        // Its messages (wire format 2: the first at most FirstChunkBytes, the rest in pieces of
        // ChunkBytes under a continuation tag; the header's few bytes on top) are still in flight.
        int messages = 1 + (int)Math.Ceiling((double)((1 << 20) + 4096 - Transport.WireFormat.FirstChunkBytes) / Transport.WireFormat.ChunkBytes);
        long pending = Mpi.GetStatistics().ActiveRequests - before;
        Assert.InRange(pending, 1, messages);
        Assert.Equal(pending, Request.OrphanedHolds - holds); // each message in flight holds the payload
        int[] got = Self.ORecv<int[]>(0, 77)!; // MPI reads the payload: it must still be there
        Assert.Equal(Enumerable.Range(0, 1 << 18), got);
        Self.Recv(new byte[1], Mpi.ProcNull, 0); // any later completion sweeps the orphans
        Self.IRecv(new byte[1], Mpi.ProcNull, 0).Wait();
        Assert.Equal(before, Mpi.GetStatistics().ActiveRequests);
        Assert.Equal(holds, Request.OrphanedHolds);
    }

    [Fact]
    public void ADisposedSendToSelfIsStillReceivedAndReleased()
    {
        _ = Self.Size; // initializes MPI when this test runs alone
        long before = Mpi.GetStatistics().ActiveRequests;
        foreach (int n in new[] { 1, 16, 1 << 16 })
        {
            var data = Enumerable.Range(0, n).ToArray();
            Self.ISend(data, 0, 90).Dispose(); // orphaned before its message was taken
            var got = new int[n];
            Request r = Self.IRecv(got, 0, 90);
            r.Wait();
            Assert.Equal(data, got);
        }
        Self.IRecv(new byte[1], Mpi.ProcNull, 0).Wait(); // a later completion sweeps the orphans
        Assert.Equal(before, Mpi.GetStatistics().ActiveRequests);
    }

    /// <summary>
    /// Requests given up while their operations stay in flight (receives whose message does not
    /// come) cost each later completion call a bounded amount: a sweep stops after 64 still in
    /// flight, here and in the core, and the next goes on from there.  Once the messages come,
    /// one completion call releases them all.
    /// </summary>
    [Fact]
    public void RequestsGivenUpAndStillInFlightCostEachCallABoundedAmount()
    {
        const int Tag = 4243, Dropped = 300, Calls = 10;
        _ = Self.Size; // initializes MPI when this test runs alone
        Collect();
        long before = Mpi.GetStatistics().ActiveRequests;
        int holds = Request.OrphanedHolds;
        var buffers = new int[Dropped][];
        for (int i = 0; i < Dropped; i++)
        {
            buffers[i] = new int[4];
            Self.IRecv(buffers[i], 0, Tag).Dispose();
        }
        Assert.Equal(Dropped, Mpi.GetStatistics().ActiveRequests - before);
        long checks = Request.OrphanChecks;
        for (int i = 0; i < Calls; i++)
            Self.IRecv(new byte[1], Mpi.ProcNull, 0).Wait(); // a post and a completion: two sweeps
        long looked = Request.OrphanChecks - checks;
        Assert.InRange(looked, Calls, Calls * 2 * 64L); // not Calls * 2 * Dropped
        Assert.Equal(Dropped, Mpi.GetStatistics().ActiveRequests - before);
        for (int i = 0; i < Dropped; i++)
            Self.Send(new[] { 1, 2, 3, i }, 0, Tag);
        Self.IRecv(new byte[1], Mpi.ProcNull, 0).Wait();
        Assert.Equal(before, Mpi.GetStatistics().ActiveRequests);
        Assert.Equal(holds, Request.OrphanedHolds);
        Assert.All(buffers, b => Assert.Equal(3, b[2]));
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static void PostObjectAndDrop() => Self.OISend(Enumerable.Range(0, 1 << 18).ToArray(), 0, 77);

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static void PostAndDrop(int n)
    {
        for (int i = 0; i < n; i++)
            Self.IRecv(new byte[4], Mpi.ProcNull, 0);
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static Request PostKeepOneDropOne()
    {
        Request kept = Self.ISend(new byte[4], Mpi.ProcNull, 0);
        Self.ISend(new byte[4], Mpi.ProcNull, 0);
        return kept;
    }

    private static void Collect()
    {
        for (int i = 0; i < 3; i++)
        {
            GC.Collect();
            GC.WaitForPendingFinalizers();
        }
    }

    /// <summary>
    /// A send to the rank itself, disposed while pending, is still received, in order, and
    /// released (scenario dropped-self-send): on 2 ranks, both cores, library mode and motor.
    /// </summary>
    [Theory]
    [InlineData(false, false)]
    [InlineData(true, false)]
    [InlineData(false, true)]
    [InlineData(true, true)]
    public void ADisposedSendToOwnRankIsStillReceived(bool hosted, bool openMpi) =>
        Job.RunScenario(Scenario.DroppedSelfSend, 2, timeoutSeconds: 60, hosted: hosted,
                        launcher: openMpi ? Job.Launcher.OpenMpi : Job.Launcher.Mpich);

    [Fact]
    public void WaitSomeAndTestSomeReportWhatCompleted()
    {
        var a = new int[1];
        var b = new int[1];
        Request ra = Self.IRecv(a, 0, 20), rb = Self.IRecv(b, 0, 21);
        Request[] set = [ra, rb];
        Assert.Empty(Request.TestSome(set, out _));
        Self.Send(9, 0, 21);
        int[] idx = Request.WaitSome(set, out Status[] st);
        Assert.Equal(new[] { 1 }, idx);
        Assert.Equal(21, st[0].Tag);
        Assert.Equal(default, set[1]); // completed: the null request
        Assert.Throws<ObjectDisposedException>(() => rb.Wait());
        Assert.Throws<ArgumentException>(() => Request.TestSome([ra, ra], out _));
        Self.ISsend(new[] { 8 }, 0, 20).Wait();
        Assert.Equal(new[] { 0 }, Request.WaitSome(set, out _));
        Assert.Equal((8, 9), (a[0], b[0]));
        Assert.Empty(Request.WaitSome(set, out _));
    }
}
