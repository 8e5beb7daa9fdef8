// Where a phase's processor time goes: this process's threads' CPU time (user + system,
// from /proc/self/task/*/stat) summed by thread name, over the phases of one kind.
using System.Globalization;

/// <summary>CPU time by thread name over phases of one kind (Linux).</summary>
internal sealed class ThreadCpu(string kind)
{
    private static readonly double TickSeconds = 1.0 / 100; // USER_HZ
    private readonly Dictionary<string, long> _ticks = [];
    private Dictionary<int, (string Name, long Ticks)> _start = [];
    private double _startTime, _wall;

    /// <summary>Starts a phase.</summary>
    public void Begin()
    {
        _start = Read();
        _startTime = System.MP.Mpi.Wtime();
    }

    /// <summary>Ends the phase begun last: adds each thread's CPU time since then to its name's.</summary>
    public void End()
    {
        _wall += System.MP.Mpi.Wtime() - _startTime;
        foreach (var (tid, (name, ticks)) in Read())
        {
            long before = _start.TryGetValue(tid, out var s) ? s.Ticks : 0;
            _ticks[name] = _ticks.GetValueOrDefault(name) + ticks - before;
        }
    }

    /// <summary>"cpu KIND rankR NAME=PCT; ..." with each name's CPU time in percent of one core over the phases' wall time, largest first.</summary>
    public string Report(int rank)
    {
        var parts = new List<string>();
        double total = 0;
        foreach (var (name, ticks) in _ticks.OrderByDescending(p => p.Value))
        {
            double pct = ticks * TickSeconds / Math.Max(_wall, 1e-9) * 100;
            total += pct;
            if (pct >= 0.5)
                parts.Add(string.Create(CultureInfo.InvariantCulture, $"{name}={pct:F0}%"));
        }
        return string.Create(CultureInfo.InvariantCulture, $"cpu {kind} rank{rank} wall={_wall:F1}s total={total:F0}%; ") + string.Join("; ", parts);
    }

    private static Dictionary<int, (string, long)> Read()
    {
        var all = new Dictionary<int, (string, long)>();
        foreach (string dir in Directory.EnumerateDirectories("/proc/self/task"))
        {
            string stat;
            try
            {
                stat = File.ReadAllText(Path.Combine(dir, "stat"));
            }
            catch (IOException)
            {
                continue; // the thread ended meanwhile
            }
            // pid (comm) state ... : comm may hold spaces and parentheses, so split at the last ')'.
            int open = stat.IndexOf('('), close = stat.LastIndexOf(')');
            string[] rest = stat[(close + 2)..].Split(' ');
            long ticks = long.Parse(rest[11], CultureInfo.InvariantCulture) + long.Parse(rest[12], CultureInfo.InvariantCulture); // utime, stime
            int tid = int.Parse(Path.GetFileName(dir), CultureInfo.InvariantCulture);
            all[tid] = (tid == Environment.ProcessId ? "main thread" : stat[(open + 1)..close], ticks);
        }
        return all;
    }
}
