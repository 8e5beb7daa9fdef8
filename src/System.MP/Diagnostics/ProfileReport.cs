using System.Collections.Generic;
using System.Diagnostics;
using System.Globalization;
using System.IO;
using System.Linq;
using System.Text;

namespace System.MP;

/// <summary>
/// The profile of the job: each rank's <see cref="ThreadLog"/>s summed into a
/// <see cref="RankProfile"/>, sent to rank 0 on a duplicate of World, and written there as one
/// table (per operation: calls, bytes, time min/mean/max over the ranks; the share of wall time
/// in MPI per rank; the message sizes; the top call sites) and, for a timeline, one trace file.
/// </summary>
internal static class ProfileReport
{
    private const int Tag = 1;
    private const int TopSites = 10;

    /// <summary>Collective over World: every rank sends its profile to rank 0, which writes the job's.</summary>
    internal static void GatherAndWrite(ThreadLog[] logs, long startTicks, long endTicks)
    {
        using Communicator c = Mpi.World.Dup();
        // The clocks of the ranks are aligned at the barrier's exit: each rank's timeline is
        // shifted so that this moment is the same time everywhere.
        c.Barrier();
        long sync = Stopwatch.GetTimestamp();
        byte[] mine = RankProfile.Write(c.Rank, logs, startTicks, endTicks, sync, MpiProfile.Timeline);
        int[]? lengths = c.Gather(mine.Length, 0);
        if (c.Rank != 0)
        {
            c.Send(mine, 0, Tag);
            return;
        }
        var ranks = new RankProfile[c.Size];
        ranks[0] = RankProfile.Read(mine);
        for (int r = 1; r < ranks.Length; r++)
        {
            var blob = new byte[lengths![r]];
            c.Recv(blob, r, Tag);
            ranks[r] = RankProfile.Read(blob);
        }
        WriteOut(MpiProfile.ReportPath, "profile", w => w.Write(Table(ranks)));
        if (MpiProfile.TracePath is { } trace)
            WriteOut(trace, "timeline", w => TraceFile.Write(w, ranks));
    }

    /// <summary>Writes to <paramref name="path"/> (null: stderr); a failure is said on stderr, not thrown at exit.</summary>
    private static void WriteOut(string? path, string what, Action<TextWriter> write)
    {
        if (path is null)
        {
            write(Console.Error);
            Console.Error.Flush();
            return;
        }
        try
        {
            using var w = new StreamWriter(path, append: false, new UTF8Encoding(false));
            write(w);
            Console.Error.WriteLine(SR.Format(SR.ProfileWritten, what, Path.GetFullPath(path)));
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            Console.Error.WriteLine(SR.Format(SR.ProfileWriteFailed, what, Path.GetFullPath(path), e.Message));
        }
    }

    private static string Ms(long ticks, long frequency) => (ticks * 1000.0 / frequency).ToString("F3", CultureInfo.InvariantCulture);

    private static string Pct(double x) => (100 * x).ToString("F1", CultureInfo.InvariantCulture) + "%";

    private static string Size(long bytes) => bytes switch
    {
        < 1024 => $"{bytes} B",
        < 1024 * 1024 => $"{bytes / 1024} KiB",
        < 1024L * 1024 * 1024 => $"{bytes / (1024 * 1024)} MiB",
        _ => $"{bytes / (1024L * 1024 * 1024)} GiB",
    };

    /// <summary>The job's table, as rank 0 writes it.</summary>
    internal static string Table(RankProfile[] ranks)
    {
        var s = new StringBuilder();
        var inv = CultureInfo.InvariantCulture;
        int n = ranks.Length;
        long f = ranks[0].Frequency;
        s.AppendLine(inv, $"Motor MPI profile: {n} ranks, wall time {Ms(ranks[0].WallTicks, f)} ms (rank 0, MPI start to shutdown)");
        s.AppendLine();
        s.AppendLine("rank   wall (ms)    MPI (ms)    MPI %        calls");
        double[] share = new double[n];
        for (int r = 0; r < n; r++)
        {
            RankProfile p = ranks[r];
            long mpi = p.Ticks.Sum();
            share[r] = p.WallTicks > 0 ? (double)mpi / p.WallTicks : 0;
            s.AppendLine(inv, $"{r,4} {Ms(p.WallTicks, f),11} {Ms(mpi, f),11} {Pct(share[r]),8} {p.Calls.Sum(),12}");
        }
        int minR = Array.IndexOf(share, share.Min()), maxR = Array.IndexOf(share, share.Max());
        s.AppendLine(inv, $"MPI share of wall time: min {Pct(share[minR])} (rank {minR}), mean {Pct(share.Average())}, max {Pct(share[maxR])} (rank {maxR})");
        s.AppendLine();
        s.AppendLine("operation                  calls           bytes   time per rank (ms): min (rank)     mean      max (rank)  max/mean");
        for (int c = 0; c < (int)ProfiledCall.Count; c++)
        {
            long calls = ranks.Sum(p => p.Calls[c]);
            if (calls == 0)
                continue;
            long[] t = ranks.Select(p => p.Ticks[c]).ToArray();
            int lo = Array.IndexOf(t, t.Min()), hi = Array.IndexOf(t, t.Max());
            double mean = t.Average();
            string ratio = mean > 0 ? (t[hi] / mean).ToString("F2", inv) : "-";
            s.AppendLine(inv, $"{ProfiledCalls.Names[c],-20} {calls,11} {ranks.Sum(p => p.Bytes[c]),15} {Ms(t[lo], f),20} ({lo}) {(mean * 1000 / f).ToString("F3", inv),10} {Ms(t[hi], f),10} ({hi}) {ratio,8}");
        }
        s.AppendLine();
        s.AppendLine("message sizes (all ranks): operation, then calls per size range [from, to)");
        for (int c = 0; c < (int)ProfiledCall.Count; c++)
        {
            if (ranks.Sum(p => p.Bytes[c]) == 0)
                continue;
            s.Append(inv, $"{ProfiledCalls.Names[c],-20}");
            for (int b = 0; b < ProfiledCalls.SizeBuckets; b++)
            {
                long k = ranks.Sum(p => p.Sizes[c * ProfiledCalls.SizeBuckets + b]);
                if (k == 0)
                    continue;
                string range = b == 0 ? "0 B" : $"[{Size(ProfiledCalls.BucketLow(b))}, {Size(2 * ProfiledCalls.BucketLow(b))})";
                s.Append(inv, $"  {range}: {k}");
            }
            s.AppendLine();
        }
        s.AppendLine();
        s.AppendLine(inv, $"top call sites (all ranks, by time in MPI)");
        s.AppendLine("   time (ms)       calls  operation             caller");
        var sites = new Dictionary<(string, ProfiledCall), (long Calls, long Ticks)>();
        foreach (RankProfile p in ranks)
            foreach (var (key, v) in p.Sites)
            {
                sites.TryGetValue(key, out var sum);
                sites[key] = (sum.Calls + v.Calls, sum.Ticks + v.Ticks);
            }
        foreach (var ((site, call), v) in sites.OrderByDescending(e => e.Value.Ticks).ThenBy(e => e.Key.Item1, StringComparer.Ordinal).Take(TopSites))
            s.AppendLine(inv, $"{Ms(v.Ticks, f),12} {v.Calls,11}  {ProfiledCalls.Names[(int)call],-20}  {site}");
        long dropped = ranks.Sum(p => p.Threads.Sum(t => t.Dropped));
        if (dropped > 0)
            s.AppendLine().AppendLine(inv, $"timeline: {dropped} operations not kept (more than {MpiProfile.MaxEventsPerThread} on one thread)");
        return s.ToString();
    }
}

/// <summary>One rank's profile, as it travels to rank 0.</summary>
internal sealed class RankProfile
{
    internal int Rank;
    internal long Frequency, StartTicks, WallTicks, SyncTicks;
    internal long[] Calls = [], Ticks = [], Bytes = [], Sizes = [];
    internal List<KeyValuePair<(string, ProfiledCall), (long Calls, long Ticks)>> Sites = [];
    internal List<ThreadTimeline> Threads = [];

    /// <summary>One thread's operations, in the order they ended.</summary>
    internal sealed record ThreadTimeline(int Id, string? Name, TimelineEvent[] Events, long Dropped);

    internal static byte[] Write(int rank, ThreadLog[] logs, long start, long end, long sync, bool timeline)
    {
        var ms = new MemoryStream();
        using (var w = new BinaryWriter(ms, Encoding.UTF8, leaveOpen: true))
        {
            w.Write(rank);
            w.Write(Stopwatch.Frequency);
            w.Write(start);
            w.Write(end - start);
            w.Write(sync);
            int calls = (int)ProfiledCall.Count;
            WriteSum(w, logs, l => l.Calls, calls);
            WriteSum(w, logs, l => l.Ticks, calls);
            WriteSum(w, logs, l => l.Bytes, calls);
            WriteSum(w, logs, l => l.Sizes, calls * ProfiledCalls.SizeBuckets);
            var sites = new Dictionary<(string Site, ProfiledCall Call), (long Calls, long Ticks)>();
            foreach (ThreadLog l in logs)
                foreach (var (key, v) in l.Sites)
                {
                    sites.TryGetValue(key, out var sum);
                    sites[key] = (sum.Calls + v.Calls, sum.Ticks + v.Ticks);
                }
            w.Write(sites.Count);
            foreach (var (key, v) in sites)
            {
                w.Write(key.Site);
                w.Write((byte)key.Call);
                w.Write(v.Calls);
                w.Write(v.Ticks);
            }
            w.Write(timeline ? logs.Length : 0);
            if (timeline)
                foreach (ThreadLog l in logs)
                {
                    w.Write(l.ThreadId);
                    w.Write(l.Name ?? "");
                    w.Write(l.Dropped);
                    w.Write(l.EventCount);
                    for (int i = 0; i < l.EventCount; i++)
                    {
                        TimelineEvent e = l.Events[i];
                        w.Write(e.Begin);
                        w.Write(e.End);
                        w.Write(e.Bytes);
                        w.Write(e.Peer);
                        w.Write((byte)e.Call);
                    }
                }
        }
        return ms.ToArray();
    }

    private static void WriteSum(BinaryWriter w, ThreadLog[] logs, Func<ThreadLog, long[]> of, int length)
    {
        for (int i = 0; i < length; i++)
        {
            long sum = 0;
            foreach (ThreadLog l in logs)
                sum += of(l)[i];
            w.Write(sum);
        }
    }

    private static long[] ReadLongs(BinaryReader r, int length)
    {
        var a = new long[length];
        for (int i = 0; i < length; i++)
            a[i] = r.ReadInt64();
        return a;
    }

    internal static RankProfile Read(byte[] blob)
    {
        using var r = new BinaryReader(new MemoryStream(blob), Encoding.UTF8);
        var p = new RankProfile
        {
            Rank = r.ReadInt32(),
            Frequency = r.ReadInt64(),
            StartTicks = r.ReadInt64(),
            WallTicks = r.ReadInt64(),
            SyncTicks = r.ReadInt64(),
        };
        int calls = (int)ProfiledCall.Count;
        p.Calls = ReadLongs(r, calls);
        p.Ticks = ReadLongs(r, calls);
        p.Bytes = ReadLongs(r, calls);
        p.Sizes = ReadLongs(r, calls * ProfiledCalls.SizeBuckets);
        int sites = r.ReadInt32();
        for (int i = 0; i < sites; i++)
        {
            string site = r.ReadString();
            var call = (ProfiledCall)r.ReadByte();
            p.Sites.Add(new((site, call), (r.ReadInt64(), r.ReadInt64())));
        }
        int threads = r.ReadInt32();
        for (int t = 0; t < threads; t++)
        {
            int id = r.ReadInt32();
            string name = r.ReadString();
            long dropped = r.ReadInt64();
            var events = new TimelineEvent[r.ReadInt32()];
            for (int i = 0; i < events.Length; i++)
                events[i] = new TimelineEvent(r.ReadInt64(), r.ReadInt64(), r.ReadInt64(), r.ReadInt32(), (ProfiledCall)r.ReadByte());
            p.Threads.Add(new ThreadTimeline(id, name.Length == 0 ? null : name, events, dropped));
        }
        return p;
    }
}
