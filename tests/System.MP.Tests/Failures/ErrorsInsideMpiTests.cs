using Scenarios;
using Xunit;

namespace System.MP.Tests;

/// <summary>
/// Errors raised inside MPI, provoked over MPI on 2-3 ranks (scenarios mpi-errors and
/// mpi-errors-inter: truncations, an intercommunicator root with wrong sizes, a Cartesian grid
/// over an intercommunicator): the specific exception with MPI's class and string, one failing
/// MPI call each, and a communicator that keeps working — on both cores, in library mode and
/// under motor.  A freed communicator never reaches MPI (mpi-errors-freed): refused with no
/// MPI call or operation counted in the core.
/// </summary>
public class MpiErrorTests
{
    public static TheoryData<Scenario, int, bool, bool> Variants()
    {
        var data = new TheoryData<Scenario, int, bool, bool>();
        foreach (Scenario scenario in new[] { Scenario.MpiErrors, Scenario.MpiErrorsInter, Scenario.MpiErrorsFreed })
            foreach (var (ranks, hosted, openMpi) in new[] { (2, false, false), (2, true, false), (3, false, false), (2, false, true), (2, true, true) })
                data.Add(scenario, ranks, hosted, openMpi);
        return data;
    }

    [Theory]
    [MemberData(nameof(Variants))]
    public void FailuresInsideMpiAreReportedOnceAndTheCommunicatorGoesOn(Scenario scenario, int ranks, bool hosted, bool openMpi) =>
        Job.RunScenario(scenario, ranks, hosted: hosted, launcher: openMpi ? Job.Launcher.OpenMpi : Job.Launcher.Mpich);
}
