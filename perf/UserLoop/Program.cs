// UserLoop: a ping-pong as a new user writes it: osu_latency's
// loop straight in Main, 100 warm-up + 10000 timed iterations up to 8 KiB (10 + 1000
// above), no extra warm-up of its own, so its first size (0 B) runs whatever code the
// runtime has at the first iteration.  perf/PingPong-style programs ping-pong for half a
// second first to hide exactly that; this one does not.
//
// usage: mpiexec -n 2 motor UserLoop.dll [max_bytes] [iteration_scale]
// Prints "size latency_us" rows, the same format as perf/native/pingpong.c.
using System.Globalization;
using System.MP;

long max = args.Length > 0 ? long.Parse(args[0], CultureInfo.InvariantCulture) : 4L << 20;
double scale = args.Length > 1 ? double.Parse(args[1], CultureInfo.InvariantCulture) : 1.0;
var world = Communicator.World;
var send = new byte[Math.Max(max, 1)];
var recv = new byte[Math.Max(max, 1)];
if (world.Rank == 0)
    Console.WriteLine($"# user-style ping-pong, no warm-up beyond osu_latency's ({(Mpi.IsHosted ? "motor VM" : "library mode")})");
for (long n = 0; n <= max; n = n == 0 ? 1 : n * 2)
{
    int count = (int)n;
    int warm = n > 8192 ? 10 : 100;
    int iters = Math.Max(1, (int)((n > 8192 ? 1000 : 10000) * scale));
    double t0 = 0;
    world.Barrier();
    for (int i = 0; i < warm + iters; i++)
    {
        if (i == warm)
            t0 = Mpi.Wtime();
        if (world.Rank == 0)
        {
            world.Send(send, 0, count, 1, 1);
            world.Recv(recv, 0, count, 1, 1);
        }
        else if (world.Rank == 1)
        {
            world.Recv(recv, 0, count, 0, 1);
            world.Send(send, 0, count, 0, 1);
        }
    }
    double t1 = Mpi.Wtime();
    if (world.Rank == 0)
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"{n,-12} {(t1 - t0) * 1e6 / (2.0 * iters),12:F3}"));
}
Mpi.Shutdown();
