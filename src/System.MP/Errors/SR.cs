using System.Globalization;

namespace System.MP;

/// <summary>Every user-visible message of System.MP, in one place.</summary>
internal static class SR
{
    internal const string BadCoreTableProperty = "The runtime property {0} has the value '{1}', which is not a core table address.";
    internal const string CoreTableNull = "The message-passing core returned no call table.";
    internal const string CoreManifestMismatch = "The message-passing core and this System.MP were built from different interface lists ({0}). Use the System.MP that ships with this Motor.";
    internal const string CoreAbiMismatch = "The message-passing core speaks ABI version {0} (table of {1} bytes); this System.MP needs version {2} (table of at least {3} bytes). Use the System.MP that ships with this Motor.";
    internal const string CoreLibraryForcedMissing = "The message-passing core named by {0}='{1}' could not be loaded.";
    internal const string CoreLibraryMissing = "The message-passing core (libmpcore.so) was not found; tried: {0}. Run the program with 'motor', keep libmpcore.so next to System.MP.dll, or set {1}.";
    internal const string HostedThreadLevel = "The program asks for MPI thread level {0}, but the motor VM initialized MPI at {1} before Main, and MPI cannot be initialized twice. Set the level where both motor and dotnet read it: <RuntimeHostConfigurationOption Include=\"Motor.ThreadLevel\" Value=\"{2}\" /> in the project (or MOTOR_THREAD_LEVEL={2}, or 'motor --thread-level {2}').";
    internal const string ThreadLevelSetting = "{0} '{1}' is not single, funneled, serialized or multiple.";
    internal const string BadHangReport = "The hang report setting '{0}' (motor --hang-report, or MOTOR_HANG_REPORT) is not SECONDS or SECONDS,abort with SECONDS a positive number.";
    internal const string BadProfileSetting = "The profile setting '{0}' (motor --profile, or MOTOR_PROFILE) is not one of 1, profile, profile:FILE, trace, trace:FILE or events.";
    internal const string ProfileFileUnwritable = "The profile setting '{0}' names the file {1}, which cannot be written: {2}";
    internal const string ProfileFileIsDirectory = "it is a directory.";
    internal const string ProfileWritten = "motor profile: {0} written to {1}";
    internal const string ProfileWriteFailed = "motor profile: the {0} could not be written to {1}: {2}";
    internal const string HangReportAbort = "motor hang report: {0} is still blocked; aborting the job (hang report with abort).";
    internal const string FailedExitAborts = "[rank {0}] exiting with code {1} while MPI is in use; aborting the MPI job so that no rank waits for this one forever.";
    internal const string AwaitThreadLevel = "Awaiting an MPI request needs thread level Multiple (the progress engine calls MPI from its own thread), but MPI was initialized at {0}. Call Mpi.Init(ThreadLevel.Multiple) before any other MPI use; under motor, start the program with 'motor --thread-level multiple' or set the runtime property Motor.ThreadLevel (multiple).";
    internal const string StaleRequest = "This Request has already been completed (by Wait, a successful Test, a set such as WaitAll, or an await) or disposed; a Request completes once, and its slot may now serve a newer operation, which this copy cannot reach.";
    internal const string AwaiterNotPending = "The awaiter has nothing to wait for: await the request (its IsCompleted is read first), do not call OnCompleted directly.";
    internal const string LongestSleepRange = "AsyncProgress.LongestSleep takes a whole number of milliseconds from 1 to 1000.";
    internal const string AlreadyAwaited = "The request is already being awaited with a cancellation token, or by another thread at the same time; await the task of its first WaitAsync.";
    internal const string WhenAnyEmpty = "WhenAny needs at least one request.";
    internal const string FeatureRange = "{0} is not an MpiFeature.";
    internal const string AfterShutdown = "MPI has been shut down (Mpi.Shutdown); no further MPI operations are possible in this process.";
    internal const string NotInitialized = "MPI is not initialized.";
    internal const string RankOutOfRange = "Rank {0} is outside [0, {1}) of this communicator and is not {2}.";
    internal const string TagOutOfRange = "Tag {0} is outside [0, {1}]{2}.";
    internal const string OrAnyTag = " and is not Mpi.AnyTag";
    internal const string OffsetOutOfRange = "Offset {0} is outside the array of length {1}.";
    internal const string CountOutOfRange = "Count {0} is negative or runs past the end of the array (offset {1}, length {2}).";
    internal const string ScalarShortMessage = "The message carried {0} bytes but a {1} needs {2}.";
    internal const string StatusesTooShort = "The statuses span has {0} entries but there are {1} requests.";
    internal const string RequestListFull = "The RequestList is full ({0} operations): complete it (WaitAll, TestAll) before posting more.";
    internal const string NullRequest = "requests[{0}] is null.";
    internal const string PersistentActive = "The persistent request is active: complete its instance (Wait, Test, WaitAll, ...) before starting it again.";
    internal const string RepeatedRequest = "the same request is in the set twice (entries {0} and {1}); MPI would complete it twice.";
    internal const string ThreadLevelRange = "Thread level {0} is not a ThreadLevel value.";
    internal const string SplitColor = "Split color {0} must be non-negative or Mpi.Undefined.";
    internal const string Unhandled = "[rank {0}] Unhandled exception; aborting the MPI job:\n{1}";
    internal const string CoreError = "{0} ({1})";
    internal const string OpNotForType = "The {0} operation is not defined for elements of type {1}.";
    internal const string UserOpThrew = "The user-defined operation threw during the collective; its result is undefined on this rank.";
    internal const string RootOutOfRange = "Root {0} is outside [0, {1}) of this communicator.";
    internal const string BufferTooSmall = "{0} holds {1} elements but this operation needs {2}.";
    internal const string BufferRequiredAtRoot = "{0} is required at the root.";
    internal const string LengthNotMultiple = "{0} has {1} elements, which is not a multiple of the communicator size {2}.";
    internal const string CountsLength = "{0} has {1} entries; it needs one per rank ({2}).";
    internal const string NegativeEntry = "{0}[{1}] is {2}; counts and displacements must not be negative.";
    internal const string BlockPastEnd = "Block {0} ({1}[{0}] = {2} elements at displacement {3}) runs past the end of {4} ({5} elements).";
    internal const string BlocksOverlap = "Blocks {0} and {1} of {2} overlap.";
    internal const string OwnCountMismatch = "{0} has {1} elements but {2}[{3}] (this rank's count) is {4}.";
    internal const string CountsPastBuffer = "{0} holds {1} elements but the blocks of {2} add up to {3}.";
    internal const string NonblockingUserOp = "Nonblocking and persistent collectives take built-in operations only: MPI may run a user-defined operation during any later call. Use the blocking form (Sum, Product, Min and Max of a user struct run as C# operations too).";
    internal const string RankTwice = "Rank {0} is listed twice.";
    internal const string NameTooLong = "A communicator name holds at most 127 bytes of UTF-8.";
    internal const string PeriodsLength = "The array has {0} entries; the grid has {1} dimensions.";
    internal const string DimsPositive = "Every dimension must have a positive extent.";
    internal const string GridTooLarge = "The product of dims exceeds the {0} ranks of the communicator: its first {1} of {2} extents already multiply to {3}.";
    internal const string DimsNegative = "dims[{0}] is {1}: an extent to keep is positive, one to fill in is 0.";
    internal const string DimsNotDivisor = "The positive entries of dims must multiply to a divisor of the node count {0} (MPI-4.0 8.5.2).";
    internal const string CoordinateOutOfRange = "Coordinate {0} is outside [0, {1}).";
    internal const string InterRootOutOfRange = "Root {0} is not Mpi.Root, Mpi.ProcNull or a rank in [0, {1}) of the remote group.";
    internal const string IntraOnly = "{0} is available on intracommunicators only.";
    internal const string SpawnMultipleNone = "SpawnMultiple needs at least one command at the root.";
    internal const string SpawnMultipleCommand = "SpawnMultiple: command {0} is null.";
    internal const string SpawnNullArgument = "A spawned command's arguments may not contain null.";
    internal const string SpawnArgs = "Spawn needs a command and a positive process count at the root.";
    internal const string CollectiveSameArray = "send and recv are the same array, which MPI forbids (MPI-4.0 2.5.4: no aliased buffers); it is refused on every rank, also where one of the two is ignored. Receive into another array, or reduce in place with Allreduce(buffer, op) (MPI_IN_PLACE).";
    internal const string GetAccumulateSameArray = "data and result are the same array, which MPI forbids (the origin and result buffers of MPI_Get_accumulate must not overlap): fetch into another array.";
    internal const string SendRecvSameArray = "SendRecv needs two different arrays (MPI forbids overlapping send and receive buffers); SendRecvReplace sends an array and receives into it.";
    internal const string MessageReceived = "The matched message was already received; a Message is received exactly once.";

    // graph topologies and neighborhood collectives
    internal const string NeighborCountsLength = "{0} has {1} entries; it needs one per neighbour ({2}).";
    internal const string GraphTooLarge = "The graph has {0} nodes but the communicator only {1} ranks.";
    internal const string GraphIndexDecreasing = "index[{0}] = {1} is less than index[{2}] = {3}: index holds cumulative degrees.";
    internal const string GraphNodeNull = "adjacency[{0}] is null: give an empty list for a node without neighbours.";
    internal const string GraphNeighborOutOfRange = "adjacency[{0}][{1}] = {2} is not a node of the graph (0 to {3} - 1).";
    internal const string GraphTooManyEdges = "The adjacency lists hold {0} entries, more than MPI's int count.";
    internal const string GraphEdgesLength = "edges has {0} entries but index ends at {1}: the last cumulative degree is the number of edge entries.";
    internal const string EdgeOutOfRange = "{0}[{1}] = {2} is outside [0, {3}).";
    internal const string WeightsLength = "{0} has {1} entries; there are {2} edges.";
    internal const string NegativeWeight = "{0}[{1}] = {2} is negative; edge weights must not be.";
    internal const string DegreesLength = "degrees has {0} entries but sources has {1}: one degree per source.";
    internal const string DegreesMismatch = "The degrees add up to {0} but destinations has {1} entries.";

    internal const string NotTransportable = "Type {0} may not travel in object operations: only types marked [Transportable], primitives, enums, strings and arrays of those can.";
    internal const string NoCompileTimeCodec = "Type {0} may not travel in this process: it has no codec written at compile time, and without the JIT (NativeAOT) none can be built at run time. The System.MP source generator writes the codec of each [Transportable] class and struct of a C# project that references System.MP, and of its vectors (T[]); it leaves to run time generic types, arrays of arrays, multi-dimensional arrays, types it cannot name and types whose base class is compiled in another assembly (its diagnostic MOTOR005 names them).";
    internal const string BaseNotTransportable = "Type {0} may not travel: its base class {1} is not marked [Transportable].";
    internal const string LowerBounds = "Arrays with non-zero lower bounds ({0}) cannot travel.";
    internal const string PayloadMalformed = "Malformed object payload: {0}";
    internal const string PayloadTruncated = "needs {0} more bytes but only {1} are left.";
    internal const string PayloadCount = "count {0} does not fit in the {1} bytes left.";
    internal const string PayloadMagic = "it does not start with the object-payload signature (was it sent with OSend?).";
    internal const string PayloadLength = "the header says {0} bytes but {1} arrived.";
    internal const string PayloadVersion = "its header flags 0x{0:X} are not those of this wire format (version flags 0x{1:X}, known flag bits: chunked).";
    internal const string PayloadAnnouncedTotal = "the root announced {0} bytes but the payload's header says {1}.";
    internal const string PayloadFirstChunk = "the first message of a chunked payload has {0} bytes of the {1} it announces; it must have exactly the first-chunk size, {2} bytes (MOTOR_OBJECT_CHUNK_BYTES must be the same on every rank), and announce more.";
    internal const string PayloadFirstMessageTooLong = "the first message of a payload has more than {0} bytes, the most an object payload's first message may have (the sender's split makes every first message at most that size; was it sent with a typed send, or with another MOTOR_OBJECT_CHUNK_BYTES?); the message was taken off the wire.";
    internal const string HandleOwnershipUnknown = "ownership must be HandleOwnership.Borrowed or HandleOwnership.Owned.";
    internal const string PayloadContinuationTag = "its continuation tag {0} is outside [{1}, {2}].";
    internal const string PayloadEntry = "type entry {0} is outside [0, {1}).";
    internal const string CollectionComparer = "A {0} with the comparer {1} may not travel: the receiver builds it with the default comparer, so only one that uses the default comparer can (for string keys also StringComparer.Ordinal, which compares the same way).";
    internal const string PayloadSetDuplicate = "the {0} holds its element (key) at index {1} twice.";
    internal const string PayloadNullKey = "the {0} has a null key at index {1}.";
    internal const string PayloadEntryKind = "unknown type-entry kind {0}.";
    internal const string PayloadBuiltin = "unknown built-in type code {0}.";
    internal const string PayloadRank = "array rank {0} is outside [1, 32].";
    internal const string PayloadArity = "type {0} is named with {1} generic arguments.";
    internal const string PayloadTrailing = "{0} bytes follow the last item.";
    internal const string PayloadReferenceId = "reference {0} is outside the payload's {1} objects.";
    internal const string PayloadReferenceType = "reference {0} is a {1} where a {2} is required.";
    internal const string PayloadChunk = "a continuation message has {0} bytes where {1} were due (of {2} announced).";
    internal const string PayloadAbandoned = "The sender could not send the rest of this object ({0} of its {1} bytes came): its MPI call failed, and the object is not received.";
    internal const string PayloadUnknownType = "The object payload names type '{0}' in assembly '{1}', which is not loaded in this process; only loaded types marked [Transportable], enums, primitives, strings and arrays of those are instantiated.";
    internal const string PayloadIneligibleType = "The object payload names type {0}, which is not marked [Transportable]; it is not instantiated.";
    internal const string PayloadNotInstantiable = "The object payload asks for an instance of {0}, which cannot be instantiated.";
    internal const string PayloadLayout = "Type {0} has a different field layout on the sending rank; both ranks must run the same build of it.";
    internal const string ReceivedWrongType = "Received {0} where {1} was expected.";
    internal const string ArrayNotVector = "OSend with offset and count takes a one-dimensional, zero-based array; {0} is not.";
    internal const string RootEncodeFailed = "The root (rank {0}) could not serialize its objects; see the TransportException on that rank.";
    internal const string RankEncodeFailed = "Rank {0} could not serialize its block; see the TransportException on that rank.";

    // One-sided communication (Window.cs, Window.Typed.cs) and info objects (Info.cs).
    internal const string WindowLength = "A window of {0} elements of {1} bytes is larger than {2} bytes.";
    internal const string WindowNotShared = "Only a window made by AllocateShared has memory other ranks share.";
    internal const string WindowUserOp = "One-sided accumulates take MPI's built-in operations, Replace or NoOp; {0} is user-defined (MPI-4.0 12.3.4).";
    internal const string WindowCasType = "CompareAndSwap needs an integer or bool element type, not {0} (MPI-4.0 12.3.4).";
    internal const string WindowResultShort = "result holds {0} elements but the operation fetches {1}.";
    internal const string WindowAttachNotPinned = "Only an array that can never move can be attached to a dynamic window, since other ranks may access it at any time until it is detached: allocate it with Mpi.AllocatePinned.";
    internal const string WindowAttachEmpty = "An empty array cannot be attached to a dynamic window (MPI attaches at least one byte).";
    internal const string WindowAttachedTwice = "The array is attached to this window already.";
    internal const string WindowNotAttached = "The array is not attached to this window (never attached, or detached already).";
    internal const string WindowIndexNegative = "Target index {0} is negative: it is an element index into the target's window.";
    internal const string WindowAddressNotPositive = "Target address {0} is not positive: on a dynamic window it is an address Attach returned at the target (plus a byte offset).";
    internal const string WindowNotDynamic = "Only a window made by CreateDynamic has memory attached and detached.";

    // Parallel I/O (MpiFile.cs) and info objects (Info.cs).
    internal const string InfoKeyEmpty = "An info key must not be empty.";
    internal const string EmbeddedNul = "The string contains a NUL character, which MPI cannot take.";
    internal const string FileModeAccess = "The access mode {0} needs exactly one of ReadOnly, WriteOnly and ReadWrite (MPI-4.0 14.2.1).";
    internal const string FileModeReadOnly = "ReadOnly cannot be combined with {0} (MPI-4.0 14.2.1).";
    internal const string FileModeSequential = "Sequential cannot be combined with ReadWrite (MPI-4.0 14.2.1).";
    internal const string FileModeBits = "The access mode {0} has bits that are not MpiFileMode values.";
    internal const string FileNotReadable = "The file was opened {0}: it cannot be read.";
    internal const string FileNotWritable = "The file was opened {0}: it cannot be written.";
    internal const string FileSequential = "The file was opened Sequential: only the shared file pointer operations are allowed (MPI-4.0 14.2.1).";
    internal const string FileElementSize = "The buffer's {0} bytes are not a whole number of the view's {1}-byte elements.";
    internal const string FileOffsetInsideElement = "The file offset of {0} ({1} bytes into the view) falls inside one of the view's {2}-byte elements: give an offset of whole elements of the view.";
    internal const string FileOffsetTooLarge = "The file offset of {0} of {1} bytes each does not fit a 64-bit byte count.";
    internal const string FileSubarrayDimensions = "A subarray view of {0} dimensions: give 1 to {1}.";
    internal const string FileSubarrayLengths = "sizes has {0} dimensions but subsizes {1} and starts {2}: give one entry per dimension in each.";
    internal const string FileSubarrayExtent = "{0}[{1}] = {2} is not positive.";
    internal const string FileSubarrayFit = "In dimension {0} the block of {1} elements from {2} does not fit the array's {3}: a start runs from 0 to size - subsize.";
    internal const string FileOffsetNegative = "The file offset {0} is negative.";
    internal const string FileSizeNegative = "The size {0} is negative.";
    internal const string FileViewStride = "The view's stride {0} is smaller than its block of {1} elements (blocks would overlap), or the block is not positive.";
    internal const string FilePathEmpty = "The file path must not be empty.";

    // MPI-4: sessions and partitioned communication
    internal const string PartitionCount = "The partition count {0} must be positive.";
    internal const string PartitionedBufferShort = "The buffer has {0} elements; {1} partitions of {2} need {3}.";
    internal const string PartitionOutOfRange = "Partition {0} is outside [0, {1}).";
    internal const string PartitionRangeEmpty = "The partition range {0}..{1} is empty: last must not be below first.";
    internal const string PartitionedInactive = "The partitioned send has no active instance: Start it before marking partitions ready.";
    internal const string PartitionedNotSend = "Only a partitioned send has partitions to mark ready (this is a receive).";
    internal const string PartitionedNotReceive = "Only a partitioned receive has partitions that arrive (this is a send).";
    internal const string SessionFinalized = "The session was finalized.";
    internal const string ProcessSetName = "A process set name must not be empty or contain NUL.";
    internal const string StringTag = "The string tag must have 1 to 256 UTF-8 bytes and no NUL (MPI_MAX_STRINGTAG_LEN).";

    // Object reductions, object all-to-all and v-forms (Communicator.ObjectReductions.cs, Communicator.ObjectVectors.cs).
    internal const string ObjectOpThrew = "The reduction function threw on rank {0}: {1}: {2}";
    internal const string ObjectArrayOperands = "An element-wise operation on arrays needs two arrays of the same length; got lengths {0} and {1} (-1: null).";
    internal const string ObjectScatterLength = "{0} has {1} elements; OScatter gives one to each rank ({2}). OScatterBlocks deals an array of any length in blocks.";
    internal const string PackedDisplsTooLarge = "{0} add up to {1} elements before entry {2}, past the largest displacement MPI takes ({3}); pass displacements.";
    internal const string SpansOverlap = "send and recv overlap; MPI's buffers of one call must be distinct.";
    internal const string ObjectOneValue = "Rank {0} sent {1} values to an object reduction, which takes one per rank (did every rank call the same collective?).";
    internal const string ObjectCountsTotal = "{0} has {1} elements but {2} add up to {3}.";
    internal const string ObjectCountsTooLarge = "{0} add up to {1}, more than an array can hold.";
    internal const string ObjectCountsDisagree = "Rank {0} passed counts[{1}] = {2} where rank 0 passed {3}; every rank must pass the same counts.";
    internal const string ObjectLengthsDisagree = "Rank {0} passed {1} elements where the counts add up to {2}.";
    internal const string ObjectBlocksLength = "{0} has {1} entries; it needs one per rank ({2}).";
    internal const string ObjectNullBlock = "{0}[{1}] is null; pass an empty array for a rank that gets nothing.";

    internal static string Format(string format, params object?[] args) =>
        string.Format(CultureInfo.InvariantCulture, format, args);
}
