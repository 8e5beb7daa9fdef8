using System.Diagnostics;
using System.Globalization;
using System.Text;
using System.Text.RegularExpressions;
using Scenarios;
using Xunit;
using Xunit.Abstractions;

namespace System.MP.Tests;

/// <summary>
/// A rank that dies ends the whole job, with a non-zero exit, no process left behind, and the
/// launcher's word on which rank failed and how: rank 1 killed with SIGKILL while every rank
/// waits for it in a receive, a collective or a window of nonblocking operations
/// (tests/Scenarios/Faults.cs), or rank 1 leaving early with Environment.Exit(3) (System.MP
/// then aborts the job rather than let the others wait for it forever).  The time from the
/// fault to the end of the job is printed, never asserted; a job that does not end within a
/// minute fails the test.
/// </summary>
public class FaultTests(ITestOutputHelper log)
{
    public static TheoryData<Scenario, bool, bool> Kills()
    {
        var data = new TheoryData<Scenario, bool, bool>();
        foreach (Scenario s in new[] { Scenario.FaultRecv, Scenario.FaultCollective, Scenario.FaultWindow })
            foreach (var (hosted, openMpi) in new[] { (true, false), (false, false), (true, true) })
                data.Add(s, hosted, openMpi);
        return data;
    }

    [Theory]
    [MemberData(nameof(Kills))]
    public void ARankKilledWhileOthersWaitForItEndsTheJob(Scenario scenario, bool hosted, bool openMpi)
    {
        using var job = new LiveJob(scenario, hosted, openMpi);
        Dictionary<int, int> pids = job.WaitReady();
        var clock = Stopwatch.StartNew();
        Process.GetProcessById(pids[1]).Kill(); // SIGKILL
        bool ended = job.WaitExit(60);
        log.WriteLine($"{scenario.Name()} {(hosted ? "motor" : "dotnet")} {(openMpi ? "Open MPI" : "MPICH")}: SIGKILL to job end {clock.Elapsed.TotalSeconds:F2} s");
        Assert.True(ended, $"the job did not end within 60 s of SIGKILL to rank 1:\n{job.Output}");
        Assert.NotEqual(0, job.ExitCode);
        AssertNoneLeft(pids, job);
        // The launcher says who died and how.
        if (openMpi)
            Assert.Matches(new Regex(@"process rank 1 with PID \d+ .* exited on signal 9"), job.Output);
        else
            Assert.Matches(new Regex($@"PID {pids[1]} RUNNING AT .*\n.*(KILLED BY SIGNAL: 9|EXIT CODE: 9)"), job.Output);
    }

    [Theory]
    [InlineData(true, false)]
    [InlineData(false, false)]
    [InlineData(true, true)]
    public void ARankLeavingEarlyWithAFailureCodeEndsTheJob(bool hosted, bool openMpi)
    {
        using var job = new LiveJob(Scenario.FaultExitEarly, hosted, openMpi);
        Dictionary<int, int> pids = job.WaitReady();
        var clock = Stopwatch.StartNew();
        bool ended = job.WaitExit(60);
        log.WriteLine($"fault-exit-early {(hosted ? "motor" : "dotnet")} {(openMpi ? "Open MPI" : "MPICH")}: READY to job end {clock.Elapsed.TotalSeconds:F2} s");
        Assert.True(ended, $"rank 1 left with Environment.Exit(3) and the job did not end within 60 s:\n{job.Output}");
        Assert.Equal(3, job.ExitCode);
        AssertNoneLeft(pids, job);
        Assert.Contains("[rank 1] exiting with code 3 while MPI is in use; aborting the MPI job", job.Output);
        Assert.DoesNotContain("FAIL", job.Output);
    }

    // The launcher may exit as it sends the last kill: a rank still there 10 s later is left behind.
    private static void AssertNoneLeft(Dictionary<int, int> pids, LiveJob job)
    {
        static bool Running(int pid) =>
            Directory.Exists($"/proc/{pid}") && !File.ReadAllText($"/proc/{pid}/stat").Contains(") Z ", StringComparison.Ordinal);
        var clock = Stopwatch.StartNew();
        while (pids.Values.Any(Running) && clock.Elapsed < TimeSpan.FromSeconds(10))
            Thread.Sleep(50);
        foreach (var (rank, pid) in pids)
            Assert.False(Running(pid), $"rank {rank} (pid {pid}) is still running 10 s after the job ended:\n{job.Output}");
    }

    /// <summary>A 2-rank scenario job whose output is read while it runs.</summary>
    private sealed class LiveJob : IDisposable
    {
        private readonly Process _process;
        private readonly StringBuilder _output = new();
        private readonly Dictionary<int, int> _ready = [];
        private readonly ManualResetEventSlim _allReady = new();

        internal LiveJob(Scenario scenario, bool hosted, bool openMpi)
        {
            string program = Job.ManagedProgram("Scenarios");
            string launch = hosted ? $"{Job.Motor} {program}" : $"dotnet {program}";
            var psi = openMpi
                ? new ProcessStartInfo(Job.OpenMpiLauncher, $"--oversubscribe -n 2 {launch} {scenario.Name()}")
                : new ProcessStartInfo(Job.MpichLauncher, $"-n 2 {launch} {scenario.Name()}");
            psi.RedirectStandardOutput = psi.RedirectStandardError = true;
            psi.UseShellExecute = false;
            foreach (var (k, v) in Job.OpenMpiEnvironment)
                psi.Environment[k] = v;
            _process = new Process { StartInfo = psi };
            _process.OutputDataReceived += (_, e) => Line(e.Data);
            _process.ErrorDataReceived += (_, e) => Line(e.Data);
            _process.Start();
            _process.BeginOutputReadLine();
            _process.BeginErrorReadLine();
        }

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

        public void Dispose()
        {
            if (!_process.HasExited)
                _process.Kill(entireProcessTree: true);
            _process.Dispose();
            _allReady.Dispose();
        }
    }
}
