using System.MP.Interop;
using System.Runtime.CompilerServices;

namespace System.MP;

/// <summary>
/// One collective call, described once for all its forms: what it is (kind, root, element type,
/// operation, count), its two buffers and its counts and displacements.  The public methods of
/// <see cref="Communicator"/> and <see cref="TopologyCommunicator"/> check their arguments and
/// describe the call; this is the one place that then pins or holds what MPI reads, fills the
/// core's <see cref="CollDesc"/> and calls the core, in one of three ways: <see cref="Run"/>
/// (blocking), <see cref="Post"/> (nonblocking, MPI-4.0 §6.12) and <see cref="Init"/> (persistent).
/// </summary>
internal unsafe ref struct Collective<T> where T : unmanaged
{
    /// <summary>Kind, root, element type, operation and count; the pointers are filled as the call is issued.</summary>
    internal CollDesc Desc;

    /// <summary>What a blocking call passes MPI (arrays, spans or a single value), pinned for the call.</summary>
    internal Span<T> Send, Recv;

    /// <summary>
    /// The arrays MPI reads or writes on this rank, which a nonblocking or persistent request
    /// holds until completion; null where this rank's side is ignored (e.g. recv off the root).
    /// </summary>
    internal T[]? SendArray, RecvArray;

    /// <summary>Counts and element displacements per rank (or per neighbour); null where the call has none.</summary>
    internal int[]? SendCounts, SendDispls, RecvCounts, RecvDispls;

    /// <summary>The byte displacements of the neighborhood w form (MPI_Aint), with <see cref="Scratch"/> per-neighbour datatypes for the core.</summary>
    internal long[]? SendBytes, RecvBytes;

    internal int Scratch;

    /// <summary>A neighborhood collective (MPI-4.0 §8.6): <see cref="CollDesc.Kind"/> is a <see cref="NeighborKind"/>.</summary>
    internal bool Neighbor;

    /// <summary>The operation is the user's own: it runs inside the blocking call (<see cref="Op.EndCollective"/>).</summary>
    private bool _userOp;

    /// <summary>
    /// A call over <paramref name="send"/> and <paramref name="recv"/>: a blocking call passes both as
    /// given; a request holds <paramref name="send"/> only where this rank <paramref name="sends"/> and
    /// <paramref name="recv"/> where it <paramref name="receives"/>.
    /// </summary>
    internal Collective(int kind, long count, int root, T[]? send = null, T[]? recv = null, bool sends = true, bool receives = true)
    {
        Desc = Communicator.Desc<T>(kind, count, null, null, root);
        Send = send;
        Recv = recv;
        SendArray = sends ? send : null;
        RecvArray = receives ? recv : null;
    }

    /// <summary>The reduction's operation; user-defined operations only where <paramref name="userAllowed"/> (the blocking forms).</summary>
    internal void Reduce(Op op, bool userAllowed)
    {
        ArgumentNullException.ThrowIfNull(op);
        op = op.For<T>();
        if (op.IsUserDefined && !userAllowed)
            throw new ArgumentException(SR.NonblockingUserOp, nameof(op));
        Desc.Op = op.HandleFor<T>(nameof(op));
        _userOp = op.IsUserDefined;
    }

    /// <summary>Runs the blocking form: the buffers and counts stay pinned for the one core call.</summary>
    internal readonly void Run(CommHandle comm) => WithCounts(comm, persistent: false, 0, 0, false, false);

    /// <summary>
    /// The one place that pins the counts and displacements into the descriptor: for the persistent
    /// form (the core copies them) it makes the request; for the blocking form it pins the buffers
    /// too and runs the collective.  Inlined into both, so <paramref name="persistent"/> is a constant there.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private readonly PersistentRequest? WithCounts(CommHandle comm, bool persistent, long sendExtent, long recvExtent, bool recvIn, bool recvOut)
    {
        CollDesc d = Desc;
        fixed (int* sc = SendCounts)
        fixed (int* sd = SendDispls)
        fixed (int* rc = RecvCounts)
        fixed (int* rd = RecvDispls)
        {
            d.SendCounts = sc;
            d.SDispls = sd;
            d.RecvCounts = rc;
            d.RDispls = rd;
            if (persistent)
                return PersistentRequest.InitCollective(comm, d, SendArray, sendExtent, RecvArray, recvExtent,
                                                        recvIn, recvOut, Neighbor);
            fixed (T* s = Send)
            fixed (T* r = Recv)
            fixed (long* sb = SendBytes)
            fixed (long* rb = RecvBytes)
            {
                d.SendBuf = s;
                d.RecvBuf = r;
                long t0 = MpiProfile.Begin();
                if (Neighbor)
                    ThrowHelper.Check(MpiProfile.Ended(Core.NeighborRun(comm, &d, sb, rb), ProfiledCall.Neighbor, t0, &d));
                else
                    Communicator.Run(comm, &d, _userOp);
            }
            return null;
        }
    }

    /// <summary>
    /// Posts the nonblocking form: the request holds the arrays (Request.PostCollective); the
    /// counts and displacements, which MPI reads until completion, are copied to native memory
    /// the request keeps (<see cref="VectorCounts"/>).
    /// </summary>
    internal readonly Request Post(CommHandle comm)
    {
        CollDesc d = Desc;
        bool counted = SendCounts is not null || SendDispls is not null || RecvCounts is not null || RecvDispls is not null;
        if (Neighbor)
        {
            NeighborBlock b = counted ? VectorCounts.Copy(ref d, SendCounts, SendDispls, RecvCounts, RecvDispls,
                                                          SendBytes, RecvBytes, Scratch) : default;
            return Request.PostCollective(comm, &d, SendArray, RecvArray, &b);
        }
        if (!counted)
            return Request.PostCollective(comm, &d, SendArray, RecvArray);
        VectorCounts.Sweep();
        void* p = VectorCounts.Copy(ref d, SendCounts, SendDispls, RecvCounts, RecvDispls, null, null, 0).Memory;
        Request request;
        try
        {
            request = Request.PostCollective(comm, &d, SendArray, RecvArray);
        }
        catch
        {
            VectorCounts.Free(p);
            throw;
        }
        VectorCounts.Track(request, p);
        return request;
    }

    /// <summary>
    /// Makes the persistent form (MPI-4.0 §6.13); the core copies the counts.  Each array MPI
    /// touches is staged when it may move: <paramref name="sendExtent"/> elements of the send array
    /// are copied in at each start, <paramref name="recvExtent"/> of the receive array copied in
    /// where <paramref name="recvIn"/> (a broadcast's root, blocks MPI may leave unwritten) and out
    /// where <paramref name="recvOut"/>.
    /// </summary>
    internal readonly PersistentRequest Init(CommHandle comm, long sendExtent, long recvExtent, bool recvIn = false, bool recvOut = true) =>
        WithCounts(comm, persistent: true, sendExtent, recvExtent, recvIn, recvOut)!;

}
