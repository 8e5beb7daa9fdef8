using System.Runtime.CompilerServices;

namespace Scenarios;

/// <summary>What scenarios do to the managed heap to show that buffers MPI holds stay put.</summary>
internal static class Heap
{
    /// <summary>A blocking, compacting collection of every generation: whatever may move, moves.</summary>
    internal static void CompactAll() => GC.Collect(2, GCCollectionMode.Forced, blocking: true, compacting: true);

    /// <summary>
    /// Where the array's first element is now.  Not inlined: an inlined read is a plain integer
    /// to the JIT, which may reuse an earlier one (or hoist it out of a loop) across a collection
    /// that moved the array, and a check that the array did not move would then hold by itself.
    /// </summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    internal static unsafe nint Address<T>(T[] a) => (nint)Unsafe.AsPointer(ref a[0]);
}
