// Bandwidth: osu_bw methodology with System.MP, optionally under allocation
// pressure, reporting GC pauses.  The same rows as perf/native/bandwidth.c.
//
//   mpiexec -n 2 dotnet Bandwidth.dll [max_bytes] [iteration_scale] [pressure]
//   mpiexec -n 2 motor  Bandwidth.dll [max_bytes] [iteration_scale] [pressure]
//
// Rank 0 posts a window of 64 ISend, rank 1 a window of 64 IRecv, both wait
// for all, then rank 1 acknowledges with a 4-byte message.  With "pressure" a
// second thread on each rank allocates about 1 GB/s (short-lived arrays plus
// a ring of survivors), so GCs happen while the windows are in flight: under
// motor the GC extension pins the in-flight buffers at mark time, under
// dotnet each operation holds a pinned GCHandle.  BENCH_REQUESTS=list posts each
// window into a RequestList instead of Request objects (nothing allocated per message).
using System.Diagnostics.Tracing;
using System.Globalization;
using System.MP;

const int Window = 64, Large = 8192;
long max = args.Length > 0 ? long.Parse(args[0], CultureInfo.InvariantCulture) : 4L << 20;
double scale = args.Length > 1 ? double.Parse(args[1], CultureInfo.InvariantCulture) : 1.0;
bool pressure = args.Length > 2 && args[2] == "pressure";

var comm = Communicator.World;
if (comm.Size < 2)
{
    Console.Error.WriteLine("Bandwidth needs at least 2 ranks");
    return 1;
}
var send = BenchBuffer.Allocate(max);
var recv = BenchBuffer.Allocate(max);
BenchBuffer.Report(comm, send, recv);
Array.Fill(send, (byte)'a');
var reqs = new Request[Window];
RequestList? list = Environment.GetEnvironmentVariable("BENCH_REQUESTS") == "list" ? new RequestList(Window) : null;
// Per-pause percentiles need the runtime's GC events, whose in-process listener
// runs a dispatch thread that wakes at every GC and takes a core from a
// busy-polling rank: only the pressure runs (which are about pauses) listen.
using GcPauses? pauses = pressure ? new GcPauses() : null;
TimeSpan pausedBefore = GC.GetTotalPauseDuration();
using var stop = new CancellationTokenSource();
Thread? allocator = pressure ? new Thread(() => Allocate(stop.Token)) { IsBackground = true } : null;
allocator?.Start();

if (comm.Rank == 0)
{
    string mode = Mpi.IsHosted ? (Mpi.GetStatistics().GcExtensionActive ? "motor, GC extension" : "motor, GCHandles") : "dotnet, GCHandles";
    Console.WriteLine($"# C# System.MP bandwidth (osu_bw methodology, window {Window}; {mode}{(list is null ? "" : ", RequestList")}{(pressure ? ", allocation pressure" : "")})");
    Console.WriteLine($"# {"size",-10} {"MB/s",14}");
}
// JIT warm-up, as in samples/PingPong: windows for a second before anything is
// timed, so tiered compilation has finished rewriting the window loop (a
// background compile lands on a core a busy-polling rank needs, and within a
// timed size it costs that size milliseconds).  Rank 0 decides when to stop.
for (double start = Mpi.Wtime(); ;)
{
    for (int i = 0; i < 100; i++)
        Exchange((int)Math.Min(i % 2 == 0 ? 8 : 4096, max));
    if (!comm.Bcast(comm.Rank == 0 && Mpi.Wtime() - start < 1.0, 0))
        break;
}
int gcBefore = GC.CollectionCount(0);
for (long n = 1; n <= max; n *= 2)
{
    int warm = n > Large ? 2 : 10;
    int iters = Math.Max(1, (int)((n > Large ? 20 : 100) * scale));
    double t0 = 0;
    comm.Barrier();
    for (int i = 0; i < warm + iters; i++)
    {
        if (i == warm)
            t0 = Mpi.Wtime();
        Exchange((int)n);
    }
    if (comm.Rank == 0)
        Console.WriteLine($"{n,-12} {(double)n * Window * iters / (Mpi.Wtime() - t0) / 1e6,14:G6}");
}
stop.Cancel();
allocator?.Join();
int gcs = GC.CollectionCount(0) - gcBefore;
if (comm.Rank == 1 && recv[0] != (byte)'a')
{
    Console.Error.WriteLine("received data is wrong");
    return 1;
}
if (comm.Rank == 0)
{
    MpiStatistics s = Mpi.GetStatistics();
    string paused = pauses?.Percentiles(0.5, 0.9, 0.99, 1.0) is double[] p
        ? $"pause ms p50 {p[0]:F3} p90 {p[1]:F3} p99 {p[2]:F3} max {p[3]:F3}"
        : $"paused {(GC.GetTotalPauseDuration() - pausedBefore).TotalMilliseconds:F3} ms in all";
    Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
        $"# gc: {gcs} GCs, {paused}; pinned at marks {s.PinnedTotal}, released at marks {s.ReleasedAtMark}"));
}
return 0;

void Exchange(int count)
{
    if (list is null)
        OsuWindow.Exchange(comm, send, recv, reqs, count);
    else
        OsuWindow.Exchange(comm, send, recv, list, count);
}

static void Allocate(CancellationToken stop)
{
    var ring = new byte[512][];
    var rng = new Random(1);
    for (int n = 0; !stop.IsCancellationRequested; n++)
    {
        // About 1 MB per millisecond: mostly garbage, one array in 16 survives a while.
        for (int k = 0; k < 64; k++)
        {
            var a = new byte[rng.Next(1024, 31 * 1024)];
            if ((k & 15) == 0)
                ring[rng.Next(ring.Length)] = a;
        }
        Thread.Sleep(1);
    }
}

/// <summary>GC pause times from the runtime's own events (suspend begin to restart end).</summary>
internal sealed class GcPauses : EventListener
{
    private readonly List<double> _pausesMs = [];
    private DateTime _suspend;

    protected override void OnEventSourceCreated(EventSource source)
    {
        if (source.Name == "Microsoft-Windows-DotNETRuntime")
            EnableEvents(source, EventLevel.Informational, (EventKeywords)0x1 /* GC */);
    }

    protected override void OnEventWritten(EventWrittenEventArgs e)
    {
        if (e.EventName is null)
            return;
        if (e.EventName.StartsWith("GCSuspendEEBegin", StringComparison.Ordinal))
            _suspend = e.TimeStamp;
        else if (e.EventName.StartsWith("GCRestartEEEnd", StringComparison.Ordinal) && _suspend != default)
        {
            lock (_pausesMs)
                _pausesMs.Add((e.TimeStamp - _suspend).TotalMilliseconds);
            _suspend = default;
        }
    }

    internal double[] Percentiles(params double[] ps)
    {
        double[] sorted;
        lock (_pausesMs)
            sorted = [.. _pausesMs.Order()];
        return [.. ps.Select(p => sorted.Length == 0 ? 0 : sorted[Math.Min(sorted.Length - 1, (int)Math.Ceiling(p * sorted.Length) - 1)])];
    }
}
