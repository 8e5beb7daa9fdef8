using System.MP;

/// <summary>osu_bw's unit of work (also linked into perf/ServiceLoad).</summary>
internal static class OsuWindow
{
    /// <summary>One window: <paramref name="reqs"/>.Length messages from rank 0 to rank 1, then a 4-byte acknowledgement.</summary>
    internal static void Exchange(Communicator comm, byte[] send, byte[] recv, Request[] reqs, int count)
    {
        if (comm.Rank == 0)
        {
            for (int w = 0; w < reqs.Length; w++)
                reqs[w] = comm.ISend(send, 0, count, 1, 100);
            Request.WaitAll(reqs);
            comm.Recv<int>(1, 101);
        }
        else if (comm.Rank == 1)
        {
            for (int w = 0; w < reqs.Length; w++)
                reqs[w] = comm.IRecv(recv, 0, count, 0, 100);
            Request.WaitAll(reqs);
            comm.Send(0, 0, 101);
        }
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
