using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Threading;

namespace System.MP;

/// <summary>
/// Keeps one buffer valid while nonblocking operations on it are in flight, and
/// lets go of it when the last of them completes (any thread), or when the core
/// finishes with an operation whose request was dropped (Request.Orphans.cs):
/// <list type="bullet">
/// <item>a pinned GCHandle on an array (library mode), shared by the operations in
/// flight on that array: a window of operations on one buffer costs one GCHandle,
/// and the array is pinned exactly while MPI may still touch it.  A released hold keeps its
/// GCHandle (pinning nothing) among its posting thread's idle pins (up to
/// <see cref="RequestPoster.IdlePinLimit"/>), and the thread pins its next arrays with those:
/// a loop with that many arrays in flight at a time allocates nothing;</item>
/// <item>the rented native buffer of an object send, shared by the messages its
/// payload travels in (<see cref="ForPayload"/>; one hold per buffer, reused by its sends);</item>
/// <item>native memory MPI reads until an operation completes (the counts of a
/// nonblocking neighborhood collective), with the pins of that operation's
/// arrays (<see cref="ForNative"/>).</item>
/// </list>
/// </summary>
internal sealed class BufferHold
{
    private Array? _target; // cleared at unpin, so a thread's last pin keeps no array alive
    private GCHandle _handle;
    private Transport.NativeBuffer? _payload;
    private unsafe void* _native;
    private BufferHold? _with1, _with2;
    private BufferHold? _nextIdle; // the next of its poster's idle pins (RequestPoster.IdleShared / IdleOwn)
    private int _refs; // > 0 operations holding it; 0 while the last release lets go; Idle or Freed after (array holds)
    private RequestPoster? _poster; // an array hold's posting thread, whose idle pins it joins when released; null: freed then

    /// <summary><see cref="_refs"/> of an array hold whose operations all completed, among its poster's idle pins: its GCHandle is allocated and pins nothing.</summary>
    private const int Idle = -1;

    /// <summary><see cref="_refs"/> of an array hold whose GCHandle is freed: never used again.</summary>
    private const int Freed = -2;
    private static long s_pinnedHandles, s_pinnedHandlesAllocated, s_arraysPinned, s_handlesHeld;

    /// <summary>Pinned GCHandles held now (<see cref="MpiStatistics.PinnedHandles"/>).</summary>
    internal static long PinnedHandles => Volatile.Read(ref s_pinnedHandles);

    /// <summary>
    /// Counts pins held elsewhere (a window's arrays of incomplete operations, EpochPins):
    /// <paramref name="held"/> arrays pinned more (or fewer), <paramref name="allocated"/> new GCHandles.
    /// </summary>
    internal static void CountPins(int held, int allocated)
    {
        Interlocked.Add(ref s_pinnedHandles, held);
        if (allocated > 0)
        {
            Interlocked.Add(ref s_pinnedHandlesAllocated, allocated);
            Interlocked.Add(ref s_arraysPinned, allocated);
        }
    }

    /// <summary>Arrays pinned so far with a GCHandle, new or re-pointed (<see cref="MpiStatistics.ArraysPinned"/>).</summary>
    internal static long ArraysPinned => Volatile.Read(ref s_arraysPinned);

    /// <summary>GCHandles of array holds not freed: those pinning an array and the idle ones.</summary>
    internal static long HandlesHeld => Volatile.Read(ref s_handlesHeld);

    /// <summary>Pinned GCHandles allocated so far (<see cref="MpiStatistics.PinnedHandlesAllocated"/>).</summary>
    internal static long PinnedHandlesAllocated => Volatile.Read(ref s_pinnedHandlesAllocated);

    private BufferHold(Array array)
    {
        _handle = GCHandle.Alloc(array, GCHandleType.Pinned);
        Interlocked.Increment(ref s_handlesHeld);
        Interlocked.Increment(ref s_pinnedHandles);
        Interlocked.Increment(ref s_pinnedHandlesAllocated);
        Interlocked.Increment(ref s_arraysPinned);
        _target = array;
        _refs = 1;
    }

    private BufferHold(Transport.NativeBuffer payload, int operations)
    {
        _payload = payload;
        _refs = operations;
    }

    private unsafe BufferHold(void* native, BufferHold? with1, BufferHold? with2)
    {
        _native = native;
        _with1 = with1;
        _with2 = with2;
        _refs = 1;
    }

    /// <summary>
    /// Holds an object send's rented buffer until all <paramref name="operations"/> sending it
    /// completed.  A buffer has one hold for good (made at its first send): only the payload that
    /// rented the buffer uses it, and each operation releases it exactly once, so the last release
    /// (which returns the buffer to the pool) is the hold's last use until the buffer's next send.
    /// </summary>
    internal static BufferHold ForPayload(Transport.NativeBuffer payload, int operations)
    {
        BufferHold? hold = payload.Hold;
        if (hold is null)
            return payload.Hold = new(payload, operations);
        hold._refs = operations;
        return hold;
    }

    /// <summary>
    /// Holds <paramref name="native"/> (NativeMemory.Alloc) for one operation, and with it that
    /// operation's array pins (may be null): the operation's only hold, freed at its completion.
    /// </summary>
    internal static unsafe BufferHold ForNative(void* native, BufferHold? with1, BufferHold? with2) =>
        new(native, with1, with2);

    /// <summary>
    /// Pins <paramref name="array"/> for one more operation of <paramref name="poster"/>'s thread,
    /// joining the thread's previous pin when it pins the same array and is still held.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static BufferHold Acquire(Array array, RequestPoster poster)
    {
        BufferHold? p = poster.LastPin;
        if (p is not null && ReferenceEquals(p._target, array) && p.TryAddRef())
            return p;
        return poster.LastPin = Repin(array, poster);
    }

    /// <summary>A hold of <paramref name="poster"/>'s for <paramref name="array"/>: one of its idle pins re-pointed, else a new one.</summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    private static BufferHold Repin(Array array, RequestPoster poster)
    {
        // Only the posting thread takes idle pins: it keeps its own list, and takes the pins other
        // threads released (pushed onto the shared list) all at once when its own list is empty.
        BufferHold? h = poster.IdleOwn;
        if (h is null && Volatile.Read(ref poster.IdleShared) is not null)
            h = Interlocked.Exchange(ref poster.IdleShared, null);
        if (h is null)
            return new(array) { _poster = poster };
        // Idle and off the lists: no operation holds it and no other thread reaches it.
        poster.IdleOwn = h._nextIdle;
        h._nextIdle = null;
        Volatile.Write(ref poster.IdleTaken, poster.IdleTaken + 1);
        Volatile.Write(ref h._refs, 1);
        h._handle.Target = array;
        h._target = array;
        Interlocked.Increment(ref s_pinnedHandles);
        Interlocked.Increment(ref s_arraysPinned);
        return h;
    }

    /// <summary>A pinned GCHandle of its own on <paramref name="array"/> for one owner (no poster's): freed when released.</summary>
    internal static BufferHold PinAlone(Array array) => new(array);

    /// <summary>Frees the GCHandles of the holds on an idle list from <paramref name="head"/> (their poster's thread has ended; none is in use).</summary>
    internal static void FreeIdle(BufferHold? head)
    {
        for (BufferHold? h = head; h is not null; h = h._nextIdle)
        {
            h._refs = Freed;
            h._handle.Free();
            Interlocked.Decrement(ref s_handlesHeld);
        }
    }

    /// <summary>Joins a pin that is still held (never revives a released one).</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private bool TryAddRef()
    {
        int refs = Volatile.Read(ref _refs);
        while (refs > 0)
        {
            int seen = Interlocked.CompareExchange(ref _refs, refs + 1, refs);
            if (seen == refs)
                return true;
            refs = seen;
        }
        return false;
    }

    /// <summary>One operation on the buffer completed (any thread); the last one lets go of it.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal void Release()
    {
        if (Interlocked.Decrement(ref _refs) == 0)
            Unpin();
    }

    /// <summary>Lets go of the hold in <paramref name="slot"/>, if any, and empties the slot.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static void Release(ref BufferHold? slot)
    {
        if (slot is { } hold)
        {
            slot = null;
            hold.Release();
        }
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private unsafe void Unpin()
    {
        if (_payload is { } payload)
        {
            Transport.BufferPool.Return(payload); // the hold stays the buffer's (ForPayload)
            return;
        }
        if (_native is not null)
        {
            FreeNative();
            return;
        }
        _target = null;
        _handle.Target = null; // the array is free to move; the handle may serve the poster's next pin
        Interlocked.Decrement(ref s_pinnedHandles);
        if (_poster is { } poster)
        {
            // Counted before the push and after the poster's take (a take not yet seen here only
            // makes the lists look fuller): they never hold more than the limit.
            if (Interlocked.Increment(ref poster.IdlePushed) - Volatile.Read(ref poster.IdleTaken) <= RequestPoster.IdlePinLimit)
            {
                Volatile.Write(ref _refs, Idle);
                BufferHold? head;
                do
                {
                    head = Volatile.Read(ref poster.IdleShared);
                    _nextIdle = head;
                }
                while (Interlocked.CompareExchange(ref poster.IdleShared, this, head) != head);
                return; // the poster's now: not touched here any more
            }
            Interlocked.Decrement(ref poster.IdlePushed);
        }
        _refs = Freed;
        _handle.Free();
        Interlocked.Decrement(ref s_handlesHeld);
    }

    // Apart, so an object send's release does not set up the P/Invoke frame NativeMemory.Free needs.
    [MethodImpl(MethodImplOptions.NoInlining)]
    private unsafe void FreeNative()
    {
        NativeMemory.Free(_native);
        _native = null;
        _with1?.Release();
        _with2?.Release();
        _with1 = _with2 = null;
    }
}
