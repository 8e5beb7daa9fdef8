using Scenarios;
using Xunit;

namespace System.MP.Tests;

/// <summary>
/// The object operations over MPI jobs (Communicator.Objects.cs, Communicator.SplitRepresentation.cs,
/// ObjectRequest.cs; tests/Scenarios/Objects/Objects.cs): OSend/ORecv, the object collectives, refusals,
/// OISend/OIRecv, argument checks, intercommunicators and chunked payloads, in library mode,
/// under motor and on the Open MPI core.  The serializer alone is in <see cref="ObjectTransportTests"/>.
/// </summary>
public class ObjectOperationTests
{
    public static TheoryData<Scenario, int, bool, bool> Jobs => new()
    {
        // scenario, ranks, under motor, on the Open MPI core
        { Scenario.ObjectsP2p, 2, false, false },
        { Scenario.ObjectsCollectives, 3, false, false },
        { Scenario.ObjectsCollectives, 2, false, false },
        { Scenario.ObjectsReject, 2, false, false },
        { Scenario.ObjectsNonblocking, 2, false, false },
        { Scenario.ObjectsBadArgs, 2, false, false },
        { Scenario.ObjectsIntercomm, 2, false, false },
        { Scenario.ObjectsIntercomm, 3, false, false },
        { Scenario.ObjectsP2p, 2, true, false },
        { Scenario.ObjectsCollectives, 3, true, false },
        { Scenario.ObjectsNonblocking, 2, true, false },
        { Scenario.ObjectsP2p, 2, true, true },
        { Scenario.ObjectsP2p, 2, false, true },
    };

    [Theory]
    [MemberData(nameof(Jobs))]
    public void MultiRank(Scenario scenario, int ranks, bool hosted, bool openMpi) =>
        Job.RunScenario(scenario, ranks, hosted: hosted, launcher: openMpi ? Job.Launcher.OpenMpi : Job.Launcher.Mpich);

    /// <summary>
    /// List, HashSet and Dictionary fields (Scenarios/Objects/Objects.cs, Collections): OSend/ORecv, OIRecv and OBcast with
    /// exact contents, in both modes, both MPIs, with the generated codecs and with the ones built at run time, and chunked.
    /// </summary>
    [Theory]
    [InlineData(false, false, false, 0)]
    [InlineData(false, false, true, 0)]
    [InlineData(true, false, false, 0)]
    [InlineData(true, false, true, 0)]
    [InlineData(false, true, false, 0)]
    [InlineData(true, true, true, 0)]
    [InlineData(false, false, false, 256)]
    public void CollectionFieldsTravel(bool hosted, bool openMpi, bool runTimeCodecs, int chunkBytes)
    {
        var env = new Dictionary<string, string>();
        if (runTimeCodecs)
            env["MOTOR_OBJECT_CODECS"] = "runtime";
        if (chunkBytes > 0)
            env["MOTOR_OBJECT_CHUNK_BYTES"] = chunkBytes.ToString();
        Job.RunScenario(Scenario.ObjectsCollections, 2, hosted: hosted, launcher: openMpi ? Job.Launcher.OpenMpi : Job.Launcher.Mpich, env: env);
    }

    /// <summary>With 256-byte chunks every payload takes several messages or collective rounds (staged when displacements pass the chunk size).</summary>
    [Fact]
    public void ChunkedPayloadsTravel() =>
        Job.RunScenario(Scenario.ObjectsChunked, 3, env: new Dictionary<string, string> { ["MOTOR_OBJECT_CHUNK_BYTES"] = "256" });

    /// <summary>
    /// ORecv takes the first message with one posted receive: payloads at the first-message size and one
    /// byte either side, large ones that continue on the channel, a too-long typed message refused, other
    /// tags and communicators left alone; by default (64 KiB) and with 256-byte chunks, both cores and modes.
    /// </summary>
    [Theory]
    [InlineData(false, false, null)]
    [InlineData(false, false, "256")]
    [InlineData(true, false, null)]
    [InlineData(true, true, "256")]
    [InlineData(false, true, null)]
    public void FirstMessageInOnePostedReceive(bool hosted, bool openMpi, string? chunkBytes) =>
        Job.RunScenario(Scenario.ObjectsEagerBoundary, 2, hosted: hosted, launcher: openMpi ? Job.Launcher.OpenMpi : Job.Launcher.Mpich,
                        env: chunkBytes is null ? null : new Dictionary<string, string> { ["MOTOR_OBJECT_CHUNK_BYTES"] = chunkBytes });

    /// <summary>
    /// The first-message buffer a receiving thread keeps is freed at gen-2 collections once the thread is
    /// idle, and round trips after the trim (small and chunked payloads) work; both modes and cores.
    /// </summary>
    [Theory]
    [InlineData(false, false)]
    [InlineData(true, false)]
    [InlineData(true, true)]
    public void ReceiveBuffersFreedAtGen2AndReceivesAfterward(bool hosted, bool openMpi) =>
        Job.RunScenario(Scenario.ObjectsEagerTrimmed, 2, hosted: hosted, launcher: openMpi ? Job.Launcher.OpenMpi : Job.Launcher.Mpich);

    /// <summary>Several threads in ORecv at once (thread level Multiple), each on its own tag from AnySource.</summary>
    [Theory]
    [InlineData(false, false)]
    [InlineData(true, true)]
    public void ConcurrentObjectReceivers(bool hosted, bool openMpi) =>
        Job.RunScenario(Scenario.ObjectsEagerThreads, 2, hosted: hosted, launcher: openMpi ? Job.Launcher.OpenMpi : Job.Launcher.Mpich,
                        env: hosted ? null : new Dictionary<string, string> { ["SCENARIOS_THREAD_LEVEL"] = "Multiple" },
                        motorOptions: hosted ? "--thread-level multiple" : "");

    /// <summary>
    /// Receives and probes with AnyTag (Recv, Probe, IProbe, MProbe, IMProbe, SendRecv, ORecv) while another
    /// thread receives a 1 MiB object: they never get or report a continuation piece, and the object arrives
    /// whole; its pieces one message (64 KiB first message) and a thousand (1 KiB chunks).
    /// </summary>
    [Theory]
    [InlineData(false, false, "1024")]
    [InlineData(false, false, null)]
    [InlineData(true, false, "1024")]
    [InlineData(true, false, null)]
    [InlineData(false, true, "1024")]
    [InlineData(true, true, null)]
    public void AnyTagNeverMeetsAContinuationPiece(bool hosted, bool openMpi, string? chunkBytes)
    {
        var env = new Dictionary<string, string>();
        if (!hosted)
            env["SCENARIOS_THREAD_LEVEL"] = "Multiple";
        if (chunkBytes is not null)
            env["MOTOR_OBJECT_CHUNK_BYTES"] = chunkBytes;
        Job.RunScenario(Scenario.ObjectsAnyTag, 2, hosted: hosted, launcher: openMpi ? Job.Launcher.OpenMpi : Job.Launcher.Mpich,
                        env: env, motorOptions: hosted ? "--thread-level multiple" : "");
    }

    /// <summary>
    /// A nonblocking receive with AnyTag posted while another thread receives an object's pieces
    /// from the same rank waits until they are in, then gets the next message, by each completion
    /// path; one that MPI gives a piece nevertheless (posted before the pieces are announced, or
    /// with the wait switched off) fails saying so, and the object receive fails too, after taking
    /// the rest of its payload out of matching; the next message still arrives.
    /// </summary>
    [Theory]
    [InlineData(false, false, false)]
    [InlineData(true, false, false)]
    [InlineData(true, true, false)]
    [InlineData(false, false, true)]
    [InlineData(true, false, true)]
    public void AnyTagReceiveBesideArrivingPiecesWaitsOrFailsWithItsObject(bool hosted, bool openMpi, bool noWait)
    {
        var env = new Dictionary<string, string> { ["MOTOR_OBJECT_CHUNK_BYTES"] = "64" };
        if (noWait)
            env["MOTOR_TEST_NO_PIECE_WAIT"] = "1";
        if (!hosted)
            env["SCENARIOS_THREAD_LEVEL"] = "Multiple";
        Job.RunScenario(Scenario.ObjectsPiecesTaken, 2, hosted: hosted, launcher: openMpi ? Job.Launcher.OpenMpi : Job.Launcher.Mpich,
                        env: env, motorOptions: hosted ? "--thread-level multiple" : "");
    }

    /// <summary>Object collectives across an intercommunicator in chunked rounds, on MPICH and, under motor, on Open MPI.</summary>
    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void IntercommunicatorObjectsInChunks(bool openMpiUnderMotor) =>
        Job.RunScenario(Scenario.ObjectsIntercomm, 3, hosted: openMpiUnderMotor,
                        launcher: openMpiUnderMotor ? Job.Launcher.OpenMpi : Job.Launcher.Mpich,
                        env: new Dictionary<string, string> { ["MOTOR_OBJECT_CHUNK_BYTES"] = "256" });
}
