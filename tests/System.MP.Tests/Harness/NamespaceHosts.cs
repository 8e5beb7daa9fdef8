using Xunit;

namespace System.MP.Tests;

/// <summary>
/// The hosts of tests/hosts/hosts.sh (network namespaces motor-h1..3 on a private bridge, each
/// with its own address and hostname) for one test class: up when the class starts, down when
/// it ends, whether its tests passed or not.  Jobs start on motor-h1 and reach the other hosts
/// through tests/hosts/agent.sh, which the real launchers run in place of ssh.
/// </summary>
public sealed class NamespaceHosts : IDisposable
{
    internal const int Count = 3;

    internal static string Script => Path.Combine(Job.Root, "tests", "hosts", "hosts.sh");

    internal static string Agent => Path.Combine(Job.Root, "tests", "hosts", "agent.sh");

    internal static string Name(int host) => $"motor-h{host}";

    public NamespaceHosts()
    {
        Job.Result r = Job.Run(Script, $"up {Count}", 120);
        Assert.True(r.ExitCode == 0, $"hosts.sh up failed:\n{r}");
    }

    public void Dispose() => Job.Run(Script, "down", 120);

    /// <summary>
    /// No process is left in any host's namespace (`ip netns pids`): the ranks, the launchers'
    /// daemons and agents are all gone within 10 s of the job's end.
    /// </summary>
    internal static void AssertNothingLeft(string context)
    {
        var clock = System.Diagnostics.Stopwatch.StartNew();
        while (true)
        {
            var left = Left();
            if (left.Length == 0)
                return;
            if (clock.Elapsed > TimeSpan.FromSeconds(10))
            {
                EndAll(); // so that the tests after this one start on empty hosts
                Assert.Fail($"processes left on {Describe(left)} 10 s after the job ended (now killed):\n{context}");
            }
            Thread.Sleep(100);
        }
    }

    /// <summary>
    /// Kills every process on every host (`ip netns pids`), whoever started it: what a job left
    /// there, such as Open MPI's daemon on a host whose link went down (outside the launcher's
    /// tree, and spinning once cut off).  Returns what it found, described, or "".
    /// </summary>
    internal static string EndAll()
    {
        var left = Left();
        foreach (var h in left)
            Job.Run("kill", "-9 " + h.Pids.ReplaceLineEndings(" "), 30);
        return Describe(left);
    }

    /// <summary>The hosts with processes in their namespace, and those processes' pids (one a line).</summary>
    private static (string Host, string Pids)[] Left() =>
        Enumerable.Range(1, Count)
            .Select(h => (Host: Name(h), Pids: Job.Run("ip", $"netns pids {Name(h)}", 30).Output.Trim()))
            .Where(h => h.Pids.Length > 0).ToArray();

    private static string Describe((string Host, string Pids)[] left) =>
        string.Join(", ", left.Select(h => $"{h.Host} (pids {h.Pids.ReplaceLineEndings(" ")})"));

    /// <summary>Takes a host's network link down or up again (its interface, inside its namespace).</summary>
    internal static void SetLink(int host, bool up)
    {
        Job.Result r = Job.Run("ip", $"-n {Name(host)} link set {Interface} {(up ? "up" : "down")}", 30);
        Assert.True(r.ExitCode == 0, r.ToString());
    }

    /// <summary>What a launcher runs under to start on the first host.</summary>
    internal static string[] OnFirstHost => [Script, "exec", Name(1)];

    /// <summary>
    /// Launcher options for a job across the first <paramref name="hosts"/> hosts (one slot
    /// each, ranks dealt in turn), reaching them through the agent, with Open MPI's traffic
    /// held to TCP on the hosts' interface.
    /// </summary>
    internal static string LauncherOptions(Job.Launcher launcher, int hosts = 2)
    {
        string list = string.Join(',', Enumerable.Range(1, hosts).Select(Name));
        return launcher == Job.Launcher.Mpich
            ? $"-launcher ssh -launcher-exec {Agent} -iface {Interface} -hosts {list}"
            : $"--mca plm_rsh_agent {Agent} --host {list} {TcpSettings(launcher)}";
    }

    /// <summary>The hosts' network interface, inside each namespace.</summary>
    internal const string Interface = "motor-eth0";

    /// <summary>
    /// The environment of a job across hosts: for MPICH, UCX held to TCP (and the loopback
    /// `self` transport within a process), as `hosts.sh env mpich` prints it.
    /// </summary>
    internal static Dictionary<string, string> Environment(Job.Launcher launcher)
    {
        var env = new Dictionary<string, string>();
        if (launcher == Job.Launcher.Mpich)
            foreach (string setting in TcpSettings(launcher).Split(' ', StringSplitOptions.RemoveEmptyEntries))
                env[setting[..setting.IndexOf('=')]] = setting[(setting.IndexOf('=') + 1)..];
        // MPICH over UCX's TCP transport can hang in MPI_Finalize between hosts (MultiHostTests):
        // the core's watchdog ends such a rank 5 s after every rank entered it, not 30.
        env["MOTOR_FINALIZE_TIMEOUT"] = "5";
        return env;
    }

    /// <summary>`hosts.sh env mpich|openmpi`: the one place the TCP-only settings are written.</summary>
    private static string TcpSettings(Job.Launcher launcher)
    {
        Job.Result r = Job.Run(Script, launcher == Job.Launcher.Mpich ? "env mpich" : "env openmpi", 30);
        Assert.True(r.ExitCode == 0, r.ToString());
        return r.Output.Trim();
    }
}
