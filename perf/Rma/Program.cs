// Rma: one-sided communication with System.MP, OSU methodology; the same rows as
// perf/native/rma.c.
//
//   mpiexec -n 2 dotnet Rma.dll put|get [max_bytes] [iteration_scale]
//   mpiexec -n 2 motor  Rma.dll put|get [max_bytes] [iteration_scale]
//   motor Rma.dll ops operations bytes put|get   (one rank; perf/callgrind.sh)
//
// put: osu_put_latency (Window.Allocate, Lock + Flush): rank 0 locks rank 1's window
//      once, then times Put + Flush; latency = time / iterations.
// get: osu_get_bw: a window of 64 Gets of the size, then one Flush; MB/s.
// The origin is an ordinary array, held by the window from each operation to the
// flush that completes it: under motor registered with the GC extension (no
// GCHandle), under dotnet pinned with a GCHandle the window reuses.
using System.Globalization;
using System.MP;

const int Window = 64, Large = 8192;
if (args.Length > 0 && args[0] == "ops")
    return Ops(long.Parse(args[1], CultureInfo.InvariantCulture), int.Parse(args[2], CultureInfo.InvariantCulture), args[3] == "put");
bool put = args.Length > 0 && args[0] == "put";
long max = args.Length > 1 ? long.Parse(args[1], CultureInfo.InvariantCulture) : 4L << 20;
double scale = args.Length > 2 ? double.Parse(args[2], CultureInfo.InvariantCulture) : 1.0;

var comm = Communicator.World;
if (comm.Size < 2 || args.Length < 1 || (!put && args[0] != "get"))
{
    Console.Error.WriteLine("usage: mpiexec -n 2 [motor|dotnet] Rma.dll put|get [max_bytes] [scale]");
    return 1;
}
var buf = new byte[max];
Array.Fill(buf, (byte)'a');
using var win = Window<byte>.Allocate(comm, checked((int)max));
if (comm.Rank == 0)
{
    string mode = Mpi.IsHosted ? "motor" : "dotnet";
    Console.WriteLine($"# C# System.MP {(put ? "Put latency" : "Get bandwidth")} (osu_{(put ? "put_latency" : "get_bw")} methodology, lock + flush; {mode})");
    Console.WriteLine($"# {"size",-10} {(put ? "us" : "MB/s"),14}");
}
// JIT warm-up (as in perf/Bandwidth): a second of small epochs before anything is timed.
for (double start = Mpi.Wtime(); ;)
{
    if (comm.Rank == 0)
        Epoch(win, buf, put, 8, 100);
    if (!comm.Bcast(comm.Rank == 0 && Mpi.Wtime() - start < 1.0, 0))
        break;
}
for (long n = 1; n <= max; n *= 2)
{
    bool large = n > Large;
    int warm = put ? (large ? 10 : 100) : (large ? 2 : 10);
    int iters = Math.Max(1, (int)((put ? (large ? 1000 : 10000) : (large ? 20 : 100)) * scale));
    comm.Barrier();
    if (comm.Rank == 0)
    {
        Epoch(win, buf, put, (int)n, warm);
        double t0 = Mpi.Wtime();
        Epoch(win, buf, put, (int)n, iters);
        double t = Mpi.Wtime() - t0;
        Console.WriteLine(put ? $"{n,-12} {t * 1e6 / iters,14:F2}" : $"{n,-12} {(double)n * Window * iters / t / 1e6,14:G6}");
    }
    comm.Barrier();
}
return 0;

// Put + Flush (or Get + Flush) towards this rank's own window, over and over, as
// perf/native/rma_ops.c: instructions per operation (perf/callgrind.sh, CALLGRIND_CASE=rma-put).
static int Ops(long operations, int bytes, bool put)
{
    var buf = new byte[bytes];
    using var win = Window<byte>.Allocate(Communicator.Self, bytes);
    win.Lock(0, LockType.Shared);
    for (long i = 0; i < operations; i++)
    {
        if (put)
            win.Put(buf, 0, bytes, 0, 0);
        else
            win.Get(buf, 0, bytes, 0, 0);
        win.Flush(0);
    }
    win.Unlock(0);
    return 0;
}

// One passive-target epoch towards rank 1 of `rounds` Put + Flush (put) or 64 Gets + Flush.
static void Epoch(Window<byte> win, byte[] buf, bool put, int n, int rounds)
{
    win.Lock(1, LockType.Shared);
    for (int i = 0; i < rounds; i++)
    {
        if (put)
            win.Put(buf, 0, n, 1, 0);
        else
            for (int w = 0; w < Window; w++)
                win.Get(buf, 0, n, 1, 0);
        win.Flush(1);
    }
    win.Unlock(1);
}
