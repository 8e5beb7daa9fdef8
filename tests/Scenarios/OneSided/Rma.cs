using System.MP;
using System.Runtime.InteropServices;
using static Scenarios.Heap;

namespace Scenarios;

/// <summary>
/// One-sided communication (Window.cs, Window.Typed.cs, Info.cs): every operation under every kind
/// of epoch with its values checked (a distributed counter on FetchAndOp, a mutex on
/// CompareAndSwap, accumulate sums, post-start-complete-wait, shared memory), arrays moved by the
/// GC while operations on others are in flight, and every failure mode.  Two or three ranks.
/// </summary>
internal static class Rma
{
    internal static void Register(Dictionary<Scenario, Action<Communicator>> s)
    {
        s[Scenario.RmaOperations] = Operations;
        s[Scenario.RmaGcTorture] = GcTorture;
        s[Scenario.RmaMisuse] = Misuse;
        s[Scenario.RmaDynamic] = Dynamic;
        s[Scenario.RmaDynamicGcTorture] = DynamicGcTorture;
    }

    private static long Value(int rank, int i) => rank * 1000L + i;

    private static void Operations(Communicator c)
    {
        int me = c.Rank, n = c.Size, right = (me + 1) % n, left = (me + n - 1) % n;
        const int slots = 32;
        // Lengths differ by rank; everyone knows everyone's.
        using var win = Window<long>.Allocate(c, slots + me);
        Check.Equal(slots + me, win.Length, "local length");
        for (int r = 0; r < n; r++)
            Check.Equal((long)slots + r, win.LengthOf(r), $"length of rank {r}'s window");
        long pins = Mpi.GetStatistics().PinnedHandles;
        Span<long> local = win.Span;
        for (int i = 0; i < local.Length; i++)
            local[i] = Value(me, i);
        // The fence that opens the epoch also orders the stores above before the others' Gets.
        win.Fence();
        var mine = new long[] { Value(me, 100), Value(me, 101), Value(me, 102), Value(me, 103) };
        var fromRight = new long[4];
        win.Get(fromRight, right, 4);                 // the right neighbour's own values 4..7
        win.Put(mine, 0, 2, right, 0);                // into the right neighbour's 0..1
        win.Accumulate(new long[] { me + 1 }, Op.Sum, 0, 8); // everyone adds into rank 0's [8]
        win.Accumulate(new long[] { me }, Op.Max, 0, 9);
        win.Fence();
        Check.Sequence([Value(right, 4), Value(right, 5), Value(right, 6), Value(right, 7)], fromRight, "Get in a fence epoch");
        Check.Sequence([Value(left, 100), Value(left, 101)], win.Span[..2], "Put from the left neighbour");
        Check.Equal(Value(me, 2), win.Span[2], "untouched element");
        if (me == 0)
        {
            Check.Equal(Value(0, 8) + (long)n * (n + 1) / 2, win.Span[8], "Accumulate Sum from every rank");
            Check.Equal(Math.Max(Value(0, 9), n - 1), win.Span[9], "Accumulate Max");
        }
        win.Fence(WindowAssert.NoSucceed);

        // Passive target: a distributed counter on rank 0's [10], a CAS mutex on rank 0's
        // mutex[0] guarding a plain read-modify-write of [12].  The mutex is 32-bit: Open MPI
        // 4.1's 64-bit CompareAndSwap crashes in its shared-memory transport (ompi#7967).
        using var mutex = Window<int>.Allocate(c, 1);
        if (me == 0)
        {
            win.Lock(0);
            win.Span[10] = 0;
            win.Span[12] = 0;
            win.Unlock(0);
            mutex.Lock(0);
            mutex.Span[0] = 0;
            mutex.Unlock(0);
        }
        c.Barrier();
        const int increments = 50;
        long fetchedSum = 0;
        win.LockAll();
        mutex.LockAll();
        for (int k = 0; k < increments; k++)
            fetchedSum += win.FetchAndOp(1, Op.Sum, 0, 10);
        for (int k = 0; k < 10; k++)
        {
            while (mutex.CompareAndSwap(me + 1, 0, 0, 0) != 0)
            {
            }
            var v = new long[1];
            win.Get(v, 0, 12);
            win.Flush(0);
            v[0]++;
            win.Put(v, 0, 12);
            win.Flush(0);
            Check.Equal(me + 1, mutex.FetchAndOp(0, Op.Replace, 0, 0), "mutex held by this rank when released");
        }
        mutex.UnlockAll();
        if (!Mpi.LibraryVersion.StartsWith("Open MPI v4", StringComparison.Ordinal))
        {
            // 64-bit CompareAndSwap where the library gets it right: swaps only on a match.
            Check.Equal(Value(me, 15), win.CompareAndSwap(-15, Value(me, 15), me, 15), "64-bit CAS that matches");
            Check.Equal(-15L, win.CompareAndSwap(-99, 0, me, 15), "64-bit CAS that does not match");
            Check.Equal(-15L, win.FetchAndOp(0, Op.NoOp, me, 15), "only the matching CAS swapped");
        }
        long total = increments * n;
        Check.Equal(total * (total - 1) / 2, c.Allreduce(fetchedSum, Op.Sum), "FetchAndOp handed out 0..N-1 once each");
        c.Barrier();
        Check.Equal(total, win.FetchAndOp(0, Op.NoOp, 0, 10), "counter read atomically");
        Check.Equal(10L * n, win.FetchAndOp(0, Op.NoOp, 0, 12), "mutex-guarded increments were not lost");
        // GetAccumulate: fetch-and-add of a vector at the right neighbour's [13..14].
        var before = new long[2];
        win.GetAccumulate(new long[] { 5, 7 }, before, Op.Sum, right, 13);
        win.Flush(right);
        Check.Sequence([Value(right, 13), Value(right, 14)], before, "GetAccumulate fetched the old values");
        c.Barrier();
        var now = new long[2];
        win.GetAccumulate(new long[2], now, Op.NoOp, me, 13);
        win.FlushLocal(me);
        Check.Sequence([Value(me, 13) + 5, Value(me, 14) + 7], now, "GetAccumulate NoOp: an atomic read");
        win.UnlockAll();
        c.Barrier();

        // Exclusive lock with request-based Rput / Rget.
        win.Lock(right);
        Request put = win.Rput(new long[] { -1, -2, -3 }, right, 16);
        put.Wait();
        var back = new long[3];
        win.Flush(right);
        win.Rget(back, right, 16).Wait();
        win.Unlock(right);
        Check.Sequence([-1L, -2L, -3L], back, "Rget reads what Rput wrote");
        c.Barrier();
        Check.Sequence([-1L, -2L, -3L], win.Span.Slice(16, 3), "Rput arrived");

        // Post-start-complete-wait with the neighbours.
        using Group all = c.Group;
        using Group origins = all.Include(left);
        using Group targets = all.Include(right);
        win.Post(origins);
        win.Start(targets);
        win.Put(new long[] { Value(me, 200) }, right, 20);
        win.Complete();
        win.Wait();
        Check.Equal(Value(left, 200), win.Span[20], "Put in a post-start-complete-wait epoch");
        Check.Equal(pins, Mpi.GetStatistics().PinnedHandles, "no array held after the epochs ended");
        c.Barrier();

        SharedAndCreated(c);
    }

    // Shared memory: every rank writes its own segment, reads its neighbour's directly.  A window
    // over a pinned-heap array with hints from an Info.
    private static void SharedAndCreated(Communicator c)
    {
        int me = c.Rank, n = c.Size, right = (me + 1) % n;
        using Communicator node = c.SplitShared();
        using var shared = Window<int>.AllocateShared(node, 8);
        shared.LockAll();
        for (int i = 0; i < 8; i++)
            shared.Span[i] = me * 10 + i;
        shared.UnlockAll();
        node.Barrier();
        shared.LockAll();
        int peer = (node.Rank + 1) % node.Size;
        Span<int> theirs = shared.SharedMemory(peer).Span;
        Check.Equal(8, theirs.Length, "peer segment length");
        int peerWorld = peer; // the node communicator keeps world order here (one node)
        Check.Equal(peerWorld * 10 + 7, theirs[7], "a load from the peer's shared segment");
        shared.UnlockAll();
        node.Barrier();

        using var info = new Info { ["accumulate_ordering"] = "none", ["motor_test_key"] = "value 1" };
        Check.Equal("value 1", info["motor_test_key"], "info value read back");
        Check.Equal<string?>(null, info["not_set"], "unset info key");
        int[] array = Mpi.AllocatePinned<int>(6);
        using var created = Window<int>.Create(c, array, info);
        created.Fence();
        created.Put(new[] { me + 1, me + 2 }, right, 4);
        created.Accumulate(new[] { 1 }, Op.Sum, 0, 0);
        created.Fence();
        Check.Equal((me + n - 1) % n + 1, array[4], "Put into a window over a pinned-heap array");
        if (me == 0)
            Check.Equal(n, array[0], "Accumulate into a pinned-heap array");
        Check.True(created.Memory.Span.Overlaps(array), "Memory is the array itself");
        created.Fence(WindowAssert.NoSucceed);
    }

    // Passive-target epochs while compacting GCs run: the arrays passed to Put/Get/Accumulate are
    // young and surrounded by garbage, so a GC would move them if nothing held them.  The window
    // holds each until the flush that completes its operation (under motor registered with the
    // GC extension, no GCHandle; in library mode pinned); the data must arrive intact.
    private static void GcTorture(Communicator c)
    {
        int me = c.Rank, n = c.Size, right = (me + 1) % n, left = (me + n - 1) % n;
        const int rounds = 40, width = 64;
        using var win = Window<int>.Allocate(c, rounds * width);
        using var sums = Window<long>.Create(c, 1);
        var keep = new List<object>();
        var gets = new List<(int Round, int[] Buffer)>();
        MpiStatistics start = Mpi.GetStatistics();
        bool registers = Mpi.IsHosted && start.GcExtensionActive;
        long pins = start.PinnedHandles;
        win.LockAll();
        sums.LockAll();
        for (int round = 0; round < rounds; round++)
        {
            keep.Add(new byte[1000 + round]); // garbage around the operation's arrays
            var data = new int[width];
            for (int i = 0; i < width; i++)
                data[i] = (me << 20) | (round << 8) | i;
            win.Put(data, right, (long)round * width);
            sums.Accumulate([round + 1L], Op.Sum, right, 0);
            keep.Add(new object[100]);
            if (round % 4 == 3)
            {
                CompactAll();
                MpiStatistics held = Mpi.GetStatistics();
                if (registers)
                {
                    Check.Equal(pins, held.PinnedHandles, "no GCHandle under motor");
                    Check.True(held.PinnedAtLastMark >= 4, $"the GC extension held the arrays of the 4 Puts ({held.PinnedAtLastMark})");
                }
                else
                {
                    Check.True(held.PinnedHandles > pins, "arrays pinned while their operations are incomplete");
                }
                win.Flush(right);
                sums.Flush(right);
            }
        }
        win.FlushAll();
        sums.FlushAll(); // Flush(rank) keeps the arrays it completed pinned until the next one (library mode)
        Check.Equal(pins, Mpi.GetStatistics().PinnedHandles, "flushes let go of every array");
        c.Barrier();
        // Read back what the left neighbour wrote here, through Gets whose buffers the GC would move.
        for (int round = 0; round < rounds; round += 5)
        {
            keep.Add(new byte[2000]);
            var buffer = new int[width];
            win.Get(buffer, me, (long)round * width);
            gets.Add((round, buffer));
            CompactAll();
        }
        win.FlushLocal(me);
        int bad = 0;
        foreach ((int round, int[] buffer) in gets)
            for (int i = 0; i < width; i++)
                if (buffer[i] != ((left << 20) | (round << 8) | i))
                    bad++;
        Check.Equal(0, bad, "elements read back wrong after compacting GCs");
        // Request-based Get into a young array, GC before Wait.
        var rget = new int[width];
        Request r = win.Rget(rget, me, 0);
        CompactAll();
        r.Wait();
        Check.Equal((left << 20) | 5, rget[5], "Rget through a compacting GC");
        // Request-based Put from a young array, GC before Wait; a Get reads it back.
        keep.Add(new byte[2000]);
        int[] rput = Enumerable.Range(0, width).Select(i => (me << 20) | (0x7f << 8) | i).ToArray();
        Request put = win.Rput(rput, me, 0);
        CompactAll();
        put.Wait();
        win.Flush(me);
        var putBack = new int[width];
        win.Get(putBack, me, 0);
        win.FlushLocal(me);
        Check.Sequence(rput, putBack, "Rput through a compacting GC");
        SteadyHolds(win, sums, me, width, (long)rounds * (rounds + 1) / 2, registers, pins);
        win.UnlockAll();
        sums.UnlockAll();
        c.Barrier();
        Check.Equal((long)rounds * (rounds + 1) / 2, sums.Span[0], "accumulated sums survived the GCs");
        // The window's own memory: a pinned-heap array the GC must not move or free.
        CompactAll();
        Check.Equal((long)rounds * (rounds + 1) / 2, sums.Memory.Span[0], "window memory intact after GC");
        GC.KeepAlive(keep);
        c.Barrier();
    }

    // One young array reused by Put + Flush, Get + FlushLocal and GetAccumulate + Flush with
    // compacting GCs between each operation and its flush: the hold of the array is made again
    // each time (under motor no GCHandle at all; in library mode the window reuses the handles it
    // has), and the values survive.  Runs inside GcTorture's LockAll epochs on this rank's own
    // windows (nobody else writes there meanwhile); sums holds sum and is left so.
    private static void SteadyHolds(Window<int> win, Window<long> sums, int me, int width, long sum, bool registers, long pins)
    {
        const int ops = 60;
        MpiStatistics before = Mpi.GetStatistics();
        var data = new int[width];
        var back = new int[width];
        var one = new long[1];
        var old = new long[1];
        int bad = 0;
        long added = 0;
        for (int i = 0; i < ops; i++)
        {
            for (int k = 0; k < width; k++)
                data[k] = i * width + k;
            win.Put(data, me, 0); // own window: no other rank writes there now
            if (i % 10 == 0)
                CompactAll();
            win.Flush(me);
            win.Get(back, me, 0);
            if (i % 10 == 5)
                CompactAll();
            win.FlushLocal(me);
            for (int k = 0; k < width; k++)
                bad += back[k] != i * width + k ? 1 : 0;
            one[0] = i;
            sums.GetAccumulate(one, old, Op.Sum, me, 0);
            if (i % 10 == 7)
                CompactAll();
            sums.Flush(me);
            bad += old[0] != sum + added ? 1 : 0;
            added += i;
        }
        sums.Accumulate([-added], Op.Sum, me, 0);
        sums.FlushAll();
        win.FlushAll();
        Check.Equal(0, bad, "Put, Get and GetAccumulate through compacting GCs on one reused array");
        MpiStatistics after = Mpi.GetStatistics();
        long allocated = after.PinnedHandlesAllocated - before.PinnedHandlesAllocated;
        if (registers)
        {
            Check.Equal(0L, allocated, "GCHandles allocated by Put/Get/GetAccumulate under motor");
            Check.True(after.BuffersRegistered - before.BuffersRegistered >= 4 * ops + 1,
                       "the arrays were registered with the GC extension instead");
        }
        else
        {
            // The handles of GcTorture's epochs are reused, and a flush keeps the arrays it completed
            // pinned for the next operation on them: at most one handle per array.
            Check.True(allocated <= 4, $"library mode reuses its pinned handles ({allocated} allocated for {4 * ops} holds)");
        }
        Check.Equal(pins, after.PinnedHandles, "FlushAll let go of every array");
    }

    private struct Pair
    {
        public int A, B;
    }

    private static void Misuse(Communicator c)
    {
        int me = c.Rank, n = c.Size, right = (me + 1) % n;
        using var win = Window<long>.Allocate(c, 10);
        var one = new long[1];
        // No epoch open.
        Check.Throws<InvalidOperationException>(() => win.Put(one, right, 0), "Put outside any epoch");
        Check.Throws<InvalidOperationException>(() => win.Get(one, right, 0), "Get outside any epoch");
        Check.Throws<InvalidOperationException>(() => win.Unlock(right), "Unlock without Lock");
        Check.Throws<InvalidOperationException>(() => win.UnlockAll(), "UnlockAll without LockAll");
        Check.Throws<InvalidOperationException>(() => win.Flush(right), "Flush outside a passive epoch");
        Check.Throws<InvalidOperationException>(() => win.FlushAll(), "FlushAll outside a passive epoch");
        Check.Throws<InvalidOperationException>(() => win.Complete(), "Complete without Start");
        Check.Throws<InvalidOperationException>(() => win.Wait(), "Wait without Post");
        // Outside any epoch and out of range as well: the range is named, not the epoch.
        var outside = Check.ThrowsNaming<ArgumentOutOfRangeException>("targetIndex", () => win.Put(new long[3], right, 8), "Put past the end, outside any epoch");
        Check.True(outside?.Message.Contains("80 bytes", StringComparison.Ordinal) == true, $"the range error outside an epoch names the window size: {outside?.Message}");
        Check.ThrowsNaming<ArgumentOutOfRangeException>("targetIndex", () => win.Get(one, right, 10), "Get at the end, outside any epoch");
        Check.ThrowsNaming<ArgumentOutOfRangeException>("targetIndex", () => win.Accumulate(one, Op.Sum, right, long.MaxValue / 4), "Accumulate at a huge index, outside any epoch");
        Check.ThrowsNaming<ArgumentOutOfRangeException>("targetIndex", () => win.FetchAndOp(1, Op.Sum, right, 10), "FetchAndOp at the end, outside any epoch");
        // Fence epoch: passive-only operations refused.
        win.Fence();
        Check.Throws<InvalidOperationException>(() => win.FetchAndOp(1, Op.Sum, right, 0), "FetchAndOp in a fence epoch");
        Check.Throws<InvalidOperationException>(() => win.Rput(one, right, 0), "Rput in a fence epoch");
        // One array as GetAccumulate's data and result (MPI forbids the overlap): refused first.
        long[] both = [1, 2];
        Check.ThrowsNaming<ArgumentException>("result", () => win.GetAccumulate(both, both, Op.Sum, right, 0), "GetAccumulate into its own data");
        // Out of the target's window, before anything is sent, naming the argument.
        var e = Check.ThrowsNaming<ArgumentOutOfRangeException>("targetIndex", () => win.Put(new long[3], right, 8), "Put past the window's end");
        Check.True(e?.Message.Contains("80 bytes", StringComparison.Ordinal) == true, $"message names the window size: {e?.Message}");
        Check.ThrowsNaming<ArgumentOutOfRangeException>("targetIndex", () => win.Get(one, right, 10), "Get at the end");
        Check.ThrowsNaming<ArgumentOutOfRangeException>("targetIndex", () => win.Get(one, right, -1), "negative index");
        Check.ThrowsNaming<ArgumentOutOfRangeException>("targetIndex", () => win.Accumulate(one, Op.Sum, right, long.MaxValue / 4), "huge index");
        Check.ThrowsNaming<ArgumentOutOfRangeException>("target", () => win.Put(one, n, 0), "target rank out of range");
        Check.ThrowsNaming<ArgumentOutOfRangeException>("target", () => win.Accumulate(one, Op.Sum, -3, 0), "negative target rank");
        Check.ThrowsNaming<ArgumentOutOfRangeException>("rank", () => win.Lock(n), "Lock of a rank outside the group");
        Check.ThrowsNaming<ArgumentOutOfRangeException>("rank", () => win.LengthOf(-1), "LengthOf a negative rank");
        Check.Throws<ArgumentOutOfRangeException>(() => win.Put(one, 0, 2, right, 0), "local slice past the array");
        Check.Throws<ArgumentException>(() => win.GetAccumulate(new long[2], one, Op.Sum, right, 0), "result too short");
        using (Op user = Op.Create<long>((a, b) => a + b))
            Check.Throws<ArgumentException>(() => win.Accumulate(one, user, right, 0), "user op in Accumulate");
        Check.Throws<ArgumentException>(() => win.Accumulate(one, Op.NoOp, right, 0), "NoOp in Accumulate");
        Check.Throws<ArgumentException>(() => win.Accumulate(one, Op.MinLoc, right, 0), "MinLoc on long");
        win.Put(one, Mpi.ProcNull, 0); // ProcNull: nothing moves, nothing held
        win.Fence(WindowAssert.NoSucceed);
        // Passive epochs.
        win.Lock(right);
        Check.Throws<InvalidOperationException>(() => win.Lock(right), "Lock twice");
        Check.Throws<InvalidOperationException>(() => win.LockAll(), "LockAll inside Lock");
        Check.Throws<InvalidOperationException>(() => win.Fence(), "Fence inside Lock");
        Check.Throws<InvalidOperationException>(() => win.Dispose(), "Dispose with a Lock open");
        Check.True(!win.IsDisposed, "the window survives a refused Dispose");
        Check.Throws<InvalidOperationException>(() => win.FetchAndOp(1, Op.Sum, me, 0), "FetchAndOp towards an unlocked rank");
        win.Unlock(right);
        win.LockAll();
        Check.Throws<InvalidOperationException>(() => win.Unlock(right), "Unlock under LockAll");
        Check.Throws<InvalidOperationException>(() => win.Lock(right), "Lock under LockAll");
        // Towards a rank, or at a position, that is not there: named, with nothing left in flight.
        Check.ThrowsNaming<ArgumentOutOfRangeException>("targetIndex", () => win.FetchAndOp(1, Op.Sum, right, 10), "FetchAndOp past the window's end");
        Check.ThrowsNaming<ArgumentOutOfRangeException>("targetIndex", () => win.Rget(one, right, 10), "Rget past the window's end");
        Check.ThrowsNaming<ArgumentOutOfRangeException>("targetIndex", () => win.Rput(one, right, -2), "Rput at a negative index");
        Check.ThrowsNaming<ArgumentOutOfRangeException>("target", () => win.CompareAndSwap(1, 0, n + 5, 0), "CompareAndSwap towards a rank outside the group");
        Check.ThrowsNaming<ArgumentOutOfRangeException>("target", () => win.GetAccumulate(one, new long[1], Op.NoOp, -3, 0), "GetAccumulate towards a negative rank");
        Check.ThrowsNaming<ArgumentOutOfRangeException>("rank", () => win.Flush(n), "Flush of a rank outside the group");
        Check.ThrowsNaming<ArgumentOutOfRangeException>("rank", () => win.FlushLocal(-1), "FlushLocal of a negative rank");
        win.UnlockAll();
        // Types.
        using (var dwin = Window<double>.Allocate(c, 2))
        {
            dwin.Span[1] = 0;
            dwin.LockAll();
            Check.Throws<ArgumentException>(() => dwin.CompareAndSwap(1.0, 0.0, right, 0), "CompareAndSwap on double");
            Check.Equal(0.0, dwin.FetchAndOp(2.5, Op.Sum, me, 1), "FetchAndOp on double");
            dwin.UnlockAll();
        }
        using (var pwin = Window<Pair>.Allocate(c, 2))
        {
            pwin.LockAll();
            Check.Throws<ArgumentException>(() => pwin.Accumulate([new Pair()], Op.Sum, right, 0), "Sum on a struct");
            Check.Throws<ArgumentException>(() => pwin.FetchAndOp(new Pair(), Op.Replace, right, 0), "FetchAndOp on a struct");
            pwin.Accumulate([new Pair { A = me, B = -me }], Op.Replace, right, 1); // Replace moves any element type
            pwin.Flush(right);
            pwin.UnlockAll();
        }
        // Post and Start towards a group with a rank outside the window's group: named, no epoch opened.
        using (var selfWin = Window<long>.Allocate(Communicator.Self, 1))
        using (Group all = c.Group)
        {
            if (n > 1)
            {
                Check.ThrowsNaming<ArgumentOutOfRangeException>("group", () => selfWin.Post(all), "Post to a rank outside the window's group");
                Check.ThrowsNaming<ArgumentOutOfRangeException>("group", () => selfWin.Start(all), "Start towards a rank outside the window's group");
                Check.Throws<InvalidOperationException>(() => selfWin.Wait(), "no exposure epoch left open by the refused Post");
                Check.Throws<InvalidOperationException>(() => selfWin.Complete(), "no access epoch left open by the refused Start");
            }
        }
        // Errors MPI itself raises come back with MPI's error class: Lock takes only NoCheck.
        var mpi = Check.Throws<MpiException>(() => win.Lock(right, LockType.Shared, WindowAssert.NoPut), "Lock with an assertion MPI refuses");
        Check.True(mpi is { ErrorClass: > 0 }, $"MPI's own error for a bad assertion: {mpi?.Message}");
        if (mpi is null)
            win.Unlock(right);
        c.Barrier();
        // Info misuse.
        var info = new Info();
        Check.Throws<ArgumentException>(() => info[new string('k', 300)] = "v", "info key too long");
        Check.Throws<ArgumentException>(() => info["k"] = new string('v', 5000), "info value too long");
        Check.Throws<ArgumentNullException>(() => info["k"] = null, "null info value");
        info.Dispose();
        Check.Throws<ObjectDisposedException>(() => _ = info["k"], "disposed info");
        Check.Throws<ObjectDisposedException>(() => Window<int>.Allocate(c, 1, info), "window with a disposed info");
        // Use after Dispose.
        using Communicator node = c.SplitShared();
        var gone = Window<int>.AllocateShared(node, 4);
        Memory<int> memory = gone.Memory;
        gone.Dispose();
        Check.True(gone.IsDisposed, "disposed");
        Check.Throws<ObjectDisposedException>(() => _ = gone.Span.Length, "Span after Dispose");
        Check.Throws<ObjectDisposedException>(() => _ = memory.Span.Length, "a Memory taken before Dispose");
        Check.Throws<ObjectDisposedException>(() => _ = gone.Memory, "Memory after Dispose");
        Check.Throws<ObjectDisposedException>(() => gone.SharedMemory(0), "SharedMemory after Dispose");
        Check.Throws<ObjectDisposedException>(() => gone.Fence(), "Fence after Dispose");
        Check.Throws<ObjectDisposedException>(() => gone.Put([1], right, 0), "Put after Dispose");
        gone.Dispose(); // twice is harmless
        Check.Throws<InvalidOperationException>(() => win.SharedMemory(0), "SharedMemory of a window that is not shared");
        c.Barrier();
    }

    // A dynamic window: each rank attaches a pinned array and shares its address; Put, Get,
    // Accumulate and FetchAndOp at those addresses under Lock/Unlock, LockAll and Fence; detach,
    // attach a second array and work again; every misuse refused before MPI sees it; Dispose
    // with an array still attached.
    private static void Dynamic(Communicator c)
    {
        int me = c.Rank, n = c.Size, right = (me + 1) % n, left = (me + n - 1) % n;
        const int len = 16, size = sizeof(long);
        using var win = Window<long>.CreateDynamic(c);
        Check.Equal(0, win.Length, "a dynamic window has no memory of its own");
        Check.Equal(0L, win.LengthOf(right), "nor at the others");
        long[] first = Mpi.AllocatePinned<long>(len);
        for (int i = 0; i < len; i++)
            first[i] = Value(me, i);
        long address = win.Attach(first);
        Check.Equal((long)Marshal.UnsafeAddrOfPinnedArrayElement(first, 0), address, "Attach returns the array's address");
        long at = c.Allgather(address)[right];
        c.Barrier(); // every rank attached and stored its values
        // Passive target, one rank locked at a time.
        var fromRight = new long[4];
        win.Lock(right, LockType.Shared);
        win.Get(fromRight, right, at + 4 * size);
        win.Unlock(right);
        Check.Sequence([Value(right, 4), Value(right, 5), Value(right, 6), Value(right, 7)], fromRight, "Get at an address");
        c.Barrier(); // the Gets read before the Puts write
        win.Lock(right);
        win.Put([Value(me, 100), Value(me, 101)], right, at);
        win.Accumulate([me + 1L], Op.Sum, right, at + 8 * size);
        win.Unlock(right);
        win.LockAll();
        Check.Equal(Value(right, 10), win.FetchAndOp(5, Op.Sum, right, at + 10 * size), "FetchAndOp at an address");
        win.UnlockAll();
        c.Barrier(); // every rank's operations are complete here
        win.Lock(me, LockType.Shared); // the local copy of the window agrees with the public one (12.7)
        Check.Sequence([Value(left, 100), Value(left, 101)], first.AsSpan(0, 2), "Put from the left neighbour");
        Check.Equal(Value(me, 2), first[2], "untouched element");
        Check.Equal(Value(me, 8) + left + 1, first[8], "Accumulate from the left neighbour");
        Check.Equal(Value(me, 10) + 5, first[10], "FetchAndOp from the left neighbour");
        win.Unlock(me);
        c.Barrier(); // nobody accesses first any more
        win.Detach(first);

        // A second, larger array, under Fence.
        long[] second = Mpi.AllocatePinned<long>(2 * len);
        for (int i = 0; i < second.Length; i++)
            second[i] = Value(me, 500 + i);
        long at2 = c.Allgather(win.Attach(second))[right];
        var got = new long[2];
        win.Fence();
        win.Put([-me - 1L], right, at2 + 3 * size);
        win.Get(got, right, at2 + 20 * size);
        win.Accumulate([2L], Op.Product, right, at2 + 30 * size);
        win.Fence(WindowAssert.NoSucceed);
        Check.Sequence([Value(right, 520), Value(right, 521)], got, "Get in a fence epoch");
        Check.Equal(-left - 1L, second[3], "Put in a fence epoch");
        Check.Equal(Value(me, 530) * 2, second[30], "Accumulate in a fence epoch");
        Check.Equal(Value(me, 4), first[4], "the detached array keeps its values");

        // Misuse, refused before MPI sees it.
        var movable = new long[4];
        var e = Check.Throws<ArgumentException>(() => win.Attach(movable), "Attach of a movable array");
        Check.True(e?.Message.Contains("Mpi.AllocatePinned", StringComparison.Ordinal) == true, $"message names Mpi.AllocatePinned: {e?.Message}");
        Check.Throws<ArgumentException>(() => win.Attach(second), "attaching an array twice");
        Check.Throws<ArgumentException>(() => win.Detach(first), "detaching an array detached already");
        Check.Throws<ArgumentException>(() => win.Detach(Mpi.AllocatePinned<long>(2)), "detaching an array never attached");
        Check.Throws<ArgumentException>(() => win.Attach(Mpi.AllocatePinned<long>(0)), "attaching an empty array");
        Check.Throws<ArgumentNullException>(() => win.Attach(null!), "attaching null");
        Check.Throws<ArgumentOutOfRangeException>(() => win.Put(movable, 0, 5, right, at2), "origin count past the array");
        Check.Throws<ArgumentOutOfRangeException>(() => win.Get(movable, 2, -1, right, at2), "negative origin count");
        Check.Throws<ArgumentOutOfRangeException>(() => win.Accumulate(movable, 5, 0, Op.Sum, right, at2), "origin offset past the array");
        Check.Throws<InvalidOperationException>(() => win.Put(movable, right, at2), "Put outside any epoch");
        Check.ThrowsNaming<ArgumentOutOfRangeException>("targetIndex", () => win.Put(movable, right, 0), "Put at address 0, outside any epoch");
        // No attached array starts at or below address 0: refused before MPI on every library.
        win.Lock(right);
        Check.ThrowsNaming<ArgumentOutOfRangeException>("targetIndex", () => win.Put(movable, right, 0), "Put at address 0");
        Check.ThrowsNaming<ArgumentOutOfRangeException>("targetIndex", () => win.Get(movable, right, -8), "Get at a negative address");
        win.Unlock(right);
        // Outside the target's attached arrays: only MPI can tell.  Open MPI 4.1 knows the target's
        // regions at the origin and refuses the Put there (MPI_ERR_RMA_RANGE); MPICH 4.0 writes
        // wherever the address points at the target (a segmentation fault there): not tried.
        if (Mpi.LibraryVersion.StartsWith("Open MPI", StringComparison.Ordinal))
        {
            win.Lock(right);
            var range = Check.Throws<MpiException>(() => win.Put(movable, right, at2 + (1L << 20)), "Put outside the attached arrays");
            Check.True(range is { ErrorClass: > 0 }, $"MPI's own error for an address outside the attached arrays: {range?.Message}");
            win.Unlock(right);
        }
        using (var plain = Window<long>.Allocate(c, 1))
            Check.Throws<InvalidOperationException>(() => plain.Attach(first), "Attach to a window that is not dynamic");
        var gone = Window<long>.CreateDynamic(c);
        gone.Attach(first);
        gone.Dispose(); // detaches first, then frees
        Check.Throws<ObjectDisposedException>(() => gone.Attach(first), "Attach after Dispose");
        Check.Throws<ObjectDisposedException>(() => gone.Detach(first), "Detach after Dispose");
        win.Detach(second);
        win.Attach(first); // the disposed window let go of it
        win.Attach(second);
        c.Barrier();
        // win's Dispose detaches both before MPI_Win_free.
    }

    // Arrays attached to a dynamic window are the targets of remote Puts while compacting GCs run
    // at both ends: they never move (the address stays the one Attach returned) and every value
    // arrives; the origins' young arrays are held as for any window.
    private static void DynamicGcTorture(Communicator c)
    {
        int me = c.Rank, n = c.Size, right = (me + 1) % n, left = (me + n - 1) % n;
        const int rounds = 40, width = 64;
        using var win = Window<int>.CreateDynamic(c);
        int[] target = Mpi.AllocatePinned<int>(rounds * width);
        long address = win.Attach(target);
        long at = c.Allgather(address)[right];
        var keep = new List<object>();
        c.Barrier();
        win.LockAll();
        for (int round = 0; round < rounds; round++)
        {
            keep.Add(new byte[1000 + round]); // garbage around the operation's arrays
            var data = new int[width];
            for (int i = 0; i < width; i++)
                data[i] = (me << 20) | (round << 8) | i;
            win.Put(data, right, at + (long)round * width * sizeof(int));
            keep.Add(new object[100]);
            if (round % 4 == 3)
            {
                CompactAll();
                Check.Equal(address, (long)Address(target), "the attached array did not move");
                win.Flush(right);
            }
        }
        win.UnlockAll();
        c.Barrier();
        CompactAll();
        Check.Equal(address, (long)Address(target), "the attached array did not move");
        win.Lock(me, LockType.Shared);
        int bad = 0;
        for (int round = 0; round < rounds; round++)
            for (int i = 0; i < width; i++)
                if (target[round * width + i] != ((left << 20) | (round << 8) | i))
                    bad++;
        win.Unlock(me);
        Check.Equal(0, bad, "elements written by remote Puts wrong after compacting GCs");
        GC.KeepAlive(keep);
        c.Barrier();
    }
}
