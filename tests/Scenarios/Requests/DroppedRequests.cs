using System.MP;
using System.Reflection;
using System.Runtime.CompilerServices;

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
        s[Scenario.DroppedStatusReader] = DroppedStatusReader;
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

    // A receive of one value (IRecv<T>, a status reader) dropped in flight: once its state is
    // finalized it is no longer counted among the status readers, so later span sets again ask
    // the core for no statuses; a kept one completed by a span WaitAll still gets its status.
    // The count is the process's: this job runs nothing else beside it.
    private static void DroppedStatusReader(Communicator c)
    {
        int peer = 1 - c.Rank;
        int before = StatusReaders();
        using (ValueRequest<long> kept = c.IRecv<long>(peer, 61))
        {
            Check.Equal(before + 1, StatusReaders(), "an IRecv<long> in flight is counted as a status reader");
            PostValueAndDrop(c, peer, 62);
            Check.Equal(before + 2, StatusReaders(), "the dropped IRecv<long> is counted until its state is finalized");
            for (int i = 0; i < 50 && StatusReaders() != before + 1; i++)
            {
                GC.Collect();
                GC.WaitForPendingFinalizers();
            }
            Check.Equal(before + 1, StatusReaders(), "the dropped IRecv<long> is no longer counted once its state is finalized");
            c.Send(10L * c.Rank + 1, peer, 61);
            c.Send(10L * c.Rank + 2, peer, 62); // completes the dropped receive
            Request.WaitAll(new[] { kept.Request }.AsSpan());
            Check.Equal(10L * peer + 1, kept.Result, "a kept IRecv<long> completed by a span WaitAll gets its status and value");
        }
        Check.Equal(before, StatusReaders(), "no status reader counted once the kept receive completed");
        using (ValueRequest<long> disposed = c.IRecv<long>(peer, 63))
            Check.Equal(before + 1, StatusReaders(), "a second IRecv<long> in flight is counted");
        Check.Equal(before, StatusReaders(), "a disposed IRecv<long> is no longer counted");
        GC.Collect();
        GC.WaitForPendingFinalizers();
        Check.Equal(before, StatusReaders(), "a disposed IRecv<long> is uncounted once only, its state finalized or not");
        c.Send(0L, peer, 63); // completes the disposed receive
        c.Barrier();
    }

    /// <summary>Status readers attached to operations in flight in this process (RequestSlot.StatusReaders).</summary>
    private static int StatusReaders() =>
        (int)typeof(Request).Assembly.GetType("System.MP.RequestSlot")!
            .GetField("StatusReaders", BindingFlags.NonPublic | BindingFlags.Static)!.GetValue(null)!;

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static void PostValueAndDrop(Communicator c, int peer, int tag) => _ = c.IRecv<long>(peer, tag);

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static WeakReference PostAndDrop(Communicator c)
    {
        var buffer = new byte[4096];
        c.IRecv(buffer, 1, 42);
        return new WeakReference(buffer);
    }
}
