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
/// the typed message still arrives.  With MOTOR_TEST_NO_PIECE_WAIT=1 (posts never wait) this
/// happens at least once in the rounds.</item>
/// </list>
/// Thread level Multiple; MOTOR_OBJECT_CHUNK_BYTES small, so that a payload has many pieces.
/// </summary>
internal static class PiecesTaken
{
    internal static void Register(Dictionary<Scenario, Action<Communicator>> s) => s[Scenario.ObjectsPiecesTaken] = Taken;

    private enum Path { Wait, WaitAll, List, Persistent }

    private const int ObjectTag = 5, TypedTag = 6, Size = 1 << 16, Rounds = 1000, AnnouncedRounds = 5;

    // How many payloads' pieces this process is receiving (System.MP's ReservedPieces.StreamCount).
    private static readonly PropertyInfo s_streams =
        typeof(Communicator).Assembly.GetType("System.MP.ReservedPieces")!.GetProperty("StreamCount", BindingFlags.NonPublic | BindingFlags.Static)!;

    private static void Taken(Communicator c)
    {
        Check.Equal(ThreadLevel.Multiple, Mpi.ThreadLevel, "running at Multiple");
        bool noWait = Environment.GetEnvironmentVariable("MOTOR_TEST_NO_PIECE_WAIT") == "1";
        foreach (Path path in Enum.GetValues<Path>())
        {
            if (!noWait)
                for (int round = 0; round < AnnouncedRounds; round++)
                    Exchange(c, () => Check.True(!OneRound(c, path, round, announced: true), $"{path}, round {round}: a receive posted while the pieces arrive takes none"));
            int taken = 0, rounds = 0;
            for (bool more = true; more; rounds++)
            {
                int r = rounds;
                Exchange(c, () => taken += OneRound(c, path, r, announced: false) ? 1 : 0);
                more = c.Bcast(noWait && taken == 0 && rounds + 1 < Rounds ? 1 : 0, 1) != 0;
            }
            if (c.Rank == 1 && noWait)
                Check.True(taken > 0, $"{path}: with posts that never wait, a receive with AnyTag took a piece in {rounds} rounds");
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
    private static bool OneRound(Communicator c, Path path, int round, bool announced)
    {
        var receiver = new ObjectOnThread(c, ObjectTag);
        if (announced)
            while ((int)s_streams.GetValue(null)! == 0 && receiver.Got is null && receiver.Failed is null)
                Thread.SpinWait(10);
        var buf = new int[1024];
        Status st = default;
        Exception? refused = null;
        try
        {
            st = Receive(c, path, buf);
        }
        catch (InvalidOperationException e)
        {
            refused = e;
        }
        receiver.Join();
        string at = $"{path}, round {round}{(announced ? " (pieces announced)" : "")}";
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

    private static Status Receive(Communicator c, Path path, int[] buf)
    {
        switch (path)
        {
            case Path.Wait:
                return c.IRecv(buf, 0, Mpi.AnyTag).Wait();
            case Path.WaitAll:
            {
                var statuses = new Status[1];
                Request.WaitAll([c.IRecv(buf, 0, Mpi.AnyTag)], statuses);
                return statuses[0];
            }
            case Path.List:
            {
                using var list = new RequestList(1);
                c.IRecv(buf, 0, Mpi.AnyTag, list);
                var statuses = new Status[1];
                list.WaitAll(statuses);
                return statuses[0];
            }
            default:
            {
                using PersistentRequest r = c.RecvInit(buf, 0, Mpi.AnyTag);
                r.Start();
                return r.Wait();
            }
        }
    }
}
