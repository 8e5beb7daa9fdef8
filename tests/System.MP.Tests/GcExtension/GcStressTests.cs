using System.Text.RegularExpressions;
using Scenarios;
using Xunit;
using Xunit.Abstractions;

namespace System.MP.Tests;

/// <summary>
/// The scenarios that leave buffers with MPI (nonblocking, one-sided, partitioned, awaited) and
/// the object transport, under collections all the time (tests/Scenarios/GcExtension/GcStress.cs): on each
/// rank a thread forces a compacting gen-2 collection every millisecond or so, and the gen-0
/// budget is made small; each scenario runs again until every rank saw
/// <see cref="MinimumForced"/> forced collections during its runs.  2-rank jobs on both cores, in
/// library mode and under motor: the scenarios' own checks compare every element and object
/// received, and each job reports the collections that ran per scenario and rank, which the test
/// checks reached the minimum.  tests/gc-stress.sh runs the whole managed suite this way.
/// </summary>
public class GcStressTests(ITestOutputHelper output)
{
    /// <summary>Forced compacting collections each scenario must see on every rank.</summary>
    private const int MinimumForced = 50;

    /// <summary>The gen-0 budget of the stressed jobs, as DOTNET_GCgen0size reads it (bytes, hex).</summary>
    private const string Gen0Budget = "0x20000";

    /// <summary>The scenarios of each group; partitioned communication only where it exists (not Open MPI 4).</summary>
    private static Scenario[] Group(string group, bool openMpi) => group switch
    {
        "buffers" => openMpi ? [Scenario.Nonblocking, Scenario.RmaOperations, Scenario.GcMatchedReceiveInFlight]
                             : [Scenario.Nonblocking, Scenario.RmaOperations, Scenario.Mpi4Partitioned, Scenario.GcMatchedReceiveInFlight],
        "objects" => [Scenario.ObjectsP2p, Scenario.ObjectsNonblocking, Scenario.ObjectsCollectives],
        "async" => [Scenario.AsyncAwait, Scenario.AsyncStress],
        _ => throw new ArgumentOutOfRangeException(nameof(group), group, "no such group"),
    };

    public static TheoryData<string, bool, bool> Jobs()
    {
        var data = new TheoryData<string, bool, bool>();
        foreach (string group in new[] { "buffers", "objects", "async" })
            foreach (bool hosted in new[] { false, true })
                foreach (bool openMpi in new[] { false, true })
                    data.Add(group, hosted, openMpi);
        return data;
    }

    private static readonly Regex s_report = new(
        @"GC-STRESS (?<scenario>[a-z0-9-]+) rank (?<rank>\d+): (?<runs>\d+) runs, (?<forced>\d+) forced compacting collections, " +
        @"collections gen0 (?<gen0>\d+) gen1 (?<gen1>\d+) gen2 (?<gen2>\d+) \(ephemeral (?<ephemeral>-?\d+)\)",
        RegexOptions.Multiline);

    [Theory]
    [MemberData(nameof(Jobs))]
    public void ScenariosPassUnderConstantCompaction(string group, bool hosted, bool openMpi)
    {
        Scenario[] scenarios = Group(group, openMpi);
        bool multiple = group == "async"; // awaiting needs thread level Multiple
        var env = new Dictionary<string, string>
        {
            [GcStress.Variable] = "1",
            [GcStress.MinimumVariable] = MinimumForced.ToString(),
            ["DOTNET_GCgen0size"] = Gen0Budget,
        };
        if (multiple && !hosted)
            env["SCENARIOS_THREAD_LEVEL"] = "Multiple";
        Job.Result r = Job.RunScenarios(scenarios, 2, timeoutSeconds: 600, hosted: hosted, env: env,
                                        motorOptions: multiple && hosted ? "--thread-level multiple" : "",
                                        launcher: openMpi ? Job.Launcher.OpenMpi : Job.Launcher.Mpich);
        var reports = s_report.Matches(r.Output).ToDictionary(m => (m.Groups["scenario"].Value, int.Parse(m.Groups["rank"].Value)));
        foreach (Scenario scenario in scenarios)
        {
            for (int rank = 0; rank < 2; rank++)
            {
                Assert.True(reports.TryGetValue((scenario.Name(), rank), out Match? m), $"no collection report of {scenario.Name()} rank {rank}:\n{r}");
                output.WriteLine(m.Value);
                long forced = long.Parse(m.Groups["forced"].Value), gen2 = long.Parse(m.Groups["gen2"].Value);
                Assert.True(forced >= MinimumForced, $"{scenario.Name()} rank {rank}: {forced} forced collections, fewer than {MinimumForced}:\n{r}");
                // The collector counts a collection once GC.Collect has returned: one may straddle the first count.
                Assert.True(gen2 >= forced - 1, $"{scenario.Name()} rank {rank}: {gen2} gen-2 collections counted, {forced} forced:\n{r}");
            }
        }
    }

    /// <summary>A setting the program does not understand is refused before MPI starts, naming the variable.</summary>
    [Theory]
    [InlineData("yes", "", "MOTOR_GC_STRESS=yes")]
    [InlineData("1", "many", "MOTOR_GC_STRESS_MIN=many")]
    [InlineData("1", "0", "MOTOR_GC_STRESS_MIN=0")]
    [InlineData("", "50", "MOTOR_GC_STRESS=1")]
    public void BadSettingsAreRefused(string stress, string minimum, string named)
    {
        Job.Result r = Job.Run("dotnet", $"{Job.ScenariosProgram} {Scenario.Nonblocking.Name()}", 60,
                               new Dictionary<string, string> { [GcStress.Variable] = stress, [GcStress.MinimumVariable] = minimum });
        Assert.True(r.ExitCode == 2, r.ToString());
        Assert.Contains(named, r.Output);
        Assert.DoesNotContain("PASS", r.Output);
    }
}
