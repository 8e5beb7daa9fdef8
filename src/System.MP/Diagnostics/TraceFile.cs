using System.Collections.Generic;
using System.Globalization;
using System.IO;
using System.Text.Json;

namespace System.MP;

/// <summary>
/// The job's timeline as a Chrome trace-event file (the JSON object form that Perfetto and
/// chrome://tracing open): each rank a process ("pid", named "rank N"), each of its threads a
/// thread ("tid": the managed thread id), each operation a begin ("B") and an end ("E") event
/// with its bytes and peer, times in microseconds from the first operation of the job.  The
/// ranks' clocks are aligned at a barrier at shutdown (<see cref="RankProfile.SyncTicks"/>).
/// </summary>
internal static class TraceFile
{
    internal static void Write(TextWriter w, RankProfile[] ranks)
    {
        // Each rank's ticks are shifted by its barrier time; the earliest start of all is time 0.
        long origin = long.MaxValue;
        foreach (RankProfile p in ranks)
            origin = Math.Min(origin, p.StartTicks - p.SyncTicks);
        w.Write("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n");
        bool first = true;
        foreach (RankProfile p in ranks)
        {
            Line(w, ref first, $"{{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":{p.Rank},\"tid\":0,\"args\":{{\"name\":\"rank {p.Rank}\"}}}}");
            Line(w, ref first, $"{{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":{p.Rank},\"tid\":0,\"args\":{{\"sort_index\":{p.Rank}}}}}");
            foreach (RankProfile.ThreadTimeline t in p.Threads)
            {
                string name = JsonEncodedText.Encode(t.Name ?? $"thread {t.Id}").ToString();
                Line(w, ref first, $"{{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":{p.Rank},\"tid\":{t.Id},\"args\":{{\"name\":\"{name}\"}}}}");
                WriteThread(w, ref first, p, t, origin);
            }
        }
        w.Write("\n]}\n");
    }

    /// <summary>
    /// One thread's operations as begin/end pairs in time order.  A thread's operations do not
    /// overlap; should one lie inside another, it is written nested, and one that would end after
    /// the operation around it is cut at that end, so the pairs always nest as the format requires.
    /// </summary>
    private static void WriteThread(TextWriter w, ref bool first, RankProfile p, RankProfile.ThreadTimeline t, long origin)
    {
        TimelineEvent[] events = (TimelineEvent[])t.Events.Clone();
        Array.Sort(events, (a, b) => a.Begin != b.Begin ? a.Begin.CompareTo(b.Begin) : b.End.CompareTo(a.End));
        var open = new Stack<long>();
        foreach (TimelineEvent e in events)
        {
            while (open.Count > 0 && open.Peek() <= e.Begin)
                Line(w, ref first, End(p, t.Id, open.Pop(), origin));
            long end = open.Count > 0 ? Math.Min(e.End, open.Peek()) : e.End;
            Line(w, ref first, $"{{\"name\":\"{ProfiledCalls.Names[(int)e.Call]}\",\"cat\":\"MPI\",\"ph\":\"B\",\"pid\":{p.Rank},\"tid\":{t.Id}," +
                               $"\"ts\":{Micro(p, e.Begin, origin)},\"args\":{{\"bytes\":{e.Bytes},\"peer\":{e.Peer}}}}}");
            open.Push(end);
        }
        while (open.Count > 0)
            Line(w, ref first, End(p, t.Id, open.Pop(), origin));
    }

    private static string End(RankProfile p, int tid, long ticks, long origin) =>
        $"{{\"ph\":\"E\",\"pid\":{p.Rank},\"tid\":{tid},\"ts\":{Micro(p, ticks, origin)}}}";

    private static string Micro(RankProfile p, long ticks, long origin) =>
        ((ticks - p.SyncTicks - origin) * 1e6 / p.Frequency).ToString("F3", CultureInfo.InvariantCulture);

    private static void Line(TextWriter w, ref bool first, string json)
    {
        if (!first)
            w.Write(",\n");
        first = false;
        w.Write(json);
    }
}
