using System.MP;
using System.Numerics;

namespace Scenarios;

/// <summary>
/// The rest of point-to-point and the buffer collectives: ISsend,
/// WaitSome/TestSome, SendRecvReplace, typed receives of matched messages (blocking, one value,
/// nonblocking), the nonblocking scans, reduce-scatters and v-collectives, ReduceScatter with
/// uneven counts, Exscan of arrays, the scalar collectives, Sum/Product/Min/Max of user structs
/// through their operators, and the v-collectives on an intercommunicator.  Every result is
/// checked against what the ranks' formulas give; misuse is refused before MPI, and truncation
/// is provoked inside MPI.  PointToPoint and Collectives run on 2 ranks (one job), Uneven on 3.
/// </summary>
internal static class Remainder
{
    internal static void Register(Dictionary<Scenario, Action<Communicator>> s)
    {
        // One job for both halves on two ranks: each job costs seconds of start-up.
        s[Scenario.RemainderTwoRanks] = c =>
        {
            PointToPoint(c);
            Collectives(c);
        };
        s[Scenario.RemainderUneven] = Uneven;
    }

    private static void CompactAll() => GC.Collect(2, GCCollectionMode.Forced, blocking: true, compacting: true);

    private static int[] Prefix(int[] counts, int start = 0)
    {
        var displs = new int[counts.Length];
        for (int i = 0, at = start; i < counts.Length; at += counts[i], i++)
            displs[i] = at;
        return displs;
    }

    private static int[] Fill(int n, Func<int, int> value) => Enumerable.Range(0, n).Select(value).ToArray();

    // ---- point-to-point ----

    private static void PointToPoint(Communicator c)
    {
        int r = c.Rank, peer = 1 - r;

        // ISsend completes only once the receiver has started the receive: rank 1 posts it
        // only after rank 0's next message, so the first test must find it pending.
        if (r == 0)
        {
            Request s = c.ISsend(new[] { 5, 6, 7 }, 1, 10);
            Check.True(!s.Test(out _), "a synchronous send is pending until the receive starts");
            c.Send(1, 1, 11);
            s.Wait();
            Check.True(s.IsCompleted, "the synchronous send completed");
            c.ISsend(Fill(10, i => 100 + i), 2, 3, 1, 12).Wait();
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
            Check.Throws<ArgumentNullException>(() => Request.TestSome([pending, null!], out _), "TestSome with a null entry");
            c.Send(25, 0, 26);
            Check.Equal(0, Request.WaitSome([pending], out Status[] ps)[0], "the pending one completes");
            Check.Equal(0, ps[0].Source, "its status");
        }
        if (r == 0)
        {
            c.Recv<int>(1, 26);
            c.Send(new[] { 1 }, 1, 25);
        }

        // SendRecvReplace: the array leaves and the peer's arrives in its place.
        int[] mine = Fill(5, i => 10 * r + i);
        Status rs = c.SendRecvReplace(mine, peer, 30, peer, 30);
        Check.Sequence<int>(Fill(5, i => 10 * peer + i), mine, "SendRecvReplace exchanged the arrays");
        Check.Equal(peer, rs.Source, "SendRecvReplace status source");
        // A shorter incoming message fills the front; a longer one is truncated inside MPI.
        if (r == 0)
        {
            int[] six = Fill(6, i => -i);
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

        // Matched messages into typed buffers.
        if (r == 0)
        {
            c.Send(3.25, 1, 40);
            c.Send(Fill(100, i => i * i), 1, 41);
            c.Send(Fill(8, i => i), 1, 42);
            c.Send((short)9, 1, 43);
            c.Send(Fill(5, i => -i), 1, 44);
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
            Check.Sequence<int>(Fill(100, i => i * i), arr, "nonblocking matched receive data");

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

    // ---- collectives ----

    /// <summary>A user struct with generic-math operators: Sum, Product, Min and Max apply to it.</summary>
    internal readonly record struct Vec(long X, long Y) :
        IAdditionOperators<Vec, Vec, Vec>, IMultiplyOperators<Vec, Vec, Vec>, IComparisonOperators<Vec, Vec, bool>
    {
        public static Vec operator +(Vec a, Vec b) => new(a.X + b.X, a.Y + b.Y);
        public static Vec operator *(Vec a, Vec b) => new(a.X * b.X, a.Y * b.Y);
        private static int Compare(Vec a, Vec b) => a.X != b.X ? a.X.CompareTo(b.X) : a.Y.CompareTo(b.Y);
        public static bool operator <(Vec a, Vec b) => Compare(a, b) < 0;
        public static bool operator >(Vec a, Vec b) => Compare(a, b) > 0;
        public static bool operator <=(Vec a, Vec b) => Compare(a, b) <= 0;
        public static bool operator >=(Vec a, Vec b) => Compare(a, b) >= 0;
    }

    /// <summary>A 2x2 matrix: its product is not commutative, so the rank order shows.</summary>
    internal readonly record struct Mat(long A, long B, long C, long D) : IMultiplyOperators<Mat, Mat, Mat>
    {
        public static Mat operator *(Mat x, Mat y) =>
            new(x.A * y.A + x.B * y.C, x.A * y.B + x.B * y.D, x.C * y.A + x.D * y.C, x.C * y.B + x.D * y.D);
        internal static Mat Of(int rank) => rank % 2 == 0 ? new(1, rank + 1, 0, 1) : new(1, 0, rank + 1, 1);
    }

    internal readonly record struct Plain(int A);

    private static void Collectives(Communicator c)
    {
        int r = c.Rank, p = c.Size;
        int Tri(int n) => n * (n + 1) / 2; // 1 + ... + n

        // Nonblocking scans and Exscan of arrays.
        var scan = new int[2];
        c.IScan(new[] { r + 1, 10 * (r + 1) }, scan, Op.Sum).Wait();
        Check.Sequence<int>([Tri(r + 1), 10 * Tri(r + 1)], scan, "IScan");
        var ex = new[] { 99, 99 };
        c.IExscan(new[] { r + 1, 10 * (r + 1) }, ex, Op.Sum).Wait();
        if (r > 0)
            Check.Sequence<int>([Tri(r), 10 * Tri(r)], ex, "IExscan");
        ex = [99, 99, 99];
        c.Exscan(new[] { r + 1, 2, r }, ex, Op.Max);
        Check.Sequence<int>(r == 0 ? [0, 0, 0] : [r, 2, r - 1], ex, "Exscan of arrays (rank 0 cleared)");

        // Reduce-scatter, equal blocks and uneven counts, blocking and not.
        var block = new int[2];
        c.IReduceScatterBlock(Fill(2 * p, j => r * 100 + j), block, Op.Sum).Wait();
        Check.Sequence<int>(Fill(2, i => 100 * Tri(p - 1) + p * (2 * r + i)), block, "IReduceScatterBlock");
        int[] counts = Fill(p, k => p - k + (k == 0 ? 1 : 0)); // 3, 1 on two ranks
        int[] offsets = Prefix(counts);
        int total = counts.Sum();
        long[] send = Array.ConvertAll(Fill(total + 2, j => (r + 1) * (j + 1)), v => (long)v);
        var part = new long[counts[r] + 1];
        part[^1] = -7;
        c.ReduceScatter(send, part, counts, Op.Sum);
        Check.Sequence<long>(Array.ConvertAll(Fill(counts[r], i => (offsets[r] + i + 1) * Tri(p)), v => (long)v),
                             part.AsSpan(0, counts[r]), "ReduceScatter with uneven counts");
        Check.Equal(-7L, part[^1], "ReduceScatter wrote only this rank's block");
        c.ReduceScatter(send, part, counts, Op.Max);
        Check.Sequence<long>(Array.ConvertAll(Fill(counts[r], i => (offsets[r] + i + 1) * p), v => (long)v),
                             part.AsSpan(0, counts[r]), "ReduceScatter Max");
        int[] moving = (int[])counts.Clone();
        Request rq = c.IReduceScatter(send, part, moving, Op.Sum);
        Array.Fill(moving, 1000); // the counts were copied: changing them now changes nothing
        CompactAll();
        rq.Wait();
        Check.Sequence<long>(Array.ConvertAll(Fill(counts[r], i => (offsets[r] + i + 1) * Tri(p)), v => (long)v),
                             part.AsSpan(0, counts[r]), "IReduceScatter with its counts overwritten after posting");

        // Nonblocking v-collectives, their counts and displacements overwritten and the heap
        // compacted while they are in flight.
        {
            int[] gc = Fill(p, k => k + 1), gd = Fill(p, k => 1 + Fill(p, j => j + 1).Skip(k + 1).Sum());
            int glen = gc.Sum() + 1;
            int[]? grecv = r == 0 ? Fill(glen, _ => -1) : null;
            Request g = c.IGatherv(Fill(r + 1, i => 1000 * r + i), grecv, (int[])gc.Clone(), (int[])gd.Clone(), 0);
            CompactAll();
            g.Wait();
            if (r == 0)
            {
                var expect = new int[glen];
                expect[0] = -1;
                for (int k = 0; k < p; k++)
                    for (int i = 0; i < gc[k]; i++)
                        expect[gd[k] + i] = 1000 * k + i;
                Check.Sequence<int>(expect, grecv, "IGatherv into reversed blocks after a gap");
            }

            int[] sc = Fill(p, k => 2 * k + 1), sd = Prefix(sc);
            int root = p - 1;
            var srecv = new int[sc[r] + 1];
            int[] scMoving = (int[])sc.Clone(), sdMoving = (int[])sd.Clone();
            Request s = c.IScatterv(r == root ? Fill(sc.Sum(), j => j * 7) : null, scMoving, sdMoving, srecv, root);
            Array.Fill(scMoving, 0);
            Array.Fill(sdMoving, 0);
            CompactAll();
            s.Wait();
            Check.Sequence<int>(Fill(sc[r], i => (sd[r] + i) * 7), srecv.AsSpan(0, sc[r]), "IScatterv");

            int[] ac = Fill(p, k => k + 2), ad = Prefix(ac);
            var arecv = new int[ac.Sum()];
            c.IAllgatherv(Fill(r + 2, i => 10 * r + i), arecv, ac, ad).Wait();
            Check.Sequence<int>(Enumerable.Range(0, p).SelectMany(k => Fill(k + 2, i => 10 * k + i)).ToArray(), arecv, "IAllgatherv");

            int[] tsc = Fill(p, k => r + k + 1), trc = Fill(p, k => k + r + 1);
            int[] tsd = Prefix(tsc), trd = Prefix(trc);
            int[] tsend = Enumerable.Range(0, p).SelectMany(k => Fill(tsc[k], i => 1000 * r + 100 * k + i)).ToArray();
            var trecv = new int[trc.Sum()];
            Request t = c.IAlltoallv(tsend, tsc, tsd, trecv, trc, trd);
            CompactAll();
            t.Wait();
            Check.Sequence<int>(Enumerable.Range(0, p).SelectMany(k => Fill(trc[k], i => 1000 * k + 100 * r + i)).ToArray(), trecv, "IAlltoallv");
            // The blocking forms agree.
            var brecv = new int[trc.Sum()];
            c.Alltoallv(tsend, tsc, tsd, brecv, trc, trd);
            Check.Sequence<int>(trecv, brecv, "Alltoallv agrees with IAlltoallv");
        }

        // Scalar forms.
        double bv = r == 1 ? 42.5 : 0;
        c.Bcast(ref bv, 1);
        Check.Equal(42.5, bv, "Bcast(ref)");
        Check.Sequence<long>(Array.ConvertAll(Fill(p, k => 3 * k), v => (long)v), c.Allgather(3L * r), "Allgather of one value");
        short[]? gathered = c.Gather((short)(r + 5), 0);
        if (r == 0)
            Check.Sequence<short>(Array.ConvertAll(Fill(p, k => k + 5), v => (short)v), gathered!, "Gather of one value");
        else
            Check.True(gathered is null, "Gather of one value is null off the root");
        Check.Equal(10 * (r + 1), c.Scatter(r == 0 ? Fill(p, k => 10 * (k + 1)) : null, 0), "Scatter of one value each");
        if (r == 0)
            Check.Throws<ArgumentException>(() => c.Scatter(new int[p - 1], 0), "Scatter of too few values at the root");

        // Sum, Product, Min, Max of user structs through their operators.
        Check.Equal(new Vec(Tri(p), -Tri(p - 1)), c.Allreduce(new Vec(r + 1, -r), Op.Sum), "Sum of a user struct");
        Check.Equal(new Vec(Tri(r + 1), r + 1), c.Scan(new Vec(r + 1, 1), Op.Sum), "Scan Sum of a user struct");
        long Prod(Func<int, long> f) => Enumerable.Range(0, p).Aggregate(1L, (acc, k) => acc * f(k));
        var vs = new Vec[3];
        c.Allreduce(new[] { new Vec(r, 5), new Vec(1, -r - 1), new Vec(r + 2, r + 1) }, vs, Op.Product);
        Check.Sequence<Vec>([new Vec(Prod(k => k), Prod(_ => 5)), new Vec(1, Prod(k => -k - 1)), new Vec(Prod(k => k + 2), Prod(k => k + 1))],
                            vs, "Product of user structs");
        var mn = new Vec[2];
        c.Allreduce(new[] { new Vec(1, r), new Vec(r, -r) }, mn, Op.Min);
        Check.Sequence<Vec>([new Vec(1, 0), new Vec(0, 0)], mn, "Min of user structs (by X, then Y)");
        Check.Equal(new Vec(p - 1, -(p - 1)), c.Allreduce(new Vec(r, -r), Op.Max), "Max of a user struct");
        Mat expected = Enumerable.Range(0, p).Select(Mat.Of).Aggregate((a, b) => a * b);
        Check.Equal(r == 0 ? expected : default, c.Reduce(Mat.Of(r), Op.Product, 0), "Product of matrices in rank order");
        var vblock = new Vec[1];
        c.ReduceScatterBlock(Fill(p, j => j).Select(j => new Vec(j, r)).ToArray(), vblock, Op.Sum);
        Check.Equal(new Vec(p * r, Tri(p - 1)), vblock[0], "ReduceScatterBlock Sum of a user struct");
        Check.Throws<ArgumentException>(() => c.IAllreduce(new Vec[1], new Vec[1], Op.Sum), "a nonblocking Sum of a user struct");
        Check.Throws<ArgumentException>(() => c.Allreduce(new Plain(), Op.Sum), "Sum of a struct without operators");
        Check.Throws<ArgumentException>(() => c.Allreduce(new Vec(), Op.BitwiseAnd), "a bitwise op on a user struct");

        // Misuse of the uneven forms, refused on every rank before MPI.
        long[] lsend = new long[total];
        Check.Throws<ArgumentNullException>(() => c.ReduceScatter(lsend, part, null!, Op.Sum), "ReduceScatter without counts");
        Check.Throws<ArgumentException>(() => c.ReduceScatter(lsend, part, new int[p + 1], Op.Sum), "ReduceScatter counts of the wrong length");
        Check.Throws<ArgumentException>(() => c.ReduceScatter(lsend, part, Fill(p, k => k == 0 ? -1 : 1), Op.Sum), "ReduceScatter with a negative count");
        Check.Throws<ArgumentException>(() => c.ReduceScatter(lsend, new long[total + 1], Fill(p, k => k == p - 1 ? total + 1 : 0), Op.Sum), "ReduceScatter counts beyond the send array");
        Check.Throws<ArgumentException>(() => c.IReduceScatter(lsend, new long[0], Fill(p, _ => 1), Op.Sum), "IReduceScatter into a short array");
        Check.Throws<ArgumentException>(() => c.IAllgatherv(new int[r + 2], new int[3], AgCounts(), Prefix(AgCounts())), "IAllgatherv blocks past the end");
        Check.Throws<ArgumentException>(() => c.IAlltoallv(new int[p], Fill(p, _ => 1), Prefix(Fill(p, _ => 1)), new int[p], Fill(p, _ => 1), new int[p]),
                                        "IAlltoallv receive blocks that overlap");
        Check.Throws<ArgumentException>(() => c.IAllgatherv(new int[r + 2], new int[100], AgCounts(), Fill(p, k => k == 0 ? -1 : 0)), "IAllgatherv with a negative displacement");
        Check.Throws<ArgumentException>(() => c.IAllgatherv(new int[1], new int[100], AgCounts(), Prefix(AgCounts())), "IAllgatherv whose own block has another length");
        if (r == 0)
            Check.Throws<ArgumentException>(() => c.IGatherv(new int[1], new int[1], Fill(p, _ => 1), Fill(p, k => k), 0), "IGatherv at the root past the end");
        // The communicator goes on.
        Check.Equal(Tri(p - 1), c.Allreduce(r, Op.Sum), "an allreduce after the refusals");
        c.Barrier();

        int[] AgCounts() => Fill(p, k => k + 2); // as the IAllgatherv above
    }

    // ---- three ranks: uneven reduce-scatter and the v-collectives across an intercommunicator ----

    private static void Uneven(Communicator c)
    {
        int r = c.Rank, p = c.Size;
        int[] counts = [2, 0, 3];
        int[] offsets = Prefix(counts);
        double[] send = Fill(5, j => (r + 1) * (j + 1)).Select(v => v / 2.0).ToArray();
        var part = new double[counts[r]];
        c.ReduceScatter(send, part, counts, Op.Sum);
        Check.Sequence<double>(Fill(counts[r], i => offsets[r] + i + 1).Select(v => v * 6 / 2.0).ToArray(), part, "ReduceScatter 2, 0, 3");
        int[] counts2 = [1, 4, 0];
        int[] offsets2 = Prefix(counts2);
        var part2 = new double[counts2[r]];
        c.IReduceScatter(send, part2, counts2, Op.Max).Wait();
        Check.Sequence<double>(Fill(counts2[r], i => offsets2[r] + i + 1).Select(v => v * 3 / 2.0).ToArray(), part2, "IReduceScatter 1, 4, 0 Max");

        // Groups A = {0} and B = {1, 2}.
        int color = r == 0 ? 0 : 1;
        using Communicator local = c.Split(color, r)!;
        using Intercommunicator inter = Intercommunicator.Create(local, 0, c, color == 0 ? 1 : 0, 61);
        int lr = local.Rank;
        bool a = color == 0;

        // Gatherv at A's rank: B's ranks send lr + 2 elements, into reversed blocks.
        if (a)
        {
            var got = Fill(6, _ => -1);
            inter.Gatherv<int>(null!, got, [2, 3], [4, 0], Mpi.Root);
            Check.Sequence<int>([100, 101, 102, -1, 0, 1], got, "intercommunicator Gatherv at A");
        }
        else
        {
            inter.Gatherv(Fill(lr + 2, i => 100 * lr + i), null, null!, null!, 0);
        }
        // Gatherv at B's rank 1: A's rank sends 4 elements; B's rank 0 passes ProcNull.
        if (a)
        {
            inter.Gatherv(Fill(4, i => 7 * i), null, null!, null!, 1);
        }
        else
        {
            var got = new int[4];
            inter.Gatherv<int>(null!, lr == 1 ? got : null, [4], [0], lr == 1 ? Mpi.Root : Mpi.ProcNull);
            if (lr == 1)
                Check.Sequence<int>([0, 7, 14, 21], got, "intercommunicator Gatherv at B");
        }
        // Scatterv from A: B's rank lr gets counts[lr] elements.
        int[] sc = [1, 3], sd = [3, 0];
        if (a)
        {
            var unused = new int[0];
            inter.Scatterv(Fill(4, j => 50 + j), sc, sd, unused, Mpi.Root);
        }
        else
        {
            var got = new int[3];
            inter.Scatterv(null, sc, null!, got, 0);
            Check.Sequence<int>(lr == 0 ? [53] : [50, 51, 52], got.AsSpan(0, sc[lr]), "intercommunicator Scatterv");
        }
        // Allgatherv: A gets B's blocks (2 and 1 elements), B gets A's 3.
        {
            int[] send3 = a ? [9, 8, 7] : Fill(2 - lr, i => 20 * lr + i);
            int[] cnt = a ? [2, 1] : [3];
            var got = new int[3];
            inter.Allgatherv(send3, got, cnt, Prefix(cnt));
            Check.Sequence<int>(a ? [0, 1, 20] : [9, 8, 7], got, "intercommunicator Allgatherv");
            var got2 = new int[4];
            inter.IAllgatherv(send3, got2, cnt, Prefix(cnt, 1)).Wait();
            Check.Sequence<int>(a ? [0, 0, 1, 20] : [0, 9, 8, 7], got2, "intercommunicator IAllgatherv");
        }
        // Alltoallv: A sends lr + 1 elements to B's rank lr; each B rank sends 2 to A.
        {
            int[] scnt = a ? [1, 2] : [2], rcnt = a ? [2, 2] : [lr + 1];
            int[] tsend = a ? [10, 11, 12] : [30 + lr, 40 + lr];
            var got = new int[rcnt.Sum()];
            inter.Alltoallv(tsend, scnt, Prefix(scnt), got, rcnt, Prefix(rcnt));
            Check.Sequence<int>(a ? [30, 40, 31, 41] : lr == 0 ? [10] : [11, 12], got, "intercommunicator Alltoallv");
        }
        // Scalar forms across the groups.
        Check.Sequence<int>(a ? [1, 2] : [0], inter.Allgather(r), "intercommunicator Allgather of one value");

        // Refused before MPI: ReduceScatter counts not of the local group (ObjectCollectives.cs runs
        // it across an intercommunicator); counts of the wrong length at A's root (only it calls).
        Check.Throws<ArgumentException>(() => inter.ReduceScatter(new int[3], new int[3], new int[inter.Size + 1], Op.Sum), "ReduceScatter counts not of the local group");
        if (a)
            Check.Throws<ArgumentException>(() => inter.Gatherv<int>(null!, new int[9], [1, 1, 1], [0, 1, 2], Mpi.Root), "counts per local rank instead of remote");

        // Inside MPI: B's rank 0 sends 5 elements where A's root expects 2.
        if (a)
            Check.Throws<MessageTruncatedException>(() => inter.Gatherv<int>(null!, new int[5], [2, 3], [0, 2], Mpi.Root), "a remote block longer than its count");
        else
            inter.Gatherv(new int[lr == 0 ? 5 : 3], null, null!, null!, 0);
        // The intercommunicator goes on.
        if (a)
        {
            var got = new int[5];
            inter.Gatherv<int>(null!, got, [2, 3], [0, 2], Mpi.Root);
            Check.Sequence<int>([1, 1, 2, 2, 2], got, "a Gatherv after the failure");
        }
        else
        {
            inter.Gatherv(Fill(lr + 2, _ => lr + 1), null, null!, null!, 0);
        }
        c.Barrier();
    }
}
