using Xunit;

namespace System.MP.Tests;

/// <summary>
/// A one-node Slurm cluster (tests/hosts/slurm.sh: munged, slurmctld and slurmd in the
/// foreground with a generated slurm.conf in a folder of their own) for one test class: started
/// when the class starts, stopped and its folder removed when it ends, whatever its tests did.
/// </summary>
public sealed class SlurmCluster : IDisposable
{
    private static string Script => Path.Combine(Job.Root, "tests", "hosts", "slurm.sh");

    /// <summary>The cluster's folder: slurm.conf, the munge socket, state, spool and logs.</summary>
    internal string Folder { get; } = Path.Combine(Path.GetTempPath(), $"motor-slurm-{Guid.NewGuid():N}");

    public SlurmCluster()
    {
        Job.Result r = Job.Run(Script, $"up {Folder}", 120);
        Assert.True(r.ExitCode == 0, $"slurm.sh up failed:\n{r}");
    }

    public void Dispose() => Job.Run(Script, $"down {Folder}", 120);

    /// <summary>What every Slurm command of a test needs to find this cluster.</summary>
    internal Dictionary<string, string> Environment => new() { ["SLURM_CONF"] = Path.Combine(Folder, "slurm.conf") };

    /// <summary>The pids of the cluster's daemons (munged, slurmctld, slurmd), by name, while it is up.</summary>
    internal Dictionary<string, int> DaemonPids() =>
        new[] { "munged", "slurmctld", "slurmd" }.ToDictionary(name => name,
            name => int.Parse(File.ReadAllText(Path.Combine(Folder, $"{name}.daemon")).Trim(), Globalization.CultureInfo.InvariantCulture));

    /// <summary>The pids of the slurmstepd processes that run job <paramref name="jobId"/>'s steps on this machine.</summary>
    internal static List<int> StepDaemons(string jobId)
    {
        var pids = new List<int>();
        foreach (string dir in Directory.GetDirectories("/proc"))
        {
            if (!int.TryParse(Path.GetFileName(dir), out int pid))
                continue;
            try
            {
                if (File.ReadAllText(Path.Combine(dir, "cmdline")).StartsWith($"slurmstepd: [{jobId}.", StringComparison.Ordinal))
                    pids.Add(pid);
            }
            catch (IOException)
            {
                // the process ended while we looked
            }
            catch (UnauthorizedAccessException)
            {
            }
        }
        return pids;
    }

    /// <summary>Runs a Slurm client command (srun, sbatch, ...) against this cluster.</summary>
    internal Job.Result Run(string command, string args, int timeoutSeconds = 180, IDictionary<string, string>? env = null)
    {
        var all = Environment;
        if (env is not null)
            foreach (var (k, v) in env)
                all[k] = v;
        return Job.Run(command, args, timeoutSeconds, all);
    }
}
