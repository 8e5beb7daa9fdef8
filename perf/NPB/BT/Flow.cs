using Npb.Common;

namespace Npb.BT;

/// <summary>
/// The model problem of BT (RNR-94-007 §3, NPB 2 report): the three-dimensional compressible
/// Navier–Stokes equations in conservative form on the unit cube, with the constants of the
/// benchmark and the prescribed exact solution that gives the forcing term, the boundary
/// values and the error norms.
/// </summary>
internal static class Flow
{
    /// <summary>Doubles per grid point: ρ, ρu, ρv, ρw, ρE.</summary>
    public const int Vars = 5;

    /// <summary>Entries of one 5×5 block of the block-tridiagonal systems (row-major).</summary>
    public const int Block = Vars * Vars;

    /// <summary>Second-difference dissipation along x, y and z (dx, dy, dz), equal for the five equations.</summary>
    public static ReadOnlySpan<double> Dissipation => [0.75, 0.75, 1.0];
}

/// <summary>The constants of the discretization that depend on the grid size and the time step (NPB's set_constants).</summary>
internal sealed class Coefficients
{
    /// <summary>The time step.</summary>
    public readonly double Dt;

    /// <summary>1/h, where h = 1/(n−1) is the mesh width, equal along the three axes.</summary>
    public readonly double InverseH;

    /// <summary>1/h², 1/(2h) (tx1, tx2 of the specification).</summary>
    public readonly double T1, T2;

    /// <summary>The viscous terms: c3c4/h² times 4/3, 1, (1 − c1c5), 1/6 and c1c5 (xxcon1..xxcon5).</summary>
    public readonly double Con1, Con2, Con3, Con4, Con5;

    /// <summary>h, the mesh width.</summary>
    public readonly double H;

    public Coefficients(int n, double dt)
    {
        Dt = dt;
        H = 1.0 / (n - 1);
        InverseH = 1.0 / H;
        T1 = 1.0 / (H * H);
        T2 = 1.0 / (2.0 * H);
        (Con1, Con2, Con3, Con4, Con5) = Gas.Viscous(InverseH);
    }
}
