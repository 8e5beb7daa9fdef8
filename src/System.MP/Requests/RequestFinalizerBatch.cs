using System.MP.Interop;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;

namespace System.MP;

/// <summary>
/// Notices requests dropped without completion, with one finalizer for a batch of them.  The
/// requests a thread posts in a row (below <see cref="ThreadLevel.Multiple"/>, the process: one
/// thread at a time calls MPI) share one batch (up to <see cref="Capacity"/>), which holds their
/// core handles and pins; every <see cref="Request"/> references its batch, so the batch's
/// finalizer runs once none of them is reachable, and hands each operation among them that was
/// never completed to the core as an orphan (released when it completes).
/// </summary>
/// <remarks>
/// One finalizable object per <see cref="Capacity"/> requests instead of one
/// per request: allocating a finalizable object and suppressing its
/// finalization cost more than the rest of a nonblocking operation (callgrind,
/// perf/callgrind.sh: about 600 of 2,300 instructions per operation).  The
/// price: a dropped request is noticed once every request of its batch is
/// unreachable, not before; until then its buffer stays pinned (never the
/// unsafe side), and under motor the GC extension still lets go of the buffer
/// at the first mark after the operation completes.
/// </remarks>
internal sealed class RequestFinalizerBatch
{
    internal const int Capacity = 32;

    /// <summary>
    /// What a posting thread keeps: the batch it fills (held weakly: only
    /// requests keep a batch alive), its last pin and the last immobile array
    /// it posted on.
    /// </summary>
    internal sealed class Poster
    {
        internal GCHandle Filling = GCHandle.Alloc(null, GCHandleType.Weak);
        internal GCHandle LastImmobile = GCHandle.Alloc(null, GCHandleType.Weak); // see PinnedBuffers
        internal int Next = Capacity;
        internal BufferHold? LastPin;

        ~Poster() // the thread has ended
        {
            Filling.Free();
            LastImmobile.Free();
        }
    }

    [ThreadStatic] private static Poster? t_poster;

    /// <summary>
    /// The one poster of the process while MPI runs below <see cref="ThreadLevel.Multiple"/>:
    /// then only one thread at a time makes MPI calls (MPI-4.0 §11.6), so posting needs no
    /// thread-local lookup (a runtime helper call per operation).  Null at Multiple.
    /// </summary>
    private static Poster? s_shared;

    /// <summary>Chooses the posters once MPI's thread level is known (Mpi.Init).</summary>
    internal static void UseSharedPoster(bool shared) => s_shared = shared ? new Poster() : null;

    /// <summary>The pins of one operation (library mode, movable arrays): its buffer's and a collective's second buffer's.</summary>
    internal struct Pins
    {
        internal BufferHold? Pin;
        internal BufferHold? Pin2;
    }

    /// <summary>Each operation's core handle; ReqNull once completed or orphaned.</summary>
    internal HandleBlock Handles;

    /// <summary>The handles inside the batch object: no array of their own to allocate and index.</summary>
    [InlineArray(Capacity)]
    internal struct HandleBlock
    {
        private RequestHandle _first;
    }

    /// <summary>
    /// The operations' pins, allocated with the batch's first pin: under motor
    /// (the GC extension pins) and for pinned-heap arrays there are none, and a
    /// batch costs a handle array only.  Set once, never reset, before the
    /// request that needs it exists.
    /// </summary>
    internal Pins[]? PinSlots;

    private RequestFinalizerBatch() => ((Span<RequestHandle>)Handles).Fill(RequestHandle.Null);

    /// <summary>This thread's posting state.</summary>
    internal static Poster CurrentPoster
    {
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        get => s_shared ?? t_poster ?? NewPoster();
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static Poster NewPoster() => t_poster = new Poster();

    /// <summary>Records a posted operation in the poster's batch.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static RequestFinalizerBatch Add(Poster poster, RequestHandle handle,
 BufferHold? pin, BufferHold? pin2, out int index)
    {
        int i = poster.Next;
        RequestFinalizerBatch? g = i < Capacity ? Unsafe.As<RequestFinalizerBatch?>(poster.Filling.Target) : null;
        if (g is null)
        {
            g = Start(poster);
            i = 0;
        }
        poster.Next = i + 1;
        g.Handles[i] = handle;
        if (pin is not null || pin2 is not null) // slots start empty: no write barrier for a null
        {
            ref Pins p = ref (g.PinSlots ??= new Pins[Capacity])[i];
            p.Pin = pin;
            p.Pin2 = pin2;
        }
        index = i;
        return g;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static RequestFinalizerBatch Start(Poster poster)
    {
        var g = new RequestFinalizerBatch();
        poster.Filling.Target = g;
        return g;
    }

    /// <summary>
    /// The request in the batch's last entry completed (operations usually
    /// complete in the order they were posted): when every request of the
    /// batch has, the finalizer has nothing left to do and is skipped, so the
    /// batch dies young instead of surviving a GC on the finalization queue.
    /// </summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    internal void LastCompleted()
    {
        // Compared as the core's numbers: one vectorized search over the block.
        if (MemoryMarshal.Cast<RequestHandle, int>((ReadOnlySpan<RequestHandle>)Handles).ContainsAnyExcept(RequestHandle.Null.Value))
            return; // still in flight: the finalizer stays the fallback
        GC.SuppressFinalize(this);
    }

    /// <summary>None of the batch's requests is reachable: orphan those never completed.</summary>
    ~RequestFinalizerBatch()
    {
        for (int i = 0; i < Capacity; i++)
        {
            if (Handles[i] != RequestHandle.Null)
                Request.Abandon(this, i);
        }
    }
}
