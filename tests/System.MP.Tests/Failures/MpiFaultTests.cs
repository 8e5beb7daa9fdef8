using Scenarios;
using Xunit;

namespace System.MP.Tests;

/// <summary>
/// Failures raised inside MPI at the calls a real library cannot be made to fail on demand
/// (scenario mpi-faults): the job runs on the MPI library with failures the scenario arms
/// (tests/native/mpi_faults.c, built next to the core as libmpi-faults.so and
/// libmpi-faults-ompi.so, given as MOTOR_MPI_LIBRARY).  Point-to-point, list, blocking, matched,
/// persistent, partitioned and collective posts, communicator and window creation, one-sided
/// calls, and completions that fail part of a set: on both cores, in library mode and under
/// motor, and with the hang report on (blocking calls in two steps); and the progress engine's
/// MPI_Testsome (scenario mpi-faults-async).
/// </summary>
public class MpiFaultTests
{
    public static TheoryData<bool, bool, bool> Variants() => new()
    {
        { false, false, false },
        { true, false, false },
        { true, false, true },
        { false, true, false },
        { true, true, false },
    };

    [Theory]
    [MemberData(nameof(Variants))]
    public void FailuresInsideMpiLeaveNothingBehind(bool hosted, bool openMpi, bool hangReport)
    {
        string library = Path.Combine(Job.Root, "build", "native", "tests", openMpi ? "libmpi-faults-ompi.so" : "libmpi-faults.so");
        Assert.True(File.Exists(library), $"{library} is missing: build native first (./build.sh build)");
        var env = new Dictionary<string, string> { ["MOTOR_MPI_LIBRARY"] = library };
        if (hangReport)
            env["MOTOR_HANG_REPORT"] = "600";
        Job.RunScenario(Scenario.MpiFaults, 2, hosted: hosted, env: env, launcher: openMpi ? Job.Launcher.OpenMpi : Job.Launcher.Mpich);
    }

    /// <summary>
    /// The progress engine's MPI_Testsome failing inside MPI, once and for good (scenario
    /// mpi-faults-async, thread level Multiple): awaited receives, alone and in a set, still
    /// complete with their data, each failure counted once, nothing left.
    /// </summary>
    [Theory]
    [MemberData(nameof(AsyncTests.CoresAndModes), MemberType = typeof(AsyncTests))]
    public void FailedTestsomeInTheProgressEngineLeavesNoAwaitBehind(bool hosted, bool openMpi)
    {
        string library = Path.Combine(Job.Root, "build", "native", "tests", openMpi ? "libmpi-faults-ompi.so" : "libmpi-faults.so");
        Assert.True(File.Exists(library), $"{library} is missing: build native first (./build.sh build)");
        var env = new Dictionary<string, string> { ["MOTOR_MPI_LIBRARY"] = library };
        if (!hosted)
            env["SCENARIOS_THREAD_LEVEL"] = "Multiple";
        Job.RunScenario(Scenario.MpiFaultsAsync, 2, hosted: hosted, env: env, motorOptions: hosted ? "--thread-level multiple" : "",
                        launcher: openMpi ? Job.Launcher.OpenMpi : Job.Launcher.Mpich);
    }
}
