using System.MP;

namespace Scenarios;

/// <summary>
/// Use that System.MP refuses before anything reaches MPI: bad ranks, tags, slices and null
/// buffers in blocking, nonblocking and list posts (nothing is sent, no request is left), a
/// freed communicator (no MPI call or core operation counted), and every call after
/// <see cref="Mpi.Shutdown"/>.
/// </summary>
internal static class RefusedBeforeMpi
{
    internal static void Register(Dictionary<Scenario, Action<Communicator>> s)
    {
        s[Scenario.BadArgs] = BadArguments;
        s[Scenario.FreedCommunicator] = FreedCommunicator;
        s[Scenario.AfterShutdown] = AfterShutdown;
    }

    private static void BadArguments(Communicator c)
    {
        var a = new int[8];
        int n = c.Size;
        // Each of these must throw before anything is sent or received.  Send and Recv reach the
        // core's send and recv, which trust these checks: without
        // CheckDest, "dest = Size" fails here with MPI's own MPI_ERR_RANK.
        Check.Throws<ArgumentOutOfRangeException>(() => c.Send(a, n, 0), "dest = Size");
        Check.Throws<ArgumentOutOfRangeException>(() => c.Send(a, -7, 0), "dest negative");
        Check.Throws<ArgumentOutOfRangeException>(() => c.Send(a, Mpi.AnySource, 0), "dest AnySource");
        Check.Throws<ArgumentOutOfRangeException>(() => c.Send(a, 0, -3), "negative tag");
        Check.Throws<ArgumentOutOfRangeException>(() => c.Send(a, 0, Mpi.AnyTag), "send with AnyTag");
        Check.Throws<ArgumentOutOfRangeException>(() => c.Send(a, 0, int.MaxValue), "tag above MPI_TAG_UB");
        Check.Throws<ArgumentOutOfRangeException>(() => c.Send(a, 0, -1, 0, 0), "negative count");
        Check.Throws<ArgumentOutOfRangeException>(() => c.Send(a, -1, 2, 0, 0), "negative offset");
        Check.Throws<ArgumentOutOfRangeException>(() => c.Send(a, 5, 4, 0, 0), "offset + count past the end");
        Check.Throws<ArgumentOutOfRangeException>(() => c.Send(a, 9, 0, 0, 0), "offset past the end");
        Check.Throws<ArgumentOutOfRangeException>(() => c.ISend(a, 4, 5, 0, 0), "isend slice past the end");
        Check.Throws<ArgumentOutOfRangeException>(() => c.Recv(a, 4, 5, 0, 0), "recv slice past the end");
        Check.Throws<ArgumentOutOfRangeException>(() => c.IRecv(a, 8, 1, 0, 0), "irecv slice past the end");
        Check.Throws<ArgumentOutOfRangeException>(() => c.Recv(a, n + 1, 0), "source past Size");
        Check.Throws<ArgumentOutOfRangeException>(() => c.Recv(a, 0, -9), "receive tag negative");
        Check.Throws<ArgumentOutOfRangeException>(() => c.Probe(-5, 0), "probe source");
        Check.Throws<ArgumentOutOfRangeException>(() => c.IProbe(0, -2, out _), "iprobe tag");
        Check.Throws<ArgumentOutOfRangeException>(() => c.SendRecv(a, 0, -1, a, 0, 0), "sendrecv tag");
        Check.Throws<ArgumentNullException>(() => c.Send((int[])null!, 0, 0), "null send buffer");
        Check.Throws<ArgumentNullException>(() => c.Recv((int[])null!, 0, 0), "null receive buffer");
        Check.Throws<ArgumentNullException>(() => c.ISend((int[])null!, 0, 0), "null isend buffer");
        // Nonblocking posts reach the core's isend, irecv, list_isend and list_irecv, which trust
        // System.MP's checks: each bad argument must be refused here, before them.
        var list = new RequestList(4);
        int overUb = Mpi.TagUpperBound == int.MaxValue ? -2 : Mpi.TagUpperBound + 1; // Open MPI's bound is int.MaxValue
        foreach (Func<int>[] posts in new[]
        {
            new Func<int>[] { () => c.ISend(a, n, 0).GetHashCode(), () => c.ISend(a, n, 0, list) },
            [() => c.ISend(a, Mpi.AnySource, 0).GetHashCode(), () => c.ISsend(a, Mpi.AnySource, 0, list)],
            [() => c.ISend(a, 0, -3).GetHashCode(), () => c.ISend(a, 0, -3, list)],
            [() => c.ISsend(a, 0, Mpi.AnyTag).GetHashCode(), () => c.ISend(a, 0, Mpi.AnyTag, list)],
            [() => c.ISend(a, 0, overUb).GetHashCode(), () => c.ISend(a, 0, overUb, list)],
            [() => c.ISend(a, 0, -1, 0, 0).GetHashCode(), () => c.ISend(a, 0, -1, 0, 0, list)],
            [() => c.IRecv(a, n + 1, 0).GetHashCode(), () => c.IRecv(a, n + 1, 0, list)],
            [() => c.IRecv(a, -7, 0).GetHashCode(), () => c.IRecv(a, -7, 0, list)],
            [() => c.IRecv(a, 0, -9).GetHashCode(), () => c.IRecv(a, 0, -9, list)],
            [() => c.IRecv(a, 0, overUb).GetHashCode(), () => c.IRecv(a, 9, 0, 0, 0, list)],
        })
        {
            foreach (Func<int> post in posts)
                Check.Throws<ArgumentOutOfRangeException>(() => post(), "a nonblocking post with a bad rank, tag or slice");
        }
        Check.Equal(0, list.Count, "the refused posts left the list empty");
        Check.Equal(0L, Mpi.GetStatistics().ActiveRequests, "the refused posts left no request in the core");
        list.Dispose();
        Check.Throws<ArgumentNullException>(() => Request.WaitAll((Request[])null!), "null request array");
        Check.Throws<ArgumentOutOfRangeException>(() => c.Split(-5, 0), "negative split color");
        try
        {
            c.Send(a, 0, 3, n, 0);
        }
        catch (ArgumentOutOfRangeException e)
        {
            Check.Equal("dest", e.ParamName, "the exception names the argument");
        }
        // Nothing of the above reached the wire: the only message is this one.
        if (c.Rank == 0)
        {
            c.Send(new[] { 31337 }, 1, 5);
        }
        else if (c.Rank == 1)
        {
            Status st = c.Probe(Mpi.AnySource, Mpi.AnyTag);
            Check.Equal(5, st.Tag, "first message to arrive is the good one");
            Check.Equal(31337, c.Recv<int>(0, 5), "good message data");
        }
        c.Barrier();
        Check.True(!c.IProbe(Mpi.AnySource, Mpi.AnyTag, out _), "no stray message");
    }

    // A freed communicator never reaches MPI: System.MP refuses it (ObjectDisposedException)
    // before any native call, so no MPI error can come from it.  The proof: the core counted
    // no failing MPI call and no operation, and the communicator it came from goes on.  (The
    // core refuses a stale handle itself too, before MPI: test_mpcore's comms group.)
    private static void FreedCommunicator(Communicator c)
    {
        Communicator freed = c.Dup();
        freed.Dispose();
        MpiStatistics before = Mpi.GetStatistics();
        var data = new int[4];
        Check.Throws<ObjectDisposedException>(() => freed.Send(data, 0, 1), "send on a freed communicator");
        Check.Throws<ObjectDisposedException>(() => freed.Recv(data, 0, 1), "receive on a freed communicator");
        Check.Throws<ObjectDisposedException>(() => freed.IRecv(data, 0, 1), "nonblocking receive on a freed communicator");
        Check.Throws<ObjectDisposedException>(() => freed.Bcast(data, 0), "bcast on a freed communicator");
        Check.Throws<ObjectDisposedException>(freed.Barrier, "barrier on a freed communicator");
        Check.Throws<ObjectDisposedException>(() => freed.Dup(), "dup of a freed communicator");
        Check.Throws<ObjectDisposedException>(() => freed.OSend("x", 0, 1), "object send on a freed communicator");
        MpiStatistics after = Mpi.GetStatistics();
        Check.Equal(before.MpiErrors, after.MpiErrors, "failing MPI calls from a freed communicator");
        Check.Equal(before.PointToPointOperations, after.PointToPointOperations, "point-to-point operations that reached the core");
        Check.Equal(before.CollectiveOperations, after.CollectiveOperations, "collectives that reached the core");
        Check.Equal(before.Communicators, after.Communicators, "communicators in the core");
        var sum = new int[1];
        c.Allreduce(new[] { 1 }, sum, Op.Sum);
        Check.Equal(c.Size, sum[0], "the parent communicator after the refusals");
    }

    private static void AfterShutdown(Communicator c)
    {
        c.Barrier();
        Mpi.Shutdown();
        Check.True(!Mpi.IsInitialized, "not initialized after shutdown");
        Check.Throws<InvalidOperationException>(() => c.Send(new[] { 1 }, 0, 0), "send after shutdown");
        Check.Throws<InvalidOperationException>(() => Mpi.Init(), "init after shutdown");
        Check.Throws<InvalidOperationException>(() => _ = Communicator.World, "world after shutdown");
        Check.Throws<InvalidOperationException>(() => Mpi.Wtime(), "wtime after shutdown");
        Mpi.Shutdown(); // again: harmless
    }
}
