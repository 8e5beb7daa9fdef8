using Npb.Common;

namespace Npb.LU;

/// <summary>
/// The model problem of LU (RNR-94-007 §3, NPB 2 report): the three-dimensional compressible
/// Navier–Stokes equations in conservative form with the constants of the benchmark, and the
/// prescribed exact solution from which the forcing term and the boundary values come.
/// </summary>
internal static class Flow
{
    /// <summary>Second-difference dissipation along i, j and k (dx, dy, dz), equal for the five equations.</summary>
    public const double DissI = 0.75, DissJ = 0.75, DissK = 1.0;

    /// <summary>SSOR over-relaxation factor.</summary>
    public const double Omega = 1.2;

    /// <summary>The exact solution at the global point (i, j, k) of an n0³ grid, 1-based.</summary>
    public static void Exact(int i, int j, int k, int nx0, int ny0, int nz0, Span<double> u)
    {
        double xi = (double)(i - 1) / (nx0 - 1);
        double eta = (double)(j - 1) / (ny0 - 1);
        double zeta = (double)(k - 1) / (nz0 - 1);
        ReadOnlySpan<double> e = ExactSolution.Coefficients;
        for (int m = 0; m < Grid.Vars; m++)
        {
            ReadOnlySpan<double> c = e.Slice(ExactSolution.Terms * m, ExactSolution.Terms);
            u[m] = c[0]
                + c[1] * xi + c[2] * eta + c[3] * zeta
                + c[4] * xi * xi + c[5] * eta * eta + c[6] * zeta * zeta
                + c[7] * xi * xi * xi + c[8] * eta * eta * eta + c[9] * zeta * zeta * zeta
                + c[10] * xi * xi * xi * xi + c[11] * eta * eta * eta * eta + c[12] * zeta * zeta * zeta * zeta;
        }
    }
}
