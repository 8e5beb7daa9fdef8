using System.MP;

namespace Scenarios;

/// <summary>
/// Requests a program drops or disposes before they complete: their buffers are released and
/// their slots freed once MPI is done with them, and their messages still arrive in order.
/// </summary>
internal static class DroppedRequests
{
    internal static void Register(Dictionary<Scenario, Action<Communicator>> s)
    {
        s[Scenario.DroppedRequest] = DroppedRequest;
        s[Scenario.DroppedSelfSend] = DroppedSelfSend;
    }

    private static void DroppedRequest(Communicator c)
    {
        // A receive request dropped without Wait: once its message arrives the
        // buffer must be released (no pin, no leak) and the request freed, even
        // though the program makes only blocking calls afterwards: the core
        // completes the orphan during a blocking call (or at a GC mark under
        // motor) and a GC-triggered sweep releases a library-mode pin.
        long active = Mpi.GetStatistics().ActiveRequests;
        WeakReference? weak = null;
        if (c.Rank == 0)
        {
            weak = PostAndDrop(c);
            Check.Equal(active + 1, Mpi.GetStatistics().ActiveRequests, "the dropped receive is in the in-flight table");
            GC.Collect();
            GC.WaitForPendingFinalizers(); // the Request's finalizer hands it to the core
        }
        c.Barrier();
        if (c.Rank == 1)
            c.Send(new byte[4096], 0, 42);
        for (int i = 0; i < 10; i++)
        {
            c.Barrier(); // blocking calls only
            GC.Collect();
            GC.WaitForPendingFinalizers();
        }
        if (c.Rank == 0)
        {
            Check.True(!weak!.IsAlive, "dropped receive buffer was collected after its message arrived");
            Check.Equal(active, Mpi.GetStatistics().ActiveRequests, "the in-flight table no longer holds the dropped receive");
        }
    }

    // A send to this rank itself, disposed before anything received it: MPICH completes such
    // a send only when a receive matches it, so it is orphaned while pending.  Its message
    // must still arrive, in order (MPI-4.0 3.5: the disposed send was posted first, so a
    // receive with its tag takes it first), and its slot and pin must be released.  The
    // api-fuzz variant that disposed pending self-sends hung because its bookkeeping posted
    // no receive for them: the disposed send's message took the receive meant for the next
    // send with that tag, which then waited forever, as it does in C.
    private static void DroppedSelfSend(Communicator c)
    {
        int me = c.Rank;
        MpiStatistics start = Mpi.GetStatistics();
        foreach (int n in new[] { 1, 16, 4096, 1 << 16, 1 << 20 })
        {
            var first = Enumerable.Range(n, n).ToArray();
            var second = Enumerable.Range(-n, n).ToArray();
            c.ISend(first, me, 44).Dispose();
            GC.Collect();
            GC.WaitForPendingFinalizers();
            Request kept = c.ISend(second, me, 44);
            var got = new int[n];
            c.Recv(got, me, 44); // blocking: the disposed send's message
            Check.Sequence<int>(first, got, $"{n} ints of the disposed send to self, received first");
            c.IRecv(got, me, 44).Wait();
            Check.Sequence<int>(second, got, $"{n} ints of the kept send to self, received second");
            kept.Wait();
        }
        // Both ranks' disposed sends are released: slots, open MPI requests, orphans, pins.
        for (int i = 0; i < 50 && Mpi.GetStatistics() is { OrphanedRequests: > 0 } or { PinnedHandles: > 0 }; i++)
        {
            c.Barrier(); // a blocking call: the core sweeps orphans
            GC.Collect();
            GC.WaitForPendingFinalizers();
        }
        MpiStatistics end = Mpi.GetStatistics();
        Check.Equal(start.ActiveRequests, end.ActiveRequests, "request slots after the disposed sends to self");
        Check.Equal(start.OpenMpiRequests, end.OpenMpiRequests, "open MPI requests after the disposed sends to self");
        Check.Equal(0L, end.OrphanedRequests, "orphans after the disposed sends to self");
        Check.Equal(start.PinnedHandles, end.PinnedHandles, "pinned handles after the disposed sends to self");
        c.Barrier();
    }

    [System.Runtime.CompilerServices.MethodImpl(System.Runtime.CompilerServices.MethodImplOptions.NoInlining)]
    private static WeakReference PostAndDrop(Communicator c)
    {
        var buffer = new byte[4096];
        c.IRecv(buffer, 1, 42);
        return new WeakReference(buffer);
    }
}
