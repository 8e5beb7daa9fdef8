using Scenarios;
using Xunit;

namespace System.MP.Tests;

/// <summary>
/// The runtime's own exceptions in a rank under MPI (tests/Scenarios/Failures/ManagedExceptions.cs):
/// a null dereference and a division by zero, whose signals UCX would take for itself, and an
/// index out of range, each caught where it is thrown, and MPI works afterwards.
/// </summary>
public class ManagedExceptionTests
{
    /// <summary>UCX leaves SIGSEGV and SIGFPE to the runtime (pal_mpi_load.c), and MPI works afterwards.</summary>
    [Theory]
    [InlineData(false, false)]
    [InlineData(true, false)]
    [InlineData(false, true)]
    [InlineData(true, true)]
    public void ManagedExceptionsStillWorkUnderMpi(bool hosted, bool openMpi) =>
        Job.RunScenario(Scenario.ManagedExceptions, 2, hosted: hosted, launcher: openMpi ? Job.Launcher.OpenMpi : Job.Launcher.Mpich);
}
