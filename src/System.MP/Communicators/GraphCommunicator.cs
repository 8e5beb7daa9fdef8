using System.Collections.Generic;
using System.MP.Interop;

namespace System.MP;

/// <summary>
/// A communicator whose ranks form a graph that every rank knows whole (MPI_Graph_create,
/// MPI-4.0 §8.5.3): node i is rank i, and its neighbours are both its sources and destinations.
/// </summary>
public sealed unsafe class GraphCommunicator : TopologyCommunicator
{
    private readonly int[] _index, _edges, _neighbors;

    internal GraphCommunicator(CommHandle handle) : base(handle)
    {
        int nodes = 0, edges = 0;
        ThrowHelper.Check(Core.GraphDims(handle, &nodes, &edges));
        _index = new int[nodes];
        _edges = new int[edges];
        fixed (int* i = _index)
        fixed (int* e = _edges)
            ThrowHelper.Check(Core.GraphGet(handle, nodes, edges, i, e));
        _neighbors = NeighborsOf(Rank);
        Index = ReadOnly(_index);
        Edges = ReadOnly(_edges);
        Neighbors = ReadOnly(_neighbors);
    }

    /// <summary>Cumulative degrees: node i's neighbours are Edges[Index[i-1]..Index[i]) (MPI_Graph_get).</summary>
    public IReadOnlyList<int> Index { get; }

    /// <summary>The neighbour lists of all nodes, one after the other.</summary>
    public IReadOnlyList<int> Edges { get; }

    /// <summary>Number of edge entries (each undirected edge listed at both ends counts twice; MPI_Graphdims_get).</summary>
    public int NumEdges => _edges.Length;

    /// <summary>This rank's neighbours, in the order the neighborhood collectives use.</summary>
    public IReadOnlyList<int> Neighbors { get; }

    /// <inheritdoc/>
    public override IReadOnlyList<int> Sources => Neighbors;

    /// <inheritdoc/>
    public override IReadOnlyList<int> Destinations => Neighbors;

    /// <summary>The neighbours of <paramref name="rank"/> (MPI_Graph_neighbors).</summary>
    public int[] NeighborsOf(int rank)
    {
        CommHandle h = Handle;
        int n = 0;
        if ((uint)rank >= (uint)Size)
            ThrowHelper.ThrowRank(rank, Size, "a member", nameof(rank));
        ThrowHelper.Check(Core.GraphNeighborsCount(h, rank, &n));
        var neighbors = new int[n];
        fixed (int* p = neighbors)
            ThrowHelper.Check(Core.GraphNeighbors(h, rank, n, p));
        return neighbors;
    }
}

/// <summary>
/// A communicator with a distributed graph topology (MPI_Dist_graph_create_adjacent or
/// MPI_Dist_graph_create, MPI-4.0 §8.5.4): each rank knows only its own incoming and
/// outgoing edges, optionally weighted.
/// </summary>
public sealed unsafe class DistributedGraphCommunicator : TopologyCommunicator
{
    internal DistributedGraphCommunicator(CommHandle handle) : base(handle)
    {
        var sources = new int[InDegree];
        var destinations = new int[OutDegree];
        int[]? sw = IsWeighted ? new int[InDegree] : null, dw = IsWeighted ? new int[OutDegree] : null;
        fixed (int* s = sources)
        fixed (int* d = destinations)
        fixed (int* ws = sw)
        fixed (int* wd = dw)
            ThrowHelper.Check(Core.DistGraphNeighbors(handle, sources.Length, s, ws, destinations.Length, d, wd));
        Sources = ReadOnly(sources);
        Destinations = ReadOnly(destinations);
        SourceWeights = sw is null ? null : ReadOnly(sw);
        DestinationWeights = dw is null ? null : ReadOnly(dw);
    }

    /// <inheritdoc/>
    public override IReadOnlyList<int> Sources { get; }

    /// <inheritdoc/>
    public override IReadOnlyList<int> Destinations { get; }

    /// <summary>The weight of each incoming edge, in <see cref="Sources"/> order; null when unweighted.</summary>
    public IReadOnlyList<int>? SourceWeights { get; }

    /// <summary>The weight of each outgoing edge, in <see cref="Destinations"/> order; null when unweighted.</summary>
    public IReadOnlyList<int>? DestinationWeights { get; }
}
