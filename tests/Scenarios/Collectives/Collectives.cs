using System.MP;
using System.Numerics;
using static Scenarios.Heap;

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
        s[Scenario.CollScans] = Scans;
        s[Scenario.CollReduceScatter] = ReduceScatter;
        s[Scenario.CollVectorInFlight] = VectorInFlight;
        s[Scenario.CollScalars] = Scalars;
        s[Scenario.CollUserStructs] = UserStructs;
        s[Scenario.CollUnevenBadArgs] = UnevenBadArguments;
        s[Scenario.CollReduceScatterEmptyBlock] = ReduceScatterEmptyBlock;
        s[Scenario.CollIntercommVector] = IntercommVector;
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
                           $"{what}: the aliasing refused, naming the in-place form ({e.GetType().Name}: {e.Message})");
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

    // Nonblocking scans, and Exscan of arrays.
    private static void Scans(Communicator c)
    {
        int r = c.Rank, p = c.Size;
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
    }

    // Reduce-scatter, equal blocks and uneven counts, blocking and not; the counts of a
    // nonblocking one are copied when it is posted.
    private static void ReduceScatter(Communicator c)
    {
        int r = c.Rank, p = c.Size;
        var block = new int[2];
        c.IReduceScatterBlock(Make(2 * p, j => r * 100 + j), block, Op.Sum).Wait();
        Check.Sequence<int>(Make(2, i => 100 * Tri(p - 1) + p * (2 * r + i)), block, "IReduceScatterBlock");
        int[] counts = Make(p, k => p - k + (k == 0 ? 1 : 0)); // 3, 1 on two ranks
        int[] offsets = Prefix(counts);
        int total = counts.Sum();
        long[] send = Array.ConvertAll(Make(total + 2, j => (r + 1) * (j + 1)), v => (long)v);
        var part = new long[counts[r] + 1];
        part[^1] = -7;
        c.ReduceScatter(send, part, counts, Op.Sum);
        Check.Sequence<long>(Array.ConvertAll(Make(counts[r], i => (offsets[r] + i + 1) * Tri(p)), v => (long)v),
                             part.AsSpan(0, counts[r]), "ReduceScatter with uneven counts");
        Check.Equal(-7L, part[^1], "ReduceScatter wrote only this rank's block");
        c.ReduceScatter(send, part, counts, Op.Max);
        Check.Sequence<long>(Array.ConvertAll(Make(counts[r], i => (offsets[r] + i + 1) * p), v => (long)v),
                             part.AsSpan(0, counts[r]), "ReduceScatter Max");
        int[] moving = (int[])counts.Clone();
        Request rq = c.IReduceScatter(send, part, moving, Op.Sum);
        Array.Fill(moving, 1000); // the counts were copied: changing them now changes nothing
        CompactAll();
        rq.Wait();
        Check.Sequence<long>(Array.ConvertAll(Make(counts[r], i => (offsets[r] + i + 1) * Tri(p)), v => (long)v),
                             part.AsSpan(0, counts[r]), "IReduceScatter with its counts overwritten after posting");
    }

    // Nonblocking v-collectives, their counts and displacements overwritten and the heap compacted
    // while they are in flight; the blocking form agrees.
    private static void VectorInFlight(Communicator c)
    {
        int r = c.Rank, p = c.Size;
        int[] gc = Make(p, k => k + 1), gd = Make(p, k => 1 + Make(p, j => j + 1).Skip(k + 1).Sum());
        int glen = gc.Sum() + 1;
        int[]? grecv = r == 0 ? Make(glen, _ => -1) : null;
        Request g = c.IGatherv(Make(r + 1, i => 1000 * r + i), grecv, (int[])gc.Clone(), (int[])gd.Clone(), 0);
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

        int[] sc = Make(p, k => 2 * k + 1), sd = Prefix(sc);
        int root = p - 1;
        var srecv = new int[sc[r] + 1];
        int[] scMoving = (int[])sc.Clone(), sdMoving = (int[])sd.Clone();
        Request s = c.IScatterv(r == root ? Make(sc.Sum(), j => j * 7) : null, scMoving, sdMoving, srecv, root);
        Array.Fill(scMoving, 0);
        Array.Fill(sdMoving, 0);
        CompactAll();
        s.Wait();
        Check.Sequence<int>(Make(sc[r], i => (sd[r] + i) * 7), srecv.AsSpan(0, sc[r]), "IScatterv");

        int[] ac = Make(p, k => k + 2), ad = Prefix(ac);
        var arecv = new int[ac.Sum()];
        c.IAllgatherv(Make(r + 2, i => 10 * r + i), arecv, ac, ad).Wait();
        Check.Sequence<int>(Enumerable.Range(0, p).SelectMany(k => Make(k + 2, i => 10 * k + i)).ToArray(), arecv, "IAllgatherv");

        int[] tsc = Make(p, k => r + k + 1), trc = Make(p, k => k + r + 1);
        int[] tsd = Prefix(tsc), trd = Prefix(trc);
        int[] tsend = Enumerable.Range(0, p).SelectMany(k => Make(tsc[k], i => 1000 * r + 100 * k + i)).ToArray();
        var trecv = new int[trc.Sum()];
        Request t = c.IAlltoallv(tsend, tsc, tsd, trecv, trc, trd);
        CompactAll();
        t.Wait();
        Check.Sequence<int>(Enumerable.Range(0, p).SelectMany(k => Make(trc[k], i => 1000 * k + 100 * r + i)).ToArray(), trecv, "IAlltoallv");
        // The blocking forms agree.
        var brecv = new int[trc.Sum()];
        c.Alltoallv(tsend, tsc, tsd, brecv, trc, trd);
        Check.Sequence<int>(trecv, brecv, "Alltoallv agrees with IAlltoallv");
    }

    // The scalar forms: one value per rank.
    private static void Scalars(Communicator c)
    {
        int r = c.Rank, p = c.Size;
        double bv = r == 1 ? 42.5 : 0;
        c.Bcast(ref bv, 1);
        Check.Equal(42.5, bv, "Bcast(ref)");
        Check.Sequence<long>(Array.ConvertAll(Make(p, k => 3 * k), v => (long)v), c.Allgather(3L * r), "Allgather of one value");
        short[]? gathered = c.Gather((short)(r + 5), 0);
        if (r == 0)
            Check.Sequence<short>(Array.ConvertAll(Make(p, k => k + 5), v => (short)v), gathered!, "Gather of one value");
        else
            Check.True(gathered is null, "Gather of one value is null off the root");
        Check.Equal(10 * (r + 1), c.Scatter(r == 0 ? Make(p, k => 10 * (k + 1)) : null, 0), "Scatter of one value each");
        if (r == 0)
            Check.Throws<ArgumentException>(() => c.Scatter(new int[p - 1], 0), "Scatter of too few values at the root");
    }

    // Sum, Product, Min and Max of user structs through their operators; what has no operator is refused.
    private static void UserStructs(Communicator c)
    {
        int r = c.Rank, p = c.Size;
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
        c.ReduceScatterBlock(Make(p, j => j).Select(j => new Vec(j, r)).ToArray(), vblock, Op.Sum);
        Check.Equal(new Vec(p * r, Tri(p - 1)), vblock[0], "ReduceScatterBlock Sum of a user struct");
        Check.Throws<ArgumentException>(() => c.IAllreduce(new Vec[1], new Vec[1], Op.Sum), "a nonblocking Sum of a user struct");
        Check.Throws<ArgumentException>(() => c.Allreduce(new Plain(), Op.Sum), "Sum of a struct without operators");
        Check.Throws<ArgumentException>(() => c.Allreduce(new Vec(), Op.BitwiseAnd), "a bitwise op on a user struct");
    }

    // Misuse of the uneven forms, refused on every rank before MPI.
    private static void UnevenBadArguments(Communicator c)
    {
        int r = c.Rank, p = c.Size;
        int[] counts = Make(p, k => p - k + (k == 0 ? 1 : 0)); // 3, 1 on two ranks
        int total = counts.Sum();
        var part = new long[counts[r] + 1];
        int[] AgCounts() => Make(p, k => k + 2);

        long[] lsend = new long[total];
        Check.Throws<ArgumentNullException>(() => c.ReduceScatter(lsend, part, null!, Op.Sum), "ReduceScatter without counts");
        Check.Throws<ArgumentException>(() => c.ReduceScatter(lsend, part, new int[p + 1], Op.Sum), "ReduceScatter counts of the wrong length");
        Check.Throws<ArgumentException>(() => c.ReduceScatter(lsend, part, Make(p, k => k == 0 ? -1 : 1), Op.Sum), "ReduceScatter with a negative count");
        Check.Throws<ArgumentException>(() => c.ReduceScatter(lsend, new long[total + 1], Make(p, k => k == p - 1 ? total + 1 : 0), Op.Sum), "ReduceScatter counts beyond the send array");
        Check.Throws<ArgumentException>(() => c.IReduceScatter(lsend, new long[0], Make(p, _ => 1), Op.Sum), "IReduceScatter into a short array");
        Check.Throws<ArgumentException>(() => c.IAllgatherv(new int[r + 2], new int[3], AgCounts(), Prefix(AgCounts())), "IAllgatherv blocks past the end");
        Check.Throws<ArgumentException>(() => c.IAlltoallv(new int[p], Make(p, _ => 1), Prefix(Make(p, _ => 1)), new int[p], Make(p, _ => 1), new int[p]),
                                        "IAlltoallv receive blocks that overlap");
        Check.Throws<ArgumentException>(() => c.IAllgatherv(new int[r + 2], new int[100], AgCounts(), Make(p, k => k == 0 ? -1 : 0)), "IAllgatherv with a negative displacement");
        Check.Throws<ArgumentException>(() => c.IAllgatherv(new int[1], new int[100], AgCounts(), Prefix(AgCounts())), "IAllgatherv whose own block has another length");
        if (r == 0)
            Check.Throws<ArgumentException>(() => c.IGatherv(new int[1], new int[1], Make(p, _ => 1), Make(p, k => k), 0), "IGatherv at the root past the end");
        // The communicator goes on.
        Check.Equal(Tri(p - 1), c.Allreduce(r, Op.Sum), "an allreduce after the refusals");
        c.Barrier();
    }

    // Three ranks: reduce-scatter with an empty block.
    private static void ReduceScatterEmptyBlock(Communicator c)
    {
        int r = c.Rank, p = c.Size;
        int[] counts = [2, 0, 3];
        int[] offsets = Prefix(counts);
        double[] send = Make(5, j => (r + 1) * (j + 1)).Select(v => v / 2.0).ToArray();
        var part = new double[counts[r]];
        c.ReduceScatter(send, part, counts, Op.Sum);
        Check.Sequence<double>(Make(counts[r], i => offsets[r] + i + 1).Select(v => v * 6 / 2.0).ToArray(), part, "ReduceScatter 2, 0, 3");
        int[] counts2 = [1, 4, 0];
        int[] offsets2 = Prefix(counts2);
        var part2 = new double[counts2[r]];
        c.IReduceScatter(send, part2, counts2, Op.Max).Wait();
        Check.Sequence<double>(Make(counts2[r], i => offsets2[r] + i + 1).Select(v => v * 3 / 2.0).ToArray(), part2, "IReduceScatter 1, 4, 0 Max");
    }

    // Three ranks: the v-collectives across an intercommunicator of groups {0} and {1, 2}; misuse
    // refused before MPI, a truncation inside it, and the intercommunicator goes on.
    private static void IntercommVector(Communicator c)
    {
        int r = c.Rank;
        // Groups A = {0} and B = {1, 2}.
        int color = r == 0 ? 0 : 1;
        using Communicator local = c.Split(color, r)!;
        using Intercommunicator inter = Intercommunicator.Create(local, 0, c, color == 0 ? 1 : 0, 61);
        int lr = local.Rank;
        bool a = color == 0;

        // Gatherv at A's rank: B's ranks send lr + 2 elements, into reversed blocks.
        if (a)
        {
            var got = Make(6, _ => -1);
            inter.Gatherv<int>(null!, got, [2, 3], [4, 0], Mpi.Root);
            Check.Sequence<int>([100, 101, 102, -1, 0, 1], got, "intercommunicator Gatherv at A");
        }
        else
        {
            inter.Gatherv(Make(lr + 2, i => 100 * lr + i), null, null!, null!, 0);
        }
        // Gatherv at B's rank 1: A's rank sends 4 elements; B's rank 0 passes ProcNull.
        if (a)
        {
            inter.Gatherv(Make(4, i => 7 * i), null, null!, null!, 1);
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
            inter.Scatterv(Make(4, j => 50 + j), sc, sd, unused, Mpi.Root);
        }
        else
        {
            var got = new int[3];
            inter.Scatterv(null, sc, null!, got, 0);
            Check.Sequence<int>(lr == 0 ? [53] : [50, 51, 52], got.AsSpan(0, sc[lr]), "intercommunicator Scatterv");
        }
        // Allgatherv: A gets B's blocks (2 and 1 elements), B gets A's 3.
        {
            int[] send3 = a ? [9, 8, 7] : Make(2 - lr, i => 20 * lr + i);
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
            inter.Gatherv(Make(lr + 2, _ => lr + 1), null, null!, null!, 0);
        }
        c.Barrier();
    }

    private static int Tri(int n) => n * (n + 1) / 2; // 1 + ... + n

    private static int[] Prefix(int[] counts, int start = 0)
    {
        var displs = new int[counts.Length];
        for (int i = 0, at = start; i < counts.Length; at += counts[i], i++)
            displs[i] = at;
        return displs;
    }

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
}
