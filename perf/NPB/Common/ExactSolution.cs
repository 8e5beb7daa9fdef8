namespace Npb.Common;

/// <summary>
/// The exact solution of the pseudo-applications' model problem (LU, SP, BT; NPB 2 report): for
/// each of the five conserved variables a polynomial of degree four in ξ, η, ζ ∈ [0, 1],
/// u_m = e0 + e1 ξ + e2 η + e3 ζ + e4 ξ² + e5 η² + e6 ζ² + e7 ξ³ + e8 η³ + e9 ζ³ + e10 ξ⁴ + e11 η⁴ + e12 ζ⁴.
/// The forcing term is what makes it a steady solution of the discrete equations, and the
/// boundary values come from it.
/// </summary>
public static class ExactSolution
{
    /// <summary>Coefficients a variable.</summary>
    public const int Terms = 13;

    /// <summary>The coefficients e0..e12 of variable m at [13·m, 13·m + 12].</summary>
    public static ReadOnlySpan<double> Coefficients =>
    [
        2.0, 0.0, 0.0, 4.0, 5.0, 3.0, 0.5, 0.02, 0.01, 0.03, 0.5, 0.4, 0.3,
        1.0, 0.0, 0.0, 0.0, 1.0, 2.0, 3.0, 0.01, 0.03, 0.02, 0.4, 0.3, 0.5,
        2.0, 2.0, 0.0, 0.0, 0.0, 2.0, 3.0, 0.04, 0.03, 0.05, 0.3, 0.5, 0.4,
        2.0, 2.0, 0.0, 0.0, 0.0, 2.0, 3.0, 0.03, 0.05, 0.04, 0.2, 0.1, 0.3,
        5.0, 4.0, 3.0, 2.0, 0.1, 0.4, 0.3, 0.05, 0.04, 0.03, 0.1, 0.3, 0.2,
    ];

    /// <summary>The five variables at (ξ, η, ζ), each axis's polynomial in Horner form.</summary>
    public static void Evaluate(double xi, double eta, double zeta, Span<double> u)
    {
        ReadOnlySpan<double> e = Coefficients;
        for (int m = 0; m < 5; m++)
        {
            ReadOnlySpan<double> c = e.Slice(Terms * m, Terms);
            u[m] = c[0]
                + xi * (c[1] + xi * (c[4] + xi * (c[7] + xi * c[10])))
                + eta * (c[2] + eta * (c[5] + eta * (c[8] + eta * c[11])))
                + zeta * (c[3] + zeta * (c[6] + zeta * (c[9] + zeta * c[12])));
        }
    }

    /// <summary>
    /// The transfinite (trilinear blending) interpolation at (ξ, η, ζ) of the exact solution on
    /// the six faces of the unit cube, the five variables into <paramref name="u"/>: the initial
    /// state of BT and SP.
    /// </summary>
    public static void Interpolate(double xi, double eta, double zeta, Span<double> u)
    {
        // Faces x = 0, x = 1, y = 0, y = 1, z = 0, z = 1, five values each.
        Span<double> face = stackalloc double[6 * 5];
        for (int side = 0; side < 2; side++)
        {
            Evaluate(side, eta, zeta, face.Slice(5 * side, 5));
            Evaluate(xi, side, zeta, face.Slice(10 + 5 * side, 5));
            Evaluate(xi, eta, side, face.Slice(20 + 5 * side, 5));
        }
        for (int m = 0; m < 5; m++)
        {
            double px = xi * face[5 + m] + (1.0 - xi) * face[m];
            double py = eta * face[15 + m] + (1.0 - eta) * face[10 + m];
            double pz = zeta * face[25 + m] + (1.0 - zeta) * face[20 + m];
            u[m] = px + py + pz - px * py - px * pz - py * pz + px * py * pz;
        }
    }
}
