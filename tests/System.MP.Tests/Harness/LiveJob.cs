using System.Diagnostics;
using System.Globalization;
using System.Text;
using System.Text.RegularExpressions;
using Scenarios;
using Xunit;

namespace System.MP.Tests;

/// <summary>
/// A 2-rank job whose output is read while it runs: the fault scenarios (tests/Scenarios/Failures/DyingRanks.cs)
/// print "READY rank R pid P" on each rank and then wait, so a test can kill a rank, cancel the
/// job or take its cluster down while every rank is blocked in MPI.  Killed with its whole process
/// tree on dispose, whatever the test did.
/// </summary>
internal sealed class LiveJob : IDisposable
{
    private readonly Process _process;
    private readonly StringBuilder _output = new();
    private readonly Dictionary<int, int> _ready = [];
    private readonly ManualResetEventSlim _allReady = new();

    /// <summary>Starts <paramref name="file"/> with <paramref name="arguments"/>; Open MPI's root settings are always in its environment.</summary>
    internal LiveJob(string file, string arguments, IDictionary<string, string>? env = null)
    {
        var psi = new ProcessStartInfo(file, arguments)
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
        };
        foreach (var (k, v) in Job.OpenMpiEnvironment)
            psi.Environment[k] = v;
        if (env is not null)
            foreach (var (k, v) in env)
                psi.Environment[k] = v;
        _process = new Process { StartInfo = psi };
        _process.OutputDataReceived += (_, e) => Line(e.Data);
        _process.ErrorDataReceived += (_, e) => Line(e.Data);
        _process.Start();
        _process.BeginOutputReadLine();
        _process.BeginErrorReadLine();
    }

    /// <summary>A scenario of the Scenarios program on 2 ranks, started by MPICH's or Open MPI's launcher.</summary>
    internal static LiveJob Scenario(Scenario scenario, bool hosted, bool openMpi)
    {
        string launch = $"{Launch(hosted)} {scenario.Name()}";
        return openMpi
            ? new LiveJob(Job.OpenMpiLauncher, $"--oversubscribe -n 2 {launch}")
            : new LiveJob(Job.MpichLauncher, $"-n 2 {launch}");
    }

    /// <summary>The command line that runs the Scenarios program on one rank: under motor, or dotnet (library mode).</summary>
    internal static string Launch(bool hosted) => hosted ? $"{Job.Motor} {Job.ScenariosProgram}" : $"dotnet {Job.ScenariosProgram}";

    private void Line(string? line)
    {
        if (line is null)
            return;
        lock (_output)
        {
            _output.AppendLine(line);
            Match m = Regex.Match(line, @"READY rank (\d) pid (\d+)");
            if (m.Success)
                _ready[int.Parse(m.Groups[1].Value, CultureInfo.InvariantCulture)] = int.Parse(m.Groups[2].Value, CultureInfo.InvariantCulture);
            if (_ready.Count == 2)
                _allReady.Set();
        }
    }

    internal string Output
    {
        get
        {
            lock (_output)
                return _output.ToString();
        }
    }

    internal int ExitCode => _process.ExitCode;

    /// <summary>The pid of each rank once both have said READY.</summary>
    internal Dictionary<int, int> WaitReady()
    {
        Assert.True(_allReady.Wait(TimeSpan.FromSeconds(60)), $"the ranks did not get ready:\n{Output}");
        lock (_output)
            return new Dictionary<int, int>(_ready);
    }

    internal bool WaitExit(int seconds)
    {
        if (!_process.WaitForExit(seconds * 1000))
            return false;
        _process.WaitForExit(); // the output readers are done too
        return true;
    }

    /// <summary>Whether a process is alive (a zombie is not: it has ended and waits for its parent).</summary>
    internal static bool Running(int pid) =>
        Directory.Exists($"/proc/{pid}") && !File.ReadAllText($"/proc/{pid}/stat").Contains(") Z ", StringComparison.Ordinal);

    /// <summary>
    /// Asserts that none of <paramref name="pids"/> (named by the keys) is running 10 s after the
    /// job ended: the launcher may exit as it sends the last kill, so only what is still there
    /// then is left behind.
    /// </summary>
    internal void AssertNoneLeft<TKey>(Dictionary<TKey, int> pids) where TKey : notnull
    {
        var clock = Stopwatch.StartNew();
        while (pids.Values.Any(Running) && clock.Elapsed < TimeSpan.FromSeconds(10))
            Thread.Sleep(50);
        foreach (var (name, pid) in pids)
            Assert.False(Running(pid), $"{(name is int rank ? $"rank {rank}" : name)} (pid {pid}) is still running 10 s after the job ended:\n{Output}");
    }

    public void Dispose()
    {
        if (!_process.HasExited)
            _process.Kill(entireProcessTree: true);
        _process.Dispose();
        _allReady.Dispose();
    }
}
