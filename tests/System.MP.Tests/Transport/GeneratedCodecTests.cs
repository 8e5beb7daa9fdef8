using System.MP.Transport;
using System.Runtime.ExceptionServices;
using Scenarios;
using Xunit;

namespace System.MP.Tests;

/// <summary>
/// The codecs the System.MP source generator writes at compile time (this test assembly's
/// [Transportable] types, Shared/TransportTypes.cs) against the ones built at run time: the same
/// bytes for the same graphs, type table and layout hashes included, and each path decodes what
/// the other wrote.
/// </summary>
public class GeneratedCodecTests
{
    /// <summary>Runs <paramref name="f"/> on a thread of its own, with run-time codecs only when <paramref name="runTime"/> (its own writer, reader and type tables).</summary>
    internal static T OnCodecs<T>(bool runTime, Func<T> f)
    {
        T result = default!;
        ExceptionDispatchInfo? failure = null;
        var thread = new Thread(() =>
        {
            Codecs.RunTimeOnlyForTests = runTime;
            try
            {
                result = f();
            }
            catch (Exception e)
            {
                failure = ExceptionDispatchInfo.Capture(e);
            }
        }, 16 << 20);
        thread.Start();
        thread.Join();
        failure?.Throw();
        return result;
    }

    public static TheoryData<string> Graphs => new(GraphsByName.Keys);

    private static readonly Dictionary<string, Func<object?>> GraphsByName = new()
    {
        ["figure 5 list"] = () => TransportSamples.Figure5(40),
        ["ring with cycles"] = () => TransportSamples.Ring(12),
        ["holder: nested structs, decimal, DateTime, Guid, int?, nint, enum"] = TransportSamples.MakeHolder,
        ["derived class with private, readonly and base fields"] = () =>
        {
            var c = new Circle(1234567890123) { X = 1.5, Radius = 2.25, Fill = Color.Green, Name = "c" };
            c.SetSerial(77);
            return c;
        },
        ["pair of shared objects"] = () =>
        {
            var square = new Square { Side = 3 };
            return new Pair { A = square, B = new object[] { square, new Circle(5), "x", 7 } };
        },
        ["struct array without references"] = () => new[]
        {
            new Body { Id = 1, Pos = new Vec3(1, 2, 3), In = new Inner { A = -1, B = 200, Flag = true } },
            new Body { Id = 2, Vel = new Vec3(-1, 0, 1) },
        },
        ["struct array with references"] = () => new[] { new Tagged { Id = 1, Label = "a", Dropped = "gone" }, new Tagged { Id = 2, Where = new Vec3(4, 5, 6) } },
        ["boxed structs"] = () => new object[] { new Vec3(1, 2, 3), new Tagged { Id = 9, Label = "t" }, new Body { Id = 3 } },
        ["enums boxed and in arrays"] = () => new object[] { Color.Blue, new[] { Color.Red, Color.Blue }, (Color)7 },
        ["class arrays and abstract-free hierarchies"] = () => new Shape[] { new Circle(1) { Name = "one" }, new Shape { X = 2 }, null! },
        ["counted (a constructor that must not run)"] = () => new Counted(),
        ["generic box (run-time codec on both paths) holding generated ones"] = () => new Box<Holder> { Value = TransportSamples.MakeHolder() },
        ["collection fields: lists, sets, dictionaries, arrays of lists, shared, empty, null, a cycle"] = () => TransportSamples.MakeBag(3),
        ["collections as the root and as elements of object[]"] = () => new object[]
        {
            new List<string> { "a", "b" }, new Dictionary<string, string> { ["k"] = "v" }, new HashSet<long> { 5, 6 },
            new List<Bag> { TransportSamples.MakeBag(1) }, new Dictionary<int, Circle>[] { new() { [1] = new Circle(2) } },
        },
    };

    /// <summary>A number goes into the layout hash as its invariant decimal text does (both codec paths share this; payloads carry the hash).</summary>
    [Theory]
    [InlineData(0)]
    [InlineData(7)]
    [InlineData(10)]
    [InlineData(4096)]
    [InlineData(-1)]
    [InlineData(-305)]
    [InlineData(int.MaxValue)]
    [InlineData(int.MinValue)]
    public void ANumberIsHashedAsItsInvariantDecimalText(int number)
    {
        var byNumber = new System.MP.CompilerServices.TransportLayoutHash();
        var byText = new System.MP.CompilerServices.TransportLayoutHash();
        byNumber.Add("Node");
        byText.Add("Node");
        byNumber.Add(number);
        byText.Add(number.ToString(Globalization.CultureInfo.InvariantCulture));
        Assert.Equal(byText.Value, byNumber.Value);
    }

    [Fact]
    public void TheTestTypesHaveGeneratedCodecsAndTheRunTimePathIsSeparate()
    {
        Assert.IsType<GeneratedClassCodec<Holder>>(Codecs.For(typeof(Holder)));
        Assert.IsType<GeneratedClassCodec<Circle>>(Codecs.For(typeof(Circle)));
        Assert.IsType<StructCodec<Tagged>>(Codecs.For(typeof(Tagged)));
        Assert.IsType<StructArrayCodec<Tagged>>(Codecs.For(typeof(Tagged[])));
        Assert.Same(Codecs.For(typeof(Holder[])), Codecs.For(typeof(Holder)).Vector);
        Assert.NotNull(CodecRegistry.Named("Scenarios.Color", typeof(Color).Assembly.GetName().Name!));
        Assert.IsType<ClassCodec>(Codecs.For(typeof(Box<int>))); // generic: left to run time (MOTOR005)
        Assert.IsType<ClassCodec>(OnCodecs(true, () => Codecs.For(typeof(Holder))));
    }

    [Theory]
    [MemberData(nameof(Graphs))]
    public void GeneratedAndRunTimeCodecsWriteTheSameBytes(string graph)
    {
        Func<object?> make = GraphsByName[graph];
        byte[] generated = OnCodecs(false, () => ObjectTransport.EncodeToArray(make()));
        byte[] runTime = OnCodecs(true, () => ObjectTransport.EncodeToArray(make()));
        Assert.Equal(Convert.ToHexString(runTime), Convert.ToHexString(generated));

        // Each path decodes what the other wrote, into graphs that encode to the same bytes again.
        byte[] generatedReadsRunTime = OnCodecs(false, () => ObjectTransport.EncodeToArray(ObjectTransport.Decode(runTime)));
        byte[] runTimeReadsGenerated = OnCodecs(true, () => ObjectTransport.EncodeToArray(ObjectTransport.Decode(generated)));
        Assert.Equal(generated, generatedReadsRunTime);
        Assert.Equal(generated, runTimeReadsGenerated);
    }

    [Fact]
    public void CollectionFieldsHaveRegisteredCodecsAndArriveIntactOnBothPaths()
    {
        // The generator registered each collection a field of Bag names (the NativeAOT path: no MakeGenericType).
        Assert.IsType<ListCodec<int>>(Codecs.For(typeof(List<int>)));
        Assert.Equal(typeof(Dictionary<Key, int>), CodecRegistry.FindCollection(WireFormat.EntryDictionary, typeof(Key), typeof(int)));
        Assert.Equal(typeof(List<Bag>), CodecRegistry.FindCollection(WireFormat.EntryList, typeof(Bag), null));
        Assert.Same(Codecs.For(typeof(List<int>[])), Codecs.For(typeof(List<int>)).Vector);
        foreach (bool runTime in new[] { false, true })
            for (int seed = 0; seed < 4; seed++)
            {
                Bag b = Assert.IsType<Bag>(OnCodecs(runTime, () => ObjectTransport.Decode(ObjectTransport.EncodeToArray(TransportSamples.MakeBag(seed)))));
                Assert.Null(TransportSamples.CheckBag(b, seed));
            }
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void ACollectionTheReceiverCouldNotRebuildIsRefusedBeforeAnythingIsSent(bool runTime)
    {
        // Another comparer: the receiver would build the set or dictionary with the default one.
        var e = Assert.Throws<TransportException>(() => OnCodecs(runTime, () => ObjectTransport.EncodeToArray(
            new Bag { Words = new HashSet<string>(StringComparer.OrdinalIgnoreCase) { "a" } })));
        Assert.Contains("HashSet<System.String> with the comparer", e.Message);
        e = Assert.Throws<TransportException>(() => OnCodecs(runTime, () => ObjectTransport.EncodeToArray(
            new Bag { Names = new Dictionary<string, string>(StringComparer.InvariantCultureIgnoreCase) { ["a"] = "b" } })));
        Assert.Contains("default comparer", e.Message);
        // Ordinal compares strings as the default comparer does: it travels (and arrives with the default one).
        var names = Assert.IsType<Bag>(OnCodecs(runTime, () => ObjectTransport.Decode(ObjectTransport.EncodeToArray(
            new Bag { Names = new Dictionary<string, string>(StringComparer.Ordinal) { ["a"] = "b" } })))).Names!;
        Assert.Equal("b", names["a"]);
        // A class derived from List<T> is not List<T>, and elements must travel themselves.
        e = Assert.Throws<TransportException>(() => OnCodecs(runTime, () => ObjectTransport.EncodeToArray(new object[] { new DerivedList { 1 } })));
        Assert.Contains(nameof(DerivedList), e.Message);
        e = Assert.Throws<TransportException>(() => OnCodecs(runTime, () => ObjectTransport.EncodeToArray(new List<Plain> { new() })));
        Assert.Contains(nameof(Plain), e.Message);
    }

    private sealed class DerivedList : List<int>;

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void AForgedSetOrDictionaryWithARepeatedElementIsRefused(bool runTime)
    {
        byte[] set = OnCodecs(runTime, () => ObjectTransport.EncodeToArray(new HashSet<long> { 0x1111111111111111, 0x2222222222222222 }));
        int at = Convert.ToHexString(set).IndexOf("2222222222222222", StringComparison.Ordinal) / 2;
        BitConverter.TryWriteBytes(set.AsSpan(at), 0x1111111111111111);
        var e = Assert.Throws<TransportException>(() => OnCodecs(runTime, () => ObjectTransport.Decode(set)));
        Assert.Contains("twice", e.Message);

        byte[] map = OnCodecs(runTime, () => ObjectTransport.EncodeToArray(new Dictionary<int, string> { [0x33333333] = "a", [0x44444444] = "b" }));
        at = Convert.ToHexString(map).IndexOf("44444444", StringComparison.Ordinal) / 2;
        BitConverter.TryWriteBytes(map.AsSpan(at), 0x33333333);
        e = Assert.Throws<TransportException>(() => OnCodecs(runTime, () => ObjectTransport.Decode(map)));
        Assert.Contains("twice", e.Message);
    }

    [Fact]
    public void GeneratedDecodersCheckWhatTheyRead()
    {
        Holder h = Assert.IsType<Holder>(OnCodecs(false, () => ObjectTransport.Decode(ObjectTransport.EncodeToArray(TransportSamples.MakeHolder()))));
        Assert.Null(TransportSamples.CheckHolder(h));
        Circle c = Assert.IsType<Circle>(OnCodecs(false, () => ObjectTransport.Decode(ObjectTransport.EncodeToArray(GraphsByName["derived class with private, readonly and base fields"]()))));
        Assert.Equal((77, 1234567890123L, 1.5, "c"), (c.Serial, c.Stamp, c.X, c.Name));
        int constructed = Counted.Constructed;
        Assert.IsType<Counted>(OnCodecs(false, () => ObjectTransport.Decode(ObjectTransport.EncodeToArray(new Counted()))));
        Assert.Equal(constructed + 1, Counted.Constructed); // the sender's constructor ran, the receiver's did not
    }
}
