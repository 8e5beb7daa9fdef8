using System.MP;

namespace Scenarios;

/// <summary>
/// Fuzzing the object receive path through MPI (scenario objects-fuzz): senders send
/// random and mutated-valid payloads (graphs, strings, arrays, lists, sets and dictionaries) as raw bytes, interleaved with legitimate object
/// messages, to the receivers users write (ORecv, ORecv&lt;T&gt;, OIRecv, AnySource, OBcast, OScatter).
/// Every legitimate message must arrive intact; a forged one may only decode (a mutation
/// can produce another valid payload) or throw TransportException; no receive may hang
/// (a watchdog fails the job) or allocate beyond <see cref="AllocationBound"/>.
/// </summary>
/// <remarks>
/// MOTOR_FUZZ_SEED (default 1) and MOTOR_FUZZ_CASES (default 300 per sender) make a run
/// reproducible; run it with a small MOTOR_OBJECT_CHUNK_BYTES to fuzz chunked payloads.
/// A first message that is a well-formed chunked header (signature, version, exactly the
/// chunk size, a larger announced total, a tag in range) is indistinguishable from a real
/// one, whose continuation the receiver rightly waits for: the fuzzer does not make those.
/// </remarks>
internal static class ObjectFuzz
{
    internal static void Register(Dictionary<Scenario, Action<Communicator>> s) => s[Scenario.ObjectsFuzz] = Run;

    private const int Tag = 61, CollTag = 62;
    private const int WatchdogSeconds = 60;

    /// <summary>Bytes a rejected or decoded forged payload may make the receiver allocate (documented in API.md).</summary>
    private static long AllocationBound(long payloadBytes) => 64 * 1024 + 32 * payloadBytes;

    private static int Seed => int.TryParse(Environment.GetEnvironmentVariable("MOTOR_FUZZ_SEED"), out int s) ? s : 1;
    private static int Cases => int.TryParse(Environment.GetEnvironmentVariable("MOTOR_FUZZ_CASES"), out int n) ? n : 300;
    private static int ChunkBytes =>
        int.TryParse(Environment.GetEnvironmentVariable("MOTOR_OBJECT_CHUNK_BYTES"), out int n) && n >= 64 ? n : 1 << 30;

    /// <summary>The size of a chunked payload's first message (wire format 2): the chunk size, at most 64 KiB.</summary>
    private static int FirstChunkBytes => Math.Min(ChunkBytes, 64 * 1024);

    private enum Kind : byte { Legit = 0, Forged = 1, End = 2 }

    private static void Run(Communicator c)
    {
        int receiver = c.Size > 1 ? 1 : 0;
        bool sender = c.Rank != receiver;
        int senders = c.Size == 1 ? 1 : c.Size - 1;
        if (c.Size == 1)
            throw new InvalidOperationException("objects-fuzz needs 2 or more ranks");
        if (sender)
            Send(c, receiver);
        else
            Receive(c, senders);
        Collective(c);
        Scatter(c);
        c.Barrier();
    }

    // ---- point to point ----

    private static void Send(Communicator c, int receiver)
    {
        var rng = new Random(Seed * 7919 + c.Rank);
        byte[][] valid = ValidPayloads();
        int forged = 0, legit = 0;
        for (int i = 0; i < Cases; i++)
        {
            if (rng.Next(3) == 0)
            {
                var list = TransportSamples.Figure5(1 + rng.Next(40));
                c.Send(new[] { (byte)Kind.Legit }, receiver, Tag);
                bool bag = rng.Next(2) == 0;
                c.OSend(new FuzzEnvelope { From = c.Rank, Index = i, List = list, Bag = bag ? TransportSamples.MakeBag(i) : null }, receiver, Tag);
                legit++;
            }
            else
            {
                byte[] bytes = Forge(rng, valid);
                c.Send(new[] { (byte)Kind.Forged }, receiver, Tag);
                c.Send(bytes, receiver, Tag);
                forged++;
            }
        }
        c.Send(new[] { (byte)Kind.End }, receiver, Tag);
        Console.WriteLine($"objects-fuzz rank {c.Rank}: sent {forged} forged and {legit} legitimate payloads (seed {Seed})");
        Check.True(forged > 0 && legit > 0, "both kinds were sent");
    }

    private static void Receive(Communicator c, int senders)
    {
        var rejected = new Dictionary<string, int>();
        int decoded = 0, legit = 0, ended = 0, round = 0;
        long maxAllocated = 0;
        var nextIndex = new Dictionary<int, int>();
        while (ended < senders)
        {
            // The kind of the next message: from any sender, then its payload from that one.
            var kind = new byte[1];
            Status st = c.Recv(kind, Mpi.AnySource, Tag);
            int from = st.Source;
            if ((Kind)kind[0] == Kind.End)
            {
                ended++;
                continue;
            }
            // Rotate through the receivers users write; AnySource only when one sender
            // (with several, AnySource could take another sender's payload next).
            int how = round++ % (senders == 1 ? 4 : 3);
            long size = c.Probe(from, Tag).ByteCount; // the first message's size, without receiving it
            long before = GC.GetAllocatedBytesForCurrentThread();
            object? got;
            using (Watchdog($"receive {round} ({(Kind)kind[0]}, receiver {how}) from rank {from}"))
            {
                try
                {
                    got = how switch
                    {
                        0 => c.ORecv(from, Tag),
                        1 => c.ORecv<FuzzEnvelope>(from, Tag),
                        2 => ReceiveNonblocking(c, from),
                        _ => c.ORecv(Mpi.AnySource, Tag),
                    };
                }
                catch (TransportException e)
                {
                    Check.True((Kind)kind[0] == Kind.Forged, $"a legitimate payload from {from} was refused: {e.Message}");
                    CheckAllocation(GC.GetAllocatedBytesForCurrentThread() - before, size, ref maxAllocated);
                    string key = Category(e.Message);
                    rejected[key] = rejected.GetValueOrDefault(key) + 1;
                    continue;
                }
                catch (Exception e)
                {
                    Check.True(false, $"only TransportException may come out of a receive; got {e.GetType().Name}: {e.Message}");
                    continue;
                }
            }
            long allocated = GC.GetAllocatedBytesForCurrentThread() - before;
            if ((Kind)kind[0] == Kind.Forged)
            {
                decoded++;
                CheckAllocation(allocated, size, ref maxAllocated);
                continue;
            }
            legit++;
            if (got is not FuzzEnvelope env)
            {
                Check.True(false, $"legitimate payload from {from} arrived as {got?.GetType().Name ?? "null"}");
                continue;
            }
            Check.Equal(from, env.From, "legitimate payload's sender");
            int expectedIndex = nextIndex.GetValueOrDefault(from);
            Check.True(env.Index >= expectedIndex, $"legitimate payloads from {from} in order ({env.Index} after {expectedIndex})");
            nextIndex[from] = env.Index + 1;
            Check.Null(TransportSamples.CheckFigure5(env.List, CountNodes(env.List)), "legitimate list intact");
            if (env.Bag is not null)
                Check.Null(TransportSamples.CheckBag(env.Bag, env.Index), "legitimate bag of collections intact");
        }
        Console.WriteLine($"objects-fuzz rank {c.Rank}: {legit} legitimate intact, {rejected.Values.Sum()} forged refused, " +
                          $"{decoded} forged decoded, most allocated by a forged one {maxAllocated} B; refusals by message:");
        foreach (var (message, n) in rejected.OrderByDescending(kv => kv.Value))
            Console.WriteLine($"  {n,5} {message}");
        Check.True(legit > 0 && rejected.Count > 0, "the run exercised both outcomes");
    }

    /// <summary>A refusal's kind: its message without numbers and names.</summary>
    private static string Category(string message) =>
        System.Text.RegularExpressions.Regex.Replace(
            System.Text.RegularExpressions.Regex.Replace(message, "'[^']*'", "'…'"), "0x[0-9A-F]+|-?[0-9]+", "N");

    private static void CheckAllocation(long allocated, long payloadBytes, ref long max)
    {
        max = Math.Max(max, allocated);
        Check.True(allocated <= AllocationBound(payloadBytes),
                   $"a forged payload of {payloadBytes} B made the receiver allocate {allocated} B (bound {AllocationBound(payloadBytes)})");
    }

    private static object? ReceiveNonblocking(Communicator c, int from)
    {
        ObjectRequest<object> r = c.OIRecv<object>(from, Tag);
        // Test until it completes: a Test must never block, whatever arrives.
        while (!r.Test(out _))
            Thread.Yield();
        return r.Result;
    }

    private static int CountNodes(LinkedList? l)
    {
        int n = 0;
        for (; l is not null && n < 10_000; l = l.next)
            n++;
        return n;
    }

    // ---- collectives: a forging root broadcasts bytes the way OBcast does ----

    private static void Collective(Communicator c)
    {
        var rng = new Random(Seed * 104729);
        byte[][] valid = ValidPayloads();
        int refused = 0;
        for (int i = 0; i < Math.Max(4, Cases / 20); i++)
        {
            bool forge = i % 2 == 0;
            if (c.Rank == 0 && forge)
            {
                byte[] bytes = Forge(rng, valid);
                c.Bcast((long)bytes.Length, 0);
                for (int off = 0; off < bytes.Length; off += ChunkBytes)
                    c.Bcast(bytes.AsSpan(off, Math.Min(ChunkBytes, bytes.Length - off)), 0);
                continue;
            }
            if (forge)
                _ = Forge(rng, valid); // keep every rank's generator in step with the root's
            using (Watchdog($"OBcast {i}"))
            {
                try
                {
                    var list = c.OBcast(c.Rank == 0 ? TransportSamples.Figure5(7) : null, 0);
                    if (!forge && c.Rank != 0) // the root gets its own object back
                        Check.Null(TransportSamples.CheckFigure5(list, 7), "legitimate OBcast intact");
                }
                catch (TransportException e)
                {
                    Check.True(forge, $"legitimate OBcast refused: {e.Message}");
                    refused++;
                }
            }
        }
        // A header whose total is not the announced size is refused as soon as the header is
        // in, and the rest of the rounds are still taken off the wire (the next OBcast works).
        if (c.Rank == 0)
        {
            byte[] bytes = (byte[])valid[0].Clone();
            BitConverter.TryWriteBytes(bytes.AsSpan(8, 8), BitConverter.ToInt64(bytes, 8) + 4096);
            c.Bcast((long)bytes.Length, 0);
            for (int off = 0; off < bytes.Length; off += ChunkBytes)
                c.Bcast(bytes.AsSpan(off, Math.Min(ChunkBytes, bytes.Length - off)), 0);
        }
        else
        {
            using (Watchdog("OBcast with a header that contradicts the announced size"))
            {
                try
                {
                    _ = c.OBcast<object>(0);
                    Check.True(false, "an OBcast whose header contradicts the root's size was accepted");
                }
                catch (TransportException e)
                {
                    Check.True(e.Message.Contains("the root announced", StringComparison.Ordinal), $"refused for its size: {e.Message}");
                }
            }
        }
        _ = c.OBcast(c.Rank == 0 ? "after" : null, 0) is "after" || Fail("OBcast after the forged ones");
        if (c.Rank != 0)
            Console.WriteLine($"objects-fuzz rank {c.Rank}: OBcast refused {refused} forged payloads");
    }

    // ---- OScatter: a forging root scatters blocks the way OScatter does ----

    /// <summary>
    /// Rounds of OScatter in which every other one has a forging root: it sends what OScatter
    /// sends (the blocks' sizes by Bcast, then the blocks by Scatterv in the same rounds),
    /// but each block is a forged payload, so every other rank's OScatter decodes its own
    /// forged block through the real receive path.  The rounds in between are legitimate
    /// OScatters whose blocks are checked element by element.
    /// </summary>
    private static void Scatter(Communicator c)
    {
        var rng = new Random(Seed * 15485863); // the same draws on every rank
        byte[][] valid = Encodings(
        [
            new[] { new FuzzEnvelope { From = -1, Index = 0, List = TransportSamples.Figure5(2) } },
            new FuzzEnvelope[] { new() { From = -1, Index = 1 }, new() { From = -1, Index = 2, List = TransportSamples.Figure5(4) } },
            Array.Empty<FuzzEnvelope>(),
            new[] { 1, 2, 3 },
        ]);
        int refused = 0, decoded = 0, intact = 0;
        long maxAllocated = 0;
        for (int i = 0; i < Math.Max(8, Cases / 5); i++)
        {
            bool forge = i % 2 == 0;
            byte[][] blocks = forge ? Enumerable.Range(0, c.Size).Select(_ => Forge(rng, valid)).ToArray() : [];
            long[] sizes = blocks.Select(b => (long)b.Length).ToArray();
            if (forge && i % 8 == 4) // sizes that no encoder makes: negative ones for the receivers
                for (int r = 1; r < c.Size; r++)
                    sizes[r] = -1 - rng.Next(1000);
            if (forge && c.Rank == 0)
            {
                ScatterForged(c, blocks, sizes);
                continue;
            }
            long size = forge ? Math.Max(0, sizes[c.Rank]) : 0;
            long before = GC.GetAllocatedBytesForCurrentThread();
            using (Watchdog($"OScatter {i}"))
            {
                try
                {
                    FuzzEnvelope[]? mine = c.OScatterBlocks(c.Rank == 0 ? Envelopes(i, c.Size) : null, 0);
                    if (forge)
                    {
                        decoded++; // a mutation may be another valid payload
                        CheckAllocation(GC.GetAllocatedBytesForCurrentThread() - before, size, ref maxAllocated);
                        continue;
                    }
                    CheckBlock(mine, i, c.Size, c.Rank);
                    intact++;
                }
                catch (TransportException e)
                {
                    Check.True(forge, $"legitimate OScatter {i} refused: {e.Message}");
                    CheckAllocation(GC.GetAllocatedBytesForCurrentThread() - before, size, ref maxAllocated);
                    refused++;
                }
                catch (Exception e)
                {
                    Check.True(false, $"only TransportException may come out of OScatter; got {e.GetType().Name}: {e.Message}");
                }
            }
        }
        FuzzEnvelope[]? last = c.OScatterBlocks(c.Rank == 0 ? Envelopes(-1, c.Size) : null, 0);
        CheckBlock(last, -1, c.Size, c.Rank);
        if (c.Rank != 0)
        {
            Console.WriteLine($"objects-fuzz rank {c.Rank}: OScatter refused {refused} forged blocks, decoded {decoded}, " +
                              $"{intact} legitimate intact, most allocated by a forged one {maxAllocated} B");
            Check.True(refused > 0 && intact > 0, "OScatter saw both outcomes");
        }
    }

    /// <summary>
    /// What OScatter's root sends (Communicator.Objects.cs, SplitRepresentation.cs): the
    /// announced sizes, then forged blocks in OScatter's rounds (nothing where a size is negative).
    /// </summary>
    private static void ScatterForged(Communicator c, byte[][] blocks, long[] sizes)
    {
        int p = c.Size;
        long[] counts = (long[])sizes.Clone();
        c.Bcast(counts, 0);
        // OScatter's round plan: one round when all blocks fit in a chunk together, else
        // rounds of ChunkBytes / p bytes per rank.
        long sum = counts.Sum(), max = Math.Max(1, counts.Max());
        long slice = sum <= ChunkBytes ? max : Math.Max(ChunkBytes / p, 1);
        long rounds = (max + slice - 1) / slice;
        for (long k = 0; k < rounds; k++)
        {
            var parts = new int[p];
            var displs = new int[p];
            var send = new List<byte>();
            for (int r = 0; r < p; r++)
            {
                parts[r] = (int)Math.Clamp(counts[r] - k * slice, 0, slice);
                displs[r] = send.Count;
                send.AddRange(blocks[r].Skip((int)(k * slice)).Take(parts[r]));
            }
            c.Scatterv(send.ToArray(), parts, displs, new byte[Math.Max(1, parts[0])], 0);
        }
    }

    /// <summary>A legitimate OScatter's array: 2 to 4 envelopes per rank, each naming its index.</summary>
    private static FuzzEnvelope[] Envelopes(int round, int p) =>
        Enumerable.Range(0, p * 2 + Math.Abs(round) % (2 * p + 1))
                  .Select(j => new FuzzEnvelope { From = round, Index = j, List = TransportSamples.Figure5(1 + j % 5) })
                  .ToArray();

    private static void CheckBlock(FuzzEnvelope[]? mine, int round, int p, int rank)
    {
        int n = p * 2 + Math.Abs(round) % (2 * p + 1), first = 0;
        for (int r = 0; r < rank; r++)
            first += n / p + (r < n % p ? 1 : 0);
        int count = n / p + (rank < n % p ? 1 : 0);
        if (mine is null || mine.Length != count)
        {
            Check.True(false, $"OScatter {round}: rank {rank} got {mine?.Length.ToString() ?? "null"} elements, expected {count}");
            return;
        }
        for (int j = 0; j < count; j++)
        {
            FuzzEnvelope e = mine[j];
            Check.True(e.From == round && e.Index == first + j, $"OScatter {round}: element {j} is ({e.From}, {e.Index})");
            Check.Null(TransportSamples.CheckFigure5(e.List, 1 + (first + j) % 5), $"OScatter {round}: element {j}'s list");
        }
    }

    private static bool Fail(string what)
    {
        Check.True(false, what);
        return false;
    }

    // ---- making payloads ----

    /// <summary>Encodings of a few graphs, taken from a real OSend to self (one message each).</summary>
    private static byte[][] ValidPayloads() => Encodings(
    [
        "s",
        7,
        new FuzzEnvelope { From = 9, Index = 1, List = TransportSamples.Figure5(3) },
        "a string",
        new[] { 1, 2, 3, 4 },
        TransportSamples.Figure5(2),
        TransportSamples.MakeBag(2),
        new Dictionary<string, string> { ["k"] = "v", ["l"] = "w" },
        new HashSet<long> { 1, 2, 3 },
    ]);

    /// <summary>The payloads of <paramref name="graphs"/> that fit in one message, as an OSend to self sends them.</summary>
    private static byte[][] Encodings(object[] graphs)
    {
        var self = Communicator.Self;
        var result = new List<byte[]>();
        foreach (object g in graphs)
        {
            using ObjectRequest sent = self.OISend(g, 0, 1); // a blocking send to self may wait for its receive
            Status st = self.Probe(0, 1);
            if (st.ByteCount < FirstChunkBytes)
            {
                var bytes = new byte[st.ByteCount];
                self.Recv(bytes, 0, 1);
                result.Add(bytes);
            }
            else
            {
                self.ORecv(0, 1); // chunked: its continuation is on the channel, for an object receive
            }
            sent.Wait();
        }
        return [.. result];
    }

    private static byte[] Forge(Random rng, byte[][] valid)
    {
        for (;;)
        {
            byte[] b = rng.Next(4) switch
            {
                0 => Random(rng),
                1 => Mutate(rng, valid[rng.Next(valid.Length)]),
                2 => HeaderMutation(rng, valid[rng.Next(valid.Length)]),
                _ => Truncate(rng, valid[rng.Next(valid.Length)]),
            };
            if (!LooksLikeRealChunkedStart(b))
                return b;
        }
    }

    private static byte[] Random(Random rng)
    {
        var b = new byte[rng.Next(0, 200)];
        rng.NextBytes(b);
        if (b.Length >= 16 && rng.Next(2) == 0)
        {
            b[4] |= 1; // the pattern that used to hang ORecv: "chunked", announcing more than arrived
            BitConverter.TryWriteBytes(b.AsSpan(8), (long)b.Length + 1 + rng.Next(1 << 20));
        }
        return b;
    }

    private static byte[] Mutate(Random rng, byte[] v)
    {
        byte[] b = (byte[])v.Clone();
        for (int k = 1 + rng.Next(4); k > 0; k--)
            b[rng.Next(b.Length)] ^= (byte)(1 << rng.Next(8));
        return b;
    }

    private static byte[] HeaderMutation(Random rng, byte[] v)
    {
        byte[] b = (byte[])v.Clone();
        switch (rng.Next(5))
        {
            case 0: b[4] |= 1; BitConverter.TryWriteBytes(b.AsSpan(8), (long)b.Length * (2 + rng.Next(8))); break; // chunked, announces more
            case 1: BitConverter.TryWriteBytes(b.AsSpan(4), (uint)rng.Next()); break;                                // unknown flags or version
            case 2: BitConverter.TryWriteBytes(b.AsSpan(8), rng.NextInt64()); break;                                 // any total
            case 3: BitConverter.TryWriteBytes(b.AsSpan(16), rng.Next()); break;                                     // type-table bytes
            default: b[4] |= 1; BitConverter.TryWriteBytes(b.AsSpan(20), -1 - rng.Next(1000)); break;                // bad continuation tag
        }
        return b;
    }

    private static byte[] Truncate(Random rng, byte[] v) => v[..rng.Next(v.Length)];

    private static bool LooksLikeRealChunkedStart(byte[] b) =>
        b.Length == FirstChunkBytes && b.Length >= 24 && BitConverter.ToUInt32(b, 0) == 0x52544F4D &&
        BitConverter.ToUInt32(b, 4) == ((2u << 8) | 1u) && BitConverter.ToInt64(b, 8) > b.Length &&
        BitConverter.ToInt32(b, 20) > Mpi.TagUpperBound && (long)BitConverter.ToInt32(b, 20) <= 2L * Mpi.TagUpperBound + 1;

    /// <summary>Fails the job (instead of letting it time out) when a receive takes too long.</summary>
    private static IDisposable Watchdog(string what) =>
        new Timer(_ =>
        {
            Console.Error.WriteLine($"FAIL rank {Check.Rank}: {what} still blocked after {WatchdogSeconds} s");
            Console.Error.Flush();
            Environment.FailFast($"objects-fuzz watchdog: {what} hung");
        }, null, WatchdogSeconds * 1000, Timeout.Infinite);
}

/// <summary>A legitimate fuzz message: who sent it, its index, and a list to check.</summary>
[Transportable]
public class FuzzEnvelope
{
    /// <summary>The sending rank.</summary>
    public int From;

    /// <summary>Its position among that rank's messages.</summary>
    public int Index;

    /// <summary>Figure 5's list of some length.</summary>
    [Transportable] public LinkedList? List;

    /// <summary>TransportSamples.MakeBag(Index) or null: list, set and dictionary fields.</summary>
    [Transportable] public Bag? Bag;
}
