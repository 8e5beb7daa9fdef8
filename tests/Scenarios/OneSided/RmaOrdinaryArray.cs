using System.Diagnostics;
using System.MP;
using static Scenarios.Heap;

namespace Scenarios;

/// <summary>
/// A window over an ordinary array (Window&lt;T&gt;.Create pins it for the window's life): the
/// array stays where MPI has it across compacting collections that would otherwise slide it
/// down over the garbage freed before it, Put, Get and Accumulate land in it, and once the
/// window is freed the array may move again.  Then the latency of Put, Get and Accumulate
/// (each flushed, one element) on such a window and on one over Mpi.AllocatePinned, printed
/// and not judged (RMA_LATENCY_ROUNDS sets the rounds, default 200).
/// </summary>
internal static class RmaOrdinaryArray
{
    internal static void Register(Dictionary<Scenario, Action<Communicator>> s) => s[Scenario.RmaOrdinaryArray] = Run;

    private static void Run(Communicator c)
    {
        int r = c.Rank, right = (r + 1) % c.Size;
        const int n = 64;
        // Twice, the array one long further on the second time: a .NET array's elements start 8 bytes
        // past a 16-byte boundary one time in two, which MPICH with UCX needs the window to account for.
        for (int pad = 0; pad < 2; pad++)
            OverOrdinaryArray(c, n, pad);
        Check.Throws<ArgumentNullException>(() => Window<long>.Create(c, (long[])null!), "Create over null");
        using (Window<long> empty = Window<long>.Create(c, Array.Empty<long>()))
            Check.Equal(0, empty.Length, "a window over an empty array");

        int rounds = int.TryParse(Environment.GetEnvironmentVariable("RMA_LATENCY_ROUNDS"), out int rr) ? rr : 200;
        double[] pinned = Latency(c, Mpi.AllocatePinned<long>(n), right, rounds);
        double[] ordinary = Latency(c, new long[n], right, rounds);
        if (r == 0)
            Console.WriteLine($"rma latency (us, median of {rounds}) put/get/accumulate: pinned heap {pinned[0]:F2}/{pinned[1]:F2}/{pinned[2]:F2}, " +
                              $"ordinary array {ordinary[0]:F2}/{ordinary[1]:F2}/{ordinary[2]:F2}, ratio ordinary/pinned " +
                              $"{ordinary[0] / pinned[0]:F2}/{ordinary[1] / pinned[1]:F2}/{ordinary[2] / pinned[2]:F2}");
        c.Barrier();
    }

    /// <summary>One window over a new ordinary array placed after <paramref name="pad"/> longs and garbage.</summary>
    private static void OverOrdinaryArray(Communicator c, int n, int pad)
    {
        int p = c.Size, r = c.Rank, right = (r + 1) % p, left = (r + p - 1) % p;
        // Garbage allocated before the window's array: once collected, a compaction moves what follows it.
        var garbage = new object[2000];
        for (int i = 0; i < garbage.Length; i++)
            garbage[i] = new byte[512];
        long[] before = new long[pad];
        long[] mine = new long[n];
        garbage = null!;
        GC.KeepAlive(before);
        nint address;
        using (Window<long> win = Window<long>.Create(c, mine))
        {
            address = Address(mine);
            for (int i = 0; i < 3; i++)
                CompactAll();
            Check.Equal(address, Address(mine), "the window's array stays in place across compacting collections");
            Check.Equal((long)n, win.LengthOf(right), "LengthOf counts the array's elements");
            Check.Throws<ArgumentException>(() => win.Put([1L], right, n), "a Put past the end of the target's array");

            win.Fence();
            long[] data = [.. Enumerable.Range(0, n).Select(i => 1000L * r + i)];
            win.Put(data, right, 0);
            win.Fence();
            Check.Sequence<long>([.. Enumerable.Range(0, n).Select(i => 1000L * left + i)], mine, "Put landed in the ordinary array");
            Check.Sequence<long>(mine, win.Span, "the window's Span is the array");
            c.Barrier(); // the next epoch's accumulate must not land before every rank looked
            win.Accumulate([1L, 2L], Op.Sum, right, 10);
            win.Fence();
            Check.Equal(1000L * left + 10 + 1, mine[10], "Accumulate into the ordinary array");
            var back = new long[2];
            win.Get(back, right, 10);
            win.Fence();
            Check.Sequence<long>([1000L * r + 11, 1000L * r + 13], back, "Get from the other rank's ordinary array");
        }
        Check.True(mine[0] == 1000L * left, "the array outlives the window");
    }

    /// <summary>Median microseconds of one flushed Put, Get and Accumulate of one element towards <paramref name="target"/>.</summary>
    private static double[] Latency(Communicator c, long[] array, int target, int rounds)
    {
        using Window<long> win = Window<long>.Create(c, array);
        long[] one = [1];
        var times = new double[3][];
        win.LockAll();
        for (int kind = 0; kind < 3; kind++)
        {
            times[kind] = new double[rounds];
            for (int i = 0; i < rounds; i++)
            {
                long t0 = Stopwatch.GetTimestamp();
                if (kind == 0)
                    win.Put(one, target, i % array.Length);
                else if (kind == 1)
                    win.Get(one, target, i % array.Length);
                else
                    win.Accumulate(one, Op.Sum, target, i % array.Length);
                win.Flush(target);
                times[kind][i] = Stopwatch.GetElapsedTime(t0).TotalMicroseconds;
            }
            Array.Sort(times[kind]);
        }
        win.UnlockAll();
        c.Barrier();
        return [times[0][rounds / 2], times[1][rounds / 2], times[2][rounds / 2]];
    }
}
