using System.MP;

namespace Scenarios;

/// <summary>
/// Errors raised inside MPI (not argument checks before it): each failure surfaces as its
/// specific exception with MPI's error class and string, the failing call ran once (the core
/// counts MPI errors; a call issued twice would also consume the next message), and the next
/// operation on the same communicator works.
/// </summary>
internal static class ErrorsInsideMpi
{
    internal static void Register(Dictionary<Scenario, Action<Communicator>> s)
    {
        s[Scenario.MpiErrors] = InsideMpi;
        s[Scenario.MpiErrorsInter] = InsideMpiAcrossGroups;
    }

    private static void InsideMpi(Communicator c)
    {
        int r = c.Rank;

        // Bcast: the root sends 4 ints, rank 1 offers room for 2 (MPI-4.0 6.1: counts must match).
        Expect<MessageTruncatedException>(r == 1, () => c.Bcast(r == 0 ? new[] { 1, 2, 3, 4 } : new int[r == 1 ? 2 : 4], 0),
                                          "bcast into a short buffer");
        var next = new[] { r == 0 ? 42 : -1 };
        c.Bcast(next, 0);
        Check.Equal(42, next[0], "the bcast after a truncated one");

        // Blocking receive of 8 ints into 4.
        if (r == 0)
            c.Send(new[] { 1, 2, 3, 4, 5, 6, 7, 8 }, 1, 5);
        Expect<MessageTruncatedException>(r == 1, () =>
        {
            if (r == 1)
                c.Recv(new int[4], 0, 5);
        }, "recv into a short buffer");
        if (r == 0)
            c.Send(new[] { 43 }, 1, 5);
        if (r == 1)
        {
            var one = new int[1];
            c.Recv(one, 0, 5);
            Check.Equal(43, one[0], "the message after a truncated recv, same tag");
        }

        // Nonblocking receive of 8 ints into 4: the error comes from Wait.
        if (r == 0)
            c.Send(new long[8], 1, 6);
        Expect<MessageTruncatedException>(r == 1, () =>
        {
            if (r == 1)
                c.IRecv(new long[4], 0, 6).Wait();
        }, "irecv into a short buffer");

        // Matched receive (MPI_Mrecv) of 6 shorts into 3.
        if (r == 0)
            c.Send(new short[6], 1, 7);
        Expect<MessageTruncatedException>(r == 1, () =>
        {
            if (r == 1)
                c.MProbe(0, 7).Recv(new short[3]);
        }, "mrecv into a short buffer");
        if (r == 0)
            c.Send(new short[] { 44 }, 1, 7);
        if (r == 1)
            Check.Equal((short)44, c.Recv<short>(0, 7), "the message after a truncated mrecv, same tag");

        // Alltoallv on Self that sends 8 ints into room for 4: MPICH's error text is then longer
        // than MPI_MAX_ERROR_STRING, and its MPI_Error_string reads past that bound and wrote on
        // from there (into the core's stack frame, until the core gave it a NUL tail).  At
        // several stack depths, so the core's frames lie over different leftovers each time.
        for (int depth = 0; depth < 6; depth++)
            AtDepth(depth * 37, () =>
            {
                var e = Check.Throws<MessageTruncatedException>(() =>
                    Communicator.Self.Alltoallv(new int[8], [8], [0], new int[4], [4], [0]), "Alltoallv on Self of 8 into 4");
                Check.True(e is not null && e.Message.StartsWith("MPI_Alltoallv: ", StringComparison.Ordinal) &&
                           e.Message.Contains("runcat", StringComparison.Ordinal),
                           $"Alltoallv on Self of 8 into 4 at depth {depth}, MPI's text kept: {e?.Message}");
            });

        // The communicator still reduces correctly.
        var sum = new int[3];
        c.Reduce(new[] { r, r, r }, r == 0 ? sum : null, Op.Sum, 0);
        if (r == 0)
            Check.Sequence<int>(Enumerable.Repeat(c.Size * (c.Size - 1) / 2, 3).ToArray(), sum, "reduce after the failures");
        c.Barrier();
    }

    // Runs the action below `frames` extra frames, each with some stack of its own.
    [System.Runtime.CompilerServices.MethodImpl(System.Runtime.CompilerServices.MethodImplOptions.NoInlining)]
    private static void AtDepth(int frames, Action action)
    {
        Span<byte> room = stackalloc byte[96];
        room.Fill((byte)(frames | 1));
        if (frames == 0)
            action();
        else
            AtDepth(frames - 1, action);
        GC.KeepAlive(room[0]);
    }


    // An intercommunicator Reduce whose root offers fewer elements than the other group
    // contributes: only MPI can see it (the root does not know the remote count).
    private static void InsideMpiAcrossGroups(Communicator c)
    {
        int half = c.Size / 2, color = c.Rank < half ? 0 : 1;
        using Communicator local = c.Split(color, c.Rank)!;
        using Intercommunicator inter = Intercommunicator.Create(local, 0, c, color == 0 ? half : 0, 33);
        bool root = color == 0 && local.Rank == 0;
        int rootArg = color == 1 ? 0 : root ? Mpi.Root : Mpi.ProcNull;
        Expect<MessageTruncatedException>(root, () =>
        {
            if (color == 1)
                inter.Reduce(new[] { 1, 2, 3, 4 }, null, Op.Sum, rootArg);
            else
                inter.Reduce(new int[2], root ? new int[2] : null, Op.Sum, rootArg);
        }, "intercommunicator reduce into a root with fewer elements");
        // The intercommunicator goes on: a well-formed reduce of the same shape.
        var sum = new int[4];
        if (color == 1)
            inter.Reduce(new[] { 1, 2, 3, 4 }, null, Op.Sum, rootArg);
        else
            inter.Reduce(new int[4], root ? sum : null, Op.Sum, rootArg);
        if (root)
            Check.Sequence<int>(new[] { 1, 2, 3, 4 }.Select(v => v * (c.Size - half)).ToArray(), sum, "the reduce after the failure");

        // A communicator of the wrong kind: MPI_Cart_create takes an intracommunicator
        // (MPI-4.0 8.5.1).  System.MP leaves that check to MPI, which reports MPI_ERR_COMM on
        // every rank before any communication.
        Expect<MpiException>(true, () => inter.CreateCartesian([1], [false]), "a Cartesian grid over an intercommunicator");
        // The intercommunicator goes on: the two leaders exchange over it.
        if (local.Rank == 0)
        {
            var got = new int[1];
            inter.SendRecv(new[] { 50 + color }, 0, 34, got, 0, 34);
            Check.Equal(51 - color, got[0], "the exchange across the intercommunicator after the failure");
        }
        c.Barrier();
    }

    // Runs a call that must fail inside MPI on the ranks where `fails` is true (and
    // succeed elsewhere), checking the exception, its MPI error class and message, and
    // that the core saw exactly one failing MPI call.
    private static void Expect<TException>(bool fails, Action call, string what) where TException : MpiException
    {
        long before = Mpi.GetStatistics().MpiErrors;
        try
        {
            call();
            Check.True(!fails, $"{what}: no exception, expected {typeof(TException).Name}");
        }
        catch (TException e)
        {
            Check.True(fails, $"{what}: unexpected {e.GetType().Name} ({e.Message})");
            Check.True(e.ErrorClass != 0, $"{what}: no MPI error class in {e.GetType().Name} ({e.Message})");
            Check.True(e.Message.Contains("MPI_", StringComparison.Ordinal), $"{what}: the message names no MPI call: {e.Message}");
        }
        catch (Exception e)
        {
            Check.True(false, $"{what}: {e.GetType().Name} ({e.Message}), expected {typeof(TException).Name}");
        }
        Check.Equal(fails ? 1L : 0L, Mpi.GetStatistics().MpiErrors - before, $"{what}: MPI calls that failed");
    }
}
