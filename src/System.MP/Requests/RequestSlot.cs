using System.MP.Interop;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Threading;

namespace System.MP;

/// <summary>
/// The state of one nonblocking operation behind a <see cref="Request"/>: its core handle, its
/// buffers' pins and, once completed, its status.  Slots are pooled by the posting thread
/// (<see cref="RequestPoster"/>) and reused, so that posting allocates nothing in steady
/// state; <see cref="Version"/> tells the uses apart (the .NET pattern of
/// <c>ManualResetValueTaskSourceCore</c>): a <see cref="Request"/> records the version it was
/// posted under, and a request whose slot moved on to a newer operation is refused.
/// </summary>
/// <remarks>
/// A slot in flight is reachable only through the requests that name it (the pool lets go of
/// it while it is rented), so one whose every request was dropped without completion is
/// finalized, and its finalizer hands the operation to the core as an orphan (released, with
/// its pins, once it completes).  A stale copy of an older request keeps a reused slot
/// reachable: the newer operation, if dropped, is then noticed once that copy is gone too,
/// and its buffer stays held until then (never the unsafe side).  A slot that goes back to
/// the pool, or that a full pool gives up, is not in flight and needs no finalizer.
/// </remarks>
internal sealed class RequestSlot
{
    /// <summary>The core's handle while the operation is in flight here; ReqNull once completed or given up.</summary>
    internal RequestHandle Handle = RequestHandle.Null;

    /// <summary>Changes each time the slot is released: a request recorded under another version is stale.</summary>
    internal int Version;

    /// <summary>Completed (found by <see cref="Request.IsCompleted"/>) with <see cref="Status"/> kept, not yet consumed.</summary>
    internal bool Done;

    /// <summary>The pin of the operation's buffer (library mode, movable arrays).</summary>
    internal BufferHold? Pin;

    /// <summary>
    /// What else the operation holds until it completes, rarely anything (one field, so that
    /// releasing a slot tests it once): a collective's second buffer's pin (a
    /// <see cref="BufferHold"/>), or the <see cref="IStatusReader"/> that is handed the status
    /// by whichever copy of the request completes it.
    /// </summary>
    internal object? Second;

    /// <summary>The pin of a collective's second buffer (in <see cref="Second"/>), else null.</summary>
    internal BufferHold? Pin2 => Second as BufferHold;

    /// <summary>The status of a completed operation not yet consumed (<see cref="Done"/>).</summary>
    internal Status Status;

    /// <summary>The result of a completed operation not yet consumed: 0, or the negative MP_E code it failed with.</summary>
    internal int Result;

    /// <summary>
    /// The <see cref="MpiRequest"/> the operation was last converted to (for its version only):
    /// converting one request twice gives one object, so an await pending on it is found again.
    /// </summary>
    internal BoxedRequest? Box;

    /// <summary>
    /// Status readers attached to operations in flight: each counted from <see cref="Request.ReportStatusTo"/>
    /// until it is told the status, or let go untold (<see cref="DropReader"/>: its request disposed, or
    /// dropped and this slot finalized).  While there are none, a set whose caller wants no statuses
    /// needs none from the core.
    /// </summary>
    internal static int StatusReaders;

    /// <summary>
    /// Lets go of the status reader attached here, if any, without telling it (a disposed or dropped
    /// request reports no status).  Interlocked: the finalizer thread lets go of dropped ones.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal void DropReader()
    {
        if (Second is IStatusReader)
        {
            Second = null;
            Interlocked.Decrement(ref StatusReaders);
        }
    }

    /// <summary>A slot never rented: <see cref="Request.Stale"/> names it under a version it never has.</summary>
    internal static readonly RequestSlot Retired = NeverFinalized();

    private static RequestSlot NeverFinalized()
    {
        var s = new RequestSlot();
        GC.SuppressFinalize(s);
        return s;
    }

    /// <summary>Every request naming this slot was dropped: orphan the operation still in flight, uncount its reader.</summary>
    ~RequestSlot()
    {
        DropReader(); // first: what stays in Second is a second buffer's pin, for Abandon
        if (Handle != RequestHandle.Null)
            Request.Abandon(Handle, Pin, Pin2);
    }
}

/// <summary>
/// An object that stands for one request and needs its status however the request is completed
/// (Wait, Test, a set, an await): <see cref="Request.ReportStatusTo"/> attaches it to the request's
/// slot, and the slot hands it the status when the operation completes there.  Not told when the
/// request is disposed or dropped (then only no longer counted in <see cref="RequestSlot.StatusReaders"/>).
/// </summary>
internal interface IStatusReader
{
    /// <summary>The operation completed with <paramref name="status"/> (called once, on the completing thread).</summary>
    void Completed(in Status status);
}

/// <summary>
/// What a posting thread keeps (below <see cref="ThreadLevel.Multiple"/>, the process: one
/// thread at a time calls MPI): its pool of free request slots, its last pin and the last
/// immobile array it posted on.
/// </summary>
internal sealed class RequestPoster
{
    /// <summary>Free slots a poster keeps; a slot released into a full pool is left to the GC.</summary>
    internal const int PoolLimit = 1024;

    internal GCHandle LastImmobile = GCHandle.Alloc(null, GCHandleType.Weak); // see PinnedBuffers
    internal BufferHold? LastPin;

    /// <summary>
    /// Released pins of this thread kept for its next ones (<see cref="BufferHold"/>): the most a
    /// thread keeps, each a GCHandle pinning nothing (a window of 64 arrays in flight, osu_mbw_mr's).
    /// </summary>
    internal const int IdlePinLimit = 64;

    /// <summary>Released pins of this thread's, pushed by whichever thread released them (compare-and-swap).</summary>
    internal BufferHold? IdleShared;

    /// <summary>Released pins this thread took from <see cref="IdleShared"/>: its own list, for its next pins.</summary>
    internal BufferHold? IdleOwn;

    /// <summary>Holds pushed onto <see cref="IdleShared"/> so far, by any thread (interlocked; wraps around).</summary>
    internal int IdlePushed;

    /// <summary>Holds this thread took off its lists so far (written by this thread only; wraps around).</summary>
    internal int IdleTaken;

    /// <summary>The idle holds on both lists (more while one is being pushed): at most <see cref="IdlePinLimit"/>.</summary>
    internal int IdleCount => Volatile.Read(ref IdlePushed) - Volatile.Read(ref IdleTaken);
    private RequestSlot?[] _free = new RequestSlot?[64];
    private int _count;

    ~RequestPoster() // the thread has ended
    {
        LastImmobile.Free();
        BufferHold.FreeIdle(IdleOwn); // a hold still in flight keeps its poster alive: none is left out
        BufferHold.FreeIdle(IdleShared);
    }

    [ThreadStatic] private static RequestPoster? t_poster;

    /// <summary>
    /// The one poster of the process while MPI runs below <see cref="ThreadLevel.Multiple"/>:
    /// then only one thread at a time makes MPI calls (MPI-4.0 §11.6), so posting needs no
    /// thread-local lookup (a runtime helper call per operation).  Null at Multiple.
    /// </summary>
    private static RequestPoster? s_shared;

    /// <summary>Chooses the posters once MPI's thread level is known (Mpi.Init).</summary>
    internal static void UseSharedPoster(bool shared) => s_shared = shared ? new RequestPoster() : null;

    /// <summary>This thread's posting state.</summary>
    internal static RequestPoster Current
    {
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        get => s_shared ?? t_poster ?? NewPoster();
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static RequestPoster NewPoster() => t_poster = new RequestPoster();

    /// <summary>A free slot for an operation in flight: the pool forgets it (only its requests keep it).</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal RequestSlot Rent()
    {
        int n = _count - 1;
        RequestSlot?[] free = _free;
        if ((uint)n < (uint)free.Length)
        {
            RequestSlot? s = free[n];
            free[n] = null;
            _count = n;
            return s!;
        }
        return new RequestSlot();
    }

    /// <summary>Takes back a slot whose operation has completed or been given up.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal void Return(RequestSlot slot)
    {
        int n = _count;
        RequestSlot?[] free = _free;
        if ((uint)n < (uint)free.Length)
        {
            _count = n + 1; // first: n need not live across the write barrier's call
            free[n] = slot;
        }
        else
            Overflow(slot);
    }

    // ---- blocks (RequestBlock): posting into core lists while requests are completed in sets ----

    /// <summary>Sets of at least this many requests count towards posting into blocks.</summary>
    internal const int BlockSet = 8;

    /// <summary>Free blocks a poster keeps; one returned to a full pool is freed.</summary>
    private const int BlockPoolLimit = 8;

    /// <summary>
    /// True while sends and receives are posted into <see cref="Block"/>: only on the one poster of
    /// a process below <see cref="ThreadLevel.Multiple"/>, from the time sets of requests are completed
    /// (<see cref="SetCompleted"/>) until an entry of a block is used otherwise (<see cref="Dissolved"/>).
    /// </summary>
    internal bool BlockMode;

    /// <summary>The block posted into while <see cref="BlockMode"/>; null until the first post.</summary>
    internal RequestBlock? Block;

    private readonly Collections.Generic.Stack<RequestBlock> _freeBlocks = new();
    private int _setCredit, _dissolves;

    /// <summary>
    /// A set of <paramref name="n"/> requests on slots was completed: sets of <see cref="BlockSet"/> or
    /// more turn block posting on, the first at once and, after each block that had to be
    /// dissolved, twice as many as before (a program that uses requests one by one pays a dissolve
    /// at most a logarithmic number of times).
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal void SetCompleted(int n)
    {
        if (n >= BlockSet && !BlockMode && ReferenceEquals(this, s_shared))
            CountSet();
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private void CountSet()
    {
        if (++_setCredit >= 1 << Math.Min(_dissolves, 24))
        {
            _setCredit = 0;
            BlockMode = true;
        }
    }

    /// <summary><paramref name="block"/> was dissolved: posts go to slots again, and it is no longer posted into.</summary>
    internal void Dissolved(RequestBlock block)
    {
        BlockMode = false;
        _setCredit = 0;
        _dissolves++;
        if (ReferenceEquals(Block, block))
            Block = null;
    }

    /// <summary>The block the next post goes into: <see cref="Block"/>, or <see cref="BlockWithRoom"/>'s.</summary>
    internal RequestBlock BlockToPost
    {
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        get
        {
            RequestBlock? b = Block;
            if (b is null || b.Count >= b.Room)
                b = BlockWithRoom();
            return b;
        }
    }

    /// <summary>
    /// The block to post into when <see cref="Block"/> is missing, full, or needs its next entries
    /// counted against the request pool (mp_list_reserve): the same block, or one from the pool.
    /// </summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    internal unsafe RequestBlock BlockWithRoom()
    {
        RequestBlock? b = Block;
        if (b is null || b.Count >= RequestBlock.Capacity)
            Block = b = _freeBlocks.TryPop(out RequestBlock? free) ? free : new RequestBlock();
        if (b.Count >= b.Room)
        {
            int rc = Core.ListReserve(b.List, b.Count);
            ThrowHelper.Check(rc);
            b.Room = rc;
        }
        return b;
    }

    /// <summary>A full block whose every entry completed: kept for later posts (or freed with its list when the pool is full).</summary>
    internal void ReturnBlock(RequestBlock block)
    {
        if (ReferenceEquals(Block, block))
            return; // posted into again from index 0
        if (_freeBlocks.Count < BlockPoolLimit)
            _freeBlocks.Push(block);
        else
        {
            RequestList.AbandonEntries(block.List, 0, null);
            block.List = default;
            GC.SuppressFinalize(block);
        }
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private void Overflow(RequestSlot slot)
    {
        if (_free.Length < PoolLimit)
        {
            Array.Resize(ref _free, _free.Length * 2);
            Return(slot);
        }
        else
            GC.SuppressFinalize(slot); // left to the GC, with nothing in flight
    }
}
