using System.Collections.Generic;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Threading;

namespace System.MP;

/// <summary>
/// The pins of a window's one-sided operations in library mode (<see cref="BufferHoldKind.Pin"/>):
/// an array stays pinned from the operation that gave it to MPI until the synchronization call
/// that completes that operation towards its target rank, which may be many operations later.
/// </summary>
/// <remarks>
/// One of the latest holds on the same array and rank stands for a new operation too, and a
/// handle let go of (its Target null) is kept for the next operations, so a loop of operations
/// and synchronizations on one array allocates one GCHandle.  A flush towards one rank
/// (<c>keep</c>) leaves what it completed pinned until the next synchronization, so that a
/// loop of operations and flushes on one array pins it once.  Pins are counted in
/// <see cref="MpiStatistics.PinnedHandles"/> like <see cref="BufferHold"/>'s.
/// </remarks>
internal sealed class EpochPins
{
    private readonly List<Held> _held = [];
    private readonly Stack<GCHandle> _spare = new();
    private long _seq; // operations held so far (under the lock of _held)
    private int _count;
    private const int RecentHolds = 4; // holds an operation may share: the latest ones

    private struct Held
    {
        internal int Target;
        internal Array Array;
        internal GCHandle Pin;
        internal long Seq; // _seq of the latest operation it stands for
        internal bool Done; // a flush completed its operations: let go at the next synchronization unless reused
    }

    /// <summary>Operations held so far: what a synchronization call started now may complete (<see cref="Release"/>'s seq).</summary>
    internal long Seq => Volatile.Read(ref _seq);

    /// <summary>True when some array is pinned (or kept done) now.</summary>
    internal bool Any => Volatile.Read(ref _count) != 0;

    /// <summary>
    /// Keeps <paramref name="array"/> in place until the synchronization that completes an
    /// operation towards <paramref name="target"/>.  Called while the array is fixed, right after
    /// MPI took its address.
    /// </summary>
    /// <remarks>
    /// Hold and <see cref="Release"/> run once per operation in library mode: compiled by the JIT
    /// (AggressiveOptimization keeps them out of System.MP's ReadyToRun code), which inlines
    /// List's accessors; precompiled code could not, from outside the runtime's version bubble.
    /// </remarks>
    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    internal void Hold(Array array, int target)
    {
        lock (_held)
        {
            long seq = ++_seq;
            for (int i = _held.Count - 1; i >= 0 && i >= _held.Count - RecentHolds; i--)
            {
                Held h = _held[i];
                if (h.Target == target && ReferenceEquals(h.Array, array))
                {
                    h.Seq = seq;
                    h.Done = false;
                    _held[i] = h;
                    return;
                }
            }
            GCHandle pin;
            if (_spare.TryPop(out pin))
            {
                pin.Target = array;
                BufferHold.CountPins(1, 0);
            }
            else
            {
                pin = GCHandle.Alloc(array, GCHandleType.Pinned);
                BufferHold.CountPins(1, 1);
            }
            _held.Add(new Held { Target = target, Array = array, Pin = pin, Seq = seq });
            _count = _held.Count;
        }
    }

    /// <summary>
    /// Lets go of the arrays of operations towards <paramref name="target"/> (-1: all) held up to
    /// <paramref name="seq"/>, or with <paramref name="keep"/> marks them done, to go at the next
    /// synchronization unless an operation reuses them; arrays left done by an earlier one go now.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    internal void Release(int target, long seq, bool keep = false)
    {
        lock (_held)
        {
            int kept = 0;
            for (int i = 0; i < _held.Count; i++)
            {
                Held h = _held[i];
                bool completed = (target == -1 || h.Target == target) && h.Seq <= seq;
                if (keep && completed && !h.Done)
                {
                    h.Done = true;
                    _held[kept++] = h;
                }
                else if (completed || h.Done)
                {
                    h.Pin.Target = null; // the handle stays for the next operations, the array goes
                    _spare.Push(h.Pin);
                }
                else
                {
                    _held[kept++] = h;
                }
            }
            BufferHold.CountPins(kept - _held.Count, 0);
            _held.RemoveRange(kept, _held.Count - kept);
            _count = kept;
        }
    }

    /// <summary>Once the window is freed: every array goes, and every handle.</summary>
    internal void Free()
    {
        lock (_held)
        {
            Release(-1, long.MaxValue);
            while (_spare.TryPop(out GCHandle pin))
                pin.Free();
        }
    }
}
