using System.MP;
using Npb.Common;

namespace Npb.FT;

/// <summary>
/// FT, the 3-D FFT PDE kernel (NAS report RNR-94-007, kernel FT): a complex field of
/// pseudo-random numbers is transformed forward once, then each iteration multiplies the
/// spectrum by exp(-4απ²|k̄|² ) (α = 10^-6, k̄ the frequency folded to -n/2..n/2-1),
/// transforms it back, and sums 1024 fixed elements (divided by the grid size): the checksums
/// verified against NPB's to 10^-12.
///
/// Decomposition: slabs. In physical space rank r holds z planes [r·nz/p, (r+1)·nz/p) with x
/// fastest, in spectral space y rows [r·ny/p, (r+1)·ny/p) of every z, also x fastest. One
/// all-to-all moves between the two: the y transform writes its output straight into the
/// send blocks, and the z transform reads the received blocks in place, so no separate local
/// transpose pass is made. With one process the two layouts coincide and nothing is sent.
/// </summary>
public static class Ft
{
    private const double Seed = 314159265;
    private const double Alpha = 1e-6;
    private const double Epsilon = 1e-12;

    private readonly record struct Parameters(int Nx, int Ny, int Nz, int Iterations, double[] Checksums);

    // Reference checksums (re, im) of each iteration, from NPB 3.4's verify.
    private static readonly ClassTable<Parameters> Classes = new("FT",
        ('S', new(64, 64, 64, 6, [
            5.546087004964e+02, 4.845363331978e+02, 5.546385409189e+02, 4.865304269511e+02,
            5.546148406171e+02, 4.883910722336e+02, 5.545423607415e+02, 4.901273169046e+02,
            5.544255039624e+02, 4.917475857993e+02, 5.542683411902e+02, 4.932597244941e+02])),
        ('W', new(128, 128, 32, 6, [
            5.673612178944e+02, 5.293246849175e+02, 5.631436885271e+02, 5.282149986629e+02,
            5.594024089970e+02, 5.270996558037e+02, 5.560698047020e+02, 5.260027904925e+02,
            5.530898991250e+02, 5.249400845633e+02, 5.504159734538e+02, 5.239212247086e+02])),
        ('A', new(256, 256, 128, 6, [
            5.046735008193e+02, 5.114047905510e+02, 5.059412319734e+02, 5.098809666433e+02,
            5.069376896287e+02, 5.098144042213e+02, 5.077892868474e+02, 5.101336130759e+02,
            5.085233095391e+02, 5.104914655194e+02, 5.091487099959e+02, 5.107917842803e+02])),
        ('B', new(512, 256, 256, 20, [
            5.177643571579e+02, 5.077803458597e+02, 5.154521291263e+02, 5.088249431599e+02,
            5.146409228649e+02, 5.096208912659e+02, 5.142378756213e+02, 5.101023387619e+02,
            5.139626667737e+02, 5.103976610617e+02, 5.137423460082e+02, 5.105948019802e+02,
            5.135547056878e+02, 5.107404165783e+02, 5.133910925466e+02, 5.108576573661e+02,
            5.132470705390e+02, 5.109577278523e+02, 5.131197729984e+02, 5.110460304483e+02,
            5.130070319283e+02, 5.111252433800e+02, 5.129070537032e+02, 5.111968077718e+02,
            5.128182883502e+02, 5.112616233064e+02, 5.127393733383e+02, 5.113203605551e+02,
            5.126691062020e+02, 5.113735928093e+02, 5.126064276004e+02, 5.114218460548e+02,
            5.125504076570e+02, 5.114656139760e+02, 5.125002331720e+02, 5.115053595966e+02,
            5.124551951846e+02, 5.115415130407e+02, 5.124146770029e+02, 5.115744692211e+02])),
        ('C', new(512, 512, 512, 20, [
            5.195078707457e+02, 5.149019699238e+02, 5.155422171134e+02, 5.127578201997e+02,
            5.144678022222e+02, 5.122251847514e+02, 5.140150594328e+02, 5.121090289018e+02,
            5.137550426810e+02, 5.121143685824e+02, 5.135811056728e+02, 5.121496764568e+02,
            5.134569343165e+02, 5.121870921893e+02, 5.133651975661e+02, 5.122193250322e+02,
            5.132955192805e+02, 5.122454735794e+02, 5.132410471738e+02, 5.122663649603e+02,
            5.131971141679e+02, 5.122830879827e+02, 5.131605205716e+02, 5.122965869718e+02,
            5.131290734194e+02, 5.123075927445e+02, 5.131012720314e+02, 5.123166486553e+02,
            5.130760908195e+02, 5.123241541685e+02, 5.130528295923e+02, 5.123304037599e+02,
            5.130310107773e+02, 5.123356167976e+02, 5.130103090133e+02, 5.123399592211e+02,
            5.129905029333e+02, 5.123435588985e+02, 5.129714421109e+02, 5.123465164008e+02])));

    private enum T { Total, Fft, Checksum, Transpose }

    /// <summary>Runs class <paramref name="problemClass"/> on <paramref name="world"/>; returns the exit code.</summary>
    public static int Run(Communicator world, char problemClass)
    {
        Parameters p = Classes[problemClass];
        if (!ActiveProcesses.PowerOfTwo(ref world, "FT"))
            return 0;
        int size = world.Size, rank = world.Rank;
        if (size > p.Nz || size > p.Ny)
            throw new RefusalException(FormattableString.Invariant(
                $"FT: {size} processes exceed the {Math.Min(p.Ny, p.Nz)} slabs of class {problemClass} ({p.Nx}x{p.Ny}x{p.Nz}); this implementation decomposes into slabs only."));

        Report.Banner(world, "FT Benchmark",
            FormattableString.Invariant($" Size                : {p.Nx,4}x{p.Ny,4}x{p.Nz,4}  (class {problemClass})"),
            FormattableString.Invariant($" Iterations          :        {p.Iterations,7}"),
            FormattableString.Invariant($" Processor array     :     {1,4}x{size,4}"),
            " Layout type         :          slab");

        var timers = new Timers("total", "fft", "checksum", "transpose");
        var solver = new Solver(world, p.Nx, p.Ny, p.Nz, timers);
        var sums = new double[2 * p.Iterations];

        // One whole untimed pass touches every page and the code first, as NPB does.
        double initStart = Mpi.Wtime();
        solver.Initialize();
        solver.Forward();
        if (rank == 0)
            Console.WriteLine(FormattableString.Invariant($" Initialization time = {Mpi.Wtime() - initStart,12:F4}\n"));

        timers.ClearAll();
        world.Barrier();
        timers.Start((int)T.Total);
        solver.Initialize();
        solver.Forward();
        for (int iter = 1; iter <= p.Iterations; iter++)
        {
            solver.EvolveAndInverse();
            solver.Checksum(out sums[2 * iter - 2], out sums[2 * iter - 1]);
            if (rank == 0)
                Console.WriteLine(FormattableString.Invariant($" T = {iter,4}     Checksum = {sums[2 * iter - 2],22:E12}{sums[2 * iter - 1],22:E12}"));
        }
        timers.Stop((int)T.Total);
        double seconds = world.Allreduce(timers.Read((int)T.Total), Op.Max);

        bool verified = true;
        for (int i = 0; i < p.Iterations; i++)
        {
            double re = sums[2 * i] - p.Checksums[2 * i], im = sums[2 * i + 1] - p.Checksums[2 * i + 1];
            double error = Math.Sqrt(re * re + im * im)
                / Math.Sqrt(p.Checksums[2 * i] * p.Checksums[2 * i] + p.Checksums[2 * i + 1] * p.Checksums[2 * i + 1]);
            if (!(error <= Epsilon))
            {
                verified = false;
                if (rank == 0)
                    Console.WriteLine(FormattableString.Invariant($" Checksum {i + 1} differs from the reference by {error:E3} (relative; at most {Epsilon:E0} passes)"));
            }
        }
        if (rank == 0)
            Console.WriteLine(verified ? " Result verification successful" : " Result verification failed");
        if (Timers.Detailed)
            timers.PrintSummary(world);

        double total = (double)p.Nx * p.Ny * p.Nz;
        double mops = 1e-6 * total * (14.8157 + 7.19641 * Math.Log(total)
            + (5.23518 + 7.21113 * Math.Log(total)) * p.Iterations) / seconds;
        return Report.FloatingPoint("FT", problemClass, (p.Nx, p.Ny, p.Nz), p.Iterations, seconds, mops, verified, size).Finish(world);
    }

    /// <summary>
    /// The distributed field and its transforms. Physical layout (x, y, zl): complex element
    /// x + nx·(y + ny·zl). Spectral layout (x, yl, z): x + nx·(yl + nyl·z); block d of it (the z
    /// of rank d) is contiguous, which makes it both the receive side of the forward all-to-all
    /// and the send side of the inverse one. The other side of each all-to-all is the "packed"
    /// layout: block d (the y of rank d) holds (x, yl, zl) at x + nx·(yl + nyl·zl).
    /// </summary>
    private sealed class Solver
    {
        private readonly Communicator _world;
        private readonly int _nx, _ny, _nz, _nyl, _nzl, _y0, _z0;
        private readonly Timers _timers;
        private readonly BlockFft _fft;

        // Complex arrays, interleaved (re, im).
        private readonly double[] _spectrum;   // spectral layout: the evolving u0
        private readonly double[] _packed;     // packed layout (one process: the physical layout)
        private readonly double[] _physical;   // physical layout
        private readonly double[] _factors;    // exp(-4απ²|k̄|²), spectral layout, one per element

        // Double offsets of element t of a column, from the column's first element.
        private readonly int[] _yPhysical, _yPacked, _zSpectral;
        private readonly double[] _partial = new double[2], _global = new double[2];

        public Solver(Communicator world, int nx, int ny, int nz, Timers timers)
        {
            _world = world;
            _timers = timers;
            int size = world.Size, rank = world.Rank;
            (_nx, _ny, _nz) = (nx, ny, nz);
            _nyl = ny / size;
            _nzl = nz / size;
            _y0 = rank * _nyl;
            _z0 = rank * _nzl;
            BlockFft.RequireLines(nx, "nx");
            BlockFft.RequireLines(ny * _nzl, "the x lines of a slab");
            _fft = new BlockFft(Math.Max(nx, Math.Max(ny, nz)));

            int elements = nx * ny * _nzl;
            _spectrum = new double[2 * elements];
            _packed = size == 1 ? _spectrum : new double[2 * elements];
            _physical = new double[2 * elements];
            _factors = new double[elements];

            int block = nx * _nyl * _nzl;
            _yPhysical = new int[ny];
            _yPacked = new int[ny];
            for (int y = 0; y < ny; y++)
            {
                _yPhysical[y] = 2 * nx * y;
                _yPacked[y] = 2 * ((y / _nyl) * block + (y % _nyl) * nx);
            }
            _zSpectral = new int[nz];
            for (int z = 0; z < nz; z++)
                _zSpectral[z] = 2 * nx * _nyl * z;
        }

        /// <summary>
        /// The initial field in the physical layout: complex element (x, y, z) takes the
        /// generator's numbers 2e+1 and 2e+2 (e = x + nx·(y + ny·z)) from seed 314159265, so
        /// each rank starts its slab by jumping the seed 2·nx·ny·z0 places. Also fills the
        /// time-step factors.
        /// </summary>
        public void Initialize()
        {
            double x = Seed;
            Random46.Randlc(ref x, Random46.Power(Random46.A, 2L * _nx * _ny * _z0));
            Random46.Vranlc(_physical, ref x, Random46.A);

            double ap = -4.0 * Alpha * Math.PI * Math.PI;
            Span<double> factors = _factors;
            int e = 0;
            for (int z = 0; z < _nz; z++)
            {
                int kz = Fold(z, _nz);
                for (int yl = 0; yl < _nyl; yl++)
                {
                    int ky = Fold(_y0 + yl, _ny);
                    int kyz = ky * ky + kz * kz;
                    for (int kx0 = 0; kx0 < _nx; kx0++, e++)
                    {
                        int kx = Fold(kx0, _nx);
                        factors[e] = Math.Exp(ap * (kx * kx + kyz));
                    }
                }
            }
        }

        private static int Fold(int i, int n) => (i + n / 2) % n - n / 2;

        /// <summary>Forward transform of the physical field into the spectrum: x, then y into the packed blocks, exchange, then z.</summary>
        public void Forward()
        {
            _timers.Start((int)T.Fft);
            int lineLength = 2 * _nx;
            for (int line = 0; line < _ny * _nzl; line += BlockFft.Lines)
            {
                _fft.GatherRows(_physical, line * lineLength, _nx);
                _fft.ScatterRows(_physical, line * lineLength, _nx, _fft.Transform(_nx, +1));
            }
            for (int zl = 0; zl < _nzl; zl++)
            {
                int physicalPlane = 2 * _nx * _ny * zl, packedPlane = 2 * _nx * _nyl * zl;
                for (int x = 0; x < _nx; x += BlockFft.Lines)
                {
                    _fft.GatherColumns(_physical, physicalPlane + 2 * x, _yPhysical);
                    _fft.ScatterColumns(_packed, packedPlane + 2 * x, _yPacked, _fft.Transform(_ny, +1));
                }
            }
            Exchange(_packed, _spectrum);
            for (int yl = 0; yl < _nyl; yl++)
            {
                for (int x = 0; x < _nx; x += BlockFft.Lines)
                {
                    int start = 2 * (x + _nx * yl);
                    _fft.GatherColumns(_spectrum, start, _zSpectral);
                    _fft.ScatterColumns(_spectrum, start, _zSpectral, _fft.Transform(_nz, +1));
                }
            }
            _timers.Stop((int)T.Fft);
        }

        /// <summary>
        /// One time step and the inverse transform: the spectrum is multiplied by the factors
        /// (kept for the next step) as the z lines are gathered; z into the spectral-layout send
        /// blocks, exchange, y from the packed blocks into the physical layout, then x.
        /// </summary>
        public void EvolveAndInverse()
        {
            _timers.Start((int)T.Fft);
            // The physical array is free until the y transform refills it: it takes the z output.
            double[] zOut = _physical;
            for (int yl = 0; yl < _nyl; yl++)
            {
                for (int x = 0; x < _nx; x += BlockFft.Lines)
                {
                    int start = 2 * (x + _nx * yl);
                    _fft.GatherColumnsScaled(_spectrum, _factors, start, _zSpectral);
                    _fft.ScatterColumns(zOut, start, _zSpectral, _fft.Transform(_nz, -1));
                }
            }
            double[] packed = zOut;
            if (_world.Size > 1)
            {
                Exchange(zOut, _packed);
                packed = _packed;
            }
            for (int zl = 0; zl < _nzl; zl++)
            {
                int physicalPlane = 2 * _nx * _ny * zl, packedPlane = 2 * _nx * _nyl * zl;
                for (int x = 0; x < _nx; x += BlockFft.Lines)
                {
                    _fft.GatherColumns(packed, packedPlane + 2 * x, _yPacked);
                    _fft.ScatterColumns(_physical, physicalPlane + 2 * x, _yPhysical, _fft.Transform(_ny, -1));
                }
            }
            int lineLength = 2 * _nx;
            for (int line = 0; line < _ny * _nzl; line += BlockFft.Lines)
            {
                _fft.GatherRows(_physical, line * lineLength, _nx);
                _fft.ScatterRows(_physical, line * lineLength, _nx, _fft.Transform(_nx, -1));
            }
            _timers.Stop((int)T.Fft);
        }

        private void Exchange(double[] send, double[] recv)
        {
            if (_world.Size == 1)
                return;
            _timers.Start((int)T.Transpose);
            _world.Alltoall(send, recv);
            _timers.Stop((int)T.Transpose);
        }

        /// <summary>
        /// NPB's checksum: the sum over j = 1..1024 of element (j mod nx, 3j mod ny, 5j mod nz)
        /// of the physical field, divided by nx·ny·nz, summed over the ranks that hold them.
        /// </summary>
        public void Checksum(out double re, out double im)
        {
            _timers.Start((int)T.Checksum);
            double sr = 0, si = 0;
            for (int j = 1; j <= 1024; j++)
            {
                int z = 5 * j % _nz - _z0;
                if ((uint)z >= (uint)_nzl)
                    continue;
                int e = j % _nx + _nx * (3 * j % _ny + _ny * z);
                sr += _physical[2 * e];
                si += _physical[2 * e + 1];
            }
            double total = (double)_nx * _ny * _nz;
            _partial[0] = sr / total;
            _partial[1] = si / total;
            _world.Allreduce(_partial, _global, Op.Sum);
            re = _global[0];
            im = _global[1];
            _timers.Stop((int)T.Checksum);
        }
    }
}
