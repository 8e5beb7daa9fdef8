namespace Npb.Common;

/// <summary>
/// The constants of the compressible Navier–Stokes model that LU, BT and SP solve (RNR-94-007
/// §3; NPB's set_constants): the gas constants c1..c5, their products the flux Jacobians use,
/// the fourth-difference dissipation, and the viscous coefficients of a mesh width.
/// </summary>
internal static class Gas
{
    /// <summary>γ; γ − 1; the viscous scale; the conductivity scale; γ (c1..c5 of the specification).</summary>
    public const double C1 = 1.4, C2 = 0.4, C3 = 0.1, C4 = 1.0, C5 = 1.4;

    /// <summary>Products of the gas constants (c1c2, c1c5, c3c4, c1c5·c3c4) and the ratios 4/3 and 1/6 of the viscous terms.</summary>
    public const double C1C2 = C1 * C2, C1C5 = C1 * C5, C3C4 = C3 * C4, C1345 = C1C5 * C3C4;

    /// <inheritdoc cref="C1C2"/>
    public const double Con43 = 4.0 / 3.0, Con16 = 1.0 / 6.0;

    /// <summary>Fourth-difference dissipation: max(dx, dy, dz) / 4.</summary>
    public const double Dssp = 0.25;

    /// <summary>
    /// The viscous coefficients for mesh width 1/<paramref name="inverseH"/> (xxcon1..xxcon5):
    /// c3c4/h² times 4/3, 1, 1 − c1c5, 1/6 and c1c5, each rounded as NPB computes it.
    /// </summary>
    public static (double Con1, double Con2, double Con3, double Con4, double Con5) Viscous(double inverseH)
    {
        double c3c4t3 = C3C4 * inverseH;
        return (c3c4t3 * Con43 * inverseH, c3c4t3 * inverseH, c3c4t3 * (1.0 - C1C5) * inverseH,
            c3c4t3 * Con16 * inverseH, c3c4t3 * C1C5 * inverseH);
    }
}
