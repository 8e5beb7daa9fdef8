using System.Collections.Generic;
using System.Runtime.InteropServices;

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

    internal NativeBuffer(long capacity)
    {
        Pointer = (byte*)NativeMemory.Alloc((nuint)capacity);
        Capacity = capacity;
    }

    /// <summary>Grows to hold at least <paramref name="needed"/> bytes, keeping the contents.</summary>
    internal void EnsureCapacity(long needed)
    {
        if (needed <= Capacity)
            return;
        long next = Math.Max(needed, Capacity * 2);
        Pointer = (byte*)NativeMemory.Realloc(Pointer, (nuint)next);
        Capacity = next;
    }

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
/// pooled buffers idle for more than <see cref="IdleMilliseconds"/>, so a
/// program that stops sending large graphs does not keep their memory.
/// </summary>
internal static class BufferPool
{
    internal const long InitialBytes = 64 * 1024;
    private const int MaxPooled = 8;
    internal const long IdleMilliseconds = 2000;

    private static readonly List<NativeBuffer> s_free = [];
    private static int s_epoch;

    static BufferPool() => Gen2Callback.Register(Trim);

    /// <summary>A buffer of at least <paramref name="bytes"/> bytes (contents undefined).</summary>
    internal static NativeBuffer Rent(long bytes)
    {
        NativeBuffer? b = null;
        lock (s_free)
        {
            if (s_free.Count > 0)
            {
                b = s_free[^1];
                s_free.RemoveAt(s_free.Count - 1);
            }
        }
        b ??= new NativeBuffer(Math.Max(bytes, InitialBytes));
        b.EnsureCapacity(bytes);
        return b;
    }

    internal static void Return(NativeBuffer b)
    {
        long now = Environment.TickCount64;
        lock (s_free)
        {
            for (int i = s_free.Count - 1; i >= 0; i--)
            {
                if (now - s_free[i].LastUsedTicks > IdleMilliseconds)
                {
                    s_free[i].Free();
                    s_free.RemoveAt(i);
                }
            }
            b.LastUsedEpoch = s_epoch;
            b.LastUsedTicks = now;
            if (s_free.Count < MaxPooled)
            {
                s_free.Add(b);
                return;
            }
        }
        b.Free();
    }

    /// <summary>Number of buffers waiting for reuse (tests).</summary>
    internal static int PooledCount
    {
        get
        {
            lock (s_free)
                return s_free.Count;
        }
    }

    /// <summary>Frees the pooled buffers that were not used since the previous trim.</summary>
    internal static void Trim()
    {
        lock (s_free)
        {
            int epoch = s_epoch++;
            for (int i = s_free.Count - 1; i >= 0; i--)
            {
                if (s_free[i].LastUsedEpoch < epoch)
                {
                    s_free[i].Free();
                    s_free.RemoveAt(i);
                }
            }
        }
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
