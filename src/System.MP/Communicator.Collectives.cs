using System.MP.Interop;

namespace System.MP;

// Collective communication (MPI-4.0 chapter 6).  Each collective is posted as
// its nonblocking form and tested by one fast call; only when it cannot finish
// at once does the rank wait in a blocking call, where the GC runs freely.
public unsafe partial class Communicator
{
    /// <summary>Waits until every rank of the communicator has called it (MPI_Barrier).</summary>
    public void Barrier()
    {
        int h = Handle;
        long token;
        int rc = Core.BarrierStart(h, &token);
        if (rc == 0)
            rc = Core.CompleteToken(token, null);
        if (rc < 0)
            ThrowHelper.ThrowCore(rc);
    }
}
