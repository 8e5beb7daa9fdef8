using System.Collections.Generic;
using System.MP.Interop;
using System.Runtime.InteropServices;

namespace System.MP;

/// <summary>
/// The counts and displacements of nonblocking v-collectives and neighborhood collectives,
/// copied to native memory: MPI may read them until the operation completes (MPI-4.0 §6.12),
/// and the caller's arrays may move (or be dropped) before then.  A neighborhood request holds
/// its copy itself; any other copy is freed once the core has freed its request
/// (<see cref="Core.ReqLive"/>), which is looked at whenever another copy is made: a dropped
/// request keeps its copy exactly as long as MPI may read it.
/// </summary>
internal static unsafe class VectorCounts
{
    private static readonly List<(RequestHandle Request, nint Memory)> s_live = [];

    /// <summary>
    /// Copies the non-null counts and displacements into one native block and points
    /// <paramref name="d"/> at the copies; a neighborhood w form's byte displacements follow them,
    /// then room for <paramref name="scratch"/> datatypes the core fills (MPI-4.0 §8.6.2).  The block
    /// is the result's <see cref="NeighborBlock.Memory"/>: free it with <see cref="Free"/>, hand it to
    /// <see cref="Track"/> or to the request (<see cref="BufferHold.ForNative"/>).
    /// </summary>
    internal static NeighborBlock Copy(ref CollDesc d, int[]? sendCounts, int[]? sendDispls, int[]? recvCounts, int[]? recvDispls,
                                       long[]? sendBytes, long[]? recvBytes, int scratch)
    {
        int ints = Length(sendCounts) + Length(sendDispls) + Length(recvCounts) + Length(recvDispls);
        int longs = Length(sendBytes) + Length(recvBytes) + scratch;
        nuint intBytes = (nuint)(((long)ints * sizeof(int) + 7) & ~7L);
        byte* block = (byte*)NativeMemory.Alloc(intBytes + (nuint)longs * sizeof(long) + 1);
        int* i = (int*)block;
        long* l = (long*)(block + intBytes);
        NeighborBlock b = default;
        b.Memory = block;
        if (sendCounts is not null)
            d.SendCounts = Put(ref i, sendCounts);
        if (sendDispls is not null)
            d.SDispls = Put(ref i, sendDispls);
        if (recvCounts is not null)
            d.RecvCounts = Put(ref i, recvCounts);
        if (recvDispls is not null)
            d.RDispls = Put(ref i, recvDispls);
        if (sendBytes is not null && recvBytes is not null)
        {
            b.SendBytes = Put(ref l, sendBytes);
            b.RecvBytes = Put(ref l, recvBytes);
            b.Scratch = l;
        }
        return b;
    }

    private static int Length(Array? a) => a?.Length ?? 0;

    private static TElem* Put<TElem>(ref TElem* at, TElem[] from) where TElem : unmanaged
    {
        TElem* to = at;
        from.AsSpan().CopyTo(new Span<TElem>(to, from.Length));
        at += from.Length;
        return to;
    }

    internal static void Free(void* p) => NativeMemory.Free(p);

    /// <summary>Keeps <paramref name="p"/> until the core frees <paramref name="request"/>'s operation.</summary>
    internal static void Track(Request request, void* p)
    {
        RequestHandle h = request.CoreHandle;
        if (h == RequestHandle.Null)
        {
            Free(p);
            return;
        }
        lock (s_live)
            s_live.Add((h, (nint)p));
    }

    internal static void Sweep()
    {
        lock (s_live)
        {
            for (int i = s_live.Count - 1; i >= 0; i--)
            {
                if (Core.ReqLive(s_live[i].Request) != 0)
                    continue;
                NativeMemory.Free((void*)s_live[i].Memory);
                s_live.RemoveAt(i);
            }
        }
    }
}
