using System.Collections.Generic;
using System.Diagnostics;
using System.Diagnostics.CodeAnalysis;
using System.IO;
using System.MP.Interop;
using System.Numerics;
using System.Reflection;
using System.Runtime.CompilerServices;
using System.Threading;

namespace System.MP;

/// <summary>
/// The MPI profile and timeline: every MPI operation of this rank timed, counted with its bytes,
/// a message-size histogram, the caller it came from, and (timeline) each call's begin and end.
/// At <see cref="Mpi.Shutdown"/> the ranks send theirs to rank 0, which writes one table for the
/// job (<see cref="ProfileReport"/>) and, for a timeline, one Chrome trace-event file
/// (<see cref="TraceFile"/>).  While it is on, each operation is also written as an event of the
/// EventSource "System.MP" (<see cref="MpiEventSource"/>) when a listener such as dotnet-trace
/// has enabled it.
/// </summary>
/// <remarks>
/// Turned on by <c>motor --profile MODE</c> (the runtime property <c>Motor.Profile</c>) or, in
/// library mode, <c>MOTOR_PROFILE=MODE</c>: <c>1</c> or <c>profile</c> (the table on rank 0's
/// stderr), <c>profile:FILE</c> (the table in FILE), <c>trace</c> or <c>trace:FILE</c> (the table
/// on stderr and the timeline in FILE, default motor-trace.json), <c>events</c> (only the
/// EventSource events: no table, no gathering).  Off, it costs nothing: <see cref="Enabled"/> is
/// a constant to the JIT, and the hooks at the operations (<see cref="Begin"/>,
/// <see cref="End(ProfiledCall, long, long, int)"/>) fold away.  The hooks sit where the operations enter the core:
/// PointToPointCore (blocking point-to-point), Request and RequestList (posts, waits, tests)
/// and Communicator.Run / Collective (collectives); one-sided operations, file access and the
/// waits of WaitSome and of awaited requests are not profiled.  An operation that fails is recorded as one that succeeds; the first begin of each
/// thread is where its timeline starts.
/// </remarks>
internal static class MpiProfile
{
    internal const string Property = "Motor.Profile";
    internal const string Variable = "MOTOR_PROFILE";

    /// <summary>The default file of a timeline.</summary>
    internal const string DefaultTraceFile = "motor-trace.json";

    /// <summary>
    /// The setting, read by a field initializer and not a static constructor: the class is then
    /// beforefieldinit, so code compiled before it is initialized reads <see cref="Enabled"/>
    /// with a plain load and no initialization check (a Main compiled before MPI starts, with
    /// the ISend it inlines, in library mode without tiered compilation); code compiled after,
    /// which is all code under motor and, with tiering, every hot loop, has the hooks folded away.
    /// What remains is the first case with tiered compilation off: a user's Main compiled before
    /// MPI starts, with the posts it inlines, tests the setting per operation.  No System.MP code
    /// runs before that Main is compiled (its module initializer runs after), so no setting can be
    /// a constant to it; the posts that user code inlines (Request.PostSend/PostRecv, RequestList's)
    /// therefore test it once, to choose between the core's call and a timed call of their own.
    /// </summary>
    private static readonly Settings s_settings = Settings.Read(AppContext.GetData(Property) as string ?? Environment.GetEnvironmentVariable(Variable));

    /// <summary>True when the profile is on in any mode (and its setting was valid).</summary>
    internal static readonly bool Enabled = s_settings.Enabled;

    /// <summary>Each call's begin and end is kept for the timeline.</summary>
    internal static readonly bool Timeline = s_settings.TracePath is not null;

    /// <summary>A table is gathered and written at shutdown (not in <c>events</c> mode).</summary>
    internal static readonly bool Report = s_settings.Report;

    /// <summary>Where the table goes (null: rank 0's stderr).</summary>
    internal static readonly string? ReportPath = s_settings.ReportPath;

    /// <summary>Where the timeline goes.</summary>
    internal static readonly string? TracePath = s_settings.TracePath;

    /// <summary>Events a thread keeps for the timeline; past it, the rest are counted as dropped.</summary>
    internal static readonly int MaxEventsPerThread = 4_000_000;

    /// <summary>Set once the profile is written: calls after it (the gathering itself) are not recorded.</summary>
    private static volatile bool s_stopped;

    private static long s_startTicks;

    [ThreadStatic] private static ThreadLog? t_log;

    /// <summary>What the setting asks for, or the error it is.</summary>
    private readonly record struct Settings(bool Enabled, bool Report, string? ReportPath, string? TracePath, string? Setting, string? Error)
    {
        internal static Settings Read(string? setting)
        {
            if (string.IsNullOrWhiteSpace(setting) || setting == "0")
                return default;
            int colon = setting.IndexOf(':');
            string mode = colon < 0 ? setting : setting[..colon];
            string? path = colon < 0 ? null : setting[(colon + 1)..];
            return (mode, path) switch
            {
                (_, { Length: 0 }) => new(false, false, null, null, setting, SR.Format(SR.BadProfileSetting, setting)),
                ("1" or "profile", _) => new(true, true, path, null, setting, null),
                ("trace", _) => new(true, true, null, path ?? DefaultTraceFile, setting, null),
                ("events", null) => new(true, false, null, null, setting, null),
                _ => new(false, false, null, null, setting, SR.Format(SR.BadProfileSetting, setting)),
            };
        }
    }

    /// <summary>
    /// Refuses a malformed setting or a file that cannot be written, before MPI starts (every
    /// rank checks: the setting is the same everywhere), and starts the clock.
    /// </summary>
    internal static void Start()
    {
        if (s_settings.Error is { } error)
            throw new ArgumentException(error);
        if (!Enabled)
            return;
        CheckWritable(ReportPath);
        CheckWritable(TracePath);
        s_startTicks = Stopwatch.GetTimestamp();
        if (!Report)
            return;
        _ = ProfiledCalls.Names; // the tables this needs, created now rather than in the first operation
    }

    private static void CheckWritable(string? path)
    {
        if (path is null)
            return;
        try
        {
            if (Directory.Exists(path))
                throw new IOException(SR.ProfileFileIsDirectory);
            using (new FileStream(path, FileMode.Append, FileAccess.Write, FileShare.ReadWrite))
            {
            }
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException or NotSupportedException or ArgumentException)
        {
            throw new ArgumentException(SR.Format(SR.ProfileFileUnwritable, s_settings.Setting, Path.GetFullPath(path), e.Message), e);
        }
    }

    /// <summary>The time an operation starts (0 when the profile is off: the call folds away).</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static long Begin() => Enabled ? Stopwatch.GetTimestamp() : 0;

    /// <summary>Records an operation that began at <paramref name="begin"/> (nothing when the profile is off).</summary>
    /// <param name="call">The operation.</param>
    /// <param name="begin">What <see cref="Begin"/> returned.</param>
    /// <param name="bytes">The message's bytes (a receive: its buffer's), 0 where the operation moves none.</param>
    /// <param name="peer">The destination or source rank, or -1.</param>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static void End(ProfiledCall call, long begin, long bytes = 0, int peer = -1)
    {
        if (Enabled)
            Record(call, begin, bytes, peer);
    }

    /// <summary>Records a collective described by <paramref name="d"/>: <paramref name="first"/> + its kind, its count's bytes, its root.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static unsafe void End(ProfiledCall first, long begin, CollDesc* d)
    {
        if (Enabled)
            Record((ProfiledCall)((int)first + d->Kind), begin, d->Count * d->ElemSize, d->Root);
    }

    /// <summary><see cref="End(ProfiledCall, long, CollDesc*)"/> that passes on <paramref name="result"/>.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static unsafe int Ended(int result, ProfiledCall first, long begin, CollDesc* d)
    {
        End(first, begin, d);
        return result;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static void Record(ProfiledCall call, long begin, long bytes, int peer)
    {
        long end = Stopwatch.GetTimestamp();
        if (s_stopped)
            return;
        MpiEventSource.Log.Operation(call, begin, end, bytes, peer);
        if (!Report)
            return;
        ThreadLog log = t_log ?? NewLog();
        log.Add(call, begin, end, bytes, peer);
    }

    private static ThreadLog NewLog()
    {
        var log = new ThreadLog(Environment.CurrentManagedThreadId, Thread.CurrentThread.Name);
        lock (ThreadLog.All)
            ThreadLog.All.Add(log);
        return t_log = log;
    }

    /// <summary>
    /// Stops recording, gathers every rank's profile at rank 0 and writes the table and the
    /// timeline.  Collective over World; called by <see cref="Mpi.Shutdown"/> before MPI is
    /// finalized.  A file that cannot be written is reported on stderr, never thrown.
    /// </summary>
    internal static void Finish()
    {
        if (!Report || s_stopped)
            return;
        long end = Stopwatch.GetTimestamp();
        s_stopped = true;
        ThreadLog[] logs;
        lock (ThreadLog.All)
            logs = [.. ThreadLog.All];
        ProfileReport.GatherAndWrite(logs, s_startTicks, end);
    }
}

/// <summary>The operations the profile tells apart; the collectives follow the core's kinds.</summary>
internal enum ProfiledCall : byte
{
    Send, Ssend, Recv, SendRecv, Probe, MProbe, MRecv, ISend, ISsend, IRecv, Wait, WaitAll, WaitAny, Test,

    /// <summary>The first blocking collective: <see cref="Collective"/> + its CollKind.</summary>
    Collective = 16,

    /// <summary>The first nonblocking collective: <see cref="NonblockingCollective"/> + its CollKind.</summary>
    NonblockingCollective = 32,

    /// <summary>The first blocking neighborhood collective: + its NeighborKind.</summary>
    Neighbor = 48,

    /// <summary>The first nonblocking neighborhood collective: + its NeighborKind.</summary>
    NonblockingNeighbor = 56,

    /// <summary>How many there are (the size of the per-call tables).</summary>
    Count = 64,
}

/// <summary>The names of <see cref="ProfiledCall"/> values, and the size buckets of the histogram.</summary>
internal static class ProfiledCalls
{
    /// <summary>Message-size buckets: 0 bytes, then [2^(b-1), 2^b) for b = 1..47.</summary>
    internal const int SizeBuckets = 48;

    internal static readonly string[] Names = MakeNames();

    private static string[] MakeNames()
    {
        string[] collectives =
        [
            "Barrier", "Bcast", "Reduce", "Allreduce", "Scan", "Exscan", "ReduceScatterBlock", "Gather", "Scatter",
            "Allgather", "Alltoall", "Gatherv", "Scatterv", "Allgatherv", "Alltoallv", "ReduceScatter",
        ];
        string[] neighbors = ["NeighborAllgather", "NeighborAllgatherv", "NeighborAlltoall", "NeighborAlltoallv", "NeighborAlltoallw"];
        var names = new string[(int)ProfiledCall.Count];
        for (int i = 0; i < names.Length; i++)
            names[i] = $"call {i}";
        string[] pointToPoint = ["Send", "Ssend", "Recv", "SendRecv", "Probe", "MProbe", "MRecv", "ISend", "ISsend", "IRecv",
                                 "Wait", "WaitAll", "WaitAny", "Test"];
        pointToPoint.CopyTo(names, 0);
        for (int k = 0; k < collectives.Length; k++)
        {
            names[(int)ProfiledCall.Collective + k] = collectives[k];
            names[(int)ProfiledCall.NonblockingCollective + k] = "I" + collectives[k];
        }
        for (int k = 0; k < neighbors.Length; k++)
        {
            names[(int)ProfiledCall.Neighbor + k] = neighbors[k];
            names[(int)ProfiledCall.NonblockingNeighbor + k] = "I" + neighbors[k];
        }
        return names;
    }

    /// <summary>The bucket of a message of <paramref name="bytes"/> bytes.</summary>
    internal static int Bucket(long bytes) => bytes <= 0 ? 0 : Math.Min(SizeBuckets - 1, 64 - BitOperations.LeadingZeroCount((ulong)bytes));

    /// <summary>The smallest size of bucket <paramref name="b"/>.</summary>
    internal static long BucketLow(int b) => b == 0 ? 0 : 1L << (b - 1);
}

/// <summary>One operation of the timeline: its call, peer, bytes and Stopwatch ticks.</summary>
internal readonly record struct TimelineEvent(long Begin, long End, long Bytes, int Peer, ProfiledCall Call);

/// <summary>What one thread recorded; only that thread writes it, until the profile stops.</summary>
internal sealed class ThreadLog(int threadId, string? name)
{
    /// <summary>Every thread's log, in the order threads first recorded.</summary>
    internal static readonly List<ThreadLog> All = [];

    internal readonly int ThreadId = threadId;
    internal readonly string? Name = name;
    internal readonly long[] Calls = new long[(int)ProfiledCall.Count];
    internal readonly long[] Ticks = new long[(int)ProfiledCall.Count];
    internal readonly long[] Bytes = new long[(int)ProfiledCall.Count];
    internal readonly long[] Sizes = new long[(int)ProfiledCall.Count * ProfiledCalls.SizeBuckets];

    /// <summary>Per calling method and operation: calls and ticks.</summary>
    internal readonly Dictionary<(string Site, ProfiledCall Call), (long Calls, long Ticks)> Sites = [];

    internal TimelineEvent[] Events = MpiProfile.Timeline ? new TimelineEvent[1024] : [];
    internal int EventCount;
    internal long Dropped;

    internal void Add(ProfiledCall call, long begin, long end, long bytes, int peer)
    {
        int c = (int)call;
        Calls[c]++;
        Ticks[c] += end - begin;
        Bytes[c] += bytes;
        Sizes[c * ProfiledCalls.SizeBuckets + ProfiledCalls.Bucket(bytes)]++;
        var key = (CallSite.Find(), call);
        Sites.TryGetValue(key, out var site);
        Sites[key] = (site.Calls + 1, site.Ticks + end - begin);
        if (!MpiProfile.Timeline)
            return;
        if (EventCount == Events.Length)
        {
            if (EventCount >= MpiProfile.MaxEventsPerThread)
            {
                Dropped++;
                return;
            }
            Array.Resize(ref Events, Math.Min(MpiProfile.MaxEventsPerThread, EventCount * 2));
        }
        Events[EventCount++] = new TimelineEvent(begin, end, bytes, peer, call);
    }
}

/// <summary>The method that called into System.MP: the first frame of another assembly.</summary>
internal static class CallSite
{
    private static readonly string s_ownAssembly = typeof(CallSite).Assembly.GetName().Name!;

    internal static string Find()
    {
        var trace = new StackTrace(3, fNeedFileInfo: false);
        for (int i = 0; i < trace.FrameCount; i++)
        {
            StackFrame? frame = trace.GetFrame(i);
            if (frame is null)
                continue;
            if (DiagnosticMethodInfo.Create(frame) is { } method)
            {
                if (!IsOwn(method.DeclaringAssemblyName))
                    return $"{method.DeclaringTypeName}.{method.Name}";
            }
            else if (MethodOf(frame) is { } m && !IsOwn(m.Module.Assembly.FullName))
                return $"{m.DeclaringType?.FullName}.{m.Name}";
        }
        return "(unknown)";
    }

    private static bool IsOwn(string? assembly) =>
        assembly is not null && assembly.StartsWith(s_ownAssembly, StringComparison.Ordinal) &&
        (assembly.Length == s_ownAssembly.Length || assembly[s_ownAssembly.Length] == ',');

    /// <summary>
    /// The method of a frame that DiagnosticMethodInfo does not describe (a loop's on-stack
    /// replacement code, as in a Main whose loop was compiled again while it ran).
    /// </summary>
    [UnconditionalSuppressMessage("Trimming", "IL2026", Justification = "Only names the method; where trimming removed it the site reads (unknown).")]
    private static MethodBase? MethodOf(StackFrame frame) => frame.GetMethod();
}
