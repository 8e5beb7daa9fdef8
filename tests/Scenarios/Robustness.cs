using System.Diagnostics;
using System.MP;

namespace Scenarios;

/// <summary>Bad input, managed exceptions under MPI, GC progress while waiting, lifecycle.</summary>
internal static class Robustness
{
    internal static void Register(Dictionary<Scenario, Action<Communicator>> s)
    {
        s[Scenario.BadArgs] = BadArguments;
        s[Scenario.ManagedExceptions] = ManagedExceptions;
        s[Scenario.GcNotStarved] = GcNotStarved;
        s[Scenario.AfterShutdown] = AfterShutdown;
        s[Scenario.DroppedRequest] = DroppedRequest;
        s[Scenario.DroppedSelfSend] = DroppedSelfSend;
        s[Scenario.Abort] = Abort;
        s[Scenario.Unhandled] = Unhandled;
    }

    // Rank 1 aborts while rank 0 waits for a message that never comes: the
    // whole job must end (the test asserts the exit code and that it did not hang).
    private static void Abort(Communicator c)
    {
        if (c.Rank == 1)
        {
            Console.WriteLine("rank 1 aborting with 7");
            Console.Out.Flush();
            Mpi.Abort(7);
        }
        c.Recv(new int[1], 1, 99);
        Check.True(false, "rank 0 must not get past the receive");
    }

    private static void Unhandled(Communicator c)
    {
        if (c.Rank == 1)
        {
            var t = new Thread(() => throw new InvalidTimeZoneException("boom on rank 1"));
            t.Start();
            t.Join();
        }
        c.Recv(new int[1], 1, 99);
        Check.True(false, "rank 0 must not get past the receive");
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
        Check.Throws<ArgumentNullException>(() => Request.WaitAll(null!), "null request array");
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

    private sealed class Holder
    {
        public int[]? Data = null;
    }

    private static void ManagedExceptions(Communicator c)
    {
        // UCX traps SIGSEGV/SIGFPE by default; the runtime needs them for these.
        Holder? h = c.Rank < 0 ? new Holder() : null;
        Check.Throws<NullReferenceException>(() => _ = h!.Data, "null dereference after MPI init");
        int zero = c.Rank - c.Rank;
        Check.Throws<DivideByZeroException>(() => _ = 10 / zero, "integer division by zero");
        var small = new int[2];
        int index = c.Size + 5;
        Check.Throws<IndexOutOfRangeException>(() => small[index] = 1, "index out of range");
        var holder = new Holder();
        Check.Throws<NullReferenceException>(() => holder.Data![0] = 1, "null array element store");
        // MPI keeps working after the signals were handled by the runtime.
        int right = (c.Rank + 1) % c.Size, left = (c.Rank + c.Size - 1) % c.Size;
        var got = new int[1];
        c.SendRecv(new[] { c.Rank }, right, 1, got, left, 1);
        Check.Equal(left, got[0], "messages after exceptions");
    }

    private static void GcNotStarved(Communicator c)
    {
        // Rank 0 sits in Recv for ~2 s while another thread allocates: the
        // waiting rank must not hold off the GC.
        const int DelayMs = 2000;
        if (c.Rank == 1)
        {
            Thread.Sleep(DelayMs);
            c.Send(new[] { 1 }, 0, 1);
        }
        else if (c.Rank == 0)
        {
            int gcsBefore = GC.CollectionCount(0);
            long longestPauseTicks = 0;
            var stop = new ManualResetEventSlim();
            var allocator = new Thread(() =>
            {
                var keep = new object[64];
                var sw = Stopwatch.StartNew();
                long last = sw.ElapsedTicks;
                for (int i = 0; !stop.IsSet; i++)
                {
                    keep[i & 63] = new byte[(i & 7) * 1024 + 64];
                    long now = sw.ElapsedTicks;
                    longestPauseTicks = Math.Max(longestPauseTicks, now - last);
                    last = now;
                }
            });
            allocator.Start();
            Thread.Sleep(50);
            var buf = new int[1];
            c.Recv(buf, 1, 1);
            stop.Set();
            allocator.Join();
            int gcs = GC.CollectionCount(0) - gcsBefore;
            double longestMs = longestPauseTicks * 1000.0 / Stopwatch.Frequency;
            Console.WriteLine($"gc-not-starved: {gcs} gen0 GCs while waiting, longest allocation gap {longestMs:F1} ms");
            Check.True(gcs >= 10, $"GCs ran while rank 0 waited in Recv ({gcs})");
            Check.True(longestMs < DelayMs / 4.0, $"longest allocation gap {longestMs:F1} ms is far below the {DelayMs} ms wait");
            Check.Equal(1, buf[0], "message after the wait");
        }
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
