// PingPong: osu_latency methodology over System.MP (blocking Send/Recv between
// ranks 0 and 1).  Sizes 0 B..max; 100 warm-up + 10000 timed iterations up to
// 8 KiB, 10 + 1000 above; latency = total time / (2 x iterations).
//
// usage: mpiexec -n 2 dotnet PingPong.dll [max_bytes] [iteration_scale]
// Prints "size latency_us" rows, the same format as perf/native/pingpong.c.
using System.Globalization;
using System.MP;

const int Large = 8192;
long max = args.Length > 0 ? long.Parse(args[0], CultureInfo.InvariantCulture) : 4L << 20;
double scale = args.Length > 1 ? double.Parse(args[1], CultureInfo.InvariantCulture) : 1.0;

var world = Communicator.World;
if (world.Size < 2)
{
    Console.Error.WriteLine("PingPong needs at least 2 ranks (mpiexec -n 2 ...)");
    Mpi.Abort(1);
}
var send = BenchBuffer.Allocate(Math.Max(max, 1));
var recv = BenchBuffer.Allocate(Math.Max(max, 1));
BenchBuffer.Report(world, send, recv);
Array.Fill(send, (byte)'a');
int rank = world.Rank;

// JIT warm-up: .NET compiles hot methods again, optimized, after a short delay
// (tiered compilation).  Ping-pong for half a second first so every timed
// iteration runs final code; rank 0 decides when to stop.
for (double start = Mpi.Wtime(); ;)
{
    if (rank == 0)
    {
        int go = Mpi.Wtime() - start < 0.5 ? 1 : 0;
        world.Send(go, 1, 2);
        world.Recv<int>(1, 2);
        if (go == 0)
            break;
    }
    else if (rank == 1)
    {
        int go = world.Recv<int>(0, 2);
        world.Send(go, 0, 2);
        if (go == 0)
            break;
    }
    else
    {
        break;
    }
}

if (rank == 0)
    Console.WriteLine($"# C# System.MP ping-pong (osu_latency methodology, {(Mpi.IsHosted ? "motor VM" : "library mode")})\n# {"size",-10} {"latency_us",12}");
for (long n = 0; n <= max; n = n == 0 ? 1 : n * 2)
{
    int count = (int)n;
    int warm = n > Large ? 10 : 100;
    int iters = Math.Max(1, (int)((n > Large ? 1000 : 10000) * scale));
    double t0 = 0;
    world.Barrier();
    for (int i = 0; i < warm + iters; i++)
    {
        if (i == warm)
            t0 = Mpi.Wtime();
        if (rank == 0)
        {
            world.Send(send, 0, count, 1, 1);
            world.Recv(recv, 0, count, 1, 1);
        }
        else if (rank == 1)
        {
            world.Recv(recv, 0, count, 0, 1);
            world.Send(send, 0, count, 0, 1);
        }
    }
    double t1 = Mpi.Wtime();
    if (rank == 0)
    {
        if (count > 0 && (recv[0] != 'a' || recv[count - 1] != 'a'))
            throw new InvalidOperationException($"ping-pong data corrupted at {n} bytes");
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"{n,-12} {(t1 - t0) * 1e6 / (2.0 * iters),12:F3}"));
    }
}
Mpi.Shutdown();
