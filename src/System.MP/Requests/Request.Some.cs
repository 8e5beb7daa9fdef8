using System.Collections.Generic;
using System.MP.Interop;

namespace System.MP;

// WaitSome and TestSome (MPI-4.0 §3.7.5): every operation of a set that has completed, at once.
public readonly partial struct Request
{
    /// <summary>
    /// Waits until at least one of the requests completes, then completes every
    /// other one that has completed too (MPI_Waitsome); each entry completed is set to the null request.
    /// </summary>
    /// <param name="requests">The requests; null requests (those completed by earlier calls) are skipped.</param>
    /// <param name="statuses">The statuses of the completed operations, in the order of the returned indices.</param>
    /// <returns>
    /// The indices in <paramref name="requests"/> of the operations completed by
    /// this call, ascending; empty when none was still pending.
    /// </returns>
    /// <exception cref="ArgumentException">A pending request is in the set twice.</exception>
    /// <exception cref="ObjectDisposedException">A request was already completed or disposed.</exception>
    /// <exception cref="MessageTruncatedException">
    /// A receive was truncated; the operations completed before it stay completed
    /// (their entries hold the null request).
    /// </exception>
    public static int[] WaitSome(Request[] requests, out Status[] statuses)
    {
        ArgumentNullException.ThrowIfNull(requests);
        int first = WaitAny(requests, out Status st); // checks the whole set first
        if (first == Mpi.Undefined)
        {
            statuses = [];
            return [];
        }
        var done = new List<(int, Status)> { (first, st) };
        CollectCompleted(requests, done);
        return Split(done, out statuses);
    }

    /// <summary>
    /// Completes every request of the set that has completed, without waiting
    /// (MPI_Testsome); each entry completed is set to the null request.
    /// </summary>
    /// <param name="requests">The requests; null requests (those completed by earlier calls) are skipped.</param>
    /// <param name="statuses">The statuses of the completed operations, in the order of the returned indices.</param>
    /// <returns>The indices of the operations completed by this call, ascending; empty when none was.</returns>
    /// <exception cref="ArgumentException">A pending request is in the set twice.</exception>
    /// <exception cref="ObjectDisposedException">A request was already completed or disposed.</exception>
    /// <exception cref="MessageTruncatedException">A receive was truncated (the others completed so far stay completed).</exception>
    public static int[] TestSome(Request[] requests, out Status[] statuses)
    {
        ArgumentNullException.ThrowIfNull(requests);
        var handles = new RequestHandle[requests.Length];
        Handles(SlottedAll(requests), handles);
        RequestSet.CheckDistinct(handles);
        var done = new List<(int, Status)>();
        CollectCompleted(requests, done);
        return Split(done, out statuses);
    }

    /// <summary>Tests every live request once, collecting those that completed (their entries set to the null request).</summary>
    private static void CollectCompleted(Request[] requests, List<(int, Status)> done)
    {
        for (int i = 0; i < requests.Length; i++)
        {
            Request r = requests[i];
            if (!r.IsLive)
                continue;
            bool completed;
            Status s;
            try
            {
                completed = r.Test(out s);
            }
            finally
            {
                if (!r.IsLive)
                    requests[i] = default;
            }
            if (completed)
                done.Add((i, s));
        }
    }

    private static int[] Split(List<(int Index, Status Status)> done, out Status[] statuses)
    {
        done.Sort((a, b) => a.Index.CompareTo(b.Index));
        var indices = new int[done.Count];
        statuses = new Status[done.Count];
        for (int k = 0; k < done.Count; k++)
            (indices[k], statuses[k]) = done[k];
        return indices;
    }
}
