using System.MP.Interop;

namespace System.MP;

/// <summary>
/// Continuation pieces of object payloads (messages under a tag above
/// <see cref="Mpi.TagUpperBound"/>) and receives with <see cref="Mpi.AnyTag"/>: the core
/// keeps them apart (native/mpcore/src/anytag.c), and this class is its caller.
/// </summary>
/// <remarks>
/// MPI matches MPI_ANY_TAG against every tag.  So the core matches every receive with any tag
/// itself, a nonblocking one (IRecv, RecvInit, a RequestList's IRecv) when it is tested or
/// waited for, and each piece such a receive or a probe with any tag meets is taken out of
/// MPI's matching into memory of its own and kept, by communicator, source and tag, until
/// the transport's continuation receive takes it (<see cref="Next"/> looks there first).  The
/// kept pieces, the receives waiting for a match and every matched probe that may meet a
/// piece are under one lock in the core: a piece is either still in MPI's matching or kept,
/// never between, and the kept ones of a tag precede those still in matching.  Freeing a
/// communicator frees its kept pieces.
/// </remarks>
internal static unsafe class ReservedPieces
{
    /// <summary>How many pieces are kept (<see cref="MpiStatistics.PiecesKept"/>).</summary>
    internal static long Count => MpiStatistics.Read().PiecesKept;

    /// <summary>
    /// Takes the first message from <paramref name="source"/> with a user's tag out of
    /// matching, if one is pending (MPI_Improbe), keeping every reserved piece met first: 1
    /// with the message's handle and status, 0 for none, or a negative MP_E*.
    /// </summary>
    internal static int MatchAnyTag(int source, CommHandle comm, MessageHandle* message, Status* status) =>
        Core.MatchAnyTag(source, comm, message, status);

    /// <summary>
    /// The next piece from <paramref name="source"/> under <paramref name="tag"/>: 1 with one
    /// kept (<paramref name="kept"/>, its length in <paramref name="status"/>; give it to
    /// <see cref="MoveTo"/>), 2 with one matched now (<paramref name="message"/>,
    /// <paramref name="status"/>; receive it), 0 for none yet, or a negative MP_E*.
    /// </summary>
    internal static int Next(int source, int tag, CommHandle comm, void** kept, MessageHandle* message, Status* status) =>
        Core.PieceNext(source, tag, comm, message, status, kept);

    /// <summary>Waits for a kept piece's receive, copies it to <paramref name="destination"/> (unless null) and frees it.</summary>
    internal static void MoveTo(void* kept, byte* destination) => ThrowHelper.Check(Core.PieceTake(kept, destination));

    /// <summary>
    /// Takes out of matching and keeps the first piece from <paramref name="source"/> under
    /// <paramref name="tag"/> that a probe reported: 0 once kept, or when another thread took
    /// it first; a negative MP_E* on failure.
    /// </summary>
    internal static int TakeAside(int source, int tag, CommHandle comm) => Core.PieceAside(source, tag, comm);
}
