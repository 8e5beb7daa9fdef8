using System.Collections.Generic;
using System.MP.Interop;
using System.Runtime.InteropServices;

namespace System.MP;

/// <summary>The virtual topology attached to a communicator (MPI_Topo_test, MPI-4.0 §8.5.5).</summary>
public enum Topology
{
    /// <summary>No topology: a plain communicator.</summary>
    None = 0,
    /// <summary>A Cartesian grid (<see cref="CartesianCommunicator"/>).</summary>
    Cartesian = 1,
    /// <summary>A graph known to every rank (<see cref="GraphCommunicator"/>).</summary>
    Graph = 2,
    /// <summary>A distributed graph, each rank knowing its own edges (<see cref="DistributedGraphCommunicator"/>).</summary>
    DistributedGraph = 3,
}

/// <summary>
/// A communicator with a virtual topology: each rank has sources it receives from and
/// destinations it sends to, and the neighborhood collectives (MPI-4.0 §8.6) exchange
/// data along those edges only.  Receive blocks follow <see cref="Sources"/>, send blocks
/// <see cref="Destinations"/>; every count is checked against <see cref="InDegree"/> and
/// <see cref="OutDegree"/> before anything reaches MPI.
/// </summary>
public abstract unsafe partial class TopologyCommunicator : Communicator
{
    private protected TopologyCommunicator(int handle) : base(handle, predefined: false)
    {
        int inDegree = 0, outDegree = 0, weighted = 0;
        Check(Core.TopoDegrees(handle, &inDegree, &outDegree, &weighted));
        InDegree = inDegree;
        OutDegree = outDegree;
        IsWeighted = weighted != 0;
    }

    /// <summary>Number of neighbours this rank receives from in a neighborhood collective.</summary>
    public int InDegree { get; }

    /// <summary>Number of neighbours this rank sends to in a neighborhood collective.</summary>
    public int OutDegree { get; }

    /// <summary>True for a distributed graph created with edge weights.</summary>
    public bool IsWeighted { get; }

    /// <summary>
    /// The ranks this rank receives from, in the order of the receive blocks of the
    /// neighborhood collectives (<see cref="Mpi.ProcNull"/> past a non-periodic grid edge).
    /// </summary>
    public abstract IReadOnlyList<int> Sources { get; }

    /// <summary>The ranks this rank sends to, in the order of the send blocks.</summary>
    public abstract IReadOnlyList<int> Destinations { get; }

    private protected static IReadOnlyList<int> ReadOnly(int[] ranks) => Array.AsReadOnly(ranks);
}

/// <summary>
/// A communicator whose ranks form a graph that every rank knows whole (MPI_Graph_create,
/// MPI-4.0 §8.5.3): node i is rank i, and its neighbours are both its sources and destinations.
/// </summary>
public sealed unsafe class GraphCommunicator : TopologyCommunicator
{
    private readonly int[] _index, _edges, _neighbors;

    internal GraphCommunicator(int handle) : base(handle)
    {
        int nodes = 0, edges = 0;
        Check(Core.GraphDims(handle, &nodes, &edges));
        _index = new int[nodes];
        _edges = new int[edges];
        fixed (int* i = _index)
        fixed (int* e = _edges)
            Check(Core.GraphGet(handle, nodes, edges, i, e));
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
        int h = Handle, n = 0;
        if ((uint)rank >= (uint)Size)
            ThrowHelper.ThrowRank(rank, Size, "a member", nameof(rank));
        Check(Core.GraphNeighborsCount(h, rank, &n));
        var neighbors = new int[n];
        fixed (int* p = neighbors)
            Check(Core.GraphNeighbors(h, rank, n, p));
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
    internal DistributedGraphCommunicator(int handle) : base(handle)
    {
        var sources = new int[InDegree];
        var destinations = new int[OutDegree];
        int[]? sw = IsWeighted ? new int[InDegree] : null, dw = IsWeighted ? new int[OutDegree] : null;
        fixed (int* s = sources)
        fixed (int* d = destinations)
        fixed (int* ws = sw)
        fixed (int* wd = dw)
            Check(Core.DistGraphNeighbors(handle, sources.Length, s, ws, destinations.Length, d, wd));
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
