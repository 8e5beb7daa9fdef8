using System.MP;

namespace Scenarios;

/// <summary>
/// The v-collectives without displacements (blocks packed in rank or neighbour order) and with
/// null where MPI ignores an argument, in their blocking, nonblocking, persistent and neighborhood
/// forms; the intercommunicator roots without placeholder buffers; and their refusals before
/// anything is sent.  Rank r contributes r + 1 elements, so every block has its own length.
/// </summary>
internal static class VectorDefaults
{
    internal static void Register(Dictionary<Scenario, Action<Communicator>> s)
    {
        s[Scenario.CollVectorDefaults] = c =>
        {
            Packed(c);
            Neighbors(c);
            Refusals(c);
        };
        s[Scenario.CollInterRootsWithoutBuffers] = InterRoots;
        s[Scenario.CollSlicesInPlace] = SlicesInPlace;
    }

    private static int[] Block(int r) => [.. Enumerable.Range(0, r + 1).Select(k => 100 * r + k)];

    private static int[] Counts(int p) => [.. Enumerable.Range(1, p)];

    private static int[] All(int p) => [.. Enumerable.Range(0, p).SelectMany(Block)];

    private static bool PersistentExpected() => !Mpi.LibraryVersion.StartsWith("Open MPI v4", StringComparison.Ordinal);

    private static void Packed(Communicator c)
    {
        int p = c.Size, r = c.Rank;
        int[] mine = Block(r), counts = Counts(p), all = All(p);

        var recv = new int[all.Length];
        c.Allgatherv(mine, recv, counts);
        Check.Sequence<int>(all, recv, "Allgatherv packed");
        Array.Clear(recv);
        c.Allgatherv(mine, recv, counts, null);
        Check.Sequence<int>(all, recv, "Allgatherv with null displacements");
        Array.Clear(recv);
        c.IAllgatherv(mine, recv, counts).Wait();
        Check.Sequence<int>(all, recv, "IAllgatherv packed");

        for (int root = 0; root < p; root++)
        {
            bool atRoot = r == root;
            int[]? got = atRoot ? new int[all.Length] : null;
            // Off the root everything but send is null: no placeholders.
            c.Gatherv(mine, got, atRoot ? counts : null, root);
            if (atRoot)
                Check.Sequence<int>(all, got, $"Gatherv packed at {root}");
            got = atRoot ? new int[all.Length] : null;
            c.Gatherv(mine, got, atRoot ? counts : null, null, root);
            if (atRoot)
                Check.Sequence<int>(all, got, $"Gatherv with nulls at {root}");
            got = atRoot ? new int[all.Length] : null;
            c.IGatherv(mine, got, atRoot ? counts : null, root).Wait();
            if (atRoot)
                Check.Sequence<int>(all, got, $"IGatherv packed at {root}");

            // Scatterv: off the root counts may be null (recv's length is the block).
            var block = new int[r + 1];
            c.Scatterv(atRoot ? all : null, atRoot ? counts : null, block, root);
            Check.Sequence<int>(mine, block, $"Scatterv packed from {root}");
            Array.Clear(block);
            c.Scatterv(atRoot ? all : null, atRoot ? counts : null, null, block, root);
            Check.Sequence<int>(mine, block, $"Scatterv with nulls from {root}");
            Array.Clear(block);
            c.IScatterv(atRoot ? all : null, counts, block, root).Wait();
            Check.Sequence<int>(mine, block, $"IScatterv packed from {root}");
        }

        // Alltoallv: rank r sends r + j + 1 elements to rank j.
        int[] sendCounts = [.. Enumerable.Range(0, p).Select(j => r + j + 1)];
        int[] recvCounts = [.. Enumerable.Range(0, p).Select(i => i + r + 1)];
        int[] send = [.. Enumerable.Range(0, p).SelectMany(j => Enumerable.Range(0, r + j + 1).Select(k => 1000 * r + 10 * j + k))];
        int[] expected = [.. Enumerable.Range(0, p).SelectMany(i => Enumerable.Range(0, i + r + 1).Select(k => 1000 * i + 10 * r + k))];
        var incoming = new int[expected.Length];
        c.Alltoallv(send, sendCounts, incoming, recvCounts);
        Check.Sequence<int>(expected, incoming, "Alltoallv packed");
        Array.Clear(incoming);
        c.Alltoallv(send, sendCounts, null, incoming, recvCounts, null);
        Check.Sequence<int>(expected, incoming, "Alltoallv with null displacements");
        Array.Clear(incoming);
        c.IAlltoallv(send, sendCounts, incoming, recvCounts).Wait();
        Check.Sequence<int>(expected, incoming, "IAlltoallv packed");

        if (!PersistentExpected())
            return;
        using (PersistentRequest pr = c.AllgathervInit(mine, recv, counts))
        {
            Array.Clear(recv);
            pr.Start();
            pr.Wait();
            Check.Sequence<int>(all, recv, "AllgathervInit packed");
        }
        using (PersistentRequest pr = c.AlltoallvInit(send, sendCounts, incoming, recvCounts))
        {
            Array.Clear(incoming);
            pr.Start();
            pr.Wait();
            Check.Sequence<int>(expected, incoming, "AlltoallvInit packed");
        }
        int[]? gathered = r == 0 ? new int[all.Length] : null;
        using (PersistentRequest pr = c.GathervInit(mine, gathered, r == 0 ? counts : null, 0))
        {
            pr.Start();
            pr.Wait();
            if (r == 0)
                Check.Sequence<int>(all, gathered, "GathervInit packed");
        }
        var scattered = new int[r + 1];
        using (PersistentRequest pr = c.ScattervInit(r == 0 ? all : null, r == 0 ? counts : null, scattered, 0))
        {
            pr.Start();
            pr.Wait();
            Check.Sequence<int>(mine, scattered, "ScattervInit packed");
        }
    }

    /// <summary>
    /// A line of ranks, not periodic (on a periodic extent of 2 both neighbours are one rank, whose
    /// two messages MPI libraries match in different orders): sources and destinations are
    /// [left, right], Mpi.ProcNull past an end, whose blocks are neither sent nor written.  Rank r
    /// sends d + 1 elements to destination d, so it gets 2 from its left (that rank's destination 1)
    /// and 1 from its right.
    /// </summary>
    private static void Neighbors(Communicator c)
    {
        int p = c.Size, r = c.Rank;
        using CartesianCommunicator line = c.CreateCartesian([p], [false])!;
        int left = line.Sources[0], right = line.Sources[1];
        int[] mine = [10 * r + 1, 10 * r + 2];
        int[] From(int rank, params int[] values) => rank == Mpi.ProcNull ? new int[values.Length] : values;
        int[] expectGather = [.. From(left, 10 * left + 1, 10 * left + 2), .. From(right, 10 * right + 1, 10 * right + 2)];
        var gathered = new int[4];
        line.NeighborAllgatherv(mine, gathered, [2, 2]);
        Check.Sequence<int>(expectGather, gathered, "NeighborAllgatherv packed");
        Array.Clear(gathered);
        line.INeighborAllgatherv(mine, gathered, [2, 2]).Wait();
        Check.Sequence<int>(expectGather, gathered, "INeighborAllgatherv packed");

        int[] send = [100 * r + 1, 100 * r + 10, 100 * r + 11];
        int[] expected = [.. From(left, 100 * left + 10, 100 * left + 11), .. From(right, 100 * right + 1)];
        var recv = new int[3];
        line.NeighborAlltoallv(send, [1, 2], recv, [2, 1]);
        Check.Sequence<int>(expected, recv, "NeighborAlltoallv packed");
        Array.Clear(recv);
        line.INeighborAlltoallv(send, [1, 2], recv, [2, 1]).Wait();
        Check.Sequence<int>(expected, recv, "INeighborAlltoallv packed");
        if (!PersistentExpected())
            return;
        using (PersistentRequest pr = line.NeighborAlltoallvInit(send, [1, 2], recv, [2, 1]))
        {
            Array.Clear(recv);
            pr.Start();
            pr.Wait();
            Check.Sequence<int>(expected, recv, "NeighborAlltoallvInit packed");
        }
        using (PersistentRequest pr = line.NeighborAllgathervInit(mine, gathered, [2, 2]))
        {
            Array.Clear(gathered);
            pr.Start();
            pr.Wait();
            Check.Sequence<int>(expectGather, gathered, "NeighborAllgathervInit packed");
        }
    }

    /// <summary>
    /// Alltoall and Alltoallv over slices of larger arrays (the elements around them untouched) and
    /// Allreduce in place (MPI_IN_PLACE), of a whole array, of a slice and with a user operation.
    /// </summary>
    private static void SlicesInPlace(Communicator c)
    {
        int p = c.Size, r = c.Rank;
        const int pad = 3, sentinel = -9;
        // Alltoall: blocks of 2; the slices start at pad in arrays with pad sentinels on each side.
        int[] send = [.. Enumerable.Repeat(sentinel, pad), .. Enumerable.Range(0, 2 * p).Select(k => 100 * r + k), .. Enumerable.Repeat(sentinel, pad)];
        int[] recv = [.. Enumerable.Repeat(sentinel, 2 * p + 2 * pad)];
        c.Alltoall(send.AsSpan(pad, 2 * p), recv.AsSpan(pad, 2 * p));
        int[] expected = [.. Enumerable.Range(0, p).SelectMany(i => new[] { 100 * i + 2 * r, 100 * i + 2 * r + 1 })];
        Check.Sequence<int>(expected, recv.AsSpan(pad, 2 * p), "Alltoall over slices");
        Check.True(recv.AsSpan(0, pad).IndexOfAnyExcept(sentinel) < 0 && recv.AsSpan(pad + 2 * p).IndexOfAnyExcept(sentinel) < 0,
                   "Alltoall leaves the elements around the slice alone");

        // Alltoallv over slices, packed: rank r sends j + 1 elements to rank j.
        int[] sendCounts = [.. Enumerable.Range(1, p)];
        int[] recvCounts = [.. Enumerable.Repeat(r + 1, p)];
        int[] vsend = [.. Enumerable.Repeat(sentinel, pad), .. Enumerable.Range(0, p).SelectMany(j => Enumerable.Repeat(10 * r + j, j + 1))];
        int[] vrecv = [.. Enumerable.Repeat(sentinel, pad + p * (r + 1) + pad)];
        c.Alltoallv(vsend.AsSpan(pad), sendCounts, null, vrecv.AsSpan(pad, p * (r + 1)), recvCounts, null);
        Check.Sequence<int>([.. Enumerable.Range(0, p).SelectMany(i => Enumerable.Repeat(10 * i + r, r + 1))], vrecv.AsSpan(pad, p * (r + 1)),
                            "Alltoallv over slices, packed");
        Check.True(vrecv.AsSpan(0, pad).IndexOfAnyExcept(sentinel) < 0 && vrecv.AsSpan(pad + p * (r + 1)).IndexOfAnyExcept(sentinel) < 0,
                   "Alltoallv leaves the elements around the slice alone");

        double[] values = [r, 2.0 * r, 1];
        c.Allreduce(values, Op.Sum);
        double sum = p * (p - 1) / 2.0;
        Check.Sequence<double>([sum, 2 * sum, p], values, "Allreduce in place");
        long[] row = [sentinel, r, r + 1, sentinel];
        c.Allreduce(row.AsSpan(1, 2), Op.Max);
        Check.Sequence<long>([sentinel, p - 1, p, sentinel], row, "Allreduce in place over a slice");
        int[] user = [r + 1];
        c.Allreduce(user, Op.Create<int>((a, b) => a * b));
        Check.Equal(Enumerable.Range(1, p).Aggregate(1, (a, b) => a * b), user[0], "Allreduce in place with a user operation");

        long before = Mpi.GetStatistics().CollectiveOperations;
        Check.ThrowsNaming<ArgumentException>("recv", () => c.Alltoall(send.AsSpan(0, 2 * p), send.AsSpan(1, 2 * p)), "Alltoall over overlapping slices");
        Check.ThrowsNaming<ArgumentException>("send", () => c.Alltoall(send.AsSpan(0, 2 * p + 1), recv), "Alltoall over a slice of no whole blocks");
        Check.ThrowsNaming<ArgumentException>("recv", () => c.Alltoall(send.AsSpan(0, 2 * p), recv.AsSpan(0, 2 * p - 1)), "Alltoall into a short slice");
        Check.ThrowsNaming<ArgumentException>("recvCounts", () => c.Alltoallv(vsend, sendCounts, null, vrecv.AsSpan(0, 1), recvCounts, null), "Alltoallv into a short slice");
        Check.ThrowsNaming<ArgumentNullException>("buffer", () => c.Allreduce((int[])null!, Op.Sum), "Allreduce in place of null");
        Check.Equal(before, Mpi.GetStatistics().CollectiveOperations, "no collective started by a refused call");
        c.Barrier();
    }

    /// <summary>What the new forms refuse, on the rank that passed it, before any collective starts.</summary>
    private static void Refusals(Communicator c)
    {
        int p = c.Size, r = c.Rank;
        int[] mine = Block(r), counts = Counts(p);
        long before = Mpi.GetStatistics().CollectiveOperations;
        Check.ThrowsNaming<ArgumentNullException>("counts", () => c.Gatherv(mine, new int[100], null, r), "Gatherv at the root without counts");
        Check.ThrowsNaming<ArgumentNullException>("counts", () => c.Scatterv(new int[100], null, new int[r + 1], r), "Scatterv at the root without counts");
        Check.ThrowsNaming<ArgumentNullException>("counts", () => c.Allgatherv(mine, new int[100], null!), "Allgatherv without counts");
        // Packed blocks past the end of the buffer name the counts (there are no displacements to blame).
        Check.ThrowsNaming<ArgumentException>("counts", () => c.Allgatherv(mine, new int[All(p).Length - 1], counts), "packed blocks past recv");
        Check.ThrowsNaming<ArgumentException>("counts", () => c.Gatherv(mine, new int[All(p).Length - 1], counts, r), "packed Gatherv blocks past recv");
        int[] negative = [.. counts];
        negative[0] = -1;
        Check.ThrowsNaming<ArgumentException>("recvCounts", () => c.Alltoallv(new int[100], counts, new int[100], negative), "a negative packed count");
        Check.ThrowsNaming<ArgumentException>("counts", () => c.Allgatherv(mine, new int[100], [.. counts.Select(_ => int.MaxValue / 2 + 1)]),
                                             "packed displacements past int.MaxValue");
        Check.ThrowsNaming<ArgumentNullException>("buffer", () => c.Bcast<int>(null, 0), "Bcast of null on an intracommunicator");
        Check.ThrowsNaming<ArgumentNullException>("send", () => c.Reduce<int>(null, new int[1], Op.Sum, 0), "Reduce of null on an intracommunicator");
        Check.Equal(before, Mpi.GetStatistics().CollectiveOperations, "no collective started by a refused call");
        c.Barrier();
    }

    /// <summary>
    /// An intercommunicator between rank 0 and the rest: the root group's ranks pass no send
    /// buffer to Reduce, Gatherv and Scatterv, and the ranks at Mpi.ProcNull no buffer to Bcast.
    /// </summary>
    private static void InterRoots(Communicator c)
    {
        int p = c.Size, r = c.Rank;
        int color = r == 0 ? 0 : 1;
        using Communicator local = c.Split(color, r)!;
        using Intercommunicator inter = Intercommunicator.Create(local, 0, c, color == 0 ? 1 : 0, 44);
        int lr = local.Rank, remote = inter.RemoteSize;
        // Group 1 (ranks 1..p-1) reduces into group 1's rank 0 from group 0 ... and the other way round.
        for (int rootGroup = 0; rootGroup < 2; rootGroup++)
        {
            bool inRootGroup = color == rootGroup;
            int root = inRootGroup ? (lr == 0 ? Mpi.Root : Mpi.ProcNull) : 0;
            int n = 3;
            long[]? sum = root == Mpi.Root ? new long[n] : null;
            c.Barrier();
            inter.Reduce(inRootGroup ? null : [.. Enumerable.Range(0, n).Select(i => 10L * r + i)], sum, Op.Sum, root);
            if (root == Mpi.Root)
            {
                int[] senders = [.. Enumerable.Range(0, p).Where(k => (k == 0 ? 0 : 1) != rootGroup)];
                Check.Sequence<long>([.. Enumerable.Range(0, n).Select(i => senders.Sum(k => 10L * k + i))], sum, "intercommunicator Reduce with no send at the root");
            }
            inter.IReduce(inRootGroup ? null : new long[n], sum, Op.Sum, root).Wait();

            int[]? data = root == Mpi.Root ? [7, 8, 9] : inRootGroup ? null : new int[3];
            inter.Bcast(data, root);
            if (!inRootGroup)
                Check.Sequence<int>([7, 8, 9], data, "intercommunicator Bcast across");
            inter.IBcast(root == Mpi.ProcNull ? null : data, root).Wait();

            // Gatherv/Scatterv: the root group sends nothing, ProcNull ranks pass only nulls.
            int[] remoteCounts = [.. Enumerable.Range(1, remote)];
            int[]? all = root == Mpi.Root ? new int[remoteCounts.Sum()] : null;
            inter.Gatherv(inRootGroup ? null : Block(lr), all, root == Mpi.Root ? remoteCounts : null, root);
            if (root == Mpi.Root)
                Check.Sequence<int>(All(remote), all, "intercommunicator Gatherv packed");
            var block = inRootGroup ? null : new int[lr + 1];
            inter.Scatterv(root == Mpi.Root ? All(remote) : null, root == Mpi.Root ? remoteCounts : null, block, root);
            if (!inRootGroup)
                Check.Sequence<int>(Block(lr), block, "intercommunicator Scatterv packed");
        }
        c.Barrier();
    }
}
