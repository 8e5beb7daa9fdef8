using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using static Npb.LU.Flow;
using static Npb.Common.Gas;

namespace Npb.LU;

/// <summary>The difference coefficients of one axis: 1/h², 1/(2h), 1/h and the second-difference dissipation.</summary>
internal readonly struct Axis(int points, double dissipation)
{
    public readonly double H = 1.0 / (points - 1);
    public double T1 => 1.0 / (H * H);
    public double T2 => 1.0 / (2.0 * H);
    public double T3 => 1.0 / H;
    public readonly double Dissipation = dissipation;
}

/// <summary>
/// The discrete steady-state operator of LU (NPB's rhs and erhs): for each axis, central
/// differences of the inviscid flux, of the viscous flux and a second difference, then
/// fourth-difference dissipation with one-sided stencils next to the boundary. Added to a
/// field over the interior points, a set of lines along one axis at a time, so each axis is the same
/// code with a different stride; the two fluxes of the lines are kept in small buffers.
/// </summary>
internal sealed class Residual
{
    private const double R43 = 4.0 / 3.0;

    private readonly Grid _g;
    private readonly Axis _x, _y, _z;
    private readonly double[] _flux, _viscous, _velocity;

    public Residual(Grid g)
    {
        _g = g;
        _x = new Axis(g.Nx0, DissI);
        _y = new Axis(g.Ny0, DissJ);
        _z = new Axis(g.Nz0, DissK);
        int positions = Math.Max(Math.Max(g.Nx, g.Ny), g.Nz) + 4;
        _flux = new double[Grid.Vars * positions * g.Nx];
        _viscous = new double[Grid.Vars * positions * g.Nx];
        _velocity = new double[Grid.Vars * positions * g.Nx];
    }

    /// <summary>
    /// <paramref name="dst"/> += R(<paramref name="src"/>) at the interior points; the ghost
    /// layers of <paramref name="src"/> must hold the neighbours' values. Lines along j and k
    /// are taken a row of i at a time, so the innermost loop runs over contiguous memory.
    /// </summary>
    public void Add(double[] src, double[] dst)
    {
        Grid g = _g;
        ref double u = ref MemoryMarshal.GetArrayDataReference(src);
        ref double r = ref MemoryMarshal.GetArrayDataReference(dst);
        bool iLowWall = g.ILow < 0, iHighWall = g.IHigh < 0, jLowWall = g.JLow < 0, jHighWall = g.JHigh < 0;
        int row = g.Iend - g.Ist + 1;
        for (int k = 2; k <= g.Nz - 1; k++)
        {
            for (int j = g.Jst; j <= g.Jend; j++)
                Lines(ref u, ref r, g.Index(0, j, k), Grid.Vars, 1, 1, g.Ist, g.Iend, iLowWall, iHighWall, _x);
        }
        for (int k = 2; k <= g.Nz - 1; k++)
            Lines(ref u, ref r, g.Index(g.Ist, 0, k), g.StrideJ, row, 2, g.Jst, g.Jend, jLowWall, jHighWall, _y);
        for (int j = g.Jst; j <= g.Jend; j++)
            Lines(ref u, ref r, g.Index(g.Ist, j, 1) - g.StrideK, g.StrideK, row, 3, 2, g.Nz - 1, true, true, _z);
    }

    /// <summary>
    /// <paramref name="count"/> neighbouring parallel lines along one axis: points p = lo..hi
    /// (1-based along the axis) of line q at elements origin + p·stride + 5q;
    /// <paramref name="n"/> is the momentum component along the axis (1, 2, 3). Reads src at
    /// p = lo−2..hi+2; a wall next to lo (hi) means the global boundary is lo−1 (hi+1).
    /// </summary>
    private void Lines(ref double u, ref double r, int origin, int stride, int count, int n, int lo, int hi,
        bool lowWall, bool highWall, in Axis a)
    {
        ref double f = ref MemoryMarshal.GetArrayDataReference(_flux);
        ref double gv = ref MemoryMarshal.GetArrayDataReference(_viscous);
        ref double vel = ref MemoryMarshal.GetArrayDataReference(_velocity);
        double t1 = a.T1, t2 = a.T2, t3 = a.T3, d = a.Dissipation;
        int width = Grid.Vars * count; // doubles of one position of all lines, in the buffers

        // Inviscid flux along the axis at lo-1..hi+1, and the velocities and specific energy
        // there (u_m/ρ, kept for the viscous flux).
        for (int p = lo - 1; p <= hi + 1; p++)
        {
            int o = origin + p * stride;
            ref double fp = ref Unsafe.Add(ref f, width * p);
            ref double vp = ref Unsafe.Add(ref vel, width * p);
            for (int q = 0; q < width; q += Grid.Vars)
            {
                double u0 = At(ref u, o + q), u1 = At(ref u, o + q + 1), u2 = At(ref u, o + q + 2), u3 = At(ref u, o + q + 3), u4 = At(ref u, o + q + 4);
                double inv = 1.0 / u0;
                double un = n == 1 ? u1 : n == 2 ? u2 : u3;
                double vn = un * inv;
                double qq = 0.5 * (u1 * u1 + u2 * u2 + u3 * u3) * inv;
                double pressure = C2 * (u4 - qq);
                At(ref fp, q) = un;
                At(ref fp, q + 1) = u1 * vn + (n == 1 ? pressure : 0.0);
                At(ref fp, q + 2) = u2 * vn + (n == 2 ? pressure : 0.0);
                At(ref fp, q + 3) = u3 * vn + (n == 3 ? pressure : 0.0);
                At(ref fp, q + 4) = (C1 * u4 - C2 * qq) * vn;
                At(ref vp, q + 1) = u1 * inv;
                At(ref vp, q + 2) = u2 * inv;
                At(ref vp, q + 3) = u3 * inv;
                At(ref vp, q + 4) = u4 * inv;
            }
        }
        for (int p = lo; p <= hi; p++)
        {
            int o = origin + p * stride;
            ref double fm = ref Unsafe.Add(ref f, width * (p - 1));
            ref double fq = ref Unsafe.Add(ref f, width * (p + 1));
            for (int q = 0; q < width; q++)
                At(ref r, o + q) -= t2 * (At(ref fq, q) - At(ref fm, q));
        }

        // Viscous flux between p-1 and p at lo..hi+1.
        for (int p = lo; p <= hi + 1; p++)
        {
            ref double gp = ref Unsafe.Add(ref gv, width * p);
            ref double vp = ref Unsafe.Add(ref vel, width * p);
            ref double wp = ref Unsafe.Add(ref vel, width * (p - 1));
            for (int q = 0; q < width; q += Grid.Vars)
            {
                double v1 = At(ref vp, q + 1), v2 = At(ref vp, q + 2), v3 = At(ref vp, q + 3), v4 = At(ref vp, q + 4);
                double w1 = At(ref wp, q + 1), w2 = At(ref wp, q + 2), w3 = At(ref wp, q + 3), w4 = At(ref wp, q + 4);
                double vn = n == 1 ? v1 : n == 2 ? v2 : v3, wn = n == 1 ? w1 : n == 2 ? w2 : w3;
                At(ref gp, q + 1) = (n == 1 ? R43 : 1.0) * t3 * (v1 - w1);
                At(ref gp, q + 2) = (n == 2 ? R43 : 1.0) * t3 * (v2 - w2);
                At(ref gp, q + 3) = (n == 3 ? R43 : 1.0) * t3 * (v3 - w3);
                At(ref gp, q + 4) = 0.5 * (1.0 - C1 * C5) * t3 * ((v1 * v1 + v2 * v2 + v3 * v3) - (w1 * w1 + w2 * w2 + w3 * w3))
                    + (1.0 / 6.0) * t3 * (vn * vn - wn * wn)
                    + C1 * C5 * t3 * (v4 - w4);
            }
        }
        double viscous = t3 * C3 * C4, second = d * t1;
        for (int p = lo; p <= hi; p++)
        {
            int o = origin + p * stride;
            ref double gp = ref Unsafe.Add(ref gv, width * p);
            ref double gq = ref Unsafe.Add(ref gv, width * (p + 1));
            for (int q = 0; q < width; q += Grid.Vars)
            {
                int x = o + q;
                At(ref r, x) += second * (At(ref u, x - stride) - 2.0 * At(ref u, x) + At(ref u, x + stride));
                for (int m = 1; m < Grid.Vars; m++)
                {
                    At(ref r, x + m) += viscous * (At(ref gq, q + m) - At(ref gp, q + m))
                        + second * (At(ref u, x - stride + m) - 2.0 * At(ref u, x + m) + At(ref u, x + stride + m));
                }
            }
        }

        // Fourth-difference dissipation, one-sided at a wall.
        int s = stride;
        if (lowWall)
        {
            int o = origin + lo * s;
            for (int x = o; x < o + width; x++)
            {
                At(ref r, x) -= Dssp * (5.0 * At(ref u, x) - 4.0 * At(ref u, x + s) + At(ref u, x + 2 * s));
                At(ref r, x + s) -= Dssp * (-4.0 * At(ref u, x) + 6.0 * At(ref u, x + s)
                    - 4.0 * At(ref u, x + 2 * s) + At(ref u, x + 3 * s));
            }
        }
        int first = lowWall ? lo + 2 : lo, last = highWall ? hi - 2 : hi;
        for (int p = first; p <= last; p++)
        {
            int o = origin + p * s;
            for (int x = o; x < o + width; x++)
            {
                At(ref r, x) -= Dssp * (At(ref u, x - 2 * s) - 4.0 * At(ref u, x - s) + 6.0 * At(ref u, x)
                    - 4.0 * At(ref u, x + s) + At(ref u, x + 2 * s));
            }
        }
        if (highWall)
        {
            int o = origin + hi * s;
            for (int x = o; x < o + width; x++)
            {
                At(ref r, x - s) -= Dssp * (At(ref u, x - 3 * s) - 4.0 * At(ref u, x - 2 * s)
                    + 6.0 * At(ref u, x - s) - 4.0 * At(ref u, x));
                At(ref r, x) -= Dssp * (At(ref u, x - 2 * s) - 4.0 * At(ref u, x - s) + 5.0 * At(ref u, x));
            }
        }
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static ref double At(ref double field, int index) => ref Unsafe.Add(ref field, index);
}
