using System.Diagnostics;
using System.MP;
using System.Runtime;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using static Scenarios.Heap;

namespace Scenarios;

/// <summary>
/// Nonblocking buffers and the garbage collector: compacting GCs while
/// operations are in flight, in both modes (motor's GC extension pins at mark
/// time; plain dotnet holds pinned GCHandles).  Every byte received is checked.
/// </summary>
internal static class GcExtension
{
    internal static void Register(Dictionary<Scenario, Action<Communicator>> s)
    {
        s[Scenario.GcTorture] = Torture;
        s[Scenario.GcBlockingPointToPoint] = BlockingPointToPoint;
        s[Scenario.GcPinsInFlight] = PinsInFlight;
        s[Scenario.PinnedHeapBuffers] = PinnedHeapBuffers;
        s[Scenario.GcLargeArrays] = LargeArrays;
        s[Scenario.GcGen0Budget] = Gen0Budget;
        s[Scenario.GcMarkCompletesAnError] = MarkCompletesAnError;
        s[Scenario.GcNotStarved] = GcNotStarved;
        s[Scenario.GcMatchedReceiveInFlight] = MatchedReceiveInFlight;
    }

    // Under motor a GC mark tests the operations in flight, on the thread that collects: one that
    // fails there (a receive truncated, plain and persistent) still throws on its owner's thread
    // with MPI's error class and message.  Rank 0 collects on other threads until a mark has seen
    // both complete (in library mode nothing completes at a mark: the owner's Wait fails them).
    private static void MarkCompletesAnError(Communicator c)
    {
        if (c.Rank > 1)
            return;
        if (c.Rank == 1)
        {
            c.Barrier(); // the receives are posted
            c.Send(new[] { 1, 2, 3 }, 0, 41);
            c.Send(new[] { 4, 5, 6 }, 0, 42);
            c.Barrier();
            return;
        }
        Request plain = c.IRecv(new int[2], 1, 41);
        using PersistentRequest persistent = c.RecvInit(new int[2], 1, 42);
        persistent.Start();
        c.Barrier();
        if (Mpi.GetStatistics().GcExtensionActive)
        {
            long released = Mpi.GetStatistics().ReleasedAtMark;
            int collections = 0;
            for (; collections < 1000 && Mpi.GetStatistics().ReleasedAtMark < released + 2; collections++)
            {
                var collector = new Thread(CompactAll);
                collector.Start();
                collector.Join();
            }
            Check.True(Mpi.GetStatistics().ReleasedAtMark >= released + 2, $"both receives completed at a mark ({collections} collections)");
        }
        foreach ((string what, Action wait) in new (string, Action)[] { ("IRecv", () => plain.Wait()), ("RecvInit", () => persistent.Wait()) })
        {
            MessageTruncatedException? e = Check.Throws<MessageTruncatedException>(wait, $"{what}: a truncated receive");
            Check.True(e is { ErrorClass: not 0 } && e.Message.Contains("MPI_ERR_TRUNCATE", StringComparison.Ordinal),
                       $"{what}: MPI's error class and message on the owner's thread: {e?.ErrorClass} '{e?.Message}'");
        }
        c.Barrier();
    }

    private static readonly int[] s_sizes = [1, 3, 64, 1000, 4096, 30_000, 100_000, 300_000];

    private static int Pattern(int rank, int round, int k, int i) => (rank << 24) ^ (round << 16) ^ (k << 12) ^ i;

    /// <summary>Checks a received array against the sender's pattern; counts a wrong message in <paramref name="bad"/> (the first five reported).</summary>
    private static void CheckPattern(int[] recv, int sender, int round, int k, ref int bad)
    {
        for (int i = 0; i < recv.Length; i++)
        {
            if (recv[i] != Pattern(sender, round, k, i))
            {
                if (bad++ < 5)
                    Check.True(false, $"round {round}, message {k} ({recv.Length} ints): element {i} is {recv[i]:x}, expected {Pattern(sender, round, k, i):x}");
                return;
            }
        }
    }

    // Ring exchange: every rank receives from its left neighbour and sends to
    // its right one, for many rounds and sizes (up to the large object heap).
    // Receives are posted, then a compacting gen2 GC runs, then all ranks post
    // their sends, then another compacting GC: so every receive is in flight
    // across two GCs and every large send across one.  Meanwhile a second
    // thread allocates and forces compacting GCs of its own.
    private static void Torture(Communicator c)
    {
        int rounds = 40;
        int left = (c.Rank + c.Size - 1) % c.Size, right = (c.Rank + 1) % c.Size;
        long gcBefore = GC.CollectionCount(2);
        using var stop = new CancellationTokenSource();
        var allocator = new Thread(() => Allocate(stop.Token)) { IsBackground = true };
        allocator.Start();
        int bad = 0;
        for (int round = 0; round < rounds; round++)
        {
            var recv = new int[s_sizes.Length][];
            var send = new int[s_sizes.Length][];
            var reqs = new Request[2 * s_sizes.Length];
            for (int k = 0; k < s_sizes.Length; k++)
            {
                recv[k] = new int[s_sizes[k]];
                Array.Fill(recv[k], -1);
                reqs[k] = c.IRecv(recv[k], left, 100 + k);
            }
            CompactAll();
            c.Barrier(); // every receive is posted and has lived through a GC
            for (int k = 0; k < s_sizes.Length; k++)
            {
                send[k] = new int[s_sizes[k]];
                for (int i = 0; i < send[k].Length; i++)
                    send[k][i] = Pattern(c.Rank, round, k, i);
                reqs[s_sizes.Length + k] = c.ISend(send[k], right, 100 + k);
            }
            CompactAll();
            Status[] st = Request.WaitAll(reqs);
            for (int k = 0; k < s_sizes.Length; k++)
            {
                Check.Equal(s_sizes[k], st[k].GetCount<int>(), $"round {round} size {s_sizes[k]}: elements received");
                CheckPattern(recv[k], left, round, k, ref bad);
            }
        }
        stop.Cancel();
        allocator.Join();
        Check.Equal(0, bad, "messages with a wrong element");
        Check.True(GC.CollectionCount(2) - gcBefore >= 2 * rounds, "compacting gen2 GCs ran during the exchange");
        Check.Equal(0L, Mpi.GetStatistics().ActiveRequests, "no request left in the in-flight table");
        c.Barrier();
    }

    // A blocking Send or Recv is one blocking call (MPI_Send or MPI_Recv with the thread in
    // preemptive mode and the array pinned by the caller's fixed): compacting GCs, forced by a
    // thread on each rank, run while a rank sits inside one, and every element arrives.  Rank 1
    // sleeps before each of its calls, so that rank 0 waits in its receive, and in its send of
    // the sizes MPI sends by rendezvous, across several GCs.
    private static void BlockingPointToPoint(Communicator c)
    {
        int[] sizes = [1, 1000, 30_000, 300_000];
        const int Rounds = 4;
        using var stop = new CancellationTokenSource();
        var compactor = new Thread(() =>
        {
            var keep = new object[64];
            for (int i = 0; !stop.IsCancellationRequested; i++)
            {
                keep[i & 63] = new byte[1 + (i & 15) * 512];
                CompactAll();
                Thread.Sleep(1);
            }
        }) { IsBackground = true };
        compactor.Start();
        int peer = 1 - c.Rank, gcsInside = 0, bad = 0;
        for (int round = 0; round < Rounds && c.Rank < 2; round++)
        {
            for (int k = 0; k < sizes.Length; k++)
            {
                var recv = new int[sizes[k]];
                Array.Fill(recv, -1);
                var send = new int[sizes[k]];
                for (int i = 0; i < send.Length; i++)
                    send[i] = Pattern(c.Rank, round, k, i);
                if (c.Rank == 1)
                {
                    Thread.Sleep(5);
                    c.Send(send, peer, 10 + k);
                    Thread.Sleep(5);
                    c.Recv(recv, peer, 20 + k);
                }
                else
                {
                    int before = GC.CollectionCount(2);
                    c.Recv(recv, peer, 10 + k);
                    c.Send(send, peer, 20 + k);
                    gcsInside += GC.CollectionCount(2) - before;
                }
                CheckPattern(recv, peer, round, k, ref bad);
            }
        }
        stop.Cancel();
        compactor.Join();
        Check.Equal(0, bad, "messages with a wrong element");
        if (c.Rank == 0)
        {
            Console.WriteLine($"gc-blocking-point-to-point: {gcsInside} compacting GCs while rank 0 was inside a blocking Recv or Send");
            Check.True(gcsInside >= Rounds * sizes.Length, $"compacting GCs ran while rank 0 waited in blocking calls ({gcsInside})");
        }
        c.Barrier();
    }

    private static void Allocate(CancellationToken stop)
    {
        var keep = new object[256];
        var rng = new Random(7);
        for (int n = 0; !stop.IsCancellationRequested; n++)
        {
            keep[rng.Next(keep.Length)] = new byte[rng.Next(16, 4096)];
            if (n % 20_000 == 0)
                CompactAll();
        }
    }

    // Under motor the extension must pin a buffer while its receive is in
    // flight (its address survives compacting GCs) and report it at mark; once
    // complete it is no longer reported.  Under plain dotnet a GCHandle pins it.
    private static unsafe void PinsInFlight(Communicator c)
    {
        bool expectExtension = Mpi.IsHosted && AppContext.GetData("Motor.GcExtension") as string == "true";
        Check.Equal(expectExtension, Mpi.GetStatistics().GcExtensionActive, "GC extension active");
        Console.WriteLine($"rank {c.Rank}: GC extension {expectExtension}, server GC asked: {AppContext.GetData("System.GC.Server") ?? "no"}, "
                          + $"running: {System.Runtime.GCSettings.IsServerGC}, processors: {Environment.ProcessorCount}");
        if (c.Rank == 1)
        {
            c.Recv<int>(0, 6);
            c.Send(Enumerable.Range(0, 256).ToArray(), 0, 5);
            c.Send(1, 0, 7); // after the data, on the same channel
            c.Barrier();
            return;
        }
        (int[] buffer, int[] control) = YoungArrays();
        nint controlBefore = Address(control);
        Request r = c.IRecv(buffer, 1, 5);
        nint before = Address(buffer); // in flight from here: a collection on another thread may move it before
        CompactAll();
        CompactAll();
        MpiStatistics inFlight = Mpi.GetStatistics();
        Check.Equal(before, Address(buffer), "the in-flight receive buffer did not move");
        // The control array (same age, same neighbourhood, not in flight) did
        // move: these GCs compact, so the check above means something.
        Check.True(Address(control) != controlBefore, "compacting GCs moved an array that is not in flight");
        if (expectExtension)
            Check.True(inFlight.PinnedAtLastMark >= 1, $"pins reported at the last mark while in flight: {inFlight.PinnedAtLastMark}");
        else
            Check.Equal(0L, inFlight.PinnedAtLastMark, "without the extension nothing is reported at mark");
        long released = Mpi.GetStatistics().ReleasedAtMark; // before the data can come: a mark on another thread may find it first
        c.Send(1, 1, 6);
        c.Recv<int>(1, 7); // the data has arrived; the request is not waited on yet
        CompactAll();
        MpiStatistics afterMark = Mpi.GetStatistics();
        Check.Equal(0L, afterMark.PinnedAtLastMark, "a completed receive is not pinned at the next mark, even before Wait");
        if (expectExtension)
            Check.Equal(released + 1, afterMark.ReleasedAtMark, "the mark found the receive complete and released its buffer");
        Status st = r.Wait();
        Check.Equal(256, st.GetCount<int>(), "elements received");
        Check.Sequence<int>(Enumerable.Range(0, 256).ToArray(), buffer, "data received into the buffer");
        GC.KeepAlive(control);
        c.Barrier();
    }

    // The receive of a matched message (MProbe, then Message.IRecv) holds its array while in
    // flight, as every posting path does.  The longer messages are more than the shared-memory
    // transports of MPICH and Open MPI move in one piece, so part of them lands after the post,
    // while rank 0 runs compacting GCs; the array is young, between garbage and below the
    // large-object heap.  Every element is checked; under GC stress (GcStressTests) the GC moves
    // an array nothing holds within a millisecond.
    private static void MatchedReceiveInFlight(Communicator c)
    {
        const int Tag = 8;
        int[] lengths = [20_000, 6_000, 2_000, 256];
        if (c.Rank > 1)
            return;
        if (c.Rank == 1)
        {
            for (int round = 0; round < lengths.Length; round++)
                c.Send(Enumerable.Range(round << 16, lengths[round]).ToArray(), 0, Tag);
            c.Barrier();
            return;
        }
        int bad = 0;
        for (int round = 0; round < lengths.Length; round++)
        {
            int length = lengths[round];
            Message m = c.MProbe(1, Tag);
            Garbage();
            var buffer = new int[length];
            Garbage();
            Request r = m.IRecv(buffer);
            CompactAll();
            CompactAll();
            Status st = r.Wait();
            Check.Equal(length, st.GetCount<int>(), $"round {round}: elements received");
            for (int i = 0; i < length; i++)
                bad += buffer[i] != (round << 16) + i ? 1 : 0;
        }
        Check.Equal(0, bad, "elements of matched receives that missed their array");
        c.Barrier();
    }

    // A buffer from Mpi.AllocatePinned never moves, so a nonblocking receive
    // into it needs no pin at all: it is neither registered with the GC
    // extension nor held by a GCHandle.  A GC during flight sees one pinned
    // object more for an ordinary array, and none for the pinned-heap one.
    private static void PinnedHeapBuffers(Communicator c)
    {
        PinnedHeapDataOnCacheLines();
        if (c.Rank == 1)
        {
            c.Recv<int>(0, 6);
            c.Send(Enumerable.Range(0, 256).ToArray(), 0, 8);
            c.Send(Enumerable.Range(1000, 256).ToArray(), 0, 9);
            c.Barrier();
            return;
        }
        Check.Throws<ArgumentOutOfRangeException>(() => Mpi.AllocatePinned<int>(-1), "negative length");
        int[] poh = Mpi.AllocatePinned<int>(256);
        var ordinary = new int[256];
        long registered = Mpi.GetStatistics().BuffersRegistered;
        Request r1 = c.IRecv(poh, 1, 8);
        CompactAll();
        long pinnedWithPoh = GC.GetGCMemoryInfo().PinnedObjectsCount;
        Check.Equal(registered, Mpi.GetStatistics().BuffersRegistered, "the pinned-heap buffer was not registered");
        Request r2 = c.IRecv(ordinary, 1, 9);
        CompactAll();
        long pinnedWithBoth = GC.GetGCMemoryInfo().PinnedObjectsCount;
        Check.Equal(pinnedWithPoh + 1, pinnedWithBoth, "only the ordinary array needed a pin during the GC");
        if (Mpi.GetStatistics().GcExtensionActive)
            Check.Equal(registered + 1, Mpi.GetStatistics().BuffersRegistered, "the ordinary array was registered");
        c.Send(1, 1, 6);
        Request.WaitAll(r1, r2);
        Check.Sequence<int>(Enumerable.Range(0, 256).ToArray(), poh, "data in the pinned-heap buffer");
        Check.Sequence<int>(Enumerable.Range(1000, 256).ToArray(), ordinary, "data in the ordinary array");
        c.Barrier();
    }

    // Pinned-heap arrays start their data on a cache line (64 bytes; the GC aligns objects to 8),
    // also once a full GC has left holes (the probes and spacers of earlier arrays) in the heap.
    private static void PinnedHeapDataOnCacheLines()
    {
        for (int round = 0; round < 2; round++)
        {
            foreach (int length in new[] { 1, 3, 100, 4096, 100_000, 1 << 20 })
            {
                CheckOnCacheLine(Mpi.AllocatePinned<byte>(length), $"byte[{length}]");
                CheckOnCacheLine(Mpi.AllocatePinned<double>(length), $"double[{length}]");
            }
            GC.Collect();
            GC.WaitForPendingFinalizers();
        }
    }

    private static void CheckOnCacheLine(Array array, string what)
    {
        GCHandle pin = GCHandle.Alloc(array, GCHandleType.Pinned);
        long offset = pin.AddrOfPinnedObject() % 64;
        pin.Free();
        Check.Equal(0L, offset, $"{what} from Mpi.AllocatePinned: data at {offset} bytes past a 64-byte boundary");
    }

    // Large arrays (85,000 bytes and more) and pinned-heap arrays without references start
    // their data on a cache line when motor's GC extension says it places them (the job sets
    // MOTOR_TEST_EXPECT_ALIGNED to what it expects: on by default under motor, off with
    // background GC or MOTOR_GC_ALIGN=0, never under dotnet).  With or without that, the heap
    // stays sound: large arrays of random sizes and types, some uninitialized, some held by
    // pinned handles, some in flight between the ranks, live through large-object-heap
    // compactions and full GCs with every element checked.
    private static unsafe void LargeArrays(Communicator c)
    {
        bool expected = Environment.GetEnvironmentVariable("MOTOR_TEST_EXPECT_ALIGNED") == "1";
        Check.Equal(expected, Mpi.GetStatistics().GcAlignsLargeArrays, "the GC extension places large arrays on cache lines");
        long misplaced = 0;
        foreach (Array a in (Array[])[new byte[85_000], new byte[100_001], new double[20_000], new int[300_000],
                                      GC.AllocateUninitializedArray<byte>(200_003), GC.AllocateUninitializedArray<long>(50_000),
                                      GC.AllocateArray<int>(1000, pinned: true), GC.AllocateArray<byte>(3, pinned: true),
                                      GC.AllocateArray<double>(100_000, pinned: true), new (long, int)[10_000]])
        {
            long offset = (long)Unsafe.AsPointer(ref MemoryMarshal.GetArrayDataReference(a)) % 64;
            if (expected)
                Check.Equal(0L, offset, $"{a.GetType().Name}[{a.Length}]: data at {offset} bytes past a 64-byte boundary");
            else if (offset != 0)
                misplaced++;
        }
        if (!expected && Mpi.IsHosted)
            Check.True(misplaced > 0, "without the alignment, some arrays are off the boundary (the GC places objects on 8 bytes)");

        int peer = c.Rank ^ 1;
        var kept = new Array[24];
        var keptSeed = new int[kept.Length];
        var handles = new List<GCHandle>();
        int lohCompactions = 0;
        for (int round = 0; round < 120; round++)
        {
            // Both ranks draw the same sizes: rank r sends its array of round `round` to r ^ 1.
            var shared = new Random(round);
            int sendLength = shared.Next(85_000, 700_000) / 8, recvLength = sendLength;
            long[] send = round % 3 == 0 ? GC.AllocateUninitializedArray<long>(sendLength) : new long[sendLength];
            for (int i = 0; i < send.Length; i++)
                send[i] = Fill(c.Rank, round, i);
            long[] recv = round % 2 == 0 ? GC.AllocateUninitializedArray<long>(recvLength) : new long[recvLength];
            Request rr = c.IRecv(recv, peer, 40), rs = c.ISend(send, peer, 40);

            var local = new Random(round * 31 + c.Rank);
            int slot = local.Next(kept.Length);
            Verify(kept[slot], keptSeed[slot], $"round {round}: kept array {slot}");
            keptSeed[slot] = local.Next();
            kept[slot] = NewLarge(local.Next(4), local.Next(85_000, 600_000), keptSeed[slot]);
            if (round % 10 == 5)
                handles.Add(GCHandle.Alloc(kept[slot], GCHandleType.Pinned));
            if (round % 4 == 0)
            {
                GCSettings.LargeObjectHeapCompactionMode = GCLargeObjectHeapCompactionMode.CompactOnce;
                CompactAll();
                lohCompactions++;
            }
            else if (round % 4 == 2)
            {
                GC.Collect(2, GCCollectionMode.Forced, blocking: true, compacting: false);
            }
            Request.WaitAll(rr, rs);
            for (int i = 0; i < recv.Length; i++)
                if (recv[i] != Fill(peer, round, i))
                {
                    Check.Equal(Fill(peer, round, i), recv[i], $"round {round}: element {i} of {recv.Length} received");
                    break;
                }
        }
        for (int i = 0; i < kept.Length; i++)
            Verify(kept[i], keptSeed[i], $"at the end: kept array {i}");
        foreach (GCHandle h in handles)
            h.Free();
        Check.True(lohCompactions >= 30, "large-object-heap compactions ran");
        c.Barrier();
    }

    // The gen0 budget (MpiStatistics.GcGen0Budget) is what the job expects in
    // MOTOR_TEST_EXPECT_GEN0: "default" for motor's own (4 MiB), else the bytes, 0 when
    // the GC chose its own; "server" when the job asks for server GC, which the runtime
    // runs only when the process may use more than one processor (else workstation GC,
    // with motor's default).  And the GC collects gen0 at that
    // rate while object graphs go back and forth between the ranks: with a budget of B
    // and A bytes allocated, between A / 2B and 2A / B collections.  Every graph that
    // comes back is checked.  The ranks agree on the number of rounds, so a rank whose
    // budget differs from its peer's fails its check instead of leaving the peer waiting.
    private static void Gen0Budget(Communicator c)
    {
        string expect = Environment.GetEnvironmentVariable("MOTOR_TEST_EXPECT_GEN0") ?? "0";
        if (expect == "server")
            expect = System.Runtime.GCSettings.IsServerGC ? "0" : "default";
        long budget = Mpi.GetStatistics().GcGen0Budget;
        Check.Equal(expect == "default" ? 4L << 20 : long.Parse(expect, System.Globalization.CultureInfo.InvariantCulture),
                    budget, $"gen0 budget in bytes ({(System.Runtime.GCSettings.IsServerGC ? "server" : "workstation")} GC, "
                            + $"{Environment.ProcessorCount} processors)");
        long volume = 32 * c.Allreduce(Math.Max(budget, 2 << 20), Op.Max);
        int peer = c.Rank ^ 1, rounds = (int)(volume / (4 * 1024 + 4 * 64));
        int collections = GC.CollectionCount(0);
        long allocated = GC.GetTotalAllocatedBytes(precise: true);
        for (int round = 0; round < rounds; round++)
        {
            if (c.Rank == 0)
            {
                c.OSend(Chain(round), peer, 50);
                Chain? back = c.ORecv<Chain>(peer, 50);
                for (int k = 0; k < 4; k++, back = back?.Next)
                    if (back is null || back.Data.Length != 256 || back.Data[0] != round * 4 + k || back.Data[255] != ~(round * 4 + k))
                        Check.True(false, $"round {round}: node {k} of the list that came back is wrong");
            }
            else
            {
                c.OSend(c.ORecv<Chain>(peer, 50), peer, 50);
            }
        }
        collections = GC.CollectionCount(0) - collections;
        allocated = GC.GetTotalAllocatedBytes(precise: true) - allocated;
        if (budget > 0)
            Check.True(collections >= allocated / (2 * budget) && collections <= 2 * allocated / budget + 2,
                       $"{collections} gen0 collections for {allocated} bytes allocated with a budget of {budget}");
        c.Barrier();
    }

    private static Chain? Chain(int round)
    {
        Chain? head = null;
        for (int k = 3; k >= 0; k--)
        {
            var data = new int[256];
            data[0] = round * 4 + k;
            data[255] = ~(round * 4 + k);
            head = new Chain { Data = data, Next = head };
        }
        return head;
    }

    private static long Fill(int rank, int round, int i) => ((long)rank << 56) ^ ((long)round << 32) ^ (i * 2654435761L);

    private static Array NewLarge(int kind, int bytes, int seed) => kind switch
    {
        0 => Filled(new byte[bytes], seed, v => (byte)v),
        1 => Filled(GC.AllocateUninitializedArray<int>(bytes / 4), seed, v => v),
        2 => Filled(new double[bytes / 8], seed, v => v),
        _ => Filled(GC.AllocateArray<short>(bytes / 2, pinned: true), seed, v => (short)v),
    };

    private static T[] Filled<T>(T[] a, int seed, Func<int, T> value)
    {
        for (int i = 0; i < a.Length; i++)
            a[i] = value(seed + i * 7);
        return a;
    }

    private static void Verify(Array? a, int seed, string what)
    {
        int bad = a switch
        {
            null => -1,
            byte[] b => FirstWrong(b, seed, v => (byte)v),
            int[] n => FirstWrong(n, seed, v => v),
            double[] d => FirstWrong(d, seed, v => v),
            short[] s => FirstWrong(s, seed, v => (short)v),
            _ => throw new InvalidOperationException(a.GetType().Name),
        };
        Check.True(bad < 0, $"{what}: element {bad} of {a?.Length} changed");
    }

    private static int FirstWrong<T>(T[] a, int seed, Func<int, T> value)
    {
        for (int i = 0; i < a.Length; i++)
            if (!EqualityComparer<T>.Default.Equals(a[i], value(seed + i * 7)))
                return i;
        return -1;
    }

    // Two arrays, each between runs of garbage: a compacting GC slides them
    // down unless they are pinned (each is its own plug, so pinning one does
    // not hold the other in place).
    [MethodImpl(MethodImplOptions.NoInlining)]
    private static (int[], int[]) YoungArrays()
    {
        Garbage();
        var buffer = new int[256];
        Garbage();
        var control = new int[256];
        Garbage();
        return (buffer, control);
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static void Garbage()
    {
        for (int i = 0; i < 2048; i++)
            GC.KeepAlive(new byte[64]);
    }

    private static void GcNotStarved(Communicator c)
    {
        // Rank 0 sits in Recv for ~2 s while another thread allocates: the
        // waiting rank must not hold off the GC.
        const int DelayMs = 2000;
        if (c.Rank == 1)
        {
            Thread.Sleep(DelayMs);
            c.Send(new[] { 1 }, 0, 1);
        }
        else if (c.Rank == 0)
        {
            int gcsBefore = GC.CollectionCount(0);
            long longestPauseTicks = 0;
            var stop = new ManualResetEventSlim();
            var allocator = new Thread(() =>
            {
                var keep = new object[64];
                var sw = Stopwatch.StartNew();
                long last = sw.ElapsedTicks;
                for (int i = 0; !stop.IsSet; i++)
                {
                    keep[i & 63] = new byte[(i & 7) * 1024 + 64];
                    long now = sw.ElapsedTicks;
                    longestPauseTicks = Math.Max(longestPauseTicks, now - last);
                    last = now;
                }
            });
            allocator.Start();
            Thread.Sleep(50);
            var buf = new int[1];
            c.Recv(buf, 1, 1);
            stop.Set();
            allocator.Join();
            int gcs = GC.CollectionCount(0) - gcsBefore;
            double longestMs = longestPauseTicks * 1000.0 / Stopwatch.Frequency;
            Console.WriteLine($"gc-not-starved: {gcs} gen0 GCs while waiting, longest allocation gap {longestMs:F1} ms");
            Check.True(gcs >= 10, $"GCs ran while rank 0 waited in Recv ({gcs})");
            Check.True(longestMs < DelayMs / 4.0, $"longest allocation gap {longestMs:F1} ms is far below the {DelayMs} ms wait");
            Check.Equal(1, buf[0], "message after the wait");
        }
    }
}

/// <summary>A node of the lists the gen0-budget scenario sends back and forth.</summary>
[Transportable]
internal sealed class Chain
{
    [Transportable] public int[] Data = [];
    [Transportable] public Chain? Next;
}
