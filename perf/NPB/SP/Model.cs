using Npb.Common;
using Npb.Multipartition;
using static Npb.Common.Gas;

namespace Npb.SP;

/// <summary>
/// The constants of SP's model problem (NPB 2 report; NPB's set_constants) for an n³ grid and
/// time step dt: the gas constants, the mesh spacings, the viscous and dissipative coefficients
/// of the right-hand side and of the three factors' left-hand sides.
/// </summary>
internal sealed class Model
{
    /// <summary>1/√2, the scaling of the eigenvector transforms.</summary>
    public static readonly double Bt = Math.Sqrt(0.5);

    /// <summary>1/(γ − 1) for the u−c/u+c transform of the z factor.</summary>
    public const double C2Iv = 2.5;

    public readonly int N;
    public readonly double Dt;

    /// <summary>The constants of each axis (x, y, z).</summary>
    public readonly AxisConstants[] Axes;

    /// <summary>
    /// The fourth-difference dissipation stencil at each global index g along an axis:
    /// Stencil[t][g] is the weight of point g + t − 2, (0, 0, 5, −4, 1) at g = 1,
    /// (0, −4, 6, −4, 1) at g = 2, (1, −4, 6, −4, 1) inside, mirrored at n − 3 and n − 2, zero
    /// on the boundary (never used). Times dt·dssp (<see cref="LhsStencil"/>) it is the
    /// dissipation of the left-hand side.
    /// </summary>
    public readonly double[][] Stencil, LhsStencil;

    public Model(int n, double dt)
    {
        N = n;
        Dt = dt;
        Axes = [new AxisConstants(n, 0.75, dt), new AxisConstants(n, 0.75, dt), new AxisConstants(n, 1.0, dt)];
        Stencil = new double[5][];
        LhsStencil = new double[5][];
        for (int t = 0; t < 5; t++)
        {
            Stencil[t] = new double[n];
            LhsStencil[t] = new double[n];
        }
        double dtdssp = dt * Dssp;
        Span<double> row = stackalloc double[5];
        for (int g = 1; g < n - 1; g++)
        {
            FourthDifference.Weights(g, n, row);
            for (int t = 0; t < 5; t++)
            {
                Stencil[t][g] = row[t];
                LhsStencil[t][g] = dtdssp * row[t];
            }
        }
    }

    /// <summary>The exact solution at the global point (gi, gj, gk).</summary>
    public void Exact(int gi, int gj, int gk, Span<double> u)
    {
        double h = 1.0 / (N - 1);
        ExactSolution.Evaluate(gi * h, gj * h, gk * h, u);
    }
}

/// <summary>The constants of one axis: spacing terms, viscous coefficients, implicit factors.</summary>
internal sealed class AxisConstants
{
    /// <summary>1/h², 1/(2h), 1/h.</summary>
    public readonly double T1, T2, T3;

    /// <summary>Second-difference dissipation d (equal for the five equations) and d/h².</summary>
    public readonly double D, DT1;

    /// <summary>Viscous coefficients: along-axis momentum (4/3), other momenta, q, |v|², ρE/ρ (xxcon1..5).</summary>
    public readonly double Con1, Con2, Con3, Con4, Con5;

    /// <summary>dt/h², dt/(2h), 2·dt/h².</summary>
    public readonly double Dtt1, Dtt2, C2Dtt1;

    public AxisConstants(int n, double d, double dt)
    {
        double h = 1.0 / (n - 1);
        T1 = 1.0 / (h * h);
        T2 = 1.0 / (2.0 * h);
        T3 = 1.0 / h;
        D = d;
        DT1 = d * T1;
        (Con1, Con2, Con3, Con4, Con5) = Gas.Viscous(T3);
        Dtt1 = dt * T1;
        Dtt2 = dt * T2;
        C2Dtt1 = 2.0 * Dtt1;
    }
}
