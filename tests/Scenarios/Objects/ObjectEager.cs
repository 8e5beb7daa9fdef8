using System.MP;
using System.Reflection;

namespace Scenarios;

/// <summary>
/// ORecv's first message in one posted receive (PayloadChannel.Receive): payloads
/// one byte below, at and above the first-message size, large payloads that continue under
/// continuation tags, a typed message too long for an object receive (refused, consumed, the next
/// payload fine), object and typed messages on other tags and communicators left alone, and
/// several threads receiving objects at once (thread level Multiple).
/// </summary>
internal static class ObjectEager
{
    internal static void Register(Dictionary<Scenario, Action<Communicator>> s)
    {
        s[Scenario.ObjectsEagerBoundary] = Boundary;
        s[Scenario.ObjectsEagerThreads] = Threads;
        s[Scenario.ObjectsEagerTrimmed] = Trimmed;
    }

    /// <summary>The most bytes of a payload's first message: MOTOR_OBJECT_CHUNK_BYTES, at most 64 KiB.</summary>
    private static int FirstBytes =>
        int.TryParse(Environment.GetEnvironmentVariable("MOTOR_OBJECT_CHUNK_BYTES"), out int n) && n >= 64 ? Math.Min(n, 64 * 1024) : 64 * 1024;

    /// <summary>Bytes of a payload holding a byte[] of no elements (the payload of byte[n] has n more).</summary>
    private static long EmptyByteArrayPayload()
    {
        using ObjectRequest sent = Communicator.Self.OISend(Array.Empty<byte>(), 0, 3);
        long bytes = Communicator.Self.Probe(0, 3).ByteCount;
        Check.Equal(0, Communicator.Self.ORecv<byte[]>(0, 3)!.Length, "empty array to self");
        sent.Wait();
        return bytes;
    }

    internal static byte[] Pattern(int n, int seed)
    {
        var b = new byte[n];
        for (int i = 0; i < n; i++)
            b[i] = (byte)(i * 31 + seed);
        return b;
    }

    private static void Boundary(Communicator c)
    {
        const int tag = 8, typedTag = 7;
        int first = FirstBytes;
        long overhead = EmptyByteArrayPayload();
        int[] lengths = [first - (int)overhead - 1, first - (int)overhead, first - (int)overhead + 1, 3 * first + 5, 1 << 20];
        using Communicator dup = c.Dup();
        if (c.Rank == 0)
        {
            for (int k = 0; k < lengths.Length; k++)
                c.OSend(Pattern(lengths[k], k), 1, tag);
            // Messages an object receive on (c, tag) must leave alone: a typed one on another tag,
            // one of the same tag on another communicator; then the object they surround.
            c.Send(new[] { 11 }, 1, typedTag);
            dup.Send(new[] { 12 }, 1, tag);
            dup.OSend("on the duplicate", 1, tag);
            c.OSend("after them", 1, tag);
            // A typed message one byte longer than any first message: refused, consumed; the next payload arrives.
            c.Send(new byte[first + 1], 1, tag);
            c.OSend("after the refusal", 1, tag);
            // A payload whose decoding receives another (a static constructor): each in a buffer of its own.
            c.OSend(new object[] { new ReceivesInItsStaticConstructor(), Pattern(3000, 21) }, 1, tag);
            c.OSend(Pattern(5000, 22), 1, NestedReceive.Tag);
        }
        else if (c.Rank == 1)
        {
            for (int k = 0; k < lengths.Length; k++)
            {
                long payload = overhead + lengths[k];
                Check.Equal(Math.Min(payload, first), c.Probe(0, tag).ByteCount, $"first message of a {payload}-byte payload");
                byte[] got = c.ORecv<byte[]>(Mpi.AnySource, Mpi.AnyTag, out Status st)!;
                Check.Equal(payload, st.ByteCount, $"status of a {payload}-byte payload");
                Check.Equal(tag, st.Tag, "tag");
                Check.True(got.AsSpan().SequenceEqual(Pattern(lengths[k], k)), $"{lengths[k]} bytes intact");
            }
            Check.Equal("after them", c.ORecv<string>(0, tag), "the object on (c, tag) past the others");
            var typed = new int[1];
            c.Recv(typed, 0, typedTag);
            Check.Equal(11, typed[0], "typed message on another tag left alone");
            dup.Recv(typed, 0, tag);
            Check.Equal(12, typed[0], "typed message on another communicator left alone");
            Check.Equal("on the duplicate", dup.ORecv<string>(0, tag), "object on another communicator left alone");
            try
            {
                c.ORecv(0, tag);
                Check.True(false, "a typed message longer than a first message is refused");
            }
            catch (TransportException e)
            {
                Check.True(e.Message.Contains($"more than {first} bytes"), $"refusal names the first-message size: {e.Message}");
            }
            Check.Equal("after the refusal", c.ORecv<string>(0, tag), "the next payload after a refusal");
            NestedReceive.From = c;
            object[] outer = c.ORecv<object[]>(0, tag)!;
            Check.True(outer[0] is ReceivesInItsStaticConstructor, "the object whose static constructor receives");
            Check.True(((byte[])outer[1]).AsSpan().SequenceEqual(Pattern(3000, 21)), "the payload decoded around a nested receive intact");
            Check.True(ReceivesInItsStaticConstructor.Inner.AsSpan().SequenceEqual(Pattern(5000, 22)), "the payload received inside a decode intact");
        }
        c.Barrier();
    }

    /// <summary>
    /// Thread level Multiple: rank 1 receives on four threads at once, each its own tag from
    /// AnySource, small and chunked payloads interleaved; every thread gets its own messages in order.
    /// </summary>
    private static void Threads(Communicator c)
    {
        Check.Equal(ThreadLevel.Multiple, Mpi.ThreadLevel, "running at Multiple");
        const int threads = 4, each = 40;
        int first = FirstBytes;
        int Length(int t, int i) => (i % 3) switch { 0 => 8 + t, 1 => first - 100 + i, _ => 2 * first + i };
        if (c.Rank == 0)
        {
            for (int i = 0; i < each; i++)
                for (int t = 0; t < threads; t++)
                    c.OSend(Pattern(Length(t, i), t * 1000 + i), 1, 100 + t);
        }
        else if (c.Rank == 1)
        {
            var errors = new System.Collections.Concurrent.ConcurrentQueue<string>();
            var workers = new Thread[threads];
            for (int t = 0; t < threads; t++)
            {
                int me = t;
                workers[t] = new Thread(() =>
                {
                    try
                    {
                        for (int i = 0; i < each; i++)
                        {
                            byte[] got = c.ORecv<byte[]>(Mpi.AnySource, 100 + me, out Status st)!;
                            if (st.Tag != 100 + me || !got.AsSpan().SequenceEqual(Pattern(Length(me, i), me * 1000 + i)))
                                errors.Enqueue($"thread {me} message {i}: tag {st.Tag}, {got.Length} bytes");
                        }
                    }
                    catch (Exception e)
                    {
                        errors.Enqueue($"thread {me}: {e.GetType().Name}: {e.Message}");
                    }
                });
                workers[t].Start();
            }
            foreach (Thread w in workers)
                w.Join();
            Check.True(errors.IsEmpty, "every receiving thread got its own payloads in order: " + string.Join("; ", errors));
        }
        c.Barrier();
    }
    /// <summary>
    /// The first-message buffer a thread keeps is freed at gen-2 collections once the thread is idle
    /// (ObjectReader's trim), and a receive after the trim works: round trips of small and chunked
    /// payloads, each rank collecting between them until its buffer is gone.
    /// </summary>
    private static void Trimmed(Communicator c)
    {
        int peer = 1 - c.Rank, first = FirstBytes;
        for (int round = 0; round < 3; round++)
        {
            int length = round == 1 ? 3 * first + 7 : 100 + round;
            if (c.Rank == 0)
            {
                c.OSend(Pattern(length, round), peer, 20);
                Check.True(c.ORecv<byte[]>(peer, 21)!.AsSpan().SequenceEqual(Pattern(length, round + 50)), $"round {round}: the echo arrives intact");
            }
            else
            {
                Check.True(c.ORecv<byte[]>(peer, 20)!.AsSpan().SequenceEqual(Pattern(length, round)), $"round {round}: the payload arrives intact");
                c.OSend(Pattern(length, round + 50), peer, 21);
            }
            for (int i = 0; i < 50 && KeepsReceiveBuffer(); i++)
            {
                GC.Collect(2, GCCollectionMode.Forced, blocking: true);
                GC.WaitForPendingFinalizers();
            }
            Check.True(!KeepsReceiveBuffer(), $"round {round}: the idle thread's buffer is freed after gen-2 collections");
            c.Barrier();
        }
    }

    /// <summary>Whether this thread's object reader keeps a receive buffer (ObjectReader.KeepsReceiveBuffer, internal).</summary>
    private static bool KeepsReceiveBuffer()
    {
        Type reader = typeof(Communicator).Assembly.GetType("System.MP.Transport.ObjectReader")!;
        object? current = reader.GetProperty("Current", BindingFlags.NonPublic | BindingFlags.Static)!.GetValue(null);
        return current is not null && (bool)reader.GetProperty("KeepsReceiveBuffer", BindingFlags.NonPublic | BindingFlags.Instance)!.GetValue(current)!;
    }
}

/// <summary>Where <see cref="ReceivesInItsStaticConstructor"/> receives from (a type apart, so that setting it runs no static constructor).</summary>
internal static class NestedReceive
{
    internal const int Tag = 9;

    internal static Communicator? From;
}

/// <summary>Its static constructor (run when a payload first creates one) receives a payload from rank 0 where <see cref="NestedReceive.From"/> is set.</summary>
[Transportable]
public class ReceivesInItsStaticConstructor
{
    internal static readonly byte[] Inner;

    public int Value;

    static ReceivesInItsStaticConstructor() => Inner = NestedReceive.From?.ORecv<byte[]>(0, NestedReceive.Tag) ?? []; // rank 1 only
}
