using System.Collections.Generic;
using System.MP.Interop;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Threading;

namespace System.MP;

/// <summary>
/// Continuation pieces of object payloads (messages under a tag above
/// <see cref="Mpi.TagUpperBound"/>) that a receive or probe with <see cref="Mpi.AnyTag"/> met
/// before the object receive they belong to: each is received here into memory of its own and
/// kept, by communicator, source and tag, until the transport's continuation receive takes it
/// (<see cref="Next"/> looks here before it matches a piece itself).
/// </summary>
/// <remarks>
/// A payload's pieces must reach its receiver in the order they arrived, whichever thread
/// matched them.  So every matched probe that may meet a piece (<see cref="MatchAnyTag"/>,
/// <see cref="TakeAside"/>) and the continuation receive's look (<see cref="Next"/>) run under
/// one lock, each a nonblocking matched probe (MPI_Improbe) and, for a piece kept, its receive:
/// a piece is either still in MPI's matching or already kept here, never between, and the kept
/// ones of a tag precede those still in matching.  A receive with any tag therefore polls
/// instead of blocking in MPI_Mprobe, which would take a piece outside the lock.
/// </remarks>
internal static unsafe class ReservedPieces
{
    /// <summary>A kept piece: its bytes in native memory until <see cref="MoveTo"/>.</summary>
    internal sealed class Piece(CommHandle comm, int source, int tag, byte* bytes, long length)
    {
        internal readonly CommHandle Comm = comm;
        internal readonly int Source = source, Tag = tag;
        internal readonly long Length = length;

        /// <summary>Copies the piece to <paramref name="destination"/> and frees its memory.</summary>
        internal void MoveTo(byte* destination)
        {
            Buffer.MemoryCopy(bytes, destination, Length, Length);
            NativeMemory.Free(bytes);
        }
    }

    private static readonly List<Piece> s_kept = [];
    private static readonly Lock s_gate = new();
    private static volatile int s_count;

    /// <summary>How many pieces are kept (tests).</summary>
    internal static int Count => s_count;

    /// <summary>
    /// Takes the first message from <paramref name="source"/> with any tag out of matching, if
    /// one is pending (MPI_Improbe), keeping every reserved piece met first: 1 with the
    /// message's handle and status, 0 for none, or a negative MP_E*.
    /// </summary>
    internal static int MatchAnyTag(int source, CommHandle comm, MessageHandle* message, Status* status)
    {
        lock (s_gate)
        {
            while (true)
            {
                int rc = Core.Improbe(source, Mpi.AnyTag, comm, message, status);
                if (rc != 1 || !PointToPointCore.IsReserved(status->Tag))
                    return rc;
                rc = Keep(*message, *status, comm);
                if (rc < 0)
                    return rc;
            }
        }
    }

    /// <summary>
    /// The next piece from <paramref name="source"/> under <paramref name="tag"/>: 1 with one
    /// kept here (<paramref name="kept"/>), 2 with one matched now (<paramref name="message"/>,
    /// <paramref name="status"/>; receive it), 0 for none yet, or a negative MP_E*.
    /// </summary>
    internal static int Next(int source, int tag, CommHandle comm, out Piece? kept, MessageHandle* message, Status* status)
    {
        lock (s_gate)
        {
            if (TryTake(source, tag, comm, out kept))
                return 1;
            int rc = Core.Improbe(source, tag, comm, message, status);
            return rc == 1 ? 2 : rc;
        }
    }

    /// <summary>Receives a reserved piece matched by <paramref name="message"/> and keeps it: 0, or a negative MP_E*.  Under the lock.</summary>
    private static int Keep(MessageHandle message, in Status matched, CommHandle comm)
    {
        long length = matched.ByteCount;
        byte* bytes = (byte*)NativeMemory.Alloc((nuint)Math.Max(length, 1));
        Status st;
        int rc = PointToPointCore.MRecv(bytes, length, message, &st);
        if (rc < 0)
        {
            NativeMemory.Free(bytes);
            return rc;
        }
        s_kept.Add(new Piece(comm, matched.Source, matched.Tag, bytes, length));
        s_count = s_kept.Count;
        return 0;
    }

    /// <summary>
    /// Takes out of matching and keeps the first piece from <paramref name="source"/> under
    /// <paramref name="tag"/> that a probe reported: 0 once kept, or when another thread took
    /// it first; a negative MP_E* on failure.
    /// </summary>
    internal static int TakeAside(int source, int tag, CommHandle comm)
    {
        MessageHandle msg;
        Status st;
        lock (s_gate)
        {
            int rc = Core.Improbe(source, tag, comm, &msg, &st);
            return rc == 1 ? Keep(msg, st, comm) : rc;
        }
    }

    /// <summary>The earliest kept piece from <paramref name="source"/> under <paramref name="tag"/> on <paramref name="comm"/>, if any.  Under the lock.</summary>
    private static bool TryTake(int source, int tag, CommHandle comm, out Piece? piece)
    {
        piece = null;
        if (s_count == 0)
            return false;
        for (int i = 0; i < s_kept.Count; i++)
        {
            Piece p = s_kept[i];
            if (p.Comm == comm && p.Source == source && p.Tag == tag)
            {
                s_kept.RemoveAt(i);
                s_count = s_kept.Count;
                piece = p;
                return true;
            }
        }
        return false;
    }

    // ---- payloads whose pieces are arriving ----

    private static readonly List<(CommHandle Comm, int Source)> s_streams = [];
    private static readonly Lock s_streamGate = new();
    private static volatile int s_streamCount;

    // Test-only (PiecesTaken scenario): receives with any tag do not wait, and the thread that
    // announces a payload's pieces runs StreamBegunForTests first (when set), which holds it until
    // the scenario has posted its receive with any tag: that receive is then the earliest match
    // for the first piece, so the core's refusal of a receive that took one is provoked every run.
    private static readonly bool s_noWait = Environment.GetEnvironmentVariable("MOTOR_TEST_NO_PIECE_WAIT") == "1";

    /// <summary>Run before pieces are announced, only under MOTOR_TEST_NO_PIECE_WAIT=1 (tests).</summary>
    internal static Action? StreamBegunForTests { get; set; }

    /// <summary>How many payloads' pieces are arriving now (0: a receive with any tag need not look).</summary>
    internal static int StreamCount => s_streamCount;

    /// <summary>
    /// The pieces of a payload from <paramref name="source"/> on <paramref name="comm"/> are
    /// arriving (its first message matched): until <see cref="EndStream"/>, nonblocking receives
    /// with any tag that could match them wait before they are posted (<see cref="AwaitStreams"/>).
    /// </summary>
    internal static void BeginStream(CommHandle comm, int source)
    {
        if (s_noWait)
            StreamBegunForTests?.Invoke();
        lock (s_streamGate)
        {
            s_streams.Add((comm, source));
            s_streamCount = s_streams.Count;
        }
    }

    /// <summary>The payload <see cref="BeginStream"/> announced is in, or failed.</summary>
    internal static void EndStream(CommHandle comm, int source)
    {
        lock (s_streamGate)
        {
            s_streams.Remove((comm, source));
            s_streamCount = s_streams.Count;
        }
    }

    /// <summary>
    /// Before a nonblocking receive with any tag from <paramref name="source"/> (or any source) on
    /// <paramref name="comm"/> is posted: waits while another thread receives the pieces of a
    /// payload it could match.  MPI would give such a receive whatever arrives first from its
    /// source, pieces included; posted once the pieces are in, it takes the first message after
    /// them, as if posted then, which it is (the call had not returned).  The thread receiving the
    /// pieces needs nothing from this one, so the wait ends as soon as the sender's pieces are in.
    /// </summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    internal static void AwaitStreams(int source, CommHandle comm)
    {
        if (s_noWait)
            return;
        for (int polls = 0; Streaming(source, comm); polls++)
            if (polls >= Completion.SpinPolls)
                Thread.Yield();
    }

    private static bool Streaming(int source, CommHandle comm)
    {
        lock (s_streamGate)
        {
            foreach ((CommHandle c, int s) in s_streams)
                if (c == comm && (source == Mpi.AnySource || s == source))
                    return true;
            return false;
        }
    }
}
