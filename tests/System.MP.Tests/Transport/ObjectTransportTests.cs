using System.MP.Transport;
using System.Runtime.CompilerServices;
using Scenarios;
using Xunit;

namespace System.MP.Tests;

/// <summary>
/// The object serializer (src/System.MP/Transport/) in process, no MPI: encode to bytes,
/// decode, compare the data that arrived; what may not travel; hostile payloads; a fuzz run;
/// the identity map and the buffer pool.  The object operations over MPI jobs are in
/// <see cref="ObjectOperationTests"/>, the receive path of payloads in <see cref="PayloadChannelTests"/>.
/// </summary>
public class ObjectTransportTests
{
    private static object? RoundTrip(object? obj) => ObjectTransport.Decode(ObjectTransport.EncodeToArray(obj));

    private static T Trip<T>(T obj) where T : notnull => Assert.IsType<T>(RoundTrip(obj));

    /// <summary>Elements [offset, offset + count) of <paramref name="array"/> encoded as a slice, decoded.</summary>
    private static unsafe object? TripSlice(Array array, int offset, int count)
    {
        ObjectTransport.Encoded e = ObjectTransport.Encode(null, array, offset, count);
        try
        {
            return ObjectTransport.Decode(new ReadOnlySpan<byte>(e.Pointer, (int)e.Length));
        }
        finally
        {
            e.Release();
        }
    }

    private static TransportException Rejected(byte[] payload) =>
        Assert.Throws<TransportException>(() => ObjectTransport.Decode(payload));

    [Fact]
    public void NullTravels() => Assert.Null(RoundTrip(null));

    public static TheoryData<object> Primitives => new()
    {
        true, false, 'x', 'ж', (sbyte)-5, (byte)250, (short)-30000, (ushort)60000, int.MinValue, uint.MaxValue,
        long.MinValue, ulong.MaxValue, 1.5f, float.NaN, double.Epsilon, -0.0, decimal.MinValue, 0.0001m,
        (nint)(-7), (nuint)7, (Half)1.5, Int128.MaxValue, UInt128.MaxValue, Color.Green, Color.Blue,
    };

    [Theory]
    [MemberData(nameof(Primitives))]
    public void EveryPrimitiveTravels(object value)
    {
        object? back = RoundTrip(value);
        Assert.IsType(value.GetType(), back);
        Assert.Equal(value, back);
    }

    [Theory]
    [InlineData("")]
    [InlineData("a")]
    [InlineData("日本語 – ñ – 😀 – \u0000 end")]
    [InlineData("\ud800 lone surrogate")]
    public void StringsTravel(string s) => Assert.Equal(s, Trip(s));

    [Fact]
    public void LongStringTravels()
    {
        string s = string.Create(100_000, 0, (span, _) =>
        {
            for (int i = 0; i < span.Length; i++)
                span[i] = (char)(i * 7919 % 0xD7FF);
        });
        Assert.Equal(s, Trip(s));
    }

    [Fact]
    public void PrimitiveArraysTravel()
    {
        Assert.Equal([true, false, true], Trip(new[] { true, false, true }));
        Assert.Equal("héllo".ToCharArray(), Trip("héllo".ToCharArray()));
        Assert.Equal(new byte[] { 0, 1, 255 }, Trip(new byte[] { 0, 1, 255 }));
        Assert.Equal(new sbyte[] { -128, 127 }, Trip(new sbyte[] { -128, 127 }));
        Assert.Equal(new short[] { -1, 2 }, Trip(new short[] { -1, 2 }));
        Assert.Equal(new ushort[] { 65535 }, Trip(new ushort[] { 65535 }));
        Assert.Equal([int.MinValue, 0, int.MaxValue], Trip(new[] { int.MinValue, 0, int.MaxValue }));
        Assert.Equal([1u, 2u], Trip(new[] { 1u, 2u }));
        Assert.Equal([long.MaxValue], Trip(new[] { long.MaxValue }));
        Assert.Equal([ulong.MaxValue], Trip(new[] { ulong.MaxValue }));
        Assert.Equal([1.25f, -0f], Trip(new[] { 1.25f, -0f }));
        Assert.Equal([Math.PI, double.NegativeInfinity], Trip(new[] { Math.PI, double.NegativeInfinity }));
        Assert.Equal([1.1m, -2m], Trip(new[] { 1.1m, -2m }));
        Assert.Equal([Color.Red, Color.Blue], Trip(new[] { Color.Red, Color.Blue }));
        Assert.Empty(Trip(Array.Empty<int>()));
        var big = new double[200_000];
        for (int i = 0; i < big.Length; i++)
            big[i] = i * 0.5;
        Assert.Equal(big, Trip(big));
    }

    [Fact]
    public void BoolsAreNormalized()
    {
        byte[] payload = ObjectTransport.EncodeToArray(new[] { false, true, false });
        payload[^3] = 7; // first element: a non-canonical true
        var back = Assert.IsType<bool[]>(ObjectTransport.Decode(payload));
        Assert.True(back[0]);
        Assert.Equal(1, Unsafe.As<bool, byte>(ref back[0]));
    }

    [Fact]
    public void ObjectArraysTravelElementByElement()
    {
        var shared = new int[] { 9 };
        object?[] a = [1, "s", null, shared, Color.Green, 2.5, shared, new[] { "x", null }];
        var back = Trip(a);
        Assert.Equal(8, back.Length);
        Assert.Equal(1, back[0]);
        Assert.Equal("s", back[1]);
        Assert.Null(back[2]);
        Assert.Equal([9], Assert.IsType<int[]>(back[3]));
        Assert.Equal(Color.Green, back[4]);
        Assert.Equal(2.5, back[5]);
        Assert.Same(back[3], back[6]);
        Assert.Equal(new[] { "x", null }, Assert.IsType<string?[]>(back[7]));
        Assert.Equal(new[] { "a", null, "c" }, Trip(new[] { "a", null, "c" }));
    }

    [Fact]
    public void JaggedArraysTravel()
    {
        int[][] jagged = [[1], [], [2, 3, 4]];
        int[]?[] withNull = [[5], null];
        Assert.Equal(jagged, Trip(jagged));
        var back = Trip(withNull);
        Assert.Equal(new[] { 5 }, back[0]);
        Assert.Null(back[1]);
        string[][][] deep = [[["a", "b"]], [[]]];
        Assert.Equal(deep, Trip(deep));
    }

    [Fact]
    public void MultiDimensionalArraysKeepTheirShape()
    {
        var m = new int[3, 4];
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 4; j++)
                m[i, j] = i * 10 + j;
        var bm = Trip(m);
        Assert.Equal(3, bm.GetLength(0));
        Assert.Equal(4, bm.GetLength(1));
        Assert.Equal(m, bm);

        var cube = new double[2, 3, 4];
        cube[1, 2, 3] = 7.5;
        cube[0, 1, 0] = -1;
        var bc = Trip(cube);
        Assert.Equal([2, 3, 4], new[] { bc.GetLength(0), bc.GetLength(1), bc.GetLength(2) });
        Assert.Equal(7.5, bc[1, 2, 3]);
        Assert.Equal(-1, bc[0, 1, 0]);

        var names = new string?[2, 2];
        names[0, 0] = "tl";
        names[1, 1] = names[0, 0];
        var bn = Trip(names);
        Assert.Equal("tl", bn[1, 1]);
        Assert.Null(bn[0, 1]);
        Assert.Same(bn[0, 0], bn[1, 1]);

        var empty = new int[0, 5];
        Assert.Equal(5, Trip(empty).GetLength(1));

        var nodes = new LinkedList[1, 2];
        nodes[0, 1] = TransportSamples.Figure5(3);
        Assert.Null(TransportSamples.CheckFigure5(Trip(nodes)[0, 1], 3));
        Assert.Throws<TransportException>(() => ObjectTransport.EncodeToArray(Array.CreateInstance(typeof(int), [2], [1])));
    }

    [Fact]
    public void Figure5ListFollowsMarkedFieldsOnly()
    {
        LinkedList list = TransportSamples.Figure5(10);
        Assert.NotNull(list.next2);
        var back = Trip(list);
        Assert.Null(TransportSamples.CheckFigure5(back, 10));
        Assert.Null(back.next2);
    }

    [Fact]
    public void CyclesArriveAsCycles()
    {
        Assert.Null(TransportSamples.CheckRing(Trip(TransportSamples.Ring(7)), 7));
        Assert.Null(TransportSamples.CheckRing(Trip(TransportSamples.Ring(1)), 1));
        var self = new Pair();
        self.A = self;
        var back = Trip(self);
        Assert.Same(back, back.A);
    }

    [Fact]
    public void AnObjectReferencedTwiceArrivesOnce()
    {
        var shared = new LinkedList { value = 3, array = [1, 2] };
        var pair = Trip(new Pair { A = shared, B = shared });
        Assert.NotSame(shared, pair.A);
        Assert.Same(pair.A, pair.B);
        Assert.Equal(3, Assert.IsType<LinkedList>(pair.A).value);
        string s = "shared string";
        var sp = Trip(new Pair { A = s, B = s });
        Assert.Same(sp.A, sp.B);
    }

    [Fact]
    public void BaseClassFieldsFollowTheSameRules()
    {
        var c = new Circle(stamp: 99) { X = 1.5, Name = "disc", Radius = 2, Fill = Color.Blue };
        c.SetSerial(1234);
        var back = Trip(c);
        Assert.Equal((1.5, "disc", 2.0, Color.Blue, 99L, 1234), (back.X, back.Name, back.Radius, back.Fill, back.Stamp, back.Serial));
        Shape[] shapes = [c, new Shape { Name = "plain" }, c];
        var bs = Trip(shapes);
        Assert.IsType<Circle>(bs[0]);
        Assert.IsType<Shape>(bs[1]);
        Assert.Equal("plain", bs[1].Name);
        Assert.Same(bs[0], bs[2]);
    }

    [Fact]
    public void StructsWithNestedStructsTravel()
    {
        var p = new Body { Pos = new Vec3(1, 2, 3), Vel = new Vec3(-1, -2, -3), In = new Inner { A = long.MinValue, B = 7, Flag = true }, Id = 5 };
        var bp = Trip(p);
        Assert.Equal(p.Pos, bp.Pos);
        Assert.Equal(p.Vel, bp.Vel);
        Assert.Equal((long.MinValue, (byte)7, true, 5), (bp.In.A, bp.In.B, bp.In.Flag, bp.Id));
        Body[] many = [p, default, p];
        Assert.Equal(many, Trip(many));
        Assert.Null(TransportSamples.CheckHolder(Trip(TransportSamples.MakeHolder())));
        var t = Trip(new Tagged { Id = 3, Label = "three", Dropped = new object(), Where = new Vec3(0, 0, 9) });
        Assert.Equal((3, "three", (object?)null, 9.0), (t.Id, t.Label, t.Dropped, t.Where.Z));
    }

    [Fact]
    public void ArraysOfAnInterfaceCarryEligibleElements()
    {
        IArea[] areas = [new Square { Side = 2 }, null!, new Square { Side = 3 }];
        var back = Trip(areas);
        Assert.Equal([4.0, 9.0], new[] { back[0].Area, back[2].Area });
        Assert.Null(back[1]);
        Assert.Equal(9.0, Trip(new Box<IArea> { Value = new Square { Side = 3 } }).Value!.Area);
        // an interface is only ever an element type: a payload may not ask for an instance of one
        byte[] payload = ForgedPayloads.OfNamedType("Scenarios.IArea", "System.MP.Tests");
        Assert.Contains("cannot be instantiated", Rejected(payload).Message);
    }

    [Fact]
    public void GenericTransportableTypesTravel()
    {
        Assert.Equal(5, Trip(new Box<int> { Value = 5 }).Value);
        Assert.Equal("s", Trip(new Box<string> { Value = "s" }).Value);
        Assert.Equal(new[] { 1, 2 }, Trip(new Box<Box<int[]>> { Value = new Box<int[]> { Value = [1, 2] } }).Value!.Value);
        Assert.Equal(Color.Blue, Trip(new Box<Color> { Value = Color.Blue }).Value);
        Assert.Throws<TransportException>(() => ObjectTransport.EncodeToArray(new Box<Plain>()));
    }

    [Fact]
    public void AHundredThousandNodesDoNotOverflowTheStack()
    {
        // Run on a thread with a small stack: a recursive encoder or decoder would overflow it.
        Exception? error = null;
        var t = new Thread(() =>
        {
            try
            {
                Assert.Null(TransportSamples.CheckFigure5((LinkedList?)RoundTrip(TransportSamples.Figure5(100_000)), 100_000));
                Assert.Null(TransportSamples.CheckRing((DNode?)RoundTrip(TransportSamples.Ring(100_000)), 100_000));
            }
            catch (Exception e)
            {
                error = e;
            }
        }, maxStackSize: 256 * 1024);
        t.Start();
        t.Join();
        Assert.Null(error);
    }

    [Fact]
    public void ASliceTravelsAsAnArrayOfItsElements()
    {
        var list = TransportSamples.Figure5(4);
        object?[] a = [0, 1, list, list, "four"];
        var slice = Assert.IsType<object?[]>(TripSlice(a, 2, 3));
        Assert.Equal(3, slice.Length);
        Assert.Same(slice[0], slice[1]);
        Assert.Null(TransportSamples.CheckFigure5((LinkedList?)slice[0], 4));
        Assert.Equal("four", slice[2]);
    }

    /// <summary>
    /// A slice that holds its own array: the element is the whole array, a separate object from the
    /// slice, whether the graph is small enough for the encoder's scan of the objects seen (5
    /// objects) or large enough for its identity map (a Figure 5 list of 12 nodes beside it).
    /// </summary>
    [Theory]
    [InlineData(0)]
    [InlineData(12)]
    public void ASliceHoldingItsArrayCarriesTheWholeArray(int nodes)
    {
        object?[] a = [null, "one", null, "three"];
        a[0] = a;
        a[2] = nodes > 0 ? TransportSamples.Figure5(nodes) : null;
        var slice = Assert.IsType<object?[]>(TripSlice(a, 0, 3));
        Assert.Equal(3, slice.Length);
        var whole = Assert.IsType<object?[]>(slice[0]);
        Assert.NotSame(slice, whole);
        Assert.Equal(4, whole.Length);
        Assert.Same(whole, whole[0]);
        Assert.Equal("three", whole[3]);
        Assert.Same(slice[1], whole[1]);
        Assert.Same(slice[2], whole[2]);
        if (nodes > 0)
            Assert.Null(TransportSamples.CheckFigure5((LinkedList?)slice[2], nodes));
    }

    [Fact]
    public void DecodingRunsNoConstructor()
    {
        byte[] payload = ObjectTransport.EncodeToArray(new Counted { Init = 77 });
        int before = Counted.Constructed;
        var back = Assert.IsType<Counted>(ObjectTransport.Decode(payload));
        Assert.Equal(before, Counted.Constructed);
        Assert.Equal(77, back.Init);
    }

    // ---- the sender refuses what may not travel, naming it ----

    public static TheoryData<object, string> Ineligible => new()
    {
        { new Plain(), "Scenarios.Plain" },
        { new Pair { A = new Plain() }, "Scenarios.Plain" },
        { new Pair { B = new MemoryStream() }, "System.IO.MemoryStream" },
        { new Pair { A = (Action)(() => { }) }, "System.Action" },
        { new DerivedOfUnmarked(), "Scenarios.UnmarkedBase" },
        { new object(), "System.Object" },
        { new Plain[1], "Scenarios.Plain" },
        { new object[] { 1, new Queue<int>() }, "System.Collections.Generic.Queue<System.Int32>" },
        { new object[] { 1, new List<Plain>() }, "Scenarios.Plain" },
        { new Dictionary<int, Stream>(), "System.IO.Stream" },
        { new int?[1], "System.Nullable<System.Int32>" },
    };

    [Theory]
    [MemberData(nameof(Ineligible))]
    public void SenderRefusesIneligibleTypes(object obj, string name)
    {
        var e = Assert.Throws<TransportException>(() => ObjectTransport.EncodeToArray(obj));
        Assert.Contains(name, e.Message);
    }

    // ---- the receiver refuses hostile payloads ----

    [Theory]
    [InlineData("System.IO.FileStream", "System.Private.CoreLib")]
    [InlineData("Microsoft.Win32.SafeHandles.SafeFileHandle", "System.Private.CoreLib")]
    [InlineData("System.Action", "System.Private.CoreLib")]
    [InlineData("Scenarios.Plain", "System.MP.Tests")]
    [InlineData("Evil.Type", "Not.Loaded.Assembly")]
    [InlineData("Scenarios.Box`1[[System.IO.FileStream, System.Private.CoreLib]]", "System.MP.Tests")]
    public void ReceiverRefusesTypesThatMayNotTravel(string name, string assembly)
    {
        var e = Rejected(ForgedPayloads.OfNamedType(name, assembly));
        Assert.Contains(name, e.Message);
    }

    [Fact]
    public void ForgedCountsCannotAllocate()
    {
        long before = GC.GetAllocatedBytesForCurrentThread();
        Rejected(ForgedPayloads.IntArrayClaiming(int.MaxValue, 16));
        Rejected(ForgedPayloads.IntArrayClaiming(5, 16));
        Rejected(ForgedPayloads.StringClaiming(1 << 30));
        Rejected(ForgedPayloads.HugeObjectCount());
        long allocated = GC.GetAllocatedBytesForCurrentThread() - before;
        Assert.True(allocated < 1 << 20, $"{allocated} bytes allocated for four tiny payloads");
        Assert.Equal([0, 0, 0, 0], Assert.IsType<int[]>(ObjectTransport.Decode(ForgedPayloads.IntArrayClaiming(4, 16))));
    }

    [Fact]
    public void ReferencesAreCheckedForRangeAndType()
    {
        Assert.Contains("outside", Rejected(ForgedPayloads.DanglingReference()).Message);
        // Figure5(1): object 1 is the node, object 2 its int[]; point `next` (the second id in the body) at the int[].
        byte[] payload = ObjectTransport.EncodeToArray(new LinkedList { array = [1], value = 1 });
        int body = payload.Length - (4 + 4 + 4) - (4 + 4 + 4); // node body: array id, next id, value; then the int[]: entry, length, one int
        Assert.Equal(2, BitConverter.ToInt32(payload, body));     // the array reference
        BitConverter.TryWriteBytes(payload.AsSpan(body + 4), 2); // next := the int[]
        Assert.Contains("Scenarios.LinkedList", Rejected(payload).Message);
    }

    [Fact]
    public void ADifferentLayoutIsRefused()
    {
        byte[] payload = ObjectTransport.EncodeToArray(new Shape());
        // the layout hash follows the two names of the only named entry
        int at = payload.AsSpan().IndexOf("System.MP.Tests"u8) + "System.MP.Tests".Length;
        payload[at] ^= 1;
        Assert.Contains("layout", Rejected(payload).Message);
    }

    [Fact]
    public void GarbageIsRefused()
    {
        Rejected([]);
        Rejected(new byte[100]);
        byte[] good = ObjectTransport.EncodeToArray("text");
        Rejected(good[..^1]);
        Rejected([.. good, 0]);
    }

    /// <summary>
    /// 100,000 random mutations of valid payloads: each decodes or throws
    /// TransportException, never anything else, and allocates at most a small
    /// multiple of the payload.  Once through the codecs the source generator wrote, once through
    /// those built at run time.
    /// </summary>
    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void FuzzedPayloadsOnlyEverThrowTransportException(bool runTimeCodecs) =>
        GeneratedCodecTests.OnCodecs(runTimeCodecs, Fuzz);

    private static bool Fuzz()
    {
        object?[] seeds =
        [
            TransportSamples.Figure5(6), TransportSamples.Ring(4), TransportSamples.MakeHolder(),
            new object?[] { 1, "two", null, new[] { 3.0 }, Color.Red, new int[2, 2] },
            new Circle(5) { Name = "c" }, new Box<Box<string>> { Value = new Box<string> { Value = "in" } },
            new[] { new Body { Id = 1 } }, new string?[] { "a", "b", null }, new long[,] { { 1, 2 }, { 3, 4 } },
            "just a string", 12345,
        ];
        byte[][] payloads = [.. seeds.Select(ObjectTransport.EncodeToArray)];
        foreach (byte[] p in payloads)
            ObjectTransport.Decode(p); // warm the codecs and type caches
        var rng = new Random(20240229);
        int rejected = 0;
        for (int iteration = 0; iteration < 100_000; iteration++)
        {
            byte[] payload = Mutate(payloads[rng.Next(payloads.Length)], rng);
            long before = GC.GetAllocatedBytesForCurrentThread();
            try
            {
                ObjectTransport.Decode(payload);
            }
            catch (TransportException)
            {
                rejected++;
            }
            catch (Exception e)
            {
                Assert.Fail($"iteration {iteration}: {e.GetType().Name} escaped for payload {Convert.ToHexString(payload)}\n{e}");
            }
            long allocated = GC.GetAllocatedBytesForCurrentThread() - before;
            Assert.True(allocated <= 64L * payload.Length + (64 << 10),
                $"iteration {iteration}: {allocated} bytes allocated for a {payload.Length}-byte payload {Convert.ToHexString(payload)}");
        }
        Assert.InRange(rejected, 10_000, 99_000); // most mutations are caught, some still decode (they reached past the header)
        return true;
    }

    private static byte[] Mutate(byte[] original, Random rng)
    {
        byte[] p = (byte[])original.Clone();
        switch (rng.Next(6))
        {
            case 0: // flip bytes
                for (int n = rng.Next(1, 4); n > 0; n--)
                    p[rng.Next(p.Length)] ^= (byte)rng.Next(1, 256);
                break;
            case 1: // an interesting int somewhere
                int[] values = [0, 1, -1, 2, 7, 255, 65536, int.MaxValue, int.MinValue, 1 << 20];
                BitConverter.TryWriteBytes(p.AsSpan(rng.Next(p.Length - 3)), values[rng.Next(values.Length)]);
                break;
            case 2: // truncate
                p = p[..rng.Next(p.Length)];
                break;
            case 3: // insert bytes
                int at = rng.Next(p.Length), count = rng.Next(1, 9);
                var bytes = new byte[count];
                rng.NextBytes(bytes);
                p = [.. p[..at], .. bytes, .. p[at..]];
                break;
            case 4: // delete bytes
                int from = rng.Next(p.Length), len = Math.Min(rng.Next(1, 9), p.Length - from);
                p = [.. p[..from], .. p[(from + len)..]];
                break;
            default: // a small int in the object section
                int pos = rng.Next(Math.Max(1, p.Length - 40), p.Length - 3);
                BitConverter.TryWriteBytes(p.AsSpan(pos), rng.Next(-2, 12));
                break;
        }
        // Usually keep the header's length consistent, so the mutation reaches past the first check.
        if (p.Length >= 16 && rng.Next(4) != 0)
            BitConverter.TryWriteBytes(p.AsSpan(8), (long)p.Length);
        return p;
    }

    /// <summary>
    /// What the map promises by address: every key added is found again with its id, across the
    /// table's growth, as long as no collection ran in between.  The adds and lookups run in a
    /// no-GC region, so the promise is tested whatever the gen-0 budget of the machine; should a
    /// collection still come (another thread's allocations used the region up, or another thread
    /// forced one, as tests/gc-stress.sh does), the round is checked for what the map promises
    /// across a move (below) and run again.
    /// </summary>
    [Fact]
    public void IdentityMapFindsEachObjectByIdentityAcrossGrowth()
    {
        const int Keys = 10_000;
        int quietRounds = 0;
        for (int round = 0; round < 1000 && quietRounds == 0; round++)
        {
            var map = new IdentityMap();
            var keys = new object[Keys];
            bool inRegion = GC.TryStartNoGCRegion(64 << 20);
            int collections = GC.CollectionCount(0);
            for (int i = 0; i < keys.Length; i++)
            {
                keys[i] = new int[] { i }; // equal contents would not matter: identity does
                ref int id = ref map.GetOrAdd(keys[i], out bool found);
                if (!found)
                    id = i + 1;
            }
            var ids = new int[Keys];
            var wasFound = new bool[Keys];
            for (int i = 0; i < keys.Length; i++)
                ids[i] = map.GetOrAdd(keys[i], out wasFound[i]);
            bool quiet = GC.CollectionCount(0) == collections;
            if (inRegion)
                EndNoGCRegionIfStillIn();
            if (quiet)
            {
                quietRounds++;
                for (int i = 0; i < keys.Length; i++)
                {
                    Assert.True(wasFound[i], $"key {i} of {Keys} not found");
                    Assert.Equal(i + 1, ids[i]);
                }
                Assert.True(map.Capacity >= 2 * Keys, $"the table did not grow past {Keys} keys: capacity {map.Capacity}");
            }
            else
            {
                // A collection moved keys: a lookup may miss (the key is added again, id 0) or find an
                // id handed out to some key, never anything else.
                for (int i = 0; i < keys.Length; i++)
                    Assert.True(!wasFound[i] ? ids[i] == 0 : ids[i] >= 1 && ids[i] <= Keys, $"key {i}: found {wasFound[i]}, id {ids[i]}");
            }
            Assert.False(GetOrAddFound(map, "not a key"));
            map.Clear();
            Assert.False(GetOrAddFound(map, keys[0]));
            GC.KeepAlive(keys);
        }
        Assert.True(quietRounds == 1, "a collection ran in each of 1000 rounds, even in a no-GC region");
    }

    /// <summary>
    /// Keyed by identity (the encoder's mode after a collection moved a graph), every key is found
    /// with its id across compacting collections that move every one of them.
    /// </summary>
    [Fact]
    public void IdentityMapByIdentityFindsEachObjectAcrossCompactingCollections()
    {
        var map = new IdentityMap { ByAddress = false };
        var keys = new object[5_000];
        for (int i = 0; i < keys.Length; i++)
        {
            keys[i] = new int[] { i };
            ref int id = ref map.GetOrAdd(keys[i], out bool found);
            Assert.False(found);
            id = i + 1;
            if (i % 1_000 == 0)
                GC.Collect(2, GCCollectionMode.Forced, blocking: true, compacting: true);
        }
        GC.Collect(2, GCCollectionMode.Forced, blocking: true, compacting: true);
        for (int i = 0; i < keys.Length; i++)
        {
            Assert.Equal(i + 1, map.GetOrAdd(keys[i], out bool found));
            Assert.True(found, $"key {i} not found by identity after compacting collections");
        }
        Assert.False(GetOrAddFound(map, new int[] { 0 }));
        map.Clear();
        Assert.False(GetOrAddFound(map, keys[1]));
    }

    // A collection another thread forces (tests/gc-stress.sh) ends a no-GC region early.
    private static void EndNoGCRegionIfStillIn()
    {
        try
        {
            if (System.Runtime.GCSettings.LatencyMode == System.Runtime.GCLatencyMode.NoGCRegion)
                GC.EndNoGCRegion();
        }
        catch (InvalidOperationException)
        {
            // ended by a collection between the check and the call
        }
    }

    /// <summary>Clear after a few keys empties just their slots, after many the whole table: either way no key survives, and the map keeps working.</summary>
    [Theory]
    [InlineData(1)]
    [InlineData(15)]
    [InlineData(16)]
    [InlineData(17)]
    [InlineData(300)] // past a growth
    public void IdentityMapClearForgetsEveryKey(int count)
    {
        var map = new IdentityMap();
        for (int round = 0; round < 3; round++)
        {
            var keys = new object[count + round];
            for (int i = 0; i < keys.Length; i++)
            {
                keys[i] = new object();
                Assert.False(GetOrAddFound(map, keys[i]));
            }
            Assert.All(keys, k => Assert.True(GetOrAddFound(map, k)));
            map.Clear();
            Assert.All(keys, k => Assert.False(GetOrAddFound(map, k))); // each lookup adds it again
            map.Clear();
        }
    }

    /// <summary>Every length of the vector loop's range and around its ends copies exactly its bytes and nothing past them.</summary>
    [Fact]
    public unsafe void BlockCopyCopiesExactlyTheBytes()
    {
        var source = new byte[70_000];
        new Random(7).NextBytes(source);
        foreach (int length in Enumerable.Range(0, 600).Concat([4095, 4096, 4097, 65_535, 65_536, 65_537, 69_999]))
        {
            var destination = new byte[length + 64];
            fixed (byte* s = source, d = destination)
                BlockCopy.Copy(s + 1, d + 32, length); // odd source, even destination offset: unaligned both
            Assert.True(destination.AsSpan(0, 32).IndexOfAnyExcept((byte)0) < 0, $"bytes before the block at length {length}");
            Assert.True(destination.AsSpan(32, length).SequenceEqual(source.AsSpan(1, length)), $"length {length}");
            Assert.True(destination.AsSpan(32 + length).IndexOfAnyExcept((byte)0) < 0, $"bytes past the block at length {length}");
        }
    }

    private static bool GetOrAddFound(IdentityMap map, object key)
    {
        map.GetOrAdd(key, out bool found);
        return found;
    }

    // ---- memory ----

    [Fact]
    public void UnusedBuffersAreTrimmed()
    {
        ObjectTransport.EncodeToArray(TransportSamples.Figure5(100));
        Assert.True(BufferPool.PooledCount > 0);
        BufferPool.Trim(); // marks the pooled buffers as unused since this trim
        BufferPool.Trim(); // frees them
        Assert.Equal(0, BufferPool.PooledCount);
        ObjectTransport.EncodeToArray("again");
        Assert.True(BufferPool.PooledCount > 0);
        for (int i = 0; i < 4 && BufferPool.PooledCount > 0; i++)
        {
            GC.Collect();
            GC.WaitForPendingFinalizers();
        }
        Assert.Equal(0, BufferPool.PooledCount); // gen-2 collections trim too
    }

    [Fact]
    public unsafe void IdleBuffersAreFreedOnTheNextReturn()
    {
        NativeBuffer a = BufferPool.Rent(1 << 20), b = BufferPool.Rent(16);
        BufferPool.Return(a);
        a.LastUsedTicks -= 2 * BufferPool.IdleMilliseconds; // as if returned long ago
        BufferPool.Return(b);
        Assert.True(a.Pointer == null, "the idle buffer was not freed");
        Assert.True(b.Pointer != null, "the buffer just returned was freed");
    }

    /// <summary>
    /// The encoder hashes objects by address once a graph outgrows its scan of the objects seen; a
    /// collection in the middle of such a graph (here a compacting one, once the first objects are
    /// hashed) makes it encode the graph again by identity hash codes, and rings and shared
    /// references arrive intact.
    /// </summary>
    [Fact]
    public void CollectionDuringEncodingEncodesTheGraphAgain()
    {
        long before = ObjectWriter.EncodedAgain;
        ObjectWriter.AfterRootForTests = () => GC.Collect(2, GCCollectionMode.Forced, blocking: true, compacting: true);
        try
        {
            for (int i = 0; i < 10; i++)
            {
                Assert.Null(TransportSamples.CheckRing(Trip(TransportSamples.Ring(50)), 50));
                Assert.Null(TransportSamples.CheckFigure5(Trip(TransportSamples.Figure5(50)), 50));
            }
        }
        finally
        {
            ObjectWriter.AfterRootForTests = null;
        }
        Assert.True(ObjectWriter.EncodedAgain >= before + 20, $"{ObjectWriter.EncodedAgain - before} graphs encoded again");
    }

    /// <summary>
    /// A graph of up to 8 objects is encoded without hashing (its objects found by reference), so a
    /// collection in the middle of it (a compacting one, after the root) needs no second encoding,
    /// and its cycles and shared references arrive intact; 9 objects and more go through the map.
    /// </summary>
    [Fact]
    public void CollectionDuringASmallGraphChangesNothing()
    {
        ObjectWriter.AfterRootForTests = () => GC.Collect(2, GCCollectionMode.Forced, blocking: true, compacting: true);
        try
        {
            for (int n = 1; n <= 10; n++)
            {
                long before = ObjectWriter.EncodedAgain;
                Assert.Null(TransportSamples.CheckRing(Trip(TransportSamples.Ring(n)), n));
                Assert.Equal(n > 8 ? before + 1 : before, ObjectWriter.EncodedAgain);
            }
            Assert.Null(TransportSamples.CheckFigure5(Trip(TransportSamples.Figure5(4)), 4)); // 4 nodes, 3 arrays
            var shared = new int[] { 1, 2, 3 };
            var pair = Trip(new object[] { shared, shared, "x", "x" });
            Assert.Same(pair[0], pair[1]);
            Assert.Equal(shared, (int[])pair[0]);
        }
        finally
        {
            ObjectWriter.AfterRootForTests = null;
        }
    }

    /// <summary>
    /// A payload decoded while the thread's reader is busy (here by the static constructor of a type
    /// the outer payload creates) gets a reader of its own: both arrive intact, and the thread's
    /// reader serves the next payload.
    /// </summary>
    [Fact]
    public void ADecodeInsideADecodeUsesAReaderOfItsOwn()
    {
        byte[] outer = ObjectTransport.EncodeToArray(new DecodesInItsStaticConstructor[] { new() { Value = 5 }, new() { Value = 6 } });
        var back = Assert.IsType<DecodesInItsStaticConstructor[]>(ObjectTransport.Decode(outer));
        Assert.Equal([5, 6], back.Select(x => x.Value));
        Assert.Equal(["inner", "payload"], DecodesInItsStaticConstructor.Inner!);
        Assert.Null(TransportSamples.CheckRing(Trip(TransportSamples.Ring(3)), 3));
    }

    /// <summary>
    /// The generated decoders check each reference against its field's type, the exact type first:
    /// a subclass where its base class is required still arrives, and an object of another type
    /// (forged: each of two fields pointed at the other's object) is refused naming both types.
    /// </summary>
    [Fact]
    public void AReferenceMustBeOfItsFieldsType()
    {
        var h = Trip(new ShapeHolder { S = new Circle(9) { Radius = 2 }, Data = [1, 2] });
        Assert.Equal(2, Assert.IsType<Circle>(h.S).Radius);
        Assert.Equal(9, ((Circle)h.S).Stamp);
        Assert.Equal([1, 2], h.Data!);
        Assert.IsType<Shape>(Trip(new ShapeHolder { S = new Shape() }).S);
        byte[] good = ObjectTransport.EncodeToArray(new ShapeHolder { S = new Shape(), Data = [1, 2] });
        int body = 24 + BitConverter.ToInt32(good, 16) + 8; // header, type table, object count, the holder's type entry
        Assert.Equal(2, BitConverter.ToInt32(good, body));
        Assert.Equal(3, BitConverter.ToInt32(good, body + 4));
        byte[] dataIsShape = (byte[])good.Clone();
        BitConverter.TryWriteBytes(dataIsShape.AsSpan(body + 4), 2);
        Assert.Contains("reference 2 is a Scenarios.Shape where a System.Int32[] is required", Rejected(dataIsShape).Message);
        byte[] shapeIsData = (byte[])good.Clone();
        BitConverter.TryWriteBytes(shapeIsData.AsSpan(body), 3);
        Assert.Contains("reference 3 is a System.Int32[] where a Scenarios.Shape is required", Rejected(shapeIsData).Message);
    }

    [Fact]
    public void EncodingKeepsNoReferenceToTheGraph()
    {
        WeakReference weak = EncodeAndForget();
        GC.Collect();
        GC.WaitForPendingFinalizers();
        GC.Collect();
        Assert.False(weak.IsAlive);
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static WeakReference EncodeAndForget()
    {
        var list = TransportSamples.Figure5(50);
        ObjectTransport.EncodeToArray(list);
        return new WeakReference(list);
    }
}

/// <summary>Its static constructor (run when a payload first creates one) encodes and decodes a payload of its own.</summary>
[Transportable]
public class DecodesInItsStaticConstructor
{
    internal static readonly string[]? Inner;

    public int Value;

    static DecodesInItsStaticConstructor() =>
        Inner = (string[]?)ObjectTransport.Decode(ObjectTransport.EncodeToArray(new[] { "inner", "payload" }));
}

/// <summary>A field of a class that is not sealed (Shape) and one of an array type.</summary>
[Transportable]
public class ShapeHolder
{
    [Transportable]
    public Shape? S;

    [Transportable]
    public int[]? Data;
}
