using System.Text.RegularExpressions;
using Scenarios;
using Xunit;

namespace System.MP.Tests;

/// <summary>
/// The scenarios of tests/Scenarios are named once (<see cref="Scenario"/>, a file both projects
/// compile): the program registers every name and no other, some test runs each, and the scripts
/// that run scenarios by name (tests/checkers.sh) name registered ones.
/// </summary>
public class ScenarioTests
{
    /// <summary>Scenarios that no test starts itself: another scenario does.</summary>
    private static readonly Dictionary<Scenario, Scenario> StartedByAnother = new()
    {
        [Scenario.SpawnChild] = Scenario.Spawn, // the children Spawn starts with MPI_Comm_spawn
        [Scenario.Mpi4SpawnInfoChild] = Scenario.Mpi4SpawnInfo, // the child spawned with an Info (wdir)
        [Scenario.Mpi4SpawnMultipleChild] = Scenario.Mpi4SpawnMultiple, // the children of SpawnMultiple
    };

    private static string[] Registered()
    {
        Job.Result r = Job.Run("dotnet", $"{Job.ScenariosProgram} --list", 60);
        Assert.True(r.ExitCode == 0, r.ToString());
        return r.Output.Split('\n', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries);
    }

    [Fact]
    public void TheProgramRegistersEveryScenarioAndNoOther()
    {
        Assert.Equal(Enum.GetValues<Scenario>().Select(s => s.Name()).Order(StringComparer.Ordinal),
                     Registered().Order(StringComparer.Ordinal));
    }

    [Fact]
    public void EveryScenarioIsRunByATest()
    {
        // Every use of a scenario in this project is a Scenario value (Job.RunScenario takes one).
        var used = new HashSet<Scenario>();
        foreach (string file in Directory.EnumerateFiles(Path.Combine(Job.Root, "tests", "System.MP.Tests"), "*.cs", SearchOption.AllDirectories))
        {
            if (Path.GetFileName(file) == nameof(ScenarioTests) + ".cs")
                continue;
            string code = Regex.Replace(File.ReadAllText(file), @"//.*", "");
            foreach (Match m in Regex.Matches(code, @"\bScenario\.([A-Z]\w*)\b"))
                used.Add(Enum.Parse<Scenario>(m.Groups[1].Value));
        }
        foreach (var (child, starter) in StartedByAnother)
            if (used.Contains(starter))
                used.Add(child);
        Assert.Empty(Enum.GetValues<Scenario>().Where(s => !used.Contains(s)).Select(s => s.Name()));
    }

    [Fact]
    public void TheCheckerScriptRunsRegisteredScenarios()
    {
        string script = File.ReadAllText(Path.Combine(Job.Root, "tests", "checkers.sh"));
        var named = Regex.Matches(script, @"(?m)^\s*JOBS=\(([^)]*)\)|^\s*for job in ([^;]*); do")
            .SelectMany(m => (m.Groups[1].Success ? m.Groups[1].Value : m.Groups[2].Value).Split(' ', StringSplitOptions.RemoveEmptyEntries))
            .Select(n => n.Trim('"'))
            .Where(n => !n.StartsWith('$'))
            .ToList();
        Assert.True(named.Count >= 5, $"found only {named.Count} scenario names in tests/checkers.sh");
        Assert.Empty(named.Except(Registered()));
    }

    [Fact]
    public void AnUnknownScenarioIsAnError()
    {
        Job.Result r = Job.Run("dotnet", $"{Job.ScenariosProgram} no-such-scenario", 60);
        Assert.Equal(2, r.ExitCode);
        Assert.Contains("usage", r.Output);
        Assert.Contains(Scenario.AnySourceTag.Name(), r.Output); // the usage lists the names
    }
}
