using Scenarios;
using Xunit;

namespace System.MP.Tests;

/// <summary>
/// A rank's output under Open MPI's mpirun, which gives each rank a pseudo-terminal, carries no
/// terminal control codes (System.MP's Runtime/RankConsole.cs): with TERM naming a real terminal
/// (xterm, as in a user's shell), the first line a rank prints, before it touches MPI, is its text
/// alone, in library mode and under motor.  MPICH's Hydra gives ranks pipes and is checked too.
/// </summary>
public class RankConsoleTests
{
    public static TheoryData<bool, bool> CoresAndModes() => Job.CoresAndModes();

    [Theory]
    [MemberData(nameof(CoresAndModes))]
    public void TheFirstLineIsTheTextAlone(bool hosted, bool openMpi)
    {
        Job.Result r = Job.RunScenario(Scenario.ConsoleFirstLine, 2, hosted: hosted,
                                       env: new Dictionary<string, string> { ["TERM"] = "xterm" },
                                       launcher: openMpi ? Job.Launcher.OpenMpi : Job.Launcher.Mpich);
        string[] lines = r.Output.Split('\n');
        for (int rank = 0; rank < 2; rank++)
        {
            string line = Assert.Single(lines, l => l.Contains($"first line of rank {rank}", StringComparison.Ordinal));
            Assert.Equal($"first line of rank {rank}", line.TrimEnd('\r'));
        }
        Assert.DoesNotContain('\x1b', r.Output);
    }
}
