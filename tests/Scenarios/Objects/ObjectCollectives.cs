using System.MP;
using System.Numerics;

namespace Scenarios;

/// <summary>A 2x2 integer matrix: its product is not commutative, so a reduction's rank order shows.</summary>
[Transportable]
public sealed class Matrix2 : IMultiplyOperators<Matrix2, Matrix2, Matrix2>, IAdditionOperators<Matrix2, Matrix2, Matrix2>, IEquatable<Matrix2>
{
    public long A, B, C, D;

    public Matrix2(long a, long b, long c, long d) => (A, B, C, D) = (a, b, c, d);

    public static Matrix2 operator *(Matrix2 x, Matrix2 y) =>
        new(x.A * y.A + x.B * y.C, x.A * y.B + x.B * y.D, x.C * y.A + x.D * y.C, x.C * y.B + x.D * y.D);

    public static Matrix2 operator +(Matrix2 x, Matrix2 y) => new(x.A + y.A, x.B + y.B, x.C + y.C, x.D + y.D);

    public bool Equals(Matrix2? o) => o is not null && (A, B, C, D) == (o.A, o.B, o.C, o.D);

    public override bool Equals(object? o) => Equals(o as Matrix2);

    public override int GetHashCode() => HashCode.Combine(A, B, C, D);

    public override string ToString() => $"[{A} {B}; {C} {D}]";
}

/// <summary>A type that may not travel (not [Transportable]).</summary>
public sealed class Untransportable
{
    public int X;
}

/// <summary>
/// The object reductions, the object all-to-all and the object v-forms, and
/// ReduceScatter of buffers across an intercommunicator.  Every result is checked against the
/// serial computation of what each rank's formula gives; the reduction order is checked with a
/// non-commutative product and string concatenation; a throwing function, an object that may not
/// travel and disagreeing counts make every rank throw the documented exception, and the
/// communicator goes on.  Runs on 2 ranks and (uneven blocks, order over three) on 3.
/// </summary>
internal static class ObjectCollectives
{
    internal static void Register(Dictionary<Scenario, Action<Communicator>> s)
    {
        s[Scenario.ObjectCollectivesReductions] = c =>
        {
            Reductions(c);
            Vectors(c);
            InterReduceScatter(c);
        };
    }

    private static Matrix2 M(int r) => new(1, r + 1, r % 2, 2 - r % 3);

    private static string S(int r) => $"r{r}:" + new string((char)('a' + r), r + 1);

    private static double D(int r) => 0.1 * (r + 1) + 1e-17 * r;

    private static T Fold<T>(int n, Func<int, T> value, Func<T, T, T> op)
    {
        T acc = value(0);
        for (int r = 1; r < n; r++)
            acc = op(acc, value(r));
        return acc;
    }

    private static void Reductions(Communicator c)
    {
        int r = c.Rank, p = c.Size;
        Func<string, string, string> join = (a, b) => a + "|" + b;

        // Non-commutative function and type: the serial left fold in rank order, at every root.
        for (int root = 0; root < p; root++)
        {
            Matrix2? got = c.OReduce(M(r), (x, y) => x * y, root);
            if (r == root)
                Check.Equal(Fold(p, M, (x, y) => x * y), got, $"OReduce of matrices at root {root}");
            else
                Check.True(got is null, "OReduce gives default away from the root");
        }
        Check.Equal(Fold(p, S, join), c.OAllreduce(S(r), join), "OAllreduce of strings in rank order");
        Check.Equal(Fold(p, M, (x, y) => x * y), c.OAllreduce(M(r), Op.Product), "OAllreduce Product of matrices through their operator");
        Matrix2? sum = c.OReduce(M(r), Op.Sum, 0);
        Check.Equal(r == 0 ? Fold(p, M, (x, y) => x + y) : null, sum, "OReduce Sum of matrices through their operator");
        // A double's serial fold, bit for bit (no tree bracketing).
        Check.Equal(Fold(p, D, (x, y) => x + y), c.OAllreduce(D(r), Op.Sum), "OAllreduce Sum of doubles equals the serial fold");
        Check.Equal(Fold(p, S, (x, y) => string.CompareOrdinal(y, x) > 0 ? y : x), c.OAllreduce(S(r), Op.Max), "OAllreduce Max of strings (ordinal)");
        Check.Equal(Fold(p, S, string.Concat), c.OAllreduce(S(r), Op.Sum), "OAllreduce Sum of strings concatenates in rank order");
        Check.Equal((long)p * (p + 1) / 2, c.OAllreduce((long)r + 1, Op.Create<long>((x, y) => x + y)), "OAllreduce with an Op.Create function");
        Check.Equal(Fold(p, k => new[] { k, -k }, (x, y) => [x[0] + y[0], Math.Min(x[1], y[1])])[1],
                    c.OAllreduce(new[] { r, -r }, (x, y) => [x[0] + y[0], Math.Min(x[1], y[1])])![1], "OAllreduce of arrays as values");

        // Prefixes.
        Check.Equal(Fold(r + 1, S, join), c.OScan(S(r), join), "OScan of strings");
        Check.Equal(Fold(r + 1, M, (x, y) => x * y), c.OScan(M(r), Op.Product), "OScan Product of matrices");
        string? ex = c.OExscan(S(r), join);
        Check.Equal(r == 0 ? null : Fold(r, S, join), ex, "OExscan of strings (rank 0 default)");
        Check.Equal(r == 0 ? 0.0 : Fold(r, D, (x, y) => x + y), c.OExscan(D(r), Op.Sum), "OExscan Sum of doubles");

        // ReduceScatter: element i folded over the ranks; rank k gets counts[k] elements.
        int[] counts = [.. Enumerable.Range(0, p).Select(k => k + 1)];
        int total = counts.Sum();
        string[] mine = [.. Enumerable.Range(0, total).Select(i => $"{r}.{i}")];
        string[] block = c.OReduceScatter(mine, counts, join);
        int start = counts.Take(r).Sum();
        Check.Sequence<string>([.. Enumerable.Range(start, counts[r]).Select(i => Fold(p, k => $"{k}.{i}", join))], block, "OReduceScatter of strings");
        Matrix2[] mats = [.. Enumerable.Range(0, total).Select(i => M(r + i))];
        Matrix2[] mb = c.OReduceScatter(mats, counts, Op.Product);
        Check.Sequence<Matrix2>([.. Enumerable.Range(start, counts[r]).Select(i => Fold(p, k => M(k + i), (x, y) => x * y))], mb, "OReduceScatter Product of matrices");

        // The function throws on the combining rank: every rank throws MpiException, the job goes on.
        var e1 = Check.Throws<MpiException>(() => c.OAllreduce(S(r), (a, b) => b.StartsWith("r1") ? throw new InvalidOperationException("no r1") : a + b), "OAllreduce with a throwing function");
        Check.True(e1 is not null, "OAllreduce with a throwing function throws MpiException");
        if (r == 0)
            Check.True(e1?.InnerException is InvalidOperationException { Message: "no r1" }, "at rank 0 the function's exception is the inner one");
        else
            Check.True(e1 is not null && e1.Message.Contains("InvalidOperationException") && e1.Message.Contains("no r1") && e1.Message.Contains("rank 0"),
                       $"elsewhere the message names it: {e1?.Message}");
        int last = p - 1;
        var e2 = Check.Throws<MpiException>(() => c.OReduce(r, (a, b) => a / (b - b), last), "OReduce with a throwing function");
        Check.True(r == last ? e2?.InnerException is DivideByZeroException : e2?.Message.Contains($"rank {last}") == true, "OReduce: a throwing function at the root");
        Check.True(Check.Throws<MpiException>(() => c.OScan(r, (a, b) => throw new FormatException("scan")), "OScan with a throwing function") is { } e3 && (r == 0 ? e3.InnerException is FormatException : e3.Message.Contains("scan")),
                   "OScan with a throwing function");
        Check.True(Check.Throws<MpiException>(() => c.OReduceScatter(new int[total], counts, (a, b) => throw new ArithmeticException("rs")), "OReduceScatter with a throwing function") is not null,
                   "OReduceScatter with a throwing function");
        Check.Equal(Fold(p, S, join), c.OAllreduce(S(r), join), "the communicator goes on after the failures");

        // An object that may not travel, on the last rank only: every rank throws TransportException.
        Check.Throws<TransportException>(() => c.OAllreduce<object>(r == last ? new Untransportable() : "x", (a, b) => a), "a value that may not travel");
        Check.Throws<TransportException>(() => c.OAllreduce<object>(r == last ? "x" : "y", (a, b) => new Untransportable()), "a result that may not travel");
        // Counts that disagree between ranks (each rank's own are consistent): every rank throws ArgumentException.
        int[] skewed = [.. counts];
        if (r == last && p > 1)
        {
            skewed[0] += 1;
            skewed[last] -= 1;
        }
        Check.Throws<ArgumentException>(() => c.OReduceScatter(new string[total], skewed, join), "counts that disagree between ranks");
        Check.Equal(Fold(p, S, join), c.OAllreduce(S(r), join), "the communicator goes on after the refusals");

        // Refused before anything is sent (each rank alone).
        Check.Throws<ArgumentNullException>(() => c.OAllreduce(1, (Func<int, int, int>)null!), "a null function");
        Check.Throws<ArgumentNullException>(() => c.OReduce(1, (Op)null!, 0), "a null Op");
        Check.Throws<ArgumentException>(() => c.OAllreduce(M(r), Op.BitwiseAnd), "an Op not defined for objects");
        Check.Throws<ArgumentException>(() => c.OAllreduce("s", Op.Product), "Product of strings");
        Check.Throws<ArgumentException>(() => c.OAllreduce(new Untransportable(), Op.Min), "Min of a type with no comparison");
        Check.Throws<ArgumentException>(() => c.OScan(1.5, Op.Create<int>((a, b) => a)), "an Op.Create function of another type");
        Check.Throws<ArgumentOutOfRangeException>(() => c.OReduce(1, (a, b) => a, p), "root out of range");
        Check.Throws<ArgumentException>(() => c.OReduceScatter(new int[total + 1], counts, (a, b) => a), "values longer than the counts add up to");
        Check.Throws<ArgumentException>(() => c.OReduceScatter(new int[total], new int[p + 1], (a, b) => a), "counts of the wrong length");
        Check.Throws<ArgumentException>(() => c.OReduceScatter(new int[0], [.. Enumerable.Repeat(0, p - 1), -1 ], (a, b) => a), "a negative count");
        using (Communicator d = c.Dup())
        {
            d.Dispose();
            Check.Throws<ObjectDisposedException>(() => d.OAllreduce(1, (a, b) => a), "a disposed communicator");
        }
    }


    private static void Vectors(Communicator c)
    {
        int r = c.Rank, p = c.Size;
        // OAlltoall: rank r sends "r->j" to rank j.
        string?[] got = c.OAlltoall([.. Enumerable.Range(0, p).Select(j => $"{r}->{j}")]);
        Check.Sequence<string>([.. Enumerable.Range(0, p).Select(i => $"{i}->{r}")], got!, "OAlltoall of strings");
        Matrix2?[] gm = c.OAlltoall([.. Enumerable.Range(0, p).Select(j => j == r ? null! : M(10 * r + j))]);
        for (int i = 0; i < p; i++)
            Check.Equal(i == r ? null : M(10 * i + r), gm[i], $"OAlltoall of matrices from rank {i} (null to itself)");

        // OAlltoallv: rank r sends (r + j) % 3 elements to rank j (some empty).
        int[][] blocks = [.. Enumerable.Range(0, p).Select(j => Enumerable.Range(0, (r + j) % 3).Select(k => 100 * r + 10 * j + k).ToArray())];
        int[][] gv = c.OAlltoallv(blocks);
        for (int i = 0; i < p; i++)
            Check.Sequence<int>([.. Enumerable.Range(0, (i + r) % 3).Select(k => 100 * i + 10 * r + k)], gv[i], $"OAlltoallv block from rank {i}");
        // Shared references inside one block stay shared.
        var shared = M(r);
        Matrix2[][] sh = c.OAlltoallv([.. Enumerable.Range(0, p).Select(_ => new[] { shared, shared })]);
        Check.True(sh.All(b => ReferenceEquals(b[0], b[1])), "a reference shared within a block arrives shared");

        // OScatterv / OGatherv with uneven blocks at every root.
        for (int root = 0; root < p; root++)
        {
            string[][]? sblocks = r == root ? [.. Enumerable.Range(0, p).Select(j => Enumerable.Range(0, j + root).Select(k => $"{root}:{j}:{k}").ToArray())] : null;
            string[]? mineS = c.OScatterv(sblocks, root);
            Check.Sequence<string>([.. Enumerable.Range(0, r + root).Select(k => $"{root}:{r}:{k}")], mineS, $"OScatterv of blocks from root {root}");
            int[] countsV = [.. Enumerable.Range(0, p).Select(j => (j + root) % 3)];
            int[] starts = [.. Enumerable.Range(0, p).Select(j => countsV.Take(j).Sum())];
            double[]? flat = r == root ? [.. Enumerable.Range(0, countsV.Sum()).Select(i => i + 0.5)] : null;
            double[]? slice = c.OScatterv(flat, r == root ? countsV : null, root);
            Check.Sequence<double>([.. Enumerable.Range(starts[r], countsV[r]).Select(i => i + 0.5)], slice, $"OScatterv of slices from root {root}");
            string[][]? gathered = c.OGatherv(Enumerable.Range(0, (r + root) % 3).Select(k => S(r) + k).ToArray(), root);
            if (r == root)
                for (int j = 0; j < p; j++)
                    Check.Sequence<string>([.. Enumerable.Range(0, (j + root) % 3).Select(k => S(j) + k)], gathered![j], $"OGatherv block of rank {j} at root {root}");
            else
                Check.True(gathered is null, "OGatherv gives null away from the root");
        }

        // An element that may not travel at one root: every rank throws, and the communicator goes on.
        Check.Throws<TransportException>(() => c.OScatterv<object>(r == 0 ? [.. Enumerable.Range(0, p).Select(j => new object[] { j == p - 1 ? new Untransportable() : "ok" })] : null, 0),
                                         "OScatterv of an element that may not travel");
        Check.Throws<TransportException>(() => c.OAlltoall<object>([.. Enumerable.Range(0, p).Select(j => r == p - 1 && j == 0 ? new Untransportable() : (object)j)]),
                                         "OAlltoall of an object that may not travel");
        Check.Sequence<string>([.. Enumerable.Range(0, p).Select(i => $"{i}->{r}")], c.OAlltoall([.. Enumerable.Range(0, p).Select(j => $"{r}->{j}")])!, "OAlltoall after the failures");

        // Refused before anything is sent.
        Check.Throws<ArgumentException>(() => c.OAlltoall(new int[p + 1]), "OAlltoall with a value too many");
        Check.Throws<ArgumentNullException>(() => c.OAlltoall<int>(null!), "OAlltoall without values");
        Check.Throws<ArgumentException>(() => c.OAlltoallv(new int[p][]), "OAlltoallv with null blocks");
        Check.Throws<ArgumentException>(() => c.OAlltoallv(new int[p + 1][]), "OAlltoallv with a block too many");
        Check.Throws<ArgumentNullException>(() => c.OScatterv<int>(null, r), "OScatterv without blocks at the root");
        Check.Throws<ArgumentException>(() => c.OScatterv(new int[p - 1][], r), "OScatterv with a block too few");
        Check.Throws<ArgumentException>(() => c.OScatterv(new int[3], [.. Enumerable.Repeat(2, p)], r), "OScatterv counts that do not add up to the array");
        Check.Throws<ArgumentNullException>(() => c.OScatterv(new int[3], null, r), "OScatterv without counts at the root");
        Check.Throws<ArgumentNullException>(() => c.OGatherv<int>(null!, 0), "OGatherv without a block");
    }

    /// <summary>Buffer ReduceScatter and ReduceScatterBlock across an intercommunicator: groups A = {0} and B = the rest.</summary>
    private static void InterReduceScatter(Communicator c)
    {
        int r = c.Rank, p = c.Size;
        int color = r == 0 ? 0 : 1;
        using Communicator local = c.Split(color, r)!;
        using Intercommunicator inter = Intercommunicator.Create(local, 0, c, color == 0 ? 1 : 0, 71);
        bool a = color == 0;
        int lr = local.Rank, nb = p - 1;
        // Both groups contribute vectors of n = 2 * nb elements; A's one rank gets all of B's sum,
        // B's ranks split A's vector, rank lr getting 2 elements.
        int n = 2 * nb;
        long[] send = [.. Enumerable.Range(0, n).Select(i => (long)(1000 * r + i))];
        int[] counts = a ? [n] : [.. Enumerable.Repeat(2, nb)];
        var recv = new long[a ? n : 2];
        inter.ReduceScatter(send, recv, counts, Op.Sum);
        long[] expected = a ? [.. Enumerable.Range(0, n).Select(i => Enumerable.Range(1, nb).Sum(k => 1000L * k + i))]
                            : [.. Enumerable.Range(2 * lr, 2).Select(i => (long)i)];
        Check.Sequence<long>(expected, recv, "intercommunicator ReduceScatter");
        // ReduceScatterBlock: each group sends recv.Length * (local size) elements; equal totals need
        // A's block to be n and B's 2.
        var block = new long[a ? n : 2];
        inter.ReduceScatterBlock(send, block, Op.Max);
        long[] expectMax = a ? [.. Enumerable.Range(0, n).Select(i => 1000L * nb + i)] : [.. Enumerable.Range(2 * lr, 2).Select(i => (long)i)];
        Check.Sequence<long>(expectMax, block, "intercommunicator ReduceScatterBlock");
        var iblock = new long[a ? n : 2];
        inter.IReduceScatter(send, iblock, counts, Op.Max).Wait();
        Check.Sequence<long>(expectMax, iblock, "intercommunicator IReduceScatter");
        // Refused before MPI: counts of the remote group's length, a send shorter than the block.
        Check.Throws<ArgumentException>(() => inter.ReduceScatter(send, recv, new int[inter.RemoteSize + inter.Size], Op.Sum), "counts not of the local group");
        Check.Throws<ArgumentException>(() => inter.ReduceScatterBlock(new long[1], new long[2], Op.Sum), "a send shorter than Size blocks");
        // Inside MPI: A's vector is one element longer than B's blocks add up to, so B receives
        // A's reduction into a vector too short for it; the library reports truncation at B's
        // root.  On two ranks only: with more in B, Open MPI 4.1 leaves B's other ranks waiting
        // for the root's scatter (MPICH 4.0 fails them with MPI_ERR_OTHER).
        if (p == 2)
        {
            Action mismatch = () => inter.ReduceScatter(new long[n + 1], new long[n + 1], a ? [n + 1] : counts, Op.Sum);
            if (a)
                mismatch();
            else
                Check.Throws<MessageTruncatedException>(mismatch, "ReduceScatter of a longer vector than the other group's counts");
            c.Barrier();
            inter.ReduceScatter(send, recv, counts, Op.Sum);
            Check.Sequence<long>(expected, recv, "intercommunicator ReduceScatter after the failure");
        }
        Check.Throws<NotSupportedException>(() => inter.OScan(1, (x, y) => x), "object prefix reductions need an intracommunicator");
        c.Barrier();
    }
}

/// <summary>
/// Communicator attributes (MPI-4.0 §7.7): keyvals whose copy functions decide what Dup passes
/// on and whose delete functions run on DeleteAttribute, on replacement and on Dispose (the
/// last set first), a freed keyval, throwing callbacks, the predefined attributes of World; last,
/// Shutdown deletes Self's attributes (so this scenario ends MPI in its job).
/// </summary>
internal static class CommunicatorAttributes
{
    internal static void Register(Dictionary<Scenario, Action<Communicator>> s) => s[Scenario.CommunicatorAttributes] = Run;

    private static void Run(Communicator c)
    {
        int r = c.Rank, p = c.Size;
        var log = new List<string>();
        Keyval<string> name = Communicator.CreateKeyval(Keyval<string>.DupCopy, (comm, v) => log.Add($"name {v}"));
        Keyval<int[]> depth = Communicator.CreateKeyval<int[]>(
            (Communicator src, int[] v, out int[] copy) =>
            {
                copy = [v[0] + 1, src.Size];
                return v[0] < 2; // copied into two generations of duplicates only
            },
            (comm, v) => log.Add($"depth {v[0]}"));
        Keyval<object> local = Communicator.CreateKeyval<object>(null, (comm, v) => log.Add("local"));

        Communicator d = c.Dup();
        d.SetAttribute(name, $"n{r}");
        d.SetAttribute(depth, [0]);
        d.SetAttribute(local, new object());
        Check.True(d.TryGetAttribute(name, out string? n) && n == $"n{r}", "an attribute reads back");
        Check.True(!c.TryGetAttribute(name, out _), "the communicator it was duplicated from has none");

        // Dup: name copied as is, depth by its function, local not at all.
        Communicator d1 = d.Dup();
        Check.True(d1.TryGetAttribute(name, out n) && n == $"n{r}", "DupCopy passes the value on");
        Check.True(d1.TryGetAttribute(depth, out int[]? dv) && dv is [1, var size] && size == p, "the copy function's value, with the source communicator");
        Check.True(!d1.TryGetAttribute(local, out _), "a keyval without a copy function is not copied");
        Communicator d2 = d1.Dup();
        Check.True(d2.TryGetAttribute(depth, out dv) && dv[0] == 2, "copied again");
        using (Communicator d3 = d2.Dup())
            Check.True(!d3.TryGetAttribute(depth, out _) && d3.TryGetAttribute(name, out _), "the copy function declined");
        Check.Sequence<string>([$"name n{r}"], log.ToArray(), "disposing the third duplicate deleted its one attribute");
        log.Clear();

        // Replace, delete, dispose: the delete functions run, the last set first on Dispose.
        d.SetAttribute(name, "renamed");
        Check.Sequence<string>([$"name n{r}"], log.ToArray(), "replacing deletes the old value");
        Check.True(d.DeleteAttribute(local) && !d.DeleteAttribute(local), "DeleteAttribute says whether there was one");
        log.Clear();
        d.Dispose();
        Check.Sequence<string>(["depth 0", "name renamed"], log.ToArray(), "Dispose deletes the last set first (a replaced value kept its place)");
        Check.True(d.IsDisposed, "then frees");
        log.Clear();

        // A freed keyval: no new use, but the attributes it set stay, are copied and deleted.
        name.Dispose();
        Check.Throws<ObjectDisposedException>(() => d1.SetAttribute(name, "x"), "SetAttribute with a freed keyval");
        Check.Throws<ObjectDisposedException>(() => d1.TryGetAttribute(name, out _), "TryGetAttribute with a freed keyval");
        Check.Throws<ObjectDisposedException>(() => d1.DeleteAttribute(name), "DeleteAttribute with a freed keyval");
        d2.Dispose();
        Check.Sequence<string>(["depth 2", $"name n{r}"], log.ToArray(), "a freed keyval's attribute is still deleted with its communicator");
        log.Clear();

        // A copy function that throws fails that Dup on this rank: what was copied is deleted,
        // the duplicate freed, the exception is the function's; the communicator goes on.
        Keyval<int> bad = Communicator.CreateKeyval<int>((Communicator _, int v, out int copy) => throw new InvalidDataException($"no copy {v}"),
                                                         (comm, v) => log.Add($"bad {v}"));
        d1.SetAttribute(bad, 7);
        Check.Throws<InvalidDataException>(() => d1.Dup(), "a throwing copy function fails Dup");
        Check.Sequence<string>(["depth 2", $"name n{r}"], log.ToArray(), "the attributes copied before it were deleted from the duplicate");
        log.Clear();
        Check.Equal(p, d1.Allreduce(1, Op.Sum), "the communicator goes on");

        // A delete function that throws: DeleteAttribute keeps the attribute, Dispose does not free.
        int throws = 2;
        Keyval<int> sticky = Communicator.CreateKeyval<int>(null, (comm, v) =>
        {
            if (throws-- > 0)
                throw new InvalidOperationException("not yet");
            log.Add($"sticky {v}");
        });
        d1.SetAttribute(sticky, 5);
        Check.Throws<InvalidOperationException>(() => d1.DeleteAttribute(sticky), "a throwing delete function");
        Check.True(d1.TryGetAttribute(sticky, out int sv) && sv == 5, "the attribute stays");
        Check.Throws<InvalidOperationException>(() => d1.Dispose(), "Dispose with a throwing delete function");
        Check.True(!d1.IsDisposed && d1.Allreduce(1, Op.Sum) == p, "the communicator was not freed and still works");
        d1.Dispose();
        Check.True(d1.IsDisposed, "disposed on the second try");
        Check.Sequence<string>(["sticky 5", "bad 7", "depth 1", $"name n{r}"], log.ToArray(), "then every attribute was deleted, the last set first");
        log.Clear();

        // Refused before anything: a null keyval, a disposed communicator.
        Check.Throws<ArgumentNullException>(() => c.SetAttribute<int>(null!, 1), "a null keyval");
        Check.Throws<ObjectDisposedException>(() => d1.SetAttribute(depth, [1]), "a disposed communicator");

        // Attributes of World; the predefined attributes, the same on every rank.
        c.SetAttribute(depth, [9]);
        Check.True(c.TryGetAttribute(depth, out dv) && dv[0] == 9, "World caches attributes too");
        Check.True(c.DeleteAttribute(depth), "and deletes them");
        Check.Sequence<string>(["depth 9"], log.ToArray(), "with the delete function");
        log.Clear();
        Check.True(Mpi.TagUpperBound >= 32767 / 2, "half of MPI_TAG_UB (at least 32767) is the program's");
        int global = c.Allreduce(Mpi.WtimeIsGlobal ? 1 : 0, Op.Sum);
        Check.True(global == 0 || global == p, "MPI_WTIME_IS_GLOBAL is the same on every rank");
        Check.True(Mpi.UniverseSize is null || Mpi.UniverseSize >= p, $"MPI_UNIVERSE_SIZE {Mpi.UniverseSize} is unset or at least the job's size");
        Check.Equal(0, Mpi.AppNum, "MPI_APPNUM of a one-program launch");

        // Shutdown deletes Self's attributes, the last set first (MPI-4.0 §11.2.4).
        Keyval<int> atExit = Communicator.CreateKeyval<int>(null, (comm, v) => log.Add($"exit {v} {comm == Communicator.Self}"));
        Communicator.Self.SetAttribute(atExit, 1);
        Communicator.Self.SetAttribute(sticky, 2);
        Communicator.Self.SetAttribute(atExit, 3); // replaces 1 (deleted now) in its place
        c.Barrier();
        Mpi.Shutdown();
        Check.Sequence<string>(["exit 1 True", "sticky 2", "exit 3 True"], log.ToArray(), "Shutdown deleted Self's attributes");
        Check.True(!Mpi.IsInitialized, "and then shut down");
    }
}
