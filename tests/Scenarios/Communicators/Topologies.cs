using System.MP;
using System.Runtime;
using static Scenarios.Heap;

namespace Scenarios;

/// <summary>
/// Graph and distributed-graph topologies and the neighborhood collectives (TopologyCommunicator):
/// queries against the graphs the scenario built, every collective in its blocking, nonblocking and
/// persistent form checked value by value on Cartesian, graph and distributed-graph communicators,
/// misuse refused before MPI, and an error raised inside MPI.  Two ranks; TopologyDirected on three
/// or more.
/// </summary>
internal static class Topologies
{
    internal static void Register(Dictionary<Scenario, Action<Communicator>> s)
    {
        s[Scenario.TopologyGraphs] = c =>
        {
            Queries(c);
            Misuse(c);
        };
        s[Scenario.TopologyNeighborhood] = Neighborhood;
        s[Scenario.TopologyDirected] = Directed;
    }

    private static bool PersistentExpected() => !Mpi.LibraryVersion.StartsWith("Open MPI v4", StringComparison.Ordinal);

    // ---- queries ----

    private static void Queries(Communicator c)
    {
        int n = c.Size, me = c.Rank;
        Check.Equal(Topology.None, c.Topology, "world has no topology");

        // A ring, periodic: two neighbours per rank, 2·n edge entries in all.
        using (CartesianCommunicator ring = c.CreateCartesian([n], [true])!)
        {
            Check.Equal(Topology.Cartesian, ring.Topology, "ring topology");
            Check.Equal(2, ring.InDegree, "ring in-degree");
            Check.Sequence<int>([(me + n - 1) % n, (me + 1) % n], ring.Sources.ToArray(), "ring sources");
            Check.Sequence<int>(ring.Sources.ToArray(), ring.Neighbors.ToArray(), "periodic: every source is a neighbour");
            Check.Equal(2 * n, ring.NumEdges, "ring edge entries");
            using Communicator dup = ring.Dup();
            Check.True(dup is CartesianCommunicator { NumEdges: var e } && e == 2 * n, "a Dup keeps the Cartesian class");
        }
        // A line (not periodic) by a column of one: ProcNull past the ends, and NumEdges equals the
        // sum of every rank's neighbour count.
        using (CartesianCommunicator line = c.CreateCartesian([n, 1], [false, false])!)
        {
            int[] expected = [me > 0 ? me - 1 : Mpi.ProcNull, me < n - 1 ? me + 1 : Mpi.ProcNull, Mpi.ProcNull, Mpi.ProcNull];
            Check.Sequence<int>(expected, line.Sources.ToArray(), "line sources with ProcNull");
            Check.Sequence<int>(expected.Where(r => r != Mpi.ProcNull).ToArray(), line.Neighbors.ToArray(), "line neighbours");
            var sum = new int[1];
            line.Allreduce([line.Neighbors.Count], sum, Op.Sum);
            Check.Equal(sum[0], line.NumEdges, "NumEdges is the sum of the neighbour counts");
            Check.Equal(2 * (n - 1), line.NumEdges, "line edge entries");
        }

        // A graph: a ring of undirected edges, plus a self-loop on rank 0.
        (int[] index, int[] edges) = RingGraph(n);
        using (GraphCommunicator g = c.CreateGraph(index, edges)!)
        {
            Check.Equal(Topology.Graph, g.Topology, "graph topology");
            Check.Sequence<int>(index, g.Index.ToArray(), "graph index");
            Check.Sequence<int>(edges, g.Edges.ToArray(), "graph edges");
            Check.Equal(edges.Length, g.NumEdges, "graph edge entries");
            for (int r = 0; r < n; r++)
                Check.Sequence<int>(edges[(r == 0 ? 0 : index[r - 1])..index[r]], g.NeighborsOf(r), $"neighbours of {r}");
            Check.Sequence<int>(g.NeighborsOf(me), g.Neighbors.ToArray(), "own neighbours");
            Check.Equal(g.Neighbors.Count, g.InDegree, "graph degree");
            using Communicator dup = g.Dup();
            Check.True(dup is GraphCommunicator { NumEdges: var e } && e == edges.Length, "a Dup keeps the graph class");
        }
        // The same graph from adjacency lists: MPI stores the index and edges they make.
        int[][] lists = Enumerable.Range(0, n).Select(r => edges[(r == 0 ? 0 : index[r - 1])..index[r]]).ToArray();
        using (GraphCommunicator g = c.CreateGraph(lists)!)
        {
            Check.Sequence<int>(index, g.Index.ToArray(), "adjacency lists: index");
            Check.Sequence<int>(edges, g.Edges.ToArray(), "adjacency lists: edges");
            Check.Sequence<int>(lists[me], g.Neighbors.ToArray(), "adjacency lists: own neighbours");
        }
        // A node without neighbours (an empty list) beside one with two.
        using (GraphCommunicator g = c.CreateGraph([[], .. Enumerable.Range(1, n - 1).Select(r => new[] { 0, 0 })])!)
        {
            Check.Sequence<int>(me == 0 ? [] : [0, 0], g.Neighbors.ToArray(), "adjacency lists: an empty list, a neighbour listed twice");
            Check.Equal(2 * (n - 1), g.NumEdges, "adjacency lists: edge entries");
        }

        // A ring seen through Neighbors (CartesianCommunicator's example): on a periodic extent of 2
        // the other rank is the neighbour behind and ahead, listed twice, and each side is its own
        // block of a neighborhood collective (MPI-4.0 §8.6).
        using (CartesianCommunicator ring = c.CreateCartesian([n], [true])!)
        {
            int behind = (me + n - 1) % n, ahead = (me + 1) % n;
            Check.Sequence<int>([behind, ahead], ring.Neighbors.ToArray(), "ring neighbours, behind then ahead");
            if (n == 2)
                Check.Sequence<int>([1 - me, 1 - me], ring.Neighbors.ToArray(), "extent 2: the other rank twice");
            int[] got = new int[2];
            ring.NeighborAlltoall([10 * me, 10 * me + 1], got, 1);
            Check.Sequence<int>([10 * behind + 1, 10 * ahead], got,
                "block 0 from the rank behind (what it sent ahead), block 1 from the rank ahead (what it sent back)");
            int[] all = new int[2];
            ring.NeighborAllgather([me], all);
            Check.Sequence<int>([behind, ahead], all, "allgather: one block per side");
        }

        // A graph over fewer ranks than the communicator: the others get null.
        using (GraphCommunicator? one = c.CreateGraph([1], [0]))
        {
            Check.Equal(me == 0, one is not null, "a one-node graph includes rank 0 only");
            if (one is not null)
                Check.Sequence<int>([0], one.Neighbors.ToArray(), "a self-loop");
        }

        // Distributed graphs: unweighted, weighted, and from edges given by one rank.
        int left = (me + n - 1) % n, right = (me + 1) % n;
        using (DistributedGraphCommunicator d = c.CreateDistributedGraphAdjacent([left], [right]))
        {
            Check.Equal(Topology.DistributedGraph, d.Topology, "dist graph topology");
            Check.True(!d.IsWeighted && d.SourceWeights is null && d.DestinationWeights is null, "unweighted");
            Check.Sequence<int>([left], d.Sources.ToArray(), "adjacent sources");
            Check.Sequence<int>([right], d.Destinations.ToArray(), "adjacent destinations");
        }
        using (DistributedGraphCommunicator d = c.CreateDistributedGraphAdjacent([left], [10 + left], [right], [10 + me]))
        {
            Check.True(d.IsWeighted, "weighted");
            Check.Sequence<int>([10 + left], d.SourceWeights!.ToArray(), "source weights");
            Check.Sequence<int>([10 + me], d.DestinationWeights!.ToArray(), "destination weights");
            using Communicator dup = d.Dup();
            Check.True(dup is DistributedGraphCommunicator { IsWeighted: true }, "a Dup keeps the dist-graph class and its weights");
        }
        using (DistributedGraphCommunicator d = me == 0
                   ? c.CreateDistributedGraph(Enumerable.Range(0, n).ToArray(), Enumerable.Repeat(1, n).ToArray(),
                                              Enumerable.Range(0, n).Select(r => (r + 1) % n).ToArray(),
                                              Enumerable.Range(0, n).Select(r => 100 + r).ToArray())
                   : c.CreateDistributedGraph([], [], [], []))
        {
            Check.Sequence<int>([left], d.Sources.ToArray(), "edges given by rank 0: sources");
            Check.Sequence<int>([right], d.Destinations.ToArray(), "edges given by rank 0: destinations");
            Check.Sequence<int>([100 + left], d.SourceWeights!.ToArray(), "edges given by rank 0: weights");
        }
    }

    /// <summary>An undirected ring (both directions listed) and a self-loop on node 0.</summary>
    private static (int[] Index, int[] Edges) RingGraph(int n)
    {
        var edges = new List<int>();
        var index = new int[n];
        for (int r = 0; r < n; r++)
        {
            if (r == 0)
                edges.Add(0);
            foreach (int nb in new[] { (r + n - 1) % n, (r + 1) % n }.Distinct())
                if (nb != r)
                    edges.Add(nb);
            index[r] = edges.Count;
        }
        return (index, edges.ToArray());
    }

    // ---- neighborhood collectives ----

    private static void Neighborhood(Communicator c)
    {
        int n = c.Size, me = c.Rank;
        using (CartesianCommunicator line = c.CreateCartesian([n, 1], [false, false])!)
            Exercise(line, "line");
        (int[] index, int[] edges) = RingGraph(n);
        using (GraphCommunicator g = c.CreateGraph(index, edges)!)
            Exercise(g, "graph");
        // Rank 0 also receives from itself; every rank sends to the next one.
        int[] sources = me == 0 ? [n - 1, 0] : [me - 1];
        int[] destinations = me == 0 ? [0, 1 % n] : [(me + 1) % n];
        using (DistributedGraphCommunicator d = c.CreateDistributedGraphAdjacent(sources, destinations))
            Exercise(d, "dist graph");
        // Nonblocking forms with arrays the GC moves (library mode) or registers (motor): the
        // request keeps the counts and the arrays until completion, even with a collection between.
        using (DistributedGraphCommunicator d = c.CreateDistributedGraphAdjacent(sources, destinations))
            Nonblocking(d);
    }

    private static int Value(int rank, int block, int i) => rank * 10000 + block * 100 + i;

    /// <summary>Where each source's data comes from: the index of this rank in that source's destinations.</summary>
    private static int[] SenderBlocks(TopologyCommunicator t)
    {
        // Every rank's destinations, gathered (the graph as MPI stored it).
        var degrees = new int[t.Size];
        t.Allgather([t.OutDegree], degrees);
        var displs = new int[t.Size];
        for (int r = 1; r < t.Size; r++)
            displs[r] = displs[r - 1] + degrees[r - 1];
        var all = new int[Math.Max(1, displs[^1] + degrees[^1])];
        t.Allgatherv(t.Destinations.ToArray(), all, degrees, displs);
        // The k-th edge from s to this rank is the k-th occurrence of this rank in s's list (MPI-4.0 §8.6).
        var blocks = new int[t.InDegree];
        for (int j = 0; j < t.InDegree; j++)
        {
            int s = t.Sources[j];
            if (s == Mpi.ProcNull)
            {
                blocks[j] = -1;
                continue;
            }
            int k = 0;
            for (int q = 0; q < j; q++)
                k += t.Sources[q] == s ? 1 : 0;
            int m = 0, seen = -1;
            for (; m < degrees[s]; m++)
                if (all[displs[s] + m] == t.Rank && ++seen == k)
                    break;
            blocks[j] = m;
        }
        return blocks;
    }

    private static int Length(int rank, int block) => 1 + (rank + 2 * block) % 3;

    private static void Exercise(TopologyCommunicator t, string what)
    {
        int me = t.Rank, inDeg = t.InDegree, outDeg = t.OutDegree;
        int[] from = SenderBlocks(t);
        const int count = 3, sentinel = -7;

        // Allgather: each source's one block.
        int[] mine = Enumerable.Range(0, count).Select(i => Value(me, 0, i)).ToArray();
        int[] ExpectAllgather(int[] lengths, int[] displs, int size)
        {
            var e = Enumerable.Repeat(sentinel, size).ToArray();
            for (int j = 0; j < inDeg; j++)
                if (from[j] >= 0)
                    for (int i = 0; i < lengths[j]; i++)
                        e[displs[j] + i] = Value(t.Sources[j], 0, i);
            return e;
        }
        int[] eq = Enumerable.Repeat(count, inDeg).ToArray(), eqDispls = Enumerable.Range(0, inDeg).Select(j => j * count).ToArray();
        var recv = Enumerable.Repeat(sentinel, inDeg * count).ToArray();
        t.NeighborAllgather(mine, recv);
        Check.Sequence<int>(ExpectAllgather(eq, eqDispls, recv.Length), recv, $"{what}: NeighborAllgather");
        Array.Fill(recv, sentinel);
        t.INeighborAllgather(mine, recv).Wait();
        Check.Sequence<int>(ExpectAllgather(eq, eqDispls, recv.Length), recv, $"{what}: INeighborAllgather");

        // Allgatherv: each rank sends Length(rank, 0) elements; blocks laid out with a gap of one.
        int[] vMine = mine.AsSpan(0, Length(me, 0)).ToArray();
        int[] vCounts = new int[inDeg], vDispls = new int[inDeg];
        for (int j = 0, at = 1; j < inDeg; j++)
        {
            vCounts[j] = from[j] >= 0 ? Length(t.Sources[j], 0) : 0;
            vDispls[j] = at;
            at += vCounts[j] + 1;
        }
        int vSize = inDeg == 0 ? 1 : vDispls[^1] + vCounts[^1] + 1;
        var vRecv = Enumerable.Repeat(sentinel, vSize).ToArray();
        t.NeighborAllgatherv(vMine, vRecv, vCounts, vDispls);
        Check.Sequence<int>(ExpectAllgather(vCounts, vDispls, vSize), vRecv, $"{what}: NeighborAllgatherv");
        Array.Fill(vRecv, sentinel);
        t.INeighborAllgatherv(vMine, vRecv, vCounts, vDispls).Wait();
        Check.Sequence<int>(ExpectAllgather(vCounts, vDispls, vSize), vRecv, $"{what}: INeighborAllgatherv");

        // Alltoall: block m goes to destination m.
        int[] send = new int[outDeg * count];
        for (int m = 0; m < outDeg; m++)
            for (int i = 0; i < count; i++)
                send[m * count + i] = Value(me, m, i);
        int[] ExpectAlltoall(int[] lengths, int[] displs, int size)
        {
            var e = Enumerable.Repeat(sentinel, size).ToArray();
            for (int j = 0; j < inDeg; j++)
                if (from[j] >= 0)
                    for (int i = 0; i < lengths[j]; i++)
                        e[displs[j] + i] = Value(t.Sources[j], from[j], i);
            return e;
        }
        Array.Fill(recv, sentinel);
        t.NeighborAlltoall(send, recv, count);
        Check.Sequence<int>(ExpectAlltoall(eq, eqDispls, recv.Length), recv, $"{what}: NeighborAlltoall");
        Array.Fill(recv, sentinel);
        t.INeighborAlltoall(send, recv, count).Wait();
        Check.Sequence<int>(ExpectAlltoall(eq, eqDispls, recv.Length), recv, $"{what}: INeighborAlltoall");

        // Alltoallv: block m of Length(me, m) elements at displacement 4m (a gap after each).
        int[] sCounts = Enumerable.Range(0, outDeg).Select(m => Length(me, m)).ToArray();
        int[] sDispls = Enumerable.Range(0, outDeg).Select(m => 4 * m).ToArray();
        var vSend = new int[Math.Max(1, 4 * outDeg)];
        for (int m = 0; m < outDeg; m++)
            for (int i = 0; i < sCounts[m]; i++)
                vSend[sDispls[m] + i] = Value(me, m, i);
        int[] rCounts = new int[inDeg], rDispls = new int[inDeg];
        for (int j = 0, at = 1; j < inDeg; j++)
        {
            rCounts[j] = from[j] >= 0 ? Length(t.Sources[j], from[j]) : 0;
            rDispls[j] = at;
            at += rCounts[j] + 1;
        }
        int rSize = inDeg == 0 ? 1 : rDispls[^1] + rCounts[^1] + 1;
        var avRecv = Enumerable.Repeat(sentinel, rSize).ToArray();
        t.NeighborAlltoallv(vSend, sCounts, sDispls, avRecv, rCounts, rDispls);
        Check.Sequence<int>(ExpectAlltoall(rCounts, rDispls, rSize), avRecv, $"{what}: NeighborAlltoallv");
        Array.Fill(avRecv, sentinel);
        t.INeighborAlltoallv(vSend, sCounts, sDispls, avRecv, rCounts, rDispls).Wait();
        Check.Sequence<int>(ExpectAlltoall(rCounts, rDispls, rSize), avRecv, $"{what}: INeighborAlltoallv");

        // Alltoallw: the same exchange with displacements in bytes.
        long[] sBytes = sDispls.Select(x => 4L * x).ToArray(), rBytes = rDispls.Select(x => 4L * x).ToArray();
        Array.Fill(avRecv, sentinel);
        t.NeighborAlltoallw(vSend, sCounts, sBytes, avRecv, rCounts, rBytes);
        Check.Sequence<int>(ExpectAlltoall(rCounts, rDispls, rSize), avRecv, $"{what}: NeighborAlltoallw");
        Array.Fill(avRecv, sentinel);
        t.INeighborAlltoallw(vSend, sCounts, sBytes, avRecv, rCounts, rBytes).Wait();
        Check.Sequence<int>(ExpectAlltoall(rCounts, rDispls, rSize), avRecv, $"{what}: INeighborAlltoallw");

        Persistent(t, what, from, mine, recv, ExpectAllgather(eq, eqDispls, recv.Length), send,
                   vSend, sCounts, sDispls, avRecv, rCounts, rDispls, ExpectAlltoall(rCounts, rDispls, rSize),
                   ExpectAlltoall(eq, eqDispls, recv.Length), count);
    }

    /// <summary>
    /// The persistent forms, started for several rounds with the data changed between them and
    /// the GC compacting the heap (the arrays move; the staging copies follow); on Open MPI 4.1
    /// they throw NotSupportedException, naming the library, and nothing is sent.
    /// </summary>
    private static void Persistent(TopologyCommunicator t, string what, int[] from, int[] mine, int[] recv, int[] expectGather,
                                   int[] send, int[] vSend, int[] sCounts, int[] sDispls, int[] vRecv, int[] rCounts,
                                   int[] rDispls, int[] expectV, int[] expectAlltoall, int count)
    {
        const int sentinel = -7;
        if (!PersistentExpected())
        {
            long before = Mpi.GetStatistics().CollectiveOperations;
            Check.Throws<NotSupportedException>(() => t.NeighborAllgatherInit(mine, recv), $"{what}: NeighborAllgatherInit on Open MPI 4");
            Check.Throws<NotSupportedException>(() => t.NeighborAlltoallvInit(vSend, sCounts, sDispls, vRecv, rCounts, rDispls),
                                                $"{what}: NeighborAlltoallvInit on Open MPI 4");
            try
            {
                t.NeighborAlltoallInit(send, recv, count);
            }
            catch (NotSupportedException e)
            {
                Check.True(e.Message.Contains("Open MPI", StringComparison.Ordinal) && e.Message.Contains("MPI_Neighbor_alltoall_init", StringComparison.Ordinal),
                           $"{what}: the message names the library and the call: {e.Message}");
            }
            Check.Equal(before, Mpi.GetStatistics().CollectiveOperations, $"{what}: nothing reached MPI");
            return;
        }
        int[] counts = (int[])rCounts.Clone();
        using PersistentRequest gather = t.NeighborAllgatherInit(mine, recv);
        using PersistentRequest all = t.NeighborAlltoallInit(send, recv.ToArray(), count);
        var allRecv = new int[recv.Length];
        using PersistentRequest allv = t.NeighborAlltoallvInit(vSend, sCounts, sDispls, vRecv, counts, rDispls);
        Array.Fill(counts, 0); // copied at init: later changes do not count
        using PersistentRequest allAgain = t.NeighborAlltoallInit(send, allRecv, count);
        all.Dispose();
        for (int round = 0; round < 3; round++)
        {
            // Each round sends the values plus round·1000000, to show each start takes the data of now.
            int add = round * 1_000_000;
            int[] Shifted(int[] e) => e.Select(x => x == sentinel ? sentinel : x + add).ToArray();
            for (int i = 0; i < mine.Length; i++)
                mine[i] = Value(t.Rank, 0, i) + add;
            for (int m = 0; m < t.OutDegree; m++)
            {
                for (int i = 0; i < count; i++)
                    send[m * count + i] = Value(t.Rank, m, i) + add;
                for (int i = 0; i < sCounts[m]; i++)
                    vSend[sDispls[m] + i] = Value(t.Rank, m, i) + add;
            }
            Array.Fill(recv, sentinel);
            Array.Fill(vRecv, sentinel);
            Array.Fill(allRecv, sentinel);
            CompactAll();
            PersistentRequest.StartAll(gather, allv, allAgain);
            PersistentRequest.WaitAll(gather, allv, allAgain);
            Check.Sequence<int>(Shifted(expectGather), recv, $"{what}: NeighborAllgatherInit round {round}");
            Check.Sequence<int>(Shifted(expectV), vRecv, $"{what}: NeighborAlltoallvInit round {round}");
            Check.Sequence<int>(Shifted(expectAlltoall), allRecv, $"{what}: NeighborAlltoallInit round {round}");
        }
        PersistentLarge(t, what, from);
    }

    /// <summary>
    /// A persistent NeighborAlltoall on arrays of the large object heap: they are pinned from the
    /// request's making until its Dispose and used in place (no staging copy), and the exchange
    /// stays right when the GC compacts that heap between rounds, which moves every array it
    /// does not find pinned (the arrays are above a freed one).
    /// </summary>
    private static void PersistentLarge(TopologyCommunicator t, string what, int[] from)
    {
        const int count = 25_000, sentinel = -7; // 100,000 bytes per neighbour: large objects
        int outDeg = t.OutDegree, inDeg = t.InDegree;
        byte[]? below = new byte[1 << 20];
        var send = new int[count * Math.Max(outDeg, 1)];
        var recv = new int[count * Math.Max(inDeg, 1)];
        MpiStatistics before = Mpi.GetStatistics();
        PersistentRequest all = t.NeighborAlltoallInit(send, recv, count);
        MpiStatistics made = Mpi.GetStatistics();
        Check.Equal(before.PinnedHandlesAllocated + 2, made.PinnedHandlesAllocated, $"{what}: large arrays pinned at the making");
        GC.KeepAlive(below);
        below = null;
        for (int round = 0; round < 3; round++)
        {
            for (int m = 0; m < outDeg; m++)
                for (int i = 0; i < count; i++)
                    send[m * count + i] = Value(t.Rank, m, i) + round;
            Array.Fill(recv, sentinel);
            GCSettings.LargeObjectHeapCompactionMode = GCLargeObjectHeapCompactionMode.CompactOnce;
            CompactAll();
            all.Start();
            all.Wait();
            bool ok = true;
            for (int j = 0; j < inDeg; j++)
                for (int i = 0; i < count; i++)
                    ok &= recv[j * count + i] == (from[j] < 0 ? sentinel : Value(t.Sources[j], from[j], i) + round);
            Check.True(ok, $"{what}: NeighborAlltoallInit on large arrays, round {round}");
        }
        Check.Equal(made.ArraysPinned, Mpi.GetStatistics().ArraysPinned, $"{what}: no pin per start");
        long held = Mpi.GetStatistics().PinnedHandles;
        all.Dispose();
        Check.True(Mpi.GetStatistics().PinnedHandles <= held - 2, $"{what}: the pins end with the request");
    }

    private static void Nonblocking(DistributedGraphCommunicator d)
    {
        int me = d.Rank;
        int[] from = SenderBlocks(d);
        const int rounds = 20;
        for (int round = 0; round < rounds; round++)
        {
            int[] sendCounts = Enumerable.Repeat(2, d.OutDegree).ToArray(), sendDispls = Enumerable.Range(0, d.OutDegree).Select(m => 2 * m).ToArray();
            int[] recvCounts = Enumerable.Repeat(2, d.InDegree).ToArray(), recvDispls = Enumerable.Range(0, d.InDegree).Select(j => 2 * j).ToArray();
            var send = new int[2 * d.OutDegree];
            for (int m = 0; m < d.OutDegree; m++)
                send[2 * m] = send[2 * m + 1] = Value(me, m, round);
            var recv = new int[2 * d.InDegree];
            Request r = d.INeighborAlltoallv(send, sendCounts, sendDispls, recv, recvCounts, recvDispls);
            // The caller's counts may change at once: the request has its own copy.
            Array.Fill(recvCounts, 0);
            Array.Fill(recvDispls, 1000);
            _ = new byte[64 * 1024];
            CompactAll();
            r.Wait();
            bool ok = true;
            for (int j = 0; j < d.InDegree; j++)
                ok &= recv[2 * j] == Value(d.Sources[j], from[j], round) && recv[2 * j + 1] == recv[2 * j];
            Check.True(ok, $"nonblocking alltoallv round {round}: [{string.Join(",", recv)}]");
        }
    }

    // ---- misuse, and an error inside MPI ----

    private static void Misuse(Communicator c)
    {
        int n = c.Size, me = c.Rank, left = (me + n - 1) % n, right = (me + 1) % n;
        long before = Mpi.GetStatistics().CollectiveOperations;

        // Graph arguments, refused before MPI.
        Check.Throws<ArgumentException>(() => c.CreateGraph(new int[n + 1], []), "more nodes than ranks");
        Check.Throws<ArgumentException>(() => c.CreateGraph([2, 1], [1, 0]), "index decreasing");
        Check.Throws<ArgumentException>(() => c.CreateGraph([1, 2], [1, 0, 1]), "index and edges inconsistent");
        Check.Throws<ArgumentOutOfRangeException>(() => c.CreateGraph([1, 2], [1, 2]), "an edge to a node that is not there");
        Check.Throws<ArgumentNullException>(() => c.CreateGraph(null!, []), "null index");
        Check.Throws<ArgumentNullException>(() => c.CreateGraph((int[][])null!), "null adjacency lists");
        Check.Throws<ArgumentException>(() => c.CreateGraph(new int[n + 1][]), "adjacency lists: more nodes than ranks");
        ArgumentException nullRow = Check.Throws<ArgumentException>(() => c.CreateGraph([[1], null!]), "adjacency lists: a node's list is null")!;
        Check.True(nullRow.Message.Contains("adjacency[1] is null"), $"the null list named: {nullRow.Message}");
        ArgumentOutOfRangeException far = Check.Throws<ArgumentOutOfRangeException>(() => c.CreateGraph([[1], [0, n]]), "adjacency lists: a neighbour that is not a node")!;
        Check.True(far.Message.Contains($"adjacency[1][1] = {n}"), $"the bad neighbour named: {far.Message}");
        Check.Throws<ArgumentOutOfRangeException>(() => c.CreateGraph([[-1], [0]]), "adjacency lists: a negative neighbour");
        Check.Throws<ArgumentOutOfRangeException>(() => c.CreateDistributedGraphAdjacent([n], [right]), "a source outside the communicator");
        Check.Throws<ArgumentOutOfRangeException>(() => c.CreateDistributedGraphAdjacent([left], [-1]), "a negative destination");
        Check.Throws<ArgumentException>(() => c.CreateDistributedGraphAdjacent([left], [1, 2], [right], [1]), "weights and sources of different lengths");
        Check.Throws<ArgumentException>(() => c.CreateDistributedGraphAdjacent([left], [-1], [right], [1]), "a negative weight");
        Check.Throws<ArgumentException>(() => c.CreateDistributedGraph([me], [2], [right]), "degrees that do not add up to the destinations");
        Check.Throws<ArgumentException>(() => c.CreateDistributedGraph([me], [1, 1], [right, left]), "degrees and sources of different lengths");
        Check.Throws<ArgumentException>(() => c.CreateDistributedGraph([me], [-1], []), "a negative degree");
        Check.Throws<ArgumentException>(() => c.CreateDistributedGraph([me], [1], [right], [1, 2]), "weights and destinations of different lengths");

        // Grids whose cell count is past the communicator, however large: refused naming dims, before
        // MPI.  Four extents of 65536 multiply to 2^64, which wraps to 0 in a long.
        Check.ThrowsNaming<ArgumentException>("dims", () => c.CreateCartesian([65536, 65536, 65536, 65536], [false, false, false, false]),
                                               "a grid of 2^64 cells");
        Check.ThrowsNaming<ArgumentException>("dims", () => c.CreateCartesian([int.MaxValue, int.MaxValue, int.MaxValue], [true, true, true]),
                                               "a grid of (2^31 - 1)^3 cells");
        Check.ThrowsNaming<ArgumentException>("dims", () => c.CreateCartesian([n, 2], [false, false]), "a grid of twice the ranks");
        // A grid of more than 16 dimensions (extent 1: one cell, on rank 0).  MPICH's MPI_Cart_shift
        // copies a position into 16 ints on the stack (MAX_CART_DIM): from 19 dimensions on it smashed
        // the stack, here inside the constructor's Shift of each dimension.  So the core refuses a
        // 17th on the MPICH family before MPI sees the grid; Open MPI takes any number.
        foreach (int many in (int[])[17, 40, 3_000_000])
        {
            int[] ones = [.. Enumerable.Repeat(1, many)];
            if (!Mpi.LibraryVersion.StartsWith("Open MPI", StringComparison.Ordinal))
            {
                var e = Check.Throws<NotSupportedException>(() => c.CreateCartesian(ones, new bool[many]), $"a grid of {many} dimensions on MPICH");
                Check.True(e?.Message.Contains("at most 16", StringComparison.Ordinal) == true, $"the refusal names the bound: {e?.Message}");
                continue;
            }
            if (many > 40)
                continue; // Open MPI: shifting each of n dimensions costs n^2
            using CartesianCommunicator? tall = c.CreateCartesian(ones, new bool[many]);
            Check.True(c.Rank == 0 ? tall is { Dimensions.Count: var k } && k == many && tall.Shift(many - 1, 1) == (Mpi.ProcNull, Mpi.ProcNull)
                                   : tall is null,
                       $"a grid of {many} dimensions: {tall?.Dimensions.Count}");
        }
        // MPI_Dims_create's kept extents must divide the node count (MPI-4.0 8.5.2), and none is negative.
        Check.ThrowsNaming<ArgumentException>("dims", () => Mpi.DimsCreate(4, [65536, 65536, 0]), "kept extents multiplying to 2^32");
        Check.ThrowsNaming<ArgumentException>("dims", () => Mpi.DimsCreate(6, [4, 0]), "a kept extent that does not divide the nodes");
        Check.ThrowsNaming<ArgumentOutOfRangeException>("dims", () => Mpi.DimsCreate(6, [0, -2]), "a negative extent");
        Check.Sequence<int>([3, 2], Mpi.DimsCreate(6, [0, 2]), "a kept extent that divides the nodes");
        // Many dimensions: Open MPI fills them; MPICH refuses more than 20 inside MPI, which must come
        // back as an exception (MPI_Dims_create has no communicator: the default handler decides).
        try
        {
            Check.True(Mpi.DimsCreate(1, new int[64]).All(x => x == 1), "DimsCreate of 64 dimensions over 1 node");
        }
        catch (MpiException e)
        {
            Check.True(!Mpi.LibraryVersion.StartsWith("Open MPI", StringComparison.Ordinal) && e.Message.Contains("MPI_Dims_create", StringComparison.Ordinal),
                       $"DimsCreate of 64 dimensions refused by MPICH: {e.Message}");
        }

        // A graph query on a communicator without that topology: the type says so before MPI.
        using (Communicator plain = c.Dup())
        {
            Check.True(plain is not TopologyCommunicator, "a Dup of world has no topology class");
            Check.Throws<InvalidCastException>(() => _ = ((GraphCommunicator)(object)plain).Neighbors, "a plain communicator is not a graph");
        }

        using DistributedGraphCommunicator d = c.CreateDistributedGraphAdjacent([left], [right]);
        // Neighbour buffers and counts checked against the degrees.
        Check.Throws<ArgumentException>(() => d.NeighborAllgather(new int[3], new int[2]), "allgather receive buffer too small");
        Check.Throws<ArgumentException>(() => d.NeighborAlltoall(new int[2], new int[3], 3), "alltoall send buffer too small");
        Check.Throws<ArgumentOutOfRangeException>(() => d.NeighborAlltoall(new int[2], new int[2], -1), "a negative block length");
        Check.Throws<ArgumentException>(() => d.NeighborAllgatherv(new int[1], new int[4], [1, 1], [0, 1]), "allgatherv counts with two entries for one source");
        Check.Throws<ArgumentException>(() => d.NeighborAlltoallv(new int[4], [5], [0], new int[4], [1], [0]), "alltoallv send block past the end");
        Check.Throws<ArgumentException>(() => d.NeighborAlltoallv(new int[4], [1], [0], new int[4], [-1], [0]), "a negative count");
        Check.Throws<ArgumentException>(() => d.INeighborAlltoallv(new int[4], [1], [0], new int[4], [1], [4]), "nonblocking: receive block past the end");
        Check.Throws<ArgumentException>(() => d.NeighborAlltoallw(new int[4], [4], [4L], new int[4], [1], [0L]), "alltoallw block past the end in bytes");
        Check.Throws<ArgumentException>(() => d.NeighborAlltoallw(new int[4], [1], [0L, 4L], new int[4], [1], [0L]), "alltoallw displacements for two destinations");
        // A byte displacement whose sum with the block would wrap past long.MaxValue (it reached MPI, which wrote far outside the array).
        Check.Throws<ArgumentException>(() => d.NeighborAlltoallw(new int[4], [1], [0L], new int[4], [1], [long.MaxValue - 2]), "alltoallw receive displacement near long.MaxValue");
        Check.Throws<ArgumentException>(() => d.INeighborAlltoallw(new int[4], [1], [long.MaxValue - 2], new int[4], [1], [0L]), "nonblocking alltoallw send displacement near long.MaxValue");
        Check.Throws<ArgumentNullException>(() => d.NeighborAllgather<int>(null!, new int[1]), "null send");
        Check.Throws<ArgumentException>(() => d.NeighborAlltoallvInit(new int[1], [1], [0], new int[1], [2], [0]), "persistent: receive block past the end");
        Check.Equal(before, Mpi.GetStatistics().CollectiveOperations, "no collective reached the core");

        // Disposed: ObjectDisposedException, before MPI.
        DistributedGraphCommunicator gone = c.CreateDistributedGraphAdjacent([left], [right]);
        gone.Dispose();
        Check.Throws<ObjectDisposedException>(() => gone.NeighborAllgather(new int[1], new int[1]), "a disposed communicator");

        // Inside MPI: the graph constructors take intracommunicators (MPI-4.0 §8.5); System.MP
        // leaves that check to MPI, which reports MPI_ERR_COMM on every rank.
        int half = n / 2, color = me < half ? 0 : 1;
        using (Communicator local = c.Split(color, me)!)
        using (Intercommunicator inter = Intercommunicator.Create(local, 0, c, color == 0 ? half : 0, 35))
        {
            ExpectMpiError(() => inter.CreateGraph([1], [0]), "a graph over an intercommunicator");
            ExpectMpiError(() => inter.CreateDistributedGraphAdjacent([], []), "a distributed graph over an intercommunicator");
        }

        // Inside MPI: rank 0 sends its right neighbour three elements where that rank expects one.
        // Open MPI reports the truncation on the receiver; MPICH 4.0 drops the block without an
        // error, leaving the receive buffer as it was (what this checks there).
        using (DistributedGraphCommunicator e = c.CreateDistributedGraphAdjacent([left], [right]))
        {
            bool receiver = me == 1 % n, reports = Mpi.LibraryVersion.StartsWith("Open MPI", StringComparison.Ordinal);
            var got = new[] { -1, -1, -1 };
            try
            {
                e.NeighborAlltoallv(new[] { 5, 6, 7 }, [me == 0 ? 3 : 1], [0], got, [1], [0]);
                Check.True(!(receiver && reports), "a truncated neighbour block: no exception on the receiver");
                if (receiver)
                    Check.Sequence<int>([-1, -1, -1], got, "MPICH drops the truncated block");
            }
            catch (MpiException ex)
            {
                Check.True(receiver && reports, $"unexpected {ex.GetType().Name} on rank {me}: {ex.Message}");
                Check.True(ex.ErrorClass != 0 && ex.Message.Contains("MPI_", StringComparison.Ordinal),
                           $"the exception carries MPI's error class and names the call: {ex.Message}");
            }
        }
        // The job goes on: a correct exchange on a new graph.
        using DistributedGraphCommunicator after = c.CreateDistributedGraphAdjacent([left], [right]);
        var fromLeft = new int[1];
        after.NeighborAllgather([me], fromLeft);
        Check.Equal(left, fromLeft[0], "an exchange after the MPI error");
    }

    private static void ExpectMpiError(Action call, string what)
    {
        long before = Mpi.GetStatistics().MpiErrors;
        try
        {
            call();
            Check.True(false, $"{what}: no exception, expected MpiException");
        }
        catch (MpiException e)
        {
            Check.True(e.ErrorClass != 0 && e.Message.Contains("MPI_", StringComparison.Ordinal),
                       $"{what}: MPI's error class and the call's name in the exception: {e.Message}");
            Check.True(Mpi.GetStatistics().MpiErrors > before, $"{what}: counted as an MPI error");
        }
    }

    // ---- a directed, weighted graph on three or more ranks ----

    private static void Directed(Communicator c)
    {
        int n = c.Size, me = c.Rank;
        // Edges r -> r+1 and r -> r+2 (weights 1 and 2), a self-loop on rank 1 (weight 5), and
        // 0 -> n-1 once more when that is not already an edge; rank 0 gives every edge.
        var edges = new List<(int From, int To, int Weight)>();
        for (int r = 0; r < n; r++)
        {
            edges.Add((r, (r + 1) % n, 1));
            if ((r + 2) % n != (r + 1) % n && (r + 2) % n != r)
                edges.Add((r, (r + 2) % n, 2));
        }
        edges.Add((1, 1, 5));
        int[] sources = [], degrees = [], destinations = [], weights = [];
        if (me == 0)
        {
            sources = Enumerable.Range(0, n).ToArray();
            degrees = sources.Select(r => edges.Count(e => e.From == r)).ToArray();
            var ordered = sources.SelectMany(r => edges.Where(e => e.From == r)).ToArray();
            destinations = ordered.Select(e => e.To).ToArray();
            weights = ordered.Select(e => e.Weight).ToArray();
        }
        using DistributedGraphCommunicator d = c.CreateDistributedGraph(sources, degrees, destinations, weights);
        // MPI chooses the order of each rank's edges: compare them as sets of (rank, weight).
        var expectIn = edges.Where(e => e.To == me).Select(e => (e.From, e.Weight)).OrderBy(x => x).ToArray();
        var expectOut = edges.Where(e => e.From == me).Select(e => (e.To, e.Weight)).OrderBy(x => x).ToArray();
        var gotIn = d.Sources.Zip(d.SourceWeights!).OrderBy(x => x).ToArray();
        var gotOut = d.Destinations.Zip(d.DestinationWeights!).OrderBy(x => x).ToArray();
        Check.True(expectIn.SequenceEqual(gotIn), $"incoming edges: [{string.Join(" ", gotIn)}], expected [{string.Join(" ", expectIn)}]");
        Check.True(expectOut.SequenceEqual(gotOut), $"outgoing edges: [{string.Join(" ", gotOut)}], expected [{string.Join(" ", expectOut)}]");
        Exercise(d, "directed graph");
        // The same graph as each rank's adjacency, weighted, with reorder allowed.
        using DistributedGraphCommunicator a = c.CreateDistributedGraphAdjacent(
            expectIn.Select(x => x.From).ToArray(), expectIn.Select(x => x.Weight).ToArray(),
            expectOut.Select(x => x.To).ToArray(), expectOut.Select(x => x.Weight).ToArray(), reorder: true);
        Check.Equal(expectIn.Length, a.InDegree, "adjacent in-degree");
        Exercise(a, "directed graph (adjacent, reorder)");
    }
}
