// A worker rank (1..Size-1): receives blocks from rank 0 under any tag, computes
// each on the thread pool, and sends each answer back under the tag its block came
// with.  Only this loop's thread calls MPI; several calls' blocks are computed at
// once while the loop keeps receiving and sending.
using System.Collections.Concurrent;
using System.MP;

namespace MotorService;

/// <summary>The loop of a rank other than 0.</summary>
public static class Worker
{
    /// <summary>Serves rank 0 over <paramref name="comm"/> until it sends the shutdown message.</summary>
    public static void Run(Communicator comm)
    {
        int rank = comm.Rank;
        var answers = new ConcurrentQueue<(int Tag, Outcome Answer)>();
        var sends = new List<ObjectRequest>();
        ObjectRequest<Work>? next = comm.OIRecv<Work>(0, Mpi.AnyTag);
        int computing = 0;
        var backoff = new Backoff();
        // An answer is queued before its computation is counted off, so reading the count first sees it.
        while (next is not null || Volatile.Read(ref computing) > 0 || !answers.IsEmpty || sends.Count > 0)
        {
            bool progressed = false;
            if (next is not null && next.Test(out Status status))
            {
                Work work = next.Result!;
                next.Dispose();
                next = null;
                if (status.Tag != JobEngine.ShutdownTag)
                {
                    long arrival = Arrivals.Record();
                    Interlocked.Increment(ref computing);
                    _ = Task.Run(() =>
                    {
                        answers.Enqueue((status.Tag, Outcome.Of(work, rank, arrival)));
                        Interlocked.Decrement(ref computing);
                    });
                    next = comm.OIRecv<Work>(0, Mpi.AnyTag);
                }
                progressed = true;
            }
            while (answers.TryDequeue(out var a))
            {
                sends.Add(comm.OISend(a.Answer, 0, a.Tag));
                progressed = true;
            }
            for (int i = sends.Count - 1; i >= 0; i--)
                if (sends[i].Test(out _))
                {
                    sends[i].Dispose();
                    sends.RemoveAt(i);
                    progressed = true;
                }
            backoff.After(progressed);
        }
    }
}
