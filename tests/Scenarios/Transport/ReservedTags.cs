using System.MP;

namespace Scenarios;

/// <summary>
/// Receives and probes with AnyTag while a large object is arriving on another thread: none of
/// them gets or reports one of the object's continuation pieces (tags above
/// <see cref="Mpi.TagUpperBound"/>), each finds the typed message sent after the object, and the
/// object arrives whole.  Thread level Multiple.
/// </summary>
internal static class ReservedTags
{
    internal static void Register(Dictionary<Scenario, Action<Communicator>> s) => s[Scenario.ObjectsAnyTag] = AnyTag;

    private enum Look { Recv, RecvAnySource, RecvSpan, RecvValue, Probe, IProbe, MProbe, IMProbe, SendRecv, ObjectAnyTag }

    private const int ObjectTag = 5, TypedTag = 6, ReplyTag = 9, Size = 1 << 20;

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
                if (look == Look.ObjectAnyTag)
                    c.OSend(new[] { 100 + k }, 1, TypedTag);
                else
                    c.Send(new[] { 100 + k }, 1, TypedTag);
                sent.Wait();
                if (look == Look.SendRecv)
                    Check.Equal(7, c.Recv<int>(1, ReplyTag), "SendRecv's outgoing message");
            }
            else if (c.Rank == 1)
            {
                var receiver = new ObjectOnThread(c, ObjectTag);
                (Status st, int value) = Receive(c, look);
                Check.True(st.Tag <= Mpi.TagUpperBound, $"{look}: tag {st.Tag} is not a reserved one");
                Check.Equal(TypedTag, st.Tag, $"{look}: the typed message's tag");
                Check.Equal(0, st.Source, $"{look}: its source");
                Check.Equal(100 + k, value, $"{look}: its value");
                receiver.Join();
                Check.True(receiver.Failed is null, $"{look}: the object receive: {receiver.Failed}");
                Check.True(receiver.Got is not null && receiver.Got.AsSpan().SequenceEqual(ObjectEager.Pattern(Size, k)), $"{look}: the object arrived whole");
            }
            c.Barrier();
        }
    }

    private static (Status, int) Receive(Communicator c, Look look)
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
}

/// <summary>
/// A byte[] object from rank 0 under a tag, received by a thread of its own: started once the
/// object's first message is in, untaken, and returning once that message is gone, so that the
/// object's pieces are then the earliest messages pending from rank 0.
/// </summary>
internal sealed class ObjectOnThread
{
    private readonly Thread _thread;

    internal ObjectOnThread(Communicator c, int tag)
    {
        while (!c.IProbe(0, tag, out _))
            Thread.Yield();
        _thread = new Thread(() =>
        {
            try
            {
                Got = c.ORecv<byte[]>(0, tag);
            }
            catch (Exception e)
            {
                Failed = e;
            }
        });
        _thread.Start();
        while (c.IProbe(0, tag, out _))
            Thread.SpinWait(10);
    }

    /// <summary>The object, once <see cref="Join"/> returned and the receive succeeded.</summary>
    internal byte[]? Got { get; private set; }

    /// <summary>What the object receive threw, once <see cref="Join"/> returned.</summary>
    internal Exception? Failed { get; private set; }

    internal void Join() => _thread.Join();
}
