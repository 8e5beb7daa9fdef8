using System.MP;

namespace Scenarios;

/// <summary>What the motor VM promises a program, checked from inside it (and the library-mode counterpart).</summary>
internal static class Hosting
{
    internal static void Register(Dictionary<Scenario, Action<Communicator>> s)
    {
        s[Scenario.HostedBinding] = Binding;
        s[Scenario.EnvironmentExit] = EnvironmentExit;
        // Rank 1 throws in Program.cs before touching MPI; rank 0 waits forever.
        s[Scenario.UnhandledBeforeMpi] = c =>
        {
            c.Recv(new int[1], 1, 99);
            Check.True(false, "rank 0 must not get past the receive");
        };
    }

    // Under motor the core comes from the VM (the copy of libmpcore next to
    // the app is never loaded) and MPI was initialized before Main.
    private static void Binding(Communicator c)
    {
        bool hosted = AppContext.GetData("Motor.Hosted") as string == "true";
        Check.Equal(hosted, Mpi.IsHosted, "Mpi.IsHosted matches the VM's Motor.Hosted property");
        string[] cores = File.ReadAllLines("/proc/self/maps")
            .Where(l => l.EndsWith("/libmpcore.so", StringComparison.Ordinal))
            .Select(l => l[l.IndexOf('/')..]).Distinct().ToArray();
        Check.Equal(1, cores.Length, $"one libmpcore is mapped ({string.Join(", ", cores)})");
        string appDir = Path.GetDirectoryName(typeof(Hosting).Assembly.Location)!;
        if (hosted)
        {
            string vmDir = Path.GetDirectoryName(AppContext.GetData("Motor.HostPath") as string)!;
            Check.True(cores.All(p => Path.GetDirectoryName(p) == vmDir), $"the core is the VM's, in {vmDir}");
            Check.True(cores.All(p => Path.GetDirectoryName(p) != appDir), "the app's copy of the core is not loaded");
            Check.Equal(AppContext.GetData("Motor.ThreadLevel") as string, Mpi.ThreadLevel.ToString().ToLowerInvariant(),
                        "thread level the VM initialized MPI with");
            if (Mpi.ThreadLevel < ThreadLevel.Multiple)
                Check.Throws<InvalidOperationException>(() => Mpi.Init(ThreadLevel.Multiple),
                                                        "asking for more threads than the VM initialized");
        }
        else
        {
            Check.True(cores.All(p => Path.GetDirectoryName(p) == appDir), "library mode loads the core next to System.MP");
        }
        Mpi.Init(ThreadLevel.Single); // at or below the level: fine in both modes
        Check.Equal(c.Size, c.Allreduce(1, Op.Sum), "MPI works");
    }

    // Environment.Exit skips the rest of Main: MPI must still be finalized
    // (ProcessExit under dotnet, and the VM's exit hook under motor) and the
    // job must end with the code given.
    private static void EnvironmentExit(Communicator c)
    {
        c.Barrier();
        Console.WriteLine($"PASS environment-exit rank {c.Rank} (exiting with 3)");
        Console.Out.Flush();
        Environment.Exit(3);
    }
}
