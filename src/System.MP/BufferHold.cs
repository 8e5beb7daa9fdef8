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
/// and the array is pinned exactly while MPI may still touch it;</item>
/// <item>the rented native buffer of an object send, shared by the messages its
/// payload travels in (<see cref="ForPayload"/>).</item>
/// </list>
/// </summary>
internal sealed class BufferHold
{
    private Array? _target; // cleared at unpin, so a thread's last pin keeps no array alive
    private GCHandle _handle;
    private Transport.NativeBuffer? _payload;
    private int _refs;
    private static long s_pinnedHandles, s_pinnedHandlesAllocated;

    /// <summary>Pinned GCHandles held now (<see cref="MpiStatistics.PinnedHandles"/>).</summary>
    internal static long PinnedHandles => Volatile.Read(ref s_pinnedHandles);

    /// <summary>Pinned GCHandles allocated so far (<see cref="MpiStatistics.PinnedHandlesAllocated"/>).</summary>
    internal static long PinnedHandlesAllocated => Volatile.Read(ref s_pinnedHandlesAllocated);

    private BufferHold(Array array)
    {
        _handle = GCHandle.Alloc(array, GCHandleType.Pinned);
        Interlocked.Increment(ref s_pinnedHandles);
        Interlocked.Increment(ref s_pinnedHandlesAllocated);
        _target = array;
        _refs = 1;
    }

    private BufferHold(Transport.NativeBuffer payload, int operations)
    {
        _payload = payload;
        _refs = operations;
    }

    /// <summary>Holds an object send's rented buffer until all <paramref name="operations"/> sending it completed.</summary>
    internal static BufferHold ForPayload(Transport.NativeBuffer payload, int operations) => new(payload, operations);

    /// <summary>
    /// Pins <paramref name="array"/> for one more operation, joining
    /// <paramref name="last"/> (the posting thread's previous pin) when it
    /// pins the same array and is still held.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static BufferHold Acquire(Array array, ref BufferHold? last)
    {
        BufferHold? p = last;
        if (p is not null && ReferenceEquals(p._target, array) && p.TryAddRef())
            return p;
        return last = New(array);
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static BufferHold New(Array array) => new(array);

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

    [MethodImpl(MethodImplOptions.NoInlining)]
    private void Unpin()
    {
        if (_payload is { } payload)
        {
            _payload = null;
            Transport.BufferPool.Return(payload);
            return;
        }
        _target = null;
        _handle.Free();
        Interlocked.Decrement(ref s_pinnedHandles);
    }
}
