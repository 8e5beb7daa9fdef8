using System.MP;

namespace Scenarios;

/// <summary>
/// Programs that wait forever, or long, in MPI: run with the hang report on
/// (<c>motor --hang-report</c>, <c>MOTOR_HANG_REPORT</c>), each blocked rank must say where.
/// The deadlocks end only when the hang report aborts the job.
/// </summary>
internal static class Hangs
{
    internal static void Register(Dictionary<Scenario, Action<Communicator>> s)
    {
        s[Scenario.HangRecvRecv] = RecvRecv;
        s[Scenario.HangBcastBarrier] = BcastBarrier;
        s[Scenario.HangServedLate] = ServedLate;
        s[Scenario.HangSendRecvTags] = SendRecvTags;
    }

    // The classic: both ranks receive first.
    private static void RecvRecv(Communicator c)
    {
        c.Barrier();
        int other = 1 - c.Rank;
        c.Recv(new int[1], other, 7);
        c.Send(new int[1], other, 7);
        Check.True(false, "a receive-receive deadlock ended");
    }

    // A SendRecv waiting for a tag nobody sends: each rank sends tag 1 and waits for tag 2.
    private static void SendRecvTags(Communicator c)
    {
        c.Barrier();
        int other = 1 - c.Rank;
        c.SendRecv(new[] { c.Rank }, other, 1, new int[1], other, 2);
        Check.True(false, "a SendRecv waiting for a tag nobody sends ended");
    }

    // A collective mismatch: rank 0 waits in a broadcast from rank 1, which waits in a barrier.
    private static void BcastBarrier(Communicator c)
    {
        c.Barrier();
        if (c.Rank == 0)
            c.Bcast(new double[4], 1);
        else
            c.Barrier();
        Check.True(false, "a Bcast/Barrier mismatch ended");
    }

    // Not a deadlock: rank 1 waits long (past the report's time) and is then served.
    private static void ServedLate(Communicator c)
    {
        c.Barrier();
        var data = new int[3];
        if (c.Rank == 0)
        {
            Thread.Sleep(TimeSpan.FromSeconds(3));
            c.Send(new[] { 1, 2, 3 }, 1, 8);
        }
        else if (c.Rank == 1)
        {
            c.Recv(data, 0, 8);
            Check.Sequence<int>([1, 2, 3], data, "the message that came late");
        }
        c.Barrier();
    }
}
