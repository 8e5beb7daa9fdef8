using Scenarios;
using Xunit;

namespace System.MP.Tests;

/// <summary>
/// The public API under a seeded stream of 10^5 calls per rank with random and boundary
/// arguments (scenario api-fuzz, tests/Scenarios/WholeApi/ApiFuzz.cs): only the documented exceptions,
/// no write outside a receive's slice, no hang, and the ranks still agree afterwards.
/// </summary>
public class ApiFuzzTests
{
    [Theory]
    [InlineData(2, false, false)]
    [InlineData(2, true, false)]
    [InlineData(2, false, true)]
    [InlineData(2, true, true)]
    public void TenToTheFiveCallsPerRankRaiseOnlyDocumentedExceptions(int ranks, bool hosted, bool openMpi)
    {
        Job.Result r = Job.RunScenario(Scenario.ApiFuzz, ranks, timeoutSeconds: 300, hosted: hosted,
                                       env: new Dictionary<string, string> { ["MOTOR_API_FUZZ_SEED"] = (1 + (hosted ? 1 : 0) + (openMpi ? 2 : 0)).ToString() },
                                       launcher: openMpi ? Job.Launcher.OpenMpi : Job.Launcher.Mpich);
        Assert.Matches(@"api-fuzz rank 0: 100000 calls \(seed \d+\): \d+ valid, \d+ refused", r.Output);
        Assert.Matches(@"api-fuzz rank 1: 100000 calls \(seed \d+\): \d+ valid, \d+ refused", r.Output);
    }
}
