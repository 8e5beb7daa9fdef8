using System.MP.Interop;
using System.Runtime.InteropServices;

namespace System.MP;

/// <summary>
/// A partitioned send or receive (MPI-4.0 chapter 4): one message of
/// <see cref="Partitions"/> equal parts of <see cref="PartitionLength"/> elements,
/// made once (<see cref="Communicator.PsendInit{T}"/>, <see cref="Communicator.PrecvInit{T}"/>)
/// and run many times like any <see cref="PersistentRequest"/>: <see cref="PersistentRequest.Start"/>
/// begins an instance; the sender marks each part ready as soon as it is written
/// (<see cref="Pready"/>, <see cref="PreadyRange"/>, <see cref="PreadyList"/>), and the
/// receiver may use a part as soon as <see cref="Parrived"/> says it is in, before
/// the whole message completes (Wait, Test).
/// </summary>
/// <remarks>
/// MPI binds the two sides to each other and to the buffer's address when they are
/// made, so an array the GC may move is staged, as for persistent collectives: the
/// request owns a native copy of the message; <see cref="Pready"/> copies the part
/// into it, and a receive copies a part out when <see cref="Parrived"/> reports it
/// and the whole message at completion.  Nothing is pinned.  Arrays from
/// <see cref="Mpi.AllocatePinned{T}"/> never move and are used in place, with no
/// copy.  Needs an MPI-4 library (MPICH 4.0 or later): elsewhere making one throws
/// <see cref="NotSupportedException"/> naming the library.
/// </remarks>
public sealed unsafe class PartitionedRequest : PersistentRequest
{
    private readonly bool _isSend;
    private readonly long _partBytes;
    private readonly Array _array;
    private readonly byte* _stage; // null: the array is used in place

    private PartitionedRequest(RequestHandle handle, bool isSend, Array array, int partitions, int partitionLength, long partBytes, byte* stage)
        : base(handle, null, 0, 0)
    {
        _isSend = isSend;
        _array = array;
        Partitions = partitions;
        PartitionLength = partitionLength;
        _partBytes = partBytes;
        _stage = stage;
        long bytes = partBytes * partitions;
        if (stage is not null && !isSend) // the whole message is copied out at completion
            _recv = new Side { Array = array, Bytes = bytes, Out = true, Stage = stage };
    }

    /// <summary>Number of partitions of the message.</summary>
    public int Partitions { get; }

    /// <summary>Elements in each partition.</summary>
    public int PartitionLength { get; }

    /// <summary>True for a partitioned send, false for a receive.</summary>
    public bool IsSend => _isSend;

    internal static PartitionedRequest Make<T>(T[] buffer, int partitions, int count, int peer, int tag, CommHandle comm, bool send)
        where T : unmanaged
    {
        if (buffer is null)
            ThrowHelper.ThrowNull(nameof(buffer));
        if (partitions <= 0)
            throw new ArgumentOutOfRangeException(nameof(partitions), partitions, SR.Format(SR.PartitionCount, partitions));
        ArgumentOutOfRangeException.ThrowIfNegative(count);
        long elements = (long)partitions * count;
        if (buffer.Length < elements)
            throw new ArgumentException(SR.Format(SR.PartitionedBufferShort, buffer.Length, partitions, count, elements), nameof(buffer));
        long partBytes = (long)count * sizeof(T);
        bool staged = BufferPolicy.Moves(buffer, partBytes);
        void* stage = null;
        RequestHandle req = RequestHandle.Null;
        int rc;
        fixed (T* p = buffer)
            rc = send ? Core.PsendInit(staged ? null : p, partitions, partBytes, peer, tag, comm, staged ? &stage : null, &req)
                      : Core.PrecvInit(staged ? null : p, partitions, partBytes, peer, tag, comm, staged ? &stage : null, &req);
        ThrowHelper.Check(rc);
        return new PartitionedRequest(req, send, buffer, partitions, count, partBytes, (byte*)stage);
    }

    /// <summary>Marks one partition of the active send ready: MPI may send it now (MPI_Pready).  Write the partition first.</summary>
    /// <param name="partition">In [0, <see cref="Partitions"/>).</param>
    /// <exception cref="ArgumentOutOfRangeException">The partition is outside [0, Partitions).</exception>
    /// <exception cref="InvalidOperationException">The request is a receive, or no instance is active.</exception>
    /// <exception cref="ObjectDisposedException">The request was disposed.</exception>
    public void Pready(int partition) => PreadyRange(partition, partition);

    /// <summary>Marks partitions <paramref name="first"/>..<paramref name="last"/> (inclusive) of the active send ready (MPI_Pready_range).</summary>
    /// <param name="first">First partition, in [0, <see cref="Partitions"/>).</param>
    /// <param name="last">Last partition, in [first, <see cref="Partitions"/>).</param>
    /// <exception cref="ArgumentOutOfRangeException">A bound is outside [0, Partitions), or last &lt; first.</exception>
    /// <exception cref="InvalidOperationException">The request is a receive, or no instance is active.</exception>
    /// <exception cref="ObjectDisposedException">The request was disposed.</exception>
    public void PreadyRange(int first, int last)
    {
        RequestHandle h = SendHandle();
        CheckPartition(first, nameof(first));
        CheckPartition(last, nameof(last));
        if (last < first)
            throw new ArgumentOutOfRangeException(nameof(last), last, SR.Format(SR.PartitionRangeEmpty, first, last));
        for (int i = first; i <= last; i++)
            StageIn(i);
        ThrowHelper.Check(Core.Pready(h, first, last, null));
    }

    /// <summary>Marks the listed partitions of the active send ready (MPI_Pready_list).</summary>
    /// <param name="partitions">Partitions in [0, <see cref="Partitions"/>).</param>
    /// <exception cref="ArgumentOutOfRangeException">A partition is outside [0, Partitions).</exception>
    /// <exception cref="InvalidOperationException">The request is a receive, or no instance is active.</exception>
    /// <exception cref="ObjectDisposedException">The request was disposed.</exception>
    public void PreadyList(ReadOnlySpan<int> partitions)
    {
        RequestHandle h = SendHandle();
        foreach (int p in partitions)
            CheckPartition(p, nameof(partitions));
        if (partitions.IsEmpty)
            return;
        foreach (int p in partitions)
            StageIn(p);
        fixed (int* l = partitions)
            ThrowHelper.Check(Core.Pready(h, 0, partitions.Length - 1, l));
    }

    /// <summary>
    /// Whether a partition of the receive has arrived (MPI_Parrived): true means its
    /// elements are in the array and may be read now.  True when no instance is
    /// active (MPI-4.1 §4.2.3: a completed instance has everything).
    /// </summary>
    /// <param name="partition">In [0, <see cref="Partitions"/>).</param>
    /// <exception cref="ArgumentOutOfRangeException">The partition is outside [0, Partitions).</exception>
    /// <exception cref="InvalidOperationException">The request is a send.</exception>
    /// <exception cref="ObjectDisposedException">The request was disposed.</exception>
    public bool Parrived(int partition)
    {
        RequestHandle h = LiveHandle();
        if (_isSend)
            throw new InvalidOperationException(SR.PartitionedNotReceive);
        CheckPartition(partition, nameof(partition));
        int flag = 0;
        ThrowHelper.Check(Core.Parrived(h, partition, &flag));
        if (flag != 0 && IsActive && _stage is not null)
            Copy(partition, toStage: false);
        return flag != 0;
    }

    private RequestHandle SendHandle()
    {
        RequestHandle h = LiveHandle();
        if (!_isSend)
            throw new InvalidOperationException(SR.PartitionedNotSend);
        if (!IsActive)
            throw new InvalidOperationException(SR.PartitionedInactive);
        return h;
    }

    private void CheckPartition(int partition, string name)
    {
        if ((uint)partition >= (uint)Partitions)
            throw new ArgumentOutOfRangeException(name, partition, SR.Format(SR.PartitionOutOfRange, partition, Partitions));
    }

    private void StageIn(int partition)
    {
        if (_stage is not null)
            Copy(partition, toStage: true);
    }

    private void Copy(int partition, bool toStage)
    {
        long at = partition * _partBytes;
        fixed (byte* p = &MemoryMarshal.GetArrayDataReference(_array))
        {
            if (toStage)
                Buffer.MemoryCopy(p + at, _stage + at, _partBytes, _partBytes);
            else
                Buffer.MemoryCopy(_stage + at, p + at, _partBytes, _partBytes);
        }
    }
}
