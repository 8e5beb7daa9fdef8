using System.Diagnostics.Tracing;
using System.MP;
using System.Runtime.CompilerServices;

namespace Scenarios;

/// <summary>
/// A program whose MPI operations are known exactly, for the profile and timeline
/// (<c>MOTOR_PROFILE</c>, <c>motor --profile</c>) and the EventSource "System.MP": rank 0 sends
/// <see cref="Sends"/> messages of 8 bytes to rank 1, which receives them, then every rank runs
/// <see cref="Allreduces"/> Allreduces of one long, then exchanges 16 bytes with the other rank
/// <see cref="Exchanges"/> times through a RequestList and as many times through Requests (each:
/// one IRecv, one ISend, one WaitAll).
/// </summary>
internal static class ProfileKnown
{
    internal const int Sends = 1000, Allreduces = 10, Exchanges = 5, Tag = 5;

    /// <summary>The bytes each rank's operations move: the 8-byte messages, and 16 bytes per nonblocking post.</summary>
    internal const long BytesPerRank = 8L * (Sends + Allreduces) + 16L * 4 * Exchanges;

    internal static void Register(Dictionary<Scenario, Action<Communicator>> s)
    {
        s[Scenario.ProfileKnown] = Known;
        s[Scenario.ProfileListener] = Listened;
    }

    private static void Known(Communicator c)
    {
        SendAndReceive(c);
        Reduce(c);
        Exchange(c);
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static void Exchange(Communicator c)
    {
        int other = 1 - c.Rank;
        int[] mine = [c.Rank, 1, 2, 3], theirs = new int[4];
        using (var list = new RequestList(2))
            for (int i = 0; i < Exchanges; i++)
            {
                c.IRecv(theirs, other, Tag + 1, list);
                c.ISend(mine, other, Tag + 1, list);
                list.WaitAll();
                Check.Equal(other, theirs[0], "list exchange");
            }
        for (int i = 0; i < Exchanges; i++)
        {
            Request r = c.IRecv(theirs, other, Tag + 2), s = c.ISend(mine, other, Tag + 2);
            Request.WaitAll(r, s);
            Check.Equal(other, theirs[0], "request exchange");
        }
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static void SendAndReceive(Communicator c)
    {
        var buffer = new long[1];
        for (int i = 0; i < Sends; i++)
        {
            if (c.Rank == 0)
            {
                buffer[0] = i;
                c.Send(buffer, 1, Tag);
            }
            else if (c.Rank == 1)
            {
                c.Recv(buffer, 0, Tag);
                if (buffer[0] != i)
                    Check.Equal(i, buffer[0], "message in order");
            }
        }
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static void Reduce(Communicator c)
    {
        long sum = 0;
        for (int i = 0; i < Allreduces; i++)
            sum += c.Allreduce((long)i, Op.Sum);
        Check.Equal((long)c.Size * 45, sum, "sum of the Allreduces");
    }

    /// <summary>The known program with an in-process listener of "System.MP": each operation is one event.</summary>
    private static void Listened(Communicator c)
    {
        using var listener = new OperationListener();
        Known(c);
        Check.Equal(c.Rank == 0 ? Sends : 0, listener.Count("Send"), "Send events");
        Check.Equal(c.Rank == 1 ? Sends : 0, listener.Count("Recv"), "Recv events");
        Check.Equal(Allreduces, listener.Count("Allreduce"), "Allreduce events");
        Check.Equal(2 * Exchanges, listener.Count("ISend"), "ISend events");
        Check.Equal(2 * Exchanges, listener.Count("IRecv"), "IRecv events");
        Check.Equal(2 * Exchanges, listener.Count("WaitAll"), "WaitAll events");
        Check.Equal(BytesPerRank, listener.Bytes, "bytes of the events");
    }

    /// <summary>Counts the Operation events of "System.MP" by name, and their bytes.</summary>
    private sealed class OperationListener : EventListener
    {
        private readonly Dictionary<string, int> _counts = [];
        internal long Bytes;

        internal int Count(string name)
        {
            lock (_counts)
                return _counts.GetValueOrDefault(name);
        }

        protected override void OnEventSourceCreated(EventSource source)
        {
            if (source.Name == "System.MP")
                EnableEvents(source, EventLevel.Informational);
        }

        protected override void OnEventWritten(EventWrittenEventArgs e)
        {
            if (e.EventName != "Operation" || e.Payload is not [string name, long bytes, int _, double _])
                return;
            lock (_counts)
            {
                _counts[name] = _counts.GetValueOrDefault(name) + 1;
                Bytes += bytes;
            }
        }
    }
}
