using Xunit;

namespace System.MP.Tests;

/// <summary>
/// Motor's scripts and tests name their MPI launcher (scripts/launchers.sh: MPICH's for the
/// MPICH core, Open MPI's for the Open MPI core) and never depend on which MPI the system
/// made its default <c>mpiexec</c>.  This whole run has Open MPI's launcher first on PATH as
/// <c>mpiexec</c> (<see cref="HostilePath"/>); these tests also take it away entirely.
/// </summary>
public class LauncherTests
{
    private static string BuildSh => Path.Combine(Job.Root, "build.sh");

    public static TheoryData<string> Paths => new() { "openmpi-first", "no-mpiexec" };

    private static string RealPath(string file) => new FileInfo(file).ResolveLinkTarget(true)?.FullName ?? Path.GetFullPath(file);

    private static string PathOf(string kind) => kind == "openmpi-first" ? HostilePath.OpenMpiFirst : HostilePath.NoMpiexec;

    [Fact]
    public void ThisRunsPlainMpiexecIsOpenMpis()
    {
        string? mpiexec = HostilePath.FindOnPath("mpiexec", Environment.GetEnvironmentVariable("PATH")!);
        Assert.NotNull(mpiexec);
        Assert.Equal(RealPath(Job.OpenMpiLauncher), RealPath(mpiexec));
        Assert.Null(HostilePath.FindOnPath("mpiexec", HostilePath.NoMpiexec));
        Assert.Null(HostilePath.FindOnPath("mpirun", HostilePath.NoMpiexec));
        Assert.NotNull(HostilePath.FindOnPath("mpiexec.mpich", HostilePath.NoMpiexec));
    }

    [Theory]
    [MemberData(nameof(Paths))]
    public void TheDemoRunsOnMpichsLauncher(string path)
    {
        Job.Result r = Job.Run("/bin/bash", $"{BuildSh} demo", 300, new Dictionary<string, string> { ["PATH"] = PathOf(path) });
        Assert.True(r.ExitCode == 0, r.ToString());
        Assert.Contains("mpiexec.mpich -n 2 motor PingPong.dll", r.Output);
        Assert.Contains("4194304 ", r.Output); // the last size of the sweep
    }

    [Theory]
    [MemberData(nameof(Paths))]
    public void TheTestLauncherRunsMpichJobs(string path)
    {
        foreach (bool hosted in new[] { false, true })
        {
            Job.Result r = Job.Mpi(2, Job.ManagedProgram("Hello"), hosted: hosted,
                                   env: new Dictionary<string, string> { ["PATH"] = PathOf(path) });
            Assert.True(r.ExitCode == 0, r.ToString());
            Assert.Contains("Hello from rank 1 of 2", r.Output);
            Assert.Contains("MPI library: MPICH", r.Output);
        }
    }

    [Fact]
    public void TheBenchmarkSuiteRunsWithNoMpiexecOnPath()
    {
        string outDir = Path.Combine(Path.GetTempPath(), $"motor-bench-nompiexec-{Guid.NewGuid():N}");
        try
        {
            Job.Result r = Job.Run("/bin/bash", $"{Path.Combine(Job.Root, "perf", "bench.sh")} {outDir}", 300, new Dictionary<string, string>
            {
                ["PATH"] = HostilePath.NoMpiexec,
                ["ONLY"] = "latency",
                ["ROUNDS"] = "1",
                ["SCALE"] = "0.01",
                ["MAX_BYTES"] = "64",
            });
            Assert.True(r.ExitCode == 0, r.ToString());
            string csv = File.ReadAllText(Path.Combine(outDir, "latency.csv"));
            foreach (string series in new[] { "C", "motor", "dotnet", "wrapper" })
                Assert.Contains(series, csv);
        }
        finally
        {
            if (Directory.Exists(outDir))
                Directory.Delete(outDir, recursive: true);
        }
    }

    [Fact]
    public void AMissingLauncherIsNamedWithWhatToInstall()
    {
        var env = new Dictionary<string, string> { ["MOTOR_MPIEXEC_MPICH"] = "mpiexec.nowhere" };
        Job.Result demo = Job.Run("/bin/bash", $"{BuildSh} demo", 60, env);
        Assert.NotEqual(0, demo.ExitCode);
        Assert.Contains("no mpich launcher: 'mpiexec.nowhere' is not on PATH", demo.Output);
        Assert.Contains("apt-get install mpich", demo.Output);
        Assert.Contains("MOTOR_MPIEXEC_MPICH", demo.Output);

        Job.Result bench = Job.Run("/bin/bash", Path.Combine(Job.Root, "perf", "bench.sh"), 60, env);
        Assert.NotEqual(0, bench.ExitCode);
        Assert.Contains("no mpich launcher: 'mpiexec.nowhere' is not on PATH", bench.Output);
    }
}
