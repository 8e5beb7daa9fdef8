using System.MP;

namespace Scenarios;

/// <summary>A 2x2 integer matrix: its product is associative and not commutative.</summary>
internal struct Mat2 : IEquatable<Mat2>
{
    public long A, B, C, D;

    public static Mat2 Of(int r) => new() { A = 1, B = r + 1, C = 0, D = 1 + (r % 2) };
    public static Mat2 operator *(Mat2 x, Mat2 y) => new()
    {
        A = x.A * y.A + x.B * y.C, B = x.A * y.B + x.B * y.D,
        C = x.C * y.A + x.D * y.C, D = x.C * y.B + x.D * y.D,
    };
    public bool Equals(Mat2 o) => A == o.A && B == o.B && C == o.C && D == o.D;
    public override bool Equals(object? obj) => obj is Mat2 m && Equals(m);
    public override int GetHashCode() => HashCode.Combine(A, B, C, D);
    public override string ToString() => $"[{A} {B}; {C} {D}]";
}

/// <summary>Buffer collectives: every scenario checks the values against a serial computation.</summary>
internal static class Collectives
{
    internal static void Register(Dictionary<Scenario, Action<Communicator>> s)
    {
        s[Scenario.CollReduce] = Reductions;
        s[Scenario.CollMove] = DataMovement;
        s[Scenario.CollVector] = VectorVariants;
        s[Scenario.CollUserop] = UserOps;
        s[Scenario.CollNonblocking] = Nonblocking;
        s[Scenario.CollBadArgs] = BadArguments;
    }

    private static T[] Make<T>(int n, Func<int, T> f)
    {
        var a = new T[n];
        for (int i = 0; i < n; i++)
            a[i] = f(i);
        return a;
    }

    private static void Reductions(Communicator c)
    {
        int p = c.Size, r = c.Rank;
        c.Barrier();
        for (int root = 0; root < p; root++)
        {
            var data = root == r ? Make(100, i => i * 3 + root) : new int[100];
            c.Bcast(data, root);
            Check.Sequence<int>(Make(100, i => i * 3 + root), data, $"bcast from {root}");
            Check.Equal(root * 1.5, c.Bcast(r == root ? root * 1.5 : -1.0, root), $"scalar bcast from {root}");

            var sum = new long[50];
            c.Reduce(Make(50, i => (long)i * (r + 1)), r == root ? sum : null, Op.Sum, root);
            if (r == root)
                Check.Sequence<long>(Make(50, i => (long)i * p * (p + 1) / 2), sum, $"reduce sum to {root}");
            Check.Equal(r == root ? p - 1 : 0, c.Reduce(r, Op.Max, root), $"scalar reduce max to {root}");
        }
        // Allreduce on every numeric type and op family.
        Check.Equal(p * (p - 1) / 2, c.Allreduce(r, Op.Sum), "int sum");
        Check.Equal((long)p * (p - 1) / 2 + (1L << 40) * p, c.Allreduce((long)r + (1L << 40), Op.Sum), "long sum");
        Check.Equal((ulong)p, c.Allreduce(1UL, Op.Sum), "ulong sum");
        Check.Equal((byte)p, c.Allreduce((byte)1, Op.Sum), "byte sum");
        Check.Equal((short)-(p - 1), c.Allreduce((short)-r, Op.Min), "short min");
        Check.Equal((ushort)(p - 1), c.Allreduce((ushort)r, Op.Max), "ushort max");
        Check.Equal((sbyte)(p - 1), c.Allreduce((sbyte)r, Op.Max), "sbyte max");
        Check.Equal(p * 0.25f, c.Allreduce(0.25f, Op.Sum), "float sum");
        Check.Equal(Math.Pow(2, p), c.Allreduce(2.0, Op.Product), "double product");
        Check.Equal(p == 1, c.Allreduce(r == 0, Op.LogicalAnd), "bool and");
        Check.Equal(true, c.Allreduce(r == 0, Op.LogicalOr), "bool or");
        Check.Equal(p % 2 == 1, c.Allreduce(true, Op.LogicalXor), "bool xor");
        uint bits = 0;
        for (int i = 0; i < p; i++)
            bits |= 1u << i;
        Check.Equal(bits, c.Allreduce(1u << r, Op.BitwiseOr), "bitwise or");
        Check.Equal(0u, c.Allreduce(p == 1 ? 0u : 1u << r, Op.BitwiseAnd), "bitwise and");
        Check.Equal(bits, c.Allreduce(1u << r, Op.BitwiseXor), "bitwise xor");
        var arr = new double[7];
        c.Allreduce(Make(7, i => i + r * 0.5), arr, Op.Sum);
        Check.Sequence<double>(Make(7, i => (double)i * p + 0.5 * p * (p - 1) / 2), arr, "array allreduce");
        // MinLoc / MaxLoc carry the rank of the extreme value.
        var vmax = c.Allreduce(new ValueIndex<double>(Math.Abs(r - 1.2), r), Op.MaxLoc);
        int expectMax = Enumerable.Range(0, p).OrderByDescending(i => Math.Abs(i - 1.2)).ThenBy(i => i).First();
        Check.Equal(expectMax, vmax.Index, "maxloc index");
        var vmin = c.Allreduce(new ValueIndex<int>(5, r), Op.MinLoc);
        Check.Equal(new ValueIndex<int>(5, 0), vmin, "minloc ties keep the smallest index");
        Check.Equal(new ValueIndex<float>(-(p - 1), p - 1), c.Allreduce(new ValueIndex<float>(-r, r), Op.MinLoc), "float minloc");
        Check.Equal(new ValueIndex<long>(p - 1, p - 1), c.Allreduce(new ValueIndex<long>(r, r), Op.MaxLoc), "long maxloc");
        Check.Equal(new ValueIndex<short>(0, 0), c.Allreduce(new ValueIndex<short>((short)r, r), Op.MinLoc), "short minloc");
        // Scans.
        Check.Equal((r + 1) * (r + 2) / 2, c.Scan(r + 1, Op.Sum), "scan");
        Check.Equal(r * (r + 1) / 2, c.Exscan(r + 1, Op.Sum), "exscan (rank 0 gets default)");
        var scanArr = new int[3];
        c.Scan(new[] { 1, r, 2 }, scanArr, Op.Sum);
        Check.Sequence<int>(new[] { r + 1, r * (r + 1) / 2, 2 * (r + 1) }, scanArr, "array scan");
        // ReduceScatterBlock: block r of the element-wise sum.
        var rsb = new int[2];
        c.ReduceScatterBlock(Make(2 * p, i => i + r), rsb, Op.Sum);
        Check.Sequence<int>(new[] { 2 * r * p + p * (p - 1) / 2, (2 * r + 1) * p + p * (p - 1) / 2 }, rsb, "reduce-scatter-block");
    }

    private static void DataMovement(Communicator c)
    {
        int p = c.Size, r = c.Rank;
        for (int root = 0; root < p; root++)
        {
            var all = r == root ? new short[3 * p] : null;
            c.Gather(Make(3, i => (short)(r * 10 + i)), all, root);
            if (r == root)
                Check.Sequence<short>(Make(3 * p, i => (short)(i / 3 * 10 + i % 3)), all, $"gather at {root}");
            var block = new long[4];
            c.Scatter(r == root ? Make(4 * p, i => (long)i * 7) : null, block, root);
            Check.Sequence<long>(Make(4, i => (long)(r * 4 + i) * 7), block, $"scatter from {root}");
        }
        var everyone = new Particle[2 * p];
        c.Allgather(Make(2, i => new Particle { Id = r, X = i, Flag = (byte)(r + i) }), everyone);
        Check.Sequence<Particle>(Make(2 * p, i => new Particle { Id = i / 2, X = i % 2, Flag = (byte)(i / 2 + i % 2) }), everyone, "allgather of structs");
        var got = new int[2 * p];
        c.Alltoall(Make(2 * p, i => r * 1000 + i), got);
        Check.Sequence<int>(Make(2 * p, i => i / 2 * 1000 + r * 2 + i % 2), got, "alltoall");
        // Zero-length blocks are fine everywhere.
        c.Allgather(Array.Empty<int>(), Array.Empty<int>());
        c.Bcast(Array.Empty<double>(), 0);
    }

    private static void VectorVariants(Communicator c)
    {
        int p = c.Size, r = c.Rank;
        // Rank i contributes i elements (rank 0 none); the root lays them out
        // in reverse rank order with a one-element gap after each block.
        int[] counts = Make(p, i => i);
        int[] displs = new int[p];
        for (int i = p - 1, at = 0; i >= 0; i--)
        {
            displs[i] = at;
            at += counts[i] + 1;
        }
        int total = counts.Sum() + p;
        for (int root = 0; root < p; root++)
        {
            var recv = r == root ? Make(total, _ => -1) : null;
            c.Gatherv(Make(r, i => r * 100 + i), recv, counts, displs, root);
            if (r == root)
            {
                bool ok = true;
                for (int i = 0; i < p; i++)
                    for (int k = 0; k < counts[i]; k++)
                        ok &= recv![displs[i] + k] == i * 100 + k;
                for (int i = 0; i < p; i++)
                    ok &= recv![displs[i] + counts[i]] == -1; // gaps untouched
                Check.True(ok, $"gatherv at {root}");
            }
            var mine = Make(r + 1, _ => -5);
            c.Scatterv(r == root ? Make(total, i => i) : null, counts, displs, mine, root);
            Check.Sequence<int>(Make(r, k => displs[r] + k), mine.AsSpan(0, r), $"scatterv from {root}");
            Check.Equal(-5, mine[r], "scatterv leaves the rest");
        }
        var gathered = Make(total, _ => -1);
        c.Allgatherv(Make(r, i => r * 100 + i), gathered, counts, displs);
        Check.Equal(2 * 100 + 1, p > 2 ? gathered[displs[2] + 1] : 201, "allgatherv");
        // Alltoallv: rank r sends j+1 elements to rank j; receives r+1 from each.
        int[] sc = Make(p, j => j + 1), sd = new int[p], rcnt = Make(p, _ => r + 1), rd = Make(p, j => j * (r + 1));
        for (int j = 1; j < p; j++)
            sd[j] = sd[j - 1] + sc[j - 1];
        var sendv = Make(sc.Sum(), i => r * 1000 + i);
        var recvv = new int[p * (r + 1)];
        c.Alltoallv(sendv, sc, sd, recvv, rcnt, rd);
        bool good = true;
        for (int j = 0; j < p; j++)
        {
            int jsd = 0;
            for (int q = 0; q < r; q++)
                jsd += q + 1;
            for (int k = 0; k <= r; k++)
                good &= recvv[rd[j] + k] == j * 1000 + jsd + k;
        }
        Check.True(good, "alltoallv");
    }

    private static void UserOps(Communicator c)
    {
        int p = c.Size, r = c.Rank;
        // Non-commutative: the product must come out in rank order.
        using var matMul = Op.Create<Mat2>((x, y) => x * y, commutative: false);
        Mat2 expected = Mat2.Of(0);
        for (int i = 1; i < p; i++)
            expected *= Mat2.Of(i);
        for (int root = 0; root < p; root++)
        {
            Mat2 got = c.Reduce(Mat2.Of(r), matMul, root);
            if (r == root)
                Check.Equal(expected, got, $"non-commutative reduce at {root}");
        }
        Check.Equal(expected, c.Allreduce(Mat2.Of(r), matMul), "non-commutative allreduce");
        Mat2 prefix = Mat2.Of(0);
        for (int i = 1; i <= r; i++)
            prefix *= Mat2.Of(i);
        Check.Equal(prefix, c.Scan(Mat2.Of(r), matMul), "non-commutative scan");
        // A commutative user op on vectors: element-wise max of absolute values.
        using var absMax = Op.Create<int>((x, y) => Math.Max(Math.Abs(x), Math.Abs(y)));
        var res = new int[5];
        c.Allreduce(Make(5, i => (i - r) * (r % 2 == 0 ? 1 : -1)), res, absMax);
        Check.Sequence<int>(Make(5, i => Enumerable.Range(0, p).Max(q => Math.Abs(i - q))), res, "commutative user op on a vector");
        // An op that throws surfaces on the ranks that ran it; the job goes on.
        using var bad = Op.Create<int>((x, y) => x + y == 1 ? throw new InvalidDataException("bad pair") : x + y);
        if (p == 2)
        {
            try
            {
                c.Allreduce(r, bad);
                Check.True(false, "throwing user op must surface");
            }
            catch (MpiException e)
            {
                Check.True(e.InnerException is InvalidDataException, $"inner exception is the op's ({e.InnerException?.GetType().Name})");
            }
        }
        // A throwing op in a collective that MPI also fails: rank 1 contributes 8 elements where the root
        // has room for 4.  MPICH's root truncates and still runs the op on what came (Open MPI's runs no op
        // after a truncated receive).  MPI's error is thrown, with the op's inside; none of it is left for
        // the next collective on this thread, whose op must run on its own data.
        if (p == 2)
        {
            int calls = 0;
            using var always = Op.Create<int>((x, y) =>
            {
                calls++;
                throw new InvalidDataException("always");
            });
            MpiException? failed = null;
            try
            {
                c.Reduce(r == 1 ? new int[8] : new int[4], r == 0 ? new int[4] : null, always, 0);
            }
            catch (MpiException e)
            {
                failed = e;
            }
            Check.True(r == 0 ? failed is MessageTruncatedException : failed is null, $"the root's reduce truncates ({failed?.GetType().Name})");
            if (r == 0)
                Check.True(calls == 0 ? failed?.InnerException is null : failed?.InnerException is InvalidDataException,
                           $"the op's exception inside MPI's ({calls} calls, inner {failed?.InnerException?.GetType().Name})");
            using var add = Op.Create<int>((x, y) => x + y);
            var next = new int[3];
            string? stale = null;
            try
            {
                c.Allreduce([r + 1, r + 2, r + 3], next, add);
            }
            catch (MpiException e)
            {
                stale = e.Message;
            }
            Check.Null(stale, "the next collective with a user op throws no earlier error");
            Check.Sequence<int>([3, 5, 7], next, "the next collective's op ran on its data");
            Check.Equal(Mat2.Of(0) * Mat2.Of(1), c.Allreduce(Mat2.Of(r), matMul), "and so does another op's");
        }
        Check.Equal(p, c.Allreduce(1, Op.Sum), "collectives work after a throwing op");
        Check.Throws<ArgumentException>(() => c.Allreduce(1.5, matMul), "user op on the wrong element type");
    }

    private static void Nonblocking(Communicator c)
    {
        int p = c.Size, r = c.Rank;
        var bc = r == 0 ? Make(1000, i => i * 2.0) : new double[1000];
        var sum = new long[10];
        var gat = r == 0 ? new int[2 * p] : null;
        var sca = new short[3];
        var ag = new byte[p];
        var a2a = new int[p];
        var red = r == p - 1 ? new float[4] : null;
        Request[] reqs =
        {
            c.IBarrier(),
            c.IBcast(bc, 0),
            c.IAllreduce(Make(10, i => (long)i + r), sum, Op.Sum),
            c.IGather(new[] { r, -r }, gat, 0),
            c.IScatter(r == 0 ? Make(3 * p, i => (short)i) : null, sca, 0),
            c.IAllgather(new[] { (byte)(r + 1) }, ag),
            c.IAlltoall(Make(p, j => r * 10 + j), a2a),
            c.IReduce(Make(4, i => i * 0.5f), red, Op.Max, p - 1),
        };
        Request.WaitAll(reqs);
        Check.Sequence<double>(Make(1000, i => i * 2.0), bc, "ibcast");
        Check.Sequence<long>(Make(10, i => (long)i * p + p * (p - 1) / 2), sum, "iallreduce");
        if (r == 0)
            Check.Sequence<int>(Make(2 * p, i => i % 2 == 0 ? i / 2 : -(i / 2)), gat, "igather");
        Check.Sequence<short>(Make(3, i => (short)(r * 3 + i)), sca, "iscatter");
        Check.Sequence<byte>(Make(p, i => (byte)(i + 1)), ag, "iallgather");
        Check.Sequence<int>(Make(p, j => j * 10 + r), a2a, "ialltoall");
        if (r == p - 1)
            Check.Sequence<float>(Make(4, i => i * 0.5f), red, "ireduce");
        using var userOp = Op.Create<int>((x, y) => x + y);
        Check.Throws<ArgumentException>(() => c.IAllreduce(new int[1], new int[1], userOp), "nonblocking user op refused");
        // GC pressure while a nonblocking collective is in flight.
        var big = r == 0 ? Make(1 << 18, i => i) : new int[1 << 18];
        Request b = c.IBcast(big, 0);
        for (int i = 0; i < 5; i++)
        {
            _ = new byte[1 << 20];
            GC.Collect(2, GCCollectionMode.Forced, true, true);
        }
        b.Wait();
        Check.True(big[12345] == 12345 && big[(1 << 18) - 1] == (1 << 18) - 1, "ibcast across compacting GCs");
    }

    private static void BadArguments(Communicator c)
    {
        int p = c.Size, r = c.Rank;
        var a = new int[4];
        Check.Throws<ArgumentOutOfRangeException>(() => c.Bcast(a, p), "bcast root = Size");
        Check.Throws<ArgumentOutOfRangeException>(() => c.Reduce(a, a, Op.Sum, -1), "reduce root negative");
        Check.Throws<ArgumentOutOfRangeException>(() => c.IBcast(a, p + 3), "ibcast root");
        Check.Throws<ArgumentException>(() => c.Allreduce(a, new int[3], Op.Sum), "allreduce recv too short");
        Check.Throws<ArgumentException>(() => c.Allgather(a, new int[4 * p - 1]), "allgather recv too short");
        Check.Throws<ArgumentException>(() => c.Gather(a, new int[4 * p - 1], r), "gather recv too short at root");
        Check.Throws<ArgumentNullException>(() => c.Gather(a, null, r), "gather recv null at root");
        Check.Throws<ArgumentException>(() => c.Scatter(new int[4 * p - 1], a, r), "scatter send too short at root");
        if (p > 1)
            Check.Throws<ArgumentException>(() => c.Alltoall(new int[p + 1], new int[p + 1]), "alltoall not a multiple");
        Check.Throws<ArgumentException>(() => c.Allreduce(true, Op.Sum), "sum of bools");
        Check.Throws<ArgumentException>(() => c.Allreduce(1.5, Op.BitwiseAnd), "bitwise and of doubles");
        Check.Throws<ArgumentException>(() => c.Allreduce(1, Op.MinLoc), "minloc of plain ints");
        Check.Throws<ArgumentException>(() => c.Allreduce(new Particle(), Op.Max), "max of a struct");
        int[] counts = Make(p, _ => 1), displs = Make(p, i => i);
        Check.Throws<ArgumentException>(() => c.Allgatherv(new int[1], new int[p], counts[..^1], displs), "counts of the wrong length");
        Check.Throws<ArgumentException>(() => c.Allgatherv(new int[1], new int[p], counts, Make(p, i => i - 1)), "negative displacement");
        Check.Throws<ArgumentException>(() => c.Allgatherv(new int[1], new int[p], Make(p, _ => -1), displs), "negative count");
        Check.Throws<ArgumentException>(() => c.Allgatherv(new int[1], new int[p], counts, Make(p, i => i + 1)), "block past the end");
        if (p > 1)
            Check.Throws<ArgumentException>(() => c.Allgatherv(new int[1], new int[p], counts, Make(p, _ => 0)), "overlapping blocks");
        Check.Throws<ArgumentException>(() => c.Allgatherv(new int[2], new int[2 * p], counts, displs), "own block length differs from counts");
        Check.Throws<ArgumentException>(() => c.Scatterv(new int[p], counts, displs, new int[0], r), "scatterv recv shorter than its count");
        Check.Throws<ArgumentNullException>(() => c.Reduce(a, new int[4], null!, 0), "null op");
        SameArray(c);
        // Nothing above was sent: collectives still line up on every rank.
        Check.Equal(p, c.Allreduce(1, Op.Sum), "collectives after bad arguments");
    }

    // One array as send and recv buffer (MPI-4.0 2.5.4 forbids it; MPICH reports an MPI error, Open MPI
    // computes on): refused on every rank, the root's and the others' alike, before anything is sent.
    // Every other argument is right, so the aliasing is the only thing to refuse.
    private static void SameArray(Communicator c)
    {
        int p = c.Size, r = c.Rank;
        using CartesianCommunicator ring = c.CreateCartesian([p], [true])!; // periodic: two neighbours per rank
        long before = Mpi.GetStatistics().CollectiveOperations;
        void Refused(Action call, string what)
        {
            ArgumentException? e = Check.ThrowsNaming<ArgumentException>("recv", call, what);
            if (e is not null)
                Check.True(e.GetType() == typeof(ArgumentException) && e.Message.Contains("MPI_IN_PLACE", StringComparison.Ordinal),
                           $"{what}: the aliasing refused, saying there is no in-place form ({e.GetType().Name}: {e.Message})");
        }
        int[] four = Make(4, i => i + r), twoPerRank = Make(2 * p, i => i), onePerRank = Make(p, i => i);
        int[] ones = Make(p, _ => 1), steps = Make(p, i => i), past = Make(p, i => p + i);
        int[] rootOnly = Make(p, i => i == 0 ? 4 : 0), zeros = new int[p];
        // blocking
        Refused(() => c.Allreduce(four, four, Op.Sum), "allreduce");
        Refused(() => c.Reduce(four, four, Op.Sum, 0), r == 0 ? "reduce at the root" : "reduce away from the root");
        Refused(() => c.Scan(four, four, Op.Max), "scan");
        Refused(() => c.Exscan(four, four, Op.Sum), "exscan");
        Refused(() => c.Alltoall(twoPerRank, twoPerRank), "alltoall");
        Refused(() => c.ReduceScatter(onePerRank, onePerRank, ones, Op.Sum), "reduce-scatter");
        Refused(() => c.Gatherv(four, four, rootOnly, zeros, 0), "gatherv");
        Refused(() => c.Alltoallv(twoPerRank, ones, steps, twoPerRank, ones, past), "alltoallv");
        Refused(() => c.Gather(twoPerRank, twoPerRank, 0), "gather");
        Refused(() => c.Scatter(twoPerRank, twoPerRank, 0), "scatter");
        Refused(() => c.Allgather(twoPerRank, twoPerRank), "allgather");
        Refused(() => c.Scatterv(twoPerRank, ones, steps, twoPerRank, 0), "scatterv");
        Refused(() => c.Allgatherv(twoPerRank, twoPerRank, ones, steps), "allgatherv");
        Refused(() => c.ReduceScatterBlock(twoPerRank, twoPerRank, Op.Sum), "reduce-scatter-block");
        // nonblocking and persistent (checked before the library is asked for a persistent form)
        Refused(() => c.IAllreduce(four, four, Op.Sum), "iallreduce");
        Refused(() => c.IReduce(four, four, Op.Sum, 0), "ireduce");
        Refused(() => c.IAlltoall(twoPerRank, twoPerRank), "ialltoall");
        Refused(() => c.AllreduceInit(four, four, Op.Sum), "allreduce-init");
        Refused(() => c.ReduceScatterInit(onePerRank, onePerRank, ones, Op.Sum), "reduce-scatter-init");
        // neighbourhood
        int[] two = [r, r];
        Refused(() => ring.NeighborAlltoall(two, two, 1), "neighbor alltoall");
        Refused(() => ring.INeighborAlltoall(two, two, 1), "ineighbor alltoall");
        Refused(() => ring.NeighborAlltoallInit(two, two, 1), "neighbor alltoall-init");
        int[] pair = [1, 1], at = [0, 1];
        long[] atBytes = [0, sizeof(int)];
        Refused(() => ring.NeighborAllgather(two, two), "neighbor allgather");
        Refused(() => ring.NeighborAllgatherv(two, two, pair, at), "neighbor allgatherv");
        Refused(() => ring.NeighborAlltoallv(two, pair, at, two, pair, at), "neighbor alltoallv");
        Refused(() => ring.NeighborAlltoallw(two, pair, atBytes, two, pair, atBytes), "neighbor alltoallw");
        Check.Equal(before, Mpi.GetStatistics().CollectiveOperations, "no refused collective reached the core");
        Check.Sequence<int>(Make(4, i => i + r), four, "a refused collective leaves its array alone");

        // Empty arrays carry nothing: one empty array as both is allowed, as for SendRecv.
        int[] none = [];
        c.Allreduce(none, none, Op.Sum);
        // The communicators still work: a correct reduction and neighbour exchange.
        var sums = new int[4];
        c.Allreduce(four, sums, Op.Sum);
        Check.Sequence<int>(Make(4, i => p * i + p * (p - 1) / 2), sums, "allreduce after the refusals");
        var around = new int[2];
        ring.NeighborAlltoall(two, around, 1);
        Check.Sequence<int>([(r + p - 1) % p, (r + 1) % p], around, "neighbor alltoall after the refusals");
    }
}
