using System.Globalization;
using System.Text.RegularExpressions;
using System.Xml.Linq;
using Xunit;

namespace System.MP.Tests;

/// <summary>
/// The benchmark suite (`./build.sh bench`, perf/bench.sh + perf/Report) in a quick pass:
/// every series runs, and the CSV files, plots and summary it writes hold what
/// perf/README.md says they hold.  Checks structure and arithmetic, never speed.
/// </summary>
public class BenchSuiteTests : IDisposable
{
    private const int Rounds = 2;
    private const int MaxBytes = 4096;
    private readonly string _out = Path.Combine(Path.GetTempPath(), $"motor-bench-{Guid.NewGuid():N}");
    private static readonly CultureInfo Inv = CultureInfo.InvariantCulture;

    public void Dispose()
    {
        if (Directory.Exists(_out))
            Directory.Delete(_out, recursive: true);
    }

    [Fact]
    public void AQuickPassWritesEveryTablePlotAndTheSummary()
    {
        Job.Result r = Job.Run("/bin/bash", $"{Path.Combine(Job.Root, "perf", "bench.sh")} {_out}", 600, new Dictionary<string, string>
        {
            ["ROUNDS"] = Rounds.ToString(Inv),
            ["SCALE"] = "0.01",
            ["BW_SCALE"] = "0.01",
            ["MAX_BYTES"] = MaxBytes.ToString(Inv),
            ["OBJECT_ARGS"] = "64 1 2",
            ["MICRO_JOB"] = "dry",
        });
        Assert.True(r.ExitCode == 0, r.ToString());

        // Size sweeps: every series measured every size C was, powers of two up to MAX_BYTES.
        string[] p2p = ["C", "motor", "dotnet", "wrapper"];
        var sizes = Enumerable.Range(0, 13).Select(i => (1 << i).ToString(Inv)).ToArray();
        CheckTable("latency", "us", "C", p2p, ["0", .. sizes]);
        CheckTable("bandwidth", "MBps", "C", p2p, sizes);
        CheckTable("collectives", "us", "C", ["C", "motor", "dotnet"], ["allreduce 8", "bcast 1048576", "alltoall 4096"]);
        CheckTable("objects", "us", "raw", ["raw", "objects", "json", "mempack", "mprobe"], ["1", "2", "4", "8", "16", "32", "64"]);

        foreach (var (plot, series) in new[] { ("latency", p2p), ("bandwidth", p2p), ("objects", ["raw", "objects", "json", "mempack", "mprobe"]) })
        {
            XDocument svg = XDocument.Load(Path.Combine(_out, plot + ".svg"));
            Assert.Equal("svg", svg.Root!.Name.LocalName);
            var lines = svg.Descendants().Where(e => e.Name.LocalName == "polyline").ToList();
            Assert.Equal(series.Length, lines.Count);
            foreach (XElement line in lines)
                Assert.True(line.Attribute("points")!.Value.Split(' ', StringSplitOptions.RemoveEmptyEntries).Length >= 2, $"{plot}.svg: a series with fewer than 2 points");
            foreach (string s in series)
                Assert.Contains(svg.Descendants(), e => e.Name.LocalName == "text" && e.Value == s);
        }

        string summary = File.ReadAllText(Path.Combine(_out, "summary.md"));
        foreach (string section in new[] { "## Point-to-point latency", "## Point-to-point bandwidth", "## Collectives",
                                           "## Object transport (Motor Figure 11)", "## Micro-benchmarks (BenchmarkDotNet)" })
            Assert.Contains(section, summary);
        Assert.Contains($"{Rounds} interleaved rounds per series", summary);
        foreach (string benchmark in new[] { "fn ptr + SuppressGCTransition (System.MP fast call)", "DllImport",
                                             "ISend + Wait (Request, GCHandle in library mode)", "OISend to self + ORecv (4 KiB of ints over N nodes)" })
            Assert.Matches(@"(?m)^\|\s*(\*\*)?" + Regex.Escape(benchmark) + @"(\*\*)?\s*\|", summary);   // ** marks a parameterized row
        Assert.DoesNotContain("&#39;", summary);
    }

    /// <summary>
    /// A group's CSV: one row per (key, series), the medians positive, each series' keys
    /// those expected, and every ratio the median over the rounds of the series' value over
    /// the reference's in the same round (from the raw files the runs wrote).
    /// </summary>
    private void CheckTable(string group, string unit, string reference, string[] series, string[] keys)
    {
        string[] lines = File.ReadAllLines(Path.Combine(_out, group + ".csv"));
        Assert.Equal($"key,series,median_{unit},spread_fraction,rounds,ratio_to_{reference}", lines[0]);
        var rows = lines.Skip(1).Select(l => l.Split(',')).ToList();
        Assert.All(rows, f => Assert.Equal(6, f.Length));
        foreach (string s in series)
            Assert.Equal(keys.Order(), rows.Where(f => f[1] == s).Select(f => f[0]).Order());
        Assert.Equal(series.Length * keys.Length, rows.Count);

        foreach (string[] f in rows)
        {
            double median = double.Parse(f[2], Inv), spread = double.Parse(f[3], Inv), ratio = double.Parse(f[5], Inv);
            Assert.True(median > 0 && double.IsFinite(median), $"{group}: {string.Join(',', f)}");
            Assert.True(spread >= 0, $"{group}: {string.Join(',', f)}");
            Assert.Equal(Rounds.ToString(Inv), f[4]);
            double[] quotients = Enumerable.Range(1, Rounds).Select(r => Raw(group, f[1], r, f[0]) / Raw(group, reference, r, f[0])).Order().ToArray();
            double expected = (quotients[0] + quotients[1]) / 2;   // the median of Rounds = 2 quotients
            Assert.True(Math.Abs(ratio - expected) <= 1e-4 + 1e-6 * expected, $"{group}: ratio {ratio}, raw runs say {expected}: {string.Join(',', f)}");
            double mean = (Raw(group, f[1], 1, f[0]) + Raw(group, f[1], 2, f[0])) / 2;   // the median of 2 rounds, printed to 6 digits
            Assert.True(Math.Abs(median - mean) <= 1e-5 * mean, $"{group}: median {median}, raw runs say {mean}: {string.Join(',', f)}");
        }
    }

    /// <summary>The value one run printed for a key (rows "key value" or "name bytes value").</summary>
    private double Raw(string group, string series, int round, string key) =>
        File.ReadLines(Path.Combine(_out, "raw", group, $"{series}.{round}.txt"))
            .Select(l => l.Split((char[]?)null, StringSplitOptions.RemoveEmptyEntries))
            .Where(p => p.Length >= 2 && !p[0].StartsWith('#') && string.Join(' ', p[..^1]) == key)
            .Select(p => double.Parse(p[^1], Inv)).Single();
}
