using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using static Npb.SP.Model;

namespace Npb.SP;

/// <summary>
/// The explicit part of one SP step on a cell (NPB's compute_rhs, txinvr and add): the
/// quantities derived from u, the right-hand side dt·(forcing + fluxes + viscous terms −
/// dissipation) along the three axes, its transformation into the eigenvector basis of the x
/// factor, and the final update of u.
/// </summary>
internal static class Rhs
{
    /// <summary>Velocities, q, 1/ρ, speed of sound at every owned point and the first ghost layer (which the exchange filled).</summary>
    public static void Derived(Cell c)
    {
        ref double u = ref MemoryMarshal.GetArrayDataReference(c.U);
        int pts = c.Points;
        for (int k = -1; k <= c.Size[2]; k++)
        {
            for (int j = -1; j <= c.Size[1]; j++)
            {
                int p = c.Index(-1, j, k);
                for (int i = -1; i <= c.Size[0]; i++, p++)
                {
                    double u0 = Unsafe.Add(ref u, p), u1 = Unsafe.Add(ref u, pts + p), u2 = Unsafe.Add(ref u, 2 * pts + p);
                    double u3 = Unsafe.Add(ref u, 3 * pts + p), u4 = Unsafe.Add(ref u, 4 * pts + p);
                    double rhoInv = 1.0 / u0;
                    c.RhoI[p] = rhoInv;
                    c.Us[p] = u1 * rhoInv;
                    c.Vs[p] = u2 * rhoInv;
                    c.Ws[p] = u3 * rhoInv;
                    double square = 0.5 * (u1 * u1 + u2 * u2 + u3 * u3) * rhoInv;
                    c.Square[p] = square;
                    c.Qs[p] = square * rhoInv;
                    double aux = Math.Sqrt(C1C2 * rhoInv * (u4 - square));
                    c.Speed[p] = aux;
                    c.Ainv[p] = 1.0 / aux;
                }
            }
        }
    }

    /// <summary>The right-hand side of the cell: forcing on every owned point, plus the three axes' terms times dt inside.</summary>
    public static void Compute(Model model, Cell c)
    {
        Derived(c);
        int pts = c.Points;
        for (int m = 0; m < Cell.Vars; m++)
        {
            for (int k = 0; k < c.Size[2]; k++)
            {
                for (int j = 0; j < c.Size[1]; j++)
                {
                    int p = m * pts + c.Index(0, j, k);
                    c.Forcing.AsSpan(p, c.Size[0]).CopyTo(c.Rhs.AsSpan(p, c.Size[0]));
                }
            }
        }
        for (int a = 0; a < 3; a++)
            Axis(model, c, a);
        double dt = model.Dt;
        for (int m = 0; m < Cell.Vars; m++)
        {
            for (int k = c.Lo(2); k <= c.Hi(2); k++)
            {
                for (int j = c.Lo(1); j <= c.Hi(1); j++)
                {
                    Span<double> row = c.Rhs.AsSpan(m * pts + c.Index(c.Lo(0), j, k), c.Hi(0) - c.Lo(0) + 1);
                    for (int i = 0; i < row.Length; i++)
                        row[i] *= dt;
                }
            }
        }
    }

    /// <summary>The convective, viscous and fourth-difference dissipation terms along axis a, added to the rhs at the interior points.</summary>
    private static void Axis(Model model, Cell c, int a)
    {
        AxisConstants ax = model.Axes[a];
        int pts = c.Points, s = c.Stride[a];
        // The momentum along the axis and the two across it, with their velocities.
        int ma = 1 + a, mb = a == 0 ? 2 : 1, mc = a == 2 ? 2 : 3;
        ref double u = ref MemoryMarshal.GetArrayDataReference(c.U);
        ref double r = ref MemoryMarshal.GetArrayDataReference(c.Rhs);
        ref double velA = ref MemoryMarshal.GetArrayDataReference(c.Velocity(a));
        ref double velB = ref MemoryMarshal.GetArrayDataReference(c.Velocity(mb - 1));
        ref double velC = ref MemoryMarshal.GetArrayDataReference(c.Velocity(mc - 1));
        ref double qs = ref MemoryMarshal.GetArrayDataReference(c.Qs);
        ref double sq = ref MemoryMarshal.GetArrayDataReference(c.Square);
        ref double rho = ref MemoryMarshal.GetArrayDataReference(c.RhoI);
        ref double diss = ref MemoryMarshal.GetArrayDataReference(model.Dissipation);
        ref double u0 = ref u, uA = ref Unsafe.Add(ref u, ma * pts), uB = ref Unsafe.Add(ref u, mb * pts);
        ref double uC = ref Unsafe.Add(ref u, mc * pts), u4 = ref Unsafe.Add(ref u, 4 * pts);
        ref double r0 = ref r, rA = ref Unsafe.Add(ref r, ma * pts), rB = ref Unsafe.Add(ref r, mb * pts);
        ref double rC = ref Unsafe.Add(ref r, mc * pts), r4 = ref Unsafe.Add(ref r, 4 * pts);
        double t2 = ax.T2, dt1 = ax.DT1, con2 = ax.Con2, con243 = ax.Con2 * Con43, con3 = ax.Con3, con4 = ax.Con4, con5 = ax.Con5;
        int gStep = a == 0 ? 5 : 0;
        for (int k = c.Lo(2); k <= c.Hi(2); k++)
        {
            for (int j = c.Lo(1); j <= c.Hi(1); j++)
            {
                int i0 = c.Lo(0);
                int p = c.Index(i0, j, k);
                int g = 5 * (a == 0 ? i0 + c.Low[0] : a == 1 ? j + c.Low[1] : k + c.Low[2]);
                for (int i = i0; i <= c.Hi(0); i++, p++, g += gStep)
                {
                    int pp = p + s, pm = p - s;
                    double up1 = Unsafe.Add(ref velA, pp), um1 = Unsafe.Add(ref velA, pm), uijk = Unsafe.Add(ref velA, p);

                    ref double x0 = ref Unsafe.Add(ref r0, p);
                    x0 = x0 + dt1 * (Unsafe.Add(ref u0, pp) - 2.0 * Unsafe.Add(ref u0, p) + Unsafe.Add(ref u0, pm))
                        - t2 * (Unsafe.Add(ref uA, pp) - Unsafe.Add(ref uA, pm));

                    double u4p = Unsafe.Add(ref u4, pp), u4m = Unsafe.Add(ref u4, pm);
                    double sqp = Unsafe.Add(ref sq, pp), sqm = Unsafe.Add(ref sq, pm);
                    ref double xa = ref Unsafe.Add(ref rA, p);
                    double uap = Unsafe.Add(ref uA, pp), uam = Unsafe.Add(ref uA, pm);
                    xa = xa + dt1 * (uap - 2.0 * Unsafe.Add(ref uA, p) + uam)
                        + con243 * (up1 - 2.0 * uijk + um1)
                        - t2 * (uap * up1 - uam * um1 + (u4p - sqp - u4m + sqm) * C2);

                    ref double xb = ref Unsafe.Add(ref rB, p);
                    double ubp = Unsafe.Add(ref uB, pp), ubm = Unsafe.Add(ref uB, pm);
                    xb = xb + dt1 * (ubp - 2.0 * Unsafe.Add(ref uB, p) + ubm)
                        + con2 * (Unsafe.Add(ref velB, pp) - 2.0 * Unsafe.Add(ref velB, p) + Unsafe.Add(ref velB, pm))
                        - t2 * (ubp * up1 - ubm * um1);

                    ref double xc = ref Unsafe.Add(ref rC, p);
                    double ucp = Unsafe.Add(ref uC, pp), ucm = Unsafe.Add(ref uC, pm);
                    xc = xc + dt1 * (ucp - 2.0 * Unsafe.Add(ref uC, p) + ucm)
                        + con2 * (Unsafe.Add(ref velC, pp) - 2.0 * Unsafe.Add(ref velC, p) + Unsafe.Add(ref velC, pm))
                        - t2 * (ucp * up1 - ucm * um1);

                    ref double x4 = ref Unsafe.Add(ref r4, p);
                    double u4c = Unsafe.Add(ref u4, p);
                    x4 = x4 + dt1 * (u4p - 2.0 * u4c + u4m)
                        + con3 * (Unsafe.Add(ref qs, pp) - 2.0 * Unsafe.Add(ref qs, p) + Unsafe.Add(ref qs, pm))
                        + con4 * (up1 * up1 - 2.0 * uijk * uijk + um1 * um1)
                        + con5 * (u4p * Unsafe.Add(ref rho, pp) - 2.0 * u4c * Unsafe.Add(ref rho, p) + u4m * Unsafe.Add(ref rho, pm))
                        - t2 * ((C1 * u4p - C2 * sqp) * up1 - (C1 * u4m - C2 * sqm) * um1);

                    double d0 = Unsafe.Add(ref diss, g), d1 = Unsafe.Add(ref diss, g + 1), d2 = Unsafe.Add(ref diss, g + 2);
                    double d3 = Unsafe.Add(ref diss, g + 3), d4 = Unsafe.Add(ref diss, g + 4);
                    for (int m = 0; m < Cell.Vars; m++)
                    {
                        ref double um = ref Unsafe.Add(ref u, m * pts + p);
                        ref double rm = ref Unsafe.Add(ref r, m * pts + p);
                        rm = rm - Dssp * (d0 * Unsafe.Add(ref um, -2 * s) + d1 * Unsafe.Add(ref um, -s) + d2 * um
                                          + d3 * Unsafe.Add(ref um, s) + d4 * Unsafe.Add(ref um, 2 * s));
                    }
                }
            }
        }
    }

    /// <summary>The rhs times the inverse of the x factor's eigenvector matrix (NPB's txinvr).</summary>
    public static void ToEigenbasis(Cell c)
    {
        int pts = c.Points;
        ref double r = ref MemoryMarshal.GetArrayDataReference(c.Rhs);
        for (int k = c.Lo(2); k <= c.Hi(2); k++)
        {
            for (int j = c.Lo(1); j <= c.Hi(1); j++)
            {
                int p = c.Index(c.Lo(0), j, k);
                for (int i = c.Lo(0); i <= c.Hi(0); i++, p++)
                {
                    double ru1 = c.RhoI[p], uu = c.Us[p], vv = c.Vs[p], ww = c.Ws[p], ac = c.Speed[p];
                    double ainv = c.Ainv[p], ac2inv = ainv * ainv;
                    ref double x0 = ref Unsafe.Add(ref r, p), x1 = ref Unsafe.Add(ref r, pts + p), x2 = ref Unsafe.Add(ref r, 2 * pts + p);
                    ref double x3 = ref Unsafe.Add(ref r, 3 * pts + p), x4 = ref Unsafe.Add(ref r, 4 * pts + p);
                    double r1 = x0, r2 = x1, r3 = x2, r4 = x3, r5 = x4;
                    double t1 = C2 * ac2inv * (c.Qs[p] * r1 - uu * r2 - vv * r3 - ww * r4 + r5);
                    double t2 = Bt * ru1 * (uu * r1 - r2);
                    double t3 = Bt * ru1 * ac * t1;
                    x0 = r1 - t1;
                    x1 = -ru1 * (ww * r1 - r4);
                    x2 = ru1 * (vv * r1 - r3);
                    x3 = -t2 + t3;
                    x4 = t2 + t3;
                }
            }
        }
    }

    /// <summary>u += rhs at the interior points (NPB's add).</summary>
    public static void Add(Cell c)
    {
        int pts = c.Points;
        for (int m = 0; m < Cell.Vars; m++)
        {
            for (int k = c.Lo(2); k <= c.Hi(2); k++)
            {
                for (int j = c.Lo(1); j <= c.Hi(1); j++)
                {
                    int p = m * pts + c.Index(c.Lo(0), j, k), n = c.Hi(0) - c.Lo(0) + 1;
                    Span<double> u = c.U.AsSpan(p, n);
                    ReadOnlySpan<double> r = c.Rhs.AsSpan(p, n);
                    for (int i = 0; i < u.Length; i++)
                        u[i] += r[i];
                }
            }
        }
    }

    /// <summary>Adds Σ rhs² over the interior points, per variable, to <paramref name="sums"/>.</summary>
    public static void SumSquares(Cell c, Span<double> sums)
    {
        for (int m = 0; m < Cell.Vars; m++)
        {
            for (int k = c.Lo(2); k <= c.Hi(2); k++)
            {
                for (int j = c.Lo(1); j <= c.Hi(1); j++)
                {
                    ReadOnlySpan<double> r = c.Rhs.AsSpan(m * c.Points + c.Index(c.Lo(0), j, k), c.Hi(0) - c.Lo(0) + 1);
                    foreach (double x in r)
                        sums[m] += x * x;
                }
            }
        }
    }

    /// <summary>Adds Σ (u − exact)² over every owned point, per variable, to <paramref name="sums"/>.</summary>
    public static void SumErrorSquares(Model model, Cell c, Span<double> sums)
    {
        Span<double> e = stackalloc double[Cell.Vars];
        for (int k = 0; k < c.Size[2]; k++)
        {
            for (int j = 0; j < c.Size[1]; j++)
            {
                for (int i = 0; i < c.Size[0]; i++)
                {
                    model.Exact(i + c.Low[0], j + c.Low[1], k + c.Low[2], e);
                    int p = c.Index(i, j, k);
                    for (int m = 0; m < Cell.Vars; m++)
                    {
                        double d = c.U[m * c.Points + p] - e[m];
                        sums[m] += d * d;
                    }
                }
            }
        }
    }
}
