// Report: reads perf/bench.sh's raw output (raw/<group>/<series>.<round>.txt,
// rows "key value" or "name bytes value"), and writes per group a CSV of
// medians, spread and ratio to C, a log-log SVG plot for size sweeps, and
// summary.md with every table.
//
//   dotnet Report.dll <bench_dir> [rounds] [elapsed_seconds]
using System.Globalization;
using System.Runtime.InteropServices;
using System.Text;

var inv = CultureInfo.InvariantCulture;
string dir = args.Length > 0 ? args[0] : "artifacts/bench";
string rounds = args.Length > 1 ? args[1] : "?";
string elapsed = args.Length > 2 ? args[2] : "?";
string raw = Path.Combine(dir, "raw");
if (!Directory.Exists(raw))
{
    Console.Error.WriteLine($"Report: no raw results in {raw}");
    return 1;
}

var md = new StringBuilder();
md.AppendLine("# Motor benchmark summary").AppendLine();
md.AppendLine(inv, $"{DateTime.UtcNow:yyyy-MM-dd HH:mm} UTC; {Environment.ProcessorCount} cores ({CpuModel()}); " +
                   $"{RuntimeInformation.FrameworkDescription}; {rounds} interleaved rounds per series; suite took {elapsed} s.");
md.AppendLine().AppendLine("Each cell: median over the rounds, `±` half the spread (max−min) in percent of the median, and in parentheses the ratio to the group's reference (C, the native floor over the same MPI; for object transport the raw bytes): the median over the rounds of the two runs' quotient in the same round.").AppendLine();

foreach (Group g in Group.Known)
{
    string gdir = Path.Combine(raw, g.Name);
    if (!Directory.Exists(gdir))
        continue;
    var table = Table.Load(gdir, g.Reference);
    if (table.Series.Count == 0)
        continue;
    File.WriteAllText(Path.Combine(dir, g.Name + ".csv"), table.Csv(g));
    md.AppendLine(inv, $"## {g.Title}").AppendLine().AppendLine(g.Description).AppendLine();
    if (g.Bars)
    {
        File.WriteAllText(Path.Combine(dir, g.Name + ".svg"), Plot.Bars(g, table));
        md.AppendLine(inv, $"![{g.Title}]({g.Name}.svg)").AppendLine();
    }
    else if (g.Sweep)
    {
        File.WriteAllText(Path.Combine(dir, g.Name + ".svg"), Plot.Svg(g, table));
        md.AppendLine(inv, $"![{g.Title}]({g.Name}.svg)").AppendLine();
    }
    md.Append(table.Markdown(g)).AppendLine();
    if (g.FirstKey && table.Keys.Count > 0)
        md.AppendLine(table.First(g)).AppendLine();
    if (g.Versus is var (mine, theirs) && table.Series.Contains(mine) && table.Series.Contains(theirs))
        md.AppendLine(table.Versus(g, mine, theirs)).AppendLine();
}

string micro = Path.Combine(raw, "micro");
if (Directory.Exists(micro))
{
    md.AppendLine("## Micro-benchmarks (BenchmarkDotNet)").AppendLine();
    foreach (string f in Directory.GetFiles(micro, "*-report-github.md", SearchOption.AllDirectories).Order())
        // BenchmarkDotNet quotes descriptions with spaces as HTML entities (&#39;…&#39;); markdown needs neither.
        md.AppendLine(File.ReadAllText(f).Replace("&#39;", "", StringComparison.Ordinal)).AppendLine();
}
File.WriteAllText(Path.Combine(dir, "summary.md"), md.ToString());
Console.WriteLine(md.ToString());
return 0;

static string CpuModel()
{
    try
    {
        string? line = File.ReadLines("/proc/cpuinfo").FirstOrDefault(l => l.StartsWith("model name", StringComparison.Ordinal));
        return line is null ? "unknown CPU" : line[(line.IndexOf(':') + 1)..].Trim();
    }
    catch (IOException)
    {
        return "unknown CPU";
    }
}

/// <summary>A benchmark group: how to read and show its numbers.</summary>
internal sealed record Group(string Name, string Title, string Unit, bool HigherIsBetter, bool Sweep, string Description, string Reference = "C",
                             (string Mine, string Theirs)? Versus = null, bool FirstKey = false, bool Bars = false)
{
    private const string Placement =
        "The placement experiment (perf/README.md): C-net is the C floor with its buffers at the offsets within their pages where the C# " +
        "program's arrays start (C's own come from malloc, 16 bytes into a page; the GC aligns objects to 8 bytes only), motor-pinned is motor " +
        "on Mpi.AllocatePinned arrays, whose data starts on a 64-byte boundary.";

    internal static readonly Group[] Known =
    [
        new("latency", "Point-to-point latency", "µs", false, true,
            "osu_latency methodology: blocking ping-pong between 2 ranks, half round trip; 100 warm-up + 10000 timed iterations up to 8 KiB, 10 + 1000 above (times SCALE). " + Placement),
        new("latency-paired", "Point-to-point latency, paired blocks in one process", "µs", false, true,
            "perf/Paired latency under motor: per size, pairs of neighbouring blocks of the osu_latency loop, one through System.MP's blocking " +
            "Send/Recv (motor), one calling the same MPI library's MPI_Send/MPI_Recv directly from the same process (direct, the reference), on the " +
            "same buffers, alternating which goes first (1000 round trips per block up to 8 KiB, 200 up to 64 KiB, 50 up to 512 KiB, 10 above, times " +
            "SCALE; PAIRED_SETS pairs, default 31). Each value is a round's median block; the pairs ran milliseconds apart on the same cores and " +
            "pages, so the ratio is what Motor adds per message, free of the run-to-run spread of the latency group. The program itself also prints " +
            "the median and quartiles of the per-pair quotients (raw/latency-paired/table.*.log).", "direct"),
        new("bandwidth", "Point-to-point bandwidth", "MB/s", true, true,
            "osu_bw methodology: windows of 64 nonblocking sends/receives and a 4-byte acknowledgement (bench.sh times 10× osu_bw's window counts by default, BW_SCALE). " +
            "motor-list posts each window into a RequestList instead of Request objects (nothing allocated per message). " + Placement),
        new("bandwidth-paired", "Point-to-point bandwidth, paired blocks in one process", "MB/s", true, true,
            "perf/Paired bandwidth under motor: per size, sets of three neighbouring blocks of osu_bw windows (64 nonblocking sends and a 4-byte " +
            "acknowledgement; 100 windows per block up to 8 KiB, 20 above, times BW_SCALE / 10; PAIRED_SETS sets, default 31), through System.MP " +
            "with Request objects (motor) and with a RequestList (motor-list), and calling the same MPI library's MPI_Isend/MPI_Irecv/MPI_Waitall " +
            "directly from the same process (direct, the reference), on the same buffers, each path first, middle and last in turn. Each value is a " +
            "round's median block; the program also prints the median and quartiles of the per-set quotients (raw/bandwidth-paired/table.*.log).", "direct"),
        new("message-rate", "Message rate, paired blocks in one process", "msg/s", true, true,
            "osu_mbw_mr methodology between one pair, perf/Paired rate under motor: per size, sets of three neighbouring blocks of windows of " +
            "64 nonblocking sends (the receiver posts 64 receives, both wait for all, then a 4-byte acknowledgement; 100 windows per block up to " +
            "8 KiB, times BW_SCALE / 10; PAIRED_SETS sets), through System.MP with Request objects (motor: WaitAll(Request[]), which returns the " +
            "statuses; motor-span: the allocation-free WaitAll(ReadOnlySpan<Request>)) and a RequestList (motor-list), and " +
            "calling the same MPI library's MPI_Isend/MPI_Irecv/MPI_Waitall directly from the same process (direct, the reference); messages per " +
            "second, sizes up to RATE_MAX_BYTES (4096).", "direct"),
        new("message-rate-core", "Message rate through the core from C, paired blocks in one process", "msg/s", true, true,
            "As message-rate, in C (perf/native/rate_core.c): the same windows through mpcore's call table, as System.MP's Request objects " +
            "reach it (core: isend/irecv, req_waitall_owned, each buffer registered as an owner object) and as a RequestList does (core-list: " +
            "list_isend/list_irecv/list_waitall), against MPI_Isend/MPI_Irecv/MPI_Waitall called directly from the same process (direct, the " +
            "reference): the part of message-rate's gap that the core takes before any managed code.", "direct"),
        new("message-rate-await", "Message rate with awaits, paired blocks in one process", "msg/s", true, true,
            "As message-rate at thread level Multiple (motor --thread-level multiple): each window's requests awaited together " +
            "(await MpiRequest.WhenAll, the progress engine completes them; motor-await) against the direct calls in the same process at the " +
            "same thread level (direct, the reference).", "direct"),
        new("rma-put", "One-sided Put latency", "µs", false, true,
            "osu_put_latency methodology: rank 0 locks rank 1's window (Window.Allocate / MPI_Win_allocate) and times Put + Flush; " +
            "100 warm-up + 10000 timed iterations up to 8 KiB, 10 + 1000 above (times SCALE)."),
        new("rma-get", "One-sided Get bandwidth", "MB/s", true, true,
            "osu_get_bw methodology: rank 0 locks rank 1's window and issues windows of 64 Gets, each window ended by one Flush " +
            "(times BW_SCALE)."),
        new("collectives", "Collectives", "µs", false, false,
            "Allreduce of one double (8 B), Bcast of 1 MiB, Alltoall of 4 KiB per rank, 2 ranks."),
        new("async", "Awaited requests: round-trip latency", "µs", false, false,
            "perf/Async at thread level Multiple: ping-pong of 8 B and 64 KiB, half round trip; rank 1 echoes with blocking Recv/Send, rank 0 sends " +
            "and receives by blocking Recv (recv), IRecv + Wait (wait), await IRecv with the defaults (await: progress on the caller first, " +
            "AsyncProgress.DefaultCallerPolls), or await through the progress engine alone (await-engine, AsyncProgress.CallerPolls = 0); " +
            "C: blocking MPI_Send/MPI_Recv at MPI_THREAD_MULTIPLE. Each run times its iterations in blocks of BENCH_BLOCK (default 100) " +
            "and reports the median block's, so that a stretch in which a rank lost its core does not set the figure."),
        new("async-idle", "Awaited requests: processor time while idle", "% of a core", false, false,
            "Rank 0's processor time (whole process) while IDLE_PENDING (default 64; motor-1: 1) awaited receives match nothing for " +
            "IDLE_SECONDS: the progress engine backs off to sleeps of up to 1 ms. C: the same receives waited for in MPI_Waitall (MPICH polls)."),
        new("io", "Parallel I/O (MPI-IO)", "MB/s", true, false,
            "A collective write (WriteAtAll, one contiguous block per rank, then Sync) and a collective read back (ReadAtAll) of one file of IO_BYTES " +
            "on 2 ranks, timed between barriers, best of 3; the read comes from the page cache when the file fits in memory."),
        new("objects", "Object transport (Motor Figure 11)", "µs", false, true,
            "Ping-pong under motor of a linked list holding 4096 data bytes spread over N nodes, round trip including serialization: " +
            "OSend/ORecv (objects), System.Text.Json with reference preservation (json), MemoryPack with circular references (mempack), " +
            "the 4096 bytes as one int[] (raw, the floor the ratios refer to) and the same bytes received by matched probe (mprobe).", "raw"),
        new("objects-steady", "Object transport in a program's message loop", "µs", false, false,
            "ObjectPingPong steady: STEADY_ITERATIONS round trips of Figure 11's 1-node list (4096 data bytes) after as many untimed, " +
            "with no collection in between, as a program's message loop runs (Figure 11 collects before each of its short cases): " +
            "OSend/ORecv under motor (motor), the same with .NET's own gen0 budget (motor-netgen0: MOTOR_GC_GEN0=0), under dotnet " +
            "(dotnet), and the 4096 bytes as one int[] under motor (raw, the floor the ratios refer to).", "raw"),
        new("service-bw", "MPI bandwidth beside a gRPC service", "MB/s", true, false,
            "perf/ServiceLoad, 2 ranks: osu_bw windows between rank 0 and 1 (1 GiB per size times SCALE, after 1 s of warm-up windows) in the job of samples/Service, " +
            "with the service idle (alone) and while 8 in-process gRPC clients call it back to back (serving); MPI at thread level Multiple, " +
            "the service on its own communicator and thread. C: bandwidth-c at the same sizes, in the same round."),
        new("service-rpc", "gRPC calls/s of samples/Service", "calls/s", true, false,
            "perf/ServiceLoad, 2 ranks: Pi calls (10000 intervals, dealt to both ranks) answered per second by 1 or 8 clients calling back to back, " +
            "with no other MPI traffic (alone, SERVICE_SECONDS each) and during the serving bandwidth phase (serving); the key is the number of clients. " +
            "Ratios refer to motor alone.", "motor-alone"),
        new("first-loop", "A user's loop from its first iteration", "µs", false, true,
            "perf/UserLoop: the osu_latency loop as a new user writes it, straight in Main with only osu_latency's 100 warm-up iterations " +
            "(the latency group's programs ping-pong for half a second first), sizes up to FIRST_LOOP_MAX_BYTES; the first size (0 B) " +
            "runs whatever code the runtime has at the first iteration. motor: its defaults (QuickJitForLoops=false); motor-qjfl: " +
            ".NET's tiering default (-p System.Runtime.TieredCompilation.QuickJitForLoops=true); motor-before: that and System.MP as plain IL " +
            "(no ReadyToRun), motor's former defaults; dotnet: library mode.",
            Versus: ("motor", "motor-before"), FirstKey: true),
        new("latency-ompi", "Point-to-point latency over Open MPI, with mpi4py", "µs", false, true,
            "As the latency group, under mpirun.openmpi: C over Open MPI, Motor on its Open MPI core (PingPong under motor) and " +
            "Debian's mpi4py (perf/mpi4py/latency.py: comm.Send/comm.Recv of NumPy uint8 arrays).", Versus: ("motor", "mpi4py")),
        new("bandwidth-ompi", "Point-to-point bandwidth over Open MPI, with mpi4py", "MB/s", true, true,
            "As the bandwidth group, under mpirun.openmpi: C over Open MPI, Motor on its Open MPI core (Bandwidth under motor) and " +
            "Debian's mpi4py (perf/mpi4py/bandwidth.py: comm.Isend/comm.Irecv of NumPy arrays, MPI.Request.Waitall).", Versus: ("motor", "mpi4py")),
        new("objects-ompi", "Object transport over Open MPI, against mpi4py (Figure 11)", "µs", false, true,
            "Figure 11 under mpirun.openmpi: the linked list of 4096 data bytes over N nodes, round trip, sent with OSend/ORecv under motor " +
            "(motor) and with mpi4py's pickle-based comm.send/comm.recv (mpi4py, the reference: perf/mpi4py/objects.py, NumPy int32 arrays " +
            "in the nodes); motor-raw and mpi4py-raw are the 4096 bytes as one array with Send/Recv in each.", "mpi4py"),
        new("latency-paired-ompi", "Point-to-point latency over Open MPI, paired blocks in one process", "µs", false, true,
            "As latency-paired, under mpirun.openmpi: Motor on its Open MPI core against Open MPI's MPI_Send/MPI_Recv called directly.", "direct"),
        new("bandwidth-paired-ompi", "Point-to-point bandwidth over Open MPI, paired blocks in one process", "MB/s", true, true,
            "As bandwidth-paired, under mpirun.openmpi: Motor on its Open MPI core against Open MPI's MPI_Isend/MPI_Irecv/MPI_Waitall called directly.", "direct"),
        new("npb-time", "NAS Parallel Benchmarks: time", "s", false, false,
            "perf/compare-npb.sh: NPB 3.4's MPI benchmarks written in C# over System.MP (perf/NPB) under motor and dotnet, against NPB's own " +
            "implementation (ref: Fortran, IS in C; gfortran/gcc -O3 over MPICH); NPB's \"Time in seconds\" of the timed region, key " +
            "benchmark.class.ranks; each run verified. The bars are C#/reference time, the median of the per-round quotients.", "ref", Bars: true),
        new("npb-mops", "NAS Parallel Benchmarks: Mop/s", "Mop/s", true, false,
            "The same runs: NPB's \"Mop/s total\" (its operation count for the class over the timed region).", "ref"),
        new("npb-memory", "NAS Parallel Benchmarks: peak memory per rank", "MiB", false, false,
            "The same runs: the largest peak resident set of a rank (ru_maxrss from /usr/bin/time: VmHWM).", "ref"),
        new("instructions", "Instructions per operation (callgrind)", "instructions", false, false,
            "perf/callgrind.sh: instructions per nonblocking operation (post plus its share of WaitAll) at the message size in the key column, " +
            "counted by valgrind's callgrind in one run (deterministic, unlike time): C calling MPI, mpcore from C (core, core+obj; core list: through its request lists), " +
            "System.MP under dotnet and motor, and the DllImport + GCHandle wrapper. The ratio to C is the one number a regression shows in."),
        new("instructions-blocking", "Instructions of a blocking receive (callgrind)", "instructions", false, false,
            "perf/callgrind.sh with CALLGRIND_CASE=blocking: per iteration, one rank's ISend to itself, a blocking Recv of that message " +
            "and the send's Wait (perf/native/blocking.c: MPI_Isend, MPI_Recv, MPI_Wait), at the message size in the key column, counted " +
            "by callgrind as the instructions group is: C calling MPI, System.MP under dotnet and motor."),
    ];

    internal string Better => HigherIsBetter ? "higher is better" : "lower is better";

    /// <summary>Keys are node counts (Figure 11), not message sizes.</summary>
    internal bool Nodes => Name.StartsWith("objects", StringComparison.Ordinal);
}

/// <summary>Values per (key, series) and round.</summary>
internal sealed class Table
{
    internal readonly List<string> Keys = [];
    internal readonly List<string> Series = [];
    private readonly Dictionary<(string Key, string Series), SortedDictionary<int, double>> _values = [];

    internal string Reference = "C";

    internal static Table Load(string dir, string reference)
    {
        var t = new Table { Reference = reference };
        // The reference first, then the others by name; rounds in numeric order.
        var files = Directory.GetFiles(dir, "*.txt").Select(f => (File: f, Name: SeriesOf(f)))
            .OrderBy(f => f.Name.Series == reference ? "" : f.Name.Series, StringComparer.Ordinal).ThenBy(f => f.Name.Round);
        foreach (var (file, (series, round)) in files)
        {
            if (!t.Series.Contains(series))
                t.Series.Add(series);
            foreach (string line in File.ReadLines(file))
            {
                string[] p = line.Split((char[]?)null, StringSplitOptions.RemoveEmptyEntries);
                if (p.Length < 2 || p[0].StartsWith('#'))
                    continue;
                string key = p.Length >= 3 ? $"{p[0]} {p[1]}" : p[0];
                if (!double.TryParse(p[^1], NumberStyles.Float, CultureInfo.InvariantCulture, out double v))
                    continue;
                if (!t.Keys.Contains(key))
                    t.Keys.Add(key);
                if (!t._values.TryGetValue((key, series), out var rounds))
                    t._values[(key, series)] = rounds = [];
                rounds[round] = v;
            }
        }
        return t;
    }

    private static (string Series, int Round) SeriesOf(string file)
    {
        string name = Path.GetFileNameWithoutExtension(file); // series.round
        int dot = name.LastIndexOf('.');
        return (name[..dot], int.Parse(name[(dot + 1)..], CultureInfo.InvariantCulture));
    }

    private static double Median(IEnumerable<double> values) => Stats.Median(values);

    internal bool TryGet(string key, string series, out double median, out double spread)
    {
        median = spread = 0;
        if (!_values.TryGetValue((key, series), out var v) || v.Count == 0)
            return false;
        median = Median(v.Values);
        spread = median == 0 ? 0 : (v.Values.Max() - v.Values.Min()) / 2 / median;
        return true;
    }

    internal int Count(string key, string series) => _values.TryGetValue((key, series), out var v) ? v.Count : 0;

    /// <summary>
    /// The median over the rounds of this series' value divided by the reference's in the
    /// same round: the rounds are interleaved, so each quotient compares runs made moments
    /// apart and drift of the machine between rounds cancels.
    /// </summary>
    internal double? Ratio(string key, string series) => Ratio(key, series, Reference);

    internal double? Ratio(string key, string series, string reference)
    {
        if (!_values.TryGetValue((key, series), out var v) || !_values.TryGetValue((key, reference), out var c))
            return null;
        var q = v.Where(r => c.TryGetValue(r.Key, out double cr) && cr > 0).Select(r => r.Value / c[r.Key]).ToArray();
        return q.Length == 0 ? null : Median(q);
    }

    internal string Csv(Group g)
    {
        var sb = new StringBuilder($"key,series,median_{Unit(g)},spread_fraction,rounds,ratio_to_{Reference}\n");
        foreach (string key in Keys)
            foreach (string s in Series)
                if (TryGet(key, s, out double m, out double spread))
                    sb.AppendLine(string.Create(CultureInfo.InvariantCulture,
                        $"{key},{s},{m:G6},{spread:F4},{Count(key, s)},{(Ratio(key, s) is double r ? r.ToString("F4", CultureInfo.InvariantCulture) : "")}"));
        return sb.ToString();
    }

    /// <summary>
    /// One line: <paramref name="mine"/> over <paramref name="theirs"/> per key (median of the
    /// per-round quotients), and the keys where <paramref name="mine"/> is not the better one.
    /// </summary>
    internal string First(Group g)
    {
        string key = Keys[0];
        var cells = Series.Where(s => s != Reference && Ratio(key, s) is not null)
                          .Select(s => string.Create(CultureInfo.InvariantCulture, $"{s} {Ratio(key, s):F3}"));
        return $"**First size ({key} {(g.Nodes ? "nodes" : "B")}), ratio to {Reference}:** {string.Join(", ", cells)}.";
    }

    internal string Versus(Group g, string mine, string theirs)
    {
        var cells = new List<string>();
        var worse = new List<string>();
        foreach (string key in Keys)
        {
            if (Ratio(key, mine, theirs) is not double r)
                continue;
            cells.Add(string.Create(CultureInfo.InvariantCulture, $"{key}: {r:F3}"));
            if (g.HigherIsBetter ? r < 1 : r > 1)
                worse.Add(key);
        }
        return $"**{mine} / {theirs}** per {(g.Nodes ? "N" : "size")} (median of the per-round quotients; " +
               $"{(g.HigherIsBetter ? "above" : "below")} 1: {mine} is better): {string.Join(", ", cells)}. " +
               (worse.Count == 0 ? $"{mine} is ahead at every {(g.Nodes ? "N" : "size")}." :
                                   $"{mine} is behind at {(g.Nodes ? "N" : "size")} {string.Join(", ", worse)}.");
    }

    private static string Unit(Group g) => g.Unit == "µs" ? "us" : g.Unit.Replace('/', 'p');

    internal string Markdown(Group g)
    {
        var sb = new StringBuilder();
        sb.Append(g.Sweep ? (g.Nodes ? "| nodes |" : "| bytes |") : "| operation |");
        foreach (string s in Series)
            sb.Append(CultureInfo.InvariantCulture, $" {s} ({g.Unit}) |");
        sb.AppendLine().Append("|---|");
        foreach (string _ in Series)
            sb.Append("---:|");
        sb.AppendLine();
        foreach (string key in Keys)
        {
            sb.Append(CultureInfo.InvariantCulture, $"| {key} |");
            foreach (string s in Series)
            {
                if (!TryGet(key, s, out double m, out double spread))
                {
                    sb.Append(" – |");
                    continue;
                }
                string ratio = s != Reference && Ratio(key, s) is double r ? string.Create(CultureInfo.InvariantCulture, $" ({r:F3})") : "";
                sb.Append(CultureInfo.InvariantCulture, $" {m:G4} ±{spread * 100:F0}%{ratio} |");
            }
            sb.AppendLine();
        }
        sb.AppendLine().AppendLine(CultureInfo.InvariantCulture, $"_{g.Unit}, {g.Better}._");
        return sb.ToString();
    }
}

/// <summary>A log-log line plot as plain SVG (one line per series).</summary>
internal static class Plot
{
    private static readonly string[] Colors = ["#000000", "#d62728", "#1f77b4", "#2ca02c", "#9467bd", "#ff7f0e"];

    internal static string Svg(Group g, Table t)
    {
        const double W = 720, H = 460, L = 70, R = 150, T = 30, B = 50;
        var pts = new Dictionary<string, List<(double X, double Y)>>();
        foreach (string s in t.Series)
        {
            var list = new List<(double, double)>();
            foreach (string key in t.Keys)
                if (double.TryParse(key, NumberStyles.Float, CultureInfo.InvariantCulture, out double x) && x > 0 &&
                    t.TryGet(key, s, out double y, out _) && y > 0)
                    list.Add((x, y));
            pts[s] = list;
        }
        var all = pts.Values.SelectMany(v => v).ToArray();
        if (all.Length == 0)
            return "<svg xmlns=\"http://www.w3.org/2000/svg\"/>";
        double x0 = Math.Floor(Math.Log2(all.Min(p => p.X))), x1 = Math.Ceiling(Math.Log2(all.Max(p => p.X)));
        double y0 = Math.Floor(Math.Log10(all.Min(p => p.Y))), y1 = Math.Ceiling(Math.Log10(all.Max(p => p.Y)));
        if (x1 <= x0) x1 = x0 + 1;
        if (y1 <= y0) y1 = y0 + 1;
        double Px(double x) => L + (Math.Log2(x) - x0) / (x1 - x0) * (W - L - R);
        double Py(double y) => H - B - (Math.Log10(y) - y0) / (y1 - y0) * (H - T - B);
        var sb = new StringBuilder();
        var inv = CultureInfo.InvariantCulture;
        sb.AppendLine(inv, $"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{W}\" height=\"{H}\" font-family=\"sans-serif\" font-size=\"12\">");
        sb.AppendLine(inv, $"<rect width=\"{W}\" height=\"{H}\" fill=\"white\"/>");
        sb.AppendLine(inv, $"<text x=\"{L}\" y=\"18\" font-size=\"14\">{g.Title} ({g.Unit}, {g.Better}; log-log)</text>");
        for (double e = x0; e <= x1; e += Math.Max(1, Math.Round((x1 - x0) / 8)))
        {
            double x = Px(Math.Pow(2, e));
            sb.AppendLine(inv, $"<line x1=\"{x:F1}\" y1=\"{T}\" x2=\"{x:F1}\" y2=\"{H - B}\" stroke=\"#ddd\"/>");
            sb.AppendLine(inv, $"<text x=\"{x:F1}\" y=\"{H - B + 16}\" text-anchor=\"middle\">{Bytes(Math.Pow(2, e))}</text>");
        }
        for (double e = y0; e <= y1; e++)
        {
            double y = Py(Math.Pow(10, e));
            sb.AppendLine(inv, $"<line x1=\"{L}\" y1=\"{y:F1}\" x2=\"{W - R}\" y2=\"{y:F1}\" stroke=\"#ddd\"/>");
            sb.AppendLine(inv, $"<text x=\"{L - 6}\" y=\"{y + 4:F1}\" text-anchor=\"end\">{Math.Pow(10, e):G4}</text>");
        }
        sb.AppendLine(inv, $"<text x=\"{(L + W - R) / 2}\" y=\"{H - 12}\" text-anchor=\"middle\">{(g.Nodes ? "nodes" : "message size")}</text>");
        int i = 0;
        foreach (var (s, list) in pts)
        {
            string color = Colors[i % Colors.Length];
            if (list.Count > 0)
            {
                string path = string.Join(" ", list.Select(p => string.Create(inv, $"{Px(p.X):F1},{Py(p.Y):F1}")));
                sb.AppendLine(inv, $"<polyline fill=\"none\" stroke=\"{color}\" stroke-width=\"2\" points=\"{path}\"/>");
            }
            double ly = T + 20 + i * 20;
            sb.AppendLine(inv, $"<line x1=\"{W - R + 15}\" y1=\"{ly}\" x2=\"{W - R + 40}\" y2=\"{ly}\" stroke=\"{color}\" stroke-width=\"2\"/>");
            sb.AppendLine(inv, $"<text x=\"{W - R + 46}\" y=\"{ly + 4}\">{s}</text>");
            i++;
        }
        sb.AppendLine("</svg>");
        return sb.ToString();
    }

    /// <summary>Grouped bars, one group per key, one bar per series: its time relative to the reference's (1 = as fast).</summary>
    internal static string Bars(Group g, Table t)
    {
        const double W = 720, H = 400, L = 60, R = 130, T = 40, B = 60;
        var inv = CultureInfo.InvariantCulture;
        var ratios = new List<(string Key, string Series, double Ratio)>();
        foreach (string key in t.Keys)
            foreach (string s in t.Series)
                if ((s == t.Reference ? 1.0 : t.Ratio(key, s)) is double r && t.Count(key, s) > 0)
                    ratios.Add((key, s, r));
        double top = Math.Max(1.2, Math.Ceiling(ratios.Select(r => r.Ratio).DefaultIfEmpty(1).Max() * 5) / 5);
        double Py(double y) => H - B - y / top * (H - T - B);
        double groupWidth = (W - L - R) / Math.Max(1, t.Keys.Count), barWidth = groupWidth * 0.8 / Math.Max(1, t.Series.Count);
        var sb = new StringBuilder();
        sb.AppendLine(inv, $"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{W}\" height=\"{H}\" font-family=\"sans-serif\" font-size=\"12\">");
        sb.AppendLine(inv, $"<rect width=\"{W}\" height=\"{H}\" fill=\"white\"/>");
        sb.AppendLine(inv, $"<text x=\"{L}\" y=\"18\" font-size=\"14\">{g.Title}: time relative to {t.Reference} (lower is better)</text>");
        for (double y = 0; y <= top + 1e-9; y += 0.2)
        {
            sb.AppendLine(inv, $"<line x1=\"{L}\" y1=\"{Py(y):F1}\" x2=\"{W - R}\" y2=\"{Py(y):F1}\" stroke=\"{(Math.Abs(y - 1) < 1e-9 ? "#888" : "#ddd")}\"/>");
            sb.AppendLine(inv, $"<text x=\"{L - 6}\" y=\"{Py(y) + 4:F1}\" text-anchor=\"end\">{y:F1}</text>");
        }
        for (int k = 0; k < t.Keys.Count; k++)
        {
            double x0 = L + k * groupWidth + groupWidth * 0.1;
            sb.AppendLine(inv, $"<text x=\"{x0 + groupWidth * 0.4:F1}\" y=\"{H - B + 16}\" text-anchor=\"middle\">{t.Keys[k]}</text>");
            for (int i = 0; i < t.Series.Count; i++)
            {
                var hit = ratios.FirstOrDefault(r => r.Key == t.Keys[k] && r.Series == t.Series[i]);
                if (hit.Series is null)
                    continue;
                double x = x0 + i * barWidth;
                sb.AppendLine(inv, $"<rect x=\"{x:F1}\" y=\"{Py(hit.Ratio):F1}\" width=\"{barWidth * 0.9:F1}\" height=\"{Py(0) - Py(hit.Ratio):F1}\" fill=\"{Colors[i % Colors.Length]}\"/>");
                sb.AppendLine(inv, $"<text x=\"{x + barWidth * 0.45:F1}\" y=\"{Py(hit.Ratio) - 3:F1}\" text-anchor=\"middle\" font-size=\"10\">{hit.Ratio:F2}</text>");
            }
        }
        for (int i = 0; i < t.Series.Count; i++)
        {
            double ly = T + 20 + i * 20;
            sb.AppendLine(inv, $"<rect x=\"{W - R + 15}\" y=\"{ly - 8}\" width=\"20\" height=\"12\" fill=\"{Colors[i % Colors.Length]}\"/>");
            sb.AppendLine(inv, $"<text x=\"{W - R + 40}\" y=\"{ly + 3}\">{t.Series[i]}</text>");
        }
        sb.AppendLine("</svg>");
        return sb.ToString();
    }

    private static string Bytes(double b) => b >= 1 << 20 ? $"{b / (1 << 20):G3}M" : b >= 1024 ? $"{b / 1024:G3}K" : $"{b:G3}";
}
