// A worker rank (1..Size-1): receives blocks from rank 0 under any tag, computes
// each on the thread pool, and sends each answer back under the tag its block came
// with.  Every MPI wait is an await (the progress engine completes it), so several
// calls' blocks are computed at once while the next block is already awaited.
//
// A Stop message from rank 0 names a call whose block must stop: the block's token is
// cancelled, its computation ends within one bounded piece (Solvers), and the block is
// answered as any other, so rank 0 hears from every rank about every block it sent.
// Rank 0 sends a call's Stop only after its blocks, and messages from one sender that
// match the same receive arrive in the order they were sent (MPI-4.1 §3.5, non-overtaking):
// a Stop that finds no block running names a call this rank has already answered.
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
        var running = new Dictionary<long, CancellationTokenSource>(); // call → its block's stop, while computed
        while (true)
        {
            using ObjectRequest<Work> next = comm.OIRecv<Work>(0, Mpi.AnyTag);
            Status status = await next.WaitAsync().ConfigureAwait(false);
            if (status.Tag == JobEngine.ShutdownTag)
                break;
            Work work = next.Result!;
            if (work.Kind == ProblemKind.Stop)
            {
                lock (running)
                    if (running.TryGetValue(work.Call, out CancellationTokenSource? block))
                        block.Cancel();
                continue;
            }
            long arrival = Arrivals.Record();
            var stop = new CancellationTokenSource();
            lock (running)
                running.Add(work.Call, stop);
            answering.RemoveAll(t => t.IsCompleted);
            answering.Add(Task.Run(async () =>
            {
                Outcome outcome = Outcome.Of(work, rank, arrival, stop.Token);
                lock (running)
                    running.Remove(work.Call);
                stop.Dispose();
                using ObjectRequest send = comm.OISend(outcome, 0, status.Tag);
                await send.WaitAsync().ConfigureAwait(false);
            }));
        }
        await Task.WhenAll(answering).ConfigureAwait(false);
    }
}
