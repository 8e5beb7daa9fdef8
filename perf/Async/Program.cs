using System.Diagnostics;
using System.MP;

// The async group of perf/bench.sh: awaited requests against blocking ones, and the
// processor time of a rank whose awaited receives wait.  Runs at thread level Multiple (under
// motor: motor --thread-level multiple); the C floor is perf/native/async.c.
//
//   mpiexec -n 2 dotnet Async.dll recv|wait|await|engine [scale]
//       ping-pong of 8 B and 64 KiB, rank 1 echoing with blocking Recv/Send; rank 0 sends, then
//       receives by blocking Recv (recv), IRecv + Wait (wait), await IRecv with the defaults (await:
//       progress on the caller first, AsyncProgress.DefaultCallerPolls), or await IRecv through the
//       progress engine alone (engine: AsyncProgress.CallerPolls = 0).  100 warm-up
//       + 10000 timed iterations at 8 B, 10 + 1000 at 64 KiB; prints "size_bytes latency_us".  With
//       $BENCH_BLOCK=B (> 0) the timed iterations run in blocks of B and the figure is the median
//       block's (a loaded machine's preemptions fall into a few blocks, not the median).  After each
//       size a comment line gives the engine's rounds, sleeps and hand-offs so far.
//   mpiexec -n 2 dotnet Async.dll idle N [seconds]
//       rank 0 awaits N receives that match nothing for SECONDS (default 2) and prints
//       "N cpu_percent": its processor time over that span (the whole process: engine, GC,
//       runtime threads) as a share of one core.
Mpi.Init(ThreadLevel.Multiple);
var world = Communicator.World;
string mode = args.Length > 0 ? args[0] : "await";
if (mode == "idle")
    Idle(world, args.Length > 1 ? int.Parse(args[1]) : 1, args.Length > 2 ? double.Parse(args[2]) : 2.0);
else
    await Latency(world, mode, args.Length > 1 ? double.Parse(args[1]) : 1.0);
Mpi.Shutdown();

static async Task Latency(Communicator world, string mode, double scale)
{
    if (mode == "engine")
        AsyncProgress.CallerPolls = 0;
    int block = int.TryParse(Environment.GetEnvironmentVariable("BENCH_BLOCK"), out int b) && b > 0 ? b : 0;
    if (world.Rank == 0)
        Console.WriteLine($"# System.MP ping-pong, rank 0 receiving by {mode}\n# {"size",-10} {"latency_us",12}");
    foreach (int n in new[] { 8, 65536 })
    {
        var send = new byte[n];
        var recv = new byte[n];
        int warm = n > 8192 ? 10 : 100, iters = Math.Max(1, (int)((n > 8192 ? 1000 : 10000) * scale));
        double t0 = 0, tb = 0;
        var blocks = new List<double>();
        world.Barrier();
        for (int i = 0; i < warm + iters; i++)
        {
            if (i == warm)
                t0 = tb = Mpi.Wtime();
            else if (block > 0 && i > warm && (i - warm) % block == 0)
            {
                double t = Mpi.Wtime();
                blocks.Add(t - tb);
                tb = t;
            }
            if (world.Rank == 1)
            {
                world.Recv(recv, 0, 1);
                world.Send(send, 0, 1);
                continue;
            }
            world.Send(send, 1, 1);
            switch (mode)
            {
                case "recv":
                    world.Recv(recv, 1, 1);
                    break;
                case "wait":
                    world.IRecv(recv, 1, 1).Wait();
                    break;
                default:
                    await world.IRecv(recv, 1, 1);
                    break;
            }
        }
        if (world.Rank == 0 && blocks.Count > 0)
        {
            blocks.Sort();
            Console.WriteLine($"{n,-12} {blocks[blocks.Count / 2] * 1e6 / (2.0 * block),12:F3}");
        }
        else if (world.Rank == 0)
            Console.WriteLine($"{n,-12} {(Mpi.Wtime() - t0) * 1e6 / (2.0 * iters),12:F3}");
        if (world.Rank == 0)
            Console.WriteLine($"# after {n} B: engine rounds {AsyncProgress.Rounds}, sleeps {AsyncProgress.Sleeps}, hand-offs {AsyncProgress.HandOffs}");
    }

}

static void Idle(Communicator world, int n, double seconds)
{
    var bufs = new int[n][];
    var tasks = new Task<Status>[n];
    world.Barrier();
    if (world.Rank == 0)
    {
        for (int i = 0; i < n; i++)
            tasks[i] = world.IRecv(bufs[i] = new int[1], 1, i).WaitAsync();
        Thread.Sleep(100); // the engine has backed off
        TimeSpan c0 = Process.GetCurrentProcess().TotalProcessorTime;
        double w0 = Mpi.Wtime();
        Thread.Sleep(TimeSpan.FromSeconds(seconds));
        double cpu = (Process.GetCurrentProcess().TotalProcessorTime - c0).TotalSeconds, wall = Mpi.Wtime() - w0;
        world.Send(1, 1, 0); // release rank 1
        Task.WaitAll(tasks);
        Console.WriteLine($"# System.MP: {n} awaited receives pending; rank 0's processor time over {seconds} s\n# {"pending",-10} {"cpu_percent",12}");
        Console.WriteLine($"{n,-12} {100.0 * cpu / wall,12:F2}");
    }
    else
    {
        Thread.Sleep(TimeSpan.FromSeconds(seconds / 2)); // sleeping, not polling in a blocking Recv
        while (!world.IProbe(0, 0, out _))
            Thread.Sleep(1);
        world.Recv<int>(0, 0);
        for (int i = 0; i < n; i++)
            world.Send(i, 0, i);
    }
}
