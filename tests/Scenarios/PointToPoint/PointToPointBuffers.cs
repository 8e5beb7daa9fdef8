using System.MP;
using System.Numerics;
using static Scenarios.Heap;

namespace Scenarios;

/// <summary>A user struct with mixed fields and padding.</summary>
internal struct Particle : IEquatable<Particle>
{
    public int Id;
    public double X;
    public byte Flag;

    public bool Equals(Particle other) => Id == other.Id && X == other.X && Flag == other.Flag;
    public override bool Equals(object? obj) => obj is Particle p && Equals(p);
    public override int GetHashCode() => Id;
    public override string ToString() => $"({Id}, {X}, {Flag})";
}

/// <summary>Buffer point-to-point scenarios: every one checks the data that arrived.</summary>
internal static class PointToPointBuffers
{
    internal static void Register(Dictionary<Scenario, Action<Communicator>> s)
    {
        s[Scenario.Types] = Types;
        s[Scenario.ZeroLength] = ZeroLength;
        s[Scenario.Procnull] = ProcNull;
        s[Scenario.AnySourceTag] = AnySourceAnyTag;
        s[Scenario.Ordering] = Ordering;
        s[Scenario.Probe] = Probe;
        s[Scenario.Nonblocking] = Nonblocking;
        s[Scenario.Cancel] = Cancel;
        s[Scenario.Syncsend] = SyncSend;
        s[Scenario.Truncate] = Truncate;
        s[Scenario.SendrecvRing] = SendRecvRing;
        s[Scenario.DupSplit] = DupSplit;
        s[Scenario.Mprobe] = MatchedProbe;
        s[Scenario.Issend] = NonblockingSyncSend;
        s[Scenario.SendrecvReplace] = SendRecvReplace;
        s[Scenario.MprobeTyped] = MatchedIntoTypedBuffers;
    }

    private static void MatchedProbe(Communicator c)
    {
        if (c.Rank == 0)
        {
            c.Send(Make(1234, i => (short)i), 1, 1);
            c.Send(Make(10, i => (short)-i), 1, 2);
            c.Send(Make(3, i => (short)(i + 7)), 1, 3);
        }
        else if (c.Rank == 1)
        {
            Message m = c.MProbe(Mpi.AnySource, 1);
            Check.Equal(1234, m.Status.GetCount<short>(), "mprobe size");
            // The probed message is out of matching: a wildcard receive gets the next one.
            var other = new short[100];
            Status st = c.Recv(other, Mpi.AnySource, Mpi.AnyTag);
            Check.Equal(2, st.Tag, "wildcard receive skips the matched message");
            var data = new short[m.Status.GetCount<short>()];
            Status ms = m.Recv(data);
            Check.Equal(1, ms.Tag, "mrecv tag");
            Check.Sequence<short>(Make(1234, i => (short)i), data, "mrecv data");
            Check.Throws<InvalidOperationException>(() => m.Recv(data), "a message is received once");
            Message? m3;
            while (!c.IMProbe(0, 3, out m3))
            {
            }
            Check.Equal(3, m3.Status.GetCount<short>(), "improbe size");
            var small = new short[2];
            Check.Throws<MessageTruncatedException>(() => m3.Recv(small), "mrecv into a short buffer");
            Message pn = c.MProbe(Mpi.ProcNull, 0);
            Check.Equal(Mpi.ProcNull, pn.Status.Source, "mprobe procnull source");
            Check.Equal(Mpi.ProcNull, pn.Recv(new int[1]).Source, "mrecv procnull");
        }
    }

    private static T[] Make<T>(int n, Func<int, T> f)
    {
        var a = new T[n];
        for (int i = 0; i < n; i++)
            a[i] = f(i);
        return a;
    }

    /// <summary>Rank 0 sends, rank 1 receives and echoes back; both sides verify.</summary>
    private static void RoundTrip<T>(Communicator c, string name, Func<int, T> f) where T : unmanaged, IEquatable<T>
    {
        const int N = 1000;
        T[] expected = Make(N, f);
        if (c.Rank == 0)
        {
            c.Send(expected, 1, 1);
            var back = new T[N + 3];
            Status st = c.Recv(back, 1, 2);
            Check.Equal(N, st.GetCount<T>(), $"{name} echo count");
            Check.Sequence<T>(expected, back.AsSpan(0, N), $"{name} echo");
            // single values and spans
            c.Send(expected[7], 1, 3);
            c.Send<T>(expected.AsSpan(10, 20), 1, 4);
            // offset/count send
            c.Send(expected, 100, 50, 1, 5);
        }
        else if (c.Rank == 1)
        {
            var got = new T[N + 3];
            Status st = c.Recv(got, 0, 1);
            Check.Equal(0, st.Source, $"{name} source");
            Check.Equal(1, st.Tag, $"{name} tag");
            Check.Equal(N, st.GetCount<T>(), $"{name} count");
            Check.Equal((long)N * System.Runtime.CompilerServices.Unsafe.SizeOf<T>(), st.ByteCount, $"{name} bytes");
            Check.Sequence<T>(expected, got.AsSpan(0, N), $"{name} data");
            c.Send(got, 0, N, 0, 2);
            Check.Equal(expected[7], c.Recv<T>(0, 3), $"{name} scalar");
            var span = new T[20];
            c.Recv(span.AsSpan(), 0, 4);
            Check.Sequence<T>(expected.AsSpan(10, 20), span, $"{name} span");
            var window = Make(60, _ => default(T));
            c.Recv(window, 5, 50, 0, 5);
            Check.Sequence<T>(expected.AsSpan(100, 50), window.AsSpan(5, 50), $"{name} offset/count");
            Check.True(window[4].Equals(default) && window[55].Equals(default), $"{name} offset/count guards");
        }
    }

    private static void Types(Communicator c)
    {
        RoundTrip(c, "byte", i => (byte)(i * 7));
        RoundTrip(c, "sbyte", i => (sbyte)(i * 7 - 100));
        RoundTrip(c, "short", i => (short)(i * 977 - 30000));
        RoundTrip(c, "ushort", i => (ushort)(i * 977));
        RoundTrip(c, "int", i => i * 1_000_003 - 500_000_000);
        RoundTrip(c, "uint", i => (uint)i * 4_000_037u);
        RoundTrip(c, "long", i => (long)i * 9_000_000_000_017L - long.MaxValue / 3);
        RoundTrip(c, "ulong", i => (ulong)i * 18_000_000_000_000_001UL);
        RoundTrip(c, "float", i => i * 0.37f - 11.5f);
        RoundTrip(c, "double", i => Math.Sqrt(i) * -1e300);
        RoundTrip(c, "bool", i => i % 3 == 0);
        RoundTrip(c, "char", i => (char)('α' + i));
        RoundTrip(c, "struct", i => new Particle { Id = i, X = i / 3.0, Flag = (byte)(i & 0xFF) });
        RoundTrip(c, "complex-like", i => new Vector2(i, -i));
    }

    private static void ZeroLength(Communicator c)
    {
        if (c.Rank == 0)
        {
            c.Send(Array.Empty<int>(), 1, 9);
            c.Send(new int[5], 2, 0, 1, 9);
            c.Send(ReadOnlySpan<double>.Empty, 1, 9);
            c.ISend(new byte[3], 1, 0, 1, 10).Wait();
        }
        else if (c.Rank == 1)
        {
            var buf = new int[] { 42, 43 };
            for (int i = 0; i < 3; i++)
            {
                Status st = c.Recv(buf, 0, 9);
                Check.Equal(0, st.GetCount<int>(), "zero-length count");
                Check.Equal(0L, st.ByteCount, "zero-length bytes");
            }
            Check.Sequence<int>(new[] { 42, 43 }, buf, "zero-length leaves buffer alone");
            Status s2 = c.IRecv(new byte[0], 0, 10).Wait();
            Check.Equal(0, s2.GetCount<byte>(), "zero-length nonblocking");
        }
    }

    private static void ProcNull(Communicator c)
    {
        var buf = new[] { 1, 2, 3 };
        c.Send(buf, Mpi.ProcNull, 4);
        Status st = c.Recv(buf, Mpi.ProcNull, 4);
        Check.Equal(Mpi.ProcNull, st.Source, "procnull source");
        Check.Equal(Mpi.AnyTag, st.Tag, "procnull tag");
        Check.Equal(0, st.GetCount<int>(), "procnull count");
        Check.Sequence<int>(new[] { 1, 2, 3 }, buf, "procnull leaves buffer alone");
        Check.Equal(0, c.Recv<int>(Mpi.ProcNull, 0), "procnull scalar is default");
        Request r = c.IRecv(buf, Mpi.ProcNull, 1), s = c.ISend(buf, Mpi.ProcNull, 1);
        Status[] sts = Request.WaitAll(r, s);
        Check.Equal(Mpi.ProcNull, sts[0].Source, "procnull nonblocking source");
        Status sr = c.SendRecv(buf, Mpi.ProcNull, 0, new int[3], Mpi.ProcNull, 0);
        Check.Equal(Mpi.ProcNull, sr.Source, "procnull sendrecv");
    }

    private static void AnySourceAnyTag(Communicator c)
    {
        if (c.Rank == 0)
        {
            var seen = new HashSet<int>();
            for (int i = 1; i < c.Size; i++)
            {
                var buf = new int[10];
                Status st = c.Recv(buf, Mpi.AnySource, Mpi.AnyTag);
                Check.True(st.Source >= 1 && st.Source < c.Size, $"any source gave {st.Source}");
                Check.Equal(st.Source * 10, st.Tag, "tag matches sender");
                Check.Equal(st.Source + 1, st.GetCount<int>(), "count matches sender");
                Check.Equal(st.Source, buf[0], "payload matches sender");
                seen.Add(st.Source);
            }
            Check.Equal(c.Size - 1, seen.Count, "every sender seen once");
        }
        else
        {
            c.Send(Enumerable.Repeat(c.Rank, c.Rank + 1).ToArray(), 0, c.Rank * 10);
        }
    }

    private static void Ordering(Communicator c)
    {
        const int N = 500;
        if (c.Rank == 0)
        {
            for (int i = 0; i < N; i++)
                c.Send(new[] { i, i * i }, 1, 3);
            var reqs = new Request[N];
            for (int i = 0; i < N; i++)
                reqs[i] = c.ISend(new long[] { i }, 1, 4);
            Request.WaitAll(reqs);
        }
        else if (c.Rank == 1)
        {
            var buf = new int[2];
            bool ordered = true;
            for (int i = 0; i < N; i++)
            {
                c.Recv(buf, 0, 3);
                ordered &= buf[0] == i && buf[1] == i * i;
            }
            Check.True(ordered, "blocking messages with one tag arrive in order");
            var got = new long[N][];
            var reqs = new Request[N];
            for (int i = 0; i < N; i++)
                reqs[i] = c.IRecv(got[i] = new long[1], 0, 4);
            Request.WaitAll(reqs);
            Check.True(Enumerable.Range(0, N).All(i => got[i][0] == i), "nonblocking messages with one tag match in posting order");
        }
    }

    private static void Probe(Communicator c)
    {
        int[] sizes = { 0, 7, 1000, 100_000 };
        if (c.Rank == 0)
        {
            foreach (int n in sizes)
                c.Send(Make(n, i => i + n), 1, 20 + n % 13);
        }
        else if (c.Rank == 1)
        {
            foreach (int n in sizes)
            {
                Status st = c.Probe(Mpi.AnySource, Mpi.AnyTag);
                Check.Equal(n, st.GetCount<int>(), "probe count");
                Check.Equal(20 + n % 13, st.Tag, "probe tag");
                Check.Equal(0, st.Source, "probe source");
                Check.True(c.IProbe(0, st.Tag, out Status again) && again.GetCount<int>() == n, "iprobe sees the same message");
                Check.True(!c.IProbe(0, 99, out _), "iprobe with another tag sees nothing");
                var exact = new int[st.GetCount<int>()];
                c.Recv(exact, st.Source, st.Tag);
                Check.Sequence<int>(Make(n, i => i + n), exact, "probed message data");
            }
        }
    }

    private static void Nonblocking(Communicator c)
    {
        int[] sizes = { 1, 100, 4096, 70_000, 1 << 20 };
        int peer = c.Rank == 0 ? 1 : 0;
        if (c.Rank > 1)
            return;
        var sends = sizes.Select(n => Make(n, i => (double)(i * (c.Rank + 2)))).ToArray();
        var recvs = sizes.Select(n => new double[n]).ToArray();
        var rr = sizes.Select((n, k) => c.IRecv(recvs[k], peer, k)).ToArray();
        var sr = sizes.Select((n, k) => c.ISend(sends[k], peer, k)).ToArray();
        Status[] sts = Request.WaitAll(rr);
        Request.WaitAll(sr);
        for (int k = 0; k < sizes.Length; k++)
        {
            Check.Equal(sizes[k], sts[k].GetCount<double>(), $"waitall count {k}");
            Check.Sequence<double>(Make(sizes[k], i => (double)(i * (peer + 2))), recvs[k], $"waitall data {k}");
        }

        // WaitAny: every request comes back exactly once, then Undefined.
        var buf = sizes.Select(n => new int[n]).ToArray();
        var any = sizes.Select((n, k) => c.IRecv(buf[k], peer, 100 + k)).ToArray();
        var anySends = sizes.Select((n, k) => c.ISend(Make(n, i => i ^ k), peer, 100 + k)).ToArray();
        var done = new List<int>();
        for (int k = 0; k < sizes.Length; k++)
        {
            int idx = Request.WaitAny(any, out Status st);
            done.Add(idx);
            Check.Equal(100 + idx, st.Tag, "waitany status tag");
            Check.Sequence<int>(Make(sizes[idx], i => i ^ idx), buf[idx], "waitany data");
        }
        Check.Equal(Mpi.Undefined, Request.WaitAny(any, out _), "waitany with all complete");
        Check.Sequence<int>(Enumerable.Range(0, sizes.Length).ToArray(), done.Order().ToArray(), "waitany each once");
        Request.WaitAll(anySends);

        // TestAll polling, Test, IsCompleted.
        var t = new long[3];
        var tr = new[] { c.IRecv(t, 0, 1, peer, 200), c.IRecv(t, 1, 1, peer, 201), c.IRecv(t, 2, 1, peer, 202) };
        // The peer sends only after the barrier, so nothing can have arrived yet.
        Check.True(!Request.TestAll(tr), "testall before any send");
        Check.True(!tr[0].IsCompleted, "not completed before send");
        c.Barrier();
        for (int k = 0; k < 3; k++)
            c.Send(new long[] { 1000 + k }, peer, 200 + k);
        while (!Request.TestAll(tr))
        {
        }
        Check.Sequence<long>(new long[] { 1000, 1001, 1002 }, t, "testall data");
        Check.True(tr.All(r => r.IsCompleted), "completed after testall");
        Check.True(tr.All(r => r == default), "TestAll set the completed entries to the null request, as MPI does");
        Check.True(tr[1].Test(out Status ts) && ts.Tag == Mpi.AnyTag, "a test of the null request: complete, the empty status");
    }

    private static void Cancel(Communicator c)
    {
        var buf = new int[4];
        Request r = c.IRecv(buf, (c.Rank + 1) % c.Size, 777);
        r.Cancel();
        Status st = r.Wait();
        Check.True(st.Cancelled, "unmatched receive is cancelled");
        Check.True(r.IsCompleted, "cancelled request is complete");
        c.Barrier();
        // The rank still communicates normally afterwards.
        int peer = (c.Rank + 1) % c.Size, from = (c.Rank + c.Size - 1) % c.Size;
        Status s = c.SendRecv(new[] { c.Rank }, peer, 777, buf, from, 777);
        Check.Equal(from, buf[0], "message after cancel");
        Check.True(!s.Cancelled, "normal message not cancelled");
    }

    private static void SyncSend(Communicator c)
    {
        // Rank 1 posts its receive only after a delay and tells when; the
        // synchronous send on rank 0 must not return before that moment
        // (both ranks run on one node, so their clocks agree).
        if (c.Rank == 0)
        {
            c.SyncSend(new[] { 5, 6 }, 1, 1);
            double returned = Mpi.Wtime();
            double posted = c.Recv<double>(1, 2);
            Check.True(returned >= posted, $"SyncSend returned at {returned:F6}, before the receive was posted at {posted:F6}");
        }
        else if (c.Rank == 1)
        {
            Thread.Sleep(500);
            var buf = new int[2];
            double posted = Mpi.Wtime();
            c.Recv(buf, 0, 1);
            Check.Sequence<int>(new[] { 5, 6 }, buf, "syncsend data");
            c.Send(posted, 0, 2);
        }
    }

    private static void Truncate(Communicator c)
    {
        if (c.Rank == 0)
        {
            c.Send(Make(10, i => i + 1), 1, 1);
            c.Send(Make(10, i => i + 1), 1, 2);
            c.Send(123456789012L, 1, 3);
            c.Send(new[] { 9 }, 1, 4);
            c.Send(Make(10, i => i + 1), 1, 5);
            c.Send(new[] { 7 }, 1, 6);
        }
        else if (c.Rank == 1)
        {
            var buf = Make(9, _ => -1);
            Check.Throws<MessageTruncatedException>(() => c.Recv(buf, 2, 5, 0, 1), "blocking receive of 10 into 5");
            // MPI leaves the window's content undefined on overflow; outside it nothing may change.
            Check.True(buf[0] == -1 && buf[1] == -1 && buf[7] == -1 && buf[8] == -1, "truncated receive writes only its window");
            var nb = Make(6, _ => -1);
            Request r = c.IRecv(nb, 1, 4, 0, 2);
            Check.Throws<MessageTruncatedException>(() => r.Wait(), "nonblocking receive of 10 into 4");
            Check.True(nb[0] == -1 && nb[5] == -1, "truncated nonblocking receive writes only its window");
            try
            {
                c.Recv<int>(0, 3);
                Check.True(false, "scalar receive of a long into an int must throw");
            }
            catch (MessageTruncatedException e)
            {
                Check.True(e.ErrorClass != 0 && e.Message.Length > 0, $"MPI error class and string ({e.ErrorClass}: {e.Message})");
            }
            Check.Equal(9, c.Recv<int>(0, 4), "communication goes on after truncation");
            // SendRecv to itself (Open MPI 4.1's own MPI_Sendrecv would not report this truncation).
            var mine = Make(4, _ => -1);
            Check.Throws<MessageTruncatedException>(() => c.SendRecv(Make(6, i => i), c.Rank, 7, mine, c.Rank, 7),
                                                    "SendRecv to itself of 6 into 4");
            // In a set: MPI_Waitall reports the truncation in that receive's status (the core
            // leaves its one-pass path for the general one); the set completes, then it throws.
            var small = Make(6, _ => -1);
            var other = new int[1];
            Request[] set = [c.IRecv(small, 1, 4, 0, 5), c.IRecv(other, 0, 6)];
            Check.Throws<MessageTruncatedException>(() => Request.WaitAll(set), "a truncated receive in a WaitAll set");
            Check.True(set[0].IsCompleted && set[1].IsCompleted, "the set completed though one receive was truncated");
            Check.Equal(7, other[0], "the set's other receive");
            Check.True(small[0] == -1 && small[5] == -1, "the truncated receive of the set writes only its window");
            Check.True(set.All(r => r == default), "the completed set's entries are the null request");
            Check.Equal(Mpi.AnyTag, Request.WaitAll(set)[1].Tag, "a completed set waited again: the null requests' empty statuses");
        }
    }

    private static void SendRecvRing(Communicator c)
    {
        int right = (c.Rank + 1) % c.Size, left = (c.Rank + c.Size - 1) % c.Size;
        var got = new long[1000];
        Status st = c.SendRecv(Make(1000, i => (long)c.Rank * 1000 + i), right, 5, got, left, 5);
        Check.Equal(left, st.Source, "ring source");
        Check.Sequence<long>(Make(1000, i => (long)left * 1000 + i), got, "ring data");
    }

    private static void DupSplit(Communicator c)
    {
        using Communicator dup = c.Dup();
        Check.Equal(c.Size, dup.Size, "dup size");
        Check.Equal(c.Rank, dup.Rank, "dup rank");
        // Same tag on two communicators: contexts keep the messages apart.
        if (c.Rank == 0)
        {
            dup.Send(new[] { 2 }, 1, 0);
            c.Send(new[] { 1 }, 1, 0);
        }
        else if (c.Rank == 1)
        {
            Check.Equal(1, c.Recv<int>(0, 0), "world message on world");
            Check.Equal(2, dup.Recv<int>(0, 0), "dup message on dup");
        }
        using Communicator? half = c.Split(c.Rank % 2, -c.Rank);
        Check.True(half is not null, "split gives a communicator");
        int expectedSize = (c.Size + 1 - c.Rank % 2) / 2;
        Check.Equal(expectedSize, half!.Size, "split size");
        // key = -rank reverses the order inside each part.
        Check.Equal(expectedSize - 1 - c.Rank / 2, half.Rank, "split rank ordered by key");
        Communicator? none = c.Split(c.Rank == 0 ? Mpi.Undefined : 1, 0);
        Check.True((c.Rank == 0) == (none is null), "Undefined color gives null");
        none?.Dispose();
        dup.Dispose();
        Check.Throws<ObjectDisposedException>(() => dup.Send(new[] { 1 }, 0, 0), "send on a disposed communicator");
        Check.Throws<ObjectDisposedException>(() => _ = dup.Rank, "rank of a disposed communicator");
        dup.Dispose(); // twice is harmless
        c.Dispose();   // world is never freed
        Check.Equal(c.Size, Communicator.World.Size, "world survives Dispose");
    }

    // ISsend completes only once the receiver has started the receive; misuse is refused before MPI.
    private static void NonblockingSyncSend(Communicator c)
    {
        int r = c.Rank;
        // ISsend completes only once the receiver has started the receive: rank 1 posts it
        // only after rank 0's next message, so the first test must find it pending.
        if (r == 0)
        {
            Request s = c.ISsend(new[] { 5, 6, 7 }, 1, 10);
            Check.True(!s.Test(out _), "a synchronous send is pending until the receive starts");
            c.Send(1, 1, 11);
            s.Wait();
            Check.True(s.IsCompleted, "the synchronous send completed");
            c.ISsend(Make(10, i => 100 + i), 2, 3, 1, 12).Wait();
            Check.Throws<ArgumentException>(() => c.ISsend(new int[4], 2, 3, 1, 12), "ISsend past the end of the array");
            Check.Throws<ArgumentException>(() => c.ISsend(new int[4], 1, -5), "ISsend with a negative tag");
        }
        else
        {
            Check.Equal(1, c.Recv<int>(0, 11), "the go-ahead");
            var got = new int[3];
            c.Recv(got, 0, 10);
            Check.Sequence<int>([5, 6, 7], got, "the synchronous send's data");
            c.Recv(got, 0, 12);
            Check.Sequence<int>([102, 103, 104], got, "the synchronous send of a slice");
        }
    }

    // SendRecvReplace: the array leaves and the peer's arrives in its place; a longer message is
    // truncated inside MPI, misuse is refused before it.
    private static void SendRecvReplace(Communicator c)
    {
        int r = c.Rank, peer = 1 - r;
        int[] mine = Make(5, i => 10 * r + i);
        Status rs = c.SendRecvReplace(mine, peer, 30, peer, 30);
        Check.Sequence<int>(Make(5, i => 10 * peer + i), mine, "SendRecvReplace exchanged the arrays");
        Check.Equal(peer, rs.Source, "SendRecvReplace status source");
        // A shorter incoming message fills the front; a longer one is truncated inside MPI.
        if (r == 0)
        {
            int[] six = Make(6, i => -i);
            Status st = c.SendRecvReplace(six, 1, 31, 1, 31);
            Check.Equal(3, st.GetCount<int>(), "a shorter message replaced the front");
            Check.Sequence<int>([70, 71, 72, -3, -4, -5], six, "front replaced, rest kept");
            Check.Throws<MessageTruncatedException>(() => c.SendRecvReplace(new int[6], 1, 32, 1, 32), "a longer message is truncated");
        }
        else
        {
            var got = new int[6];
            c.SendRecv(new[] { 70, 71, 72 }, 0, 31, got, 0, 31);
            Check.Sequence<int>([0, -1, -2, -3, -4, -5], got, "rank 0's six before the replace");
            c.SendRecv(new int[9], 0, 32, got, 0, 32);
        }
        int[] kept = [1, 2];
        Check.Equal(Mpi.ProcNull, c.SendRecvReplace(kept, Mpi.ProcNull, 0, Mpi.ProcNull, 0).Source, "SendRecvReplace with ProcNull");
        Check.Sequence<int>([1, 2], kept, "ProcNull leaves the array");
        Check.Throws<ArgumentException>(() => c.SendRecvReplace(kept, peer, -1, peer, 0), "SendRecvReplace with a negative tag");
        Check.Throws<ArgumentException>(() => c.SendRecvReplace(kept, 5, 0, peer, 0), "SendRecvReplace to a rank outside");
        Check.Throws<ArgumentNullException>(() => c.SendRecvReplace<int>(null!, peer, 0, peer, 0), "SendRecvReplace of null");
    }

    // Matched messages received into typed buffers: one value, blocking, nonblocking, into a slice, once.
    private static void MatchedIntoTypedBuffers(Communicator c)
    {
        int r = c.Rank;
        if (r == 0)
        {
            c.Send(3.25, 1, 40);
            c.Send(Make(100, i => i * i), 1, 41);
            c.Send(Make(8, i => i), 1, 42);
            c.Send((short)9, 1, 43);
            c.Send(Make(5, i => -i), 1, 44);
        }
        else
        {
            Message m = c.MProbe(0, 40);
            Check.Equal(1, m.Status.GetCount<double>(), "the probed size");
            Check.Equal(3.25, m.Recv<double>(), "one value of a matched message");
            Check.True(m.IsReceived, "received");
            Check.Throws<InvalidOperationException>(() => m.Recv<double>(), "a matched message received twice");
            Check.Throws<InvalidOperationException>(() => m.IRecv(new double[1]), "a matched message received twice (nonblocking)");

            Message big = c.MProbe(0, 41);
            var arr = new int[big.Status.GetCount<int>()];
            Request q = big.IRecv(arr);
            CompactAll(); // the array stays where MPI writes while the receive is in flight
            Status st = q.Wait();
            Check.Equal(100, st.GetCount<int>(), "nonblocking matched receive count");
            Check.Sequence<int>(Make(100, i => i * i), arr, "nonblocking matched receive data");

            Request t = c.MProbe(0, 42).IRecv(new int[4]);
            Check.Throws<MessageTruncatedException>(() => t.Wait(), "a matched message longer than the array");
            Check.Throws<MpiException>(() => c.MProbe(0, 43).Recv<long>(), "a value longer than the message");
            Message slice = c.MProbe(0, 44);
            Check.Throws<ArgumentException>(() => slice.IRecv(new int[5], 3, 4), "a slice past the end");
            Check.True(!slice.IsReceived, "a refused receive leaves the message");
            var wide = new int[9];
            slice.IRecv(wide, 2, 6).Wait();
            Check.Sequence<int>([0, 0, 0, -1, -2, -3, -4, 0, 0], wide, "a matched message into a slice");
        }
        Status nul = c.MProbe(Mpi.ProcNull, 0).IRecv(new int[2]).Wait();
        Check.Equal(Mpi.ProcNull, nul.Source, "a matched message from ProcNull");
        c.Barrier();
    }
}
