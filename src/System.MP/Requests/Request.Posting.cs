using System.MP.Interop;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Threading;

namespace System.MP;

// Posting: each nonblocking operation holds its buffers as BufferPolicy decides.
public readonly unsafe partial struct Request
{
    /// <summary>Posts a nonblocking collective over up to two arrays (send, receive).</summary>
    internal static Request PostCollective<T>(CommHandle comm, CollDesc* d, T[]? send, T[]? recv) where T : unmanaged =>
        PostCollective(comm, d, send, recv, null);

    /// <summary>
    /// Posts a nonblocking collective; <paramref name="hood"/>, when not null, makes it a
    /// neighborhood collective (MPI-4.0 §8.6) whose native counts the request holds until completion.
    /// </summary>
    internal static Request PostCollective<T>(CommHandle comm, CollDesc* d, T[]? send, T[]? recv, NeighborBlock* hood)
        where T : unmanaged
    {
        RequestHandle req = RequestHandle.Null;
        int rc;
        long t0 = MpiProfile.Begin();
        BufferHoldKind sendHold = BufferPolicy.For(send, send?.Length ?? 0);
        BufferHoldKind recvHold = BufferPolicy.For(recv, recv?.Length ?? 0);
        if (sendHold != BufferHoldKind.Pin && recvHold != BufferHoldKind.Pin)
        {
            fixed (T* s = send)
            fixed (T* r = recv)
            {
                d->SendBuf = s;
                d->RecvBuf = r;
                rc = PostCore(comm, d, sendHold == BufferHoldKind.Register ? BufferPolicy.ObjectOf(ref send!) : null,
                              recvHold == BufferHoldKind.Register ? BufferPolicy.ObjectOf(ref recv!) : null, hood, &req);
            }
            MpiProfile.End(hood is null ? ProfiledCall.NonblockingCollective : ProfiledCall.NonblockingNeighbor, t0, d);
            return Posted(RequestPoster.Current, rc, req, NativeHold(hood, null, null));
        }
        // The pins keep the arrays in place, so the addresses taken under
        // `fixed` stay valid after it.
        RequestPoster poster = RequestPoster.Current;
        BufferHold? ps = sendHold == BufferHoldKind.Pin ? BufferHold.Acquire(send!, poster) : null;
        BufferHold? pr = recvHold == BufferHoldKind.Pin ? BufferHold.Acquire(recv!, poster) : null;
        fixed (T* s = send)
        fixed (T* r = recv)
        {
            d->SendBuf = s;
            d->RecvBuf = r;
        }
        rc = PostCore(comm, d, null, null, hood, &req);
        MpiProfile.End(hood is null ? ProfiledCall.NonblockingCollective : ProfiledCall.NonblockingNeighbor, t0, d);
        BufferHold? native = NativeHold(hood, ps, pr);
        if (rc < 0)
        {
            Exception e = ThrowHelper.CoreException(rc);
            if (native is not null)
                native.Release();
            else
            {
                ps?.Release();
                pr?.Release();
            }
            throw e;
        }
        return native is not null ? InFlight(poster, req, native, null) : InFlight(poster, req, ps, pr);
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static int PostCore(CommHandle comm, CollDesc* d, void* sendObj, void* recvObj, NeighborBlock* hood, RequestHandle* req) =>
        hood is null ? Core.CollPost(comm, d, sendObj, recvObj, req)
                     : Core.NeighborPost(comm, d, hood->SendBytes, hood->RecvBytes, hood->Scratch, sendObj, recvObj, req);

    private static BufferHold? NativeHold(NeighborBlock* hood, BufferHold? with1, BufferHold? with2) =>
        hood is null || hood->Memory is null ? null : BufferHold.ForNative(hood->Memory, with1, with2);

    /// <summary>
    /// Posts a send whose every argument the caller has checked as the core would
    /// (Communicator.ISend/ISsend): the core's isend trusts them and does not check them again.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static unsafe Request PostSend<T>(T[] buffer, int offset, int count, int dest, int tag, CommHandle comm, int mode)
        where T : unmanaged
    {
        RequestPoster poster = RequestPoster.Current;
        if (poster.BlockMode && dest >= 0) // not ProcNull: a block's entries are all given to MPI
            return PostSendInBlock(poster, buffer, offset, count, dest, tag, comm, mode);
        RequestHandle req = RequestHandle.Null;
        int rc;
        bool register = BufferPolicy.Hold(buffer, count, poster, out BufferHold? pin);
        // Under `fixed` until the posting call has registered the array; a
        // pinned (or immobile) array keeps its address after it.  The caller
        // checked the slice (ThrowHelper.CheckSlice): the array's data
        // reference needs no null or empty check, and an empty slice is sent
        // from a valid address.  The caller checked every argument (communicator,
        // rank, tag, slice): the core's entry trusts that and looks only at MPI's
        // state and the special ranks.
        fixed (T* p = &MemoryMarshal.GetArrayDataReference(buffer))
        {
            void* obj = register ? BufferPolicy.ObjectOf(ref buffer) : null;
            rc = MpiProfile.Enabled ? ProfiledIsend(p + offset, (long)count * sizeof(T), dest, tag, comm, mode, obj, &req)
                                    : Core.Isend(p + offset, (long)count * sizeof(T), dest, tag, comm, mode, obj, &req);
        }
        return Posted(poster, rc, req, pin);
    }

    /// <summary>
    /// Posts a receive whose arguments the caller has checked (Communicator.IRecv), as <see cref="PostSend{T}"/>;
    /// <paramref name="onSlot"/>: never as an entry of a block (a request that gets a status reader).
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static unsafe Request PostRecv<T>(T[] buffer, int offset, int count, int source, int tag, CommHandle comm, bool onSlot = false)
        where T : unmanaged
    {
        RequestPoster poster = RequestPoster.Current;
        if (!onSlot && poster.BlockMode && (source | tag) >= 0) // a rank and a tag: no wildcard (AnyTag receives are recorded), not ProcNull
            return PostRecvInBlock(poster, buffer, offset, count, source, tag, comm);
        RequestHandle req = RequestHandle.Null;
        int rc;
        if (tag == Mpi.AnyTag && ReservedPieces.StreamCount != 0)
            ReservedPieces.AwaitStreams(source, comm);
        bool register = BufferPolicy.Hold(buffer, count, poster, out BufferHold? pin);
        fixed (T* p = &MemoryMarshal.GetArrayDataReference(buffer)) // as PostSend
        {
            void* obj = register ? BufferPolicy.ObjectOf(ref buffer) : null;
            rc = MpiProfile.Enabled ? ProfiledIrecv(p + offset, (long)count * sizeof(T), source, tag, comm, obj, &req)
                                    : Core.Irecv(p + offset, (long)count * sizeof(T), source, tag, comm, obj, &req);
        }
        return Posted(poster, rc, req, pin);
    }

    /// <summary>A send posted as the next entry of the poster's block (<see cref="RequestBlock"/>), as <see cref="PostSend{T}"/>.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static Request PostSendInBlock<T>(RequestPoster poster, T[] buffer, int offset, int count, int dest, int tag, CommHandle comm, int mode)
        where T : unmanaged
    {
        RequestBlock b = poster.BlockToPost;
        int i = b.Count, rc;
        bool register = BufferPolicy.Hold(buffer, count, poster, out BufferHold? pin);
        fixed (T* p = &MemoryMarshal.GetArrayDataReference(buffer)) // as PostSend
        {
            void* obj = register ? BufferPolicy.ObjectOf(ref buffer) : null;
            rc = MpiProfile.Enabled ? RequestList.ProfiledIsend(b.List, p + offset, (long)count * sizeof(T), dest, tag, comm, mode, obj)
                                    : Core.ListIsend(b.List, p + offset, (long)count * sizeof(T), dest, tag, comm, mode, obj);
        }
        return PostedInBlock(b, i, rc, pin);
    }

    /// <summary>A receive posted as the next entry of the poster's block, as <see cref="PostSendInBlock{T}"/>.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static Request PostRecvInBlock<T>(RequestPoster poster, T[] buffer, int offset, int count, int source, int tag, CommHandle comm)
        where T : unmanaged
    {
        RequestBlock b = poster.BlockToPost;
        int i = b.Count, rc;
        bool register = BufferPolicy.Hold(buffer, count, poster, out BufferHold? pin);
        fixed (T* p = &MemoryMarshal.GetArrayDataReference(buffer))
        {
            void* obj = register ? BufferPolicy.ObjectOf(ref buffer) : null;
            rc = MpiProfile.Enabled ? RequestList.ProfiledIrecv(b.List, p + offset, (long)count * sizeof(T), source, tag, comm, obj)
                                    : Core.ListIrecv(b.List, p + offset, (long)count * sizeof(T), source, tag, comm, obj);
        }
        b.Receives |= 1UL << i; // before the post's end: a refused one is never completed, so its bit is never read
        return PostedInBlock(b, i, rc, pin);
    }

    /// <summary>A post into entry <paramref name="i"/> of <paramref name="b"/>: refused (nothing posted, the pin released, thrown), or the entry counted with its pin.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static Request PostedInBlock(RequestBlock b, int i, int rc, BufferHold? pin)
    {
        if (rc != 0)
            RequestList.Refused(b.List, i, rc, pin);
        if (pin is not null)
            (b.Pins ??= new BufferHold?[RequestBlock.Capacity])[i] = pin;
        b.Count = i + 1; // dropped requests are swept when the block's sets complete (RequestBlock.Finish)
        return OnBlock(b, i);
    }

    // PostSend and PostRecv are inlined into the user's code: the profile's hooks sit in these
    // calls of their own, chosen by one test of MpiProfile.Enabled.  The JIT folds that test
    // wherever the setting is known when the user's method is compiled (under motor, and in every
    // method tiered compilation optimizes); where it is not (library mode without tiered
    // compilation, the user's Main compiled before System.MP starts), a post pays that one test.

    /// <summary>Core.Isend, timed for the profile (a post the core refuses is recorded too).</summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    private static int ProfiledIsend(void* buf, long bytes, int dest, int tag, CommHandle comm, int mode, void* obj, RequestHandle* req)
    {
        long t0 = MpiProfile.Begin();
        int rc = Core.Isend(buf, bytes, dest, tag, comm, mode, obj, req);
        MpiProfile.End(mode == CoreSendMode.Sync ? ProfiledCall.ISsend : ProfiledCall.ISend, t0, bytes, dest);
        return rc;
    }

    /// <summary>Core.Irecv, timed for the profile.</summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    private static int ProfiledIrecv(void* buf, long bytes, int source, int tag, CommHandle comm, void* obj, RequestHandle* req)
    {
        long t0 = MpiProfile.Begin();
        int rc = Core.Irecv(buf, bytes, source, tag, comm, obj, req);
        MpiProfile.End(ProfiledCall.IRecv, t0, bytes, source);
        return rc;
    }

    /// <summary>
    /// Posts a nonblocking file access (MpiFile.IReadAt/IWriteAt).  At thread level Multiple the
    /// core runs it on a thread of its own and the array stays in flight until the request
    /// completes, held as a receive's is (pinned under dotnet, registered under motor); below
    /// Multiple the core makes the access inside the call and the request is complete at once.
    /// </summary>
    internal static unsafe Request PostFile<T>(T[] buffer, int offset, int count, FileHandle file, int op, long fileOffset)
        where T : unmanaged
    {
        RequestHandle req = RequestHandle.Null;
        int rc;
        RequestPoster poster = RequestPoster.Current;
        BufferHold? pin = null;
        bool register = Mpi.ThreadLevel == ThreadLevel.Multiple // below it the access ends inside the call
                        && BufferPolicy.Hold(buffer, count, poster, out pin);
        fixed (T* p = &MemoryMarshal.GetArrayDataReference(buffer)) // as PostRecv
            rc = Core.FileIpost(file, op, fileOffset, p + offset, (long)count * sizeof(T),
                                register ? BufferPolicy.ObjectOf(ref buffer) : null, &req);
        return Posted(poster, rc, req, pin);
    }

    /// <summary>
    /// Posts a send of native memory that <paramref name="hold"/> keeps valid (one
    /// message of an object send's payload): the hold lets go of it when this
    /// operation completes, or, if the request is dropped, when the core sees it complete.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    internal static Request PostHeldSend(byte* buffer, long bytes, int dest, int tag, CommHandle comm, BufferHold hold)
    {
        RequestHandle req = RequestHandle.Null;
        RequestPoster poster = RequestPoster.Current;
        long t0 = MpiProfile.Begin();
        int rc = Core.Isend(buffer, bytes, dest, tag, comm, CoreSendMode.Standard, null, &req);
        MpiProfile.End(ProfiledCall.ISend, t0, bytes, dest);
        return Posted(poster, rc, req, hold);
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static Request Posted(RequestPoster poster, int rc, RequestHandle req, BufferHold? pin)
    {
        if (rc < 0)
            ThrowPostFailed(rc, pin);
        if (Volatile.Read(ref Orphans.Count) != 0)
            SweepOrphans();
        RequestSlot s = poster.Rent();
        s.Handle = req;
        if (pin is not null) // a slot comes back without pins: no write barrier for a null
            s.Pin = pin;
        return new Request(s);
    }

    /// <summary>A request on a pooled slot for the operation <paramref name="req"/> the core accepted, holding its pins.</summary>
    private static Request InFlight(RequestPoster poster, RequestHandle req, BufferHold? pin, BufferHold? pin2)
    {
        RequestSlot s = poster.Rent();
        s.Handle = req;
        s.Pin = pin;
        s.Second = pin2;
        return new Request(s);
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    internal static void ThrowPostFailed(int rc, BufferHold? pin, string? rangeParam = null)
    {
        Exception e = ThrowHelper.CoreException(rc, rangeParam);
        pin?.Release();
        throw e;
    }
}
