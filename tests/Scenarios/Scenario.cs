namespace Scenarios;

/// <summary>
/// Every scenario of this program, named once.  The Scenarios program registers each
/// (<c>Register</c> in the file that holds it), and the xUnit project, which links this
/// file, runs them by these values, so a misspelt name does not compile.  On the command
/// line a scenario is its value in lower case with a dash between words
/// (<see cref="Scenario.AnySourceTag"/> is <c>any-source-tag</c>): see <see cref="ScenarioNames"/>.
/// ScenarioTests checks that every value is registered and run by some test.
/// </summary>
public enum Scenario
{
    // Buffer point-to-point (PointToPointBuffers.cs)
    Types,
    ZeroLength,
    Procnull,
    AnySourceTag,
    Ordering,
    Probe,
    Mprobe,
    Nonblocking,
    Cancel,
    Syncsend,
    Truncate,
    SendrecvRing,
    DupSplit,

    // Bad input, managed exceptions, the GC while waiting, lifecycle (Robustness.cs)
    BadArgs,
    ManagedExceptions,
    GcNotStarved,
    AfterShutdown,
    DroppedRequest,
    DroppedSelfSend,
    Abort,
    Unhandled,

    // Collectives, groups and topologies (Collectives.cs, Communicators.cs)
    CollReduce,
    CollMove,
    CollVector,
    CollUserop,
    CollNonblocking,
    CollBadArgs,
    Groups,
    Cartesian,

    // Intercommunicators and dynamic processes (Dynamic.cs)
    Intercomm,
    Spawn,
    SpawnChild,
    PortServer,
    PortClient,
    Names,

    // The GC extension (GcExtension.cs)
    GcTorture,
    GcBlockingPointToPoint,
    GcPinsInFlight,
    PinnedHeapBuffers,
    GcLargeArrays,
    GcGen0Budget,
    GcMarkCompletesAnError,

    // The motor VM (Hosting.cs)
    HostedBinding,
    EnvironmentExit,
    UnhandledBeforeMpi,
    MeterOnDemand,

    // Errors inside MPI (MpiErrors.cs; MpiFaults.cs, on the library with armed failures)
    MpiErrors,
    MpiErrorsInter,
    MpiErrorsFreed,
    MpiFaults,
    MpiFaultsAsync,

    // Object operations (Objects.cs, ObjectFuzz.cs)
    ObjectsP2p,
    ObjectsCollectives,
    ObjectsReject,
    ObjectsNonblocking,
    ObjectsChunked,
    ObjectsBadArgs,
    ObjectsIntercomm,
    ObjectsFuzz,

    // The whole API under random calls (ApiFuzz.cs)
    ApiFuzz,

    // A long run whose resources must stay flat (Soak.cs)
    Soak,

    // Deadlocks and long waits for the hang report (Hangs.cs)
    HangRecvRecv,
    HangBcastBarrier,
    HangServedLate,
    HangSendRecvTags,

    // Faults that must end the whole job (Faults.cs)
    FaultRecv,
    FaultCollective,
    FaultWindow,
    FaultExitEarly,
    FaultThrow,
    FaultLinkDown,

    // Persistent requests (Persistent.cs)
    PersistentHalo,
    PersistentGcTorture,
    PersistentDropped,
    PersistentMisuse,
    PersistentCollectives,

    // One-sided communication (Rma.cs)
    RmaOperations,
    RmaGcTorture,
    RmaMisuse,
    RmaDynamic,
    RmaDynamicGcTorture,

    // The rest of point-to-point and the buffer collectives (Remainder.cs)
    RemainderTwoRanks,
    RemainderUneven,

    // Parallel I/O (Files.cs)
    FilesRoundTrip,
    FilesNonblocking,
    FilesErrors,

    // Graph topologies and neighborhood collectives (Topologies.cs)
    TopologyGraphs,
    TopologyNeighborhood,
    TopologyDirected,

    // The request path: GCHandles per operation, mixed sets (RequestPath.cs)
    RequestPathPins,
    RequestPathMixedSets,
    RequestPathFullTable,

    // RequestList: windows posted into a reusable list, its errors, lists given up (RequestLists.cs)
    RequestListWindows,
    RequestListErrors,
    RequestListAbandoned,

    // MPI-4: sessions, partitioned communication, persistent v-collectives, spawn hints (Mpi4.cs)
    Mpi4Sessions,
    Mpi4SessionsAlone,
    Mpi4Partitioned,
    Mpi4PersistentCollectives,
    Mpi4SpawnInfo,
    Mpi4SpawnInfoChild,
    Mpi4SpawnMultiple,
    Mpi4SpawnMultipleChild,
    Mpi4LargeCount,

    // Awaitable requests and thread level Multiple (Async.cs)
    AsyncAwait,
    AsyncStress,
    AsyncBelowMultiple,

    // Object reductions, all-to-all and v-forms; communicator attributes (ObjectCollectives.cs)
    ObjectCollectivesReductions,
    CommunicatorAttributes,

    // ORecv's first message in one posted receive (ObjectEager.cs)
    ObjectsEagerBoundary,
    ObjectsEagerThreads,

    // Receives and probes with AnyTag beside a large object's continuation pieces (ReservedTags.cs)
    ObjectsAnyTag,

    // Motor ranks beside C, Fortran and Python ranks in MPMD jobs (MixedJobs.cs)
    MixedWorld,
    // Motor ranks that make no call with the other program's ranks, so each ends on its own (MixedJobs.cs)
    MixedApart,

    // Communicators across the native boundary: MPI handles in C and Fortran form (NativeComms.cs)
    NativeComm,
}

/// <summary>A scenario's command-line name: <c>AnySourceTag</c> is <c>any-source-tag</c>.</summary>
internal static class ScenarioNames
{
    internal static string Name(this Scenario scenario)
    {
        string pascal = scenario.ToString();
        var name = new System.Text.StringBuilder(pascal.Length + 4);
        foreach (char ch in pascal)
        {
            if (char.IsUpper(ch) && name.Length > 0)
                name.Append('-');
            name.Append(char.ToLowerInvariant(ch));
        }
        return name.ToString();
    }

    internal static bool TryParse(string name, out Scenario scenario)
    {
        foreach (Scenario s in Enum.GetValues<Scenario>())
        {
            if (s.Name() == name)
            {
                scenario = s;
                return true;
            }
        }
        scenario = default;
        return false;
    }
}
