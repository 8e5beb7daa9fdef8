using System.Runtime.InteropServices;

namespace System.MP.Interop;

/// <summary>Error codes of mpcore (MP_ERROR_MAP in mpcore.h).</summary>
internal static class CoreError
{
    internal const int Ok = 0;
    internal const int Invalid = -1;
    internal const int State = -2;
    internal const int Handle = -3;
    internal const int Rank = -4;
    internal const int Tag = -5;
    internal const int Count = -6;
    internal const int NoMemory = -7;
    internal const int Truncate = -8;
    internal const int Mpi = -9;
    internal const int NoLibrary = -10;
    internal const int NoSymbol = -11;
    internal const int Pending = -12;
    internal const int Busy = -13;
    internal const int Root = -14;
}

/// <summary>Mirror of mp_table_t: the core's call table (append-only ABI).</summary>
[StructLayout(LayoutKind.Sequential)]
internal struct CoreTable
{
    internal uint AbiVersion;
    internal uint Size;
    internal nint ErrName, ErrMessage, LastError;
    internal nint Init, Finalize, State, Abort, Wtime, Wtick, ThreadLevel;
    internal nint ProcessorName, LibraryVersion, TagUb, LibraryPath;
    internal nint CommRank, CommSize, CommDup, CommSplit, CommFree;
    internal nint SendStart, RecvStart, TokenTest, TokenWait;
    internal nint ISend, IRecv, ReqTest, ReqWait, ReqCancel, ReqOrphan, ReqSweep;
    internal nint ReqTestAll, ReqWaitAll, ReqWaitAny, ReqActive;
    internal nint IProbe, Probe;
    internal nint IMProbe, MProbe, MRecvStart;
    internal nint CollRun, CollPost, OpCreate, OpFree;
    internal nint CommGroup, GroupSize, GroupRank, GroupSetop, GroupSelect, GroupTranslate, GroupCompare, GroupFree, CommCreate, CommCompare, CommSplitType, CommSetName, CommGetName, CartCreate, CartNdims, CartGet, CartRank, CartCoords, CartShift, CartSub, DimsCreate;
    internal nint CommRemoteSize, CommIsInter, IntercommCreate, IntercommMerge, CommSpawn, CommGetParent, OpenPort, ClosePort, CommAccept, CommConnect, CommDisconnect, PublishName, UnpublishName, LookupName;
    internal nint Stats;
    internal nint ReqLive;
    internal nint GcScan, GcAttach, MpiAbi;

    /// <summary>MP_ABI_VERSION this assembly was written against.</summary>
    internal const uint ExpectedAbiVersion = 4;
}

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
