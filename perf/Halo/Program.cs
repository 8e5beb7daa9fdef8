// Halo: a halo exchange loop with persistent requests against the same loop with
// nonblocking ones, and against the neighborhood collective that does the same
// exchange, measured side by side in one run ("persistent vs
// non-persistent Send/Recv in a halo exchange loop").  Two ranks on a ring:
// each round every rank receives its two halos from its neighbours and sends its
// two edges to them, in four forms:
//   nonblocking          IRecv x2, ISend x2, one WaitAll;
//   persistent           the same four as persistent requests: StartAll, WaitAll;
//   neighbor             NeighborAlltoall on a distributed graph (sources = destinations
//                        = [left, right]);
//   neighbor persistent  NeighborAlltoallInit, Start and Wait (MPI 4: MPICH 4.0; "-"
//                        on Open MPI 4.1, where it throws NotSupportedException);
//   ... on pinned arrays the same on arrays from Mpi.AllocatePinned, which MPI uses in place
//                        (last column; compare-halo.sh leaves it out): what the arrays'
//                        holding costs beside what MPI's collective costs.
//
//   mpiexec -n 2 dotnet Halo.dll [rounds=20000] [reps=7] [sizes=8,1024,65536]
//   mpiexec -n 2 motor  Halo.dll ...
//   perf/compare-halo.sh      the same against perf/native/halo.c (halo-c), as ratios
//
// For each size the forms alternate for `reps` blocks of `rounds` rounds
// (nonblocking, persistent, neighbor, ..., nonblocking, ...), after a warm-up of
// each; rank 0 prints the median time per round of each and the median of the
// per-block ratios persistent / nonblocking (below 1: persistent is faster).
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
    Console.WriteLine("| bytes per halo | nonblocking us/round | persistent us/round | neighbor us/round | neighbor persistent us/round | ratio persistent/nonblocking | neighbor persistent on pinned arrays us/round |");
    Console.WriteLine("|---|---|---|---|---|---|---|");
}
using DistributedGraphCommunicator ring = world.CreateDistributedGraphAdjacent([left, right], [1, 1], [left, right], [1, 1]);
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
    // The neighborhood forms move both halos in one array each: [left | right].
    // Ordinary arrays, like the other forms: the persistent one runs on a staging copy.
    byte[] sendBoth = new byte[2 * bytes], recvBoth = new byte[2 * bytes];
    byte[] sendPinned = Mpi.AllocatePinned<byte>(2 * bytes), recvPinned = Mpi.AllocatePinned<byte>(2 * bytes);
    PersistentRequest? hood = null, hoodPinned = null;
    try
    {
        hood = ring.NeighborAlltoallInit(sendBoth, recvBoth, bytes);
        hoodPinned = ring.NeighborAlltoallInit(sendPinned, recvPinned, bytes);
    }
    catch (NotSupportedException)
    {
        // Open MPI 4.1: no persistent collectives.
    }

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

    double Neighbor(int n)
    {
        world.Barrier();
        long t0 = Stopwatch.GetTimestamp();
        for (int i = 0; i < n; i++)
            ring.NeighborAlltoall(sendBoth, recvBoth, bytes);
        return Stopwatch.GetElapsedTime(t0).TotalMicroseconds / n;
    }

    double NeighborPersistent(PersistentRequest request, int n)
    {
        world.Barrier();
        long t0 = Stopwatch.GetTimestamp();
        for (int i = 0; i < n; i++)
        {
            request.Start();
            request.Wait();
        }
        return Stopwatch.GetElapsedTime(t0).TotalMicroseconds / n;
    }

    Nonblocking(rounds / 4);
    Persistent(rounds / 4);
    Neighbor(rounds / 4);
    if (hood is not null)
    {
        NeighborPersistent(hood, rounds / 4);
        NeighborPersistent(hoodPinned!, rounds / 4);
    }
    var nb = new double[reps];
    var pe = new double[reps];
    var ne = new double[reps];
    var np = new double[reps];
    var npp = new double[reps];
    var ratio = new double[reps];
    for (int r = 0; r < reps; r++)
    {
        nb[r] = Nonblocking(rounds);
        pe[r] = Persistent(rounds);
        ne[r] = Neighbor(rounds);
        np[r] = hood is null ? double.NaN : NeighborPersistent(hood, rounds);
        npp[r] = hoodPinned is null ? double.NaN : NeighborPersistent(hoodPinned, rounds);
        ratio[r] = pe[r] / nb[r];
    }
    foreach (PersistentRequest p in preqs)
        p.Dispose();
    hood?.Dispose();
    hoodPinned?.Dispose();
    if (world.Rank == 0)
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"| {bytes} | {Median(nb):F3} | {Median(pe):F3} | {Median(ne):F3} | {PersistentMedian(np)} | {Median(ratio):F3} | {PersistentMedian(npp)} |"));
}
return 0;

static string PersistentMedian(double[] times) =>
    double.IsNaN(times[0]) ? "-" : Median(times).ToString("F3", CultureInfo.InvariantCulture);

static double Median(double[] values)
{
    double[] sorted = values.Order().ToArray();
    return sorted[sorted.Length / 2];
}
