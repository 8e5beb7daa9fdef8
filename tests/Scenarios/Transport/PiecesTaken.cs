using System.MP;
using System.Reflection;

namespace Scenarios;

/// <summary>
/// A nonblocking receive posted with AnyTag on one thread while another thread receives a
/// chunked object from the same rank, by each completion path of the receive (a request's
/// wait, a request set, a request list, a persistent request).
/// <list type="bullet">
/// <item>Posted once the object's pieces are arriving (the receiving thread announced them):
/// the post waits until they are in, then the receive gets the typed message sent after the
/// object, and the object arrives whole.</item>
/// <item>Posted the moment the object's first message is matched, before the receiving thread
/// can announce the pieces: MPI may give the receive a piece.  Then the receive fails saying so
/// (InvalidOperationException), and the object receive fails too (TransportException) once it
/// has taken the rest of its payload out of matching instead of waiting for the missing piece;
/// the typed message still arrives.</item>
/// <item>With MOTOR_TEST_NO_PIECE_WAIT=1 (posts never wait), the receiving thread is held where
/// it would announce the pieces until the receive is posted: the receive is then the earliest
/// match for the first piece, and every round must end in both failures.</item>
/// </list>
/// Thread level Multiple; MOTOR_OBJECT_CHUNK_BYTES small, so that a payload has many pieces.
/// </summary>
internal static class PiecesTaken
{
    internal static void Register(Dictionary<Scenario, Action<Communicator>> s) => s[Scenario.ObjectsPiecesTaken] = Taken;

    private enum Path { Wait, WaitAll, List, Persistent }

    /// <summary>When the receive with any tag is posted, relative to the object's pieces.</summary>
    private enum Moment { Announced, Racing, Held }

    private const int ObjectTag = 5, TypedTag = 6, Size = 1 << 16, Rounds = 3;

    private static readonly Type s_reservedPieces = typeof(Communicator).Assembly.GetType("System.MP.ReservedPieces")!;

    // How many payloads' pieces this process is receiving (System.MP's ReservedPieces.StreamCount).
    private static readonly PropertyInfo s_streams = s_reservedPieces.GetProperty("StreamCount", BindingFlags.NonPublic | BindingFlags.Static)!;

    // Run by the receiving thread before it announces the pieces, under MOTOR_TEST_NO_PIECE_WAIT=1.
    private static readonly PropertyInfo s_streamBegun = s_reservedPieces.GetProperty("StreamBegunForTests", BindingFlags.NonPublic | BindingFlags.Static)!;

    private static void Taken(Communicator c)
    {
        Check.Equal(ThreadLevel.Multiple, Mpi.ThreadLevel, "running at Multiple");
        Moment[] moments = Environment.GetEnvironmentVariable("MOTOR_TEST_NO_PIECE_WAIT") == "1"
            ? [Moment.Held]
            : [Moment.Announced, Moment.Racing];
        foreach (Path path in Enum.GetValues<Path>())
            foreach (Moment moment in moments)
            {
                for (int round = 0; round < Rounds; round++)
                {
                    int r = round;
                    Exchange(c, () =>
                    {
                        bool taken = OneRound(c, path, r, moment);
                        if (moment != Moment.Racing)
                            Check.Equal(moment == Moment.Held, taken, $"{path}, round {r} ({moment}): the receive took a piece");
                    });
                }
                c.Barrier();
            }
    }

    // Rank 0 sends one object and one typed message; rank 1 runs the round.  One round at a time
    // (the barrier): rank 1 looks for the object's first message by its tag.
    private static void Exchange(Communicator c, Action receive)
    {
        if (c.Rank == 0)
        {
            c.OSend(ObjectEager.Pattern(Size, 0), 1, ObjectTag);
            c.Send(new[] { 100 }, 1, TypedTag);
        }
        else if (c.Rank == 1)
        {
            receive();
        }
        c.Barrier();
    }

    // True when the receive took a piece (and both it and the object receive failed saying so).
    private static bool OneRound(Communicator c, Path path, int round, Moment moment)
    {
        using var begun = new ManualResetEventSlim();
        using var posted = new ManualResetEventSlim();
        if (moment == Moment.Held)
            s_streamBegun.SetValue(null, (Action)(() =>
            {
                begun.Set();
                posted.Wait();
            }));
        ObjectOnThread receiver;
        try
        {
            receiver = new ObjectOnThread(c, ObjectTag);
            if (moment == Moment.Announced)
                while ((int)s_streams.GetValue(null)! == 0 && receiver.Got is null && receiver.Failed is null)
                    Thread.SpinWait(10);
            if (moment == Moment.Held)
                Check.True(begun.Wait(TimeSpan.FromMinutes(2)), $"{path}, round {round}: the object receive reaches its pieces");
        }
        finally
        {
            s_streamBegun.SetValue(null, null);
        }
        var buf = new int[1024];
        Status st = default;
        Exception? refused = null;
        try
        {
            st = Receive(c, path, buf, posted.Set);
        }
        catch (InvalidOperationException e)
        {
            refused = e;
        }
        posted.Set();
        receiver.Join();
        string at = $"{path}, round {round} ({moment})";
        if (refused is null)
        {
            Check.Equal(TypedTag, st.Tag, $"{at}: the typed message's tag");
            Check.Equal(100, buf[0], $"{at}: its value");
            Check.True(receiver.Failed is null, $"{at}: the object receive: {receiver.Failed}");
            Check.True(receiver.Got is not null && receiver.Got.AsSpan().SequenceEqual(ObjectEager.Pattern(Size, 0)), $"{at}: the object arrived whole");
            return false;
        }
        Check.True(refused.Message.Contains("piece of an object payload from rank 0", StringComparison.Ordinal)
                   && refused.Message.Contains("Dup", StringComparison.Ordinal), $"{at}: the receive says why: {refused.Message}");
        Check.True(receiver.Failed is TransportException t && t.Message.Contains("was taken by a nonblocking receive posted with AnyTag", StringComparison.Ordinal),
                   $"{at}: the object receive fails saying why: {receiver.Failed}");
        Check.Equal(100, c.Recv<int>(0, TypedTag), $"{at}: the typed message is still received");
        return true;
    }

    // Posts the receive, runs posted, then completes the receive by the path's means.
    private static Status Receive(Communicator c, Path path, int[] buf, Action posted)
    {
        switch (path)
        {
            case Path.Wait:
            {
                Request r = c.IRecv(buf, 0, Mpi.AnyTag);
                posted();
                return r.Wait();
            }
            case Path.WaitAll:
            {
                var statuses = new Status[1];
                Request r = c.IRecv(buf, 0, Mpi.AnyTag);
                posted();
                Request.WaitAll([r], statuses);
                return statuses[0];
            }
            case Path.List:
            {
                using var list = new RequestList(1);
                c.IRecv(buf, 0, Mpi.AnyTag, list);
                posted();
                var statuses = new Status[1];
                list.WaitAll(statuses);
                return statuses[0];
            }
            default:
            {
                using PersistentRequest r = c.RecvInit(buf, 0, Mpi.AnyTag);
                r.Start();
                posted();
                return r.Wait();
            }
        }
    }
}
