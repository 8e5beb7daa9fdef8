using System.Runtime.InteropServices;

namespace System.MP.Interop;

/// <summary>mpcore's thread levels, send modes and states.</summary>
internal static class CoreConst
{
    internal const int SendStandard = 0;
    internal const int SendSync = 1;
    internal const int StateUninit = 0;
    internal const int StateReady = 1;
    internal const int StateFinalized = 2;
    internal const int CommWorld = 0;
    internal const int CommSelf = 1;
    internal const int CommNull = -1;
    internal const int CommChannelBit = 0x40000000; // MP_COMM_CHANNEL_BIT: a communicator's transport channel
    internal const int ReqNull = -1;
}

/// <summary>Mirror of mp_coll_t: one collective call.</summary>
[StructLayout(LayoutKind.Sequential)]
internal unsafe struct CollDesc
{
    internal int Kind, Root, DType, ElemSize, Op, Reserved;
    internal long Count;
    internal void* SendBuf;
    internal void* RecvBuf;
    internal int* SendCounts, SDispls, RecvCounts, RDispls;
}

/// <summary>mpcore's collective kinds (mp_coll_kind).</summary>
internal static class CollKind
{
    internal const int Barrier = 0, Bcast = 1, Reduce = 2, Allreduce = 3, Scan = 4, Exscan = 5,
        ReduceScatterBlock = 6, Gather = 7, Scatter = 8, Allgather = 9, Alltoall = 10,
        Gatherv = 11, Scatterv = 12, Allgatherv = 13, Alltoallv = 14;
}

/// <summary>Mirror of mp_stats_t.</summary>
[StructLayout(LayoutKind.Sequential)]
internal struct CoreStats
{
    internal ulong P2pOps, P2pBytes, CollOps, BlockingOps, Registered, GcScans, PinnedLastMark, PinnedTotal, ReleasedAtMark, ActiveRequests, GcExtension, MpiErrors;
}
