using System.MP;

namespace Scenarios;

/// <summary>
/// The per-operation request path and one request type to wait on:
/// no GCHandle per nonblocking operation under motor (counted), sets that mix buffer,
/// object and persistent requests, ObjectRequest.Cancel, and the errors the shortened
/// completion paths must still raise.  Two ranks or more, each sending to the next.
/// </summary>
internal static class RequestPath
{
    internal static void Register(Dictionary<Scenario, Action<Communicator>> s)
    {
        s[Scenario.RequestPathPins] = Pins;
        s[Scenario.RequestPathMixedSets] = MixedSets;
        s[Scenario.RequestPathFullTable] = FullTable;
        s[Scenario.RequestPathWaitSome] = WaitSomeTestSome;
    }

    // The core's table of pending requests full: the receive of a matched message is
    // refused with InsufficientMemoryException before MPI sees the message, which stays the
    // Message's (the core claims the request's slot first; before, MPI had taken the message and
    // the Message had given up its handle).  Once requests complete, the same Message receives it
    // whole.  Rank 0 fills the table with receives of a tag nobody sends, then cancels them.
    private static void FullTable(Communicator c)
    {
        const int Tag = 95, Never = 96, Listed = 97;
        if (c.Rank != 0)
        {
            if (c.Rank == 1)
            {
                c.Send(new[] { 7, 8, 9 }, 0, Tag);
                if (TwoStepBlocking)
                    BlockingBesideAFullTable(c);
                var posted = new int[1];
                c.Recv(posted, 0, Tag);
                for (int i = 0; i < posted[0]; i++)
                    c.Send(Array.Empty<int>(), 0, Listed);
            }
            c.Barrier();
            return;
        }
        Message msg = c.MProbe(1, Tag);
        var pending = new List<Request>(1 << 20);
        var nothing = Array.Empty<int>();
        var full = Check.Throws<InsufficientMemoryException>(() =>
        {
            while (pending.Count <= 1 << 21)
                pending.Add(c.IRecv(nothing, 1, Never));
        }, "receives posted until the table is full");
        // 2^20 slots under Open MPI; under MPICH, whose request pool aborts the process past 2^18,
        // 2^18 - 2^14 (before, such a job ended in MPICH's "Internal error").
        bool mpich = !Mpi.LibraryVersion.StartsWith("Open MPI", StringComparison.Ordinal);
        Check.True(full?.Message.Contains("too many pending requests", StringComparison.Ordinal) == true &&
                   pending.Count == (mpich ? (1 << 18) - (1 << 14) : 1 << 20),
                   $"the table took {pending.Count} requests: {full?.Message}");
        var into = new int[3];
        Check.Throws<InsufficientMemoryException>(() => msg.IRecv(into), "IRecv of a matched message with the table full");
        Check.Sequence<int>([0, 0, 0], into, "nothing received into the array");
        var blocking = new int[3];
        if (TwoStepBlocking)
        {
            // The pending part of a blocking call holds an entry too (before, an MPI request the
            // table did not count): refused before MPI sees the operation.
            Check.Throws<InsufficientMemoryException>(() => c.Recv(blocking, 1, Blocking), "Recv with the table full");
            Check.Throws<InsufficientMemoryException>(() => c.Send(new[] { -1, -1, -1 }, 1, Blocking), "Send with the table full");
            Check.Sequence<int>([0, 0, 0], blocking, "nothing received by the refused Recv");
        }
        for (int i = 0; i < 16; i++)
        {
            pending[^1].Cancel();
            pending[^1].Wait();
            pending.RemoveAt(pending.Count - 1);
        }
        msg.IRecv(into).Wait();
        Check.Sequence<int>([7, 8, 9], into, "the same Message received once slots were free");
        if (TwoStepBlocking)
        {
            c.Recv(blocking, 1, Blocking);
            Check.Sequence<int>([4, 5, 6], blocking, "the message the refused Recv left, received once slots were free");
            c.Send(new[] { 10, 11, 12 }, 1, Blocking);
        }
        CancelAll(pending);
        Check.Equal(0L, Mpi.GetStatistics().ActiveRequests, "every request finished");
        ListsShareThePool(c, pending.Count, mpich, Tag, Never, Listed);
        c.Barrier();
    }

    private const int Blocking = 98;

    // Whether blocking sends and receives take the core's two steps (a post that holds a request
    // while it is pending, then a wait): with the hang report on (motor --hang-report, MOTOR_HANG_REPORT).
    private static bool TwoStepBlocking =>
        !string.IsNullOrWhiteSpace(AppContext.GetData("Motor.HangReport") as string ?? Environment.GetEnvironmentVariable("MOTOR_HANG_REPORT"));

    // Rank 1's side of the blocking calls rank 0 makes beside its full table: the message its
    // refused Recv leaves, then the one Send it makes once the table has room; the refused Send
    // sent nothing.
    private static void BlockingBesideAFullTable(Communicator c)
    {
        c.Send(new[] { 4, 5, 6 }, 0, Blocking);
        var got = new int[3];
        c.Recv(got, 0, Blocking);
        Check.Sequence<int>([10, 11, 12], got, "the one message of rank 0's Sends: the refused one sent nothing");
        Check.True(!c.IProbe(0, Blocking, out _), "no other message from rank 0's Sends");
    }

    // Receives of a tag nobody sends: cancelled and completed.
    private static void CancelAll(List<Request> pending)
    {
        foreach (Request q in pending)
            q.Cancel();
        Request.WaitAll(System.Runtime.InteropServices.CollectionsMarshal.AsSpan(pending));
    }

    // A RequestList's MPI requests hold no slot, but under MPICH they count against the same
    // pool: a list larger than the pool is refused (InsufficientMemoryException) at the post that
    // would pass it, nothing posted, instead of MPICH aborting the process (before: "Assertion
    // failed ... req != NULL" past 2^18), and while it holds its receives the table takes no more
    // than the slots a thread had cached.  The list stays usable: rank 1 sends what it holds.
    private static void ListsShareThePool(Communicator c, int limit, bool mpich, int tag, int never, int listed)
    {
        const int Cached = 4096; // at most the slots threads keep cached (256 each), counted as held
        int capacity = (1 << 18) + (1 << 14), posted = 0, extra = 0;
        var nothing = Array.Empty<int>();
        InsufficientMemoryException? listFull = null, tableFull = null;
        var more = new List<Request>();
        using (var list = new RequestList(capacity))
        {
            try
            {
                while (posted < capacity)
                {
                    c.IRecv(nothing, 1, listed, list);
                    posted++;
                }
            }
            catch (InsufficientMemoryException e)
            {
                listFull = e;
            }
            Check.Equal(posted, list.Count, "the refused receive is not in the list");
            if (mpich)
            {
                Check.True(listFull is not null && listFull.Message.Contains("reserved by request lists", StringComparison.Ordinal) &&
                           posted <= limit && posted >= limit - Cached,
                           $"a list of {capacity} took {posted} receives against a pool of {limit}: {listFull?.Message}");
                try
                {
                    while (extra <= limit)
                    {
                        more.Add(c.IRecv(nothing, 1, never));
                        extra++;
                    }
                }
                catch (InsufficientMemoryException e)
                {
                    tableFull = e;
                }
                Check.True(tableFull is not null && extra <= Cached,
                           $"the table took {extra} requests beside the list's {posted}: {tableFull?.Message}");
                CancelAll(more);
            }
            else
            {
                Check.True(listFull is null && posted == capacity, $"Open MPI: a list of {capacity} took {posted}: {listFull?.Message}");
            }
            c.Send(new[] { posted }, 1, tag);
            list.WaitAll();
            Check.Equal(0, list.Count, "the list completed every receive it held");
        }
        Check.Equal(0L, Mpi.GetStatistics().ActiveRequests, "every request finished after the list");
    }

    // Windows of nonblocking sends and receives on ordinary (movable) arrays, nonblocking
    // collectives and persistent instances: under motor with its GC extension none of them
    // allocates a GCHandle (the arrays are registered instead); in library mode they do, and
    // the counter shows it.
    private static void Pins(Communicator c)
    {
        const int rounds = 40, window = 16, width = 8;
        int next = (c.Rank + 1) % c.Size, prev = (c.Rank + c.Size - 1) % c.Size;
        var send = new int[window][];
        var recv = new int[window][];
        for (int w = 0; w < window; w++)
            (send[w], recv[w]) = (new int[width], new int[width]);
        var reqs = new Request[2 * window];
        MpiStatistics before = Mpi.GetStatistics();
        int bad = 0;
        for (int round = 0; round < rounds; round++)
        {
            for (int w = 0; w < window; w++)
            {
                Array.Fill(send[w], c.Rank * 1000 + round * 10 + w);
                reqs[w] = c.IRecv(recv[w], prev, w);
            }
            for (int w = 0; w < window; w++)
                reqs[window + w] = c.ISend(send[w], next, w);
            Request.WaitAll(reqs.AsSpan());
            for (int w = 0; w < window; w++)
                bad += recv[w].Count(v => v != prev * 1000 + round * 10 + w);
        }
        Check.Equal(0, bad, "every element of every window arrived");
        var sum = new long[4];
        for (int i = 0; i < 10; i++)
            c.IAllreduce(new long[] { 1, i, c.Rank, 7 }, sum, Op.Sum).Wait();
        Check.Sequence(new long[] { c.Size, 9L * c.Size, (long)c.Size * (c.Size - 1) / 2, 7L * c.Size }, sum, "IAllreduce");
        var pin = new int[width];
        var pout = new int[width];
        using (PersistentRequest pr = c.RecvInit(pin, prev, 90), ps = c.SendInit(pout, next, 90))
        {
            for (int i = 0; i < 10; i++)
            {
                Array.Fill(pout, c.Rank + i);
                PersistentRequest.StartAll(pr, ps);
                PersistentRequest.WaitAll(pr, ps);
                bad += pin.Count(v => v != prev + i);
            }
        }
        Check.Equal(0, bad, "every persistent instance arrived");
        MpiStatistics after = Mpi.GetStatistics();
        long allocated = after.PinnedHandlesAllocated - before.PinnedHandlesAllocated, pinned = after.ArraysPinned - before.ArraysPinned;
        long operations = after.PointToPointOperations - before.PointToPointOperations;
        Check.True(operations >= 2 * rounds * window, $"the nonblocking operations were counted ({operations})");
        if (Mpi.IsHosted && after.GcExtensionActive)
        {
            Check.Equal(0L, allocated, "GCHandles allocated by nonblocking operations under motor");
            Check.Equal(0L, pinned, "arrays pinned by nonblocking operations under motor");
            Check.True(after.BuffersRegistered - before.BuffersRegistered >= 2 * rounds * window,
                       "the buffers were registered with the GC extension instead");
        }
        else
        {
            // Every operation here is on an array of its own: one pin each; a window's 32 arrays are
            // in flight together, more than the thread keeps idle handles for, so some are new.
            Check.True(pinned >= 2 * rounds * window, $"library mode pins with GCHandles, and counts them ({pinned})");
            Check.True(allocated > 0 && allocated < pinned, $"some pins re-point idle handles, some need new ones ({allocated} of {pinned})");
        }
        Check.Equal(0L, after.PinnedHandles, "no pin outlives its operations");
    }

    // One WaitAll / WaitAny / TestAll over buffer, object and persistent requests together;
    // ObjectRequest.Cancel; and the errors of the set path (null, disposed, repeated,
    // statuses too short, a failed operation thrown after the rest completed).
    private static void MixedSets(Communicator c)
    {
        int next = (c.Rank + 1) % c.Size, prev = (c.Rank + c.Size - 1) % c.Size;

        // WaitAll over all three kinds, in both directions at once.
        var recvBuf = new int[4];
        var pin = new long[2];
        using PersistentRequest pr = c.RecvInit(pin, prev, 72), ps = c.SendInit(new long[] { c.Rank, -c.Rank }, next, 72);
        PersistentRequest.StartAll(pr, ps);
        ObjectRequest<string> text = c.OIRecv<string>(prev, 71);
        MpiRequest[] mix =
        [
            c.IRecv(recvBuf, prev, 70), text, pr,
            c.ISend(new[] { c.Rank, 1, 2, 3 }, next, 70), c.OISend($"hello from {c.Rank}", next, 71), ps,
        ];
        Status[] st = MpiRequest.WaitAll(mix);
        Check.Sequence(new[] { prev, 1, 2, 3 }, recvBuf, "buffer receive of the mixed set");
        Check.Equal($"hello from {prev}", text.Result, "object receive of the mixed set");
        Check.Sequence(new long[] { prev, -prev }, pin, "persistent receive of the mixed set");
        Check.True(st[0].Source == prev && st[0].Tag == 70 && st[1].Tag == 71 && st[2].Tag == 72 && st[2].GetCount<long>() == 2,
                   "statuses of the mixed set, in order");
        Check.True(mix.All(r => r.IsCompleted) && !pr.IsActive && !ps.IsActive, "all complete, persistent ones inactive");
        Check.Equal(st[0], Request.WaitAll(mix)[0], "a completed set again: the stored statuses");

        // WaitAny: the two receives complete one at a time, then nothing is pending.
        var sends = new MpiRequest[] { c.OISend(new[] { c.Rank }, next, 73), c.ISend(new[] { c.Rank }, next, 74) };
        var one = new int[1];
        ObjectRequest<int[]> obj = c.OIRecv<int[]>(prev, 73);
        var anyOf = new MpiRequest[] { obj, c.IRecv(one, prev, 74) };
        int first = MpiRequest.WaitAny(anyOf, out Status s1), second = MpiRequest.WaitAny(anyOf, out Status s2);
        Check.True(first + second == 1 && s1.Tag == 73 + first && s2.Tag == 73 + second, "WaitAny completes each once");
        Check.Equal(Mpi.Undefined, MpiRequest.WaitAny(anyOf, out Status none), "WaitAny with nothing pending");
        Check.Equal(Mpi.AnySource, none.Source, "the empty status");
        Check.True(obj.Result is [var v] && v == prev && one[0] == prev, "WaitAny's data");
        MpiRequest.WaitAll(sends.AsSpan());

        // TestAll: false until the message of the object receive arrives, then everything at once.
        pr.Start();
        ObjectRequest<string> late = c.OIRecv<string>(prev, 77);
        MpiRequest[] testSet = [late, pr];
        Check.True(!MpiRequest.TestAll(testSet) || c.Size == 1, "TestAll before anything was sent");
        c.Barrier();
        using (ObjectRequest lateSend = c.OISend("late", next, 77))
        using (Request pSend = c.ISend(new long[] { 5, 6 }, next, 72))
        {
            while (!MpiRequest.TestAll(testSet))
            {
            }
            Request.WaitAll(new MpiRequest[] { lateSend, pSend });
        }
        Check.True(late.Result == "late" && pin[0] == 5 && !pr.IsActive, "TestAll completed the mixed set");

        // ObjectRequest.Cancel: an unmatched receive completes cancelled and leaves its message;
        // a send is not cancelled.
        ObjectRequest<string> never = c.OIRecv<string>(prev, 75);
        never.Cancel();
        Check.True(never.Wait().Cancelled && never.IsCompleted && never.Result is null, "a cancelled object receive");
        never.Cancel(); // completed: nothing to do
        c.Barrier();
        ObjectRequest notCancelled = c.OISend("still delivered", next, 75);
        notCancelled.Cancel();
        Check.True(!notCancelled.Wait().Cancelled, "an object send is not cancelled");
        Check.Equal("still delivered", c.ORecv<string>(prev, 75), "the message the cancelled receive left");

        // The set path's errors, before anything is waited for.
        var pendingBuf = new int[1];
        Request pending = c.IRecv(pendingBuf, prev, 78);
        ObjectRequest<int> disposed = c.OIRecv<int>(prev, 79);
        disposed.Dispose();
        Check.Throws<ObjectDisposedException>(() => MpiRequest.WaitAll(pending, disposed), "a disposed object request in a set");
        Check.Throws<ArgumentException>(() => MpiRequest.WaitAll(pending, text, pending), "a pending request twice");
        Check.True(MpiRequest.TestAll([pr, pr]), "an inactive persistent request twice: nothing to wait for");
        Check.Throws<ArgumentNullException>(() => MpiRequest.WaitAny([pending, null!], out _), "a null request");
        Check.Throws<ArgumentException>(() => MpiRequest.WaitAll([pending], Span<Status>.Empty), "statuses too short");

        // A failed operation is thrown after the rest of the set completed (the failing-set path).
        var small = new int[1];
        var fine = new int[2];
        var failing = new MpiRequest[] { pending, c.IRecv(small, prev, 80), c.IRecv(fine, prev, 81), text };
        using (Request a = c.ISend(new[] { 8 }, next, 78))
        using (Request b = c.ISend(new[] { 1, 2 }, next, 80)) // two into one: truncated
        using (Request d = c.ISend(new[] { 3, 4 }, next, 81))
        {
            Check.Throws<MessageTruncatedException>(() => MpiRequest.WaitAll(failing), "a truncated receive in a mixed set");
            Request.WaitAll(a, b, d);
        }
        // MPI may leave requests of a failed set pending (MPI_ERR_PENDING, MPI-4.0 3.7.5): they
        // stay usable, and a second WaitAll completes them (the truncated one is complete).
        MpiRequest.WaitAll(failing);
        Check.True(fine[1] == 4 && pendingBuf[0] == 8,
                   "the rest of the failing set completed (with the receive the refused sets left alone)");
        using Request last = c.IRecv(new int[2], prev, 82);
        using (c.ISend(new[] { 1, 2, 3 }, next, 82))
            Check.Throws<MessageTruncatedException>(() => Request.WaitAll(last, c.ISend(new[] { 0 }, Mpi.ProcNull, 0)), "a truncated receive in a buffer set");
        Check.True(last.IsCompleted, "the truncated receive is complete");
        last.Dispose();
        Check.Throws<ObjectDisposedException>(() => MpiRequest.WaitAll(pending, last), "a disposed request in a set");

        // An object request that failed before the set (a malformed payload) throws its error from
        // the set only after the others finished: none is left completed in the core but not here.
        ObjectRequest<int[]> broken = c.OIRecv<int[]>(prev, 83);
        c.Send(new byte[] { 1, 2, 3 }, next, 83); // not an object payload
        Check.Throws<TransportException>(() => broken.Wait(), "a malformed payload");
        var after = new int[1];
        Request plain = c.IRecv(after, prev, 84);
        using (c.ISend(new[] { 9 }, next, 84))
            Check.Throws<TransportException>(() => MpiRequest.WaitAll(broken, plain), "the set throws the failed object request's error");
        Check.True(plain.IsCompleted && after[0] == 9, "the buffer receive of that set completed");
        plain.Dispose();
        ObjectRequest<string> okObj = c.OIRecv<string>(prev, 85);
        using (c.OISend("fine", next, 85))
            Check.Throws<TransportException>(() => MpiRequest.WaitAll(broken, okObj), "the object-set path throws it too");
        Check.True(okObj.IsCompleted && okObj.Result == "fine", "the object receive of that set completed first");

        // A receive truncated at its post (its message had arrived, Probe says so) in a set with
        // a receive whose message comes late: WaitAll of a set and of a request list report the
        // truncation, the other completes then or by a later wait (MPI may leave it pending).
        // With MOTOR_SPIN_POLLS=0 (RequestPathTests) the set goes straight into MPI's wait:
        // Open MPI 4.1's MPI_Waitall waited forever for it above MPI_THREAD_SINGLE; the core
        // waits for each request there instead.  Rank 0 receives, rank 1 sends.
        if (c.Size == 2)
        {
            for (int form = 0; form < 2; form++)
            {
                if (c.Rank == 1)
                {
                    c.Send(new[] { 1, 2, 3 }, 0, 86);
                    Thread.Sleep(200);
                    c.Send(new[] { 5 + form }, 0, 87);
                }
                else
                {
                    c.Probe(1, 86);
                    var cell = new int[1];
                    var lateCell = new int[1];
                    if (form == 0)
                    {
                        Request tooSmall = c.IRecv(cell, 1, 86), slow = c.IRecv(lateCell, 1, 87);
                        Check.Throws<MessageTruncatedException>(() => Request.WaitAll(tooSmall, slow), "a set with a receive truncated at its post");
                        if (!slow.IsCompleted)
                            slow.Wait();
                        Check.True(tooSmall.IsCompleted && lateCell[0] == 5, "both requests of that set completed");
                    }
                    else
                    {
                        using var list = new RequestList(2);
                        c.IRecv(cell, 1, 86, list);
                        c.IRecv(lateCell, 1, 87, list);
                        Check.Throws<MessageTruncatedException>(() => list.WaitAll(), "a request list with a receive truncated at its post");
                        if (list.Count > 0)
                            list.WaitAll();
                        Check.Equal(6, lateCell[0], "the late receive of that list completed");
                    }
                }
                c.Barrier();
            }
        }
    }

    // WaitSome and TestSome complete what arrived and only that; misuse is refused before anything completes.
    private static void WaitSomeTestSome(Communicator c)
    {
        int r = c.Rank;
        static int[] Fill(int n, Func<int, int> value) => Enumerable.Range(0, n).Select(value).ToArray();

        // WaitSome and TestSome: rank 0 sends tags 21 and 23 first, 20 and 22 only once rank 1
        // has completed those two, so the first ones rank 1 collects are exactly 1 and 3.
        if (r == 0)
        {
            c.Send(Fill(2, i => 21 * 10 + i), 1, 21);
            c.Send(Fill(4, i => 23 * 10 + i), 1, 23);
            Check.Equal(24, c.Recv<int>(1, 24), "rank 1 collected the first two");
            c.Send(Fill(1, i => 20 * 10 + i), 1, 20);
            c.Send(Fill(3, i => 22 * 10 + i), 1, 22);
        }
        else
        {
            var bufs = Fill(4, _ => 0).Select(_ => new int[8]).ToArray();
            Request[] reqs = Enumerable.Range(0, 4).Select(k => c.IRecv(bufs[k], 0, 20 + k)).ToArray();
            var seen = new List<int>();
            while (seen.Count < 2)
            {
                int[] idx = Request.WaitSome(reqs, out Status[] st);
                Check.True(idx.Length > 0 && idx.Length == st.Length, "WaitSome completed at least one");
                for (int k = 0; k < idx.Length; k++)
                {
                    Check.Equal(20 + idx[k], st[k].Tag, "WaitSome status tag");
                    Check.Equal(idx[k] + 1, st[k].GetCount<int>(), "WaitSome status count");
                    seen.Add(idx[k]);
                }
            }
            seen.Sort();
            Check.Sequence<int>([1, 3], seen.ToArray(), "only the sent messages completed");
            Check.Equal(0, Request.TestSome(reqs, out _).Length, "nothing more has arrived before the go-ahead");
            c.Send(24, 0, 24);
            seen.Clear();
            while (seen.Count < 2)
                seen.AddRange(Request.TestSome(reqs, out _));
            seen.Sort();
            Check.Sequence<int>([0, 2], seen.ToArray(), "TestSome completed the others");
            for (int k = 0; k < 4; k++)
                Check.Sequence<int>(Fill(k + 1, i => (20 + k) * 10 + i), bufs[k].AsSpan(0, k + 1), $"message {20 + k}");
            Check.Equal(0, Request.WaitSome(reqs, out Status[] none).Length + none.Length, "WaitSome of completed requests returns none");

            // A repeated pending request or a null entry is refused before anything completes.
            Request pending = c.IRecv(new int[1], 0, 25);
            Check.Throws<ArgumentException>(() => Request.WaitSome([pending, pending], out _), "WaitSome with a request twice");
            Check.Equal(0, Request.TestSome([pending, default], out _).Length, "TestSome with the null request: skipped, nothing completed");
            c.Send(25, 0, 26);
            Check.Equal(0, Request.WaitSome([pending], out Status[] ps)[0], "the pending one completes");
            Check.Equal(0, ps[0].Source, "its status");
        }
        if (r == 0)
        {
            c.Recv<int>(1, 26);
            c.Send(new[] { 1 }, 1, 25);
        }
    }
}
