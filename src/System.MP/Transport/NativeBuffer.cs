using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Threading;

namespace System.MP.Transport;

/// <summary>
/// A growable block of native memory that payloads are encoded into and
/// received into: the GC never moves it, so MPI gets a plain pointer and
/// nothing is pinned (ARCHITECTURE.md, pinning policy, "object operations").
/// Rented from and returned to <see cref="BufferPool"/>.
/// </summary>
internal sealed unsafe class NativeBuffer
{
    internal byte* Pointer;
    internal long Capacity;
    internal int LastUsedEpoch;
    internal long LastUsedTicks;

    /// <summary>What holds this buffer while a payload in it is being sent (BufferHold.ForPayload; made at the first send).</summary>
    internal BufferHold? Hold;

    [MethodImpl(MethodImplOptions.NoInlining)] // keeps NativeMemory's P/Invoke frame out of BufferPool.Rent
    internal NativeBuffer(long capacity)
    {
        Pointer = (byte*)NativeMemory.Alloc((nuint)capacity);
        Capacity = capacity;
    }

    /// <summary>Grows to hold at least <paramref name="needed"/> bytes, keeping the contents.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal void EnsureCapacity(long needed)
    {
        if (needed > Capacity)
            Grow(needed);
    }

    // Apart, so the callers of EnsureCapacity do not set up a P/Invoke frame on every call (the JIT
    // initializes one in the prolog of any method with an inlined P/Invoke: ~40 instructions).
    [MethodImpl(MethodImplOptions.NoInlining)]
    private void Grow(long needed)
    {
        long next = Math.Max(needed, Capacity * 2);
        Pointer = (byte*)NativeMemory.Realloc(Pointer, (nuint)next);
        Capacity = next;
    }

    [MethodImpl(MethodImplOptions.NoInlining)] // keeps NativeMemory's P/Invoke frame out of BufferPool.Return
    internal void Free()
    {
        NativeMemory.Free(Pointer);
        Pointer = null;
        Capacity = 0;
    }
}

/// <summary>
/// Reuses payload buffers across calls and gives back the ones left unused:
/// at every gen-2 collection, buffers not rented since the previous one are
/// freed (Motor freed unused buffers at GC, §7.5), and each return frees
/// pooled buffers larger than <see cref="InitialBytes"/> that have been idle for more than
/// <see cref="IdleMilliseconds"/>, so a program that stops sending large graphs does not
/// keep their memory.
/// </summary>
/// <remarks>
/// Every object send rents a buffer for its encoding and returns it (a blocking receive's first
/// message goes to a buffer its thread's reader keeps, ObjectReader.TakeReceiveBuffer), so the pool takes no lock: it is <see cref="MaxPooled"/> slots,
/// each emptied and filled by one atomic exchange, and a buffer leaves a slot only that way
/// (rent, idle free, trim), so no two threads ever hold the same buffer.  Only a return
/// while a large buffer is pooled reads the clock.
/// </remarks>
internal static class BufferPool
{
    internal const long InitialBytes = 64 * 1024;
    private const int MaxPooled = 8;
    internal const long IdleMilliseconds = 2000;

    private static readonly NativeBuffer?[] s_slots = new NativeBuffer?[MaxPooled];
    private static int s_epoch;
    private static int s_largePooled; // buffers above InitialBytes in the slots (at least; never below)

    static BufferPool() => Gen2Callback.Register(Trim);

    /// <summary>A buffer of at least <paramref name="bytes"/> bytes (contents undefined).</summary>
    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    internal static NativeBuffer Rent(long bytes)
    {
        NativeBuffer?[] slots = s_slots;
        for (int i = 0; i < slots.Length; i++)
        {
            if (slots[i] is not null && Take(ref slots[i]) is NativeBuffer b)
            {
                b.EnsureCapacity(bytes);
                return b;
            }
        }
        return new NativeBuffer(Math.Max(bytes, InitialBytes));
    }

    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    internal static void Return(NativeBuffer b)
    {
        b.LastUsedEpoch = Volatile.Read(ref s_epoch);
        bool large = b.Capacity > InitialBytes;
        if (large || Volatile.Read(ref s_largePooled) > 0)
        {
            long now = Environment.TickCount64;
            b.LastUsedTicks = now;
            FreeWhere(static (x, now) => x.Capacity > InitialBytes && now - x.LastUsedTicks > IdleMilliseconds, now);
        }
        if (large)
            Interlocked.Increment(ref s_largePooled); // before it can be seen in a slot: the count never falls below
        NativeBuffer?[] slots = s_slots;
        for (int i = 0; i < slots.Length; i++)
            if (slots[i] is null && Interlocked.CompareExchange(ref slots[i], b, null) is null)
                return;
        if (large)
            Interlocked.Decrement(ref s_largePooled);
        b.Free();
    }

    /// <summary>Empties <paramref name="slot"/>: the buffer it held, or null.</summary>
    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    private static NativeBuffer? Take(ref NativeBuffer? slot)
    {
        NativeBuffer? b = Interlocked.Exchange(ref slot, null);
        if (b is not null && b.Capacity > InitialBytes)
            Interlocked.Decrement(ref s_largePooled);
        return b;
    }

    /// <summary>Frees the pooled buffers that <paramref name="unused"/> picks (checked on each buffer once it is taken out of its slot).</summary>
    private static void FreeWhere(Func<NativeBuffer, long, bool> unused, long arg)
    {
        NativeBuffer?[] slots = s_slots;
        for (int i = 0; i < slots.Length; i++)
        {
            if (slots[i] is not NativeBuffer seen || !unused(seen, arg) || Take(ref slots[i]) is not NativeBuffer b)
                continue;
            if (unused(b, arg))
            {
                b.Free();
                continue;
            }
            bool large = b.Capacity > InitialBytes;
            if (large)
                Interlocked.Increment(ref s_largePooled);
            if (Interlocked.CompareExchange(ref slots[i], b, null) is null)
                continue;
            if (large)
                Interlocked.Decrement(ref s_largePooled);
            b.Free(); // the slot was refilled meanwhile
        }
    }

    /// <summary>Number of buffers waiting for reuse (tests).</summary>
    internal static int PooledCount
    {
        get
        {
            int n = 0;
            foreach (NativeBuffer? b in s_slots)
                n += b is null ? 0 : 1;
            return n;
        }
    }

    /// <summary>Frees the pooled buffers that were not used since the previous trim.</summary>
    internal static void Trim()
    {
        int epoch = Interlocked.Increment(ref s_epoch) - 1;
        FreeWhere(static (x, epoch) => x.LastUsedEpoch < epoch, epoch);
    }
}

/// <summary>Calls an action after gen-2 collections: an object that resurrects itself in its finalizer.</summary>
internal sealed class Gen2Callback
{
    private readonly Action _action;

    private Gen2Callback(Action action) => _action = action;

    internal static void Register(Action action) => _ = new Gen2Callback(action);

    ~Gen2Callback()
    {
        if (Environment.HasShutdownStarted)
            return;
        _action();
        GC.ReRegisterForFinalize(this);
    }
}
