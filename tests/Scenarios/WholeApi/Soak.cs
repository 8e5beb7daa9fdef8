using System.Diagnostics.Tracing;
using System.MP;

namespace Scenarios;

/// <summary>
/// Soak (scenario soak): ranks in pairs run N nonblocking operations
/// (Isend/Irecv windows, a share of requests dropped without Wait and a share disposed while
/// pending; a quarter as many again posted into RequestLists, on fresh arrays, with a list
/// disposed while its receive is in flight each round), M object round trips (a share of them sent by a dropped OISend) and K
/// communicators created (Dup, Split) and freed, in rounds.  After the warm-up rounds and at
/// the end the process's figures are sampled once everything dropped has been released:
/// the core's counters must be back exactly where the warm-up left them, and RSS, the managed
/// heap, the runtime's GC handles and the slot table's high-water mark may grow only within
/// the tolerances below.  Each figure is printed on its own line.
/// </summary>
/// <remarks>
/// MOTOR_SOAK_OPS (nonblocking operations per rank, default 200000), MOTOR_SOAK_OBJECTS
/// (object round trips per pair, default 2000), MOTOR_SOAK_COMMS (communicators, default 100),
/// MOTOR_SOAK_SEED (default 1).  tests/soak.sh runs the long version.
/// </remarks>
internal static class Soak
{
    internal static void Register(Dictionary<Scenario, Action<Communicator>> s) => s[Scenario.Soak] = Run;

    private const int Rounds = 10, WarmupRounds = 2;
    private const int Window = 16;          // sends and receives posted per window, each
    private const int LargeInts = 4096;     // an occasional message past the eager limit
    private const int Tag = 71, ObjectTag = 72, ListTag = 73, GivenUpTag = 74;

    /// <summary>
    /// RSS may grow by this much after the warm-up.  The runtime's and MPI's pools are sized
    /// by then, and each sample first has the GC give back what it keeps for the young
    /// generations (an aggressive full collection; without it RSS grew by 15-21 MB with the
    /// GC's budget, with it by 0.2-3.8 MB); what can still move is the allocator's free lists.
    /// A leak of one 16-byte block per operation would be 3 MiB at the bounded size and 150 MiB
    /// over the long run's 10^7 operations.
    /// </summary>
    private const long RssToleranceKiB = 8 * 1024;

    /// <summary>
    /// What RSS may grow by per request pending at the peak beyond the warm-up's peak (the slot
    /// table's high-water mark): MPI's request pools and the core's slot table keep their largest
    /// size, without a leak.  Measured in plain C (20,000 receives pending on MPI_COMM_SELF, then
    /// completed and posted again: no further growth): MPICH 4.0.2 (ch4:ucx) 285 bytes a request,
    /// Open MPI 4.1.4 780; the core's slot is under 100.  How many requests are pending at once
    /// follows the GC's cadence (dropped requests wait for a collection), and the gen-0 budget
    /// follows the machine's cache: on a machine with a 260 MiB L3 the peak grew by 15,000 requests
    /// after the warm-up and RSS by 9-13 MB, past <see cref="RssToleranceKiB"/> alone.
    /// </summary>
    private const long PendingRequestBytes = 1024;

    /// <summary>
    /// MOTOR_SOAK_RSS_ALLOCATOR_KIB: what a different allocator may add to <see cref="RssToleranceKiB"/>.
    /// tests/checkers.sh sets it for the ASan job, where every malloc of the process (runtime, MPI,
    /// core) goes through AddressSanitizer's allocator, which keeps freed blocks in a quarantine
    /// (bounded there with quarantine_size_mb) and pads each block: RSS then grows by up to the
    /// quarantine more, with no leak.
    /// </summary>
    private static readonly long s_rssAllocatorKiB = Setting("MOTOR_SOAK_RSS_ALLOCATOR_KIB", 0);

    /// <summary>The managed heap after a full GC: the same reasoning, with no native pools.</summary>
    private const long HeapToleranceBytes = 4 << 20;

    /// <summary>
    /// Runtime GC handles (all kinds) may differ by this many: the runtime makes a few
    /// lazily (thread statics of threads that ran meanwhile, timers).  A handle per dropped
    /// request would add thousands.
    /// </summary>
    private const long GcHandleTolerance = 64;

    /// <summary>Slots the table's high-water mark may gain after the warm-up (see CompareTo).</summary>
    private const long SlotsHighWaterTolerance = 4096;

    private static long Setting(string name, long fallback) =>
        long.TryParse(Environment.GetEnvironmentVariable(name), out long v) && v >= 0 ? v : fallback;

    private static void Run(Communicator c)
    {
        if (c.Size % 2 != 0)
            throw new InvalidOperationException("soak runs ranks in pairs: an even number of ranks");
        long ops = Setting("MOTOR_SOAK_OPS", 200_000), objects = Setting("MOTOR_SOAK_OBJECTS", 2_000);
        long comms = Setting("MOTOR_SOAK_COMMS", 100);
        int peer = c.Rank ^ 1;
        int seed = (int)Setting("MOTOR_SOAK_SEED", 1);
        var rng = new Random(seed * 7919 + c.Rank);
        var pairRng = new Random(seed * 104729 + c.Rank / 2); // the same draws on both ranks of a pair
        var counts = new Counts();
        var clock = System.Diagnostics.Stopwatch.StartNew();
        Figures? warm = null;
        int gcsWarm = 0;
        long droppedWarm = 0;
        for (int round = 0; round < Rounds; round++)
        {
            Nonblocking(c, peer, rng, pairRng, Share(ops, round), counts);
            Lists(c, peer, pairRng, Share(ops, round) / 4, counts);
            Objects(c, peer, rng, Share(objects, round), counts);
            Communicators(c, Share(comms, round), counts);
            if (round == WarmupRounds - 1)
            {
                warm = Figures.Sample(c);
                (gcsWarm, droppedWarm) = (GC.CollectionCount(0), counts.Dropped + counts.DroppedObjectSends);
            }
        }
        // Dropped requests wait for the GC to finalize their groups: how many one GC cycle let
        // pile up after the warm-up (the GC's budget, and so its cadence, differs by machine).
        long droppedPerGc = (counts.Dropped + counts.DroppedObjectSends - droppedWarm) / Math.Max(1, GC.CollectionCount(0) - gcsWarm);
        Figures end = Figures.Sample(c);
        double seconds = clock.Elapsed.TotalSeconds;
        Console.WriteLine($"soak rank {c.Rank}: {counts.Ops} nonblocking ops ({counts.Dropped} dropped, {counts.Disposed} disposed), " +
                          $"{counts.RoundTrips} object round trips ({counts.DroppedObjectSends} by a dropped OISend), " +
                          $"{counts.Comms} communicators in {seconds:F1} s");
        warm!.CompareTo(end, c.Rank, counts.Ops, droppedPerGc);
    }

    /// <summary>Round <paramref name="round"/>'s part of <paramref name="total"/> (the last round takes the remainder).</summary>
    private static long Share(long total, int round) =>
        round < Rounds - 1 ? total / Rounds : total - total / Rounds * (Rounds - 1);

    private sealed class Counts
    {
        public long Ops, Dropped, Disposed, RoundTrips, DroppedObjectSends, Comms;
    }

    // ---- nonblocking operations ----

    private enum Fate : byte { Waited, Dropped, Disposed }

    private static readonly int[][] s_sendBuffers = NewBuffers(), s_recvBuffers = NewBuffers();

    private static int[][] NewBuffers()
    {
        var b = new int[Window][];
        for (int i = 0; i < Window; i++)
            b[i] = new int[LargeInts];
        return b;
    }

    /// <summary>
    /// Windows of <see cref="Window"/> receives from and sends to the peer, same tag, so
    /// receive i matches the peer's send i (MPI-4.0 3.5, non-overtaking).  A request's fate is
    /// drawn per request: about one in eight is dropped (left to its group's finalizer and
    /// the core's orphan path), one in eight disposed while pending; the rest are waited for
    /// and the received ones checked.  Dropped and disposed operations get buffers of their
    /// own, which must stay valid until MPI is done with them.
    /// </summary>
    private static void Nonblocking(Communicator c, int peer, Random rng, Random pairRng, long ops, Counts counts)
    {
        var waited = new List<Request>(2 * Window);
        var fates = new Fate[Window];
        var lengths = new int[Window];
        long windows = Math.Max(1, ops / (2 * Window));
        for (long w = 0; w < windows; w++)
        {
            waited.Clear();
            for (int i = 0; i < Window; i++)
            {
                // Message i has the same length on both ranks (the pair's generator).
                lengths[i] = pairRng.Next(64) == 0 ? LargeInts : 1 + pairRng.Next(64);
                fates[i] = Draw(rng);
                int[] buf = fates[i] == Fate.Waited ? s_recvBuffers[i] : new int[lengths[i]];
                waited.AddIfKept(c.IRecv(buf, 0, lengths[i], peer, Tag), fates[i], counts);
            }
            for (int i = 0; i < Window; i++)
            {
                Fate fate = Draw(rng);
                int[] buf = fate == Fate.Waited ? s_sendBuffers[i] : new int[lengths[i]];
                int value = (int)(w * Window + i);
                buf[0] = value;
                buf[lengths[i] - 1] = value;
                waited.AddIfKept(c.ISend(buf, 0, lengths[i], peer, Tag), fate, counts);
            }
            Status[] statuses = Request.WaitAll(waited.ToArray());
            int k = 0;
            for (int i = 0; i < Window; i++)
            {
                if (fates[i] != Fate.Waited)
                    continue;
                Status s = statuses[k++];
                int n = s.GetCount<int>(), expected = (int)(w * Window + i);
                if (s_recvBuffers[i][0] != expected || s_recvBuffers[i][n - 1] != expected)
                    Check.True(false, $"window {w} receive {i}: got {s_recvBuffers[i][0]}..{s_recvBuffers[i][n - 1]}, expected {expected}");
            }
            counts.Ops += 2 * Window;
        }
    }

    /// <summary>
    /// Windows posted into one <see cref="RequestList"/>, on arrays allocated per message (movable:
    /// registered with the core's list under motor, each held by a pin under dotnet, while the
    /// GCs this soak causes run), every received message checked; then a list disposed with a
    /// receive in flight, whose message the peer sends afterwards (the core's list hands it over
    /// as an ordinary request, given up and released once complete).
    /// </summary>
    private static void Lists(Communicator c, int peer, Random pairRng, long ops, Counts counts)
    {
        var received = new int[Window][];
        var statuses = new Status[2 * Window];
        using var list = new RequestList(2 * Window);
        for (long w = 0, windows = Math.Max(1, ops / (2 * Window)); w < windows; w++)
        {
            for (int i = 0; i < Window; i++)
                c.IRecv(received[i] = new int[pairRng.Next(64) == 0 ? LargeInts : 1 + pairRng.Next(64)], peer, ListTag, list);
            for (int i = 0; i < Window; i++)
            {
                var buf = new int[received[i].Length]; // the peer drew the same lengths
                buf[0] = buf[^1] = (int)(w * Window + i);
                c.ISend(buf, peer, ListTag, list);
            }
            list.WaitAll(statuses);
            for (int i = 0; i < Window; i++)
            {
                int[] r = received[i];
                int expected = (int)(w * Window + i);
                if (statuses[i].GetCount<int>() != r.Length || r[0] != expected || r[^1] != expected)
                    Check.True(false, $"list window {w} receive {i}: got {r[0]}..{r[^1]} ({statuses[i].GetCount<int>()} ints), expected {expected} ({r.Length})");
            }
            counts.Ops += 2 * Window;
        }
        var givenUp = new RequestList(1);
        c.IRecv(new int[4], peer, GivenUpTag, givenUp);
        givenUp.Dispose();
        counts.Disposed++;
        c.Send(new int[4], peer, GivenUpTag);
    }

    private static Fate Draw(Random rng) => rng.Next(8) switch { 0 => Fate.Dropped, 1 => Fate.Disposed, _ => Fate.Waited };

    private static void AddIfKept(this List<Request> waited, Request r, Fate fate, Counts counts)
    {
        switch (fate)
        {
            case Fate.Waited:
                waited.Add(r);
                break;
            case Fate.Disposed:
                r.Dispose();
                counts.Disposed++;
                break;
            default:
                counts.Dropped++; // unreachable from here on
                break;
        }
    }

    // ---- objects ----

    /// <summary>
    /// Round trips of Figure 5's list between the pair: the even rank sends, the odd one
    /// checks it and sends it back, the even one checks the echo.  One send in eight goes
    /// by an OISend whose request is dropped: its payload buffer must still be returned.
    /// </summary>
    private static void Objects(Communicator c, int peer, Random rng, long roundTrips, Counts counts)
    {
        bool starts = c.Rank % 2 == 0;
        for (long i = 0; i < roundTrips; i++)
        {
            int n = 1 + (int)(i % 24);
            if (starts)
            {
                SendObject(c, TransportSamples.Figure5(n), peer, rng, counts);
                Check.Null(TransportSamples.CheckFigure5(c.ORecv<LinkedList>(peer, ObjectTag), n), "echoed list");
            }
            else
            {
                LinkedList? got = c.ORecv<LinkedList>(peer, ObjectTag);
                string? problem = TransportSamples.CheckFigure5(got, n);
                if (problem is not null)
                    Check.True(false, $"round trip {i}: {problem}");
                SendObject(c, got, peer, rng, counts);
            }
            counts.RoundTrips++;
        }
    }

    private static void SendObject(Communicator c, object? graph, int peer, Random rng, Counts counts)
    {
        if (rng.Next(8) != 0)
        {
            c.OSend(graph, peer, ObjectTag);
            return;
        }
        _ = c.OISend(graph, peer, ObjectTag); // dropped
        counts.DroppedObjectSends++;
    }

    // ---- communicators ----

    private static void Communicators(Communicator c, long count, Counts counts)
    {
        for (long i = 0; i < count; i++)
        {
            // Dup, a split into pairs and a split into single ranks, in turn.
            using Communicator made = (i % 3) switch
            {
                0 => c.Dup(),
                1 => c.Split(c.Rank / 2, c.Rank)!,
                _ => c.Split(c.Rank, 0)!,
            };
            var sum = new int[1];
            made.Allreduce(new[] { made.Rank + 1 }, sum, Op.Sum);
            Check.Equal(made.Size * (made.Size + 1) / 2, sum[0], "allreduce on a new communicator");
            counts.Comms++;
        }
    }

    // ---- figures ----

    private sealed record Figures(long RssKiB, long HeapBytes, long GcHandles, long PinnedHandles, long ActiveRequests,
                                  long OpenMpiRequests, long OrphanedRequests, long SlotsHighWater, long Communicators)
    {
        /// <summary>
        /// Lets everything dropped be released first: the requests' groups are finalized,
        /// the core completes their operations at blocking calls (and at GC marks under
        /// motor), and library-mode pins are let go of after that.  Bounded: a leak shows
        /// as a figure that does not come back, not as a hang.
        /// </summary>
        internal static Figures Sample(Communicator c)
        {
            for (int i = 0; i < 100; i++)
            {
                GC.Collect();
                GC.WaitForPendingFinalizers();
                c.Barrier(); // a blocking call: the core sweeps orphans whose operation completed
                MpiStatistics s = Mpi.GetStatistics();
                var settled = new int[1];
                c.Allreduce(new[] { s.OrphanedRequests == 0 && s.PinnedHandles == 0 ? 0 : 1 }, settled, Op.Sum);
                if (settled[0] == 0)
                    break;
            }
            c.Barrier();
            long heap = GC.GetTotalMemory(forceFullCollection: true);
            // The GC gives back the memory it keeps for the young generations' budget (which grows
            // with the run and is no leak), so that RSS measures what lives: heap and native memory.
            GC.Collect(2, GCCollectionMode.Aggressive, blocking: true, compacting: true);
            long handles = GcHandleCounter.Count();
            MpiStatistics st = Mpi.GetStatistics();
            return new Figures(ReadRssKiB(), heap, handles, st.PinnedHandles, st.ActiveRequests, st.OpenMpiRequests,
                               st.OrphanedRequests, st.RequestSlotsHighWater, st.Communicators);
        }

        internal void CompareTo(Figures end, int rank, long ops, long droppedPerGc)
        {
            long peakGrowth = Math.Max(0, end.SlotsHighWater - SlotsHighWater);
            long poolsKiB = peakGrowth * PendingRequestBytes / 1024;
            long rssTolerance = RssToleranceKiB + s_rssAllocatorKiB + poolsKiB;
            Line(rank, "rss KiB", RssKiB, end.RssKiB,
                 $"at most +{rssTolerance}: {RssToleranceKiB} + {poolsKiB} for the {peakGrowth} more requests pending at the peak");
            Check.True(end.RssKiB - RssKiB <= rssTolerance, $"RSS grew by {end.RssKiB - RssKiB} KiB after the warm-up over {ops} operations");
            Line(rank, "managed heap bytes", HeapBytes, end.HeapBytes, $"at most +{HeapToleranceBytes}");
            Check.True(end.HeapBytes - HeapBytes <= HeapToleranceBytes, $"the managed heap grew by {end.HeapBytes - HeapBytes} B");
            Line(rank, "runtime GC handles", GcHandles, end.GcHandles, $"within ±{GcHandleTolerance}");
            Check.True(GcHandles >= 0 && end.GcHandles >= 0, "the runtime reported its GC handle count");
            Check.True(Math.Abs(end.GcHandles - GcHandles) <= GcHandleTolerance, $"GC handles went from {GcHandles} to {end.GcHandles}");
            Exact(rank, "System.MP pinned handles", PinnedHandles, end.PinnedHandles);
            Exact(rank, "request slots in use", ActiveRequests, end.ActiveRequests);
            Exact(rank, "open MPI requests", OpenMpiRequests, end.OpenMpiRequests);
            Exact(rank, "orphaned requests", OrphanedRequests, end.OrphanedRequests);
            Exact(rank, "communicators", Communicators, end.Communicators);
            // The high-water mark follows the most requests pending at once: windows, plus the
            // dropped ones whose groups the next GC has not finalized yet, which the GC's
            // cadence bounds (a few thousand: twice what one GC cycle let pile up after the
            // warm-up, at least SlotsHighWaterTolerance), not the run's length.  A slot kept per
            // thousand operations would pass this bound within the long run.
            long tolerance = Math.Max(SlotsHighWaterTolerance, 2 * droppedPerGc);
            Line(rank, "request slots high-water", SlotsHighWater, end.SlotsHighWater,
                 $"at most +{tolerance}: twice the {droppedPerGc} requests dropped per gen-0 GC, at least {SlotsHighWaterTolerance}");
            Check.True(end.SlotsHighWater - SlotsHighWater <= tolerance,
                       $"the slot table grew from {SlotsHighWater} to {end.SlotsHighWater} slots");
        }

        private static void Exact(int rank, string name, long warm, long end)
        {
            Line(rank, name, warm, end, "exactly");
            Check.Equal(warm, end, $"{name} after the soak");
        }

        private static void Line(int rank, string name, long warm, long end, string bound) =>
            Console.WriteLine($"soak rank {rank} figure {name}: warm-up {warm}, end {end} ({end - warm:+0;-0;0}; {bound})");

        private static long ReadRssKiB()
        {
            foreach (string line in File.ReadLines("/proc/self/status"))
                if (line.StartsWith("VmRSS:", StringComparison.Ordinal))
                    return long.Parse(line.AsSpan(6).Trim().TrimEnd("kB").Trim());
            return -1;
        }
    }

    /// <summary>
    /// The runtime's count of GC handles of every kind (strong, weak, pinned, dependent), as
    /// its GC reports it after each collection (event GCHeapStats_V2, field GCHandleCount).
    /// </summary>
    private sealed class GcHandleCounter : EventListener
    {
        private long _count = -1;
        private readonly ManualResetEventSlim _seen = new();

        internal static long Count()
        {
            using var listener = new GcHandleCounter();
            // Events come on the listener's dispatch thread: collect until one has arrived.
            for (int i = 0; i < 200 && !listener._seen.IsSet; i++)
            {
                GC.Collect();
                listener._seen.Wait(50);
            }
            return Interlocked.Read(ref listener._count);
        }

        protected override void OnEventSourceCreated(EventSource source)
        {
            if (source.Name == "Microsoft-Windows-DotNETRuntime")
                EnableEvents(source, EventLevel.Informational, (EventKeywords)1); // GC keyword
        }

        protected override void OnEventWritten(EventWrittenEventArgs e)
        {
            if (e.EventName is not { } name || !name.StartsWith("GCHeapStats", StringComparison.Ordinal) || e.PayloadNames is null)
                return;
            int at = e.PayloadNames.IndexOf("GCHandleCount");
            if (at < 0 || e.Payload is null)
                return;
            Interlocked.Exchange(ref _count, Convert.ToInt64(e.Payload[at], System.Globalization.CultureInfo.InvariantCulture));
            _seen.Set();
        }

        public override void Dispose()
        {
            base.Dispose();
            _seen.Dispose();
        }
    }
}
