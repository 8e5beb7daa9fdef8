using System.MP.Interop;

namespace System.MP;

/// <summary>
/// Optional MPI-4 features that an MPI library may lack; ask with <see cref="Mpi.Supports"/>
/// before using one.  MPICH 4.0 and later provide each; Open MPI 4.1 provides none (its calls
/// throw <see cref="NotSupportedException"/> naming the library).
/// </summary>
public enum MpiFeature
{
    /// <summary>
    /// Persistent collectives (MPI-4.0 §6.12): <c>BarrierInit</c>, <c>BcastInit</c>,
    /// <c>AllreduceInit</c> and the other <c>...Init</c> collectives of <see cref="Communicator"/>.
    /// </summary>
    PersistentCollectives = CoreFeature.PersistentCollectives,

    /// <summary>
    /// Persistent neighborhood collectives (MPI-4.0 §8.8): the <c>Neighbor...Init</c> methods of
    /// <see cref="TopologyCommunicator"/>.
    /// </summary>
    PersistentNeighborhoodCollectives = CoreFeature.PersistentNeighborhood,

    /// <summary>
    /// Partitioned communication (MPI-4.0 chapter 4): <c>PsendInit</c>, <c>PrecvInit</c> and
    /// <see cref="PartitionedRequest"/>.
    /// </summary>
    PartitionedCommunication = CoreFeature.Partitioned,

    /// <summary>
    /// The sessions model (MPI-4.0 §11.3): <see cref="Session"/> and
    /// <see cref="Communicator.CreateFromGroup"/>.
    /// </summary>
    Sessions = CoreFeature.Sessions,
}
