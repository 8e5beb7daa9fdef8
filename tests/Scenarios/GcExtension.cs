using System.MP;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;

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
        s[Scenario.GcPinsInFlight] = PinsInFlight;
        s[Scenario.PinnedHeapBuffers] = PinnedHeapBuffers;
    }

    private static readonly int[] s_sizes = [1, 3, 64, 1000, 4096, 30_000, 100_000, 300_000];

    private static int Pattern(int rank, int round, int k, int i) => (rank << 24) ^ (round << 16) ^ (k << 12) ^ i;

    private static void CompactAll() => GC.Collect(2, GCCollectionMode.Forced, blocking: true, compacting: true);

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
                for (int i = 0; i < recv[k].Length; i++)
                {
                    if (recv[k][i] != Pattern(left, round, k, i))
                    {
                        if (bad++ < 5)
                            Check.True(false, $"round {round} size {s_sizes[k]}: element {i} is {recv[k][i]:x}, expected {Pattern(left, round, k, i):x}");
                        break;
                    }
                }
            }
        }
        stop.Cancel();
        allocator.Join();
        Check.Equal(0, bad, "messages with a wrong element");
        Check.True(GC.CollectionCount(2) - gcBefore >= 2 * rounds, "compacting gen2 GCs ran during the exchange");
        Check.Equal(0L, Mpi.GetStatistics().ActiveRequests, "no request left in the in-flight table");
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
        Console.WriteLine($"rank {c.Rank}: GC extension {expectExtension}, server GC: {System.Runtime.GCSettings.IsServerGC}");
        if (c.Rank == 1)
        {
            c.Recv<int>(0, 6);
            c.Send(Enumerable.Range(0, 256).ToArray(), 0, 5);
            c.Send(1, 0, 7); // after the data, on the same channel
            c.Barrier();
            return;
        }
        (int[] buffer, int[] control) = YoungArrays();
        nint before = Address(buffer), controlBefore = Address(control);
        Request r = c.IRecv(buffer, 1, 5);
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
        c.Send(1, 1, 6);
        c.Recv<int>(1, 7); // the data has arrived; the request is not waited on yet
        long released = Mpi.GetStatistics().ReleasedAtMark;
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

    private static unsafe nint Address(int[] a) => (nint)Unsafe.AsPointer(ref a[0]);
}
