using System.MP.Interop;
using System.Runtime.CompilerServices;

namespace System.MP;

/// <summary>How an operation in flight keeps an array in place (<see cref="BufferPolicy.For"/>).</summary>
internal enum BufferHoldKind : byte
{
    /// <summary>Nothing to hold: no bytes, or an array that never moves (<see cref="Mpi.AllocatePinned{T}"/>).</summary>
    None,

    /// <summary>The posting call hands the array's object to the core (<see cref="BufferPolicy.ObjectOf"/>), and motor's
    /// GC extension pins it at mark time while the operation is in flight.</summary>
    Register,

    /// <summary>A pinned GCHandle (<see cref="BufferHold"/>) keeps it until the operation completes (plain dotnet).</summary>
    Pin,
}

/// <summary>
/// The one answer to "may the GC move this array while MPI uses it, and if so what keeps it
/// in place", for every path that leaves an array with MPI past the call that gave it:
/// nonblocking point-to-point and collectives (Request.Posting.cs), request lists
/// (RequestList.cs), persistent starts (PersistentRequest.cs), one-sided operations
/// (Window.Typed.cs, held until the synchronization that completes them: <see cref="EpochPins"/>)
/// and a window's memory (<see cref="HoldForLife"/>).  Operations whose buffer address MPI binds when they are made
/// (persistent collectives, partitioned requests) cannot follow a moved array: for them a
/// movable array (<see cref="Moves"/>) is staged in native memory instead of held.  A
/// blocking call needs none of this: its <c>fixed</c> frame pins the array until MPI is done.
/// </summary>
/// <remarks>
/// A hold is let go through <see cref="BufferHold.Release()"/> (a slot's hold through
/// <see cref="BufferHold.Release(ref BufferHold?)"/>); a registered array needs no release:
/// the core forgets it when its operation completes.
/// </remarks>
internal static unsafe class BufferPolicy
{
    /// <summary>
    /// True when the GC extension is attached to the core this process uses, so registered
    /// arrays are pinned by the GC itself and no GCHandle is needed.  The core says so only
    /// after the runtime accepted the extension at startup; it never changes later.
    /// </summary>
    internal static readonly bool RegistersBuffers = GcExtensionStats().GcExtension != 0;

    /// <summary>The core's statistics, for what the GC extension told it when the GC started (it never changes later).</summary>
    internal static CoreStats GcExtensionStats()
    {
        CoreStats s;
        CoreLoader.EnsureLoaded();
        Core.Stats(&s);
        return s;
    }

    /// <summary>Whether <paramref name="bytes"/> of <paramref name="array"/> can move while MPI uses them: bytes to
    /// send or receive, in an array not on the pinned object heap.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static bool Moves(Array? array, long bytes) =>
        array is not null && bytes > 0 && !PinnedBuffers.Contains(array);

    /// <summary>The runtime's default large-object threshold: arrays of this many bytes or more are allocated on the large object heap.</summary>
    internal const long LargeObjectBytes = 85_000;

    /// <summary>
    /// Whether an operation whose buffer address MPI binds when it is made may pin
    /// <paramref name="array"/> (<paramref name="arrayBytes"/> long) for as long as the operation
    /// lives instead of staging it: a large array the GC already keeps in its oldest generation
    /// (the large object heap, which is compacted only when asked), where a long pin costs the GC
    /// next to nothing and a staging copy at every start would cost as much as the transfer.
    /// </summary>
    internal static bool MayPinForLife(Array array, long arrayBytes) =>
        arrayBytes >= LargeObjectBytes && GC.GetGeneration(array) == GC.MaxGeneration;

    /// <summary>A pinned GCHandle of its own on <paramref name="array"/>, shared with no operation: released by its owner.</summary>
    internal static BufferHold PinForLife(Array array) => BufferHold.PinAlone(array);

    /// <summary>
    /// What keeps <paramref name="array"/> in place while MPI may access it at any time (a window's
    /// memory, from its creation until it is freed): a pinned GCHandle of its own in both modes, since
    /// the GC extension holds the arrays of operations in flight, not memory exposed for good; null
    /// when the array never moves (empty, or on the pinned object heap).  Released by its owner.
    /// </summary>
    internal static BufferHold? HoldForLife(Array array) => Moves(array, array.LongLength) ? PinForLife(array) : null;

    /// <summary>What keeps <paramref name="bytes"/> of <paramref name="array"/> in place while an operation on them is in flight.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static BufferHoldKind For(Array? array, long bytes) =>
        !Moves(array, bytes) ? BufferHoldKind.None : RegistersBuffers ? BufferHoldKind.Register : BufferHoldKind.Pin;

    /// <summary>
    /// <see cref="For"/> on a posting thread's hot path, acted on: true when the posting call
    /// must register the array with the core (pass <see cref="ObjectOf"/>), else
    /// <paramref name="pin"/> holds it (null when nothing needs to).  The thread's poster
    /// remembers its last pinned-heap array and its last pin, so a window of operations on one
    /// buffer looks the array up once and shares one GCHandle.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static bool Hold<T>(T[] buffer, int count, RequestPoster poster, out BufferHold? pin)
    {
        pin = null;
        if (count <= 0 || PinnedBuffers.Contains(buffer, ref poster.LastImmobile))
            return false;
        if (RegistersBuffers)
            return true;
        pin = BufferHold.Acquire(buffer, poster);
        return false;
    }

    /// <summary>Pins <paramref name="array"/> (<see cref="BufferHoldKind.Pin"/>) for one more operation of the calling thread.</summary>
    internal static BufferHold Pin(Array array) => BufferHold.Acquire(array, RequestPoster.Current);

    /// <summary>The array's object address, which a registering post hands to the core; stable only while the array is fixed.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static void* ObjectOf<TArray>(ref TArray array) where TArray : class => (void*)Unsafe.As<TArray, nint>(ref array);
}
