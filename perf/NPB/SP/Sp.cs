using MultiPartition = Npb.Multipartition.MultiPartition<Npb.SP.Cell>;
using System.MP;
using Npb.Common;
using Npb.Multipartition;

namespace Npb.SP;

/// <summary>
/// SP, the scalar pentadiagonal pseudo-application of the NAS Parallel Benchmarks (NPB 2 report,
/// NAS-95-020; NPB 3.4, MPI): the compressible Navier–Stokes equations on an n³ grid advanced in
/// time by the Beam–Warming approximate factorization, diagonalized so that each of the x, y
/// and z factors is three independent scalar pentadiagonal systems per line, on a
/// multi-partition of p² ranks (p cells each). Verified by the residual norms and the error
/// norms against the exact solution.
/// </summary>
public static class Sp
{
    private sealed record Parameters(int N, int Iterations, double Dt, double[] Residual, double[] Error);

    private static readonly ClassTable<Parameters> s_classes = new("SP",
        ('S', new Parameters(12, 100, 0.015,
            [2.7470315451339479e-02, 1.0360746705285417e-02, 1.6235745065095532e-02, 1.5840557224455615e-02, 3.4849040609362460e-02],
            [2.7289258557377227e-05, 1.0364446640837285e-05, 1.6154798287166471e-05, 1.5750704994480102e-05, 3.4177666183390531e-05])),
        ('W', new Parameters(36, 400, 0.0015,
            [0.1893253733584e-02, 0.1717075447775e-03, 0.2778153350936e-03, 0.2887475409984e-03, 0.3143611161242e-02],
            [0.7542088599534e-04, 0.6512852253086e-05, 0.1049092285688e-04, 0.1128838671535e-04, 0.1212845639773e-03])),
        ('A', new Parameters(64, 400, 0.0015,
            [2.4799822399300195e+00, 1.1276337964368832e+00, 1.5028977888770491e+00, 1.4217816211695179e+00, 2.1292113035138280e+00],
            [1.0900140297820550e-04, 3.7343951769282091e-05, 5.0092785406541633e-05, 4.7671093939528255e-05, 1.3621613399213001e-04])),
        ('B', new Parameters(102, 400, 0.001,
            [0.6903293579998e+02, 0.3095134488084e+02, 0.4103336647017e+02, 0.3864769009604e+02, 0.5643482272596e+02],
            [0.9810006190188e-02, 0.1022827905670e-02, 0.1720597911692e-02, 0.1694479428231e-02, 0.1847456263981e-01])),
        ('C', new Parameters(162, 400, 0.00067,
            [0.5881691581829e+03, 0.2454417603569e+03, 0.3293829191851e+03, 0.3081924971891e+03, 0.4597223799176e+03],
            [0.2598120500183e+00, 0.2590888922315e-01, 0.5132886416320e-01, 0.4806073419454e-01, 0.5483377491301e+00])),
        ('D', new Parameters(408, 500, 0.0003,
            [0.1044696216887e+05, 0.3204427762578e+04, 0.4648680733032e+04, 0.4238923283697e+04, 0.7588412036136e+04],
            [0.5089471423669e+01, 0.5323514855894e+00, 0.1187051008971e+01, 0.1083734951938e+01, 0.1164108338568e+02])),
        ('E', new Parameters(1020, 500, 0.0001,
            [0.6255387422609e+05, 0.1495317020012e+05, 0.2347595750586e+05, 0.2091099783534e+05, 0.4770412841218e+05],
            [0.6742735164909e+02, 0.5390656036938e+01, 0.1680647196477e+02, 0.1536963126457e+02, 0.1575330146156e+03])),
        ('F', new Parameters(2560, 500, 0.000015,
            [0.9281628449462e+05, 0.2230152287675e+05, 0.3493102358632e+05, 0.3114096186689e+05, 0.7424426448298e+05],
            [0.2683717702444e+03, 0.2030647554028e+02, 0.6734864248234e+02, 0.5947451301640e+02, 0.5417636652565e+03])));

    /// <summary>NPB's verification tolerance for SP.</summary>
    private const double Epsilon = 1.0e-08;

    /// <summary>Runs class <paramref name="problemClass"/> on every rank of <paramref name="world"/>; returns the exit code.</summary>
    public static int Run(Communicator world, char problemClass)
    {
        Parameters p = s_classes[problemClass];
        if (!ActiveProcesses.Square(ref world, "SP", p.N))
            return 0;
        var part = new MultiPartition(p.N, world.Size, world.Rank, (n, side, coord) => new Cell(n, side, coord));
        Report.Banner(world, "SP Benchmark",
            FormattableString.Invariant($" Size: {p.N,4}x{p.N,4}x{p.N,4}  (class {problemClass})"),
            FormattableString.Invariant($" Iterations: {p.Iterations,4}    dt: {p.Dt,11:F7}"));

        var model = new Model(p.N, p.Dt);
        using var solver = new Solver(world, part, model);
        solver.Initialize();

        // One step to touch all data and code, then the timed run from the same start.
        solver.Step();
        solver.Initialize();
        solver.Timers.ClearAll();
        world.Barrier();
        solver.Start(Solver.Phase.Total);
        for (int step = 1; step <= p.Iterations; step++)
        {
            if (world.Rank == 0 && (step % 20 == 0 || step == 1))
                Console.WriteLine(FormattableString.Invariant($" Time step {step,4}"));
            solver.Step();
        }
        solver.Stop(Solver.Phase.Total);
        double seconds = world.Allreduce(solver.Timers.Read((int)Solver.Phase.Total), Op.Max);

        double[] error = solver.ErrorNorm();
        solver.ComputeRhs();
        double[] residual = solver.RhsNorm();
        for (int m = 0; m < Cell.Vars; m++)
            residual[m] /= p.Dt;

        bool verified = true;
        if (world.Rank == 0)
        {
            verified = Verification.CheckResidualAndError(problemClass, Epsilon, residual, p.Residual, error, p.Error);
            Verification.Verdict(verified);
        }

        double n3 = (double)p.N * p.N * p.N, t = p.N;
        double mops = seconds > 0
            ? 1.0e-6 * p.Iterations * (881.174 * n3 - 4683.91 * t * t + 11484.5 * t - 19272.4) / seconds
            : 0;
        return Report.FloatingPoint("SP", problemClass, (p.N, p.N, p.N), p.Iterations, seconds, mops, verified, world.Size)
            .Finish(world, solver.Timers);
    }
}
