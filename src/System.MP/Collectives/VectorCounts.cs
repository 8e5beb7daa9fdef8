using System.Collections.Generic;
using System.MP.Interop;
using System.Runtime.InteropServices;

namespace System.MP;

/// <summary>
/// The counts and displacements of nonblocking v-collectives, copied to native
/// memory: MPI may read them until the operation completes (MPI-4.0 §6.12), and
/// the caller's arrays may move (or be dropped) before then.  A copy is freed
/// once the core has freed its request (<see cref="Core.ReqLive"/>), which is
/// looked at whenever another copy is made: a dropped request keeps its copy
/// exactly as long as MPI may read it.
/// </summary>
internal static unsafe class VectorCounts
{
    private static readonly List<(int Request, nint Memory)> s_live = [];

    /// <summary>One native block holding the non-null arrays, in order; free it with <see cref="Free"/> or hand it to <see cref="Track"/>.</summary>
    internal static int* Copy(int[]? a, int[]? b, int[]? c, int[]? d)
    {
        Sweep();
        int n = (a?.Length ?? 0) + (b?.Length ?? 0) + (c?.Length ?? 0) + (d?.Length ?? 0);
        int* p = (int*)NativeMemory.Alloc((nuint)Math.Max(n, 1), sizeof(int));
        int* q = p;
        foreach (int[]? x in (ReadOnlySpan<int[]?>)[a, b, c, d])
        {
            if (x is null)
                continue;
            x.CopyTo(new Span<int>(q, x.Length));
            q += x.Length;
        }
        return p;
    }

    internal static void Free(int* p) => NativeMemory.Free(p);

    /// <summary>Keeps <paramref name="p"/> until the core frees <paramref name="request"/>'s operation.</summary>
    internal static void Track(Request request, int* p)
    {
        int h = request.CoreHandle;
        if (h == CoreConst.ReqNull)
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
