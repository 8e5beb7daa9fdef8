using System.MP;
using Npb.Common;

namespace Npb.EP;

/// <summary>
/// EP, the embarrassingly parallel kernel (RNR-94-007 §2.3): 2^(m+1) uniform numbers from
/// the NPB generator become pairs (x, y) in (-1, 1)²; each pair inside the unit circle gives
/// two Gaussian deviates by the Marsaglia polar method, whose sums and counts per square
/// annulus are the result. The sequence is cut in batches of 2^17 numbers; batch k starts at
/// seed s·a^(2^17·k), so each rank generates its share of batches independently and the
/// ranks only meet in three sums at the end.
/// </summary>
public static class Ep
{
    private const int BatchLog = 16;              // NPB's mk: 2^16 pairs per batch
    private const int PairsPerBatch = 1 << BatchLog;
    private const int Annuli = 10;                // NPB's nq
    private const double Seed = 271828183;
    private const double Epsilon = 1e-8;

    private readonly record struct Parameters(int M, double Sx, double Sy, double Pairs);

    private static readonly ClassTable<Parameters> Classes = new("EP",
        ('S', new(24, 1.051299420395306e+07, 1.051517131857535e+07, 13176389)),
        ('W', new(25, 2.102505525182392e+07, 2.103162209578822e+07, 26354769)),
        ('A', new(28, 1.682235632304711e+08, 1.682195123368299e+08, 210832767)),
        ('B', new(30, 6.728927543423024e+08, 6.728951822504275e+08, 843345606)),
        ('C', new(32, 2.691444083862931e+09, 2.691519118724585e+09, 3373275903)),
        ('D', new(36, 4.306350280812112e+10, 4.306347571859157e+10, 53972171957)),
        ('E', new(40, 6.890169663167274e+11, 6.890164670688535e+11, 863554308186)),
        ('F', new(44, 1.102426773788175e+13, 1.102426773787993e+13, 13816870608324)));

    private enum T { Total, Compute, Communication }

    /// <summary>Runs class <paramref name="problemClass"/> on <paramref name="world"/>; returns the exit code.</summary>
    public static int Run(Communicator world, char problemClass)
    {
        Parameters p = Classes[problemClass];
        long batches = 1L << (p.M - BatchLog);
        int size = world.Size, rank = world.Rank;
        if (batches < size)
            throw new RefusalException(FormattableString.Invariant(
                $"EP: {size} processes exceed the {batches} batches of class {problemClass}."));

        Report.Banner(world, "EP Benchmark",
            FormattableString.Invariant($" Number of random numbers generated: {Math.Pow(2, p.M + 1),15:F0}"));

        // Batches split as evenly as possible: the first (batches mod size) ranks take one more.
        long share = batches / size, extra = batches % size;
        long first = rank * share + Math.Min(rank, extra);
        long count = share + (rank < extra ? 1 : 0);

        var timers = new Timers("total", "compute", "communication");
        var counts = new double[Annuli];
        var sums = new double[2];
        world.Barrier();
        timers.Start((int)T.Total);
        timers.Start((int)T.Compute);

        // a^(2·2^16): the jump from one batch's first seed to the next one's.
        double batchJump = Random46.Power(Random46.A, 2L * PairsPerBatch);
        double sx = 0, sy = 0;
        for (long k = first; k < first + count; k++)
        {
            ulong seed = (ulong)Seed * (ulong)Random46.Power(batchJump, k) & Random46.Mask;
            Batch(seed, counts, ref sx, ref sy);
        }

        timers.Stop((int)T.Compute);
        timers.Start((int)T.Communication);
        sums[0] = sx;
        sums[1] = sy;
        var totals = new double[2];
        world.Allreduce(sums, totals, Op.Sum);
        var allCounts = new double[Annuli];
        world.Allreduce(counts, allCounts, Op.Sum);
        timers.Stop((int)T.Communication);
        timers.Stop((int)T.Total);
        double seconds = world.Allreduce(timers.Read((int)T.Total), Op.Max);

        double gaussianPairs = 0;
        foreach (double c in allCounts)
            gaussianPairs += c;
        bool print = rank == 0;
        if (print)
        {
            Console.WriteLine("EP Benchmark Results:");
            Console.WriteLine(FormattableString.Invariant($"CPU Time = {seconds,10:F3}"));
            Console.WriteLine(FormattableString.Invariant($"N = 2^{p.M,5}"));
            Console.WriteLine(FormattableString.Invariant($"No. Gaussian Pairs = {gaussianPairs,15:F0}"));
            Console.WriteLine(FormattableString.Invariant($"Sums = {totals[0],25:0.000000000000000E+00}{totals[1],25:0.000000000000000E+00}"));
            Console.WriteLine("Counts:");
            for (int i = 0; i < Annuli; i++)
                Console.WriteLine(FormattableString.Invariant($"{i,3}{allCounts[i],15:F0}"));
        }

        bool verified = Verification.Check("sx", totals[0], p.Sx, Epsilon, print)
                      & Verification.Check("sy", totals[1], p.Sy, Epsilon, print)
                      & Verification.Check("pairs", gaussianPairs, p.Pairs, Epsilon, print);
        if (Timers.Detailed)
            timers.PrintSummary(world);
        return new Report
        {
            Name = "EP",
            Class = problemClass,
            Size = Report.SizePowerOfTwo(p.M + 1),
            Iterations = 0,
            Seconds = seconds,
            Mops = Math.Pow(2, p.M + 1) / seconds / 1e6,
            OperationType = "Random numbers generated",
            Verified = verified,
            Processes = size,
        }.Finish(world);
    }

    /// <summary>
    /// One batch: 2^16 pairs drawn from <paramref name="seed"/>, the accepted ones tallied by
    /// annulus max(|X|, |Y|) and summed. The generator runs inline (the pair's two numbers are
    /// consumed as they are made), which gives the same numbers as filling a buffer first.
    /// </summary>
    private static void Batch(ulong seed, double[] counts, ref double sx, ref double sy)
    {
        const ulong a = (ulong)Random46.A;
        ulong state = seed;
        double localX = 0, localY = 0;
        for (int i = 0; i < PairsPerBatch; i++)
        {
            state = state * a & Random46.Mask;
            double x1 = 2.0 * ((long)state * Random46.R46) - 1.0;
            state = state * a & Random46.Mask;
            double x2 = 2.0 * ((long)state * Random46.R46) - 1.0;
            double t = x1 * x1 + x2 * x2;
            if (t <= 1.0)
            {
                double f = Math.Sqrt(-2.0 * Math.Log(t) / t);
                double gx = Math.Abs(x1 * f), gy = Math.Abs(x2 * f);
                int annulus = (int)Math.Max(gx, gy);
                counts[annulus] += 1.0;
                localX += gx;
                localY += gy;
            }
        }
        sx += localX;
        sy += localY;
    }
}
