using Scenarios;
using Xunit;

namespace System.MP.Tests;

/// <summary>
/// Every buffer collective (Communicator.Collectives.cs, Op.cs): reductions, data movement,
/// the vector variants, user operations, nonblocking collectives and argument checks, on 1, 2, 3
/// and 4 ranks (tests/Scenarios/Collectives.cs), and a cross-section on the Open MPI core,
/// checking actual values.
/// </summary>
public class CollectiveTests
{
    public static TheoryData<Scenario, int, bool, bool> Jobs()
    {
        // scenario, ranks, under motor, on the Open MPI core
        var data = new TheoryData<Scenario, int, bool, bool>();
        foreach (Scenario scenario in new[] { Scenario.CollReduce, Scenario.CollMove, Scenario.CollVector, Scenario.CollUserop,
                                              Scenario.CollNonblocking, Scenario.CollBadArgs })
            for (int ranks = 1; ranks <= 4; ranks++)
                data.Add(scenario, ranks, false, false);
        data.Add(Scenario.CollReduce, 2, false, true);
        data.Add(Scenario.CollVector, 2, true, true);
        // Open MPI computes on with one array as send and recv (MPICH refuses it) and runs no user op
        // after a truncated receive: both libraries must see the same refusals and clean state.
        data.Add(Scenario.CollBadArgs, 2, false, true);
        data.Add(Scenario.CollUserop, 2, true, true);
        return data;
    }

    [Theory]
    [MemberData(nameof(Jobs))]
    public void MultiRank(Scenario scenario, int ranks, bool hosted, bool openMpi)
    {
        Job.Result r = Job.RunScenario(scenario, ranks, hosted: hosted, launcher: openMpi ? Job.Launcher.OpenMpi : Job.Launcher.Mpich);
        Assert.DoesNotContain("leaked", r.Output); // MPI objects are freed before finalize
    }
}
