using System.Diagnostics;
using System.Text;
using System.Text.RegularExpressions;
using Scenarios;

namespace System.MP.Tests;

/// <summary>Launches programs of this repository as MPI jobs and captures what they print.</summary>
internal static class Job
{
    /// <summary>The repository root (holds Directory.Build.props).</summary>
    internal static readonly string Root = FindRoot();

    /// <summary>Build configuration folder of this test run ("release" or "debug").</summary>
    internal static readonly string Configuration = new DirectoryInfo(AppContext.BaseDirectory).Name;

    internal sealed record Result(int ExitCode, string Output, bool TimedOut)
    {
        public override string ToString() => $"exit {ExitCode}{(TimedOut ? " (timed out)" : "")}\n{Output}";
    }

    internal static string ManagedProgram(string project) =>
        Path.Combine(Root, "artifacts", "dotnet", "bin", project, Configuration, project + ".dll");

    internal static string NativeProgram(string name) => Path.Combine(Root, "artifacts", "bin", name);

    /// <summary>The motor VM built into artifacts/bin.</summary>
    internal static string Motor => NativeProgram("motor");

    /// <summary>The MPI a job is launched with.</summary>
    internal enum Launcher
    {
        /// <summary>MPICH's hydra (<see cref="MpichLauncher"/>): Motor's main MPI.</summary>
        Mpich,

        /// <summary>Open MPI's mpirun: the second core, with dynamic processes.</summary>
        OpenMpi,
    }

    /// <summary>
    /// MPICH's launcher: $MOTOR_MPIEXEC_MPICH, else mpiexec.mpich on PATH (scripts/launchers.sh).
    /// Never a plain mpiexec: that is whichever MPI the machine made its default.
    /// </summary>
    internal static string MpichLauncher => FindLauncher(Launcher.Mpich);

    /// <summary>Open MPI's launcher: $MOTOR_MPIEXEC_OPENMPI, else mpirun.openmpi on PATH.</summary>
    internal static string OpenMpiLauncher => FindLauncher(Launcher.OpenMpi);

    /// <summary>
    /// The program a launcher setting names, as a full path, looked up like a shell does on
    /// <paramref name="path"/> (default: this process's PATH).
    /// </summary>
    internal static string FindLauncher(Launcher launcher, string? path = null)
    {
        var (variable, defaultName, package) = launcher == Launcher.Mpich
            ? ("MOTOR_MPIEXEC_MPICH", "mpiexec.mpich", "mpich")
            : ("MOTOR_MPIEXEC_OPENMPI", "mpirun.openmpi", "openmpi-bin");
        string name = Environment.GetEnvironmentVariable(variable) is { Length: > 0 } set ? set : defaultName;
        if (name.Contains('/'))
            return File.Exists(name) ? Path.GetFullPath(name) : throw new Xunit.Sdk.XunitException($"{variable}={name}: no such file");
        foreach (string dir in (path ?? Environment.GetEnvironmentVariable("PATH") ?? "").Split(':', StringSplitOptions.RemoveEmptyEntries))
        {
            string candidate = Path.Combine(dir, name);
            if (File.Exists(candidate))
                return candidate;
        }
        throw new Xunit.Sdk.XunitException(
            $"{name} is not on PATH: install {package} (./build.sh deps) or name the launcher in {variable}");
    }

    /// <summary>
    /// Asserts that Open MPI and Motor's Open MPI core are present (build.sh installs
    /// Open MPI and builds libmpcore-ompi.so; a build without them cannot run these tests).
    /// </summary>
    internal static void RequireOpenMpi()
    {
        _ = OpenMpiLauncher; // throws, naming what to install, when it is missing
        Xunit.Assert.True(File.Exists(NativeProgram("libmpcore-ompi.so")),
            "artifacts/bin/libmpcore-ompi.so is missing: Motor was built without Open MPI's headers (./build.sh)");
    }

    /// <summary>
    /// Runs `mpiexec -n ranks dotnet program.dll args` (library mode), or with
    /// <paramref name="hosted"/> `mpiexec -n ranks motor program.dll args`, or a native program;
    /// with <see cref="Launcher.OpenMpi"/> under Open MPI's mpirun (oversubscribed: this
    /// machine has 2 cores) plus <paramref name="launcherOptions"/>.  With <paramref name="via"/>,
    /// the launcher itself runs under that command (a program and its arguments, e.g. one that
    /// enters another host: <see cref="NamespaceHosts"/>).
    /// </summary>
    internal static Result Mpi(int ranks, string program, string args = "", int timeoutSeconds = 120,
                               IDictionary<string, string>? env = null, bool hosted = false, string motorOptions = "",
                               Launcher launcher = Launcher.Mpich, string launcherOptions = "", string[]? via = null)
    {
        string launch = !program.EndsWith(".dll", StringComparison.Ordinal) ? program
            : hosted ? $"{Motor} {motorOptions} {program}" : $"dotnet {program}";
        string? path = env is not null && env.TryGetValue("PATH", out string? p) ? p : null;
        string file = FindLauncher(launcher, path);
        string arguments = $"{launcherOptions} -n {ranks} {launch} {args}";
        var all = new Dictionary<string, string>();
        if (launcher == Launcher.OpenMpi)
        {
            RequireOpenMpi();
            foreach (var (k, v) in OpenMpiEnvironment)
                all[k] = v;
            arguments = "--oversubscribe " + arguments;
        }
        if (env is not null)
            foreach (var (k, v) in env)
                all[k] = v;
        if (via is [string runner, .. var runnerArgs])
        {
            arguments = $"{string.Join(' ', runnerArgs)} {file} {arguments}";
            file = runner;
        }
        return Run(file, arguments, timeoutSeconds, all);
    }

    /// <summary>Set for the Scenarios program: each rank prints "<see cref="FinalizedLine"/> N" once MPI_Finalize has returned.</summary>
    internal const string FinalizedVariable = "SCENARIOS_SAY_FINALIZED";

    /// <summary>What a rank of the Scenarios program prints, with its rank, once MPI_Finalize has returned (<see cref="FinalizedVariable"/>).</summary>
    internal const string FinalizedLine = "MPI_Finalize returned on rank";

    /// <summary>
    /// Open MPI 4's mpirun can report a rank that finished MPI_Finalize and exited as "rank N with
    /// PID 0 ... exiting improperly" (a race between the rank's exit and its daemon's bookkeeping,
    /// open-mpi/ompi#7833, not fixed in the 4.x series; seen here about once in several hundred
    /// jobs on a loaded machine).  The same words report a rank that really ended without
    /// finishing MPI_Finalize, so the race is told by every rank having said that its
    /// MPI_Finalize returned (<see cref="FinalizedVariable"/>); only then is a job run again, once.
    /// </summary>
    internal static bool OpenMpiExitRace(Result r, int ranks) =>
        !r.TimedOut && r.ExitCode != 0 && Regex.IsMatch(r.Output, @"has exited due to process rank \d+ with PID \d+ on\s+node \S+ exiting improperly")
        && Enumerable.Range(0, ranks).All(rank => r.Output.Contains($"{FinalizedLine} {rank}\n", StringComparison.Ordinal));

    /// <summary>
    /// What Open MPI needs here: CI runs as root (mpirun refuses without both
    /// variables), and spawned children may oversubscribe the 2 cores too.
    /// </summary>
    internal static readonly Dictionary<string, string> OpenMpiEnvironment = new()
    {
        ["OMPI_ALLOW_RUN_AS_ROOT"] = "1",
        ["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"] = "1",
        ["OMPI_MCA_rmaps_base_oversubscribe"] = "1",
    };

    /// <summary>
    /// Open MPI's name server (ompi-server) for jobs started separately: pass
    /// <see cref="LauncherOption"/> to each mpirun so that ports can be
    /// connected and names published across them.  Stopped on dispose.
    /// </summary>
    internal sealed class OmpiServer : IDisposable
    {
        private readonly Process _process;
        private readonly string _uriFile;

        internal OmpiServer()
        {
            RequireOpenMpi();
            _uriFile = Path.Combine(Path.GetTempPath(), $"motor-ompi-server-{Guid.NewGuid():N}");
            var psi = new ProcessStartInfo(Path.Combine(Path.GetDirectoryName(OpenMpiLauncher)!, "ompi-server"), $"--no-daemonize -r {_uriFile}")
            {
                UseShellExecute = false,
                RedirectStandardOutput = true,
                RedirectStandardError = true,
            };
            foreach (var (k, v) in OpenMpiEnvironment)
                psi.Environment[k] = v;
            _process = Process.Start(psi)!;
            _process.BeginOutputReadLine();
            _process.BeginErrorReadLine();
            for (int i = 0; i < 400 && !(File.Exists(_uriFile) && new FileInfo(_uriFile).Length > 0); i++)
                Thread.Sleep(25);
            Xunit.Assert.True(File.Exists(_uriFile), "ompi-server did not write its URI");
        }

        /// <summary>The mpirun option that points a job at this server.</summary>
        internal string LauncherOption => $"--ompi-server file:{_uriFile}";

        public void Dispose()
        {
            try
            {
                _process.Kill(entireProcessTree: true);
                _process.WaitForExit();
            }
            catch (InvalidOperationException)
            {
            }
            _process.Dispose();
            File.Delete(_uriFile);
        }
    }

    /// <summary>Each scenario on both cores (MPICH, Open MPI), in library mode and under motor: (scenario, hosted, openMpi) rows for a test's MemberData.</summary>
    internal static Xunit.TheoryData<Scenario, bool, bool> EveryCoreAndMode(params Scenario[] scenarios)
    {
        var data = new Xunit.TheoryData<Scenario, bool, bool>();
        foreach (Scenario s in scenarios)
            foreach (bool hosted in new[] { false, true })
                foreach (bool openMpi in new[] { false, true })
                    data.Add(s, hosted, openMpi);
        return data;
    }

    /// <summary>Both cores (MPICH, Open MPI) in library mode and under motor: (hosted, openMpi) rows for a test's MemberData.</summary>
    internal static Xunit.TheoryData<bool, bool> CoresAndModes()
    {
        var data = new Xunit.TheoryData<bool, bool>();
        foreach (bool hosted in new[] { false, true })
            foreach (bool openMpi in new[] { false, true })
                data.Add(hosted, openMpi);
        return data;
    }

    /// <summary>Runs a scenario on 2 ranks on the MPICH or the Open MPI core and asserts both passed.</summary>
    internal static Result RunTwoRanks(Scenario scenario, bool hosted, bool openMpi) =>
        RunScenario(scenario, 2, hosted: hosted, launcher: openMpi ? Launcher.OpenMpi : Launcher.Mpich);

    /// <summary>The program that runs the scenarios of tests/Scenarios: its argument is a <see cref="Scenario"/>'s name.</summary>
    internal static string ScenariosProgram => ManagedProgram("Scenarios");

    /// <summary>Runs a scenario of tests/Scenarios on <paramref name="ranks"/> ranks and asserts every rank passed.</summary>
    internal static Result RunScenario(Scenario scenario, int ranks, int timeoutSeconds = 120, bool hosted = false,
                                       IDictionary<string, string>? env = null, string motorOptions = "",
                                       Launcher launcher = Launcher.Mpich, string launcherOptions = "") =>
        RunScenarios([scenario], ranks, timeoutSeconds, hosted, env, motorOptions, launcher, launcherOptions);

    /// <summary>
    /// Runs several scenarios one after another in one job (<paramref name="via"/>: see
    /// <see cref="Mpi"/>) and asserts every rank passed each of them.
    /// </summary>
    internal static Result RunScenarios(IReadOnlyList<Scenario> scenarios, int ranks, int timeoutSeconds = 120, bool hosted = false,
                                        IDictionary<string, string>? env = null, string motorOptions = "",
                                        Launcher launcher = Launcher.Mpich, string launcherOptions = "", string[]? via = null)
    {
        if (launcher == Launcher.OpenMpi)
            env = new Dictionary<string, string>(env ?? new Dictionary<string, string>()) { [FinalizedVariable] = "1" };
        Result r = Mpi(ranks, ScenariosProgram, ScenarioArguments(scenarios), timeoutSeconds, env, hosted, motorOptions, launcher, launcherOptions, via);
        if (launcher == Launcher.OpenMpi && OpenMpiExitRace(r, ranks))
        {
            Result again = Mpi(ranks, ScenariosProgram, ScenarioArguments(scenarios), timeoutSeconds, env, hosted, motorOptions, launcher, launcherOptions, via);
            r = again with { Output = $"(the first run ended in Open MPI's exit race and was run again; its output:)\n{r.Output}\n(the second run:)\n{again.Output}" };
        }
        string mode = (hosted ? $"under motor {motorOptions}" : "under dotnet") + (launcher == Launcher.OpenMpi ? " (Open MPI)" : "");
        AssertScenariosPassed(r, scenarios, ranks, mode);
        return r;
    }

    /// <summary>The Scenarios program's arguments that run <paramref name="scenarios"/> in turn.</summary>
    internal static string ScenarioArguments(IReadOnlyList<Scenario> scenarios) => string.Join(' ', scenarios.Select(s => s.Name()));

    /// <summary>Asserts that a job of the Scenarios program ended well and every rank passed each scenario.</summary>
    internal static void AssertScenariosPassed(Result r, IReadOnlyList<Scenario> scenarios, int ranks, string mode)
    {
        string names = ScenarioArguments(scenarios);
        Xunit.Assert.False(r.TimedOut, $"{names} on {ranks} ranks {mode} hung:\n{r}");
        Xunit.Assert.True(r.ExitCode == 0, $"{names} on {ranks} ranks {mode} failed:\n{r}");
        foreach (Scenario scenario in scenarios)
            for (int rank = 0; rank < ranks; rank++)
                Xunit.Assert.Contains($"PASS {scenario.Name()} rank {rank} ", r.Output);
        Xunit.Assert.DoesNotContain("FAIL", r.Output);
    }

    /// <summary>
    /// Runs a program, its output captured.  A program still running after
    /// <paramref name="timeoutSeconds"/> is killed with its process tree; one whose output stays
    /// open <paramref name="outputGraceSeconds"/> after it ended (a process it started, reparented
    /// once its parent ended: a daemon on another host that lost its link) is reported as timed
    /// out.  Either way every process the run started is then ended, wherever it went (<see cref="EndJob"/>).
    /// </summary>
    internal static Result Run(string file, string args, int timeoutSeconds = 120, IDictionary<string, string>? env = null,
                               int outputGraceSeconds = OutputGraceSeconds)
    {
        var psi = new ProcessStartInfo(file, args)
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
        };
        // Keep the child runs independent of the test host's own settings.
        psi.Environment.Remove("MOTOR_CORE_LIBRARY");
        if (env is not null)
            foreach (var (k, v) in env)
                psi.Environment[k] = v;
        string tag = Guid.NewGuid().ToString("N");
        psi.Environment[JobTagVariable] = tag;
        var output = new StringBuilder();
        using var p = new Process { StartInfo = psi };
        p.OutputDataReceived += (_, e) => { if (e.Data is not null) lock (output) output.AppendLine(e.Data); };
        p.ErrorDataReceived += (_, e) => { if (e.Data is not null) lock (output) output.AppendLine(e.Data); };
        p.Start();
        p.BeginOutputReadLine();
        p.BeginErrorReadLine();
        bool exited = p.WaitForExit(timeoutSeconds * 1000);
        if (!exited)
        {
            try
            {
                p.Kill(entireProcessTree: true);
            }
            catch (InvalidOperationException)
            {
            }
        }
        // The output ends when every process holding it has ended, which may be a process outside
        // the launcher's tree (a daemon on another host that lost its link): bounded, so that such
        // a leftover fails the test instead of stalling the suite.
        bool drained = OutputClosed(p, TimeSpan.FromSeconds(outputGraceSeconds));
        string ended = exited && drained ? "" : EndJob(tag);
        lock (output)
        {
            if (!drained)
                output.AppendLine($"(the output was still open {outputGraceSeconds} s after the program ended: a process outside its tree holds it)");
            if (ended.Length > 0)
                output.AppendLine($"(ended what the run left behind: {ended})");
            return new Result(exited ? p.ExitCode : -1, output.ToString(), !exited || !drained);
        }
    }

    /// <summary>How long a program's output may stay open after it ended.</summary>
    private const int OutputGraceSeconds = 30;

    /// <summary>
    /// The variable that marks every process of one <see cref="Run"/>: inherited through the
    /// launchers, their agents and daemons into the ranks, whatever their parent becomes (a process
    /// whose parent ended is reparented, out of the launcher's tree) and whatever network namespace
    /// they entered.
    /// </summary>
    internal const string JobTagVariable = "MOTOR_TEST_JOB";

    /// <summary>
    /// Kills every process (but this one) whose environment carries <paramref name="tag"/> as
    /// <see cref="JobTagVariable"/>; returns "pid (command)" of each, comma-separated, or "".
    /// </summary>
    internal static string EndJob(string tag)
    {
        byte[] mark = Encoding.ASCII.GetBytes($"{JobTagVariable}={tag}\0");
        var ended = new List<string>();
        foreach (string dir in Directory.EnumerateDirectories("/proc"))
        {
            if (!int.TryParse(Path.GetFileName(dir), out int pid) || pid == Environment.ProcessId)
                continue;
            try
            {
                byte[] environ = File.ReadAllBytes(Path.Combine(dir, "environ"));
                if (environ.AsSpan().IndexOf(mark) < 0 && !environ.AsSpan().EndsWith(mark.AsSpan(0, mark.Length - 1)))
                    continue;
                string command = File.ReadAllText(Path.Combine(dir, "cmdline")).Replace('\0', ' ').Trim();
                using var leftover = Process.GetProcessById(pid);
                leftover.Kill();
                ended.Add($"{pid} ({(command.Length > 80 ? command[..80] + "..." : command)})");
            }
            catch (Exception e) when (e is IOException or UnauthorizedAccessException or ArgumentException or InvalidOperationException or
                                           System.ComponentModel.Win32Exception)
            {
                // gone meanwhile, or not ours to read
            }
        }
        return string.Join(", ", ended);
    }

    /// <summary>Waits for the process to end and its redirected output to close, at most <paramref name="within"/>.</summary>
    private static bool OutputClosed(Process p, TimeSpan within)
    {
        using var cts = new CancellationTokenSource(within);
        try
        {
            p.WaitForExitAsync(cts.Token).GetAwaiter().GetResult();
            return true;
        }
        catch (OperationCanceledException)
        {
            return false;
        }
    }

    private static string FindRoot()
    {
        for (var d = new DirectoryInfo(AppContext.BaseDirectory); d is not null; d = d.Parent)
            if (File.Exists(Path.Combine(d.FullName, "Directory.Build.props")) && Directory.Exists(Path.Combine(d.FullName, "src")))
                return d.FullName;
        throw new InvalidOperationException("repository root not found above " + AppContext.BaseDirectory);
    }
}
