using System.MP;

/// <summary>osu_bw's unit of work (also linked into perf/ServiceLoad).</summary>
internal static class OsuWindow
{
    /// <summary>
    /// One window: <paramref name="reqs"/>.Length messages from rank 0 to rank 1, then a 4-byte
    /// acknowledgement; completed by <c>Request.WaitAll(Request[])</c>, which returns the statuses,
    /// or with <paramref name="spans"/> by the allocation-free <c>WaitAll(ReadOnlySpan&lt;Request&gt;)</c>.
    /// </summary>
    internal static void Exchange(Communicator comm, byte[] send, byte[] recv, Request[] reqs, int count, bool spans = false)
    {
        if (comm.Rank == 0)
        {
            for (int w = 0; w < reqs.Length; w++)
                reqs[w] = comm.ISend(send, 0, count, 1, 100);
            WaitAll(reqs, spans);
            comm.Recv<int>(1, 101);
        }
        else if (comm.Rank == 1)
        {
            for (int w = 0; w < reqs.Length; w++)
                reqs[w] = comm.IRecv(recv, 0, count, 0, 100);
            WaitAll(reqs, spans);
            comm.Send(0, 0, 101);
        }
    }

    private static void WaitAll(Request[] reqs, bool spans)
    {
        if (spans)
            Request.WaitAll(reqs.AsSpan());
        else
            Request.WaitAll(reqs);
    }

    /// <summary>The same window posted into <paramref name="list"/> (BENCH_REQUESTS=list): no Request object per message.</summary>
    internal static void Exchange(Communicator comm, byte[] send, byte[] recv, RequestList list, int count)
    {
        if (comm.Rank == 0)
        {
            for (int w = list.Count; w < list.Capacity; w++)
                comm.ISend(send, 0, count, 1, 100, list);
            list.WaitAll();
            comm.Recv<int>(1, 101);
        }
        else if (comm.Rank == 1)
        {
            for (int w = list.Count; w < list.Capacity; w++)
                comm.IRecv(recv, 0, count, 0, 100, list);
            list.WaitAll();
            comm.Send(0, 0, 101);
        }
    }
}
