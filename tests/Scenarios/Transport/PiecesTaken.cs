using System.MP;

namespace Scenarios;

/// <summary>
/// A nonblocking receive posted with AnyTag on one thread while another thread receives a
/// chunked object from the same rank: when MPI gives it one of the object's continuation
/// pieces, that receive fails saying so (InvalidOperationException) instead of returning the
/// piece as a message, the object receive fails too (TransportException) once it has taken the
/// rest of its payload out of matching instead of waiting forever for the missing piece, and
/// the typed message sent after the object is still received.  Each completion path of the
/// receive is tried (a request's wait, a request set, a request list, a persistent request),
/// round after round until a piece was taken at least once (the threads race for the pieces).
/// Thread level Multiple; MOTOR_OBJECT_CHUNK_BYTES small, so that a payload has many pieces.
/// </summary>
internal static class PiecesTaken
{
    internal static void Register(Dictionary<Scenario, Action<Communicator>> s) => s[Scenario.ObjectsPiecesTaken] = Taken;

    private enum Path { Wait, WaitAll, List, Persistent }

    private const int ObjectTag = 5, TypedTag = 6, GoTag = 7, Size = 1 << 16, Rounds = 200;

    private static void Taken(Communicator c)
    {
        Check.Equal(ThreadLevel.Multiple, Mpi.ThreadLevel, "running at Multiple");
        foreach (Path path in Enum.GetValues<Path>())
        {
            int taken = 0, round = 0;
            for (bool more = true; more; round++)
            {
                if (c.Rank == 0)
                {
                    c.OSend(ObjectEager.Pattern(Size, round), 1, ObjectTag);
                    c.Send(new[] { 100 + round }, 1, TypedTag);
                    more = c.Recv<int>(1, GoTag) != 0;
                }
                else if (c.Rank == 1)
                {
                    if (OneRound(c, path, round))
                        taken++;
                    more = taken == 0 && round + 1 < Rounds;
                    c.Send(more ? 1 : 0, 0, GoTag);
                }
            }
            if (c.Rank == 1)
                Check.True(taken > 0, $"{path}: a receive with AnyTag took a piece in {round} rounds");
            c.Barrier();
        }
    }

    // One object and one typed message from rank 0; true when the receive took a piece.
    private static bool OneRound(Communicator c, Path path, int round)
    {
        var receiver = new ObjectOnThread(c, ObjectTag);
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
        byte[]? got = receiver.Got;
        Exception? failed = receiver.Failed;
        if (refused is null)
        {
            Check.Equal(TypedTag, st.Tag, $"{path}, round {round}: the typed message's tag");
            Check.Equal(100 + round, buf[0], $"{path}, round {round}: its value");
            Check.True(failed is null, $"{path}, round {round}: the object receive: {failed}");
            Check.True(got is not null && got.AsSpan().SequenceEqual(ObjectEager.Pattern(Size, round)), $"{path}, round {round}: the object arrived whole");
            return false;
        }
        Check.True(refused.Message.Contains("piece of an object payload from rank 0", StringComparison.Ordinal)
                   && refused.Message.Contains("Dup", StringComparison.Ordinal), $"{path}, round {round}: the receive says why: {refused.Message}");
        Check.True(failed is TransportException t && t.Message.Contains("was taken by a nonblocking receive posted with AnyTag", StringComparison.Ordinal),
                   $"{path}, round {round}: the object receive fails saying why: {failed}");
        Check.Equal(100 + round, c.Recv<int>(0, TypedTag), $"{path}, round {round}: the typed message is still received");
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
