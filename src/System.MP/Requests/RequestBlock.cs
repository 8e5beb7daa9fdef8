using System.MP.Interop;
using System.Runtime.CompilerServices;
using System.Threading;

namespace System.MP;

/// <summary>
/// Requests posted as the entries of one core request list (mp_list_*): the form a posting
/// thread gives its sends and receives while it completes them in sets (a window of receives,
/// a halo's sends).  A <see cref="Request"/> on a block names the block and a version that
/// holds the block's epoch and the entry's index; a set whose requests are consecutive entries
/// of one block, in posting order, is completed by one call of the core over that range of the
/// list, with nothing to look up or give back per request.
/// </summary>
/// <remarks>
/// <para>
/// Every other use of an entry (its own Wait, Test, Cancel, Dispose or IsCompleted, an await, a
/// set in another order or mixed with other requests) first <em>dissolves</em> the block: its
/// open entries become ordinary requests (a <see cref="RequestSlot"/> each, as the core's
/// list_free makes them ordinary core requests), and the request then behaves exactly as one
/// posted on a slot.  The posting thread goes back to slots after a dissolve (see
/// <see cref="RequestPoster.BlockMode"/>), so a program that completes requests one by one pays
/// the dissolve once.
/// </para>
/// <para>
/// Versions: an entry of epoch e at index i is (e &lt;&lt; 6) | i.  When every entry posted in an
/// epoch has completed through sets, the block starts a new epoch and is posted into again, so
/// a copy of a completed request names an old epoch and is refused
/// (<see cref="ObjectDisposedException"/>).  Within an epoch a completed entry is told apart by
/// <see cref="Done"/>.  A dissolved block never starts a new epoch: its entries' requests find
/// their slots through it for as long as they exist.
/// </para>
/// <para>
/// Dropped requests: a block is reachable from its poster while it is the one posted into or
/// waits in the poster's pool, and otherwise only through the requests on it; one whose every
/// request was dropped is finalized, and its finalizer gives the entries still in flight up as
/// <see cref="Request.Dispose"/> does (the core's list_free, then each orphaned).  Blocks are
/// used only while one thread at a time calls MPI (below <see cref="ThreadLevel.Multiple"/>): a
/// block's entries are then never touched by two threads at once.
/// </para>
/// </remarks>
internal sealed unsafe class RequestBlock
{
    /// <summary>Entries per block.</summary>
    internal const int Capacity = 64;

    /// <summary>The bits of a version that hold the entry's index.</summary>
    internal const int IndexBits = 6;

    /// <summary>The core's list; default once the block was dissolved (or, dropped, given up).</summary>
    internal ListHandle List;

    /// <summary>The block's epoch: versions of its entries are (Epoch &lt;&lt; IndexBits) | index.</summary>
    internal long Epoch;

    /// <summary>Entries posted in this epoch.</summary>
    internal int Count;

    /// <summary>Entries of this epoch completed through sets (bit i for entry i).</summary>
    internal ulong Done;

    /// <summary>Entries of this epoch that are receives (bit i for entry i): a run without one has all-zero statuses.</summary>
    internal ulong Receives;

    /// <summary>Entries the core counted against the request pool (mp_list_reserve): posts below it need no check.</summary>
    internal int Room;

    /// <summary>Each entry's pin (library mode, movable arrays); allocated with the block's first pin.</summary>
    internal BufferHold?[]? Pins;

    /// <summary>Once dissolved: each entry's slot (null for one completed before), and below, the slot's version for it.</summary>
    internal RequestSlot?[]? Slots;

    /// <summary>Once dissolved: the version of <see cref="Slots"/>[i] that entry i's requests name.</summary>
    internal int[]? SlotVersions;

    /// <summary>A block with an empty list of <see cref="Capacity"/> entries.</summary>
    internal RequestBlock()
    {
        ListHandle list;
        ThrowHelper.Check(Core.ListCreate(Capacity, &list));
        List = list;
    }

    /// <summary>True once the block was dissolved: its entries are slots.</summary>
    internal bool Dissolved => Slots is not null;

    /// <summary>The version a request on entry <paramref name="index"/> of this epoch names.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal long VersionOf(int index) => (Epoch << IndexBits) | (uint)index;

    /// <summary>The entries [first, first + n) as bits (n from 1 to <see cref="Capacity"/>).</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static ulong Range(int first, int n) => (ulong.MaxValue >> (Capacity - n)) << first;

    /// <summary>
    /// The request on entry (<paramref name="version"/>) in its slot form: the block is dissolved
    /// first if it was not; a request of an older epoch, or of an entry completed already, gives
    /// a stale request (refused by whatever uses it, as a stale slot's request is).
    /// </summary>
    internal Request Slotted(long version)
    {
        int i = (int)(version & (Capacity - 1));
        if (version >> IndexBits != Epoch || i >= Count)
            return Request.Stale;
        if (Slots is null)
        {
            if ((Done >> i & 1) != 0)
                return Request.Stale;
            Dissolve();
        }
        return Slots![i] is { } s ? Request.OnSlot(s, SlotVersions![i]) : Request.Stale;
    }

    /// <summary>True while entry (<paramref name="version"/>) names an operation not completed here; dissolves nothing.</summary>
    internal bool IsLive(long version)
    {
        int i = (int)(version & (Capacity - 1));
        if (version >> IndexBits != Epoch || i >= Count)
            return false;
        if (Slots is null)
            return (Done >> i & 1) == 0;
        return Slots[i] is { } s && s.Version == SlotVersions![i];
    }

    /// <summary>True while entry (<paramref name="version"/>) holds a pinned GCHandle on its buffer (library mode); dissolves nothing.</summary>
    internal bool HoldsPin(long version)
    {
        int i = (int)(version & (Capacity - 1));
        if (!IsLive(version))
            return false;
        return Slots is null ? Pins?[i] is not null : Request.OnSlot(Slots[i]!, SlotVersions![i]).HoldsPin;
    }

    /// <summary>
    /// Turns every entry still in flight into an ordinary request on a slot (the core's
    /// list_free makes each an ordinary core request) and lets go of the list.  When the core's
    /// request table has no room for an entry, the list keeps that one: its request then fails
    /// with the core's error when it is completed, and its buffer stays held for the rest of the
    /// process (MPI may still write into it).
    /// </summary>
    private void Dissolve()
    {
        int n = Count, rc;
        var pending = new RequestHandle[n];
        fixed (RequestHandle* p = pending)
            rc = Core.ListFree(List, n > 0 ? p : null);
        var slots = new RequestSlot?[n];
        var versions = new int[n];
        RequestPoster poster = RequestPoster.Current;
        for (int i = 0; i < n; i++)
        {
            if ((Done >> i & 1) != 0)
                continue;
            BufferHold? pin = Pins?[i];
            RequestSlot s = poster.Rent();
            if (pending[i] != RequestHandle.Null)
            {
                s.Handle = pending[i];
                s.Pin = pin;
            }
            else
            {
                // Kept by the core's list (its table was full): failed here, held there.
                if (pin is not null)
                    RequestList.HoldForever(pin);
                s.Done = true;
                s.Result = rc < 0 ? rc : 0; // (rc 0: MPI completed it; its status was not kept)
                s.Status = Request.EmptyStatus;
            }
            slots[i] = s;
            versions[i] = s.Version;
        }
        if (Pins is not null)
            Array.Clear(Pins);
        SlotVersions = versions;
        Slots = slots;
        if (rc >= 0)
            List = default;
        GC.SuppressFinalize(this); // nothing in flight is the block's any more
        poster.Dissolved(this);
    }

    /// <summary>True when entries [first, first + n) are all sends: their statuses are all zero.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal bool SendsOnly(int first, int n) => (Receives & Range(first, n)) == 0;

    /// <summary>Waits for entries [first, first + n), all open (MPI_Waitall over that range of the list); <paramref name="statuses"/>: n of them, or null.</summary>
    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    internal void WaitAll(int first, int n, Status* statuses)
    {
        var range = new Completion.ListRange(List, first, n, statuses);
        long t0 = MpiProfile.Begin();
        int rc = Completion.PollThenBlock(ref range, RequestSet.SetPolls(n));
        MpiProfile.End(ProfiledCall.WaitAll, t0);
        Finish(first, n, rc);
    }

    /// <summary>Tests whether entries [first, first + n), all open, completed (MPI_Testall over that range); completes them when so.</summary>
    internal bool TestAll(int first, int n)
    {
        int rc = Core.ListTestallRange(List, first, n, null);
        if (rc == 0)
            return false;
        Finish(first, n, rc);
        return true;
    }

    /// <summary>
    /// The core completed entries [first, first + n) (rc its result, &lt; 0 when MPI failed the
    /// call): those completed are done (<see cref="Complete"/>).  Throws the failure.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal void Finish(int first, int n, int rc)
    {
        if (rc < 0)
            FinishFailed(first, n, rc);
        Complete(Range(first, n));
    }

    /// <summary>
    /// MPI failed the call over the range (MPI-4.0 §3.7.5): the entries it completed are done;
    /// those it left pending (the core's list says which) stay in flight, for a later set or a
    /// dissolve.  Throws the error.
    /// </summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    private void FinishFailed(int first, int n, int rc)
    {
        Exception error = ThrowHelper.CoreException(rc); // first: the core's calls below replace its last error
        ulong done = 0;
        bool listLeft = Core.ListCount(List) > 0;
        for (int i = first; i < first + n; i++)
        {
            if (!listLeft || Core.ListPending(List, i) != 1)
                done |= 1UL << i;
        }
        Complete(done);
        throw error;
    }

    /// <summary>
    /// The entries of <paramref name="done"/> completed: their pins released; when every entry of
    /// the epoch is done, the block starts the next one.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private void Complete(ulong done)
    {
        Done |= done;
        if (Pins is not null)
            ReleasePins(done);
        if (Done == Range(0, Count))
            NextEpoch();
        if (Request.OrphanedHolds != 0)
            Request.SweepOrphans();
    }

    /// <summary>Releases the pins of the entries of <paramref name="done"/>.</summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    private void ReleasePins(ulong done)
    {
        BufferHold?[] pins = Pins!;
        for (int i = 0; i < Capacity; i++)
        {
            if ((done >> i & 1) != 0)
                BufferHold.Release(ref pins[i]);
        }
    }

    /// <summary>
    /// Every entry of the epoch is done (the core's list emptied itself): the block's requests
    /// become stale, and it is posted into from index 0 again, by its poster (the block it posts
    /// into, or one for its pool).
    /// </summary>
    private void NextEpoch()
    {
        Epoch++;
        Done = 0;
        Receives = 0;
        int full = Count;
        Count = 0;
        if (full == Capacity)
            RequestPoster.Current.ReturnBlock(this);
    }

    /// <summary>Dropped with entries in flight: they are given up (their buffers held until the core sees them complete).</summary>
    ~RequestBlock()
    {
        if (List != default)
            RequestList.AbandonEntries(List, Count, Pins);
    }
}
