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

    /// <summary>
    /// The first-message buffer an idle thread's reader keeps is freed after gen-2 collections
    /// (set aside at one, freed at the next unless a receive took it back); a buffer a receive
    /// holds is never freed under it, and a receive after the trim works and keeps a buffer anew.
    /// Per thread: other tests' receives and collections on other threads change nothing here.
    /// </summary>
    [Fact]
    public void AnIdleThreadsReceiveBufferIsFreedAtGen2Collections()
    {
        Communicator self = Communicator.Self;
        Assert.Equal("first", RoundTripToSelf(self, "first"));
        ObjectReader reader = ObjectReader.Current!;

        // A buffer in use (taken as a receive takes it) survives any number of trims.
        NativeBuffer buffer = ObjectReader.TakeReceiveBuffer();
        for (int i = 0; i < 4; i++)
            CollectGen2();
        Assert.True(buffer.Pointer != null && buffer.Capacity >= WireFormat.FirstChunkBytes, "a buffer taken by a receive is never freed under it");

        // Given back, the thread keeps it, and frees it once idle (checked on the buffer itself:
        // however many collections other tests cause meanwhile, freed stays freed).
        ObjectReader.KeepReceiveBuffer(buffer);
        for (int i = 0; i < 50 && buffer.Pointer != null; i++)
            CollectGen2();
        Assert.True(buffer.Pointer == null, "an idle thread's kept buffer is freed after gen-2 collections");
        Assert.False(reader.KeepsReceiveBuffer, "the idle thread keeps no buffer");

        Assert.Equal("after the trim", RoundTripToSelf(self, "after the trim"));
    }

    private static string? RoundTripToSelf(Communicator self, string text)
    {
        using ObjectRequest sent = self.OISend(text, 0, 23071);
        string? got = self.ORecv<string>(0, 23071);
        sent.Wait();
        return got;
    }

    private static void CollectGen2()
    {
        GC.Collect(2, GCCollectionMode.Forced, blocking: true);
        GC.WaitForPendingFinalizers();
    }
}
