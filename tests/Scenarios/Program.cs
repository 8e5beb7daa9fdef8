using System.MP;
using System.Reflection;
using Scenarios;

// Runs one named scenario on every rank of the job:
//   mpiexec -n 2 dotnet Scenarios.dll <scenario>
// Every static class here with `static void Register(Dictionary<string, Action<Communicator>>)`
// contributes its scenarios.
var all = new Dictionary<string, Action<Communicator>>(StringComparer.Ordinal);
foreach (var type in typeof(Check).Assembly.GetTypes())
    type.GetMethod("Register", BindingFlags.Static | BindingFlags.NonPublic | BindingFlags.Public,
                   [typeof(Dictionary<string, Action<Communicator>>)])?.Invoke(null, [all]);

if (args.Length != 1 || !all.TryGetValue(args[0], out var scenario))
{
    Console.Error.WriteLine($"usage: Scenarios <name>; names: {string.Join(", ", all.Keys.Order())}");
    return 2;
}
// A failure before the program touches MPI: under motor the VM's startup hook
// has already armed the handler that aborts the whole job.
if (args[0] == "unhandled-before-mpi" && Environment.GetEnvironmentVariable("PMI_RANK") == "1")
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
