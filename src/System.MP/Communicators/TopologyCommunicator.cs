using System.Collections.Generic;
using System.MP.Interop;

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
/// <see cref="OutDegree"/> before anything reaches MPI, and the same non-empty array as send
/// and receive buffer is refused as in every collective (see <see cref="Communicator"/>).
/// </summary>
public abstract unsafe partial class TopologyCommunicator : Communicator
{
    private protected TopologyCommunicator(CommHandle handle) : base(handle, predefined: false)
    {
        int inDegree = 0, outDegree = 0, weighted = 0;
        ThrowHelper.Check(Core.TopoDegrees(handle, &inDegree, &outDegree, &weighted));
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
