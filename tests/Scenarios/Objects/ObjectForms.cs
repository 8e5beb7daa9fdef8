using System.MP;

namespace Scenarios;

/// <summary>What a program broadcasts in the symmetric form and reduces with its own function.</summary>
[Transportable]
public sealed class RunSettings
{
    [Transportable] public string Name = "";
    public int Steps;
}

/// <summary>
/// The everyday object forms: the symmetric OBcast (its result is non-null where the argument is:
/// this file compiles with nullable warnings as errors and no '!'), OSendRecv (small and chunked
/// graphs round a ring), OScatter of one element per rank, element-wise built-in operations on
/// arrays, Op.Create over a [Transportable] class, and the object collectives across an
/// intercommunicator (results from the remote group), with their refusals before anything is sent.
/// </summary>
internal static class ObjectForms
{
    internal static void Register(Dictionary<Scenario, Action<Communicator>> s)
    {
        s[Scenario.ObjectEverydayForms] = c =>
        {
            Symmetric(c);
            Elementwise(c);
            Intercomm(c);
        };
    }

    private static void Symmetric(Communicator c)
    {
        int p = c.Size, r = c.Rank, left = (r + p - 1) % p, right = (r + 1) % p;

        RunSettings run = r == 0 ? new RunSettings { Name = "root's", Steps = 5 } : new RunSettings { Name = "ignored", Steps = -1 };
        RunSettings before = run;
        run = c.OBcast(run, root: 0);
        Check.Equal("root's", run.Name, "symmetric OBcast: every rank has the root's object");
        Check.Equal(5, run.Steps, "symmetric OBcast: value field");
        Check.True(r == 0 ? ReferenceEquals(before, run) : !ReferenceEquals(before, run), "the root keeps its object, the others get a copy");

        RunSettings? got = c.OSendRecv(new RunSettings { Name = $"from {r}", Steps = r }, right, 3, left, 3, out Status st);
        Check.Equal($"from {left}", got?.Name, "OSendRecv round the ring");
        Check.Equal(left, st.Source, "OSendRecv status");
        // A graph larger than one message: its rest travels after the first chunk on both sides.
        string big = new string((char)('a' + r), 3_000_000);
        string? bigBack = c.OSendRecv(big, right, 4, left, 4);
        Check.True(bigBack is { Length: 3_000_000 } && bigBack[0] == (char)('a' + left) && bigBack[^1] == (char)('a' + left), "chunked OSendRecv");
        Check.True(c.OSendRecv<string>("x", Mpi.ProcNull, 0, Mpi.ProcNull, 0) is null, "OSendRecv with Mpi.ProcNull");

        for (int root = 0; root < p; root++)
        {
            string? mine = r == root ? c.OScatter<string>([.. Enumerable.Range(0, p).Select(i => $"e{i}/{root}")], root) : c.OScatter<string>(root);
            Check.Equal($"e{r}/{root}", mine, $"OScatter gives element r from {root}");
        }
        RunSettings?[] runs = r == 0 ? [.. Enumerable.Range(0, p).Select(i => new RunSettings { Steps = i })] : [];
        Check.Equal(r, c.OScatter(r == 0 ? runs : null, 0)?.Steps, "OScatter of [Transportable] objects");

        // Refused on the root before anything is sent (the other ranks do not call).
        long before2 = Mpi.GetStatistics().CollectiveOperations;
        if (r == 0)
        {
            Check.ThrowsNaming<ArgumentException>("values", () => c.OScatter(new string[p + 1], 0), "OScatter of not one element per rank");
            Check.ThrowsNaming<ArgumentNullException>("values", () => c.OScatter<string>(0), "OScatter at the root without elements");
        }
        Check.Throws<ArgumentException>(() => c.OAllreduce("s", Op.Create<RunSettings>((a, b) => a)), "an Op.Create over another type");
        Check.Equal(before2, Mpi.GetStatistics().CollectiveOperations, "no collective started by a refused call");
        c.Barrier();
    }

    private static void Elementwise(Communicator c)
    {
        int p = c.Size, r = c.Rank;
        int sum = p * (p - 1) / 2;
        Check.Sequence<int>([sum, 2 * sum, p], c.OAllreduce(new[] { r, 2 * r, 1 }, Op.Sum), "element-wise Sum of int[]");
        Check.Sequence<int>([0, -(p - 1)], c.OAllreduce(new[] { r, -r }, Op.Min), "element-wise Min");
        Check.Sequence<int>([p - 1, 0], c.OAllreduce(new[] { r, -r }, Op.Max), "element-wise Max");
        string[] joined = [string.Concat(Enumerable.Range(0, p).Select(i => $"a{i}")), string.Concat(Enumerable.Range(0, p).Select(i => $"b{i}"))];
        Check.Sequence<string>(joined, c.OAllreduce(new[] { $"a{r}", $"b{r}" }, Op.Sum), "element-wise Sum of string[] concatenates each position in rank order");
        double[][] nested = c.OReduce(new[] { new[] { 1.0, r }, new[] { 0.5 } }, Op.Sum, 0)!;
        if (r == 0)
        {
            Check.Sequence<double>([p, sum], nested[0], "element-wise Sum two levels down");
            Check.Sequence<double>([0.5 * p], nested[1], "element-wise Sum two levels down, second row");
        }
        // Arrays of different lengths: the combining rank's operation throws, every rank learns it.
        if (p > 1)
        {
            Check.Throws<MpiException>(() => c.OAllreduce(new int[r + 1], Op.Sum), "element-wise Sum of arrays of different lengths");
            Check.Equal(p, c.OAllreduce(1, Op.Sum), "the communicator goes on");
        }

        // Op.Create over a [Transportable] class: the object reductions fold with it in rank order.
        Op merge = Op.Create<RunSettings>((a, b) => new RunSettings { Name = a.Name + b.Name, Steps = a.Steps + b.Steps }, commutative: false);
        string names = string.Concat(Enumerable.Range(0, p).Select(i => $"<{i}>"));
        RunSettings? total = c.OAllreduce(new RunSettings { Name = $"<{r}>", Steps = r }, merge);
        Check.Equal(names, total?.Name, "OAllreduce with Op.Create over a class");
        Check.Equal(sum, total?.Steps, "OAllreduce with Op.Create over a class: value field");
        RunSettings? atRoot = c.OReduce(new RunSettings { Name = $"<{r}>", Steps = r }, merge, p - 1);
        Check.Equal(r == p - 1 ? names : null, atRoot?.Name, "OReduce with Op.Create over a class");
        Check.Equal(p, c.OAllreduce(1L, Op.Create<long>((a, b) => a + b)) is long n ? (int)n : -1, "Op.Create over an unmanaged type still reduces objects");
        var buffer = new long[1];
        c.Allreduce([1L], buffer, Op.Create<long>((a, b) => a + b));
        Check.Equal((long)p, buffer[0], "and buffers");
    }

    /// <summary>Rank 0 against the rest: every object collective gives what the remote group sent.</summary>
    private static void Intercomm(Communicator c)
    {
        int p = c.Size, r = c.Rank;
        int color = r == 0 ? 0 : 1;
        using Communicator local = c.Split(color, r)!;
        using Intercommunicator inter = Intercommunicator.Create(local, 0, c, color == 0 ? 1 : 0, 45);
        int lr = local.Rank, size = local.Size, remote = inter.RemoteSize, other = 1 - color;
        string Tag(int g, int i) => $"g{g}r{i}";

        Check.Sequence<string>([.. Enumerable.Range(0, remote).Select(i => Tag(other, i))], inter.OAllgather(new[] { Tag(color, lr) }),
                               "OAllgather across");
        string?[] fromEach = inter.OAlltoall([.. Enumerable.Range(0, remote).Select(j => $"{Tag(color, lr)}->{j}")]);
        Check.Sequence<string>([.. Enumerable.Range(0, remote).Select(i => $"{Tag(other, i)}->{lr}")], [.. fromEach.Select(x => x ?? "null")], "OAlltoall across");
        int[][] blocks = inter.OAlltoallv([.. Enumerable.Range(0, remote).Select(j => Enumerable.Repeat(100 * lr + j, j + 1).ToArray())]);
        for (int i = 0; i < remote; i++)
            Check.Sequence<int>([.. Enumerable.Repeat(100 * i + lr, lr + 1)], blocks[i], $"OAlltoallv across from {i}");

        Func<string, string, string> join = (a, b) => a + "|" + b;
        string remoteFold = string.Join("|", Enumerable.Range(0, remote).Select(i => Tag(other, i)));
        Check.Equal(remoteFold, inter.OAllreduce(Tag(color, lr), join), "OAllreduce across: the remote group's values in rank order");
        for (int rootGroup = 0; rootGroup < 2; rootGroup++)
        {
            int root = color == rootGroup ? (lr == 0 ? Mpi.Root : Mpi.ProcNull) : 0;
            string? got = inter.OReduce(Tag(color, lr), join, root);
            Check.Equal(root == Mpi.Root ? remoteFold : null, got, $"OReduce across to group {rootGroup}");
        }
        int[] sums = inter.OAllreduce(new[] { lr, 1 }, Op.Sum)!;
        Check.Sequence<int>([remote * (remote - 1) / 2, remote], sums, "element-wise OAllreduce across");

        // ReduceScatter: both groups' counts add up to n; A (one rank) gets all of B's sum, B's
        // ranks split A's array, two elements each.
        int n = 2 * (p - 1);
        int[] counts = color == 0 ? [n] : [.. Enumerable.Repeat(2, size)];
        long[] values = [.. Enumerable.Range(0, n).Select(i => 1000L * r + i)];
        long[] mine = inter.OReduceScatter(values, counts, Op.Sum);
        long[] expected = color == 0 ? [.. Enumerable.Range(0, n).Select(i => Enumerable.Range(1, p - 1).Sum(k => 1000L * k + i))]
                                     : [.. Enumerable.Range(2 * lr, 2).Select(i => (long)i)];
        Check.Sequence<long>(expected, mine, "OReduceScatter across");

        long before = Mpi.GetStatistics().CollectiveOperations;
        Check.ThrowsNaming<ArgumentException>("values", () => inter.OAlltoall(new string[remote + 1]), "OAlltoall across with not one value per remote rank");
        Check.ThrowsNaming<ArgumentException>("values", () => inter.OReduceScatter(new long[n + 1], counts, Op.Sum), "OReduceScatter across with the wrong length");
        Check.Equal(before, Mpi.GetStatistics().CollectiveOperations, "no collective started by a refused call");
        c.Barrier();
    }
}
