using System.MP;
using System.Reflection;
using Scenarios;

// Runs one named scenario on every rank of the job:
//   mpiexec -n 2 dotnet Scenarios.dll <scenario>
//   dotnet Scenarios.dll --list          the registered names, one a line
// Every static class here with `static void Register(Dictionary<Scenario, Action<Communicator>>)`
// contributes its scenarios; their names are the values of Scenario (Scenario.cs).
var all = new Dictionary<Scenario, Action<Communicator>>();
foreach (var type in typeof(Check).Assembly.GetTypes())
    type.GetMethod("Register", BindingFlags.Static | BindingFlags.NonPublic | BindingFlags.Public,
                   [typeof(Dictionary<Scenario, Action<Communicator>>)])?.Invoke(null, [all]);

if (args is ["--list"])
{
    foreach (string registered in all.Keys.Select(s => s.Name()).Order(StringComparer.Ordinal))
        Console.WriteLine(registered);
    return 0;
}
if (args.Length != 1 || !ScenarioNames.TryParse(args[0], out Scenario name) || !all.TryGetValue(name, out var scenario))
{
    Console.Error.WriteLine($"usage: Scenarios <name>; names: {string.Join(", ", all.Keys.Select(s => s.Name()).Order(StringComparer.Ordinal))}");
    return 2;
}
// A failure before the program touches MPI: under motor the VM's startup hook
// has already armed the handler that aborts the whole job.
if (name == Scenario.UnhandledBeforeMpi && Environment.GetEnvironmentVariable("PMI_RANK") == "1")
    throw new InvalidProgramException("boom before MPI on rank 1");
var world = Communicator.World;
Check.Rank = world.Rank;
try
{
    scenario(world);
}
catch (Exception e)
{
    Check.True(false, $"scenario threw {e}");
}
if (Mpi.IsInitialized)
    Mpi.Shutdown();
if (Check.Failures == 0)
{
    Console.WriteLine($"PASS {args[0]} rank {Check.Rank} ({Check.Passed} checks)");
    return 0;
}
Console.WriteLine($"FAIL {args[0]} rank {Check.Rank}: {Check.Failures} failed, {Check.Passed} passed");
return 1;
