using System.MP.Transport;
using Scenarios;
using Xunit;

namespace System.MP.Tests;

/// <summary>
/// The object receive path (src/System.MP/Transport/PayloadChannel.cs): a first message's header
/// is checked before anything more is waited for, continuation messages travel on the
/// same communicator under the object transport's tags (above Mpi.TagUpperBound), and random and mutated payloads sent through MPI to every
/// kind of object receiver (ORecv, ORecv&lt;T&gt;, OIRecv, AnySource, OBcast, OScatter: a forging
/// root sends OScatter's sizes and rounds with forged blocks, negative sizes among them) give
/// TransportException or a value, never a hang, while legitimate messages in between arrive
/// intact (scenario objects-fuzz).
/// </summary>
public unsafe class PayloadChannelTests
{
    [Theory]
    [InlineData(2, false, false, 64, false)]
    [InlineData(3, false, false, 64, false)]
    [InlineData(2, true, false, 0, false)]
    [InlineData(2, false, true, 64, false)]
    [InlineData(2, true, true, 64, false)]
    [InlineData(2, false, false, 64, true)]
    [InlineData(2, true, true, 0, true)]
    public void ForgedPayloadsThroughMpiNeverHangOrCorruptLegitimateOnes(int ranks, bool hosted, bool openMpi, int chunkBytes, bool runTimeCodecs)
    {
        var env = new Dictionary<string, string> { ["MOTOR_FUZZ_SEED"] = (ranks * 10 + (hosted ? 1 : 0) + (openMpi ? 2 : 0)).ToString() };
        if (runTimeCodecs)
            env["MOTOR_OBJECT_CODECS"] = "runtime"; // every rank builds its codecs at run time instead of using the generated ones
        if (chunkBytes > 0)
            env["MOTOR_OBJECT_CHUNK_BYTES"] = chunkBytes.ToString();
        Job.Result r = Job.RunScenario(Scenario.ObjectsFuzz, ranks, timeoutSeconds: 240, hosted: hosted, env: env,
                                       launcher: openMpi ? Job.Launcher.OpenMpi : Job.Launcher.Mpich);
        Assert.Matches(@"\d+ legitimate intact, \d+ forged refused", r.Output);
        for (int rank = 1; rank < ranks; rank++)
            Assert.Matches($@"objects-fuzz rank {rank}: OScatter refused [1-9]\d* forged blocks, decoded \d+, [1-9]\d* legitimate intact", r.Output);
    }

    private static bool IsChunked(byte[] first, out long announced)
    {
        fixed (byte* p = first)
        {
            PayloadChannel.Header header = PayloadChannel.ReadHeader(p, first.Length, whole: false);
            announced = header.Total;
            return header.Chunked;
        }
    }

    [Fact]
    public void AFirstMessageIsCheckedBeforeAnythingMoreIsAwaited()
    {
        // One-message payloads: not chunked; a message too short for a header is refused.
        Assert.False(IsChunked(ObjectTransport.EncodeToArray(new[] { 1, 2, 3 }), out _));
        Assert.Contains("more bytes", Assert.Throws<TransportException>(() => IsChunked(new byte[] { 1, 2, 3 }, out _)).Message);

        // The pattern that made ORecv wait forever: 20+ bytes, bit 0 of byte 4, a larger total.
        var random = new byte[40];
        random[4] = 1;
        BitConverter.TryWriteBytes(random.AsSpan(8), 1L << 40);
        Assert.Contains("signature", Assert.Throws<TransportException>(() => IsChunked(random, out _)).Message);

        // Right signature and version, chunked, but not the chunk size: refused at once.
        Assert.Contains("first message of a chunked payload",
                        Assert.Throws<TransportException>(() => IsChunked(ForgedPayloads.ChunkedStart(64, 1L << 20), out _)).Message);

        // Unknown flag bits or another version.
        byte[] flags = ObjectTransport.EncodeToArray("x");
        flags[5] = 7; // version 7
        Assert.Contains("not those of this wire format", Assert.Throws<TransportException>(() => IsChunked(flags, out _)).Message);
        flags = ObjectTransport.EncodeToArray("x");
        flags[4] |= 0x10;
        Assert.Contains("not those of this wire format", Assert.Throws<TransportException>(() => IsChunked(flags, out _)).Message);
    }
}
