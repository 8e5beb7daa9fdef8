// Pi: Monte Carlo estimate of π.  Each rank throws darts at the unit square
// with its own random stream; Allreduce sums the hits.
//
// usage: mpiexec -n 4 motor Pi.dll [darts_per_rank]
using System.Globalization;
using System.MP;

long darts = args.Length > 0 ? long.Parse(args[0], CultureInfo.InvariantCulture) : 10_000_000;
var world = Communicator.World;
var random = new Random(12345 + 7919 * world.Rank);
double t0 = Mpi.Wtime();
long hits = 0;
for (long i = 0; i < darts; i++)
{
    double x = random.NextDouble(), y = random.NextDouble();
    if (x * x + y * y <= 1.0)
        hits++;
}
long totalHits = world.Allreduce(hits, Op.Sum);
long totalDarts = world.Allreduce(darts, Op.Sum);
double seconds = world.Reduce(Mpi.Wtime() - t0, Op.Max, 0);
if (world.Rank == 0)
{
    double pi = 4.0 * totalHits / totalDarts;
    // Standard error of the estimate: 4·sqrt(q(1-q)/n) with q = π/4.
    double error = 4.0 * Math.Sqrt(pi / 4 * (1 - pi / 4) / totalDarts);
    Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
        $"pi ≈ {pi:F6} ± {error:F6} from {totalDarts} darts on {world.Size} ranks in {seconds:F2} s (error vs Math.PI: {Math.Abs(pi - Math.PI):E2})"));
    if (Math.Abs(pi - Math.PI) > 5 * error)
    {
        Console.Error.WriteLine("estimate is more than 5 standard errors from π");
        return 1;
    }
}
return 0;
