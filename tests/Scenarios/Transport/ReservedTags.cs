using System.MP;

namespace Scenarios;

/// <summary>
/// Receives and probes with AnyTag while a large object is arriving on another thread: none of
/// them gets or reports one of the object's continuation pieces (tags above
/// <see cref="Mpi.TagUpperBound"/>), each finds the typed messages sent after the object, in
/// the order they were sent, and the object arrives whole.  Blocking receives and probes,
/// nonblocking receives completed by Wait, Test, WaitAll and WaitAny, two of them completed in
/// the reverse order, one cancelled, a persistent receive started three times, and a request
/// list's receive.  Thread level Multiple.  And (objects-pieces-freed): pieces a receive with
/// AnyTag kept are freed with their communicator, and at finalize.
/// </summary>
internal static class ReservedTags
{
    internal static void Register(Dictionary<Scenario, Action<Communicator>> s)
    {
        s[Scenario.ObjectsAnyTag] = AnyTag;
        s[Scenario.ObjectsPiecesFreed] = PiecesFreed;
    }

    private enum Look
    {
        Recv, RecvAnySource, RecvSpan, RecvValue, Probe, IProbe, MProbe, IMProbe, SendRecv, ObjectAnyTag,
        IRecv, IRecvAnySource, IRecvTest, IRecvWaitAll, IRecvWaitAny, IRecvInOrder, IRecvCancelled, RecvInit,
        ListIRecv, ListIRecvTest,
    }

    private const int ObjectTag = 5, TypedTag = 6, ReplyTag = 9;

    /// <summary>Many small pieces when the chunks are small (MOTOR_OBJECT_CHUNK_BYTES), else a few MiB in one.</summary>
    private static readonly int Size = Environment.GetEnvironmentVariable("MOTOR_OBJECT_CHUNK_BYTES") is null ? 4 << 20 : 1 << 20;

    /// <summary>How many typed messages a look receives, one after the other.</summary>
    private static int Messages(Look look) => look switch
    {
        Look.RecvInit => 3,
        Look.IRecvInOrder => 2,
        _ => 1,
    };

    private static int Value(int k, int j) => 100 + k + 1000 * j;

    private static void AnyTag(Communicator c)
    {
        Check.Equal(ThreadLevel.Multiple, Mpi.ThreadLevel, "running at Multiple");
        Look[] looks = Enum.GetValues<Look>();
        for (int k = 0; k < looks.Length; k++)
        {
            Look look = looks[k];
            if (c.Rank == 0)
            {
                using ObjectRequest sent = c.OISend(ObjectEager.Pattern(Size, k), 1, ObjectTag);
                for (int j = 0; j < Messages(look); j++)
                {
                    if (look == Look.ObjectAnyTag)
                        c.OSend(new[] { Value(k, j) }, 1, TypedTag);
                    else
                        c.Send(new[] { Value(k, j) }, 1, TypedTag);
                }
                sent.Wait();
                if (look == Look.SendRecv)
                    Check.Equal(7, c.Recv<int>(1, ReplyTag), "SendRecv's outgoing message");
            }
            else if (c.Rank == 1)
            {
                // The object's first message is in, untaken; then a thread receives the object,
                // and once that message is gone its pieces are the earliest messages pending from rank 0.
                while (!c.IProbe(0, ObjectTag, out _))
                    Thread.Yield();
                byte[]? got = null;
                Exception? failed = null;
                var receiver = new Thread(() =>
                {
                    try
                    {
                        got = c.ORecv<byte[]>(0, ObjectTag);
                    }
                    catch (Exception e)
                    {
                        failed = e;
                    }
                });
                receiver.Start();
                while (c.IProbe(0, ObjectTag, out _))
                    Thread.Yield();
                (Status, int)[] received = Receive(c, look);
                Check.Equal(Messages(look), received.Length, $"{look}: messages received");
                for (int j = 0; j < received.Length; j++)
                {
                    (Status st, int value) = received[j];
                    Check.True(st.Tag <= Mpi.TagUpperBound, $"{look}: tag {st.Tag} is not a reserved one");
                    Check.Equal(TypedTag, st.Tag, $"{look}: the typed message's tag");
                    Check.Equal(0, st.Source, $"{look}: its source");
                    if (look != Look.ObjectAnyTag) // an object's status counts its payload
                        Check.Equal(sizeof(int), (int)st.ByteCount, $"{look}: its length");
                    Check.Equal(Value(k, j), value, $"{look}: message {j}'s value");
                }
                receiver.Join();
                Check.True(failed is null, $"{look}: the object receive: {failed}");
                Check.True(got is not null && got.AsSpan().SequenceEqual(ObjectEager.Pattern(Size, k)), $"{look}: the object arrived whole");
            }
            c.Barrier();
        }
    }

    private static (Status, int)[] Receive(Communicator c, Look look)
    {
        if (look >= Look.IRecv)
            return ReceiveNonblocking(c, look);
        return [ReceiveOne(c, look)];
    }

    private static (Status, int)[] ReceiveNonblocking(Communicator c, Look look)
    {
        var buf = new int[1];
        Status st;
        switch (look)
        {
            case Look.IRecv:
                return [(c.IRecv(buf, 0, Mpi.AnyTag).Wait(), buf[0])];
            case Look.IRecvAnySource:
                return [(c.IRecv(buf, Mpi.AnySource, Mpi.AnyTag).Wait(), buf[0])];
            case Look.IRecvTest:
            {
                Request r = c.IRecv(buf, 0, Mpi.AnyTag);
                while (!r.Test(out st))
                    Thread.Yield();
                return [(st, buf[0])];
            }
            case Look.IRecvWaitAll:
            {
                // With a receive from ProcNull beside it: a set, not a single request.
                Status[] all = Request.WaitAll(c.IRecv(buf, 0, Mpi.AnyTag), c.IRecv(new int[1], Mpi.ProcNull, 0));
                return [(all[0], buf[0])];
            }
            case Look.IRecvWaitAny:
            {
                var other = new int[1];
                Request[] set = [c.IRecv(other, 0, ReplyTag), c.IRecv(buf, 0, Mpi.AnyTag)];
                Check.Equal(1, Request.WaitAny(set, out st), "WaitAny: the receive with any tag completes");
                set[0].Cancel();
                Check.True(set[0].Wait().Cancelled, "WaitAny: the other receive is cancelled");
                return [(st, buf[0])];
            }
            case Look.IRecvInOrder:
            {
                // Completed in the reverse order: each still gets the message MPI would have given it.
                var second = new int[1];
                Request r1 = c.IRecv(buf, 0, Mpi.AnyTag), r2 = c.IRecv(second, 0, Mpi.AnyTag);
                Status s2 = r2.Wait(), s1 = r1.Wait();
                return [(s1, buf[0]), (s2, second[0])];
            }
            case Look.IRecvCancelled:
            {
                Request r = c.IRecv(buf, 0, Mpi.AnyTag);
                r.Cancel();
                Check.True(r.Wait().Cancelled, "a receive with any tag cancelled before a message matched it");
                return [(c.IRecv(buf, 0, Mpi.AnyTag).Wait(), buf[0])];
            }
            case Look.RecvInit:
            {
                using PersistentRequest p = c.RecvInit(buf, 0, Mpi.AnyTag);
                var got = new (Status, int)[Messages(look)];
                for (int j = 0; j < got.Length; j++)
                {
                    p.Start();
                    got[j] = (p.Wait(), buf[0]);
                }
                return got;
            }
            default:
            {
                using var list = new RequestList(2);
                c.IRecv(buf, 0, Mpi.AnyTag, list);
                var statuses = new Status[1];
                if (look == Look.ListIRecv)
                    list.WaitAll(statuses);
                else
                    while (!list.TestAll(statuses))
                        Thread.Yield();
                return [(statuses[0], buf[0])];
            }
        }
    }

    private static (Status, int) ReceiveOne(Communicator c, Look look)
    {
        var buf = new int[1];
        Status st;
        Message? m;
        switch (look)
        {
            case Look.Recv:
                return (c.Recv(buf, 0, Mpi.AnyTag), buf[0]);
            case Look.RecvAnySource:
                return (c.Recv(buf, Mpi.AnySource, Mpi.AnyTag), buf[0]);
            case Look.RecvSpan:
                return (c.Recv(buf.AsSpan(), 0, Mpi.AnyTag), buf[0]);
            case Look.RecvValue:
                int v = c.Recv<int>(Mpi.AnySource, Mpi.AnyTag, out st);
                return (st, v);
            case Look.Probe:
                st = c.Probe(Mpi.AnySource, Mpi.AnyTag);
                c.Recv(buf, 0, TypedTag);
                return (st, buf[0]);
            case Look.IProbe:
                while (!c.IProbe(0, Mpi.AnyTag, out st))
                    Thread.Yield();
                c.Recv(buf, 0, TypedTag);
                return (st, buf[0]);
            case Look.MProbe:
                m = c.MProbe(0, Mpi.AnyTag);
                m.Recv(buf);
                return (m.Status, buf[0]);
            case Look.IMProbe:
                while (!c.IMProbe(Mpi.AnySource, Mpi.AnyTag, out m))
                    Thread.Yield();
                m.Recv(buf);
                return (m.Status, buf[0]);
            case Look.SendRecv:
                return (c.SendRecv(new[] { 7 }, 0, ReplyTag, buf, 0, Mpi.AnyTag), buf[0]);
            default:
                int[] o = c.ORecv<int[]>(0, Mpi.AnyTag, out st)!;
                return (st, o[0]);
        }
    }

    /// <summary>
    /// Pieces kept for an object whose receive never asks for them: on a duplicate of the world,
    /// rank 1 takes the object's first message out of matching and receives it as bytes, then
    /// a receive with AnyTag meets every piece before the typed message sent after them, and
    /// keeps each; freeing the duplicate frees them.  The same on the world: kept until finalize.
    /// </summary>
    private static void PiecesFreed(Communicator world)
    {
        int chunk = int.Parse(Environment.GetEnvironmentVariable("MOTOR_OBJECT_CHUNK_BYTES") ?? "0");
        Check.True(chunk > 0, "MOTOR_OBJECT_CHUNK_BYTES names the chunk size");
        const int size = 64 << 10;
        Communicator dup = world.Dup();
        long pieces = KeepPieces(dup, size);
        if (world.Rank == 1)
        {
            Check.True(pieces > 0, $"pieces kept on the duplicate: {pieces}");
            Check.Equal(pieces, Mpi.GetStatistics().PiecesKept, "every kept piece counted");
        }
        dup.Dispose();
        if (world.Rank == 1)
            Check.Equal(0L, Mpi.GetStatistics().PiecesKept, "the duplicate's pieces freed with it");
        pieces = KeepPieces(world, size);
        if (world.Rank == 1)
            Check.Equal(pieces, Mpi.GetStatistics().PiecesKept, "the world's pieces kept until finalize");
    }

    /// <summary>Rank 0 sends an object of <paramref name="size"/> bytes then a typed message; rank 1 keeps its pieces.  Returns how many rank 1 kept.</summary>
    private static long KeepPieces(Communicator c, int size)
    {
        long before = Mpi.GetStatistics().PiecesKept;
        if (c.Rank == 0)
        {
            using ObjectRequest sent = c.OISend(ObjectEager.Pattern(size, 3), 1, ObjectTag);
            c.Send(new[] { 7 }, 1, TypedTag);
            sent.Wait();
        }
        else if (c.Rank == 1)
        {
            Message first = c.MProbe(0, ObjectTag);
            first.Recv(new byte[first.Status.ByteCount]);
            var buf = new int[1];
            Status st = c.Recv(buf, 0, Mpi.AnyTag);
            Check.Equal(TypedTag, st.Tag, "the typed message, after every piece");
            Check.Equal(7, buf[0], "its value");
        }
        c.Barrier();
        return Mpi.GetStatistics().PiecesKept - before;
    }
}
