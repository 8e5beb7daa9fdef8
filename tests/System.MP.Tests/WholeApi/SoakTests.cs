using Scenarios;
using System.Text.RegularExpressions;
using Xunit;
using Xunit.Abstractions;

namespace System.MP.Tests;

/// <summary>
/// The bounded soak (scenario soak, tests/Scenarios/WholeApi/Soak.cs): 2 ranks run nonblocking windows
/// with dropped and disposed requests, object round trips and communicators created and freed;
/// after the warm-up and at the end, the core's request slots, open MPI requests, orphans,
/// communicators and System.MP's pinned handles must be exactly back, and RSS, the managed heap,
/// the runtime's GC handles and the slot table's high-water mark within stated tolerances.  The
/// figures appear in the test output (dotnet test --logger "console;verbosity=detailed").
/// tests/soak.sh runs the long version (10^7 operations).
/// </summary>
public class SoakTests(ITestOutputHelper output)
{
    private static readonly string[] s_exact =
        ["System.MP pinned handles", "request slots in use", "open MPI requests", "orphaned requests", "communicators"];

    // A few seconds per mode: 2 * 10^5 nonblocking operations, 2000 round trips, 100 communicators.
    private const int Ops = 200_000, Objects = 2_000, Comms = 100;

    [Theory]
    [InlineData(false, false)]
    [InlineData(true, false)]
    [InlineData(false, true)]
    [InlineData(true, true)]
    public void FiguresAreFlatAfterTheWarmUp(bool hosted, bool openMpi)
    {
        var env = new Dictionary<string, string>
        {
            ["MOTOR_SOAK_OPS"] = Ops.ToString(),
            ["MOTOR_SOAK_OBJECTS"] = Objects.ToString(),
            ["MOTOR_SOAK_COMMS"] = Comms.ToString(),
        };
        Job.Result r = Job.RunScenario(Scenario.Soak, 2, timeoutSeconds: 300, hosted: hosted, env: env,
                                    launcher: openMpi ? Job.Launcher.OpenMpi : Job.Launcher.Mpich);
        foreach (string line in r.Output.Split('\n'))
            if (line.StartsWith("soak rank ", StringComparison.Ordinal))
                output.WriteLine(line.TrimEnd());
        for (int rank = 0; rank < 2; rank++)
        {
            Match done = Regex.Match(r.Output, $@"soak rank {rank}: (\d+) nonblocking ops \(\d+ dropped, \d+ disposed\), {Objects} object round trips");
            Assert.True(done.Success && long.Parse(done.Groups[1].Value) > Ops * 99 / 100, $"rank {rank} did not report its operations:\n{r.Output}");
            foreach (string figure in s_exact)
            {
                Match m = Regex.Match(r.Output, $@"soak rank {rank} figure {Regex.Escape(figure)}: warm-up (\d+), end (\d+)");
                Assert.True(m.Success, $"rank {rank} printed no figure '{figure}':\n{r.Output}");
                Assert.Equal(m.Groups[1].Value, m.Groups[2].Value);
            }
            Assert.Matches($@"soak rank {rank} figure rss KiB: warm-up \d+, end \d+", r.Output);
            Assert.Matches($@"soak rank {rank} figure runtime GC handles: warm-up \d+, end \d+", r.Output);
        }
    }
}
