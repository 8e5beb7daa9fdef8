using System.MP;
using Npb.Common;

namespace Npb.LU;

/// <summary>
/// LU, the SSOR pseudo-application of the NAS Parallel Benchmarks (RNR-94-007; NPB 3.4, MPI):
/// the steady state of the compressible Navier–Stokes equations on an n³ grid, reached by
/// symmetric successive over-relaxation of the implicit operator split into lower and upper
/// block-triangular parts, with a 2-D decomposition whose triangular solves run as a
/// pipelined wavefront. Verified by the residual norms, the error norms against the exact
/// solution and a surface integral.
/// </summary>
public static class Lu
{
    private sealed record Parameters(int N, int Iterations, double Dt, double[] Residual, double[] Error, double Surface);

    private static readonly ClassTable<Parameters> s_classes = new("LU",
        ('S', new Parameters(12, 50, 0.5,
            [1.6196343210976702e-02, 2.1976745164821318e-03, 1.5179927653399185e-03, 1.5029584435994323e-03, 3.4264073155896461e-02],
            [6.4223319957960924e-04, 8.4144342047347926e-05, 5.8588269616485186e-05, 5.8474222595157350e-05, 1.3103347914111294e-03],
            7.8418928865937083e+00)),
        ('W', new Parameters(33, 300, 1.5e-3,
            [0.1236511638192e+02, 0.1317228477799e+01, 0.2550120713095e+01, 0.2326187750252e+01, 0.2826799444189e+02],
            [0.4867877144216e+00, 0.5064652880982e-01, 0.9281818101960e-01, 0.8570126542733e-01, 0.1084277417792e+01],
            0.1161399311023e+02)),
        ('A', new Parameters(64, 250, 2.0,
            [7.7902107606689367e+02, 6.3402765259692870e+01, 1.9499249727292479e+02, 1.7845301160418537e+02, 1.8384760349464247e+03],
            [2.9964085685471943e+01, 2.8194576365003349e+00, 7.3473412698774742e+00, 6.7139225687777051e+00, 7.0715315688392578e+01],
            2.6030925604886277e+01)),
        ('B', new Parameters(102, 250, 2.0,
            [3.5532672969982736e+03, 2.6214750795310692e+02, 8.8333721850952190e+02, 7.7812774739425265e+02, 7.3087969592545314e+03],
            [1.1401176380212709e+02, 8.1098963655421574e+00, 2.8480597317698308e+01, 2.5905394567832939e+01, 2.6054907504857413e+02],
            4.7887162703308227e+01)),
        ('C', new Parameters(162, 250, 2.0,
            [1.03766980323537846e+04, 8.92212458801008552e+02, 2.56238814582660871e+03, 2.19194343857831427e+03, 1.78078057261061185e+04],
            [2.15986399716949279e+02, 1.55789559239863600e+01, 5.41318863077207766e+01, 4.82262643154045421e+01, 4.55902910043250358e+02],
            6.66404553572181300e+01)),
        ('D', new Parameters(408, 300, 1.0,
            [0.4868417937025e+05, 0.4696371050071e+04, 0.1218114549776e+05, 0.1033801493461e+05, 0.7142398413817e+05],
            [0.3752393004482e+03, 0.3084128893659e+02, 0.9434276905469e+02, 0.8230686681928e+02, 0.7002620636210e+03],
            0.8334101392503e+02)),
        ('E', new Parameters(1020, 300, 0.5,
            [0.2099641687874e+06, 0.2130403143165e+05, 0.5319228789371e+05, 0.4509761639833e+05, 0.2932360006590e+06],
            [0.4800572578333e+03, 0.4221993400184e+02, 0.1210851906824e+03, 0.1047888986770e+03, 0.8363028257389e+03],
            0.9512163272273e+02)),
        ('F', new Parameters(2560, 300, 0.2,
            [0.8505125358152e+06, 0.8774655318044e+05, 0.2167258198851e+06, 0.1838245257371e+06, 0.1175556512415e+07],
            [0.5293914132486e+03, 0.4784861621068e+02, 0.1337701281659e+03, 0.1154215049655e+03, 0.8956266851467e+03],
            0.1002509436546e+03)));

    /// <summary>NPB's verification tolerance for LU.</summary>
    private const double Epsilon = 1.0e-08;

    /// <summary>Runs class <paramref name="problemClass"/> on every rank of <paramref name="world"/>; returns the exit code.</summary>
    public static int Run(Communicator world, char problemClass)
    {
        Parameters p = s_classes[problemClass];
        if (!ActiveProcesses.Select(ref world, Grid.LargestGrid(world.Size), Grid.NoGrid(world.Size)))
            return 0;
        Grid grid = Grid.Create(p.N, world.Size, world.Rank);
        var banner = new List<string>
        {
            FormattableString.Invariant($" Size: {p.N,4}x{p.N,4}x{p.N,4}  (class {problemClass})"),
            FormattableString.Invariant($" Iterations: {p.Iterations,4}"),
        };
        if (world.Size > 1)
            banner.Add(FormattableString.Invariant($" Proc_grid: {grid.XDim} x {grid.YDim}"));
        Report.Banner(world, "LU Benchmark", [.. banner]);

        using var solver = new Solver(world, grid, p.Dt);
        solver.SetBoundary();
        solver.SetInitial();
        solver.ComputeForcing();

        // One step to touch all data and code, then the timed run from the same start.
        solver.Ssor(1, printSteps: false);
        solver.SetBoundary();
        solver.SetInitial();
        var (residual, seconds) = solver.Ssor(p.Iterations, printSteps: true);
        double[] error = solver.SolutionError();
        double surface = solver.SurfaceIntegral();

        bool verified = true;
        if (world.Rank == 0)
        {
            verified = Verification.CheckResidualAndError(problemClass, Epsilon, residual, p.Residual, error, p.Error);
            Console.WriteLine(" Comparison of surface integral");
            verified &= Verification.Check("surface integral", surface, p.Surface, Epsilon, print: true);
            Verification.Verdict(verified);
        }

        double n = p.N;
        double mops = 1.0e-6 * p.Iterations
            * (1984.77 * n * n * n - 10923.3 * (3 * n / 3.0) * (3 * n / 3.0) + 27770.9 * (3 * n) / 3.0 - 144010.0)
            / seconds;
        return Report.FloatingPoint("LU", problemClass, (p.N, p.N, p.N), p.Iterations, seconds, mops, verified, world.Size)
            .Finish(world, solver.Timers);
    }
}
