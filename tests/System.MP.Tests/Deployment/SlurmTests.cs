using Scenarios;
using Xunit;

namespace System.MP.Tests;

/// <summary>
/// Motor under Slurm (tests/hosts/slurm.sh: a one-node cluster of Debian's slurm-wlm and munge):
/// srun starts the ranks itself, through its PMI-2 plugin for MPICH and its PMIx plugin for
/// Open MPI, under motor and dotnet; and an sbatch script runs srun and MPICH's own launcher
/// inside its allocation.
/// </summary>
public class SlurmTests : IClassFixture<SlurmCluster>
{
    private readonly SlurmCluster _cluster;

    public SlurmTests(SlurmCluster cluster) => _cluster = cluster;

    /// <summary>
    /// srun's MPI plugin for each core: Debian's MPICH speaks PMI-2; Debian's Open MPI 4.1 is a
    /// PMIx client, served by Slurm's pmix_v4 plugin.  Nothing else names the core: a process
    /// that srun gave PMIx alone picks Open MPI's (pal_mpi_choose_abi).
    /// </summary>
    internal static string Plugin(bool openMpi) => openMpi ? "--mpi=pmix" : "--mpi=pmi2";

    private static string Launch(bool hosted, string program) => hosted ? $"{Job.Motor} {program}" : $"dotnet {program}";

    private static void AssertHello(Job.Result r, int ranks, bool hosted, bool openMpi)
    {
        Assert.True(r.ExitCode == 0, r.ToString());
        string mode = hosted ? "motor VM" : "library mode";
        for (int rank = 0; rank < ranks; rank++)
            Assert.Contains($"Hello from rank {rank} of {ranks} on ", r.Output);
        Assert.Equal(ranks, r.Output.Split('\n').Count(l => l.StartsWith("Hello from rank", StringComparison.Ordinal) && l.Contains(mode, StringComparison.Ordinal)));
        Assert.Contains(openMpi ? "MPI library: Open MPI" : "MPI library: MPICH", r.Output);
    }

    [Theory]
    [MemberData(nameof(MultiHostTests.CoresAndModes), MemberType = typeof(MultiHostTests))]
    public void SrunStartsEveryRank(bool openMpi, bool hosted)
    {
        Job.Result r = _cluster.Run("srun", $"{Plugin(openMpi)} -n 3 {Launch(hosted, Job.ManagedProgram("Hello"))}");
        AssertHello(r, 3, hosted, openMpi);
    }

    /// <summary>
    /// Point-to-point, object and buffer collectives in one srun job per core and mode, on 2 ranks:
    /// the point-to-point scenarios are written for a pair (a third rank leaves them at once and
    /// would meet the others' collectives in the next scenario).
    /// </summary>
    [Theory]
    [MemberData(nameof(MultiHostTests.CoresAndModes), MemberType = typeof(MultiHostTests))]
    public void ScenariosUnderSrun(bool openMpi, bool hosted)
    {
        Scenario[] scenarios = [Scenario.Nonblocking, Scenario.Mprobe, Scenario.CollReduce, Scenario.ObjectsCollectives];
        string plugin = Plugin(openMpi);
        Job.Result r = _cluster.Run("srun", $"{plugin} -n 2 {Launch(hosted, Job.ScenariosProgram)} {Job.ScenarioArguments(scenarios)}");
        Job.AssertScenariosPassed(r, scenarios, 2, $"under srun {plugin} {(hosted ? "and motor" : "and dotnet")}");
    }

    /// <summary>
    /// A batch script as a user would write it: srun for each core, and MPICH's own launcher,
    /// which inside an allocation starts its proxies through Slurm.
    /// </summary>
    [Fact]
    public void SbatchRunsABatchScript()
    {
        string folder = Directory.CreateTempSubdirectory("motor-sbatch-").FullName;
        try
        {
            string output = Path.Combine(folder, "job.out"), script = Path.Combine(folder, "job.sh");
            string hello = Job.ManagedProgram("Hello");
            File.WriteAllText(script, $"""
                #!/bin/bash
                #SBATCH --job-name=motor-hello
                #SBATCH --ntasks=2
                #SBATCH --output={output}
                set -e
                echo "== srun --mpi=pmi2 motor"
                srun --mpi=pmi2 {Job.Motor} {hello}
                echo "== srun --mpi=pmix dotnet"
                srun --mpi=pmix dotnet {hello}
                echo "== mpiexec.mpich motor"
                {Job.MpichLauncher} -n 2 {Job.Motor} {hello}
                echo "== done"
                """);
            Job.Result r = _cluster.Run("sbatch", $"--wait {script}");
            string printed = File.Exists(output) ? File.ReadAllText(output) : "(no output file)";
            Assert.True(r.ExitCode == 0, $"{r}\n{printed}");
            Assert.Contains("Submitted batch job", r.Output);
            string[] parts = printed.Split("== ");
            Assert.Equal(5, parts.Length);
            AssertHello(new Job.Result(0, parts[1], false), 2, hosted: true, openMpi: false);
            AssertHello(new Job.Result(0, parts[2], false), 2, hosted: false, openMpi: true);
            AssertHello(new Job.Result(0, parts[3], false), 2, hosted: true, openMpi: false);
            Assert.StartsWith("done", parts[4]);
        }
        finally
        {
            Directory.Delete(folder, recursive: true);
        }
    }
}
