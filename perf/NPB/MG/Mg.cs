using System.MP;
using Npb.Common;

namespace Npb.MG;

/// <summary>MG's timers, named as NPB's: the timed region, each operator, and the ghost exchanges' waiting.</summary>
internal enum MgTimer { Total, Residual, Smooth, Restrict, Interpolate, Communication }

/// <summary>
/// MG, the multigrid kernel (NAS report RNR-94-007, kernel MG): approximate the solution of the discrete
/// Poisson problem ∇²u = v on an n³ periodic grid, v zero except +1 at the ten points where the
/// NPB generator's numbers are largest and -1 at the ten smallest, by iterations of
/// u ← u + M·(v - A·u), M a V-cycle over the levels n, n/2, ..., 2. The L2 norm of the final
/// residual is verified against NPB's to 10^-8.
///
/// Decomposition: the processes (a power of two, at most 8) form a p1 × p2 × p3 grid, z split
/// first, then y, then x, each owning a block of every level with one ghost layer. With at
/// most two processes per axis every rank keeps at least one point of the coarsest 2³ grid.
/// </summary>
public static class Mg
{
    private const double Seed = 314159265;
    private const double Epsilon = 1e-8;
    private const int ChargeCount = 10;

    private readonly record struct Parameters(int N, int Iterations, double Norm);

    private static readonly ClassTable<Parameters> Classes = new("MG",
        ('S', new(32, 4, 0.5307707005734e-04)),
        ('W', new(128, 4, 0.6467329375339e-05)),
        ('A', new(256, 4, 0.2433365309069e-05)),
        ('B', new(256, 20, 0.1800564401355e-05)),
        ('C', new(512, 20, 0.5706732285740e-06)),
        ('D', new(1024, 50, 0.1583275060440e-09)));

    // The operator A (a1 = 0) and the smoothers S(a) for classes S, W, A and S(b) for the rest (c3 = 0).
    private const double A0 = -8.0 / 3.0, A2 = 1.0 / 6.0, A3 = 1.0 / 12.0;

    /// <summary>Runs class <paramref name="problemClass"/> on <paramref name="world"/>; returns the exit code.</summary>
    public static int Run(Communicator world, char problemClass)
    {
        Parameters p = Classes[problemClass];
        if (!ActiveProcesses.PowerOfTwo(ref world, "MG"))
            return 0;
        int size = world.Size, rank = world.Rank;
        if (size > 8)
            throw new RefusalException(FormattableString.Invariant(
                $"MG: {size} processes: this implementation splits each axis at most in two (at most 8 processes), so that every rank keeps a point of the coarsest 2x2x2 grid."));
        bool smootherA = problemClass is 'S' or 'W' or 'A';
        (double c0, double c1, double c2) = smootherA
            ? (-3.0 / 8.0, 1.0 / 32.0, -1.0 / 64.0)
            : (-3.0 / 17.0, 1.0 / 33.0, -1.0 / 61.0);

        Report.Banner(world, "MG Benchmark",
            FormattableString.Invariant($" Size: {p.N,4}x{p.N,4}x{p.N,4}  (class {problemClass})"),
            FormattableString.Invariant($" Iterations: {p.Iterations,4}"));

        var timers = new Timers("total", "resid", "psinv", "rprj3", "interp", "comm3");
        var solver = new Solver(world, p.N, timers, (int)MgTimer.Communication, (c0, c1, c2));

        // One V-cycle before the timed region, as NPB does, then start over.
        double initStart = Mpi.Wtime();
        solver.Initialize();
        solver.Residual();
        solver.VCycle();
        solver.Residual();
        solver.Initialize();
        if (rank == 0)
            Console.WriteLine(FormattableString.Invariant($" Initialization time: {Mpi.Wtime() - initStart,15:F3} seconds\n"));

        timers.ClearAll();
        world.Barrier();
        timers.Start((int)MgTimer.Total);
        solver.Residual();
        solver.ResidualNorm();
        for (int it = 1; it <= p.Iterations; it++)
        {
            if (rank == 0 && (it == 1 || it == p.Iterations || it % 5 == 0))
                Console.WriteLine(FormattableString.Invariant($"  iter {it,4}"));
            solver.VCycle();
            solver.Residual();
        }
        double norm = solver.ResidualNorm();
        timers.Stop((int)MgTimer.Total);
        double seconds = world.Allreduce(timers.Read((int)MgTimer.Total), Op.Max);

        bool print = rank == 0;
        if (print)
            Console.WriteLine("\n Benchmark completed ");
        bool verified = Verification.Check("L2 norm", norm, p.Norm, Epsilon, print);
        if (print)
            Console.WriteLine(verified ? " VERIFICATION SUCCESSFUL " : " VERIFICATION FAILED");
        if (Timers.Detailed)
            timers.PrintSummary(world);

        double points = (double)p.N * p.N * p.N;
        return Report.FloatingPoint("MG", problemClass, (p.N, p.N, p.N), p.Iterations, seconds, 58.0 * 1e-6 * p.Iterations * points / seconds, verified, size).Finish(world);
    }

    /// <summary>The levels, their arrays and the V-cycle.</summary>
    private sealed class Solver
    {
        private readonly Communicator _world;
        private readonly int _n;
        private readonly int _top;                 // level index of the finest grid (log2 n)
        private readonly Grid[] _grids;            // index k: the 2^k grid, k = 1.._top
        private readonly double[][] _u, _r;        // the correction and residual of every level
        private readonly double[] _v;              // right-hand side, finest level
        private readonly Stencils _stencils;
        private readonly (double C0, double C1, double C2) _smoother;

        public Solver(Communicator world, int n, Timers timers, int commTimer, (double, double, double) smoother)
        {
            _world = world;
            _n = n;
            _smoother = smoother;
            _top = System.Numerics.BitOperations.Log2((uint)n);

            // z gets the first split, y the second, x the third (log p = 3 at most).
            int logP = System.Numerics.BitOperations.Log2((uint)world.Size);
            int p1 = 1 << (logP / 3), p2 = 1 << ((logP - logP / 3) / 2), p3 = world.Size / (p1 * p2);
            int rank = world.Rank;
            int q1 = rank % p1, q2 = rank / p1 % p2, q3 = rank / (p1 * p2);

            int b1 = n / p1, b2 = n / p2, b3 = n / p3;
            int maxFace = Math.Max((b2 + 2) * (b3 + 2), (b1 + 2) * Math.Max(b2 + 2, b3 + 2));
            var halo = new Halo(world, p1, p2, p3, q1, q2, q3, maxFace, timers, commTimer);
            _grids = new Grid[_top + 1];
            _u = new double[_top + 1][];
            _r = new double[_top + 1][];
            for (int k = _top; k >= 1; k--)
            {
                int shift = _top - k;
                int e1 = (n >> shift) / p1, e2 = (n >> shift) / p2, e3 = (n >> shift) / p3;
                var g = new Grid(e1 + 2, e2 + 2, e3 + 2, q1 * e1, q2 * e2, q3 * e3, halo);
                halo.Prepare(g);
                _grids[k] = g;
                _u[k] = g.NewArray();
                _r[k] = g.NewArray();
            }
            _v = _grids[_top].NewArray();
            _stencils = new Stencils(b1 + 2, timers);
        }

        private Grid Top => _grids[_top];

        /// <summary>u = 0 and v = the twenty charges (NPB's zran3).</summary>
        public void Initialize()
        {
            Array.Clear(_u[_top]);
            Charges(_v, Top);
            Top.Exchange(_v);
        }

        /// <summary>r = v - A·u on the finest level, ghosts exchanged.</summary>
        public void Residual()
        {
            _stencils.Residual(_u[_top], _v, _r[_top], Top, A0, A2, A3);
            Top.Exchange(_r[_top]);
        }

        /// <summary>The L2 norm of the finest residual, √(Σr²/n³), over all ranks.</summary>
        public double ResidualNorm()
        {
            double sum = _world.Allreduce(Stencils.SumOfSquares(_r[_top], Top), Op.Sum);
            return Math.Sqrt(sum / ((double)_n * _n * _n));
        }

        /// <summary>
        /// One V-cycle, u ← u + M·r: restrict the residual down to the 2³ grid, smooth there
        /// from zero, then on each finer level interpolate the correction, recompute that
        /// level's residual and smooth; on the finest level the correction is added to u.
        /// </summary>
        public void VCycle()
        {
            (double c0, double c1, double c2) = _smoother;
            for (int k = _top; k > 1; k--)
            {
                _stencils.Restrict(_r[k], _grids[k], _r[k - 1], _grids[k - 1]);
                _grids[k - 1].Exchange(_r[k - 1]);
            }
            Array.Clear(_u[1]);
            _stencils.Smooth(_r[1], _u[1], _grids[1], c0, c1, c2);
            _grids[1].Exchange(_u[1]);
            for (int k = 2; k < _top; k++)
            {
                Array.Clear(_u[k]);
                _stencils.Interpolate(_u[k - 1], _grids[k - 1], _u[k], _grids[k]);
                _stencils.Residual(_u[k], _r[k], _r[k], _grids[k], A0, A2, A3);
                _grids[k].Exchange(_r[k]);
                _stencils.Smooth(_r[k], _u[k], _grids[k], c0, c1, c2);
                _grids[k].Exchange(_u[k]);
            }
            _stencils.Interpolate(_u[_top - 1], _grids[_top - 1], _u[_top], Top);
            Residual();
            _stencils.Smooth(_r[_top], _u[_top], Top, c0, c1, c2);
            Top.Exchange(_u[_top]);
        }

        /// <summary>
        /// NPB's zran3: point (x, y, z) of the n³ grid draws the generator's number e + 1,
        /// e = x + n·(y + n·z), from seed 314159265 with a = 5^13. The ten largest numbers
        /// become +1, the ten smallest -1, everything else 0. Each rank finds its own ten of each,
        /// the candidates of all ranks are gathered, and every rank keeps the global ten that
        /// fall in its block.
        /// </summary>
        private void Charges(double[] v, Grid g)
        {
            int m1 = g.M1, m2 = g.M2, m3 = g.M3, b1 = m1 - 2;
            var largest = new Candidates(ChargeCount, +1);
            var smallest = new Candidates(ChargeCount, -1);
            for (int i3 = 1; i3 < m3 - 1; i3++)
            {
                for (int i2 = 1; i2 < m2 - 1; i2++)
                {
                    long first = g.Off1 + (long)_n * (g.Off2 + i2 - 1 + (long)_n * (g.Off3 + i3 - 1));
                    double x = Seed;
                    Random46.Randlc(ref x, Random46.Power(Random46.A, first));
                    int row = m1 * (i2 + m2 * i3);
                    Span<double> line = v.AsSpan(row + 1, b1);
                    Random46.Vranlc(line, ref x, Random46.A);
                    for (int i1 = 0; i1 < b1; i1++)
                    {
                        largest.Offer(line[i1], first + i1);
                        smallest.Offer(line[i1], first + i1);
                    }
                }
            }

            // Gather every rank's candidates as (value, global index) pairs.
            int size = _world.Size;
            var mine = new double[4 * ChargeCount];
            largest.CopyTo(mine.AsSpan(0, 2 * ChargeCount));
            smallest.CopyTo(mine.AsSpan(2 * ChargeCount, 2 * ChargeCount));
            var all = new double[mine.Length * size];
            _world.Allgather(mine, all);
            var globalLargest = new Candidates(ChargeCount, +1);
            var globalSmallest = new Candidates(ChargeCount, -1);
            for (int q = 0; q < size; q++)
            {
                for (int c = 0; c < ChargeCount; c++)
                {
                    int at = q * mine.Length + 2 * c;
                    globalLargest.Offer(all[at], (long)all[at + 1]);
                    globalSmallest.Offer(all[at + 2 * ChargeCount], (long)all[at + 2 * ChargeCount + 1]);
                }
            }

            Array.Clear(v);
            globalSmallest.Place(v, g, _n, -1.0);
            globalLargest.Place(v, g, _n, +1.0);
        }
    }

    /// <summary>The best few values seen (largest for direction +1, smallest for -1) with their global grid index.</summary>
    private sealed class Candidates(int count, int direction)
    {
        private readonly double[] _values = FilledWith(count, direction > 0 ? double.NegativeInfinity : double.PositiveInfinity);
        private readonly long[] _where = new long[count];
        private int _worst;   // index of the entry a better value replaces

        private static double[] FilledWith(int n, double x)
        {
            var a = new double[n];
            Array.Fill(a, x);
            return a;
        }

        private bool Better(double a, double b) => direction > 0 ? a > b : a < b;

        public void Offer(double value, long where)
        {
            if (!Better(value, _values[_worst]))
                return;
            _values[_worst] = value;
            _where[_worst] = where;
            for (int i = 0; i < _values.Length; i++)
            {
                if (Better(_values[_worst], _values[i]))
                    _worst = i;
            }
        }

        /// <summary>Writes (value, index) pairs.</summary>
        public void CopyTo(Span<double> pairs)
        {
            for (int i = 0; i < _values.Length; i++)
            {
                pairs[2 * i] = _values[i];
                pairs[2 * i + 1] = _where[i];
            }
        }

        /// <summary>Sets <paramref name="charge"/> at each kept point that lies in this rank's block.</summary>
        public void Place(double[] v, Grid g, int n, double charge)
        {
            for (int i = 0; i < _values.Length; i++)
            {
                if (double.IsInfinity(_values[i]))
                    continue;
                long e = _where[i];
                int x = (int)(e % n) - g.Off1, y = (int)(e / n % n) - g.Off2, z = (int)(e / ((long)n * n)) - g.Off3;
                if ((uint)x < (uint)(g.M1 - 2) && (uint)y < (uint)(g.M2 - 2) && (uint)z < (uint)(g.M3 - 2))
                    v[x + 1 + g.M1 * (y + 1 + g.M2 * (z + 1))] = charge;
            }
        }
    }
}
