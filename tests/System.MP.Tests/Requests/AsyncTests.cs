using Scenarios;
using Xunit;

namespace System.MP.Tests;

/// <summary>
/// Awaitable requests (MpiRequest.Async.cs, ProgressEngine.cs) as 2-rank jobs
/// (tests/Scenarios/Requests/Async.cs), on the MPICH and Open MPI cores, in library mode and under motor:
/// awaited round trips, WhenAll/WhenAny over every request kind, cancellation, errors raised in
/// MPI, buffers held while awaited, where continuations run, the engine's back-off, and the
/// thread-level-Multiple stress (4 threads per rank); and the error every await gives below
/// Multiple.
/// </summary>
public class AsyncTests
{
    public static TheoryData<bool, bool> CoresAndModes()
    {
        var data = new TheoryData<bool, bool>();
        foreach (bool hosted in new[] { false, true })
            foreach (bool openMpi in new[] { false, true })
                data.Add(hosted, openMpi);
        return data;
    }

    /// <summary>Runs at thread level Multiple: library mode asks Mpi.Init for it, motor its --thread-level option.</summary>
    [Theory]
    [MemberData(nameof(CoresAndModes))]
    public void AwaitAndStressAtMultiple(bool hosted, bool openMpi) =>
        Job.RunScenarios([Scenario.AsyncAwait, Scenario.AsyncStress], 2, hosted: hosted,
                         env: hosted ? null : new Dictionary<string, string> { ["SCENARIOS_THREAD_LEVEL"] = "Multiple" },
                         motorOptions: hosted ? "--thread-level multiple" : "",
                         launcher: openMpi ? Job.Launcher.OpenMpi : Job.Launcher.Mpich);

    /// <summary>Mpi.Shutdown with awaits pending: they fail with InvalidOperationException and the shutdown completes.</summary>
    [Theory]
    [MemberData(nameof(CoresAndModes))]
    public void AwaitsPendingAtShutdownFail(bool hosted, bool openMpi) =>
        Job.RunScenarios([Scenario.AsyncShutdownPending], 2, hosted: hosted,
                         env: hosted ? null : new Dictionary<string, string> { ["SCENARIOS_THREAD_LEVEL"] = "Multiple" },
                         motorOptions: hosted ? "--thread-level multiple" : "",
                         launcher: openMpi ? Job.Launcher.OpenMpi : Job.Launcher.Mpich);

    /// <summary>At the default level (Single) every form of await refuses, naming the level and the remedies.</summary>
    [Theory]
    [MemberData(nameof(CoresAndModes))]
    public void BelowMultipleAwaitingIsRefused(bool hosted, bool openMpi) =>
        Job.RunTwoRanks(Scenario.AsyncBelowMultiple, hosted, openMpi);
}
