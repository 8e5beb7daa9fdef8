using System.MP;

namespace Scenarios;

/// <summary>
/// Fuzzing the object receive path through MPI (scenario objects-fuzz): senders send
/// random and mutated-valid payloads as raw bytes, interleaved with legitimate object
/// messages, to the receivers users write (ORecv, ORecv&lt;T&gt;, OIRecv, AnySource, OBcast).
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
                c.OSend(new FuzzEnvelope { From = c.Rank, Index = i, List = list }, receiver, Tag);
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
        _ = c.OBcast(c.Rank == 0 ? "after" : null, 0) is "after" || Fail("OBcast after the forged ones");
        if (c.Rank != 0)
            Console.WriteLine($"objects-fuzz rank {c.Rank}: OBcast refused {refused} forged payloads");
    }

    private static bool Fail(string what)
    {
        Check.True(false, what);
        return false;
    }

    // ---- making payloads ----

    /// <summary>Encodings of a few graphs, taken from a real OSend to self (one message each).</summary>
    private static byte[][] ValidPayloads()
    {
        var self = Communicator.Self;
        object[] graphs =
        [
            "s",
            7,
            new FuzzEnvelope { From = 9, Index = 1, List = TransportSamples.Figure5(3) },
            "a string",
            new[] { 1, 2, 3, 4 },
            TransportSamples.Figure5(2),
        ];
        var result = new List<byte[]>();
        foreach (object g in graphs)
        {
            using ObjectRequest sent = self.OISend(g, 0, 1); // a blocking send to self may wait for its receive
            Status st = self.Probe(0, 1);
            if (st.ByteCount < ChunkBytes)
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
        b.Length == ChunkBytes && b.Length >= 24 && BitConverter.ToUInt32(b, 0) == 0x52544F4D &&
        BitConverter.ToUInt32(b, 4) == ((1u << 8) | 1u) && BitConverter.ToInt64(b, 8) > b.Length &&
        BitConverter.ToInt32(b, 20) >= 0 && BitConverter.ToInt32(b, 20) <= Mpi.TagUpperBound;

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
}
