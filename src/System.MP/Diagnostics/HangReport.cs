using System.Collections.Generic;
using System.Diagnostics;
using System.Globalization;
using System.MP.Interop;
using System.Runtime.CompilerServices;
using System.Text;
using System.Threading;

namespace System.MP;

/// <summary>
/// The hang report: when a thread of this rank has been blocked in one MPI call longer than
/// the configured time, prints the call, its communicator, peer and tag, how long it has
/// waited and the managed stack of the blocked thread, then keeps waiting, or with
/// <c>abort</c> aborts the job once the other ranks have had as long again to report too.
/// In a deadlock every rank is blocked, so every rank reports; a rank cannot ask the
/// others, which are blocked as well, so each judges its own wait.
/// </summary>
/// <remarks>
/// Turned on by <c>motor --hang-report SECONDS[,abort]</c> (the runtime property
/// <c>Motor.HangReport</c>) or, in library mode, <c>MOTOR_HANG_REPORT=SECONDS[,abort]</c>.
/// Off, it costs nothing: <see cref="Enabled"/> is a constant to the JIT.  On, every
/// blocking call records what it waits for and a stack without file information (a few
/// microseconds); a watchdog thread reads the records and never calls MPI, except MPI_Abort.
/// </remarks>
internal static class HangReport
{
    internal const string Property = "Motor.HangReport";
    internal const string Variable = "MOTOR_HANG_REPORT";

    /// <summary>True when a hang report was asked for (and the setting was valid).</summary>
    internal static readonly bool Enabled;

    private static readonly long s_afterTicks;
    private static readonly double s_afterSeconds;
    private static readonly bool s_abort;
    private static readonly string? s_error;

    private static Thread? s_watchdog;

    [ThreadStatic] private static Waiter? t_waiter;
    [ThreadStatic] private static string? t_call;

    static HangReport()
    {
        string? setting = AppContext.GetData(Property) as string ?? Environment.GetEnvironmentVariable(Variable);
        if (string.IsNullOrWhiteSpace(setting))
            return;
        string[] parts = setting.Split(',', StringSplitOptions.TrimEntries);
        if (parts.Length > 2 || !double.TryParse(parts[0], NumberStyles.Float, CultureInfo.InvariantCulture, out double seconds) ||
            !(seconds > 0) || double.IsInfinity(seconds) || (parts.Length == 2 && parts[1] != "abort"))
        {
            s_error = SR.Format(SR.BadHangReport, setting);
            return;
        }
        s_afterSeconds = seconds;
        s_afterTicks = (long)(seconds * Stopwatch.Frequency);
        s_abort = parts.Length == 2;
        Enabled = true;
    }

    /// <summary>Starts the watchdog when MPI is initialized; refuses a malformed setting.</summary>
    internal static void Start()
    {
        if (s_error is not null)
            throw new ArgumentException(s_error);
        if (!Enabled || s_watchdog is not null)
            return;
        s_watchdog = new Thread(Watch) { IsBackground = true, Name = "Motor hang report" };
        s_watchdog.Start();
    }

    /// <summary>What the next blocking wait of this thread is (called only when <see cref="Enabled"/>).</summary>
    internal static void Describe(string call, CommHandle comm, int peer, int tag, string peerName = "source") =>
        t_call = $"{call}({peerName} {Peer(peer)}, tag {Tag(tag)}) on {CommName(comm)}";

    /// <inheritdoc cref="Describe(string, CommHandle, int, int, string)"/>
    internal static void Describe(string call) => t_call = call;

    /// <summary>Blocks in <paramref name="op"/> with this thread's wait recorded for the watchdog.</summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    internal static int Block<TOp>(ref TOp op) where TOp : struct, IPollThenBlock
    {
        Waiter w = Begin(t_call ?? op.Describe());
        try
        {
            return op.Block();
        }
        finally
        {
            w.End();
        }
    }

    /// <summary>A blocking collective with its wait recorded for the watchdog.</summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    internal static unsafe int Collective(CommHandle comm, CollDesc* d)
    {
        string name = (uint)d->Kind < (uint)Records.Collectives.Length ? Records.Collectives[d->Kind] : $"collective {d->Kind}";
        bool rooted = d->Kind is CollKind.Bcast or CollKind.Reduce or CollKind.Gather or CollKind.Scatter
            or CollKind.Gatherv or CollKind.Scatterv;
        Waiter w = Begin(rooted ? $"{name}(root {Peer(d->Root)}) on {CommName(comm)}" : $"{name} on {CommName(comm)}");
        try
        {
            return Core.CollRun(comm, d);
        }
        finally
        {
            w.End();
        }
    }

    /// <summary>
    /// A SendRecv (mp_sendrecv, one blocking call) with its wait recorded for the watchdog: both
    /// peers in one description, since the call waits for both at once.
    /// </summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    internal static unsafe int SendRecv(void* s, long sendBytes, int dest, int sendTag, void* r, long recvBytes,
                                        int source, int recvTag, CommHandle comm, Status* status)
    {
        Waiter w = Begin($"SendRecv(dest {Peer(dest)}, tag {Tag(sendTag)}; source {Peer(source)}, tag {Tag(recvTag)}) on {CommName(comm)}");
        try
        {
            return Core.Sendrecv(s, sendBytes, dest, sendTag, r, recvBytes, source, recvTag, comm, status);
        }
        finally
        {
            w.End();
        }
    }

    /// <summary>
    /// What only a hang report that is on uses: its static fields would otherwise be created with
    /// this class's, in System.MP's start on the main thread (a list type loaded for nothing: about
    /// 0.3 ms there).
    /// </summary>
    private static class Records
    {
        internal static readonly List<Waiter> Waiters = [];

        internal static readonly string[] Collectives =
        [
            "Barrier", "Bcast", "Reduce", "Allreduce", "Scan", "Exscan", "ReduceScatterBlock", "Gather", "Scatter",
            "Allgather", "Alltoall", "Gatherv", "Scatterv", "Allgatherv", "Alltoallv", "ReduceScatter",
        ];
    }

    private static Waiter Begin(string call)
    {
        t_call = null;
        Waiter? w = t_waiter;
        if (w is null)
        {
            t_waiter = w = new Waiter(Thread.CurrentThread);
            lock (Records.Waiters)
                Records.Waiters.Add(w);
        }
        w.Begin(call, new StackTrace(2, fNeedFileInfo: false));
        return w;
    }

    private static string Peer(int rank) => rank switch
    {
        Mpi.AnySource => "any",
        Mpi.ProcNull => "ProcNull",
        Mpi.Root => "Root",
        _ => rank.ToString(CultureInfo.InvariantCulture),
    };

    private static string Tag(int tag) => tag == Mpi.AnyTag ? "any" : tag.ToString(CultureInfo.InvariantCulture);

    private static string CommName(CommHandle comm) =>
        comm == CommHandle.World ? "World" : comm == CommHandle.Self ? "Self" : $"communicator {comm.Value}";


    private static void Watch()
    {
        int pollMs = (int)Math.Clamp(s_afterSeconds * 250, 20, 1000);
        while (true)
        {
            Thread.Sleep(pollMs);
            long now = Stopwatch.GetTimestamp();
            Waiter[] all;
            lock (Records.Waiters)
                all = [.. Records.Waiters];
            foreach (Waiter w in all)
            {
                string? report = w.ReportIfOverdue(now, s_afterTicks);
                if (report is not null)
                {
                    Console.Error.Write(report);
                    Console.Error.Flush();
                }
                // With abort: the other ranks have had as long again to print their reports.
                if (s_abort && w.OverdueBy(now, 2 * s_afterTicks))
                {
                    Console.Error.WriteLine(SR.Format(SR.HangReportAbort, RankText()));
                    Mpi.Abort(124);
                }
            }
        }
    }

    private static string RankText()
    {
        Communicator world = Communicator.World;
        return $"rank {world.Rank} of {world.Size} (pid {Environment.ProcessId} on {Environment.MachineName})";
    }

    /// <summary>The stack from the System.MP method the program called outwards (System.MP's own inner frames left out).</summary>
    [Diagnostics.CodeAnalysis.UnconditionalSuppressMessage("Trimming", "IL2026",
        Justification = "Only names frames: where trimming removed a method's metadata, GetMethod is null and the frame is kept.")]
    private static string UserFrames(StackTrace? stack)
    {
        if (stack is null)
            return "";
        StackFrame[] frames = stack.GetFrames();
        int first = 0;
        while (first < frames.Length - 1 && frames[first].GetMethod() is { } m &&
               m.DeclaringType?.Assembly == typeof(HangReport).Assembly && !(m.IsPublic && m.DeclaringType.IsPublic))
            first++;
        return new StackTrace(frames[first..]).ToString().TrimEnd();
    }

    /// <summary>One thread's current blocking wait.</summary>
    private sealed class Waiter(Thread thread)
    {
        private readonly object _lock = new();
        private string _call = "";
        private StackTrace? _stack;
        private long _since;
        private bool _active, _reported;

        internal void Begin(string call, StackTrace stack)
        {
            lock (_lock)
            {
                _call = call;
                _stack = stack;
                _since = Stopwatch.GetTimestamp();
                _active = true;
                _reported = false;
            }
        }

        internal void End()
        {
            lock (_lock)
                _active = false;
        }

        internal bool OverdueBy(long now, long ticks)
        {
            lock (_lock)
                return _active && now - _since > ticks;
        }

        internal string? ReportIfOverdue(long now, long after)
        {
            lock (_lock)
            {
                if (!_active || _reported || now - _since <= after)
                    return null;
                _reported = true;
                double waited = (now - _since) / (double)Stopwatch.Frequency;
                var text = new StringBuilder();
                text.Append(CultureInfo.InvariantCulture,
                    $"motor hang report: {RankText()} has waited {waited:F1} s in {_call}");
                text.Append(CultureInfo.InvariantCulture,
                    $" (thread {thread.ManagedThreadId}{(thread.Name is null ? "" : $" \"{thread.Name}\"")})\n");
                text.Append(UserFrames(_stack)).Append('\n');
                return text.ToString();
            }
        }
    }
}
