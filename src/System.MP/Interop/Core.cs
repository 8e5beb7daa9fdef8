using System.Runtime.CompilerServices;

namespace System.MP.Interop;

/// <summary>
/// mpcore's functions as unmanaged function pointers, read once from the call
/// table.  Functions documented [fast] in mpcore.h are called with
/// SuppressGCTransition (a plain indirect call: they never wait, so no GC needs
/// to run meanwhile); [blocking] ones with a normal GC transition, so the GC
/// runs freely while the thread waits for other ranks.
/// Touch this class only after <see cref="CoreLoader.EnsureLoaded"/> succeeded.
/// </summary>
internal static unsafe class Core
{
    // ---- lifecycle and queries ----
    internal static readonly delegate* unmanaged[Cdecl, SuppressGCTransition]<int*, byte*, int, int> LastError;
    internal static readonly delegate* unmanaged[Cdecl]<int, int*, int> Init;
    internal static readonly delegate* unmanaged[Cdecl]<int> Finalize;
    internal static readonly delegate* unmanaged[Cdecl, SuppressGCTransition]<int> State;
    internal static readonly delegate* unmanaged[Cdecl]<int, int, int> Abort;
    internal static readonly delegate* unmanaged[Cdecl, SuppressGCTransition]<double> Wtime;
    internal static readonly delegate* unmanaged[Cdecl, SuppressGCTransition]<double> Wtick;
    internal static readonly delegate* unmanaged[Cdecl, SuppressGCTransition]<int*, int> ThreadLevel;
    internal static readonly delegate* unmanaged[Cdecl, SuppressGCTransition]<byte*, int, int> ProcessorName;
    internal static readonly delegate* unmanaged[Cdecl]<byte*, int, int> LibraryVersion;
    internal static readonly delegate* unmanaged[Cdecl, SuppressGCTransition]<int*, int> TagUb;
    internal static readonly delegate* unmanaged[Cdecl, SuppressGCTransition]<byte*> LibraryPath;

    // ---- communicators ----
    internal static readonly delegate* unmanaged[Cdecl, SuppressGCTransition]<int, int*, int> CommRank;
    internal static readonly delegate* unmanaged[Cdecl, SuppressGCTransition]<int, int*, int> CommSize;
    internal static readonly delegate* unmanaged[Cdecl]<int, int*, int> CommDup;
    internal static readonly delegate* unmanaged[Cdecl]<int, int, int, int*, int> CommSplit;
    internal static readonly delegate* unmanaged[Cdecl]<int, int> CommFree;

    // ---- point-to-point ----
    internal static readonly delegate* unmanaged[Cdecl, SuppressGCTransition]<void*, long, int, int, int, int, long*, int> SendStart;
    internal static readonly delegate* unmanaged[Cdecl, SuppressGCTransition]<void*, long, int, int, int, Status*, long*, int> RecvStart;
    internal static readonly delegate* unmanaged[Cdecl, SuppressGCTransition]<long, Status*, int> TokenTest;
    internal static readonly delegate* unmanaged[Cdecl]<long, Status*, int> TokenWait;
    internal static readonly delegate* unmanaged[Cdecl, SuppressGCTransition]<void*, long, int, int, int, int, void*, int*, int> ISend;
    internal static readonly delegate* unmanaged[Cdecl, SuppressGCTransition]<void*, long, int, int, int, void*, int*, int> IRecv;
    internal static readonly delegate* unmanaged[Cdecl, SuppressGCTransition]<int, Status*, int> ReqTest;
    internal static readonly delegate* unmanaged[Cdecl]<int, Status*, int> ReqWait;
    internal static readonly delegate* unmanaged[Cdecl, SuppressGCTransition]<int, int> ReqCancel;
    internal static readonly delegate* unmanaged[Cdecl, SuppressGCTransition]<int, int> ReqOrphan;
    internal static readonly delegate* unmanaged[Cdecl, SuppressGCTransition]<int> ReqSweep;
    internal static readonly delegate* unmanaged[Cdecl, SuppressGCTransition]<int, int> ReqLive;
    internal static readonly delegate* unmanaged[Cdecl, SuppressGCTransition]<int, int*, Status*, int> ReqTestAll;
    internal static readonly delegate* unmanaged[Cdecl]<int, int*, Status*, int> ReqWaitAll;
    internal static readonly delegate* unmanaged[Cdecl]<int, int*, Status*, int> ReqWaitAny;
    internal static readonly delegate* unmanaged[Cdecl, SuppressGCTransition]<int> ReqActive;
    internal static readonly delegate* unmanaged[Cdecl, SuppressGCTransition]<int, int, int, Status*, int> IProbe;
    internal static readonly delegate* unmanaged[Cdecl]<int, int, int, Status*, int> Probe;

    // ---- matched probe ----
    internal static readonly delegate* unmanaged[Cdecl, SuppressGCTransition]<int, int, int, long*, Status*, int> IMProbe;
    internal static readonly delegate* unmanaged[Cdecl]<int, int, int, long*, Status*, int> MProbe;
    internal static readonly delegate* unmanaged[Cdecl, SuppressGCTransition]<void*, long, long, Status*, long*, int> MRecvStart;

    // ---- groups and topologies ----
    internal static readonly delegate* unmanaged[Cdecl, SuppressGCTransition]<int, int*, int> CommGroup;
    internal static readonly delegate* unmanaged[Cdecl, SuppressGCTransition]<int, int*, int> GroupSize;
    internal static readonly delegate* unmanaged[Cdecl, SuppressGCTransition]<int, int*, int> GroupRank;
    internal static readonly delegate* unmanaged[Cdecl, SuppressGCTransition]<int, int, int, int*, int> GroupSetop;
    internal static readonly delegate* unmanaged[Cdecl, SuppressGCTransition]<int, int, int, int*, int*, int> GroupSelect;
    internal static readonly delegate* unmanaged[Cdecl, SuppressGCTransition]<int, int, int*, int, int*, int> GroupTranslate;
    internal static readonly delegate* unmanaged[Cdecl, SuppressGCTransition]<int, int, int*, int> GroupCompare;
    internal static readonly delegate* unmanaged[Cdecl, SuppressGCTransition]<int, int> GroupFree;
    internal static readonly delegate* unmanaged[Cdecl]<int, int, int*, int> CommCreate;
    internal static readonly delegate* unmanaged[Cdecl, SuppressGCTransition]<int, int, int*, int> CommCompare;
    internal static readonly delegate* unmanaged[Cdecl]<int, int, int, int*, int> CommSplitType;
    internal static readonly delegate* unmanaged[Cdecl, SuppressGCTransition]<int, byte*, int> CommSetName;
    internal static readonly delegate* unmanaged[Cdecl, SuppressGCTransition]<int, byte*, int, int> CommGetName;
    internal static readonly delegate* unmanaged[Cdecl]<int, int, int*, int*, int, int*, int> CartCreate;
    internal static readonly delegate* unmanaged[Cdecl, SuppressGCTransition]<int, int*, int> CartNdims;
    internal static readonly delegate* unmanaged[Cdecl, SuppressGCTransition]<int, int, int*, int*, int*, int> CartGet;
    internal static readonly delegate* unmanaged[Cdecl, SuppressGCTransition]<int, int*, int*, int> CartRank;
    internal static readonly delegate* unmanaged[Cdecl, SuppressGCTransition]<int, int, int, int*, int> CartCoords;
    internal static readonly delegate* unmanaged[Cdecl, SuppressGCTransition]<int, int, int, int*, int*, int> CartShift;
    internal static readonly delegate* unmanaged[Cdecl]<int, int*, int*, int> CartSub;
    internal static readonly delegate* unmanaged[Cdecl, SuppressGCTransition]<int, int, int*, int> DimsCreate;

    // ---- intercommunicators and dynamic processes ----
    internal static readonly delegate* unmanaged[Cdecl, SuppressGCTransition]<int, int*, int> CommRemoteSize;
    internal static readonly delegate* unmanaged[Cdecl, SuppressGCTransition]<int, int*, int> CommIsInter;
    internal static readonly delegate* unmanaged[Cdecl]<int, int, int, int, int, int*, int> IntercommCreate;
    internal static readonly delegate* unmanaged[Cdecl]<int, int, int*, int> IntercommMerge;
    internal static readonly delegate* unmanaged[Cdecl]<byte*, byte**, int, int, int, int*, int*, int> CommSpawn;
    internal static readonly delegate* unmanaged[Cdecl, SuppressGCTransition]<int*, int> CommGetParent;
    internal static readonly delegate* unmanaged[Cdecl]<byte*, int, int> OpenPort;
    internal static readonly delegate* unmanaged[Cdecl]<byte*, int> ClosePort;
    internal static readonly delegate* unmanaged[Cdecl]<byte*, int, int, int*, int> CommAccept;
    internal static readonly delegate* unmanaged[Cdecl]<byte*, int, int, int*, int> CommConnect;
    internal static readonly delegate* unmanaged[Cdecl]<int, int> CommDisconnect;
    internal static readonly delegate* unmanaged[Cdecl]<byte*, byte*, int> PublishName;
    internal static readonly delegate* unmanaged[Cdecl]<byte*, byte*, int> UnpublishName;
    internal static readonly delegate* unmanaged[Cdecl]<byte*, byte*, int, int> LookupName;

    internal static readonly delegate* unmanaged[Cdecl, SuppressGCTransition]<CoreStats*, void> Stats;

    // ---- collectives ----
    /// <summary>Blocking: MPI's blocking collectives are faster than posting the nonblocking form, and user operations run inside.</summary>
    internal static readonly delegate* unmanaged[Cdecl]<int, CollDesc*, int> CollRun;
    internal static readonly delegate* unmanaged[Cdecl, SuppressGCTransition]<int, CollDesc*, void*, void*, int*, int> CollPost;
    internal static readonly delegate* unmanaged[Cdecl]<delegate* unmanaged[Cdecl]<void*, void*, long, void*, void>, void*, int, int*, int> OpCreate;
    internal static readonly delegate* unmanaged[Cdecl]<int, int> OpFree;

#pragma warning disable CA1810 // the table must be validated before any field is read
    static Core()
#pragma warning restore CA1810
    {
        CoreTable* t = CoreLoader.Table;
        LastError = (delegate* unmanaged[Cdecl, SuppressGCTransition]<int*, byte*, int, int>)t->LastError;
        Init = (delegate* unmanaged[Cdecl]<int, int*, int>)t->Init;
        Finalize = (delegate* unmanaged[Cdecl]<int>)t->Finalize;
        State = (delegate* unmanaged[Cdecl, SuppressGCTransition]<int>)t->State;
        Abort = (delegate* unmanaged[Cdecl]<int, int, int>)t->Abort;
        Wtime = (delegate* unmanaged[Cdecl, SuppressGCTransition]<double>)t->Wtime;
        Wtick = (delegate* unmanaged[Cdecl, SuppressGCTransition]<double>)t->Wtick;
        ThreadLevel = (delegate* unmanaged[Cdecl, SuppressGCTransition]<int*, int>)t->ThreadLevel;
        ProcessorName = (delegate* unmanaged[Cdecl, SuppressGCTransition]<byte*, int, int>)t->ProcessorName;
        LibraryVersion = (delegate* unmanaged[Cdecl]<byte*, int, int>)t->LibraryVersion;
        TagUb = (delegate* unmanaged[Cdecl, SuppressGCTransition]<int*, int>)t->TagUb;
        LibraryPath = (delegate* unmanaged[Cdecl, SuppressGCTransition]<byte*>)t->LibraryPath;
        CommRank = (delegate* unmanaged[Cdecl, SuppressGCTransition]<int, int*, int>)t->CommRank;
        CommSize = (delegate* unmanaged[Cdecl, SuppressGCTransition]<int, int*, int>)t->CommSize;
        CommDup = (delegate* unmanaged[Cdecl]<int, int*, int>)t->CommDup;
        CommSplit = (delegate* unmanaged[Cdecl]<int, int, int, int*, int>)t->CommSplit;
        CommFree = (delegate* unmanaged[Cdecl]<int, int>)t->CommFree;
        SendStart = (delegate* unmanaged[Cdecl, SuppressGCTransition]<void*, long, int, int, int, int, long*, int>)t->SendStart;
        RecvStart = (delegate* unmanaged[Cdecl, SuppressGCTransition]<void*, long, int, int, int, Status*, long*, int>)t->RecvStart;
        TokenTest = (delegate* unmanaged[Cdecl, SuppressGCTransition]<long, Status*, int>)t->TokenTest;
        TokenWait = (delegate* unmanaged[Cdecl]<long, Status*, int>)t->TokenWait;
        ISend = (delegate* unmanaged[Cdecl, SuppressGCTransition]<void*, long, int, int, int, int, void*, int*, int>)t->ISend;
        IRecv = (delegate* unmanaged[Cdecl, SuppressGCTransition]<void*, long, int, int, int, void*, int*, int>)t->IRecv;
        ReqTest = (delegate* unmanaged[Cdecl, SuppressGCTransition]<int, Status*, int>)t->ReqTest;
        ReqWait = (delegate* unmanaged[Cdecl]<int, Status*, int>)t->ReqWait;
        ReqCancel = (delegate* unmanaged[Cdecl, SuppressGCTransition]<int, int>)t->ReqCancel;
        ReqOrphan = (delegate* unmanaged[Cdecl, SuppressGCTransition]<int, int>)t->ReqOrphan;
        ReqSweep = (delegate* unmanaged[Cdecl, SuppressGCTransition]<int>)t->ReqSweep;
        ReqLive = (delegate* unmanaged[Cdecl, SuppressGCTransition]<int, int>)t->ReqLive;
        ReqTestAll = (delegate* unmanaged[Cdecl, SuppressGCTransition]<int, int*, Status*, int>)t->ReqTestAll;
        ReqWaitAll = (delegate* unmanaged[Cdecl]<int, int*, Status*, int>)t->ReqWaitAll;
        ReqWaitAny = (delegate* unmanaged[Cdecl]<int, int*, Status*, int>)t->ReqWaitAny;
        ReqActive = (delegate* unmanaged[Cdecl, SuppressGCTransition]<int>)t->ReqActive;
        IProbe = (delegate* unmanaged[Cdecl, SuppressGCTransition]<int, int, int, Status*, int>)t->IProbe;
        Probe = (delegate* unmanaged[Cdecl]<int, int, int, Status*, int>)t->Probe;
        Stats = (delegate* unmanaged[Cdecl, SuppressGCTransition]<CoreStats*, void>)t->Stats;
        CollRun = (delegate* unmanaged[Cdecl]<int, CollDesc*, int>)t->CollRun;
        CollPost = (delegate* unmanaged[Cdecl, SuppressGCTransition]<int, CollDesc*, void*, void*, int*, int>)t->CollPost;
        OpCreate = (delegate* unmanaged[Cdecl]<delegate* unmanaged[Cdecl]<void*, void*, long, void*, void>, void*, int, int*, int>)t->OpCreate;
        OpFree = (delegate* unmanaged[Cdecl]<int, int>)t->OpFree;
        CommGroup = (delegate* unmanaged[Cdecl, SuppressGCTransition]<int, int*, int>)t->CommGroup;
        GroupSize = (delegate* unmanaged[Cdecl, SuppressGCTransition]<int, int*, int>)t->GroupSize;
        GroupRank = (delegate* unmanaged[Cdecl, SuppressGCTransition]<int, int*, int>)t->GroupRank;
        GroupSetop = (delegate* unmanaged[Cdecl, SuppressGCTransition]<int, int, int, int*, int>)t->GroupSetop;
        GroupSelect = (delegate* unmanaged[Cdecl, SuppressGCTransition]<int, int, int, int*, int*, int>)t->GroupSelect;
        GroupTranslate = (delegate* unmanaged[Cdecl, SuppressGCTransition]<int, int, int*, int, int*, int>)t->GroupTranslate;
        GroupCompare = (delegate* unmanaged[Cdecl, SuppressGCTransition]<int, int, int*, int>)t->GroupCompare;
        GroupFree = (delegate* unmanaged[Cdecl, SuppressGCTransition]<int, int>)t->GroupFree;
        CommCreate = (delegate* unmanaged[Cdecl]<int, int, int*, int>)t->CommCreate;
        CommCompare = (delegate* unmanaged[Cdecl, SuppressGCTransition]<int, int, int*, int>)t->CommCompare;
        CommSplitType = (delegate* unmanaged[Cdecl]<int, int, int, int*, int>)t->CommSplitType;
        CommSetName = (delegate* unmanaged[Cdecl, SuppressGCTransition]<int, byte*, int>)t->CommSetName;
        CommGetName = (delegate* unmanaged[Cdecl, SuppressGCTransition]<int, byte*, int, int>)t->CommGetName;
        CartCreate = (delegate* unmanaged[Cdecl]<int, int, int*, int*, int, int*, int>)t->CartCreate;
        CartNdims = (delegate* unmanaged[Cdecl, SuppressGCTransition]<int, int*, int>)t->CartNdims;
        CartGet = (delegate* unmanaged[Cdecl, SuppressGCTransition]<int, int, int*, int*, int*, int>)t->CartGet;
        CartRank = (delegate* unmanaged[Cdecl, SuppressGCTransition]<int, int*, int*, int>)t->CartRank;
        CartCoords = (delegate* unmanaged[Cdecl, SuppressGCTransition]<int, int, int, int*, int>)t->CartCoords;
        CartShift = (delegate* unmanaged[Cdecl, SuppressGCTransition]<int, int, int, int*, int*, int>)t->CartShift;
        CartSub = (delegate* unmanaged[Cdecl]<int, int*, int*, int>)t->CartSub;
        CommRemoteSize = (delegate* unmanaged[Cdecl, SuppressGCTransition]<int, int*, int>)t->CommRemoteSize;
        CommIsInter = (delegate* unmanaged[Cdecl, SuppressGCTransition]<int, int*, int>)t->CommIsInter;
        IntercommCreate = (delegate* unmanaged[Cdecl]<int, int, int, int, int, int*, int>)t->IntercommCreate;
        IntercommMerge = (delegate* unmanaged[Cdecl]<int, int, int*, int>)t->IntercommMerge;
        CommSpawn = (delegate* unmanaged[Cdecl]<byte*, byte**, int, int, int, int*, int*, int>)t->CommSpawn;
        CommGetParent = (delegate* unmanaged[Cdecl, SuppressGCTransition]<int*, int>)t->CommGetParent;
        OpenPort = (delegate* unmanaged[Cdecl]<byte*, int, int>)t->OpenPort;
        ClosePort = (delegate* unmanaged[Cdecl]<byte*, int>)t->ClosePort;
        CommAccept = (delegate* unmanaged[Cdecl]<byte*, int, int, int*, int>)t->CommAccept;
        CommConnect = (delegate* unmanaged[Cdecl]<byte*, int, int, int*, int>)t->CommConnect;
        CommDisconnect = (delegate* unmanaged[Cdecl]<int, int>)t->CommDisconnect;
        PublishName = (delegate* unmanaged[Cdecl]<byte*, byte*, int>)t->PublishName;
        UnpublishName = (delegate* unmanaged[Cdecl]<byte*, byte*, int>)t->UnpublishName;
        LookupName = (delegate* unmanaged[Cdecl]<byte*, byte*, int, int>)t->LookupName;
        DimsCreate = (delegate* unmanaged[Cdecl, SuppressGCTransition]<int, int, int*, int>)t->DimsCreate;
        IMProbe = (delegate* unmanaged[Cdecl, SuppressGCTransition]<int, int, int, long*, Status*, int>)t->IMProbe;
        MProbe = (delegate* unmanaged[Cdecl]<int, int, int, long*, Status*, int>)t->MProbe;
        MRecvStart = (delegate* unmanaged[Cdecl, SuppressGCTransition]<void*, long, long, Status*, long*, int>)t->MRecvStart;
    }

    /// <summary>
    /// How many fast tests a blocking operation makes before it waits in a
    /// blocking call.  Polling first keeps short waits free of GC transitions
    /// (the JIT places a GC poll after each fast call, so GCs still proceed).
    /// </summary>
    internal static readonly int SpinPolls = ReadSpinPolls();

    private static int ReadSpinPolls()
    {
        string? s = Environment.GetEnvironmentVariable("MOTOR_SPIN_POLLS");
        return s is not null && int.TryParse(s, out int n) && n >= 0 ? n : 64;
    }

    /// <summary>Completes a blocking operation's pending part: polls, then waits.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static int CompleteToken(long token, Status* status)
    {
        for (int i = SpinPolls; i > 0; i--)
        {
            int rc = TokenTest(token, status);
            if (rc != 0)
                return rc;
        }
        return TokenWait(token, status);
    }
}
