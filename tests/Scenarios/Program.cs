using System.MP;
using System.Reflection;
using Scenarios;

// Runs named scenarios on every rank of the job:
//   mpiexec -n 2 dotnet Scenarios.dll <scenario> [<scenario>...]   several run in turn
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
var names = new List<Scenario>();
foreach (string arg in args)
{
    if (arg.StartsWith("--note=", StringComparison.Ordinal)) // a word for the scenario itself (SpawnMultiple's children)
        continue;
    if (!ScenarioNames.TryParse(arg, out Scenario parsed) || !all.ContainsKey(parsed))
    {
        names.Clear();
        break;
    }
    names.Add(parsed);
}
if (names.Count == 0)
{
    Console.Error.WriteLine($"usage: Scenarios <name> [<name>...]; names: {string.Join(", ", all.Keys.Select(s => s.Name()).Order(StringComparer.Ordinal))}");
    return 2;
}
// The rank's first output, before it touches MPI: its bytes must be the text alone, with no
// terminal control codes before it (Runtime/RankConsole.cs in System.MP).
if (names is [Scenario.ConsoleFirstLine])
    Console.WriteLine($"first line of rank {Environment.GetEnvironmentVariable("OMPI_COMM_WORLD_RANK") ?? Environment.GetEnvironmentVariable("PMI_RANK")}");
// MOTOR_GC_STRESS=1: a thread on each rank forces compacting collections all the time;
// MOTOR_GC_STRESS_MIN=N: each scenario runs again until every rank saw N of them (GcStress.cs).
GcStress? stress;
long stressMinimum;
try
{
    stressMinimum = GcStress.MinimumFromEnvironment();
    if (stressMinimum > 0 && Environment.GetEnvironmentVariable(GcStress.Variable) != "1")
        throw new ArgumentException($"{GcStress.MinimumVariable} counts the collections {GcStress.Variable}=1 forces: set both");
    stress = GcStress.FromEnvironment();
}
catch (ArgumentException e)
{
    Console.Error.WriteLine($"Scenarios: {e.Message}");
    return 2;
}
// A failure before the program touches MPI: under motor System.MP's start (HostEntry.Start)
// has already armed the handler that aborts the whole job.
if (names[0] == Scenario.UnhandledBeforeMpi && Environment.GetEnvironmentVariable("PMI_RANK") == "1")
    throw new InvalidProgramException("boom before MPI on rank 1");
if (names is [Scenario.Mpi4SessionsAlone]) // the sessions model before (or without) the world
    return Mpi4.SessionsAlone();
// SCENARIOS_THREAD_LEVEL: the level library mode asks for (under motor: motor --thread-level).
if (Environment.GetEnvironmentVariable("SCENARIOS_THREAD_LEVEL") is { Length: > 0 } level)
    Mpi.Init(Enum.Parse<ThreadLevel>(level, ignoreCase: true));
var world = Communicator.World;
Check.Rank = world.Rank;
// Several scenarios run one after another in one job (one launch across hosts runs a whole
// group); each reports on its own, and the ranks start the next one together.
int failedScenarios = 0;
foreach (Scenario name in names)
{
    int failuresBefore = Check.Failures, passedBefore = Check.Passed;
    if (name != names[0] && Mpi.IsInitialized)
        world.Barrier();
    GcStress.Counts stressBefore = stress is null ? default : GcStress.Counts.Now(stress);
    int rounds = 0;
    do
    {
        rounds++;
        try
        {
            all[name](world);
        }
        catch (Exception e) when (name != Scenario.FaultThrow) // its exception leaves Main, as a program's own would
        {
            Check.True(false, $"scenario threw {e}");
        }
    }
    while (stress is not null && stressMinimum > 0 && rounds < GcStress.MaxRounds && Mpi.IsInitialized &&
           !StressedEnough(world, Check.Failures > failuresBefore, stress.Forced - stressBefore.Forced, stressMinimum));
    if (stress is not null)
        GcStress.Print(GcStress.Report(name.Name(), Check.Rank, rounds, stressBefore, GcStress.Counts.Now(stress)));
    int failures = Check.Failures - failuresBefore, passed = Check.Passed - passedBefore;
    if (failures == 0)
    {
        Console.WriteLine($"PASS {name.Name()} rank {Check.Rank} ({passed} checks)");
        continue;
    }
    failedScenarios++;
    Console.WriteLine($"FAIL {name.Name()} rank {Check.Rank}: {failures} failed, {passed} passed");
}
if (Mpi.IsInitialized)
{
    Mpi.Shutdown();
    // The test harness tells Open MPI's report of its own exit race from a rank that did not
    // finish MPI_Finalize by this line (Job.OpenMpiExitRace).
    if (Environment.GetEnvironmentVariable("SCENARIOS_SAY_FINALIZED") == "1")
        Console.WriteLine($"MPI_Finalize returned on rank {Check.Rank}");
}
stress?.Dispose();
return failedScenarios == 0 ? 0 : 1;

// Whether the ranks are done with a scenario under MOTOR_GC_STRESS_MIN, decided together: a rank
// failed, or every rank saw the minimum of forced collections.
static bool StressedEnough(Communicator world, bool failed, long forced, long minimum)
{
    var mine = new[] { failed ? 1L : 0L, -forced };
    var all = new long[2];
    world.Allreduce(mine, all, Op.Max);
    return all[0] != 0 || -all[1] >= minimum;
}
