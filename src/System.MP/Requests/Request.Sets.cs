using System.Diagnostics.CodeAnalysis;
using System.MP.Interop;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Threading;
using System.Threading.Tasks;

namespace System.MP;

// Sets of requests: WaitAll, TestAll, WaitAny (RequestSet, allocation-free for up to RequestSet.StackRequests).
// The forms that take an array write the null request over the entries they complete, as
// MPI sets completed handles to MPI_REQUEST_NULL (MPI-4.0 §3.7.5): a WaitAny loop over
// one array skips those it has completed.
public readonly unsafe partial struct Request
{
    /// <summary>Waits for every request (MPI_Waitall) and sets each entry to the null request.</summary>
    /// <param name="requests">The requests; null requests contribute the empty status.</param>
    /// <returns>The statuses, in the order of <paramref name="requests"/>.</returns>
    /// <exception cref="MessageTruncatedException">A receive was truncated (after all requests completed).</exception>
    /// <exception cref="ObjectDisposedException">A request was already completed or disposed (nothing is waited for).</exception>
    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    public static Status[] WaitAll(params Request[] requests)
    {
        ArgumentNullException.ThrowIfNull(requests);
        var statuses = new Status[requests.Length];
        try
        {
            if (IsRun(requests, out RequestBlock? block, out int first))
            {
                // A run of sends: the new array's zeros are their statuses, as the core would write them.
                fixed (Status* st = statuses)
                    block.WaitAll(first, requests.Length, block.SendsOnly(first, requests.Length) ? null : st);
            }
            else
            {
                var set = new Set(SlottedAll(requests));
                RequestSet.WaitAll(ref set, statuses);
                RequestPoster.Current.SetCompleted(requests.Length);
            }
        }
        catch
        {
            ClearCompleted(requests);
            throw;
        }
        Array.Clear(requests); // every entry consumed
        return statuses;
    }

    /// <summary>
    /// Waits for every request (MPI_Waitall) without allocating: the form for
    /// loops that post and complete windows of operations.
    /// </summary>
    /// <param name="requests">The requests; each is consumed (a later use of it throws).</param>
    /// <exception cref="MessageTruncatedException">A receive was truncated (after all requests completed).</exception>
    /// <exception cref="ObjectDisposedException">A request was already completed or disposed (nothing is waited for).</exception>
    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    public static void WaitAll(ReadOnlySpan<Request> requests)
    {
        if (IsRun(requests, out RequestBlock? block, out int first))
        {
            block.WaitAll(first, requests.Length, null);
            return;
        }
        var set = new Set(SlottedAll(requests));
        RequestSet.WaitAll(ref set);
        RequestPoster.Current.SetCompleted(requests.Length);
    }

    /// <summary>Waits for every request (MPI_Waitall) and writes their statuses, without allocating.</summary>
    /// <param name="requests">The requests; each is consumed (a later use of it throws).</param>
    /// <param name="statuses">Receives the statuses, in the order of <paramref name="requests"/>; at least as long.</param>
    /// <exception cref="ArgumentException"><paramref name="statuses"/> is shorter than <paramref name="requests"/>.</exception>
    /// <exception cref="MessageTruncatedException">A receive was truncated (after all requests completed).</exception>
    /// <exception cref="ObjectDisposedException">A request was already completed or disposed (nothing is waited for).</exception>
    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    public static void WaitAll(ReadOnlySpan<Request> requests, Span<Status> statuses)
    {
        if (statuses.Length < requests.Length)
            ThrowHelper.ThrowStatusesTooShort(statuses.Length, requests.Length);
        if (IsRun(requests, out RequestBlock? block, out int first))
        {
            fixed (Status* st = statuses)
                block.WaitAll(first, requests.Length, st);
            return;
        }
        var set = new Set(SlottedAll(requests));
        RequestSet.WaitAll(ref set, statuses[..requests.Length]);
        RequestPoster.Current.SetCompleted(requests.Length);
    }

    /// <summary>Tests whether every request completed (MPI_Testall); completes them all when so, setting each entry to the null request.</summary>
    /// <param name="requests">The requests.</param>
    /// <returns>True when every request has completed (all are then consumed).</returns>
    /// <exception cref="ObjectDisposedException">A request was already completed or disposed.</exception>
    public static bool TestAll(Request[] requests)
    {
        ArgumentNullException.ThrowIfNull(requests);
        bool all;
        try
        {
            all = TestAll(new ReadOnlySpan<Request>(requests));
        }
        finally
        {
            ClearCompleted(requests);
        }
        return all;
    }

    /// <summary>Tests whether every request completed (MPI_Testall); completes them all when so, without allocating.</summary>
    /// <param name="requests">The requests.</param>
    /// <returns>True when every request has completed (all are then consumed).</returns>
    /// <exception cref="ObjectDisposedException">A request was already completed or disposed.</exception>
    public static bool TestAll(ReadOnlySpan<Request> requests)
    {
        if (IsRun(requests, out RequestBlock? block, out int first))
            return block.TestAll(first, requests.Length);
        var set = new Set(SlottedAll(requests));
        bool all = RequestSet.TestAll(ref set);
        if (all)
            RequestPoster.Current.SetCompleted(requests.Length);
        return all;
    }

    /// <summary>Waits until one of the requests completes (MPI_Waitany) and sets its entry to the null request.</summary>
    /// <param name="requests">The requests; null requests (those completed by earlier calls) are skipped.</param>
    /// <param name="status">The status of the one that completed (empty when none was pending).</param>
    /// <returns>Its index, or <see cref="Mpi.Undefined"/> when none was still pending.</returns>
    /// <exception cref="ObjectDisposedException">A request was already completed or disposed (nothing is waited for).</exception>
    public static int WaitAny(Request[] requests, out Status status)
    {
        ArgumentNullException.ThrowIfNull(requests);
        var set = new Set(SlottedAll(requests), clear: requests);
        return RequestSet.WaitAny(ref set, out status);
    }

    /// <summary>Waits for every request of a mixed set (<see cref="MpiRequest.WaitAll(MpiRequest[])"/>).</summary>
    /// <param name="requests">The requests, each at most once.</param>
    /// <returns>The statuses, in the order of <paramref name="requests"/>.</returns>
    public static Status[] WaitAll(params MpiRequest[] requests) => MpiRequest.WaitAll(requests);

    /// <summary>Completes when every request has completed (<see cref="MpiRequest.WhenAll"/>).</summary>
    /// <param name="requests">The requests, each at most once.</param>
    /// <returns>The statuses in the order of <paramref name="requests"/>.</returns>
    public static Task<Status[]> WhenAll(params MpiRequest[] requests) => MpiRequest.WhenAll(requests);

    /// <summary>Completes when one of the requests has completed, with its index (<see cref="MpiRequest.WhenAny"/>).</summary>
    /// <param name="requests">The requests, each at most once; at least one.</param>
    /// <returns>The index of a request that completed.</returns>
    public static Task<int> WhenAny(params MpiRequest[] requests) => MpiRequest.WhenAny(requests);

    /// <summary>
    /// True when <paramref name="requests"/> are the entries [first, first + n) of one block's
    /// epoch, in posting order, none completed: the set one call of the core completes
    /// (<see cref="RequestBlock.WaitAll"/>), with nothing looked up per request.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static bool IsRun(ReadOnlySpan<Request> requests, [NotNullWhen(true)] out RequestBlock? block, out int first)
    {
        block = null;
        first = 0;
        int n = requests.Length;
        ref Request r = ref MemoryMarshal.GetReference(requests);
        if (n == 0 || r._state is not RequestBlock b)
            return false;
        long v = r._version;
        for (nint i = 1; i < n; i++)
        {
            if (!ReferenceEquals(Unsafe.Add(ref r, i)._state, b) || Unsafe.Add(ref r, i)._version != v + i)
                return false;
        }
        int f = (int)(v & (RequestBlock.Capacity - 1));
        if (v >> RequestBlock.IndexBits != b.Epoch || f + n > b.Count || b.Dissolved || (b.Done & RequestBlock.Range(f, n)) != 0)
            return false; // stale, or not a run of open entries: the set's own checks say which
        block = b;
        first = f;
        return true;
    }

    /// <summary>
    /// The requests in their slot form (<see cref="Slotted"/>): themselves when none is an entry of
    /// a block, else a copy in which each is (its block dissolved).
    /// </summary>
    private static ReadOnlySpan<Request> SlottedAll(ReadOnlySpan<Request> requests)
    {
        int k = 0;
        while (k < requests.Length && !requests[k].OnBlockEntry)
            k++;
        return k == requests.Length ? requests : SlottedFrom(requests, k);
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static Request[] SlottedFrom(ReadOnlySpan<Request> requests, int k)
    {
        Request[] copy = requests.ToArray();
        for (int i = k; i < copy.Length; i++)
            copy[i] = copy[i].Slotted();
        return copy;
    }

    /// <summary>A set of requests for <see cref="RequestSet"/>: buffer operations only, which the core completes.</summary>
    private readonly ref struct Set : IRequestSet
    {
        private readonly ReadOnlySpan<Request> _requests;
        private readonly Request[]? _clear;

        /// <param name="requests">The requests.</param>
        /// <param name="clear">The array whose entry WaitAny sets to the null request, as MPI does, before it finishes it.</param>
        internal Set(ReadOnlySpan<Request> requests, Request[]? clear = null)
        {
            _requests = requests;
            _clear = clear;
        }

        public int Count => _requests.Length;

        public static bool RepeatsLeftToCore => true;

        // Handles gathers each request's handle through its version check (SetEntry), and a
        // request keeps its core handle until it is completed, disposed or, dropped, finalized.
        public static bool HandlesVouched => true;

        // FinishAll reads a status of the core's for a status reader (ReleaseInFlight) only; one
        // found complete or the null request gets its own, and a failed set's are not returned.
        public static bool StatusesForReadersOnly => true;

        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        public void Gather(scoped Span<RequestHandle> handles) => Handles(_requests, handles);

        public int KnownComplete()
        {
            for (int i = 0; i < _requests.Length; i++)
                if (_requests[i]._slot is { Done: true }) // found complete by IsCompleted
                    return i;
            return -1;
        }

        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        public void FinishAll(scoped ReadOnlySpan<RequestHandle> handles, scoped Span<Status> statuses, int rc) =>
            Request.FinishAll(_requests, handles, statuses, rc);

        public Status FinishOne(int index, int rc, in Status status)
        {
            RequestSlot s = _requests[index]._slot!;
            if (_clear is not null)
                _clear[index] = default;
            return s.Done ? Finish(s, s.Result, s.Status) : Finish(s, rc, status);
        }
    }

    /// <summary>Checks every request (none completed or disposed already) before anything is waited for: the core handles of a set.</summary>
    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    private static void Handles(ReadOnlySpan<Request> requests, Span<RequestHandle> handles)
    {
        // One length check for the set, none per request (the JIT cannot tell
        // that the two spans are as long as each other; RequestSet.WaitAll made them so).
        if (handles.Length < requests.Length)
            ThrowHelper.ThrowStatusesTooShort(handles.Length, requests.Length);
        ref RequestHandle h = ref MemoryMarshal.GetReference(handles);
        ref Request r = ref MemoryMarshal.GetReference(requests);
        for (nint i = 0, n = requests.Length; i < n; i++) // native-sized: no sign extension per request
            Unsafe.Add(ref h, i) = Unsafe.Add(ref r, i).SetEntry();
    }

    /// <summary>After the core completed the set: every request is consumed (and the first error thrown).</summary>
    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    private static void FinishAll(ReadOnlySpan<Request> requests, ReadOnlySpan<RequestHandle> handles, Span<Status> statuses, int rc)
    {
        if (rc < 0)
        {
            FinishFailed(requests, handles, statuses, rc);
            return;
        }
        // The loop of a set that completed: nothing in it can throw, so the
        // JIT keeps it in registers; the spans' lengths are checked once, as in Handles.
        if (Math.Min(handles.Length, statuses.Length) < requests.Length)
            ThrowHelper.ThrowStatusesTooShort(Math.Min(handles.Length, statuses.Length), requests.Length);
        ref RequestHandle h = ref MemoryMarshal.GetReference(handles);
        ref Status st = ref MemoryMarshal.GetReference(statuses);
        ref Request r = ref MemoryMarshal.GetReference(requests);
        RequestPoster poster = RequestPoster.Current;
        int failed = 0;
        for (nint i = 0, n = requests.Length; i < n; i++)
        {
            RequestSlot? s = Unsafe.Add(ref r, i)._slot;
            // The usual entry: in flight until this set (its handle gathered), with no second
            // hold: consumed here, its status the core's (ReleaseInFlight, written out).
            if (s is not null && Unsafe.Add(ref h, i) != RequestHandle.Null && s.Second is null)
            {
                s.Handle = RequestHandle.Null;
                if (s.Pin is { } pin)
                {
                    s.Pin = null;
                    pin.Release();
                }
                s.Version++;
                poster.Return(s);
            }
            else
                failed |= FinishEntry(s, Unsafe.Add(ref r, i)._version, Unsafe.Add(ref h, i), ref Unsafe.Add(ref st, i), poster);
        }
        if (Volatile.Read(ref Orphans.Count) != 0)
            SweepOrphans();
        if (failed < 0)
            throw ThrowHelper.CoreException(failed);
    }

    /// <summary>
    /// A completed set's other entries: the null request (the empty status), one in flight with a
    /// second hold, one <see cref="IsCompleted"/> found complete (<see cref="TakeDone"/>).
    /// </summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    private static int FinishEntry(RequestSlot? s, long version, RequestHandle handle, ref Status status, RequestPoster poster)
    {
        if (s is null)
            status = EmptyStatus;
        else if (handle != RequestHandle.Null)
            ReleaseInFlight(s, poster, status);
        else
            return TakeDone(s, version, ref status, poster);
        return 0;
    }

    /// <summary>
    /// A set's entry that <see cref="IsCompleted"/> found complete: its kept status, consumed;
    /// the negative result it failed with, else 0.  A second copy of it in the same set finds
    /// it consumed and gets the empty status.
    /// </summary>
    private static int TakeDone(RequestSlot s, long version, ref Status status, RequestPoster poster)
    {
        if (s.Version != version)
        {
            status = EmptyStatus;
            return 0;
        }
        status = s.Status;
        int rc = s.Result;
        Release(s, poster, status);
        return rc;
    }

    /// <summary>A set that failed: the requests the core finished are consumed, a refused set (bad or repeated request) stays as it was.</summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    private static void FinishFailed(ReadOnlySpan<Request> requests, ReadOnlySpan<RequestHandle> handles, Span<Status> statuses, int rc)
    {
        Exception error = ThrowHelper.CoreException(rc);
        RequestPoster poster = RequestPoster.Current;
        for (int i = 0; i < requests.Length; i++)
        {
            RequestSlot? s = requests[i]._slot;
            if (s is null)
                statuses[i] = EmptyStatus;
            else if (handles[i] == RequestHandle.Null)
                TakeDone(s, requests[i]._version, ref statuses[i], poster);
            else if (Core.ReqLive(handles[i]) == 0)
                Release(s, poster, statuses[i]);
        }
        if (Volatile.Read(ref Orphans.Count) != 0)
            SweepOrphans();
        throw error;
    }

    /// <summary>Sets to the null request every entry of an array set that is no longer live (completed by the set).</summary>
    private static void ClearCompleted(Request[] requests)
    {
        for (int i = 0; i < requests.Length; i++)
        {
            if (!requests[i].IsNull && !requests[i].IsLive)
                requests[i] = default;
        }
    }
}
