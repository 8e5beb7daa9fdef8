namespace System.MP.Transport;

/// <summary>
/// The layout of an object payload (Motor §4.2.2, §7.5).  All integers are
/// little-endian and fixed-width, so the decoder needs no varint loops and
/// every length is one comparison against the bytes left.
/// <code>
/// header    u32 magic "MOTR" | u32 flags (bit 0 chunked, bits 8-15 version) | i64 payload bytes |
///           i32 type-table bytes | i32 continuation tag (chunked payloads: PayloadChannel)
/// types     i32 count, then entries (each may refer only to earlier entries):
///             0 builtin   u8 code
///             1 named     i32 utf8 length, full name; i32 utf8 length, assembly simple name;
///                         u64 layout hash; u8 generic argument count; i32 argument entries
///             2 vector    i32 element entry            (T[])
///             3 md array  i32 element entry; u8 rank   (T[,], ...)
///             4 list      i32 element entry            (List&lt;T&gt;)
///             5 hash set  i32 element entry            (HashSet&lt;T&gt;)
///             6 dictionary i32 key entry; i32 value entry (Dictionary&lt;TKey,TValue&gt;)
/// objects   i32 count; object 1 is the root (count 0: the root is null); each object is
///           i32 type entry, then its body:
///             class / boxed struct   fixed-size body: value fields packed, references as i32 ids
///             string                 i32 length, UTF-16 code units
///             array                  i32 length (or i32 per dimension), then the elements
///             list, hash set         i32 count, then the elements as an array of them writes its elements
///             dictionary             i32 count, then the keys, then the values (each as an array's elements)
/// </code>
/// References are object ids: 0 is null, k is the k-th object of the payload,
/// so shared references and cycles arrive as they left.  An element is written as
/// the element of an array of its type: a value without references as its bytes, a struct
/// with references as its flattened body, a reference as an object id.  A set or a dictionary
/// arrives with the default comparer (one with another comparer is refused when sent).
/// </summary>
internal static class WireFormat
{
    internal const uint Magic = 0x52544F4D; // "MOTR"
    internal const uint FlagChunked = 1;    // more messages follow under the continuation tag (PayloadChannel)
    // Wire format version 2: a chunked payload's first message has FirstChunkBytes (version 1: ChunkBytes).
    internal const uint VersionBits = 2u << 8, VersionMask = 0xFF00;
    internal const uint KnownFlags = FlagChunked | VersionMask;
    internal const int HeaderBytes = 24;
    internal const int OffsetFlags = 4, OffsetTotal = 8, OffsetTableBytes = 16, OffsetContinuationTag = 20;
    internal const int IdBytes = 4;

    internal const byte EntryBuiltin = 0, EntryNamed = 1, EntryVector = 2, EntryMdArray = 3;
    internal const byte EntryList = 4, EntryHashSet = 5, EntryDictionary = 6;
    internal const int MaxRank = 32;

    /// <summary>Built-in types by wire code (index = code).  Append only.</summary>
    internal static readonly Type[] Builtins =
    [
        typeof(object), typeof(string), typeof(bool), typeof(char),
        typeof(sbyte), typeof(byte), typeof(short), typeof(ushort),
        typeof(int), typeof(uint), typeof(long), typeof(ulong),
        typeof(float), typeof(double), typeof(decimal), typeof(nint), typeof(nuint),
        typeof(Half), typeof(Int128), typeof(UInt128),
    ];

    /// <summary>
    /// Largest message an object operation hands to MPI at once (bytes).
    /// Payloads beyond it travel in pieces of this size, so every count and
    /// displacement fits MPI's int arguments.  MOTOR_OBJECT_CHUNK_BYTES
    /// lowers it (tests exercise the chunked paths with small payloads).
    /// </summary>
    internal static readonly int ChunkBytes = ReadChunkBytes();

    internal const int MinChunkBytes = 64;

    /// <summary>
    /// Most bytes of a payload's first message (PayloadChannel): a payload up to this size
    /// travels as one message, which the receiver takes with one posted receive into a pooled
    /// buffer of this size (no probe); a larger one sends this many bytes first and the rest
    /// in pieces of <see cref="ChunkBytes"/>.
    /// </summary>
    internal static readonly int FirstChunkBytes = (int)Math.Min(ChunkBytes, BufferPool.InitialBytes);

    private static int ReadChunkBytes()
    {
        string? s = Environment.GetEnvironmentVariable("MOTOR_OBJECT_CHUNK_BYTES");
        return s is not null && int.TryParse(s, out int n) && n >= MinChunkBytes ? n : 1 << 30;
    }

    internal static int BuiltinCode(Type t) => Array.IndexOf(Builtins, t);
}
