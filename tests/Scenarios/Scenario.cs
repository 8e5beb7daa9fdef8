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
    // Buffer point-to-point (PointToPoint/PointToPointBuffers.cs)
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
    Issend,
    SendrecvReplace,
    MprobeTyped,
    ScalarSendRecvIRecv, // PointToPoint/ScalarForms.cs

    // Use refused before MPI: bad arguments, a freed communicator, calls after shutdown (Failures/RefusedBeforeMpi.cs)
    BadArgs,
    FreedCommunicator,
    AfterShutdown,

    // The runtime's own exceptions in a rank under MPI (Failures/ManagedExceptions.cs)
    ManagedExceptions,

    // Requests dropped or disposed before they complete (Requests/DroppedRequests.cs)
    DroppedRequest,
    DroppedSelfSend,
    DroppedStatusReader,

    // Pooled request state: spent and stale requests refused, dropped ones reclaimed (Requests/RequestReuse.cs)
    RequestReuse,

    // Requests posted as entries of blocks while they are completed in sets (Requests/RequestBlocks.cs)
    RequestBlocks,

    // Buffer collectives (Collectives/Collectives.cs); the last two on 3 ranks
    CollReduce,
    CollMove,
    CollVector,
    CollUserop,
    CollNonblocking,
    CollBadArgs,
    CollScans,
    CollReduceScatter,
    CollVectorInFlight,
    CollScalars,
    CollUserStructs,
    CollUnevenBadArgs,
    CollReduceScatterEmptyBlock,
    CollIntercommVector,

    // The v-collectives' packed blocks and null arguments, intercommunicator roots without buffers (Collectives/VectorDefaults.cs)
    CollVectorDefaults,
    CollInterRootsWithoutBuffers,
    CollSlicesInPlace,

    // Groups and Cartesian topologies (Communicators/Communicators.cs)
    Groups,
    Cartesian,

    // Intercommunicators and dynamic processes (Dynamic/Dynamic.cs)
    Intercomm,
    Spawn,
    SpawnChild,
    PortServer,
    PortClient,
    Names,

    // The GC extension, and the GC while a rank waits (GcExtension/GcExtension.cs)
    GcTorture,
    GcBlockingPointToPoint,
    GcPinsInFlight,
    PinnedHeapBuffers,
    GcLargeArrays,
    GcGen0Budget,
    GcMarkCompletesAnError,
    GcNotStarved,
    GcMatchedReceiveInFlight,

    // The motor VM (Runtime/Hosting.cs)
    HostedBinding,
    EnvironmentExit,
    UnhandledBeforeMpi,
    MeterOnDemand,
    ThreadLevelFromSettings,
    ConsoleFirstLine,

    // The MPI profile, timeline and EventSource events (Diagnostics/ProfileKnown.cs)
    ProfileKnown,
    ProfileListener,

    // Errors raised inside MPI (Failures/ErrorsInsideMpi.cs; Failures/ErrorsInsideMpiOnDemand.cs,
    // on the MPI library with failures a test arms)
    MpiErrors,
    MpiErrorsInter,
    MpiFaults,
    MpiFaultsAsync,

    // Object operations (Objects/Objects.cs; Transport/ObjectFuzz.cs: hostile payloads through MPI)
    ObjectsP2p,
    ObjectsCollectives,
    ObjectsReject,
    ObjectsNonblocking,
    ObjectsChunked,
    ObjectsBadArgs,
    ObjectsIntercomm,
    ObjectsFuzz,
    ObjectsCollections,

    // The whole API under random calls (WholeApi/ApiFuzz.cs)
    ApiFuzz,

    // A long run whose resources must stay flat (WholeApi/Soak.cs)
    Soak,

    // Deadlocks and long waits for the hang report (Failures/Hangs.cs)
    HangRecvRecv,
    HangBcastBarrier,
    HangServedLate,
    HangSendRecvTags,

    // A rank that dies, exits, aborts or throws ends the whole job (Failures/DyingRanks.cs)
    FaultRecv,
    FaultCollective,
    FaultWindow,
    FaultExitEarly,
    FaultThrow,
    FaultLinkDown,
    Abort,
    Unhandled,

    // Persistent requests (Requests/Persistent.cs)
    PersistentHalo,
    PersistentGcTorture,
    PersistentDropped,
    PersistentMisuse,
    PersistentCollectives,

    // One-sided communication (OneSided/Rma.cs)
    RmaOperations,
    RmaGcTorture,
    RmaMisuse,
    RmaDynamic,
    RmaDynamicGcTorture,
    RmaOrdinaryArray, // OneSided/RmaOrdinaryArray.cs

    // Parallel I/O (IO/Files.cs)
    FilesRoundTrip,
    FilesNonblocking,
    FilesErrors,
    FilesOffsetUnits,
    FilesSubarrayViews,
    FilesInBackground,

    // Graph topologies and neighborhood collectives (Communicators/Topologies.cs)
    TopologyGraphs,
    TopologyNeighborhood,
    TopologyDirected,

    // The request path: GCHandles per operation, mixed sets, some of a set completed (Requests/RequestPath.cs)
    RequestPathPins,
    RequestPathMixedSets,
    RequestPathFullTable,
    RequestPathWaitSome,

    // RequestList: windows posted into a reusable list, its errors, lists given up (Requests/RequestLists.cs)
    RequestListWindows,
    RequestListErrors,
    RequestListAbandoned,

    // MPI-4: sessions, partitioned communication, persistent v-collectives, spawn hints (Runtime/Mpi4.cs)
    Mpi4Sessions,
    Mpi4SessionsAlone,
    Mpi4Partitioned,
    Mpi4PersistentCollectives,
    Mpi4SpawnInfo,
    Mpi4SpawnInfoChild,
    Mpi4SpawnMultiple,
    Mpi4SpawnMultipleChild,
    Mpi4LargeCount,
    Mpi4Supports,

    // Awaitable requests and thread level Multiple (Requests/Async.cs)
    AsyncAwait,
    AsyncStress,
    AsyncBelowMultiple,
    AsyncShutdownPending,

    // Object reductions, all-to-all and v-forms; communicator attributes (Objects/ObjectCollectives.cs)
    ObjectCollectivesReductions,

    // Symmetric OBcast, OSendRecv, OScatter of elements, element-wise ops, Op.Create over classes, intercommunicators (Objects/ObjectForms.cs)
    ObjectEverydayForms,
    CommunicatorAttributes,

    // ORecv's first message in one posted receive (Objects/ObjectEager.cs)
    ObjectsEagerBoundary,
    ObjectsEagerThreads,
    ObjectsEagerTrimmed,

    // Receives and probes with AnyTag beside a large object's continuation pieces (Transport/ReservedTags.cs)
    ObjectsAnyTag,
    // A nonblocking receive with AnyTag that takes a piece of an object arriving on another thread (Transport/PiecesTaken.cs)
    ObjectsPiecesTaken,

    // Motor ranks beside C, Fortran and Python ranks in MPMD jobs (Interop/MixedJobs.cs)
    MixedWorld,
    // Motor ranks that make no call with the other program's ranks, so each ends on its own (Interop/MixedJobs.cs)
    MixedApart,

    // Communicators across the native boundary: MPI handles in C and Fortran form (Communicators/NativeComms.cs)
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
