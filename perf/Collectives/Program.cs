// Collectives: OSU methodology (osu_allreduce / osu_bcast / osu_alltoall) over
// System.MP; the same measurements as perf/native/collectives.c.
// Barrier, time one collective, barrier; 100 + 1000 iterations (10 + 100
// above 8 KiB); latency = mean over ranks of each rank's average.
//
// usage: mpiexec -n 2 dotnet Collectives.dll
using System.Globalization;
using System.MP;

var world = Communicator.World;
int size = world.Size;

double Run(string op, int bytes)
{
    bool large = bytes > 8192;
    int warm = large ? 10 : 100, iters = large ? 100 : 1000;
    var fa = new float[Math.Max(bytes / 4, 1)];
    var fb = new float[fa.Length];
    var ba = new byte[bytes * size];
    var bb = new byte[bytes * size];
    double total = 0;
    for (int i = 0; i < warm + iters; i++)
    {
        world.Barrier();
        double t0 = Mpi.Wtime();
        switch (op)
        {
            case "allreduce": world.Allreduce(fa, fb, Op.Sum); break;
            case "bcast": world.Bcast(ba.AsSpan(0, bytes), 0); break;
            default: world.Alltoall(ba, bb); break;
        }
        if (i >= warm)
            total += Mpi.Wtime() - t0;
    }
    world.Barrier();
    return world.Reduce(total / iters, Op.Sum, 0) / size * 1e6;
}

var ops = new[] { ("allreduce", 8), ("bcast", 1 << 20), ("alltoall", 4096) };

// JIT warm-up: every operation for a second, so tiered compilation has
// finished before anything is timed (rank 0 decides when to stop).
for (double start = Mpi.Wtime(); world.Bcast(Mpi.Wtime() - start < 1.0 ? 1 : 0, 0) == 1;)
    foreach (var (op, bytes) in ops)
        Run(op, bytes);

var rows = ops.Select(r => (r.Item1, r.Item2, Run(r.Item1, r.Item2))).ToList();
if (world.Rank == 0)
    foreach (var (name, bytes, us) in rows)
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"{name} {bytes} {us:F3}"));
