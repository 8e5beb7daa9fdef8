using Scenarios;
using Xunit;

namespace System.MP.Tests;

/// <summary>
/// Errors raised inside MPI, provoked over MPI on 2-3 ranks (scenarios mpi-errors and
/// mpi-errors-inter: truncations, an intercommunicator root with wrong sizes, a Cartesian grid
/// over an intercommunicator): the specific exception with MPI's class and string, one failing
/// MPI call each, and a communicator that keeps working — on both cores, in library mode and
/// under motor.  And failures inside MPI at the calls a real library cannot be made to fail on demand (scenario
/// mpi-faults, tests/Scenarios/Failures/ErrorsInsideMpiOnDemand.cs): the job runs on the MPI
/// library with failures the scenario arms (tests/native/mpi_faults.c, built next to the core as
/// libmpi-faults.so and libmpi-faults-ompi.so, given as MOTOR_MPI_LIBRARY).  Point-to-point,
/// list, blocking, matched, persistent, partitioned and collective posts, communicator and window
/// creation, one-sided calls, and completions that fail part of a set: on both cores, in library
/// mode and under motor, and with the hang report on (blocking calls in two steps); and the
/// progress engine's MPI_Testsome (scenario mpi-faults-async).
/// </summary>
public class ErrorsInsideMpiTests
{
    public static TheoryData<Scenario, int, bool, bool> Variants()
    {
        var data = new TheoryData<Scenario, int, bool, bool>();
        foreach (Scenario scenario in new[] { Scenario.MpiErrors, Scenario.MpiErrorsInter })
            foreach (var (ranks, hosted, openMpi) in new[] { (2, false, false), (2, true, false), (3, false, false), (2, false, true), (2, true, true) })
                data.Add(scenario, ranks, hosted, openMpi);
        return data;
    }

    [Theory]
    [MemberData(nameof(Variants))]
    public void FailuresInsideMpiAreReportedOnceAndTheCommunicatorGoesOn(Scenario scenario, int ranks, bool hosted, bool openMpi) =>
        Job.RunScenario(scenario, ranks, hosted: hosted, launcher: openMpi ? Job.Launcher.OpenMpi : Job.Launcher.Mpich);

    public static TheoryData<bool, bool, bool> OnDemandVariants() => new()
    {
        { false, false, false },
        { true, false, false },
        { true, false, true },
        { false, true, false },
        { true, true, false },
    };

    [Theory]
    [MemberData(nameof(OnDemandVariants))]
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
