using System.Diagnostics.Metrics;
using System.MP.Interop;
using System.Reflection;
using System.Runtime.CompilerServices;
using System.Threading;

namespace System.MP;

/// <summary>
/// Counters of this process's message passing and of the GC extension's
/// in-flight buffer pinning.  Each thread counts its own operations and the
/// sums include threads that have exited, so they are exact at any thread
/// level (a snapshot: operations other threads post meanwhile may or may not
/// be in it).  The same values are
/// published as the meter "System.MP" (see dotnet-counters).
/// </summary>
public readonly struct MpiStatistics
{
    /// <summary>Point-to-point operations posted (blocking and nonblocking).</summary>
    public long PointToPointOperations { get; init; }

    /// <summary>Bytes of the point-to-point operations posted (sends and receive capacities).</summary>
    public long PointToPointBytes { get; init; }

    /// <summary>Collective operations run or posted.</summary>
    public long CollectiveOperations { get; init; }

    /// <summary>Operations that needed no pin object: blocking ones (buffer under <c>fixed</c>) and nonblocking ones registered with the GC extension.</summary>
    public long PinsAvoided { get; init; }

    /// <summary>Nonblocking buffers recorded in the in-flight table (motor with its GC extension).</summary>
    public long BuffersRegistered { get; init; }

    /// <summary>GC mark passes that scanned the in-flight table.</summary>
    public long GcScans { get; init; }

    /// <summary>Buffers the GC extension reported as pinned at the last GC mark.</summary>
    public long PinnedAtLastMark { get; init; }

    /// <summary>Buffers reported as pinned, summed over all GC marks.</summary>
    public long PinnedTotal { get; init; }

    /// <summary>Buffers released at a mark: their operation had completed, so they were no longer pinned.</summary>
    public long ReleasedAtMark { get; init; }

    /// <summary>Requests posted and not yet freed: the core's request slots in use, and the open entries of request lists (a <see cref="RequestList"/>'s, and those of <see cref="Request"/> objects posted in blocks).</summary>
    public long ActiveRequests { get; init; }

    /// <summary>Requests whose MPI request is still open (the core has not yet seen the operation complete); at most <see cref="ActiveRequests"/>.</summary>
    public long OpenMpiRequests { get; init; }

    /// <summary>Requests disposed or dropped before completion that the core has not freed yet (it frees each once its operation completes).</summary>
    public long OrphanedRequests { get; init; }

    /// <summary>Request slots the core has ever handed out: the high-water mark of its slot table, which never shrinks.</summary>
    public long RequestSlotsHighWater { get; init; }

    /// <summary>Communicators the core holds, <see cref="Communicator.World"/> and <see cref="Communicator.Self"/> included.</summary>
    public long Communicators { get; init; }

    /// <summary>Pinned GCHandles System.MP holds on buffers of nonblocking operations in flight (library mode; under motor the GC extension pins without handles).</summary>
    public long PinnedHandles { get; init; }

    /// <summary>
    /// Pinned GCHandles System.MP has allocated on buffers since the process started (library
    /// mode).  A posting thread keeps its last handle once that handle's operations completed
    /// and pins its next array with it, so one operation at a time allocates none after the
    /// first; <see cref="ArraysPinned"/> counts every pin.  Under motor with its GC extension no
    /// operation allocates one: this stays 0.
    /// </summary>
    public long PinnedHandlesAllocated { get; init; }

    /// <summary>
    /// Times System.MP has pinned an array with a GCHandle since the process started (library
    /// mode), with a new handle or a re-pointed idle one: one per array per stretch of time with
    /// operations in flight on it (the operations in flight on one array share one pin).  Under
    /// motor with its GC extension nonblocking operations pin none (a window's memory still does).
    /// </summary>
    public long ArraysPinned { get; init; }

    /// <summary>True when the GC extension (libmpgc, loaded by motor) pins in-flight buffers at GC mark time; false when pinned GCHandles are used.</summary>
    public bool GcExtensionActive { get; init; }

    /// <summary>
    /// True when the GC extension starts the data of arrays without references on the large
    /// and pinned object heaps (ordinary arrays of 85,000 bytes and more, and
    /// <see cref="Mpi.AllocatePinned{T}"/>) on a 64-byte boundary.  The stock GC aligns
    /// objects to 8 bytes only, and copies between a user's buffer and MPI's or the kernel's
    /// run slower off a cache line.  Under motor this is on unless background GC was turned
    /// back on (<c>System.GC.Concurrent=true</c> or <c>DOTNET_gcConcurrent=1</c>), with which
    /// it cannot be done safely, or <c>MOTOR_GC_ALIGN=0</c>.
    /// </summary>
    public bool GcAlignsLargeArrays { get; init; }

    /// <summary>
    /// The bytes the GC was configured to allocate between gen0 collections, as the GC
    /// extension saw the GC read it; 0 when the GC chose its own (library mode, server GC,
    /// <c>MOTOR_GC_GEN0=0</c>).  .NET sizes it from the largest cache as if the process had
    /// the machine to itself; with a rank on every core, allocation would then clear memory
    /// long out of the cache.  So under motor with workstation GC it is 4 MiB, unless <c>MOTOR_GC_GEN0=&lt;bytes&gt;</c>,
    /// <c>DOTNET_GCgen0size</c> or the runtime property <c>System.GC.Gen0Size</c> sets it.
    /// The GC still raises the budget when much of gen0 survives.
    /// </summary>
    public long GcGen0Budget { get; init; }

    /// <summary>MPI calls that returned an error (each failing call counts once; errors Motor detects before calling MPI do not count).</summary>
    public long MpiErrors { get; init; }

    /// <summary>Persistent requests made and not yet freed (each holds one MPI request, active or not).</summary>
    public long PersistentRequests { get; init; }

    /// <summary>Instances of persistent requests started.</summary>
    public long PersistentStarts { get; init; }

    /// <summary>
    /// Persistent point-to-point requests made again at a start because the GC had moved
    /// their array since the previous instance (see <see cref="PersistentRequest"/>).
    /// </summary>
    public long PersistentRecreated { get; init; }

    internal static unsafe MpiStatistics Read()
    {
        CoreStats s;
        Core.Stats(&s);
        return new MpiStatistics
        {
            PointToPointOperations = (long)s.P2pOps,
            PointToPointBytes = (long)s.P2pBytes,
            CollectiveOperations = (long)s.CollOps,
            PinsAvoided = (long)(s.BlockingOps + s.Registered),
            BuffersRegistered = (long)s.Registered,
            GcScans = (long)s.GcScans,
            PinnedAtLastMark = (long)s.PinnedLastMark,
            PinnedTotal = (long)s.PinnedTotal,
            ReleasedAtMark = (long)s.ReleasedAtMark,
            ActiveRequests = (long)s.ActiveRequests,
            GcExtensionActive = s.GcExtension != 0,
            GcAlignsLargeArrays = s.GcAlignedArrays != 0,
            GcGen0Budget = (long)s.GcGen0Budget,
            MpiErrors = (long)s.MpiErrors,
            OpenMpiRequests = (long)s.OpenMpiRequests,
            OrphanedRequests = (long)s.Orphans,
            RequestSlotsHighWater = (long)s.SlotsHighWater,
            Communicators = (long)s.Comms,
            PinnedHandles = BufferHold.PinnedHandles,
            PinnedHandlesAllocated = BufferHold.PinnedHandlesAllocated,
            ArraysPinned = BufferHold.ArraysPinned,
            PersistentRequests = (long)s.PersistentOpen,
            PersistentStarts = (long)s.PersistentStarts,
            PersistentRecreated = (long)s.PersistentRecreated,
        };
    }
}

/// <summary>
/// The "System.MP" meter: observable instruments over <see cref="MpiStatistics"/>, published
/// only once someone can listen.  Creating any <see cref="Meter"/> creates .NET's metrics
/// EventSource, which cost a 2-rank Hello 46-115 ms of its start, so the meter waits
/// for the assembly that holds both <see cref="MeterListener"/> and that EventSource
/// (System.Diagnostics.DiagnosticSource): an in-process listener loads it to exist, and
/// dotnet-counters' session makes the runtime load it to create the EventSource.  If it is
/// loaded already when MPI starts, the meter is published at once.
/// </summary>
internal static class MpiMeter
{
    internal const string Name = "System.MP";
    private const string MetricsAssembly = "System.Diagnostics.DiagnosticSource";
    private static readonly Lock s_lock = new();
    private static bool s_armed;
    private static object? s_meter; // a Meter; typed object so this class's own code never loads MetricsAssembly

    /// <summary>True once the meter exists (for tests: nothing has loaded the metrics assembly before).</summary>
    internal static bool IsPublished => Volatile.Read(ref s_meter) is not null;

    /// <summary>Publishes the meter now if anyone can listen, else as soon as anyone can.</summary>
    internal static void Start()
    {
        lock (s_lock)
        {
            if (s_armed)
                return;
            s_armed = true;
        }
        AppDomain.CurrentDomain.AssemblyLoad += OnAssemblyLoad;
        foreach (Assembly a in AppDomain.CurrentDomain.GetAssemblies())
        {
            if (IsMetricsAssembly(a))
            {
                Publish();
                return;
            }
        }
    }

    // By the display name the runtime keeps: GetName() builds an AssemblyName (about 30 us each,
    // for every assembly loaded before and after System.MP starts).
    private static bool IsMetricsAssembly(Assembly a) =>
        a.FullName is { } name && name.StartsWith(MetricsAssembly, StringComparison.Ordinal) &&
        name.Length > MetricsAssembly.Length && name[MetricsAssembly.Length] == ',';

    private static void OnAssemblyLoad(object? sender, AssemblyLoadEventArgs e)
    {
        if (IsMetricsAssembly(e.LoadedAssembly))
            Publish();
    }

    private static void Publish()
    {
        lock (s_lock)
        {
            if (s_meter is not null)
                return;
            AppDomain.CurrentDomain.AssemblyLoad -= OnAssemblyLoad;
            s_meter = Create();
        }
    }

    [MethodImpl(MethodImplOptions.NoInlining)] // the only code that touches the metrics assembly's types
    private static object Create()
    {
        var m = new Meter(Name, typeof(MpiMeter).Assembly.GetName().Version?.ToString());
        m.CreateObservableCounter("mp.operations", () => Read(s => s.PointToPointOperations + s.CollectiveOperations), "{operation}", "Point-to-point and collective operations");
        m.CreateObservableCounter("mp.bytes", () => Read(s => s.PointToPointBytes), "By", "Point-to-point payload bytes");
        m.CreateObservableCounter("mp.pins_avoided", () => Read(s => s.PinsAvoided), "{operation}", "Operations that needed no pin object");
        m.CreateObservableCounter("mp.gc.buffers_registered", () => Read(s => s.BuffersRegistered), "{buffer}", "Nonblocking buffers registered with the GC extension");
        m.CreateObservableGauge("mp.gc.pinned_at_last_mark", () => Read(s => s.PinnedAtLastMark), "{buffer}", "In-flight buffers pinned at the last GC mark");
        m.CreateObservableCounter("mp.gc.released_at_mark", () => Read(s => s.ReleasedAtMark), "{buffer}", "Buffers found complete at a GC mark and no longer pinned");
        m.CreateObservableGauge("mp.requests.active", () => Read(s => s.ActiveRequests), "{request}", "Requests posted and not yet freed");
        m.CreateObservableGauge("mp.requests.orphaned", () => Read(s => s.OrphanedRequests), "{request}", "Dropped requests not yet freed");
        m.CreateObservableGauge("mp.pinned_handles", () => Read(s => s.PinnedHandles), "{handle}", "Pinned GCHandles on buffers in flight");
        m.CreateObservableCounter("mp.pinned_handles_allocated", () => Read(s => s.PinnedHandlesAllocated), "{handle}", "Pinned GCHandles allocated on buffers");
        m.CreateObservableCounter("mp.arrays_pinned", () => Read(s => s.ArraysPinned), "{pin}", "Arrays pinned with a GCHandle (new or reused)");
        m.CreateObservableGauge("mp.requests.persistent", () => Read(s => s.PersistentRequests), "{request}", "Persistent requests made and not yet freed");
        m.CreateObservableCounter("mp.requests.persistent_recreated", () => Read(s => s.PersistentRecreated), "{request}", "Persistent requests made again because their array had moved");
        return m;
    }

    private static long Read(Func<MpiStatistics, long> pick) => Mpi.IsInitialized ? pick(MpiStatistics.Read()) : 0;
}
