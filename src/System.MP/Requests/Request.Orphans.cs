using System.Collections.Concurrent;
using System.MP.Interop;
using System.Threading;

namespace System.MP;

// Orphans: operations whose Request was disposed or dropped, completed and released later.
public sealed unsafe partial class Request
{
    private static readonly ConcurrentQueue<(RequestHandle Handle, BufferHold? Pin, BufferHold? Pin2)> s_orphans = new();

    /// <summary>
    /// The count every posting and completion reads, in a class of its own: one without
    /// a static constructor, so code compiled before Request's ran reads it without a
    /// class-initialization check.
    /// </summary>
    private static class Orphans
    {
        internal static int Count;
        internal static long Checks;
    }

    /// <summary>Dropped operations whose buffers are still held (tests; completions sweep while it is not 0).</summary>
    internal static int OrphanedHolds => Volatile.Read(ref Orphans.Count);

    /// <summary>How many times a sweep has asked the core whether a dropped operation is still in flight (tests).</summary>
    internal static long OrphanChecks => Interlocked.Read(ref Orphans.Checks);

    /// <summary>Gives up an operation nobody will complete (disposed, or its request dropped).</summary>
    internal static void Abandon(RequestFinalizerBatch group, int index)
    {
        RequestHandle h = group.Handles[index];
        if (h == RequestHandle.Null)
            return;
        group.Handles[index] = RequestHandle.Null;
        if (group.PinSlots is { } slots)
        {
            ref RequestFinalizerBatch.Pins op = ref slots[index];
            Abandon(h, op.Pin, op.Pin2);
            op.Pin = op.Pin2 = null;
        }
        else
            Abandon(h, null, null);
    }

    /// <summary>
    /// Gives up the operation <paramref name="handle"/> and keeps its pins until the core has
    /// finished with it (a dropped request, or a RequestList's entry); calls no MPI (any thread).
    /// </summary>
    internal static void Abandon(RequestHandle handle, BufferHold? pin, BufferHold? pin2)
    {
        // The core owns completion: it frees the slot once it sees the
        // operation done (in a later wait, a sweep, or at a GC mark under
        // motor).  This touches no MPI state, so the finalizer thread may call it.
        Core.ReqOrphan(handle);
        if (pin is not null || pin2 is not null)
            AbandonPins(handle, pin, pin2);
    }

    /// <summary>
    /// Keeps the pins of an orphaned operation (<paramref name="handle"/>, given to
    /// Core.ReqOrphan) until the core has freed it; calls no MPI (any thread).
    /// </summary>
    internal static void AbandonPins(RequestHandle handle, BufferHold? pin, BufferHold? pin2)
    {
        s_orphans.Enqueue((handle, pin, pin2));
        if (Interlocked.Increment(ref Orphans.Count) == 1)
            GcSweep.Arm();
    }

    /// <summary>
    /// Dropped requests still in flight after which one completion call stops looking (the next
    /// goes on from there), as the core's sweep does: requests that never complete cost each
    /// later call a bounded amount, while a burst of finished ones is released at once.
    /// </summary>
    private const int SweepBudget = 64;

    /// <summary>
    /// On a user thread: lets the core complete dropped requests (MPI_Test),
    /// then releases the pins of those it freed.
    /// </summary>
    internal static void SweepOrphans()
    {
        Core.ReqSweep();
        ReleaseCompletedOrphans(SweepBudget);
    }

    /// <summary>Frees the pins of dropped requests the core has finished with, until <paramref name="budget"/> of those looked at are still in flight; calls no MPI (any thread).</summary>
    private static void ReleaseCompletedOrphans(int budget)
    {
        int live = 0, looked = 0;
        for (int n = s_orphans.Count; n > 0 && live < budget && s_orphans.TryDequeue(out var o); n--)
        {
            looked++;
            if (Core.ReqLive(o.Handle) != 0)
            {
                s_orphans.Enqueue(o);
                live++;
                continue;
            }
            o.Pin?.Release();
            o.Pin2?.Release();
            Interlocked.Decrement(ref Orphans.Count);
        }
        Interlocked.Add(ref Orphans.Checks, looked);
    }

    /// <summary>
    /// The GC-triggered sweep of library mode: an object that is finalized after
    /// each GC that finds it unreachable (re-registering itself while dropped
    /// requests hold pins), so pins of completed orphans are released even
    /// when the program makes no further nonblocking calls.
    /// </summary>
    private sealed class GcSweep
    {
        private static int s_armed;

        internal static void Arm()
        {
            if (Interlocked.Exchange(ref s_armed, 1) == 0)
                _ = new GcSweep();
        }

        ~GcSweep()
        {
            ReleaseCompletedOrphans(int.MaxValue);
            if (Volatile.Read(ref Orphans.Count) != 0 && !Environment.HasShutdownStarted)
            {
                GC.ReRegisterForFinalize(this);
                return;
            }
            Volatile.Write(ref s_armed, 0);
            if (Volatile.Read(ref Orphans.Count) != 0)
                Arm(); // an orphan arrived meanwhile
        }
    }
}
