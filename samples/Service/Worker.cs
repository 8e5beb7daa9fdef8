// A worker rank (1..Size-1): receives blocks from rank 0 under any tag, computes
// each on the thread pool, and sends each answer back under the tag its block came
// with.  Every MPI wait is an await (the progress engine completes it), so several
// calls' blocks are computed at once while the next block is already awaited.
using System.MP;

namespace MotorService;

/// <summary>The loop of a rank other than 0.</summary>
public static class Worker
{
    /// <summary>Serves rank 0 over <paramref name="comm"/> until it sends the shutdown message (MPI at thread level Multiple).</summary>
    public static void Run(Communicator comm) => Serve(comm).GetAwaiter().GetResult();

    private static async Task Serve(Communicator comm)
    {
        int rank = comm.Rank;
        var answering = new List<Task>();
        while (true)
        {
            using ObjectRequest<Work> next = comm.OIRecv<Work>(0, Mpi.AnyTag);
            Status status = await next.WaitAsync().ConfigureAwait(false);
            if (status.Tag == JobEngine.ShutdownTag)
                break;
            Work work = next.Result!;
            long arrival = Arrivals.Record();
            answering.RemoveAll(t => t.IsCompleted);
            answering.Add(Task.Run(async () =>
            {
                using ObjectRequest send = comm.OISend(Outcome.Of(work, rank, arrival), 0, status.Tag);
                await send.WaitAsync().ConfigureAwait(false);
            }));
        }
        await Task.WhenAll(answering).ConfigureAwait(false);
    }
}
