using System.MP;

namespace Scenarios;

/// <summary>What the motor VM promises a program, checked from inside it (and the library-mode counterpart).</summary>
internal static class Hosting
{
    internal static void Register(Dictionary<Scenario, Action<Communicator>> s)
    {
        s[Scenario.HostedBinding] = Binding;
        s[Scenario.EnvironmentExit] = EnvironmentExit;
        s[Scenario.MeterOnDemand] = MeterOnDemand;
        s[Scenario.ThreadLevelFromSettings] = ThreadLevelFromSettings;
        s[Scenario.ConsoleFirstLine] = _ => Check.True(true, "the first line is Program.cs's");
        // Rank 1 throws in Program.cs before touching MPI; rank 0 waits forever.
        s[Scenario.UnhandledBeforeMpi] = c =>
        {
            c.Recv(new int[1], 1, 99);
            Check.True(false, "rank 0 must not get past the receive");
        };
    }

    // The level set where both modes read it (the runtime property Motor.ThreadLevel in the app's
    // runtimeconfig.json, or MOTOR_THREAD_LEVEL; the test passes SCENARIOS_EXPECT_LEVEL): MPI runs at
    // it without Mpi.Init in library mode and without --thread-level under motor, and
    // Mpi.Init at that level then returns at once in both modes.
    private static void ThreadLevelFromSettings(Communicator c)
    {
        ThreadLevel expected = Enum.Parse<ThreadLevel>(Environment.GetEnvironmentVariable("SCENARIOS_EXPECT_LEVEL")!, ignoreCase: true);
        Check.Equal(expected, Mpi.ThreadLevel, $"the configured level ({(Mpi.IsHosted ? "motor" : "dotnet")})");
        Mpi.Init(expected);
        Mpi.Init(ThreadLevel.Single);
        if (Mpi.IsHosted && expected < ThreadLevel.Multiple)
        {
            // MPI cannot start twice: the message names the setting both modes read.
            InvalidOperationException e = Check.Throws<InvalidOperationException>(() => Mpi.Init(ThreadLevel.Multiple), "more than the VM provided")!;
            Check.True(e.Message.Contains("<RuntimeHostConfigurationOption Include=\"Motor.ThreadLevel\" Value=\"multiple\" />", StringComparison.Ordinal),
                       $"the message names the project setting: {e.Message}");
        }
        if (expected == ThreadLevel.Multiple)
        {
            // Another thread calls MPI while Main's thread waits in MPI: needs Multiple.
            int[] got = new int[1];
            Request r = c.IRecv(got, 1 - c.Rank, 5);
            Task.Run(() => c.Send([40 + c.Rank], 1 - c.Rank, 5)).Wait();
            r.Wait();
            Check.Equal(41 - c.Rank, got[0], "a send from a second thread");
        }
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
            // System.MP starts from motor's call on MPI's main thread (HostEntry.Start), not as a
            // startup hook: the runtime would look it up by name and call it by reflection there.
            Check.True(AppContext.GetData("STARTUP_HOOKS") is not string hooks || !hooks.Contains("System.MP", StringComparison.Ordinal),
                       "System.MP is no startup hook");
            // motor loads the app on its runtime-start thread (HostEntry.Prepare) before the
            // runtime runs it: one copy, the one whose Main runs.
            Check.Equal(1, AppDomain.CurrentDomain.GetAssemblies().Count(a => a.GetName().Name == "Scenarios"), "the app is loaded once");
            Check.True(System.Reflection.Assembly.GetEntryAssembly() == typeof(Hosting).Assembly, "the entry assembly is the app's one copy");
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
        // MPI's main thread is the one that initialized it (MPI-4.0 11.2.2); under motor MPI
        // starts beside the runtime, and Main must still run on that thread.
        Check.True(Mpi.IsThreadMain, "Main runs on MPI's main thread");
        if (Mpi.ThreadLevel == ThreadLevel.Multiple) // other threads may call MPI only then
        {
            bool other = true;
            var t = new Thread(() => other = Mpi.IsThreadMain);
            t.Start();
            t.Join();
            Check.True(!other, "another thread is not MPI's main thread");
        }
    }

    // The System.MP meter is published once someone can listen, not on the start path: creating
    // it creates .NET's metrics EventSource, a large part of a short job's start.
    private static void MeterOnDemand(Communicator c)
    {
        Check.True(!MetricsAssemblyLoaded(), "MPI started without loading the metrics assembly (no meter on the start path)");
        c.Allreduce(1, Op.Sum);
        MpiStatistics stats = Mpi.GetStatistics();
        Check.True(!MetricsAssemblyLoaded(), "statistics need no meter");
        long seen = MeterProbe.ObserveOperations();
        Check.True(seen >= stats.PointToPointOperations + stats.CollectiveOperations,
                   $"a listener that appears later sees the meter's operations ({seen} >= {stats.PointToPointOperations + stats.CollectiveOperations})");
    }

    private static bool MetricsAssemblyLoaded() =>
        AppDomain.CurrentDomain.GetAssemblies().Any(a => a.GetName().Name == "System.Diagnostics.DiagnosticSource");

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
