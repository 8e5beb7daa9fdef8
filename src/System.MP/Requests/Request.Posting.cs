using System.MP.Interop;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Threading;

namespace System.MP;

// Posting: how a buffer stays in place while its operation is in flight (the pinning policy).
public sealed unsafe partial class Request
{
    /// <summary>
    /// True when the GC extension is attached to the core this process uses, so
    /// registered buffers are pinned by the GC itself and no GCHandle is needed.
    /// The core says so only after the runtime accepted the extension at startup.
    /// </summary>
    internal static readonly bool s_registerBuffers = GcExtensionStats().GcExtension != 0;

    /// <summary>The core's statistics, for what the GC extension told it when the GC started (it never changes later).</summary>
    internal static CoreStats GcExtensionStats()
    {
        CoreStats s;
        CoreLoader.EnsureLoaded();
        Core.Stats(&s);
        return s;
    }

    /// <summary>Posts a nonblocking collective over up to two arrays (send, receive).</summary>
    internal static Request PostCollective<T>(int comm, CollDesc* d, T[]? send, T[]? recv) where T : unmanaged =>
        PostCollective(comm, d, send, recv, null);

    /// <summary>
    /// Posts a nonblocking collective; <paramref name="hood"/>, when not null, makes it a
    /// neighborhood collective (MPI-4.0 §8.6) whose native counts the request holds until completion.
    /// </summary>
    internal static Request PostCollective<T>(int comm, CollDesc* d, T[]? send, T[]? recv, NeighborBlock* hood)
        where T : unmanaged
    {
        int req = 0, rc;
        bool sendImmobile = send is not { Length: > 0 } || PinnedBuffers.Contains(send);
        bool recvImmobile = recv is not { Length: > 0 } || PinnedBuffers.Contains(recv);
        if (s_registerBuffers || (sendImmobile && recvImmobile))
        {
            fixed (T* s = send)
            fixed (T* r = recv)
            {
                d->SendBuf = s;
                d->RecvBuf = r;
                rc = PostCore(comm, d, sendImmobile ? null : ObjectAddress(ref send!),
                              recvImmobile ? null : ObjectAddress(ref recv!), hood, &req);
            }
            return Posted(RequestGroup.CurrentPoster, rc, req, NativeHold(hood, null, null));
        }
        // The pins keep the arrays in place, so the addresses taken under
        // `fixed` stay valid after it.
        RequestGroup.Poster poster = RequestGroup.CurrentPoster;
        BufferHold? ps = sendImmobile ? null : BufferHold.Acquire(send!, ref poster.LastPin);
        BufferHold? pr = recvImmobile ? null : BufferHold.Acquire(recv!, ref poster.LastPin);
        fixed (T* s = send)
        fixed (T* r = recv)
        {
            d->SendBuf = s;
            d->RecvBuf = r;
        }
        rc = PostCore(comm, d, null, null, hood, &req);
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
        return native is not null ? new Request(poster, req, native, null) : new Request(poster, req, ps, pr);
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static int PostCore(int comm, CollDesc* d, void* sendObj, void* recvObj, NeighborBlock* hood, int* req) =>
        hood is null ? Core.CollPost(comm, d, sendObj, recvObj, req)
                     : Core.NeighborPost(comm, d, hood->SendBytes, hood->RecvBytes, hood->Scratch, sendObj, recvObj, req);

    private static BufferHold? NativeHold(NeighborBlock* hood, BufferHold? with1, BufferHold? with2) =>
        hood is null || hood->Memory is null ? null : BufferHold.ForNative(hood->Memory, with1, with2);

    /// <summary>
    /// Posts a send whose every argument the caller has checked as the core would
    /// (Communicator.ISend/ISsend): the core's isend trusts them and does not check them again.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static unsafe Request PostSend<T>(T[] buffer, int offset, int count, int dest, int tag, int comm, int mode)
        where T : unmanaged
    {
        int req = 0, rc;
        RequestGroup.Poster poster = RequestGroup.CurrentPoster;
        bool register = Hold(buffer, count, poster, out BufferHold? pin);
        // Under `fixed` until the posting call has registered the array; a
        // pinned (or immobile) array keeps its address after it.  The caller
        // checked the slice (Communicator.CheckSlice): the array's data
        // reference needs no null or empty check, and an empty slice is sent
        // from a valid address.  The caller checked every argument (communicator,
        // rank, tag, slice): the core's entry trusts that and looks only at MPI's
        // state and the special ranks.
        fixed (T* p = &MemoryMarshal.GetArrayDataReference(buffer))
            rc = Core.Isend(p + offset, (long)count * sizeof(T), dest, tag, comm, mode,
                     register ? ObjectAddress(ref buffer) : null, &req);
        return Posted(poster, rc, req, pin);
    }

    /// <summary>Posts a receive whose arguments the caller has checked (Communicator.IRecv), as <see cref="PostSend{T}"/>.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static unsafe Request PostRecv<T>(T[] buffer, int offset, int count, int source, int tag, int comm)
        where T : unmanaged
    {
        int req = 0, rc;
        RequestGroup.Poster poster = RequestGroup.CurrentPoster;
        bool register = Hold(buffer, count, poster, out BufferHold? pin);
        fixed (T* p = &MemoryMarshal.GetArrayDataReference(buffer)) // as PostSend
            rc = Core.Irecv(p + offset, (long)count * sizeof(T), source, tag, comm,
                     register ? ObjectAddress(ref buffer) : null, &req);
        return Posted(poster, rc, req, pin);
    }

    /// <summary>
    /// Posts a nonblocking file access (MpiFile.IReadAt/IWriteAt).  The core makes the access
    /// inside the call (a failed nonblocking access never completes in MPICH 4.0 and crashes
    /// Open MPI 4.1's wait) and returns a request complete at once: the array needs no hold
    /// beyond the <c>fixed</c> of this blocking-kind call, during which the GC may run.
    /// </summary>
    internal static unsafe Request PostFile<T>(T[] buffer, int offset, int count, int file, int op, long fileOffset)
        where T : unmanaged
    {
        int req = 0, rc;
        RequestGroup.Poster poster = RequestGroup.CurrentPoster;
        fixed (T* p = buffer)
            rc = Core.FileIpost(file, op, fileOffset, p + offset, (long)count * sizeof(T), &req);
        return Posted(poster, rc, req, null);
    }

    /// <summary>
    /// Posts a send of native memory that <paramref name="hold"/> keeps valid (one
    /// message of an object send's payload): the hold lets go of it when this
    /// operation completes, or, if the request is dropped, when the core sees it complete.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    internal static Request PostHeldSend(byte* buffer, long bytes, int dest, int tag, int comm, BufferHold hold)
    {
        int req = 0;
        RequestGroup.Poster poster = RequestGroup.CurrentPoster;
        int rc = Core.Isend(buffer, bytes, dest, tag, comm, CoreConst.SendStandard, null, &req);
        return Posted(poster, rc, req, hold);
    }

    /// <summary>
    /// How an array stays in place while an operation on it is in flight: true
    /// when the posting call must register it with the core (under motor with
    /// the GC extension), else <paramref name="pin"/> holds it (library mode),
    /// or nothing is needed (no elements, or a pinned-heap array).
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static bool Hold<T>(T[] buffer, int count, RequestGroup.Poster poster, out BufferHold? pin)
    {
        pin = null;
        if (count <= 0 || PinnedBuffers.Contains(buffer, ref poster.LastImmobile))
            return false;
        if (s_registerBuffers)
            return true;
        pin = BufferHold.Acquire(buffer, ref poster.LastPin);
        return false;
    }

    /// <summary>The array object's address; stable only while the array is fixed.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static unsafe void* ObjectAddress<T>(ref T[] array) => (void*)Unsafe.As<T[], nint>(ref array);

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static Request Posted(RequestGroup.Poster poster, int rc, int req, BufferHold? pin)
    {
        if (rc < 0)
            ThrowPostFailed(rc, pin);
        if (Volatile.Read(ref Orphans.Count) != 0)
            SweepOrphans();
        return new Request(poster, req, pin, null);
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    internal static void ThrowPostFailed(int rc, BufferHold? pin, string? rangeParam = null)
    {
        Exception e = ThrowHelper.CoreException(rc, rangeParam);
        pin?.Release();
        throw e;
    }
}
