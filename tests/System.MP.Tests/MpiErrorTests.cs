using Xunit;

namespace System.MP.Tests;

/// <summary>
/// Errors raised inside MPI, provoked over MPI on 2-3 ranks (scenario mpi-errors): the specific
/// exception with MPI's class and string, one failing MPI call each, and a communicator that
/// keeps working — on both cores, in library mode and under motor.
/// </summary>
public class MpiErrorTests
{
    [Theory]
    [InlineData(2, false, false)]
    [InlineData(2, true, false)]
    [InlineData(3, false, false)]
    [InlineData(2, false, true)]
    [InlineData(2, true, true)]
    public void AcrossAnIntercommunicatorToo(int ranks, bool hosted, bool openMpi) =>
        Job.Scenario("mpi-errors-inter", ranks, hosted: hosted, launcher: openMpi ? Job.Launcher.OpenMpi : Job.Launcher.Mpich);

    [Theory]
    [InlineData(2, false, false)]
    [InlineData(2, true, false)]
    [InlineData(3, false, false)]
    [InlineData(2, false, true)]
    [InlineData(2, true, true)]
    public void FailuresInsideMpiAreReportedOnceAndTheCommunicatorGoesOn(int ranks, bool hosted, bool openMpi) =>
        Job.Scenario("mpi-errors", ranks, hosted: hosted, launcher: openMpi ? Job.Launcher.OpenMpi : Job.Launcher.Mpich);
}
