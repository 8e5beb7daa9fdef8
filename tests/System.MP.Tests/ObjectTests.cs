using System.MP.Transport;
using Scenarios;
using Xunit;

namespace System.MP.Tests;

/// <summary>The serializer in-process: encode to bytes, decode, compare the data.</summary>
public class ObjectTests
{
    private static object? RoundTrip(object? obj) => ObjectTransport.Decode(ObjectTransport.EncodeToArray(obj));

    private static T Trip<T>(T obj) => Assert.IsType<T>(RoundTrip(obj));

    [Fact]
    public void Smoke()
    {
        Assert.Null(RoundTrip(null));
        Assert.Equal(42, Trip(42));
        Assert.Equal("héllo", Trip("héllo"));
        Assert.Equal([1, 2, 3], Trip(new[] { 1, 2, 3 }));
        Assert.Null(TransportSamples.CheckFigure5(Trip(TransportSamples.Figure5(10)), 10));
        Assert.Null(TransportSamples.CheckRing(Trip(TransportSamples.Ring(5)), 5));
        Assert.Null(TransportSamples.CheckHolder(Trip(TransportSamples.MakeHolder())));
    }
}
