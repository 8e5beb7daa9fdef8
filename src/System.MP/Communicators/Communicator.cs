using System.MP.Interop;
using System.Runtime.CompilerServices;

namespace System.MP;

/// <summary>
/// A group of ranks that exchange messages in a context of their own
/// (an MPI intracommunicator): point-to-point messages, collectives, object transport, and the
/// communicators made from it.
/// </summary>
/// <remarks>
/// A collective that takes a send and a receive array refuses the same non-empty array as both
/// with an <see cref="ArgumentException"/> naming <c>recv</c>, before anything is sent: MPI
/// forbids aliased buffers (MPI-4.0 2.5.4); the in-place reduction (MPI_IN_PLACE) has its own form,
/// <c>Allreduce(buffer, op)</c>.
/// It is refused on every rank, also where MPI would ignore one of the two (a rooted collective's
/// receive array away from the root, its send array in a scatter), so that ranks running the same
/// code all refuse it.  Empty arrays carry nothing and are allowed.
/// </remarks>
public unsafe partial class Communicator : IDisposable
{
    private CommHandle _handle;
    private readonly int _rank;
    private readonly int _size;
    private readonly int _peerSize; // ranks that peer and root arguments refer to
    private readonly bool _isInter;
    private readonly bool _predefined;

    internal unsafe Communicator(CommHandle handle, bool predefined)
    {
        int rank = 0, size = 0, peer = 0, inter = 0;
        ThrowHelper.Check(Core.CommRank(handle, &rank));
        ThrowHelper.Check(Core.CommSize(handle, &size));
        ThrowHelper.Check(Core.CommRemoteSize(handle, &peer));
        ThrowHelper.Check(Core.CommIsInter(handle, &inter));
        _handle = handle;
        _rank = rank;
        _size = size;
        _peerSize = peer;
        _isInter = inter != 0;
        _predefined = predefined;
    }

    /// <summary>Wraps a new core handle as a Communicator, an Intercommunicator or the class of its topology (null for MP_COMM_NULL).</summary>
    internal static unsafe Communicator? Wrap(CommHandle handle)
    {
        if (handle == CommHandle.Null)
            return null;
        int inter = 0;
        int rc = Core.CommIsInter(handle, &inter);
        ThrowHelper.Check(rc);
        if (inter != 0)
            return new Intercommunicator(handle);
        int topo = 0;
        ThrowHelper.Check(Core.TopoTest(handle, &topo));
        // A Dup keeps the topology (MPI-4.0 §7.4.2), and so does the class.
        return (Topology)topo switch
        {
            Topology.Cartesian => new CartesianCommunicator(handle),
            Topology.Graph => new GraphCommunicator(handle),
            Topology.DistributedGraph => new DistributedGraphCommunicator(handle),
            _ => new Communicator(handle, predefined: false),
        };
    }

    /// <summary>True for an intercommunicator (two groups; peers are ranks of the remote group).</summary>
    public bool IsInter => _isInter;

    /// <summary>All ranks of the job (MPI_COMM_WORLD).  First use initializes MPI.</summary>
    public static Communicator World => Mpi.World;

    /// <summary>This rank alone (MPI_COMM_SELF).  First use initializes MPI.</summary>
    public static Communicator Self => Mpi.Self;

    /// <summary>This process's rank in the communicator, in [0, <see cref="Size"/>).</summary>
    public int Rank
    {
        get
        {
            _ = Handle;
            return _rank;
        }
    }

    /// <summary>Number of ranks in the communicator.</summary>
    public int Size
    {
        get
        {
            _ = Handle;
            return _size;
        }
    }

    /// <summary>True after <see cref="Dispose()"/> (never for World or Self).</summary>
    public bool IsDisposed => _handle == CommHandle.Null;

    /// <summary>The core handle; throws <see cref="ObjectDisposedException"/> once disposed.</summary>
    internal CommHandle Handle
    {
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        get
        {
            CommHandle h = _handle;
            if (h == CommHandle.Null)
                ThrowHelper.ThrowDisposed();
            return h;
        }
    }

    /// <summary>
    /// A new communicator with the same ranks and a separate context (MPI_Comm_dup); it gets the
    /// attributes whose keyval's copy function agrees (<see cref="CreateKeyval{T}"/>). Collective.
    /// </summary>
    /// <exception cref="Exception">What a copy function threw: the duplicate was freed on this rank.</exception>
    public unsafe Communicator Dup()
    {
        CommHandle h = Handle, dup = CommHandle.Null;
        int rc = Core.CommDup(h, &dup);
        ThrowHelper.Check(rc);
        Communicator copy = Wrap(dup)!;
        CopyAttributesTo(copy);
        return copy;
    }

    /// <summary>
    /// Partitions the ranks by <paramref name="color"/>, ordering each part by
    /// <paramref name="key"/> then old rank (MPI_Comm_split). Collective.
    /// </summary>
    /// <returns>This rank's new communicator, or null when <paramref name="color"/> is <see cref="Mpi.Undefined"/>.</returns>
    public unsafe Communicator? Split(int color, int key)
    {
        CommHandle h = Handle, part = CommHandle.Null;
        if (color < 0 && color != Mpi.Undefined)
            throw new ArgumentOutOfRangeException(nameof(color), color, SR.Format(SR.SplitColor, color));
        int rc = Core.CommSplit(h, color, key, &part);
        ThrowHelper.Check(rc);
        return Wrap(part);
    }

    /// <summary>
    /// Deletes the attributes (their delete functions run, the last set first) and frees the
    /// communicator (MPI_Comm_free).  World and Self are never freed; disposing twice is harmless.
    /// </summary>
    /// <exception cref="Exception">What a delete function threw: the communicator was not freed, and Dispose may be called again.</exception>
    public void Dispose()
    {
        Dispose(true);
        GC.SuppressFinalize(this);
    }

    /// <summary>Frees the communicator when <paramref name="disposing"/>.</summary>
    protected virtual void Dispose(bool disposing)
    {
        if (_predefined || _handle == CommHandle.Null || !disposing)
            return;
        DeleteAttributes();
        Free();
    }

    private void Free()
    {
        CommHandle h = _handle;
        _handle = CommHandle.Null;
        if (Core.State() == CoreState.Ready) // also when MPI runs through sessions alone
        {
            int rc = Core.CommFree(h);
            ThrowHelper.Check(rc);
        }
    }

    /// <inheritdoc/>
    public override string ToString() =>
        _handle == CommHandle.Null ? "Communicator(disposed)"
 : $"Communicator(rank {_rank} of {_size})";

    // ---- argument checks shared by every operation (before any native call) ----

    /// <summary>A peer that is a rank or <see cref="Mpi.ProcNull"/>, no wildcard (a destination; a partitioned receive's source).</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private void CheckDest(int dest, string paramName = "dest")
    {
        if ((uint)dest >= (uint)_peerSize && dest != Mpi.ProcNull)
            ThrowHelper.ThrowRank(dest, _peerSize, "Mpi.ProcNull", paramName);
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private void CheckSource(int source)
    {
        if ((uint)source >= (uint)_peerSize && source != Mpi.AnySource && source != Mpi.ProcNull)
            ThrowHelper.ThrowRank(source, _peerSize, "Mpi.AnySource or Mpi.ProcNull", nameof(source));
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static void CheckSendTag(int tag)
    {
        if ((uint)tag > (uint)Mpi.TagUpperBound)
            ThrowHelper.ThrowTag(tag, allowAny: false, nameof(tag));
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static void CheckRecvTag(int tag)
    {
        if ((uint)tag > (uint)Mpi.TagUpperBound && tag != Mpi.AnyTag)
            ThrowHelper.ThrowTag(tag, allowAny: true, nameof(tag));
    }

    /// <summary>
    /// Refuses the same non-empty array as the send and the receive buffer of one call: MPI forbids
    /// aliased buffer arguments (MPI-4.0 2.5.4, 6.1), and MPICH refuses them with an MPI error while
    /// other libraries may compute garbage.  Every collective with a send and a receive array checks
    /// it on every rank, also where MPI ignores one of them (a rooted collective's receive array away
    /// from the root), so that ranks running the same code all refuse it before anything is sent.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static void CheckDistinct<T>(T[]? send, T[]? recv, string paramName = "recv",
                                                   string message = SR.CollectiveSameArray)
    {
        if (ReferenceEquals(send, recv) && send is { Length: > 0 })
            ThrowHelper.ThrowSameArray(message, paramName);
    }

}
