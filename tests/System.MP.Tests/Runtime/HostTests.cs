using Scenarios;
using Xunit;

namespace System.MP.Tests;

/// <summary>The motor VM as a command: options, errors, exit codes, aborts.</summary>
public class HostTests
{
    private static string Hello => Job.ManagedProgram("Hello");
    private static string Scenarios => Job.ScenariosProgram;

    [Fact]
    public void VersionNamesMotorTheRuntimeAndTheMpiLibrary()
    {
        Job.Result r = Job.Run(Job.Motor, "--version", 60);
        Assert.True(r.ExitCode == 0, r.ToString());
        Assert.Matches(@"(?m)^Motor \d+\.\d+\.\d+", r.Output);
        Assert.Matches(@"(?m)^\.NET runtime: Microsoft\.NETCore\.App 10\.", r.Output);
        Assert.Matches(@"(?m)^MPI library: MPICH Version: +\d", r.Output);
        Assert.Contains("libmpgc.so", r.Output);
    }

    [Fact]
    public void HelpDescribesTheOptions()
    {
        Job.Result r = Job.Run(Job.Motor, "--help", 60);
        Assert.True(r.ExitCode == 0, r.ToString());
        Assert.Contains("Usage: motor [options] <app.dll>", r.Output);
        foreach (string option in new[] { "--thread-level", "--runtime-property", "--no-gc-extension", "--gc", "--dotnet-root", "--version" })
            Assert.Contains(option, r.Output);
    }

    [Theory]
    [InlineData("", "no application given")]
    [InlineData("--frobnicate app.dll", "unknown option '--frobnicate'")]
    [InlineData("--thread-level lots app.dll", "thread level 'lots' is not single, funneled, serialized or multiple")]
    [InlineData("--gc generational app.dll", "--gc 'generational' is not regions or segments")]
    [InlineData("-p NoEqualsSign app.dll", "runtime property 'NoEqualsSign' is not <name>=<value>")]
    [InlineData("--thread-level", "option --thread-level needs a value")]
    public void BadCommandLinesAreUsageErrors(string args, string message)
    {
        Job.Result r = Job.Run(Job.Motor, args, 60);
        Assert.Equal(2, r.ExitCode);
        Assert.Contains(message, r.Output);
    }

    [Fact]
    public void AMissingApplicationIsReported()
    {
        Job.Result r = Job.Run(Job.Motor, "/nonexistent/App.dll", 60);
        Assert.Equal(5, r.ExitCode);
        Assert.Contains("application '/nonexistent/App.dll' not found", r.Output);
    }

    [Fact]
    public void AMissingRuntimeIsReported()
    {
        Job.Result r = Job.Run(Job.Motor, $"--dotnet-root /nonexistent/dotnet {Hello}", 60);
        Assert.Equal(3, r.ExitCode);
        Assert.Contains("no .NET runtime found", r.Output);
        Assert.Contains("/nonexistent/dotnet", r.Output);
    }

    [Fact]
    public void AMissingMpiLibraryIsReported()
    {
        var env = new Dictionary<string, string> { ["MOTOR_MPI_LIBRARY"] = "/nonexistent/libmpi.so.12" };
        Job.Result r = Job.Run(Job.Motor, Hello, 60, env);
        Assert.Equal(4, r.ExitCode);
        Assert.Contains("no usable MPI library", r.Output);
        Assert.Contains("/nonexistent/libmpi.so.12", r.Output);
        Assert.DoesNotContain("Hello from rank", r.Output);

        Job.Result v = Job.Run(Job.Motor, "--version", 60, env);
        Assert.Equal(1, v.ExitCode);
        Assert.Contains("MPI library: not found", v.Output);
    }

    /// <summary>The runtime starts beside MPI_Init on a host thread: when it cannot, motor says so (hostfxr's words too) and exits with 5.</summary>
    [Theory]
    [InlineData(1, "")]
    [InlineData(2, "")]
    [InlineData(1, "0")] // MPI_Init, then the runtime, on one thread
    public void ARuntimeThatCannotStartIsReported(int ranks, string overlap)
    {
        var env = new Dictionary<string, string>();
        if (overlap.Length > 0)
            env["MOTOR_START_OVERLAP"] = overlap;
        Job.Result r = Job.Mpi(ranks, Hello, hosted: true, motorOptions: "-p System.GC.HeapHardLimit=4096", env: env, timeoutSeconds: 60);
        Assert.False(r.TimedOut, r.ToString());
        Assert.Equal(5, r.ExitCode);
        Assert.Contains("motor: the .NET runtime could not start", r.Output);
        Assert.Contains("GC heap initialization failed", r.Output);
        Assert.DoesNotContain("Hello from rank", r.Output);
    }

    [Fact]
    public void MainsExitCodeIsTheProcessExitCode()
    {
        Job.Result usage = Job.Mpi(1, Scenarios, "no-such-scenario", hosted: true);
        Assert.Equal(2, usage.ExitCode); // Main returned 2
        Assert.Contains("usage: Scenarios <name>", usage.Output);

        Job.Result exit = Job.Mpi(2, Scenarios, Scenario.EnvironmentExit.Name(), hosted: true, timeoutSeconds: 60);
        Assert.False(exit.TimedOut, exit.ToString());
        Assert.Equal(3, exit.ExitCode);
        Assert.Contains("PASS environment-exit rank 0", exit.Output);
        Assert.Contains("PASS environment-exit rank 1", exit.Output);
    }

    [Theory]
    [InlineData("", 2)]
    [InlineData("--thread-level multiple", 2)]
    [InlineData("--no-gc-extension", 1)]
    public void TheAppRunsOnTheVmsCore(string options, int ranks) =>
        Job.RunScenario(Scenario.HostedBinding, ranks, hosted: true, motorOptions: options);

    [Fact]
    public void SystemMpShipsWithTheVm()
    {
        // An app folder with neither System.MP.dll nor libmpcore.so (nor a
        // deps.json naming them): motor supplies its own System.MP.
        string dir = Directory.CreateTempSubdirectory("motor-app-").FullName;
        try
        {
            string src = Path.GetDirectoryName(Hello)!;
            foreach (string f in new[] { "Hello.dll", "Hello.runtimeconfig.json" })
                File.Copy(Path.Combine(src, f), Path.Combine(dir, f));
            Job.Result r = Job.Mpi(1, Path.Combine(dir, "Hello.dll"), hosted: true);
            Assert.True(r.ExitCode == 0, r.ToString());
            Assert.Contains("Hello from rank 0 of 1", r.Output);
            Assert.Contains("(motor VM, thread level", r.Output);

            Job.Result plain = Job.Mpi(1, Path.Combine(dir, "Hello.dll"));
            Assert.NotEqual(0, plain.ExitCode); // plain dotnet cannot find System.MP there
            Assert.Contains("System.MP", plain.Output);
        }
        finally
        {
            Directory.Delete(dir, recursive: true);
        }
    }

    [Fact]
    public void ThreadLevelOptionReachesTheProgram()
    {
        Job.Result r = Job.Mpi(1, Hello, hosted: true, motorOptions: "--thread-level=serialized");
        Assert.True(r.ExitCode == 0, r.ToString());
        Assert.Contains("(motor VM, thread level Serialized)", r.Output);
    }

    /// <summary>
    /// Under motor a method with a loop (Hello's Main) is compiled optimized at its
    /// first call, unless motor's -p, the environment or the app's runtimeconfig.json asks for
    /// .NET's default (tier 0, then on-stack replacement).  The JIT's own summary says which.
    /// </summary>
    [Theory]
    [InlineData("", "", false, "Tier-0 switched to FullOpts")]
    [InlineData("-p System.Runtime.TieredCompilation.QuickJitForLoops=true", "", false, "Tier0,")]
    [InlineData("", "1", false, "Tier0,")]
    [InlineData("", "", true, "Tier0,")]
    public void LoopsRunOptimizedCodeFromTheFirstIterationUnlessTheAppOptsOut(string options, string envOptOut, bool appOptOut, string compiled)
    {
        string dir = Directory.CreateTempSubdirectory("motor-jit-").FullName;
        try
        {
            string hello = appOptOut ? HelloWithSetting(dir, "System.Runtime.TieredCompilation.QuickJitForLoops", "true") : Hello;
            string log = Path.Combine(dir, "jit.txt");
            var env = new Dictionary<string, string> { ["DOTNET_JitStdOutFile"] = log, ["DOTNET_JitDisasmSummary"] = "1" };
            if (envOptOut.Length > 0)
                env["DOTNET_TC_QuickJitForLoops"] = envOptOut;
            Job.Result r = Job.Mpi(1, hello, hosted: true, motorOptions: options, env: env);
            Assert.True(r.ExitCode == 0, r.ToString());
            string main = File.ReadAllLines(log).Single(l => l.Contains("Program:<Main>$", StringComparison.Ordinal));
            Assert.Contains(compiled, main);
        }
        finally
        {
            Directory.Delete(dir, recursive: true);
        }
    }

    /// <summary>A copy of Hello in <paramref name="dir"/> whose runtimeconfig.json sets <paramref name="name"/> (as a project would).</summary>
    private static string HelloWithSetting(string dir, string name, string value)
    {
        foreach (string f in Directory.GetFiles(Path.GetDirectoryName(Hello)!))
            File.Copy(f, Path.Combine(dir, Path.GetFileName(f)));
        string config = Path.Combine(dir, "Hello.runtimeconfig.json");
        File.WriteAllText(config, File.ReadAllText(config).Replace("\"configProperties\": {",
            $"\"configProperties\": {{\n      \"{name}\": {value},", StringComparison.Ordinal));
        Assert.Contains(name, File.ReadAllText(config));
        return Path.Combine(dir, "Hello.dll");
    }

    /// <summary>
    /// Under motor background GC is off, so that the GC extension can place large
    /// arrays on cache lines, unless motor's -p, the environment or the app's runtimeconfig.json
    /// turns it back on; the extension then says why it does not place them (MOTOR_GC_TRACE).
    /// </summary>
    [Theory]
    [InlineData("", "", false, true)]
    [InlineData("-p System.GC.Concurrent=true", "", false, false)]
    [InlineData("", "1", false, false)]
    [InlineData("", "", true, false)]
    public void BackgroundGcIsOffUnlessTheAppTurnsItOn(string options, string envOn, bool appOn, bool aligned)
    {
        string dir = Directory.CreateTempSubdirectory("motor-bgc-").FullName;
        try
        {
            string hello = appOn ? HelloWithSetting(dir, "System.GC.Concurrent", "true") : Hello;
            var env = new Dictionary<string, string> { ["MOTOR_GC_TRACE"] = "1" };
            if (envOn.Length > 0)
                env["DOTNET_gcConcurrent"] = envOn;
            Job.Result r = Job.Mpi(1, hello, hosted: true, motorOptions: options, env: env);
            Assert.True(r.ExitCode == 0, r.ToString());
            if (aligned)
                Assert.Contains("mpgc: large and pinned-heap arrays without references start their data on 64-byte boundaries", r.Output);
            else
                Assert.Contains("mpgc: arrays are placed by the stock GC alone: background GC is on (gcConcurrent)", r.Output);
        }
        finally
        {
            Directory.Delete(dir, recursive: true);
        }
    }

    /// <summary>System.MP ships precompiled (ReadyToRun): beside motor and in an app's output.</summary>
    [Fact]
    public void SystemMpIsReadyToRun()
    {
        foreach (string dll in new[] { Job.NativeProgram("System.MP.dll"), Path.Combine(Path.GetDirectoryName(Hello)!, "System.MP.dll") })
        {
            using var pe = new System.Reflection.PortableExecutable.PEReader(File.OpenRead(dll));
            Assert.True(pe.PEHeaders.CorHeader!.ManagedNativeHeaderDirectory.Size > 0, $"{dll} has no ReadyToRun code");
        }
    }

    /// <summary>
    /// MOTOR_STARTUP_TRACE=1 times motor's phases, and System.MP's, in order: MPI_Init on the main
    /// thread and the runtime's start on a host thread (then System.MP binding and loading the app there)
    /// run at the same time, so those come in either order, each once, between the MPI library's
    /// load and the join.  MOTOR_STARTUP_HOOK=0 (measuring only) still runs the app.  System.MP's
    /// entry is found by the runtime's native loader, or with MOTOR_NATIVE_ENTRY=0 through hostfxr.
    /// </summary>
    [Theory]
    [InlineData("1", "runtime's native loader")]
    [InlineData("0", "hostfxr")]
    public void StartupTraceNamesEveryPhaseInOrder(string nativeEntry, string entryFoundBy)
    {
        Job.Result r = Job.Mpi(1, Hello, hosted: true, env: new Dictionary<string, string>
        {
            ["MOTOR_STARTUP_TRACE"] = "1", ["MOTOR_STARTUP_HOOK"] = "0", ["MOTOR_NATIVE_ENTRY"] = nativeEntry,
        });
        Assert.True(r.ExitCode == 0, r.ToString());
        Assert.Contains("Hello from rank 0 of 1", r.Output);
        string[] lines = r.Output.Split('\n').Where(l => l.StartsWith("motor[", StringComparison.Ordinal)).ToArray();
        int At(string phase)
        {
            int[] found = Enumerable.Range(0, lines.Length).Where(i => lines[i].Contains(phase, StringComparison.Ordinal)).ToArray();
            Assert.True(found.Length == 1, $"'{phase}' is in {found.Length} lines, not 1:\n{string.Join('\n', lines)}");
            return found[0];
        }
        double Ms(int i) => double.Parse(lines[i].Split(':')[1].Trim().Split(' ')[0], Globalization.CultureInfo.InvariantCulture);
        void InOrder(params string[] phases)
        {
            for (int k = 1; k < phases.Length; k++)
            {
                int a = At(phases[k - 1]), b = At(phases[k]);
                Assert.True(a < b && Ms(a) <= Ms(b), $"'{phases[k - 1]}' comes before '{phases[k]}':\n{string.Join('\n', lines)}");
            }
        }
        InOrder(" ms main", "hostfxr loaded", "app prepared", "runtime properties set", "MPI library loaded", "MPI initialized (",
                "joined; running Main", "Mpi.Shutdown: finalizing MPI", "Mpi.Shutdown: MPI finalized", "Main returned", " ms MPI finalized");
        InOrder("MPI library loaded", "runtime started (", "System.MP entry found (", "System.MP bound and the app loaded", "joined; running Main");
        Assert.Contains("host thread)", lines[At("runtime started (")]);
        Assert.Contains($"({entryFoundBy})", lines[At("System.MP entry found (")]);
        Assert.Equal(14, lines.Length);
    }

    public static TheoryData<Scenario, bool, bool> StartPath => Job.EveryCoreAndMode(Scenario.HostedBinding, Scenario.MeterOnDemand);

    /// <summary>
    /// What motor's start changed, from inside the program, in both modes on both cores, at thread
    /// level Multiple: MPI starts beside the runtime, and Main still runs on MPI's main thread
    /// (MPI_Is_thread_main, MPI-4.0 11.2.2), which another thread is not, with the level MPI gave
    /// (HostedBinding); the System.MP meter stays off the start path and appears once a listener
    /// does (MeterOnDemand).
    /// </summary>
    [Theory]
    [MemberData(nameof(StartPath))]
    public void StartPathAtThreadLevelMultiple(Scenario scenario, bool hosted, bool openMpi) =>
        Job.RunScenario(scenario, 2, hosted: hosted, launcher: openMpi ? Job.Launcher.OpenMpi : Job.Launcher.Mpich,
                        motorOptions: hosted ? "--thread-level multiple" : "",
                        env: hosted ? null : new Dictionary<string, string> { ["SCENARIOS_THREAD_LEVEL"] = "multiple" });

    [Fact]
    public void RuntimePropertiesArePassedThrough()
    {
        // Server GC through -p: the program sees the property, the runtime runs server GC
        // wherever the process may use more than one processor (it falls back to
        // workstation GC on one), and the GC extension still pins in-flight buffers (it
        // reports them once, from heap 0).
        Job.Result r = Job.RunScenario(Scenario.GcPinsInFlight, 2, hosted: true, motorOptions: "-p System.GC.Server=true");
        var lines = System.Text.RegularExpressions.Regex.Matches(
            r.Output, @"rank \d: GC extension True, server GC asked: (\w+), running: (\w+), processors: (\d+)");
        Assert.True(lines.Count == 2, r.ToString());
        foreach (System.Text.RegularExpressions.Match m in lines)
        {
            Assert.Equal("true", m.Groups[1].Value);
            Assert.Equal(m.Groups[3].Value != "1" ? "True" : "False", m.Groups[2].Value);
        }
    }
}
