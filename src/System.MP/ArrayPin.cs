using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Threading;

namespace System.MP;

/// <summary>
/// A pinned GCHandle on one array, shared by the nonblocking operations in
/// flight on it (library mode): the first operation pins, the last one to
/// complete unpins.  A window of operations on one buffer, the common case,
/// costs one GCHandle instead of one per operation; the array is pinned
/// exactly while some operation on it may still be touched by MPI.
/// </summary>
internal sealed class ArrayPin
{
    private Array? _target; // cleared at unpin, so a thread's last pin keeps no array alive
    private GCHandle _handle;
    private int _refs;

    private ArrayPin(Array array)
    {
        _handle = GCHandle.Alloc(array, GCHandleType.Pinned);
        _target = array;
        _refs = 1;
    }

    /// <summary>
    /// Pins <paramref name="array"/> for one more operation, joining
    /// <paramref name="last"/> (the posting thread's previous pin) when it
    /// pins the same array and is still held.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static ArrayPin Acquire(Array array, ref ArrayPin? last)
    {
        ArrayPin? p = last;
        if (p is not null && ReferenceEquals(p._target, array) && p.TryAddRef())
            return p;
        return last = New(array);
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static ArrayPin New(Array array) => new(array);

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

    /// <summary>One operation on the array completed (any thread); the last one unpins.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal void Release()
    {
        if (Interlocked.Decrement(ref _refs) == 0)
            Unpin();
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private void Unpin()
    {
        _target = null;
        _handle.Free();
    }
}
