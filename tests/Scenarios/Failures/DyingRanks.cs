using System.MP;

namespace Scenarios;

/// <summary>
/// A rank that dies must end the whole job.  In the fault-* scenarios every rank prints
/// "READY rank R pid P" and then waits in MPI for rank 1 (a receive, a collective, a window
/// of nonblocking operations); the test kills rank 1 with SIGKILL, or rank 1 leaves by
/// Environment.Exit(3) or by an unhandled exception.  Nothing here returns normally.
/// </summary>
internal static class DyingRanks
{
    internal static void Register(Dictionary<Scenario, Action<Communicator>> s)
    {
        s[Scenario.FaultRecv] = c => Wait(c, () => c.Recv(new int[1], 1 - c.Rank, 3));
        s[Scenario.FaultCollective] = c => Wait(c, () => c.Bcast(new double[1 << 16], 1 - c.Rank));
        s[Scenario.FaultWindow] = c => Wait(c, () =>
        {
            var requests = new Request[64];
            var buffers = new byte[64][];
            for (int i = 0; i < 32; i++)
            {
                buffers[i] = new byte[4096];
                requests[i] = c.IRecv(buffers[i], 1 - c.Rank, 4);
            }
            for (int i = 32; i < 64; i++)
            {
                buffers[i] = new byte[1 << 20]; // rendezvous: not complete until the peer receives
                requests[i] = c.ISend(buffers[i], 1 - c.Rank, 5);
            }
            Request.WaitAll(requests);
        });
        s[Scenario.FaultThrow] = c =>
        {
            Ready(c);
            if (c.Rank == 1)
                throw new InvalidOperationException($"rank 1 failed on purpose on {Environment.MachineName}");
            c.Recv(new int[1], 1, 3);
            Check.True(false, "rank 0 got past a receive from a rank that threw");
        };
        // Ranks on two hosts exchange 1 MiB messages until the test takes a host's link down
        // (rank 0 writes the file named by MOTOR_FAULT_FLAG once messages are flowing).
        s[Scenario.FaultLinkDown] = c =>
        {
            Ready(c);
            var buffer = new byte[1 << 20];
            int peer = 1 - c.Rank;
            string? flag = Environment.GetEnvironmentVariable("MOTOR_FAULT_FLAG");
            var clock = System.Diagnostics.Stopwatch.StartNew();
            for (int i = 0; clock.Elapsed < TimeSpan.FromSeconds(120); i++)
            {
                if (c.Rank == 0)
                {
                    c.Send(buffer, peer, 6);
                    c.Recv(buffer, peer, 6);
                }
                else
                {
                    c.Recv(buffer, peer, 6);
                    c.Send(buffer, peer, 6);
                }
                if (i == 20 && c.Rank == 0 && !string.IsNullOrEmpty(flag))
                    File.WriteAllText(flag, "transferring");
            }
            Check.True(false, $"rank {c.Rank} kept exchanging messages for 120 s: the link never went down");
        };
        s[Scenario.Abort] = Abort;
        s[Scenario.Unhandled] = Unhandled;
        s[Scenario.FaultExitEarly] = c =>
        {
            Ready(c);
            if (c.Rank == 1)
                Environment.Exit(3);
            c.Recv(new int[1], 1, 3);
            Check.True(false, "rank 0 got past a receive from a rank that exited");
        };
    }

    private static void Ready(Communicator c)
    {
        c.Barrier();
        Console.WriteLine($"READY rank {c.Rank} pid {Environment.ProcessId}");
        Console.Out.Flush();
    }

    private static void Wait(Communicator c, Action wait)
    {
        Ready(c);
        wait();
        Check.True(false, $"rank {c.Rank} got past a wait for the killed rank");
    }

    // Rank 1 aborts while rank 0 waits for a message that never comes: the
    // whole job must end (the test asserts the exit code and that it did not hang).
    private static void Abort(Communicator c)
    {
        if (c.Rank == 1)
        {
            Console.WriteLine("rank 1 aborting with 7");
            Console.Out.Flush();
            Mpi.Abort(7);
        }
        c.Recv(new int[1], 1, 99);
        Check.True(false, "rank 0 must not get past the receive");
    }

    private static void Unhandled(Communicator c)
    {
        if (c.Rank == 1)
        {
            var t = new Thread(() => throw new InvalidTimeZoneException("boom on rank 1"));
            t.Start();
            t.Join();
        }
        c.Recv(new int[1], 1, 99);
        Check.True(false, "rank 0 must not get past the receive");
    }
}
