using System.Diagnostics;
using Scenarios;
using Xunit;
using Xunit.Abstractions;

namespace System.MP.Tests;

/// <summary>
/// A Slurm job that is cut short leaves nothing behind: a 2-rank srun job whose ranks wait in a
/// receive (the fault-recv scenario) is cancelled with scancel, or its cluster is taken down
/// under it (tests/hosts/slurm.sh down, what the test fixtures do after a test that gave up on a
/// job).  Either way srun ends with a non-zero exit and, 10 s later, no rank, no slurmstepd of
/// the job and (when the cluster went down) no daemon is running.  Each test has a cluster of
/// its own, so taking one down touches no other test.  The times are printed, never asserted.
/// </summary>
public class SlurmCleanupTests(ITestOutputHelper log)
{
    public static TheoryData<bool, bool> CoresAndEndings() => new()
    {
        { false, false }, { true, false }, { false, true }, { true, true },
    };

    [Theory]
    [MemberData(nameof(CoresAndEndings))]
    public void ACancelledOrCutOffJobLeavesNothingBehind(bool openMpi, bool clusterDown)
    {
        using var cluster = new SlurmCluster();
        using var job = new LiveJob("srun", $"{SlurmTests.Plugin(openMpi)} -n 2 {LiveJob.Launch(hosted: true)} {Scenario.FaultRecv.Name()}",
                                    cluster.Environment);
        Dictionary<string, int> watched = job.WaitReady().ToDictionary(r => $"rank {r.Key}", r => r.Value);
        string jobId = cluster.Run("squeue", "-h -o %A").Output.Trim();
        Assert.Matches("^[0-9]+$", jobId);
        List<int> steps = SlurmCluster.StepDaemons(jobId);
        Assert.True(steps.Count > 0, $"no slurmstepd runs job {jobId}:\n{job.Output}");
        foreach (int pid in steps)
            watched[$"slurmstepd {pid} of job {jobId}"] = pid;
        if (clusterDown)
            foreach (var (name, pid) in cluster.DaemonPids())
                watched[name] = pid;

        var clock = Stopwatch.StartNew();
        if (clusterDown)
            cluster.Dispose();
        else
            Assert.Equal(0, cluster.Run("scancel", jobId).ExitCode);
        bool ended = job.WaitExit(60);
        string how = clusterDown ? "slurm.sh down" : "scancel";
        log.WriteLine($"{how} {(openMpi ? "pmix/Open MPI" : "pmi2/MPICH")}: srun ended {clock.Elapsed.TotalSeconds:F2} s after it");
        Assert.True(ended, $"srun did not end within 60 s of {how}:\n{job.Output}");
        Assert.NotEqual(0, job.ExitCode);
        job.AssertNoneLeft(watched);
        log.WriteLine($"  nothing left {clock.Elapsed.TotalSeconds:F2} s after {how} ({watched.Count} processes watched)");
        if (clusterDown)
            Assert.False(Directory.Exists(cluster.Folder), $"slurm.sh down left {cluster.Folder}");
    }
}
