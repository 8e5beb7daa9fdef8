using System.MP;
using System.Runtime.CompilerServices;
using static Scenarios.Heap;

namespace Scenarios;

/// <summary>
/// Persistent requests (PersistentRequest.cs): a halo exchange of many rounds, the GC moving
/// arrays between instances (and not during one), dropped requests, misuse, and persistent
/// collectives against their blocking forms (NotSupportedException on Open MPI 4).  Two ranks.
/// </summary>
internal static class Persistent
{
    internal static void Register(Dictionary<Scenario, Action<Communicator>> s)
    {
        s[Scenario.PersistentHalo] = Halo;
        s[Scenario.PersistentGcTorture] = GcTorture;
        s[Scenario.PersistentDropped] = Dropped;
        s[Scenario.PersistentMisuse] = Misuse;
        s[Scenario.PersistentCollectives] = Collectives;
    }

    private static int Value(int rank, int round, int side, int i) => (rank << 24) ^ (round << 8) ^ (side << 6) ^ i;

    private const long NoGcBytes = 4 << 20;

    // A 1-D halo exchange on a ring: each rank sends its two edge cells to its neighbours and
    // receives theirs, 1000 rounds, every round checked.  Even rounds start and complete the four
    // requests together (StartAll, WaitAll), odd ones one by one; the left halo travels with a
    // synchronous send, the right one from the middle of a larger array (offset and count).
    private static void Halo(Communicator c)
    {
        const int rounds = 1000, width = 16;
        int left = (c.Rank + c.Size - 1) % c.Size, right = (c.Rank + 1) % c.Size;
        var sendLeft = new int[width];
        var sendRight = new int[width + 8];
        var recvLeft = new int[width];
        var recvRight = new int[width];
        MpiStatistics before = Mpi.GetStatistics();
        PersistentRequest[] reqs =
        [
            c.RecvInit(recvLeft, left, 1),
            c.RecvInit(recvRight, right, 2),
            c.SsendInit(sendLeft, left, 2),
            c.SendInit(sendRight, 4, width, right, 1),
        ];
        Check.Equal(before.PersistentRequests + 4, Mpi.GetStatistics().PersistentRequests, "four persistent requests made");
        Check.True(reqs.All(r => !r.IsActive), "made inactive");
        int bad = 0;
        for (int round = 0; round < rounds; round++)
        {
            for (int i = 0; i < width; i++)
            {
                sendLeft[i] = Value(c.Rank, round, 0, i);
                sendRight[4 + i] = Value(c.Rank, round, 1, i);
            }
            if (round % 2 == 0)
            {
                PersistentRequest.StartAll(reqs);
                Check.True(reqs.All(r => r.IsActive), "StartAll started every request");
                Status[] st = PersistentRequest.WaitAll(reqs);
                if (st[0].GetCount<int>() != width || st[0].Source != left || st[1].Tag != 2)
                    bad++;
            }
            else
            {
                foreach (PersistentRequest r in reqs)
                    r.Start();
                for (int k = reqs.Length - 1; k >= 0; k--)
                {
                    Status s = reqs[k].Wait();
                    if (k < 2 && s.GetCount<int>() != width)
                        bad++;
                }
            }
            for (int i = 0; i < width; i++)
            {
                if (recvLeft[i] != Value(left, round, 1, i) || recvRight[i] != Value(right, round, 0, i))
                {
                    if (bad++ < 5)
                        Check.True(false, $"round {round}: halo element {i} is {recvLeft[i]:x}/{recvRight[i]:x}");
                    break;
                }
            }
        }
        Check.Equal(0, bad, "rounds with a wrong halo or status");
        MpiStatistics after = Mpi.GetStatistics();
        Check.Equal(before.PersistentStarts + 4L * rounds, after.PersistentStarts, "every instance counted");
        Check.True(reqs.All(r => !r.IsActive), "inactive after the last round");
        foreach (PersistentRequest r in reqs)
            r.Dispose();
        after = Mpi.GetStatistics();
        Check.Equal(before.PersistentRequests, after.PersistentRequests, "disposed: no MPI request left");
        Check.Equal(before.ActiveRequests, after.ActiveRequests, "disposed: no slot left");
        c.Barrier();
    }

    /// <summary>
    /// Ends a no-GC region; 1 when a collection ran since <paramref name="collections"/> (the gen-0
    /// count taken at its start) anyway: one another thread forced, which ends the region early.
    /// </summary>
    private static int EndNoGcRegion(int collections)
    {
        try
        {
            GC.EndNoGCRegion();
        }
        catch (InvalidOperationException) // the region was over already: a collection ended it
        {
        }
        return GC.CollectionCount(0) != collections ? 1 : 0;
    }

    // Small young arrays between garbage, so compacting GCs move them.  Between instances
    // nothing pins them: after a GC moved one, the next Start must make its MPI request again on
    // the new address (counted exactly), and the data must still be right.  During an instance
    // the array must not move.  A persistent Allreduce on movable arrays runs alongside.
    private static void GcTorture(Communicator c)
    {
        const int rounds = 60, n = 32;
        int peer = (c.Rank + 1) % c.Size;
        bool collectives = PersistentCollectivesExpected();
        var sum = new long[4];
        var partial = new long[4];
        using PersistentRequest? ar = collectives ? c.AllreduceInit(partial, sum, Op.Sum) : null;
        (object?[] spacers, int[] send, int[] recv) = ArraysAfterSpacers(n, rounds);
        // No GC between taking an address and the core taking it (allocations could start one).
        Check.True(GC.TryStartNoGCRegion(NoGcBytes), "no-GC region for the init");
        int collections = GC.CollectionCount(0);
        using PersistentRequest rr = c.RecvInit(recv, peer, 7);
        using PersistentRequest sr = c.SendInit(send, peer, 7);
        nint sendAt = Address(send), recvAt = Address(recv);
        int uncertain = EndNoGcRegion(collections);
        long expected = 0, moved = 0;
        long recreatedBefore = Mpi.GetStatistics().PersistentRecreated;
        int bad = 0;
        for (int round = 0; round < rounds; round++)
        {
            for (int i = 0; i < n; i++)
                send[i] = Value(c.Rank, round, 0, i);
            for (int k = 0; k < partial.Length; k++)
                partial[k] = (c.Rank + 1) * (round + k);
            // No GC from taking the addresses to the starts: they are the ones Start sees.
            Check.True(GC.TryStartNoGCRegion(NoGcBytes), "no-GC region for the receive's start");
            collections = GC.CollectionCount(0);
            nint r = Address(recv);
            expected += r != recvAt ? 1 : 0;
            moved += r != recvAt ? 1 : 0;
            rr.Start();
            // Active from here on: the address now is the one MPI has, even when another thread's
            // collection broke the window above and moved the array before the start.
            recvAt = Address(recv);
            ar?.Start();
            uncertain += EndNoGcRegion(collections);
            CompactAll(); // during the instance (the peer sends after the barrier): MPI's buffer stays put
            Check.Equal(recvAt, Address(recv), $"round {round}: the active receive buffer did not move");
            c.Barrier();
            Check.True(GC.TryStartNoGCRegion(NoGcBytes), "no-GC region for the send's start");
            collections = GC.CollectionCount(0);
            expected += Address(send) != sendAt ? 1 : 0;
            sr.Start();
            sendAt = Address(send); // pinned while active: the address MPI has
            uncertain += EndNoGcRegion(collections);
            sr.Wait();
            Status st = rr.Wait();
            ar?.Wait();
            if (st.GetCount<int>() != n)
                bad++;
            for (int i = 0; i < n; i++)
            {
                if (recv[i] != Value(peer, round, 0, i))
                {
                    if (bad++ < 5)
                        Check.True(false, $"round {round}: element {i} is {recv[i]:x}, expected {Value(peer, round, 0, i):x}");
                    break;
                }
            }
            for (int k = 0; collectives && k < sum.Length; k++)
                if (sum[k] != (long)c.Size * (c.Size + 1) / 2 * (round + k))
                    bad++;
            // Between instances the arrays are free to move: free room before them, and compact.
            for (int k = 0; k < SpacersPerRound; k++)
                spacers[round * SpacersPerRound + k] = null;
            CompactAll();
        }
        long recreated = Mpi.GetStatistics().PersistentRecreated - recreatedBefore;
        Check.Equal(0, bad, "rounds with wrong data");
        // At least its promotions move it (gen0 to gen1 to gen2); regions GC then often sweeps
        // rather than compacts a region of survivors, so later rounds may leave it in place.
        Check.True(moved >= 2, $"the GC moved the receive array between instances in {moved} of {rounds} rounds");
        Console.WriteLine($"rank {c.Rank}: the receive array moved between instances in {moved} of {rounds} rounds; {recreated} MPI requests made again");
        // A window another thread's collection broke may have seen an address the core did not,
        // for its own Start and the next one: without such a thread (MOTOR_GC_STRESS) none does.
        if (Environment.GetEnvironmentVariable(GcStress.Variable) is null or "" or "0")
            Check.Equal(0, uncertain, "no collection inside a no-GC region");
        Check.True(Math.Abs(recreated - expected) <= 2 * uncertain,
                   $"MPI requests made again exactly when an array had moved: {recreated}, expected {expected} ({uncertain} windows broken by a collection)");
        c.Barrier();
    }

    // Persistent requests dropped without Dispose, inactive and active (a receive whose message
    // comes later, a collective): once collected and swept, the slots, MPI requests and buffers are
    // all gone, though the program makes only blocking calls afterwards.
    private static void Dropped(Communicator c)
    {
        int peer = (c.Rank + 1) % c.Size;
        c.Barrier();
        MpiStatistics before = Mpi.GetStatistics();
        List<WeakReference> buffers = MakeAndDrop(c, peer);
        Check.True(Mpi.GetStatistics().PersistentRequests >= before.PersistentRequests + 3, "the dropped requests exist until collected");
        for (int i = 0; i < 3; i++)
        {
            GC.Collect();
            GC.WaitForPendingFinalizers();
        }
        c.Barrier();
        c.Send(new int[8], peer, 21); // completes the peer's dropped receive
        for (int i = 0; i < 10; i++)
        {
            c.Barrier(); // blocking calls only: the core sweeps orphans in them
            GC.Collect();
            GC.WaitForPendingFinalizers();
        }
        MpiStatistics after = Mpi.GetStatistics();
        Check.Equal(before.PersistentRequests, after.PersistentRequests, "every dropped persistent request freed its MPI request");
        Check.Equal(before.ActiveRequests, after.ActiveRequests, "every dropped persistent request freed its slot");
        Check.True(buffers.All(w => !w.IsAlive), "the dropped requests' arrays were collected");
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static List<WeakReference> MakeAndDrop(Communicator c, int peer)
    {
        var inactive = new int[8];
        var active = new int[8];
        var sent = new int[4];
        var once = new int[4];
        c.RecvInit(inactive, peer, 20); // never started
        PersistentRequest r = c.RecvInit(active, peer, 21);
        r.Start(); // its message comes after the drop
        PersistentRequest s = c.SendInit(sent, peer, 22);
        PersistentRequest q = c.RecvInit(once, peer, 22);
        PersistentRequest.StartAll(q, s);
        PersistentRequest.WaitAll(q, s); // completed once, then dropped
        if (PersistentCollectivesExpected())
            c.BarrierInit().Start(); // active until the peer starts its own, which it does at once
        return [new(inactive), new(active), new(sent), new(once)];
    }

    // Every misuse is refused with its own exception before MPI sees it; a truncated instance
    // throws MessageTruncatedException with MPI's class and leaves the request usable.
    private static void Misuse(Communicator c)
    {
        int peer = (c.Rank + 1) % c.Size;
        var a = new int[4];
        Check.Throws<ArgumentOutOfRangeException>(() => c.SendInit(a, c.Size, 0), "dest = Size");
        Check.Throws<ArgumentOutOfRangeException>(() => c.RecvInit(a, 0, -3), "negative receive tag");
        Check.Throws<ArgumentOutOfRangeException>(() => c.SsendInit(a, 2, 3, peer, 0), "slice past the end");
        Check.Throws<ArgumentNullException>(() => c.SendInit((int[])null!, peer, 0), "null buffer");
        Check.Throws<ArgumentOutOfRangeException>(() => c.BcastInit(a, c.Size), "root = Size");
        Check.Throws<ArgumentException>(() => c.AllreduceInit(a, new int[2], Op.Sum), "receive buffer too small");
        Check.Throws<ArgumentException>(() => c.AllreduceInit(a, new int[4], Op.Create<int>((x, y) => x + y)), "user-defined op");

        PersistentRequest never = c.RecvInit(a, peer, 30);
        Status empty = never.Wait();
        Check.True(empty.Source == Mpi.AnySource && empty.Tag == Mpi.AnyTag && empty.ByteCount == 0 && !empty.Cancelled,
                   $"Wait on a request never started: MPI's empty status, got {empty}");
        Check.True(never.Test(out Status tested) && tested == empty, "Test on a request never started");
        Check.Equal(Mpi.Undefined, PersistentRequest.WaitAny([never], out _), "WaitAny over inactive requests");

        PersistentRequest send = c.SendInit(new[] { 1, 2, 3, 4 }, peer, 30);
        never.Start();
        Check.Throws<InvalidOperationException>(never.Start, "Start of an active request");
        Check.Throws<InvalidOperationException>(() => PersistentRequest.StartAll(send, never), "StartAll with an active request");
        Check.True(!send.IsActive, "StartAll that was refused started nothing");
        Check.Throws<ArgumentException>(() => PersistentRequest.StartAll(send, send), "StartAll with a repeated request");
        Check.True(!send.IsActive, "StartAll with a repeat started nothing");
        send.Start();
        PersistentRequest.WaitAll(never, send);
        Check.Sequence<int>([1, 2, 3, 4], a, "the exchange after the refused calls");

        // A message longer than the buffer: truncation from MPI, with its class; the request survives.
        var small = new int[2];
        PersistentRequest trunc = c.RecvInit(small, peer, 31);
        trunc.Start();
        c.Send(new[] { 5, 6, 7 }, peer, 31);
        try
        {
            trunc.Wait();
            Check.True(false, "a truncated instance must throw");
        }
        catch (MessageTruncatedException e)
        {
            Check.True(e.ErrorClass != 0, $"truncation carries MPI's error class: {e.ErrorClass}");
        }
        Check.True(!trunc.IsActive, "a truncated instance is complete");
        trunc.Start();
        c.Send(new[] { 8, 9 }, peer, 31);
        Check.Equal(2, trunc.Wait().GetCount<int>(), "the request is usable after a truncation");
        Check.Sequence<int>([8, 9], small, "data of the instance after the truncation");

        // A failed WaitAll: MPICH's MPI_Waitall stops at the first failed operation and leaves the
        // rest pending (MPI_ERR_PENDING); those stay active, complete by a later Wait and start again.
        var two = new int[2];
        var four = new int[4];
        PersistentRequest r1 = c.RecvInit(two, peer, 32), r2 = c.RecvInit(four, peer, 33);
        PersistentRequest.StartAll(r1, r2);
        c.Send(new[] { 1, 2, 3 }, peer, 32);
        c.Send(new[] { 4, 5, 6, 7 }, peer, 33);
        Check.Throws<MessageTruncatedException>(() => PersistentRequest.WaitAll(r1, r2), "a truncated instance in WaitAll");
        Check.True(!r1.IsActive, "the truncated instance is complete");
        if (r2.IsActive)
            r2.Wait();
        Check.Sequence<int>([4, 5, 6, 7], four, "the other instance of the failed set");
        PersistentRequest.StartAll(r1, r2);
        c.Send(new[] { 8, 9 }, peer, 32);
        c.Send(new[] { 10, 11, 12, 13 }, peer, 33);
        PersistentRequest.WaitAll(r1, r2);
        Check.Sequence<int>([8, 9], two, "both start again after the failed set");
        Check.Sequence<int>([10, 11, 12, 13], four, "both start again after the failed set (second)");

        // An element offset whose byte offset is above int.MaxValue (it wrapped: each Start moved the
        // receive 2 GiB before the array).  The array is 2.4 GB of address space, one page touched.
        const int Far = 300_000_000;
        var big = new long[Far + 1];
        using (PersistentRequest far = c.RecvInit(big, Far, 1, peer, 34))
        {
            for (long round = 0; round < 2; round++)
            {
                far.Start();
                c.Send(new[] { 41 + round }, peer, 34);
                far.Wait();
                Check.Equal(41 + round, big[Far], "a receive at element 300,000,000");
            }
        }
        Check.True(big[0] == 0 && big[Far - 1] == 0, "nothing else of the array written");

        foreach (PersistentRequest r in new[] { never, send, trunc, r1, r2 })
            r.Dispose();
        send.Dispose(); // twice: nothing
        Check.Throws<ObjectDisposedException>(send.Start, "Start after Dispose");
        Check.Throws<ObjectDisposedException>(() => send.Wait(), "Wait after Dispose");
        Check.Throws<ObjectDisposedException>(() => PersistentRequest.StartAll(send), "StartAll after Dispose");
        c.Barrier();
    }

    // Each persistent collective, run for several instances with fresh data, against its blocking
    // form; on ordinary (staged) arrays and on pinned-heap ones (used in place).  Under Open MPI 4,
    // which lacks them, every Init throws NotSupportedException naming the library, and nothing
    // was sent (the collectives after it still match).
    private static void Collectives(Communicator c)
    {
        if (!PersistentCollectivesExpected())
        {
            NotSupported(c);
            return;
        }
        foreach (bool pinned in new[] { false, true })
        {
            int[] Make(int length) => pinned ? Mpi.AllocatePinned<int>(length) : new int[length];
            int p = c.Size, root = 1 % p, n = 6;
            int[] buf = Make(n), send = Make(n), recv = Make(n), all = Make(n * p), toAll = Make(n * p);
            int[] scat = Make(n * p), block = Make(n);
            long startsBefore = Mpi.GetStatistics().PersistentStarts;
            using PersistentRequest barrier = c.BarrierInit();
            using PersistentRequest bcast = c.BcastInit(buf, root);
            using PersistentRequest reduce = c.ReduceInit(send, c.Rank == root ? recv : null, Op.Max, root);
            using PersistentRequest allreduce = c.AllreduceInit(send, recv, Op.Sum);
            using PersistentRequest gather = c.GatherInit(send, c.Rank == root ? all : null, root);
            using PersistentRequest scatter = c.ScatterInit(c.Rank == root ? scat : null, block, root);
            using PersistentRequest allgather = c.AllgatherInit(send, all);
            using PersistentRequest alltoall = c.AlltoallInit(toAll, all);
            for (int round = 0; round < 5; round++)
            {
                string at = $"{(pinned ? "pinned" : "ordinary")} round {round}";
                Fill(send, c.Rank, round);
                Fill(toAll, c.Rank + 10, round);
                Fill(scat, 20, round);
                if (c.Rank == root)
                    Fill(buf, 30, round);

                barrier.Start();
                barrier.Wait();
                bcast.Start();
                bcast.Wait();
                var expect = (int[])buf.Clone();
                if (c.Rank == root)
                    Fill(expect, 30, round);
                c.Bcast(expect, root);
                Check.Sequence<int>(expect, buf, $"{at}: BcastInit");

                reduce.Start();
                reduce.Wait();
                if (c.Rank == root)
                {
                    var max = new int[n];
                    c.Reduce(send, max, Op.Max, root);
                    Check.Sequence<int>(max, recv, $"{at}: ReduceInit");
                }
                else
                {
                    c.Reduce(send, null, Op.Max, root);
                }

                allreduce.Start();
                allreduce.Wait();
                var sum = new int[n];
                c.Allreduce(send, sum, Op.Sum);
                Check.Sequence<int>(sum, recv, $"{at}: AllreduceInit");

                gather.Start();
                gather.Wait();
                var gathered = c.Rank == root ? new int[n * p] : null;
                c.Gather(send, gathered, root);
                if (c.Rank == root)
                    Check.Sequence<int>(gathered, all, $"{at}: GatherInit");

                scatter.Start();
                scatter.Wait();
                var mine = new int[n];
                c.Scatter(c.Rank == root ? scat : null, mine, root);
                Check.Sequence<int>(mine, block, $"{at}: ScatterInit");

                // Two at once, completed together.
                PersistentRequest.StartAll(allgather, barrier);
                PersistentRequest.WaitAll(allgather, barrier);
                var everyone = new int[n * p];
                c.Allgather(send, everyone);
                Check.Sequence<int>(everyone, all, $"{at}: AllgatherInit");

                alltoall.Start();
                alltoall.Wait();
                var exchanged = new int[n * p];
                c.Alltoall(toAll, exchanged);
                Check.Sequence<int>(exchanged, all, $"{at}: AlltoallInit");
            }
            Check.Equal(startsBefore + 5 * 9, Mpi.GetStatistics().PersistentStarts, "every collective instance counted");
        }
        c.Barrier();
    }

    private static void NotSupported(Communicator c)
    {
        var a = new int[4];
        var b = new int[4 * c.Size];
        var a2 = new int[4]; // one array as send and recv is refused (ArgumentException) before the library is asked
        var b2 = new int[4 * c.Size];
        long before = Mpi.GetStatistics().PersistentRequests;
        foreach ((string name, Func<PersistentRequest> make) in new (string, Func<PersistentRequest>)[]
                 {
                     ("BarrierInit", c.BarrierInit), ("BcastInit", () => c.BcastInit(a, 0)),
                     ("ReduceInit", () => c.ReduceInit(a, a2, Op.Sum, 0)), ("AllreduceInit", () => c.AllreduceInit(a, a2, Op.Sum)),
                     ("GatherInit", () => c.GatherInit(a, b, 0)), ("ScatterInit", () => c.ScatterInit(b, a, 0)),
                     ("AllgatherInit", () => c.AllgatherInit(a, b)), ("AlltoallInit", () => c.AlltoallInit(b, b2)),
                 })
        {
            try
            {
                make().Dispose();
                Check.True(false, $"{name}: no exception, expected NotSupportedException");
            }
            catch (NotSupportedException e)
            {
                Check.True(e.Message.Contains("Open MPI") && e.Message.Contains("_init"),
                           $"{name}: the message names the library and the call: {e.Message}");
            }
        }
        Check.Equal(before, Mpi.GetStatistics().PersistentRequests, "nothing was made");
        // Nothing was sent: the blocking collectives still match.
        Check.Equal(c.Size, c.Allreduce(1, Op.Sum), "a collective after the refused ones");
        c.Barrier();
    }

    private static void Fill(int[] a, int who, int round)
    {
        for (int i = 0; i < a.Length; i++)
            a[i] = who * 1000 + round * 100 + i;
    }

    /// <summary>MPICH 4 has persistent collectives; Open MPI 4 does not.</summary>
    private static bool PersistentCollectivesExpected() => !Mpi.LibraryVersion.StartsWith("Open MPI v4", StringComparison.Ordinal);

    private const int SpacersPerRound = 4;

    /// <summary>Two arrays allocated after spacers: a compacting GC slides them down into the room of each spacer freed.</summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    private static (object?[], int[], int[]) ArraysAfterSpacers(int n, int rounds)
    {
        var spacers = new object?[rounds * SpacersPerRound];
        for (int i = 0; i < spacers.Length; i++)
            spacers[i] = new byte[256];
        var a = new int[n];
        var b = new int[n];
        Garbage();
        return (spacers, a, b);
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static void Garbage()
    {
        for (int i = 0; i < 512; i++)
            GC.KeepAlive(new byte[64]);
    }
}
