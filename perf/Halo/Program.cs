// Halo: a halo exchange loop with persistent requests against the same loop with
// nonblocking ones, measured side by side in one run (issue 16: "persistent vs
// non-persistent Send/Recv in a halo exchange loop").  Two ranks on a ring:
// each round every rank receives its two halos from its neighbours and sends its
// two edges to them, then completes the four operations with one WaitAll.
//
//   mpiexec -n 2 dotnet Halo.dll [rounds=20000] [reps=7] [sizes=8,1024,65536]
//   mpiexec -n 2 motor  Halo.dll ...
//
// For each size the two forms alternate for `reps` blocks of `rounds` rounds
// (nonblocking, persistent, nonblocking, ...), after a warm-up of both; rank 0
// prints the median time per round of each and the median of the per-block
// ratios persistent / nonblocking (below 1: persistent is faster).
using System.Diagnostics;
using System.Globalization;
using System.MP;

int rounds = args.Length > 0 ? int.Parse(args[0], CultureInfo.InvariantCulture) : 20_000;
int reps = args.Length > 1 ? int.Parse(args[1], CultureInfo.InvariantCulture) : 7;
int[] sizes = (args.Length > 2 ? args[2] : "8,1024,65536").Split(',').Select(s => int.Parse(s, CultureInfo.InvariantCulture)).ToArray();

var world = Communicator.World;
int left = (world.Rank + world.Size - 1) % world.Size, right = (world.Rank + 1) % world.Size;
if (world.Rank == 0)
{
    Console.WriteLine($"# halo exchange, {world.Size} ranks, {(Mpi.IsHosted ? "motor" : "dotnet")}, {rounds} rounds x {reps} blocks per form");
    Console.WriteLine("| bytes per halo | nonblocking us/round | persistent us/round | ratio persistent/nonblocking |");
    Console.WriteLine("|---|---|---|---|");
}
foreach (int bytes in sizes)
{
    var sendLeft = new byte[bytes];
    var sendRight = new byte[bytes];
    var recvLeft = new byte[bytes];
    var recvRight = new byte[bytes];
    var reqs = new Request[4];
    PersistentRequest[] preqs =
    [
        world.RecvInit(recvLeft, left, 1), world.RecvInit(recvRight, right, 2),
        world.SendInit(sendLeft, left, 2), world.SendInit(sendRight, right, 1),
    ];

    double Nonblocking(int n)
    {
        world.Barrier();
        long t0 = Stopwatch.GetTimestamp();
        for (int i = 0; i < n; i++)
        {
            reqs[0] = world.IRecv(recvLeft, left, 1);
            reqs[1] = world.IRecv(recvRight, right, 2);
            reqs[2] = world.ISend(sendLeft, left, 2);
            reqs[3] = world.ISend(sendRight, right, 1);
            Request.WaitAll(reqs.AsSpan());
        }
        return Stopwatch.GetElapsedTime(t0).TotalMicroseconds / n;
    }

    double Persistent(int n)
    {
        world.Barrier();
        long t0 = Stopwatch.GetTimestamp();
        for (int i = 0; i < n; i++)
        {
            PersistentRequest.StartAll(preqs);
            PersistentRequest.WaitAll(preqs.AsSpan());
        }
        return Stopwatch.GetElapsedTime(t0).TotalMicroseconds / n;
    }

    Nonblocking(rounds / 4);
    Persistent(rounds / 4);
    var nb = new double[reps];
    var pe = new double[reps];
    var ratio = new double[reps];
    for (int r = 0; r < reps; r++)
    {
        nb[r] = Nonblocking(rounds);
        pe[r] = Persistent(rounds);
        ratio[r] = pe[r] / nb[r];
    }
    foreach (PersistentRequest p in preqs)
        p.Dispose();
    if (world.Rank == 0)
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"| {bytes} | {Median(nb):F3} | {Median(pe):F3} | {Median(ratio):F3} |"));
}
return 0;

static double Median(double[] values)
{
    double[] sorted = values.Order().ToArray();
    return sorted[sorted.Length / 2];
}
