using Npb.Common;
namespace Npb.SP;

/// <summary>
/// The starting state of SP (NPB's initialize, lhsinit and exact_rhs): the initial guess, the
/// exact solution on the global boundary, the coefficient arrays, and the forcing term that
/// makes the exact solution a steady state of the discrete equations.
/// </summary>
internal static class Setup
{
    /// <summary>
    /// u inside the domain: the transfinite interpolation of the exact solution on the six faces;
    /// on the global boundary, the exact solution; in every ghost point, ρ = ρE = 1 and zero
    /// momentum (ghosts on the global boundary are read only with zero weight).
    /// </summary>
    public static void Initialize(Model model, Cell c)
    {
        int pts = c.Points;
        c.U.AsSpan(0, pts).Fill(1.0);
        c.U.AsSpan(pts, 3 * pts).Clear();
        c.U.AsSpan(4 * pts, pts).Fill(1.0);
        double h = 1.0 / (model.N - 1);
        Span<double> e = stackalloc double[Cell.Vars];
        for (int k = 0; k < c.Size[2]; k++)
        {
            double zeta = (k + c.Low[2]) * h;
            for (int j = 0; j < c.Size[1]; j++)
            {
                double eta = (j + c.Low[1]) * h;
                for (int i = 0; i < c.Size[0]; i++)
                {
                    double xi = (i + c.Low[0]) * h;
                    Common.ExactSolution.Interpolate(xi, eta, zeta, e);
                    int p = c.Index(i, j, k);
                    for (int m = 0; m < Cell.Vars; m++)
                        c.U[m * pts + p] = e[m];
                }
            }
        }

        // The boundary faces, x then y then z, each with its own coordinate exactly 0 or 1.
        for (int a = 0; a < 3; a++)
        {
            for (int side = 0; side < 2; side++)
            {
                if (!(side == 0 ? c.First[a] : c.Last[a]))
                    continue;
                int layer = side == 0 ? 0 : c.Size[a] - 1;
                for (int k = 0; k < c.Size[2]; k++)
                {
                    for (int j = 0; j < c.Size[1]; j++)
                    {
                        for (int i = 0; i < c.Size[0]; i++)
                        {
                            int at = a == 0 ? i : a == 1 ? j : k;
                            if (at != layer)
                                continue;
                            double xi = a == 0 ? side : (i + c.Low[0]) * h;
                            double eta = a == 1 ? side : (j + c.Low[1]) * h;
                            double zeta = a == 2 ? side : (k + c.Low[2]) * h;
                            Common.ExactSolution.Evaluate(xi, eta, zeta, e);
                            int p = c.Index(i, j, k);
                            for (int m = 0; m < Cell.Vars; m++)
                                c.U[m * pts + p] = e[m];
                        }
                    }
                }
            }
        }
    }

    /// <summary>
    /// Every row of the three factors the identity (diagonal 1): the rows of points on the global
    /// boundary, and the ghost rows that carry a neighbour cell's eliminated rows, keep it; the
    /// solves rebuild the interior rows every step.
    /// </summary>
    public static void InitializeLhs(Cell c)
    {
        Array.Clear(c.Lhs);
        for (int f = 0; f < 3; f++)
            c.Lhs.AsSpan((f * Cell.Band + 2) * c.Points, c.Points).Fill(1.0);
    }

    /// <summary>
    /// The forcing term at the interior points: minus the discrete right-hand side (fluxes,
    /// viscous terms, dissipation along the three axes) applied to the exact solution.
    /// </summary>
    public static void Forcing(Model model, Cell c)
    {
        int pts = c.Points;
        Array.Clear(c.Forcing);
        Span<double> ue = stackalloc double[25];
        Span<double> buf = stackalloc double[25];
        Span<double> cuf = stackalloc double[5];
        Span<double> q = stackalloc double[5];
        Span<double> f = stackalloc double[Cell.Vars];
        Span<int> g = stackalloc int[3];
        for (int k = c.Lo(2); k <= c.Hi(2); k++)
        {
            for (int j = c.Lo(1); j <= c.Hi(1); j++)
            {
                for (int i = c.Lo(0); i <= c.Hi(0); i++)
                {
                    g[0] = i + c.Low[0];
                    g[1] = j + c.Low[1];
                    g[2] = k + c.Low[2];
                    f.Clear();
                    for (int a = 0; a < 3; a++)
                    {
                        AxisConstants ax = model.Axes[a];
                        int va = 1 + a;
                        // The exact solution and its derived quantities at g−2..g+2 along the axis.
                        for (int t = 0; t < 5; t++)
                        {
                            int ga = g[a] + t - 2;
                            Span<double> uet = ue.Slice(5 * t, 5), bt = buf.Slice(5 * t, 5);
                            model.Exact(a == 0 ? ga : g[0], a == 1 ? ga : g[1], a == 2 ? ga : g[2], uet);
                            double rinv = 1.0 / uet[0];
                            for (int m = 1; m < 5; m++)
                                bt[m] = rinv * uet[m];
                            cuf[t] = bt[va] * bt[va];
                            bt[0] = cuf[t];
                            for (int m = 1; m <= 3; m++)
                            {
                                if (m != va)
                                    bt[0] += bt[m] * bt[m];
                            }
                            q[t] = 0.5 * (bt[1] * uet[1] + bt[2] * uet[2] + bt[3] * uet[3]);
                        }
                        const int M = 5, P = 15, C = 10; // offsets of g−1, g+1, g in ue and buf
                        f[0] = f[0] - ax.T2 * (ue[P + va] - ue[M + va])
                            + ax.DT1 * (ue[P] - 2.0 * ue[C] + ue[M]);
                        for (int m = 1; m <= 3; m++)
                        {
                            if (m == va)
                            {
                                f[m] = f[m] - ax.T2 * ((ue[P + m] * buf[P + va] + Gas.C2 * (ue[P + 4] - q[3]))
                                                     - (ue[M + m] * buf[M + va] + Gas.C2 * (ue[M + 4] - q[1])))
                                    + ax.Con1 * (buf[P + m] - 2.0 * buf[C + m] + buf[M + m])
                                    + ax.DT1 * (ue[P + m] - 2.0 * ue[C + m] + ue[M + m]);
                            }
                            else
                            {
                                f[m] = f[m] - ax.T2 * (ue[P + m] * buf[P + va] - ue[M + m] * buf[M + va])
                                    + ax.Con2 * (buf[P + m] - 2.0 * buf[C + m] + buf[M + m])
                                    + ax.DT1 * (ue[P + m] - 2.0 * ue[C + m] + ue[M + m]);
                            }
                        }
                        f[4] = f[4] - ax.T2 * (buf[P + va] * (Gas.C1 * ue[P + 4] - Gas.C2 * q[3])
                                             - buf[M + va] * (Gas.C1 * ue[M + 4] - Gas.C2 * q[1]))
                            + 0.5 * ax.Con3 * (buf[P] - 2.0 * buf[C] + buf[M])
                            + ax.Con4 * (cuf[3] - 2.0 * cuf[2] + cuf[1])
                            + ax.Con5 * (buf[P + 4] - 2.0 * buf[C + 4] + buf[M + 4])
                            + ax.DT1 * (ue[P + 4] - 2.0 * ue[C + 4] + ue[M + 4]);
                        double[][] d = model.Stencil;
                        int at = g[a];
                        for (int m = 0; m < Cell.Vars; m++)
                        {
                            f[m] = f[m] - Gas.Dssp * (d[0][at] * ue[m] + d[1][at] * ue[5 + m] + d[2][at] * ue[10 + m]
                                                        + d[3][at] * ue[15 + m] + d[4][at] * ue[20 + m]);
                        }
                    }
                    int p = c.Index(i, j, k);
                    for (int m = 0; m < Cell.Vars; m++)
                        c.Forcing[m * pts + p] = -1.0 * f[m];
                }
            }
        }
    }
}
