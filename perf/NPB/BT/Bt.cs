using Partition = Npb.Multipartition.MultiPartition<Npb.BT.Cell>;
using System.MP;
using Npb.Common;
using Npb.Multipartition;

namespace Npb.BT;

/// <summary>
/// BT, the block-tridiagonal pseudo-application of the NAS Parallel Benchmarks (RNR-94-007;
/// NPB 3.4, MPI): the compressible Navier–Stokes equations on an n³ grid, advanced in time
/// by an approximate factorization (ADI) whose three factors are block-tridiagonal systems of
/// 5×5 blocks along x, y and z, over the multi-partition decomposition on a square number of
/// processes. Verified by the RMS norms of the residual and of the error against the exact
/// solution. With the I/O subtype "full" (BT-IO) the solution is also written to a file
/// with collective MPI-IO every five steps and read back to verify it.
/// </summary>
public static class Bt
{
    private sealed record Parameters(int N, int Iterations, double Dt, double[] Residual, double[] Error, double[] IoError);

    private static readonly ClassTable<Parameters> s_classes = new("BT",
        ('S', new Parameters(12, 60, 0.010,
            [1.7034283709541311e-01, 1.2975252070034097e-02, 3.2527926989486055e-02, 2.6436421275166801e-02, 1.9211784131744430e-01],
            [4.9976913345811579e-04, 4.5195666782961927e-05, 7.3973765172921357e-05, 7.3821238632439731e-05, 8.9269630987491446e-04],
            [0.1149036328945e+02, 0.9156788904727e+00, 0.2857899428614e+01, 0.2598273346734e+01, 0.2652795397547e+02])),
        ('W', new Parameters(24, 200, 0.0008,
            [0.1125590409344e+03, 0.1180007595731e+02, 0.2710329767846e+02, 0.2469174937669e+02, 0.2638427874317e+03],
            [0.4419655736008e+01, 0.4638531260002e+00, 0.1011551749967e+01, 0.9235878729944e+00, 0.1018045837718e+02],
            [0.6729594398612e+02, 0.5264523081690e+01, 0.1677107142637e+02, 0.1508721463436e+02, 0.1477018363393e+03])),
        ('A', new Parameters(64, 200, 0.0008,
            [1.0806346714637264e+02, 1.1319730901220813e+01, 2.5974354511582465e+01, 2.3665622544678910e+01, 2.5278963211748344e+02],
            [4.2348416040525025e+00, 4.4390282496995698e-01, 9.6692480136345650e-01, 8.8302063039765474e-01, 9.7379901770829278e+00],
            [0.6482218724961e+02, 0.5066461714527e+01, 0.1613931961359e+02, 0.1452010201481e+02, 0.1420099377681e+03])),
        ('B', new Parameters(102, 200, 0.0003,
            [1.4233597229287254e+03, 9.9330522590150238e+01, 3.5646025644535285e+02, 3.2485447959084092e+02, 3.2707541254659363e+03],
            [5.2969847140936856e+01, 4.4632896115670668e+00, 1.3122573342210174e+01, 1.2006925323559144e+01, 1.2459576151035986e+02],
            [0.1477545106464e+03, 0.1108895555053e+02, 0.3698065590331e+02, 0.3310505581440e+02, 0.3157928282563e+03])),
        ('C', new Parameters(162, 200, 0.0001,
            [0.62398116551764615e+04, 0.50793239190423964e+03, 0.15423530093013596e+04, 0.13302387929291190e+04, 0.11604087428436455e+05],
            [0.16462008369091265e+03, 0.11497107903824313e+02, 0.41207446207461508e+02, 0.37087651059694167e+02, 0.36211053051841265e+03],
            [0.2597156483475e+03, 0.1985384289495e+02, 0.6517950485788e+02, 0.5757235541520e+02, 0.5215668188726e+03])),
        ('D', new Parameters(408, 250, 0.00002,
            [0.2533188551738e+05, 0.2346393716980e+04, 0.6294554366904e+04, 0.5352565376030e+04, 0.3905864038618e+05],
            [0.3100009377557e+03, 0.2424086324913e+02, 0.7782212022645e+02, 0.6835623860116e+02, 0.6065737200368e+03],
            [0.3813781566713e+03, 0.3160872966198e+02, 0.9593576357290e+02, 0.8363391989815e+02, 0.7063466087423e+03])),
        ('E', new Parameters(1020, 250, 0.4e-5,
            [0.9795372484517e+05, 0.9739814511521e+04, 0.2467606342965e+05, 0.2092419572860e+05, 0.1392138856939e+06],
            [0.4327562208414e+03, 0.3699051964887e+02, 0.1089845040954e+03, 0.9462517622043e+02, 0.7765512765309e+03],
            [0.4729898413058e+03, 0.4145899331704e+02, 0.1192850917138e+03, 0.1032746026932e+03, 0.8270322177634e+03])));

    /// <summary>NPB's verification tolerance for BT.</summary>
    private const double Epsilon = 1.0e-08;

    /// <summary>BT-IO writes the solution every this many steps, and after the last.</summary>
    private const int WriteInterval = 5;

    /// <summary>The environment variable that names the file of the I/O subtype (default <see cref="SolutionFile.DefaultPath"/>).</summary>
    public const string FileVariable = "NPB_BTIO_FILE";

    /// <summary>
    /// Runs class <paramref name="problemClass"/> on every rank of <paramref name="world"/>,
    /// with the I/O subtype <paramref name="ioSubtype"/> ("full") or none; returns the exit code.
    /// </summary>
    public static int Run(Communicator world, char problemClass, string? ioSubtype = null)
    {
        if (ioSubtype is not null && !ioSubtype.Equals("full", StringComparison.OrdinalIgnoreCase))
            throw new RefusalException($"BT: I/O subtype '{ioSubtype}' is not implemented here; subtypes: full (collective MPI-IO).");
        bool io = ioSubtype is not null;
        Parameters p = s_classes[problemClass];
        if (!ActiveProcesses.Square(ref world, "BT", p.N))
            return 0;
        var part = new Partition(p.N, world.Size, world.Rank, (n, side, coord) => new Cell(n, side, coord));
        var banner = new List<string>
        {
            FormattableString.Invariant($" Size: {p.N,4}x{p.N,4}x{p.N,4}  (class {problemClass})"),
            FormattableString.Invariant($" Iterations: {p.Iterations,4}    dt: {p.Dt,11:F7}"),
        };
        if (io)
            banner.Add(FormattableString.Invariant($" BTIO -- FULL MPI-IO write interval: {WriteInterval,3}"));
        Report.Banner(world, "BT Benchmark", [.. banner]);

        string path = Environment.GetEnvironmentVariable(FileVariable) is { Length: > 0 } named ? named : SolutionFile.DefaultPath;
        using var solver = new Solver(world, part, p.Dt);
        solver.Initialize();
        solver.ComputeForcing();
        SolutionFile? file = io ? SolutionFile.Create(world, part, path) : null;

        // One step to touch all data and code, then the timed run from the same start.
        solver.Step();
        solver.Initialize();
        Timers timers = solver.Timers;
        timers.ClearAll();
        world.Barrier();
        timers.Start((int)Solver.Phase.Total);
        int dumps = 0;
        for (int step = 1; step <= p.Iterations; step++)
        {
            if (world.Rank == 0 && (step % 20 == 0 || step == p.Iterations || step == 1))
                Console.WriteLine(FormattableString.Invariant($" Time step {step,4}"));
            solver.Step();
            if (file is not null && (step % WriteInterval == 0 || step == p.Iterations))
            {
                if (world.Rank == 0)
                    Console.WriteLine(FormattableString.Invariant($" Writing data set, time step {step}"));
                timers.Start((int)Solver.Phase.Io);
                file.Write(dumps++);
                timers.Stop((int)Solver.Phase.Io);
            }
        }
        timers.Start((int)Solver.Phase.Io);
        file?.Dispose();
        timers.Stop((int)Solver.Phase.Io);
        timers.Stop((int)Solver.Phase.Total);

        bool fileComplete = true;
        double[] error = io ? ReadBack(world, part, solver, path, dumps, out fileComplete) : solver.ErrorNorm();
        solver.ExchangeAndComputeRhs();
        double[] residual = solver.RhsNorm();
        for (int m = 0; m < residual.Length; m++)
            residual[m] /= p.Dt;
        double seconds = world.Allreduce(timers.Read((int)Solver.Phase.Total), Op.Max);

        bool verified = fileComplete;
        if (world.Rank == 0)
        {
            verified &= Verification.CheckResidualAndError(problemClass, Epsilon, residual, p.Residual,
                error, io ? p.IoError : p.Error, io ? "solution error, averaged over the dumps read back" : "solution error");
            Verification.Verdict(verified);
        }

        double ioSeconds = timers.Read((int)Solver.Phase.Io);
        double ioRateSum = world.Allreduce(ioSeconds != 0 ? 1.0 / ioSeconds : 0.0, Op.Sum);
        double n3 = (double)p.N * p.N * p.N, navg = p.N;
        if (io && world.Rank == 0)
        {
            double megabytes = n3 * 40.0 * dumps * 1.0e-6;
            double meanRate = ioRateSum / world.Size;
            double ioTime = meanRate != 0 ? 1.0 / meanRate : 0;
            Console.WriteLine();
            Console.WriteLine(" BTIO -- statistics:");
            Console.WriteLine(FormattableString.Invariant($"   I/O timing in seconds   : {ioTime,14:F2}"));
            Console.WriteLine(FormattableString.Invariant($"   I/O timing percentage   : {(seconds != 0 ? ioTime * 100.0 / seconds : 0),14:F2}"));
            Console.WriteLine(FormattableString.Invariant($"   Total data written (MB) : {megabytes,14:F2}"));
            Console.WriteLine(FormattableString.Invariant($"   I/O data rate  (MB/sec) : {megabytes * meanRate,14:F2}"));
        }

        double mops = seconds != 0
            ? 1.0e-6 * p.Iterations * (3478.8 * n3 - 17655.7 * navg * navg + 28023.7 * navg) / seconds
            : 0;
        return Report.FloatingPoint("BT", problemClass, (p.N, p.N, p.N), p.Iterations, seconds, mops, verified, world.Size)
            .Finish(world, timers);
    }

    /// <summary>
    /// Reads every dump back from the file and returns the mean over the dumps of its error
    /// norms against the exact solution, as NPB's BT-IO verifies; u is left holding the last
    /// dump, the final solution. <paramref name="complete"/> tells whether the file has exactly
    /// the size of the dumps written. Collective.
    /// </summary>
    private static double[] ReadBack(Communicator world, Partition part, Solver solver, string path, int dumps, out bool complete)
    {
        using SolutionFile file = SolutionFile.OpenForReading(world, part, path);
        long size = file.Size, expected = dumps * SolutionFile.DumpBytes(part.N);
        complete = size == expected;
        if (!complete && world.Rank == 0)
            Console.WriteLine(FormattableString.Invariant($" FAILURE: {path} holds {size} bytes; {dumps} dumps of the solution are {expected}"));
        var sum = new double[Flow.Vars];
        for (int dump = 0; dump < dumps; dump++)
        {
            file.ClearSolution();
            file.Read(dump);
            if (world.Rank == 0)
                Console.WriteLine(FormattableString.Invariant($" Reading data set {dump + 1}"));
            double[] norms = solver.ErrorNorm();
            for (int m = 0; m < sum.Length; m++)
                sum[m] += norms[m];
        }
        for (int m = 0; m < sum.Length; m++)
            sum[m] /= dumps;
        return sum;
    }
}
