using System.MP.Interop;

namespace System.MP;

// Partitioned point-to-point communication (MPI-4.0 chapter 4).
public partial class Communicator
{
    /// <summary>
    /// Makes a partitioned send of <paramref name="partitions"/> × <paramref name="count"/>
    /// elements of <paramref name="buffer"/> to <paramref name="dest"/> (MPI_Psend_init):
    /// start it, write each partition and mark it ready with
    /// <see cref="PartitionedRequest.Pready"/>, then complete it.  It pairs with one
    /// <see cref="PrecvInit{T}"/> of the same partitioning at <paramref name="dest"/>.
    /// </summary>
    /// <param name="buffer">The message: at least partitions × count elements.</param>
    /// <param name="partitions">Number of partitions (positive).</param>
    /// <param name="count">Elements per partition.</param>
    /// <param name="dest">Destination rank (no wildcard).</param>
    /// <param name="tag">Message tag (no wildcard).</param>
    /// <exception cref="ArgumentException">The buffer is shorter than partitions × count.</exception>
    /// <exception cref="ArgumentOutOfRangeException">partitions is not positive, count is negative, or dest or tag is out of range.</exception>
    /// <exception cref="NotSupportedException">The MPI library has no partitioned communication (Open MPI 4.1).</exception>
    public PartitionedRequest PsendInit<T>(T[] buffer, int partitions, int count, int dest, int tag) where T : unmanaged
    {
        CommHandle h = Handle;
        CheckDest(dest);
        CheckSendTag(tag);
        return PartitionedRequest.Make(buffer, partitions, count, dest, tag, h, send: true);
    }

    /// <summary>
    /// Makes a partitioned receive of <paramref name="partitions"/> × <paramref name="count"/>
    /// elements into <paramref name="buffer"/> from <paramref name="source"/>
    /// (MPI_Precv_init): start it, read a partition once
    /// <see cref="PartitionedRequest.Parrived"/> says it is in, or all at completion.
    /// </summary>
    /// <param name="buffer">Room for partitions × count elements.</param>
    /// <param name="partitions">Number of partitions (positive; the sender's).</param>
    /// <param name="count">Elements per partition.</param>
    /// <param name="source">Source rank (not <see cref="Mpi.AnySource"/>).</param>
    /// <param name="tag">Message tag (not <see cref="Mpi.AnyTag"/>).</param>
    /// <exception cref="ArgumentException">The buffer is shorter than partitions × count.</exception>
    /// <exception cref="ArgumentOutOfRangeException">partitions is not positive, count is negative, or source or tag is out of range or a wildcard.</exception>
    /// <exception cref="NotSupportedException">The MPI library has no partitioned communication (Open MPI 4.1).</exception>
    public PartitionedRequest PrecvInit<T>(T[] buffer, int partitions, int count, int source, int tag) where T : unmanaged
    {
        CommHandle h = Handle;
        CheckDest(source, nameof(source)); // a rank or Mpi.ProcNull: no wildcard (MPI-4.0 4.2.2)
        CheckSendTag(tag);
        return PartitionedRequest.Make(buffer, partitions, count, source, tag, h, send: false);
    }
}
