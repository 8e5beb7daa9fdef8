using System.Globalization;
using System.Text.RegularExpressions;
using System.Xml.Linq;

// The bench-smoke suite of `./build.sh test`: after a quick pass of the benchmark suite
// (perf/bench.sh, run by build.sh with Open MPI's launcher first on PATH as mpiexec), checks
// that every series ran and that the CSV files, plots and summary it wrote hold what
// perf/README.md says they hold.  Checks structure and arithmetic, never speed.
//
//   BenchSmoke OUT_DIR ROUNDS MAX_BYTES      (the ROUNDS and MAX_BYTES bench.sh ran with)
if (args.Length != 3 || !int.TryParse(args[1], out int rounds) || rounds != 2 || !int.TryParse(args[2], out int maxBytes))
{
    Console.Error.WriteLine("usage: BenchSmoke OUT_DIR 2 MAX_BYTES (the medians checked are those of 2 rounds)");
    return 2;
}
var bench = new BenchOutput(args[0], rounds);
try
{
    // Size sweeps: every series measured every size C was, powers of two up to MAX_BYTES.
    string[] p2p = ["C", "motor", "dotnet", "wrapper", "C-net", "motor-pinned"];
    string[] objects = ["raw", "objects", "json", "mempack", "mprobe"];
    string[] sizes = [.. Enumerable.Range(0, 31).Select(i => 1L << i).TakeWhile(s => s <= maxBytes).Select(s => s.ToString(CultureInfo.InvariantCulture))];
    bench.CheckTable("latency", "us", "C", p2p, ["0", .. sizes]);
    bench.CheckTable("latency-paired", "us", "direct", ["direct", "motor"], ["0", .. sizes]);
    string[] bandwidth = [.. p2p, "motor-list"];
    bench.CheckTable("bandwidth", "MBps", "C", bandwidth, sizes);
    bench.CheckTable("bandwidth-paired", "MBps", "direct", ["direct", "motor", "motor-list"], sizes);
    string[] rateSizes = [.. sizes.TakeWhile(s => long.Parse(s, CultureInfo.InvariantCulture) <= 4096)];
    bench.CheckTable("message-rate", "msgps", "direct", ["direct", "motor", "motor-span", "motor-list"], rateSizes);
    bench.CheckTable("message-rate-core", "msgps", "direct", ["direct", "core", "core-list"], rateSizes);
    bench.CheckTable("message-rate-await", "msgps", "direct", ["direct", "motor-await"], rateSizes);
    bench.CheckTable("collectives", "us", "C", ["C", "motor", "dotnet"], ["allreduce 8", "bcast 1048576", "alltoall 4096"]);
    bench.CheckTable("objects", "us", "raw", objects, ["1", "2", "4", "8", "16", "32", "64"]);
    bench.CheckTable("objects-steady", "us", "raw", ["raw", "motor", "motor-netgen0", "dotnet"], ["1-node list"]);
    // Bandwidth beside the gRPC service: sizes up to MAX_BYTES of 8 KiB, 64 KiB, 1 MiB, else MAX_BYTES alone.
    string[] serviceSizes = [.. new[] { 8192, 65536, 1 << 20 }.Where(s => s <= maxBytes).Select(s => s.ToString(CultureInfo.InvariantCulture))];
    bench.CheckTable("service-bw", "MBps", "C", ["C", "motor-alone", "motor-serving", "dotnet-alone", "dotnet-serving"],
                     serviceSizes.Length > 0 ? serviceSizes : [maxBytes.ToString(CultureInfo.InvariantCulture)]);
    // The user's loop (sizes up to FIRST_LOOP_MAX_BYTES, 1024 unless the pass asks for less) and
    // the Open MPI groups beside Debian's mpi4py.
    string[] firstSizes = ["0", .. sizes.TakeWhile(s => long.Parse(s, CultureInfo.InvariantCulture) <= 1024)];
    bench.CheckTable("first-loop", "us", "C", ["C", "motor", "motor-qjfl", "motor-before", "dotnet"], firstSizes);
    bench.CheckTable("latency-ompi", "us", "C", ["C", "motor", "mpi4py"], ["0", .. sizes]);
    bench.CheckTable("bandwidth-ompi", "MBps", "C", ["C", "motor", "mpi4py"], sizes);
    bench.CheckTable("latency-paired-ompi", "us", "direct", ["direct", "motor"], ["0", .. sizes]);
    bench.CheckTable("bandwidth-paired-ompi", "MBps", "direct", ["direct", "motor", "motor-list"], sizes);
    bench.CheckTable("objects-ompi", "us", "mpi4py", ["mpi4py", "motor", "mpi4py-raw", "motor-raw"], ["1", "2", "4", "8", "16", "32", "64"]);
    bench.CheckInstructions("instructions", ["C", "core", "core-list"]);   // build.sh runs these three: valgrind starts a managed series slowly
    bench.CheckInstructions("instructions-blocking", ["C", "motor"]);
    bench.CheckPlot("latency", p2p);
    bench.CheckPlot("latency-paired", ["direct", "motor"]);
    bench.CheckPlot("bandwidth", bandwidth);
    bench.CheckPlot("bandwidth-paired", ["direct", "motor", "motor-list"]);
    bench.CheckPlot("message-rate", ["direct", "motor", "motor-span", "motor-list"]);
    bench.CheckPlot("message-rate-core", ["direct", "core", "core-list"]);
    bench.CheckPlot("message-rate-await", ["direct", "motor-await"]);
    bench.CheckPlot("objects", objects);
    bench.CheckPlot("first-loop", ["C", "motor", "motor-qjfl", "motor-before", "dotnet"]);
    bench.CheckPlot("objects-ompi", ["mpi4py", "motor", "mpi4py-raw", "motor-raw"]);
    bench.CheckSummary();
}
catch (BenchOutput.CheckFailed e)
{
    Console.WriteLine($"FAIL bench-smoke: {e.Message}");
    return 1;
}
Console.WriteLine($"PASS bench-smoke ({bench.Checks} checks)");
return 0;

/// <summary>What one run of perf/bench.sh wrote into its output folder.</summary>
internal sealed class BenchOutput(string dir, int rounds)
{
    private static readonly CultureInfo Inv = CultureInfo.InvariantCulture;

    internal sealed class CheckFailed(string message) : Exception(message);

    internal int Checks { get; private set; }

    private void Expect(bool condition, string what)
    {
        if (!condition)
            throw new CheckFailed(what);
        Checks++;
    }

    /// <summary>
    /// A group's CSV: one row per (key, series), the medians positive, each series' keys
    /// those expected, and every ratio the median over the rounds of the series' value over
    /// the reference's in the same round (from the raw files the runs wrote).
    /// </summary>
    internal void CheckTable(string group, string unit, string reference, string[] series, string[] keys)
    {
        string[] lines = File.ReadAllLines(Path.Combine(dir, group + ".csv"));
        Expect(lines[0] == $"key,series,median_{unit},spread_fraction,rounds,ratio_to_{reference}", $"{group}.csv header: {lines[0]}");
        var rows = lines.Skip(1).Select(l => l.Split(',')).ToList();
        Expect(rows.All(f => f.Length == 6), $"{group}.csv: a row without 6 fields");
        foreach (string s in series)
        {
            string[] got = [.. rows.Where(f => f[1] == s).Select(f => f[0]).Order(StringComparer.Ordinal)];
            Expect(got.SequenceEqual(keys.Order(StringComparer.Ordinal)), $"{group}.csv: series {s} has keys [{string.Join(", ", got)}], expected [{string.Join(", ", keys)}]");
        }
        Expect(rows.Count == series.Length * keys.Length, $"{group}.csv: {rows.Count} rows, expected {series.Length * keys.Length}");

        foreach (string[] f in rows)
        {
            string row = $"{group}: {string.Join(',', f)}";
            double median = double.Parse(f[2], Inv), spread = double.Parse(f[3], Inv), ratio = double.Parse(f[5], Inv);
            Expect(median > 0 && double.IsFinite(median), $"{row}: median");
            Expect(spread >= 0, $"{row}: spread");
            Expect(f[4] == rounds.ToString(Inv), $"{row}: rounds");
            double[] quotients = [.. Enumerable.Range(1, rounds).Select(r => Raw(group, f[1], r, f[0]) / Raw(group, reference, r, f[0])).Order()];
            double expected = (quotients[0] + quotients[1]) / 2;   // the median of 2 quotients
            Expect(Math.Abs(ratio - expected) <= 1e-4 + 1e-6 * expected, $"{row}: ratio {ratio}, raw runs say {expected}");
            double mean = (Raw(group, f[1], 1, f[0]) + Raw(group, f[1], 2, f[0])) / 2;   // the median of 2 rounds, printed to 6 digits
            Expect(Math.Abs(median - mean) <= 1e-5 * mean, $"{row}: median {median}, raw runs say {mean}");
        }
    }

    /// <summary>
    /// GROUP.csv of an instructions group (perf/callgrind.sh, one deterministic run): per series
    /// one row at 8 B, a count above zero, and the ratio to C exactly the quotient of the two counts.
    /// </summary>
    internal void CheckInstructions(string group, string[] series)
    {
        string csv = group + ".csv";
        string[] lines = File.ReadAllLines(Path.Combine(dir, csv));
        Expect(lines[0] == "key,series,median_instructions,spread_fraction,rounds,ratio_to_C", $"{csv} header: {lines[0]}");
        var rows = lines.Skip(1).Select(l => l.Split(',')).ToDictionary(f => f[1], f => f);
        Expect(rows.Count == series.Length && series.All(rows.ContainsKey), $"{csv}: series [{string.Join(", ", rows.Keys)}]");
        double c = double.Parse(rows["C"][2], Inv);
        foreach (string s in series)
        {
            string[] f = rows[s];
            double ir = double.Parse(f[2], Inv);
            Expect(f[0] == "8" && f[4] == "1", $"{csv}: {string.Join(',', f)}: key 8 and one run");
            Expect(ir > 0 && double.IsFinite(ir) && ir == Raw(group, s, 1, "8"), $"{csv}: {s} {ir}");
            Expect(Math.Abs(double.Parse(f[5], Inv) - ir / c) <= 1e-4, $"{csv}: {s} ratio {f[5]}, expected {ir / c:F4}");
        }
        // C calls MPI alone; the core and System.MP only add to it.
        Expect(series.Where(s => s != "C").All(s => double.Parse(rows[s][2], Inv) > c), $"{csv}: a series below C");
    }

    /// <summary>A log-log plot: one polyline of at least 2 points per series, each series labelled.</summary>
    internal void CheckPlot(string plot, string[] series)
    {
        XDocument svg = XDocument.Load(Path.Combine(dir, plot + ".svg"));
        Expect(svg.Root!.Name.LocalName == "svg", $"{plot}.svg is not an SVG document");
        var lines = svg.Descendants().Where(e => e.Name.LocalName == "polyline").ToList();
        Expect(lines.Count == series.Length, $"{plot}.svg: {lines.Count} series, expected {series.Length}");
        foreach (XElement line in lines)
            Expect(line.Attribute("points")!.Value.Split(' ', StringSplitOptions.RemoveEmptyEntries).Length >= 2, $"{plot}.svg: a series with fewer than 2 points");
        foreach (string s in series)
            Expect(svg.Descendants().Any(e => e.Name.LocalName == "text" && e.Value == s), $"{plot}.svg: no label '{s}'");
    }

    /// <summary>summary.md: every section, the rounds, the micro-benchmarks' rows, no HTML escapes.</summary>
    internal void CheckSummary()
    {
        string summary = File.ReadAllText(Path.Combine(dir, "summary.md"));
        foreach (string section in new[] { "## Point-to-point latency", "## Point-to-point latency, paired blocks in one process", "## Point-to-point bandwidth", "## Point-to-point bandwidth, paired blocks in one process",
                                           "## Message rate, paired blocks in one process", "## Message rate with awaits, paired blocks in one process", "## Collectives",
                                           "## Object transport (Motor Figure 11)", "## Micro-benchmarks (BenchmarkDotNet)",
                                           "## Instructions per operation (callgrind)", "## MPI bandwidth beside a gRPC service",
                                           "## gRPC calls/s of samples/Service", "## A user's loop from its first iteration",
                                           "## Point-to-point latency over Open MPI, with mpi4py", "## Point-to-point bandwidth over Open MPI, with mpi4py",
                                           "## Point-to-point latency over Open MPI, paired blocks in one process",
                                           "## Point-to-point bandwidth over Open MPI, paired blocks in one process",
                                           "## Object transport over Open MPI, against mpi4py (Figure 11)" })
            Expect(summary.Contains(section, StringComparison.Ordinal), $"summary.md: no section '{section}'");
        Expect(summary.Contains($"{rounds} interleaved rounds per series", StringComparison.Ordinal), "summary.md: the number of rounds");
        foreach (string benchmark in new[] { "fn ptr + SuppressGCTransition (System.MP fast call)", "DllImport",
                                             "ISend + Wait (Request, GCHandle in library mode)", "OISend to self + ORecv (4 KiB of ints over N nodes)" })
            // ** marks a parameterized row, whose parameter cell comes before the mean; a benchmark that threw has NA for its mean
            Expect(Regex.IsMatch(summary, @"(?m)^\|\s*(\*\*)?" + Regex.Escape(benchmark) + @"(\*\*)?\s*\|(\s*(\*\*)?\d+(\*\*)?\s*\|)?\s*(\*\*)?\d[\d,.]*\s*(ns|μs|us|ms|s)(\*\*)?\s*\|"),
                   $"summary.md: no row '{benchmark}' with a mean time");
        Expect(!summary.Contains("&#39;", StringComparison.Ordinal), "summary.md: an HTML-escaped quote");
        Expect(Regex.IsMatch(summary, @"\*\*First size \(0 B\), ratio to C:\*\* dotnet \d+\.\d{3}, motor \d+\.\d{3}, motor-before \d+\.\d{3}, motor-qjfl \d+\.\d{3}\."),
               "summary.md: no first-size line for first-loop");
        foreach (string g in new[] { "motor / motor-before", "motor / mpi4py" })
            Expect(summary.Contains($"**{g}** per size", StringComparison.Ordinal), $"summary.md: no '{g}' line");
    }

    /// <summary>The value one run printed for a key (rows "key value" or "name bytes value").</summary>
    private double Raw(string group, string series, int round, string key) =>
        File.ReadLines(Path.Combine(dir, "raw", group, $"{series}.{round}.txt"))
            .Select(l => l.Split((char[]?)null, StringSplitOptions.RemoveEmptyEntries))
            .Where(p => p.Length >= 2 && !p[0].StartsWith('#') && string.Join(' ', p[..^1]) == key)
            .Select(p => double.Parse(p[^1], Inv)).Single();
}
