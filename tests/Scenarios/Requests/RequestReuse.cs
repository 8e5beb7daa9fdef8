using System.MP;
using System.Reflection;
using System.Runtime.CompilerServices;

namespace Scenarios;

/// <summary>
/// A Request is a handle on pooled state, reused by later operations: every use of a request
/// already completed (or disposed) is refused with ObjectDisposedException and leaves the
/// newer operation on the same state alone; a request dropped in flight is still reclaimed by
/// its state's finalizer, its buffer held until MPI is done with it.  Two ranks, rank 0 checks,
/// rank 1 sends when told (barriers order the messages).
/// </summary>
internal static class RequestReuse
{
    internal static void Register(Dictionary<Scenario, Action<Communicator>> s) => s[Scenario.RequestReuse] = Reuse;

    private static void Reuse(Communicator c)
    {
        int peer = 1 - c.Rank;
        if (c.Rank == 1)
        {
            c.Barrier();
            c.Send(new[] { 11 }, 0, 1);                 // the first receive
            c.Barrier();
            c.Send(new[] { 22 }, 0, 2);                 // the receive on the reused state
            c.Barrier();
            c.Send(new[] { 33, 34 }, 0, 3);             // the dropped receive
            c.Send(new[] { 44 }, 0, 4);                 // the receive posted after it
            c.Barrier();
            c.Send(new byte[4096], 0, 5);               // the receive dropped behind a stale copy
            for (int i = 0; i < 10; i++)
                c.Barrier();
            return;
        }

        // Each part in a method of its own: the stale copies a part keeps (in locals and in its
        // lambdas' closure) are unreachable once it returns, as a program's would be.
        StaleUses(c, peer);
        long active = Mpi.GetStatistics().ActiveRequests;
        WeakReference dropped = DropWhileANewerOneIsPending(c, peer);
        WeakReference behindStale = DropBehindAStaleCopy(c, peer);
        for (int i = 0; i < 10; i++)
        {
            c.Barrier();
            GC.Collect();
            GC.WaitForPendingFinalizers();
        }
        Check.True(!dropped.IsAlive, "the dropped receive's buffer was collected after its message arrived");
        Check.True(!behindStale.IsAlive, "the receive dropped behind a stale copy was collected once the copy was gone");
        Check.Equal(active, Mpi.GetStatistics().ActiveRequests, "no dropped receive left in the in-flight table");
    }

    /// <summary>Use after completion, a double wait, and every use of a stale copy whose state a newer receive reuses.</summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    private static void StaleUses(Communicator c, int peer)
    {
        var first = new int[1];
        Request spent = c.IRecv(first, peer, 1);
        c.Barrier();
        Check.Equal(1, spent.Wait().Tag, "the first receive completes");
        Check.Equal(11, first[0], "the first receive's data");
        var e = Check.Throws<ObjectDisposedException>(() => spent.Wait(), "a second Wait");
        Check.True(e?.Message.Contains("already been completed", StringComparison.Ordinal) == true, $"the second Wait says why: {e?.Message}");
        Check.True(spent.IsCompleted, "a spent request is completed");

        // The next operation of this thread reuses the spent request's state (the pool is a stack).
        var second = new int[1];
        Request fresh = c.IRecv(second, peer, 2);
        Check.True(ReferenceEquals(StateOf(spent), StateOf(fresh)), "the newer receive reuses the spent request's state");
        Check.True(spent != fresh, "the stale copy and the newer request differ");
        Check.Throws<ObjectDisposedException>(() => spent.Wait(), "Wait on the stale copy");
        Check.Throws<ObjectDisposedException>(() => spent.Test(out _), "Test on the stale copy");
        Check.Throws<ObjectDisposedException>(() => spent.Cancel(), "Cancel on the stale copy (would cancel the newer receive)");
        Check.Throws<ObjectDisposedException>(() => Request.WaitAll(new[] { spent }.AsSpan()), "a set with the stale copy");
        Check.Throws<ObjectDisposedException>(() => Request.WaitAny(new[] { spent }, out _), "WaitAny with the stale copy");
        // Sets give the core handles it does not check again (mp_req_waitall_owned): a repeat is still
        // refused by the core before anything is waited for, a stale copy by its version check.
        var twice = Check.Throws<ArgumentException>(() => Request.WaitAll(fresh, fresh), "a set with the newer request twice");
        Check.True(twice?.Message.Contains("twice (entries 0 and 1)", StringComparison.Ordinal) == true, $"the repeat is named: {twice?.Message}");
        Check.Throws<ObjectDisposedException>(() => Request.WaitAll(fresh, spent), "a set with the newer request and the stale copy");
        spent.Dispose(); // a spent request: nothing to give up (would orphan the newer receive)
        Check.True(!fresh.IsCompleted, "the newer receive is still pending, untouched by the stale copy");
        c.Barrier();
        Status st = fresh.Wait();
        Check.True(st.Tag == 2 && !st.Cancelled && second[0] == 22, $"the newer receive completes normally (tag {st.Tag}, cancelled {st.Cancelled}, data {second[0]})");
        Check.Throws<ObjectDisposedException>(() => fresh.Wait(), "Wait on the newer request once it completed");
    }

    /// <summary>A receive dropped in flight, collected and finalized while a newer one is pending: the newer one is untouched.</summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    private static WeakReference DropWhileANewerOneIsPending(Communicator c, int peer)
    {
        WeakReference dropped = PostAndDrop(c, peer, 3, 2);
        GC.Collect();
        GC.WaitForPendingFinalizers(); // the dropped request's state hands the receive to the core
        var fourth = new int[1];
        Request newer = c.IRecv(fourth, peer, 4);
        c.Barrier();
        Status st = newer.Wait();
        Check.True(st.Tag == 4 && fourth[0] == 44, $"the receive posted after the dropped one gets its own message (tag {st.Tag}, data {fourth[0]})");
        return dropped;
    }

    /// <summary>
    /// A stale copy keeps a reused state reachable: the newer receive on it, dropped, stays in
    /// flight (its buffer held) while the copy lives, and is reclaimed like any other once it is gone.
    /// </summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    private static WeakReference DropBehindAStaleCopy(Communicator c, int peer)
    {
        Request done = c.ISend(new[] { 1 }, Mpi.ProcNull, 0);
        done.Wait();
        WeakReference buffer = PostOnStateOf(done, c, peer, 5);
        GC.Collect();
        GC.WaitForPendingFinalizers();
        Check.True(buffer.IsAlive, "the receive behind the stale copy is in flight: its buffer is held");
        Check.True(done.IsCompleted, "the stale copy answers as spent");
        c.Barrier();
        return buffer;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static WeakReference PostOnStateOf(Request done, Communicator c, int peer, int tag)
    {
        var buffer = new byte[4096];
        Request reused = c.IRecv(buffer, peer, tag); // then dropped
        Check.True(ReferenceEquals(StateOf(done), StateOf(reused)), "the receive reuses the completed send's state");
        return new WeakReference(buffer);
    }

    /// <summary>The pooled state behind a request (its private field: what the test checks is reused).</summary>
    internal static object? StateOf(Request r) =>
        typeof(Request).GetField("_state", BindingFlags.NonPublic | BindingFlags.Instance)!.GetValue(r);

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static WeakReference PostAndDrop(Communicator c, int peer, int tag, int count)
    {
        var buffer = new int[count];
        _ = c.IRecv(buffer, peer, tag);
        return new WeakReference(buffer);
    }
}
