using System.MP;
using static Scenarios.Heap;

namespace Scenarios;

/// <summary>
/// RequestList (src/System.MP/Requests/RequestList.cs): windows of sends and receives posted into a
/// reusable list and completed together, end to end over MPI on two ranks or more, each
/// sending to the next.  The data and statuses of every window, no GCHandle per operation
/// under motor, arrays that stay in place through a compacting GC, and each error a user
/// can cause: a truncated receive (raised inside MPI, with and without statuses asked
/// for; what MPI left pending completed by a second WaitAll), a full list, a disposed list, statuses too short, bad arguments; a list disposed
/// or dropped with a receive in flight, whose message is still taken by it.
/// </summary>
internal static class RequestLists
{
    internal static void Register(Dictionary<Scenario, Action<Communicator>> s)
    {
        s[Scenario.RequestListWindows] = Windows;
        s[Scenario.RequestListErrors] = Errors;
        s[Scenario.RequestListAbandoned] = Abandoned;
    }

    private static (int Next, int Prev) Ring(Communicator c) => ((c.Rank + 1) % c.Size, (c.Rank + c.Size - 1) % c.Size);

    // Windows of IRecv from the previous rank and ISend to the next, each completed by one
    // WaitAll of the same list: the data and the statuses in posting order, the indices the
    // posts return, a compacting GC between posting and waiting, and the GCHandles counted.
    private static void Windows(Communicator c)
    {
        const int rounds = 30, window = 12, width = 64;
        (int next, int prev) = Ring(c);
        var list = new RequestList(2 * window);
        Check.Equal(2 * window, list.Capacity, "Capacity");
        var statuses = new Status[2 * window];
        long handlesBefore = Mpi.GetStatistics().PinnedHandlesAllocated;
        int bad = 0, badStatus = 0, badIndex = 0;
        for (int round = 0; round < rounds; round++)
        {
            var send = new int[window][];
            var recv = new int[window][];
            for (int w = 0; w < window; w++)
            {
                recv[w] = new int[width + w];
                send[w] = Enumerable.Range(c.Rank * 1_000_000 + round * 1000 + w * 10, width + w).ToArray();
                badIndex += c.IRecv(recv[w], prev, w, list) == w ? 0 : 1;
            }
            for (int w = 0; w < window; w++)
                badIndex += c.ISend(send[w], 0, width + w, next, w, list) == window + w ? 0 : 1;
            Check.Equal(2 * window, list.Count, "Count after posting a window");
            if (round % 5 == 0)
                CompactAll(); // the arrays must not move
            if (round % 2 == 0)
                list.WaitAll(statuses);
            else
                list.WaitAll();
            Check.Equal(0, list.Count, "Count after WaitAll");
            for (int w = 0; w < window; w++)
            {
                bad += recv[w].Where((v, i) => v != prev * 1_000_000 + round * 1000 + w * 10 + i).Count();
                if (round % 2 == 0 &&
                    (statuses[w].Source != prev || statuses[w].Tag != w || statuses[w].ByteCount != 4L * (width + w)))
                    badStatus++;
            }
        }
        Check.Equal(0, bad, "every element of every window arrived");
        Check.Equal(0, badStatus, "statuses in posting order: source, tag and count of each receive");
        Check.Equal(0, badIndex, "each post returned its index in the list");
        long allocated = Mpi.GetStatistics().PinnedHandlesAllocated - handlesBefore;
        if (Mpi.IsHosted && Mpi.GetStatistics().GcExtensionActive)
            Check.Equal(0L, allocated, "no GCHandle per operation under motor");
        else
            Check.True(allocated > 0, $"library mode pins ordinary arrays with GCHandles ({allocated})");
        Check.Equal(0L, Mpi.GetStatistics().PinnedHandles, "no pin held once every list completed");

        // TestAll: false while a receive waits for its message, true (and empty) once it came.
        var one = new int[4];
        c.IRecv(one, prev, 70, list);
        Check.True(!list.TestAll(), "TestAll is false while the receive is pending");
        c.Barrier();
        c.Send(new[] { c.Rank, 1, 2, 3 }, next, 70);
        Span<Status> st = stackalloc Status[1];
        while (!list.TestAll(st)) { }
        Check.Sequence<int>(new[] { prev, 1, 2, 3 }, one, "TestAll completed the receive");
        Check.Equal(70, st[0].Tag, "TestAll's status");
        Check.True(list.TestAll(), "an empty list tests true");

        // ProcNull and a synchronous send go into a list like any operation.
        c.ISend(new[] { 1 }, Mpi.ProcNull, 71, list);
        c.IRecv(new int[1], Mpi.ProcNull, 71, list);
        var sync = new int[2];
        c.IRecv(sync, prev, 72, list);
        c.ISsend(new[] { c.Rank, 72 }, next, 72, list);
        list.WaitAll(statuses);
        Check.Equal(Mpi.ProcNull, statuses[1].Source, "a receive from ProcNull completes at once");
        Check.Sequence<int>(new[] { prev, 72 }, sync, "ISsend into a list");

        // Pinned-heap arrays need neither a GCHandle (library mode) nor registration with
        // the core (motor): once one exists, the list's posts look each array up.
        int[] pinnedIn = Mpi.AllocatePinned<int>(8), pinnedOut = Mpi.AllocatePinned<int>(8), ordinary = new int[8];
        Array.Fill(pinnedOut, c.Rank + 500);
        MpiStatistics before = Mpi.GetStatistics();
        c.IRecv(pinnedIn, prev, 73, list);
        c.ISend(pinnedOut, next, 73, list);
        list.WaitAll();
        MpiStatistics after = Mpi.GetStatistics();
        Check.Equal(prev + 500, pinnedIn[7], "a window on pinned-heap arrays");
        Check.Equal(0L, after.ArraysPinned - before.ArraysPinned, "no GCHandle for pinned-heap arrays");
        Check.Equal(0L, after.BuffersRegistered - before.BuffersRegistered, "no registration of pinned-heap arrays");
        c.IRecv(ordinary, prev, 74, list);
        c.ISend(pinnedOut, next, 74, list);
        list.WaitAll();
        long registered = Mpi.GetStatistics().BuffersRegistered - after.BuffersRegistered;
        long pinned = Mpi.GetStatistics().ArraysPinned - after.ArraysPinned;
        Check.Equal(1L, Mpi.IsHosted && Mpi.GetStatistics().GcExtensionActive ? registered : pinned,
                    "beside them, an ordinary array is still registered (motor) or pinned (library mode)");
        list.Dispose();
    }

    // The errors a user can cause, each raised before anything is sent or, for a truncated
    // receive, by MPI when the list is completed.
    private static void Errors(Communicator c)
    {
        (int next, int prev) = Ring(c);
        using var list = new RequestList(3);
        Check.Throws<ArgumentOutOfRangeException>(() => new RequestList(0), "a list of capacity 0");

        // Truncation, raised inside MPI: a receive of 4 ints gets 8.  The sibling receive
        // in the same list still completes, and the list is reusable after.
        foreach (bool withStatuses in new[] { true, false })
        {
            var small = new int[4];
            var sibling = new int[2];
            c.IRecv(small, prev, 80, list);
            c.IRecv(sibling, prev, 81, list);
            c.ISend(Enumerable.Range(0, 8).ToArray(), next, 80, list);
            c.Send(new[] { 5, 6 }, next, 81);
            var statuses = new Status[3];
            Check.Throws<MessageTruncatedException>(() =>
            {
                if (withStatuses)
                    list.WaitAll(statuses);
                else
                    list.WaitAll();
            }, $"a truncated receive in a list (statuses asked for: {withStatuses})");
            // MPI may stop at the error and leave other operations of the set pending
            // (MPI_ERR_PENDING, MPICH does): they stay in the list, and a second WaitAll
            // completes them; those MPI completed are not waited for again.
            if (list.Count > 0)
                list.WaitAll();
            Check.Equal(0, list.Count, "the list is empty once the rest completed");
            Check.Sequence<int>(new[] { 5, 6 }, sibling, "the sibling receive completed");
            Settle(c);
            Check.Equal(0L, Mpi.GetStatistics().PinnedHandles, "no pin left after the truncation");
            Check.Equal(0L, Mpi.GetStatistics().OrphanedRequests, "no operation given up");
        }

        // A full list refuses the next post before anything is sent: the message never
        // reaches the next rank.
        c.IRecv(new int[1], prev, 82, list);
        c.ISend(new[] { 1 }, next, 82, list);
        c.ISend(new[] { 2 }, next, 83, list);
        Check.Throws<InvalidOperationException>(() => c.ISend(new[] { 3 }, next, 84, list), "a post into a full list");
        Check.Equal(3, list.Count, "the refused post added nothing");
        list.WaitAll();
        c.Recv(new int[1], prev, 83);

        // Bad arguments: refused before the list or MPI sees them.
        Check.Throws<ArgumentOutOfRangeException>(() => c.ISend(new int[4], 0, 5, next, 85, list), "count past the end");
        Check.Throws<ArgumentOutOfRangeException>(() => c.ISend(new int[4], c.Size, 85, list), "dest out of range");
        Check.Throws<ArgumentOutOfRangeException>(() => c.IRecv(new int[4], prev, -5, list), "a negative receive tag");
        Check.Throws<ArgumentNullException>(() => c.ISend(new int[4], next, 85, null!), "no list");
        Check.Throws<ArgumentNullException>(() => c.IRecv((int[])null!, prev, 85, list), "no buffer");
        Check.Equal(0, list.Count, "refused posts added nothing");

        // Statuses too short: refused before anything is waited for; the list still holds its operations.
        var got = new int[1];
        c.IRecv(got, prev, 86, list);
        c.ISend(new[] { c.Rank }, next, 86, list);
        Check.Throws<ArgumentException>(() => list.WaitAll(new Status[1]), "one status for two operations");
        Check.Equal(2, list.Count, "the list kept its operations");
        list.WaitAll(new Status[2]);
        Check.Equal(prev, got[0], "the operations completed afterwards");

        // A disposed list refuses everything; disposing again does nothing.
        var gone = new RequestList(2);
        gone.Dispose();
        gone.Dispose();
        Check.Throws<ObjectDisposedException>(() => c.ISend(new[] { 9 }, next, 87, gone), "a post into a disposed list");
        Check.Throws<ObjectDisposedException>(() => gone.WaitAll(), "WaitAll of a disposed list");
        Check.Throws<ObjectDisposedException>(() => gone.TestAll(), "TestAll of a disposed list");

        // None of the refused sends went out: nothing is left to receive with their tags.
        c.Barrier();
        foreach (int tag in new[] { 84, 85, 87 })
            Check.True(!c.IProbe(Mpi.AnySource, tag, out _), $"no message with tag {tag} arrived");
        c.Barrier();
    }

    // A list disposed with a receive in flight, and one dropped (unreachable, finalized):
    // their receives still take the messages meant for them, their buffers are held until
    // then and released after, and the core forgets them.
    private static void Abandoned(Communicator c)
    {
        (int next, int prev) = Ring(c);
        long active = Mpi.GetStatistics().ActiveRequests;
        var disposed = new RequestList(1);
        c.IRecv(new int[16], prev, 90, disposed);
        disposed.Dispose();
        WeakReference dropped = PostAndDrop(c, prev);
        GC.Collect();
        GC.WaitForPendingFinalizers();
        c.Barrier();
        c.Send(Enumerable.Range(0, 16).ToArray(), next, 90);
        c.Send(Enumerable.Range(0, 16).ToArray(), next, 91);
        Settle(c);
        Check.True(!c.IProbe(Mpi.AnySource, 90, out _), "the disposed list's receive took its message");
        Check.True(!c.IProbe(Mpi.AnySource, 91, out _), "the dropped list's receive took its message");
        Check.Equal(0L, Mpi.GetStatistics().OrphanedRequests, "no orphan left");
        Check.Equal(0L, Mpi.GetStatistics().PinnedHandles, "no pin left");
        Check.Equal(active, Mpi.GetStatistics().ActiveRequests, "the in-flight table no longer holds them");
        Check.True(!dropped.IsAlive, "the dropped list's buffer was collected after its message arrived");
        c.Barrier();
    }

    /// <summary>
    /// Blocking calls and GCs, the same number on every rank (a count that depended on a rank's
    /// own statistics would pair one rank's barriers with another's finalize): the core completes
    /// orphans in blocking calls, a GC-triggered sweep releases their pins, and the last GC
    /// collects buffers the last sweep released.
    /// </summary>
    private static void Settle(Communicator c)
    {
        for (int i = 0; i < 10; i++)
        {
            c.Barrier();
            GC.Collect();
            GC.WaitForPendingFinalizers();
        }
        c.Barrier();
    }

    [System.Runtime.CompilerServices.MethodImpl(System.Runtime.CompilerServices.MethodImplOptions.NoInlining)]
    private static WeakReference PostAndDrop(Communicator c, int prev)
    {
        var buffer = new int[16];
        var list = new RequestList(1);
        c.IRecv(buffer, prev, 91, list);
        return new WeakReference(buffer);
    }
}
