using System.MP;
using System.Runtime.CompilerServices;
using static Scenarios.Heap;

namespace Scenarios;

/// <summary>
/// Requests on blocks: once a rank completes its requests in sets, its sends and receives are
/// posted as entries of a block (one core request list), and a set that is a run of one block's
/// entries completes in one call.  Every use a program can make of such a request gives what a
/// request on a slot gives: statuses and data of windows in any order of their sets, spent and
/// stale copies refused without touching the newer operation on the same entry, a single Wait,
/// Cancel or WaitAny (the block is dissolved: its requests go on as ordinary ones), sets mixed
/// with other requests, a truncated receive inside a run, and requests dropped in flight
/// reclaimed once their block is no longer posted into.  Two ranks, the same calls on both.
/// </summary>
internal static class RequestBlocks
{
    internal static void Register(Dictionary<Scenario, Action<Communicator>> s) => s[Scenario.RequestBlocks] = Blocks;

    private static void Blocks(Communicator c)
    {
        int peer = 1 - c.Rank;
        EnsureBlocks(c, peer);
        Windows(c, peer);
        SetsInAnyOrder(c, peer);
        StaleCopies(c, peer);
        EnsureBlocks(c, peer);
        FinishedEntryUnpinnedAtMark(c, peer);
        EnsureBlocks(c, peer);
        TruncatedInARun(c, peer);
        EnsureBlocks(c, peer);
        MixedSets(c, peer);
        EnsureBlocks(c, peer);
        OneByOne(c, peer);
        EnsureBlocks(c, peer);
        CancelAnEntry(c, peer);
        EnsureBlocks(c, peer);
        WeakReference dropped = DropAFullBlock(c, peer);
        for (int i = 0; i < 10; i++)
        {
            c.Barrier();
            GC.Collect();
            GC.WaitForPendingFinalizers();
        }
        Check.True(!dropped.IsAlive, "a receive of a dropped block was collected after its message arrived");
        Check.Equal(0L, Mpi.GetStatistics().ActiveRequests, "nothing is in flight at the end: the dropped block's receives left nothing in the in-flight table");
    }

    /// <summary>True when the request is an entry of a block (its private state: what posting chose).</summary>
    private static bool OnBlock(Request r) => StateOf(r)?.GetType().Name == "RequestBlock";

    private static object? StateOf(Request r) => RequestReuse.StateOf(r);

    /// <summary>Posts <paramref name="n"/> receives from <paramref name="peer"/>, receive k into an array of its own under tag <paramref name="tag"/> + k.</summary>
    private static (Request[] Requests, int[][] Data) Receives(Communicator c, int peer, int n, int tag, int length = 1)
    {
        var requests = new Request[n];
        var data = new int[n][];
        for (int k = 0; k < n; k++)
        {
            data[k] = new int[length];
            requests[k] = c.IRecv(data[k], peer, tag + k);
        }
        return (requests, data);
    }

    /// <summary>Exchanges windows of 8 until posts go into blocks (each completed set counts), as a program's first loops would.</summary>
    private static void EnsureBlocks(Communicator c, int peer)
    {
        for (int round = 0; round < 64; round++)
        {
            var r = new Request[8];
            var data = new int[8][];
            for (int k = 0; k < 4; k++)
            {
                data[k] = new int[1];
                r[k] = c.IRecv(data[k], peer, 7);
            }
            for (int k = 4; k < 8; k++)
                r[k] = c.ISend(new[] { k }, peer, 7);
            bool blocks = OnBlock(r[0]);
            Request.WaitAll(r.AsSpan());
            if (blocks)
                return;
        }
        Check.True(false, "sets of eight requests turn block posting on");
    }

    /// <summary>Windows of 64 receives and 64 sends (each a whole block), their statuses and data.</summary>
    private static void Windows(Communicator c, int peer)
    {
        for (int round = 0; round < 3; round++)
        {
            long active = Mpi.GetStatistics().ActiveRequests;
            (Request[] recvs, int[][] data) = Receives(c, peer, 64, 100, 2);
            var sends = new Request[64];
            for (int k = 0; k < 64; k++)
                sends[k] = c.ISend(new[] { c.Rank * 1000 + k, round }, peer, 100 + k);
            Check.True(OnBlock(recvs[0]) && OnBlock(sends[63]), "window posts are block entries");
            Check.Equal(active + 128, Mpi.GetStatistics().ActiveRequests, "the statistics count the window's requests as active");
            Status[] st = Request.WaitAll(recvs);
            if (round == 0)
            {
                Status[] sent = Request.WaitAll(sends);
                Check.True(sent.All(x => x.Source == 0 && x.Tag == 0 && x.ByteCount == 0 && !x.Cancelled),
                           "a run of sends: each status is a send's (all zero), as on a slot");
            }
            else
                Request.WaitAll(sends.AsSpan());
            Check.Equal(active, Mpi.GetStatistics().ActiveRequests, "and none once the window is complete");
            bool ok = true;
            for (int k = 0; k < 64; k++)
                ok &= st[k].Source == peer && st[k].Tag == 100 + k && st[k].GetCount<int>() == 2
                      && data[k][0] == peer * 1000 + k && data[k][1] == round;
            Check.True(ok, $"round {round}: every receive's status and data");
            Check.True(recvs.All(r => r == default), "WaitAll(Request[]) sets each entry to the null request");
            if (round != 0) // WaitAll(Request[]) set round 0's entries to the null request
                Check.Throws<ObjectDisposedException>(() => sends[63].Wait(), "a send of the completed run is spent");
        }
    }

    /// <summary>Receives and sends in one block, completed sends first, then the receives over a span with statuses; and TestAll.</summary>
    private static void SetsInAnyOrder(Communicator c, int peer)
    {
        (Request[] recvs, int[][] data) = Receives(c, peer, 8, 200);
        var sends = new Request[8];
        for (int k = 0; k < 8; k++)
            sends[k] = c.ISend(new[] { 300 + k }, peer, 200 + k);
        Check.True(ReferenceEquals(StateOf(recvs[0]), StateOf(sends[7])), "the receives and the sends share a block");
        Request.WaitAll(sends.AsSpan());
        var st = new Status[10];
        Request.WaitAll(recvs.AsSpan(), st);
        bool ok = true;
        for (int k = 0; k < 8; k++)
            ok &= st[k].Tag == 200 + k && st[k].Source == peer && data[k][0] == 300 + k;
        Check.True(ok, "the later run of the block completed first, then the earlier one, each with its statuses and data");

        // TestAll over a run: false until the peer's sends are posted, then true once.
        (Request[] r, int[][] later) = Receives(c, peer, 4, 400);
        if (c.Rank == 0)
            Check.True(!Request.TestAll(r.AsSpan()), "TestAll of receives whose messages are not sent yet");
        c.Barrier();
        for (int k = 0; k < 4; k++)
            c.Send(new[] { 500 + k }, peer, 400 + k);
        while (!Request.TestAll(r.AsSpan()))
        {
        }
        Check.True(later.Select((a, k) => a[0] == 500 + k).All(x => x), "TestAll completed the run");
        Check.Throws<ObjectDisposedException>(() => Request.TestAll(r.AsSpan()), "a second TestAll of the completed run");
    }

    /// <summary>A spent copy and a double wait are refused; the newer operation on the same entry (the block's next epoch) is untouched.</summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    private static void StaleCopies(Communicator c, int peer)
    {
        var a = new int[1];
        Request recv = c.IRecv(a, peer, 600);
        Request send = c.ISend(new[] { 61 }, peer, 600);
        Request spent = recv;
        Request.WaitAll(new[] { recv, send }.AsSpan());
        Check.Equal(61, a[0], "the run of a receive and a send");
        Check.Throws<ObjectDisposedException>(() => Request.WaitAll(new[] { recv, send }.AsSpan()), "a second WaitAll of the same run");

        var b = new int[1];
        Request fresh = c.IRecv(b, peer, 601); // the block's next epoch, the same entry
        Check.True(ReferenceEquals(StateOf(spent), StateOf(fresh)) && spent != fresh, "the newer receive is the same entry under a newer epoch");
        Check.Throws<ObjectDisposedException>(() => spent.Wait(), "Wait on the spent copy");
        Check.Throws<ObjectDisposedException>(() => spent.Test(out _), "Test on the spent copy");
        Check.Throws<ObjectDisposedException>(() => spent.Cancel(), "Cancel on the spent copy");
        Check.Throws<ObjectDisposedException>(() => Request.WaitAll(new[] { spent }.AsSpan()), "a set with the spent copy");
        Check.Throws<ObjectDisposedException>(() => Request.WaitAny(new[] { spent }, out _), "WaitAny with the spent copy");
        spent.Dispose(); // nothing to give up
        Check.True(spent.IsCompleted, "the spent copy answers as completed");
        Check.True(OnBlock(fresh) && !fresh.IsCompleted, "the newer receive is pending, untouched by the spent copy");
        c.Barrier();
        c.Send(new[] { 62 }, peer, 601);
        Request.WaitAll(new[] { fresh }.AsSpan());
        Check.Equal(62, b[0], "the newer receive completes with its own message");
    }

    /// <summary>
    /// Under motor's GC extension a block entry's buffer is pinned only while MPI may write into it:
    /// a mark that finds the receive finished (its message arrived, not yet waited for) releases it.
    /// </summary>
    private static void FinishedEntryUnpinnedAtMark(Communicator c, int peer)
    {
        var buffer = new int[256];
        Request r = c.IRecv(buffer, peer, 1400);
        Check.True(OnBlock(r), "the receive is a block entry");
        bool extension = Mpi.GetStatistics().GcExtensionActive;
        if (extension)
        {
            CompactAll();
            Check.True(Mpi.GetStatistics().PinnedAtLastMark >= 1, "the entry's buffer is pinned while its message has not come");
        }
        c.Barrier(); // the peer sends only once this side's first mark is over (a loaded machine may delay it)
        long released = Mpi.GetStatistics().ReleasedAtMark;
        c.Send(Enumerable.Range(0, 256).ToArray(), peer, 1400);
        c.Send(new[] { 1 }, peer, 1401);
        c.Recv(new int[1], peer, 1401); // after the data, on the same channel: the receive has finished
        CompactAll();
        MpiStatistics after = Mpi.GetStatistics();
        if (extension)
        {
            Check.Equal(0L, after.PinnedAtLastMark, "a finished entry is not pinned at the next mark, before its WaitAll");
            Check.Equal(released + 1, after.ReleasedAtMark, "the mark found the entry finished and released its buffer");
        }
        Status[] st = Request.WaitAll(r);
        Check.True(st[0].Tag == 1400 && st[0].GetCount<int>() == 256, "the WaitAll after the mark still has MPI's status");
        Check.Sequence<int>(Enumerable.Range(0, 256).ToArray(), buffer, "the data received into the buffer");
    }

    /// <summary>A receive truncated inside a run: the set throws, every other receive of it completed with its data.</summary>
    private static void TruncatedInARun(Communicator c, int peer)
    {
        (Request[] r, int[][] data) = Receives(c, peer, 4, 700);
        for (int k = 0; k < 4; k++)
            c.Send(k == 2 ? new[] { 7, 8 } : new[] { 710 + k }, peer, 700 + k);
        Check.Throws<MessageTruncatedException>(() => Request.WaitAll(r), "WaitAll of a run with a truncated receive");
        Check.True(r[2] == default, "the truncated receive was completed (its entry set to the null request)");
        // MPI may leave receives after the failed one pending (MPI_ERR_PENDING): those stay in flight.
        Request[] left = r.Where(x => x != default).ToArray();
        Request.WaitAll(left);
        Check.True(data[0][0] == 710 && data[1][0] == 711 && data[3][0] == 713, "the other receives of the run got their messages");
    }

    /// <summary>Block entries in a set with a request on a slot, and in the reverse of their posting order.</summary>
    private static void MixedSets(Communicator c, int peer)
    {
        // A value's receive carries its reader: posted on a slot, it leaves block posting on.
        ValueRequest<long> value = c.IRecv<long>(peer, 799);
        var probe = new int[1];
        Request r0 = c.IRecv(probe, peer, 798);
        Check.True(!OnBlock(value.Request) && OnBlock(r0), "a value's receive is posted on a slot, the next receive still in a block");
        c.Send(new[] { 5_000_000_000L + c.Rank }, peer, 799);
        c.Send(new[] { 79 }, peer, 798);
        Check.Equal(5_000_000_000L + peer, value.Result, "the value received");
        Request.WaitAll(new[] { r0 }.AsSpan());
        Check.Equal(79, probe[0], "the block's receive beside it");

        var a = new int[1];
        var b = new int[1];
        Request r1 = c.IRecv(a, peer, 800);
        Request r2 = c.IRecv(b, peer, 801);
        Request procNull = c.ISend(new[] { 1 }, Mpi.ProcNull, 0); // never a block entry
        Check.True(OnBlock(r1) && !OnBlock(procNull), "a send to ProcNull is posted on a slot");
        c.Send(new[] { 80 }, peer, 800);
        c.Send(new[] { 81 }, peer, 801);
        Status[] st = Request.WaitAll(r2, procNull, r1);
        Check.True(st[0].Tag == 801 && st[2].Tag == 800, $"statuses of a mixed set in its order (tags {st[0].Tag}, {st[2].Tag})");
        Check.True(a[0] == 80 && b[0] == 81, "the mixed set's data");
    }

    /// <summary>Requests of a block completed one by one (Wait, Test, WaitAny, WaitSome): the block is dissolved, its requests go on as ordinary ones.</summary>
    private static void OneByOne(Communicator c, int peer)
    {
        (Request[] r, int[][] data) = Receives(c, peer, 6, 900);
        Request copy = r[0];
        for (int k = 0; k < 6; k++)
            c.Send(new[] { 950 + k }, peer, 900 + k);
        Check.Equal(900, r[0].Wait().Tag, "Wait on one entry of a block");
        Check.Throws<ObjectDisposedException>(() => copy.Wait(), "a copy of the entry waited for");
        Status st;
        while (!r[1].Test(out st))
        {
        }
        Check.Equal(901, st.Tag, "Test on another entry of the dissolved block");
        r[0] = default;
        r[1] = default;
        int i = Request.WaitAny(r, out st);
        Check.True(i >= 2 && st.Tag == 900 + i && r[i] == default, $"WaitAny over the rest (index {i}, tag {st.Tag})");
        var rest = r.Where(x => x != default).ToArray();
        Status[] sts = Request.WaitAll(rest);
        Check.True(sts.All(s => s.Tag >= 902 && s.Tag <= 905), "WaitAll of the dissolved block's last requests");
        Check.True(data.Select((d, k) => d[0] == 950 + k).All(x => x), "every receive's data");
        var next = c.IRecv(new int[1], peer, 990);
        Check.True(!OnBlock(next), "after a dissolve, posts go to slots");
        c.Send(new[] { 1 }, peer, 990);
        next.Wait();
    }

    /// <summary>A receive that never matches, as an entry of a block: Cancel and Dispose work on it.</summary>
    private static void CancelAnEntry(Communicator c, int peer)
    {
        var a = new int[1];
        Request never = c.IRecv(a, peer, 1100);
        Request other = c.IRecv(new int[1], peer, 1101);
        Check.True(OnBlock(never), "the receive is a block entry");
        never.Cancel();
        Status st = never.Wait();
        Check.True(st.Cancelled, "the cancelled receive's status says so");
        other.Dispose(); // given up: completes when its message comes
        c.Send(new[] { 1 }, peer, 1101);
        c.Barrier();
    }

    /// <summary>Fills a block with receives and drops them all; the next post goes to another block, so this one is unreachable.</summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    private static WeakReference DropAFullBlock(Communicator c, int peer)
    {
        WeakReference first = PostAndDrop(c, peer);
        var after = new int[1];
        Request r = c.IRecv(after, peer, 1300); // into another block: the full one is no longer posted into
        GC.Collect();
        GC.WaitForPendingFinalizers(); // the dropped block's finalizer gives its receives up
        for (int k = 0; k < 64; k++)
            c.Send(new[] { k }, peer, 1200 + k);
        c.Send(new[] { 13 }, peer, 1300);
        Request.WaitAll(new[] { r }.AsSpan());
        Check.Equal(13, after[0], "a receive posted after the dropped block gets its own message");
        return first;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static WeakReference PostAndDrop(Communicator c, int peer)
    {
        var first = new int[1];
        Request r0 = c.IRecv(first, peer, 1200);
        Check.True(OnBlock(r0), "the dropped receives are block entries");
        for (int k = 1; k < 64; k++)
            _ = c.IRecv(new int[1], peer, 1200 + k);
        return new WeakReference(first);
    }
}
