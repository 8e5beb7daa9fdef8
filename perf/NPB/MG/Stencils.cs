using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Runtime.Intrinsics;
using Npb.Common;

namespace Npb.MG;

/// <summary>
/// The four 27-point operators of MG (RNR-94-007 §2.4) on one rank's block, interior points
/// only (the ghosts are the caller's business). Each weighs a point's neighbours by their
/// distance class: the centre, the 6 face, 12 edge and 8 corner neighbours. The sums over the
/// y-z ring of a row are formed once per row into scratch rows (faces: the 4 points one step
/// off in y or z; edges: the 4 points one step off in both), and the x neighbours of a point
/// are the same sums shifted by one, so each point costs a few vector adds. Rows are walked
/// with 256-bit vectors and a scalar tail.
/// </summary>
internal sealed class Stencils
{
    private readonly double[] _ring, _diag;
    private readonly Timers _timers;

    public Stencils(int maxRow, Timers timers)
    {
        _timers = timers;
        _ring = new double[maxRow];
        _diag = new double[maxRow];
    }

    /// <summary>
    /// Fills the scratch rows for row (i2, i3) of <paramref name="u"/>: ring[i1] = the 4 face
    /// neighbours in y and z, diag[i1] = the 4 points off in both y and z, for every i1 of the row.
    /// </summary>
    private void RingSums(double[] u, int m1, int m2, int i2, int i3)
    {
        int plane = m1 * m2;
        int c = m1 * (i2 + m2 * i3);
        ref double u0 = ref MemoryMarshal.GetArrayDataReference(u);
        ref double ring = ref MemoryMarshal.GetArrayDataReference(_ring);
        ref double diag = ref MemoryMarshal.GetArrayDataReference(_diag);
        nuint s = (nuint)(c - m1), n = (nuint)(c + m1), b = (nuint)(c - plane), t = (nuint)(c + plane);
        nuint sb = s - (nuint)plane, st = s + (nuint)plane, nb = n - (nuint)plane, nt = n + (nuint)plane;
        CheckRow(u.Length, c + plane + m1 + m1);
        nuint i = 0, end = (nuint)m1;
        for (; i + 4 <= end; i += 4)
        {
            (Vector256.LoadUnsafe(ref u0, s + i) + Vector256.LoadUnsafe(ref u0, n + i)
                + Vector256.LoadUnsafe(ref u0, b + i) + Vector256.LoadUnsafe(ref u0, t + i)).StoreUnsafe(ref ring, i);
            (Vector256.LoadUnsafe(ref u0, sb + i) + Vector256.LoadUnsafe(ref u0, nb + i)
                + Vector256.LoadUnsafe(ref u0, st + i) + Vector256.LoadUnsafe(ref u0, nt + i)).StoreUnsafe(ref diag, i);
        }
        for (; i < end; i++)
        {
            Unsafe.Add(ref ring, i) = Unsafe.Add(ref u0, s + i) + Unsafe.Add(ref u0, n + i) + Unsafe.Add(ref u0, b + i) + Unsafe.Add(ref u0, t + i);
            Unsafe.Add(ref diag, i) = Unsafe.Add(ref u0, sb + i) + Unsafe.Add(ref u0, nb + i) + Unsafe.Add(ref u0, st + i) + Unsafe.Add(ref u0, nt + i);
        }
    }

    /// <summary>Guards the unchecked row arithmetic: the last point a row touches must lie in the array.</summary>
    private static void CheckRow(int length, int lastExclusive)
    {
        if ((uint)lastExclusive > (uint)length)
            ThrowOutside();
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static void ThrowOutside() => throw new IndexOutOfRangeException("MG: a stencil row reaches outside its grid.");

    /// <summary>
    /// The residual r = v - A·u with A's weights a0 (centre), a2 (edges), a3 (corners); A has
    /// no face term (a1 = 0). <paramref name="r"/> may be <paramref name="v"/>.
    /// </summary>
    public void Residual(double[] u, double[] v, double[] r, Grid g, double a0, double a2, double a3)
    {
        _timers.Start((int)MgTimer.Residual);
        int m1 = g.M1, m2 = g.M2, m3 = g.M3;
        CheckRow(v.Length, u.Length);
        CheckRow(r.Length, u.Length);
        ref double u0 = ref MemoryMarshal.GetArrayDataReference(u);
        ref double v0 = ref MemoryMarshal.GetArrayDataReference(v);
        ref double r0 = ref MemoryMarshal.GetArrayDataReference(r);
        ref double ring = ref MemoryMarshal.GetArrayDataReference(_ring);
        ref double diag = ref MemoryMarshal.GetArrayDataReference(_diag);
        Vector256<double> va0 = Vector256.Create(a0), va2 = Vector256.Create(a2), va3 = Vector256.Create(a3);
        for (int i3 = 1; i3 < m3 - 1; i3++)
        {
            for (int i2 = 1; i2 < m2 - 1; i2++)
            {
                RingSums(u, m1, m2, i2, i3);
                nuint row = (nuint)(m1 * (i2 + m2 * i3));
                nuint i = 1, end = (nuint)(m1 - 1);
                for (; i + 4 <= end; i += 4)
                {
                    Vector256<double> edges = Vector256.LoadUnsafe(ref diag, i)
                        + Vector256.LoadUnsafe(ref ring, i - 1) + Vector256.LoadUnsafe(ref ring, i + 1);
                    Vector256<double> corners = Vector256.LoadUnsafe(ref diag, i - 1) + Vector256.LoadUnsafe(ref diag, i + 1);
                    (Vector256.LoadUnsafe(ref v0, row + i) - va0 * Vector256.LoadUnsafe(ref u0, row + i)
                        - va2 * edges - va3 * corners).StoreUnsafe(ref r0, row + i);
                }
                for (; i < end; i++)
                {
                    double edges = Unsafe.Add(ref diag, i) + Unsafe.Add(ref ring, i - 1) + Unsafe.Add(ref ring, i + 1);
                    double corners = Unsafe.Add(ref diag, i - 1) + Unsafe.Add(ref diag, i + 1);
                    Unsafe.Add(ref r0, row + i) = Unsafe.Add(ref v0, row + i) - a0 * Unsafe.Add(ref u0, row + i) - a2 * edges - a3 * corners;
                }
            }
        }
        _timers.Stop((int)MgTimer.Residual);
    }

    /// <summary>
    /// The smoother u ← u + C·r with C's weights c0 (centre), c1 (faces), c2 (edges); C has
    /// no corner term (c3 = 0).
    /// </summary>
    public void Smooth(double[] r, double[] u, Grid g, double c0, double c1, double c2)
    {
        _timers.Start((int)MgTimer.Smooth);
        int m1 = g.M1, m2 = g.M2, m3 = g.M3;
        CheckRow(u.Length, r.Length);
        ref double u0 = ref MemoryMarshal.GetArrayDataReference(u);
        ref double r0 = ref MemoryMarshal.GetArrayDataReference(r);
        ref double ring = ref MemoryMarshal.GetArrayDataReference(_ring);
        ref double diag = ref MemoryMarshal.GetArrayDataReference(_diag);
        Vector256<double> vc0 = Vector256.Create(c0), vc1 = Vector256.Create(c1), vc2 = Vector256.Create(c2);
        for (int i3 = 1; i3 < m3 - 1; i3++)
        {
            for (int i2 = 1; i2 < m2 - 1; i2++)
            {
                RingSums(r, m1, m2, i2, i3);
                nuint row = (nuint)(m1 * (i2 + m2 * i3));
                nuint i = 1, end = (nuint)(m1 - 1);
                for (; i + 4 <= end; i += 4)
                {
                    Vector256<double> faces = Vector256.LoadUnsafe(ref r0, row + i - 1) + Vector256.LoadUnsafe(ref r0, row + i + 1)
                        + Vector256.LoadUnsafe(ref ring, i);
                    Vector256<double> edges = Vector256.LoadUnsafe(ref diag, i)
                        + Vector256.LoadUnsafe(ref ring, i - 1) + Vector256.LoadUnsafe(ref ring, i + 1);
                    (Vector256.LoadUnsafe(ref u0, row + i) + vc0 * Vector256.LoadUnsafe(ref r0, row + i)
                        + vc1 * faces + vc2 * edges).StoreUnsafe(ref u0, row + i);
                }
                for (; i < end; i++)
                {
                    double faces = Unsafe.Add(ref r0, row + i - 1) + Unsafe.Add(ref r0, row + i + 1) + Unsafe.Add(ref ring, i);
                    double edges = Unsafe.Add(ref diag, i) + Unsafe.Add(ref ring, i - 1) + Unsafe.Add(ref ring, i + 1);
                    Unsafe.Add(ref u0, row + i) += c0 * Unsafe.Add(ref r0, row + i) + c1 * faces + c2 * edges;
                }
            }
        }
        _timers.Stop((int)MgTimer.Smooth);
    }

    /// <summary>
    /// Restriction to the next coarser level (trilinear projection): coarse point j sits on
    /// fine point 2j, and takes 1/2 of it, 1/4 of its faces, 1/8 of its edges and 1/16 of its
    /// corners.
    /// </summary>
    public void Restrict(double[] fine, Grid gf, double[] coarse, Grid gc)
    {
        _timers.Start((int)MgTimer.Restrict);
        int m1 = gf.M1, m2 = gf.M2;
        int c1 = gc.M1, c2 = gc.M2, c3 = gc.M3;
        CheckRow(fine.Length, m1 * m2 * (2 * (c3 - 2) + 2));
        ref double f0 = ref MemoryMarshal.GetArrayDataReference(fine);
        ref double ring = ref MemoryMarshal.GetArrayDataReference(_ring);
        ref double diag = ref MemoryMarshal.GetArrayDataReference(_diag);
        Span<double> s = coarse;
        for (int j3 = 1; j3 < c3 - 1; j3++)
        {
            for (int j2 = 1; j2 < c2 - 1; j2++)
            {
                RingSums(fine, m1, m2, 2 * j2, 2 * j3);
                nuint row = (nuint)(m1 * (2 * j2 + m2 * 2 * j3));
                int crow = c1 * (j2 + c2 * j3);
                for (int j1 = 1; j1 < c1 - 1; j1++)
                {
                    nuint i = (nuint)(2 * j1);
                    double centre = Unsafe.Add(ref f0, row + i);
                    double faces = Unsafe.Add(ref f0, row + i - 1) + Unsafe.Add(ref f0, row + i + 1) + Unsafe.Add(ref ring, i);
                    double edges = Unsafe.Add(ref ring, i - 1) + Unsafe.Add(ref ring, i + 1) + Unsafe.Add(ref diag, i);
                    double corners = Unsafe.Add(ref diag, i - 1) + Unsafe.Add(ref diag, i + 1);
                    s[crow + j1] = 0.5 * centre + 0.25 * faces + 0.125 * edges + 0.0625 * corners;
                }
            }
        }
        _timers.Stop((int)MgTimer.Restrict);
    }

    /// <summary>
    /// Prolongation, added: u ← u + Q·z over the whole fine block, ghosts included (they come
    /// out equal to the neighbours' values, so no exchange follows). Fine point 2j + d,
    /// d ∈ {0, 1} per axis, takes the mean of the coarse points j .. j + d on each axis.
    /// </summary>
    public void Interpolate(double[] z, Grid gc, double[] u, Grid gf)
    {
        _timers.Start((int)MgTimer.Interpolate);
        int mm1 = gc.M1, mm2 = gc.M2, mm3 = gc.M3;
        int m1 = gf.M1, m2 = gf.M2;
        CheckRow(u.Length, m1 * m2 * (2 * (mm3 - 2) + 2));
        CheckRow(z.Length, mm1 * mm2 * mm3);
        ref double z0 = ref MemoryMarshal.GetArrayDataReference(z);
        ref double u0 = ref MemoryMarshal.GetArrayDataReference(u);
        ref double zy = ref MemoryMarshal.GetArrayDataReference(_ring);   // z(j) + z(j + y)
        ref double zz = ref MemoryMarshal.GetArrayDataReference(_diag);   // z(j) + z(j + z)
        double[] yzSums = _yz ??= new double[_ring.Length];
        ref double zyz = ref MemoryMarshal.GetArrayDataReference(yzSums); // the 4 of the y-z square
        for (int j3 = 0; j3 < mm3 - 1; j3++)
        {
            for (int j2 = 0; j2 < mm2 - 1; j2++)
            {
                nuint c = (nuint)(mm1 * (j2 + mm2 * j3));
                nuint cy = c + (nuint)mm1, cz = c + (nuint)(mm1 * mm2), cyz = cz + (nuint)mm1;
                for (nuint j = 0; j < (nuint)mm1; j++)
                {
                    double here = Unsafe.Add(ref z0, c + j);
                    double y = here + Unsafe.Add(ref z0, cy + j);
                    Unsafe.Add(ref zy, j) = y;
                    Unsafe.Add(ref zz, j) = here + Unsafe.Add(ref z0, cz + j);
                    Unsafe.Add(ref zyz, j) = y + Unsafe.Add(ref z0, cz + j) + Unsafe.Add(ref z0, cyz + j);
                }
                nuint f00 = (nuint)(m1 * (2 * j2 + m2 * 2 * j3));
                nuint f10 = f00 + (nuint)m1, f01 = f00 + (nuint)(m1 * m2), f11 = f01 + (nuint)m1;
                for (nuint j = 0; j < (nuint)(mm1 - 1); j++)
                {
                    nuint even = 2 * j, odd = even + 1;
                    double here = Unsafe.Add(ref z0, c + j);
                    Unsafe.Add(ref u0, f00 + even) += here;
                    Unsafe.Add(ref u0, f00 + odd) += 0.5 * (Unsafe.Add(ref z0, c + j + 1) + here);
                    Unsafe.Add(ref u0, f10 + even) += 0.5 * Unsafe.Add(ref zy, j);
                    Unsafe.Add(ref u0, f10 + odd) += 0.25 * (Unsafe.Add(ref zy, j) + Unsafe.Add(ref zy, j + 1));
                    Unsafe.Add(ref u0, f01 + even) += 0.5 * Unsafe.Add(ref zz, j);
                    Unsafe.Add(ref u0, f01 + odd) += 0.25 * (Unsafe.Add(ref zz, j) + Unsafe.Add(ref zz, j + 1));
                    Unsafe.Add(ref u0, f11 + even) += 0.25 * Unsafe.Add(ref zyz, j);
                    Unsafe.Add(ref u0, f11 + odd) += 0.125 * (Unsafe.Add(ref zyz, j) + Unsafe.Add(ref zyz, j + 1));
                }
            }
        }
        _timers.Stop((int)MgTimer.Interpolate);
    }

    private double[]? _yz;

    /// <summary>This rank's share of the L2 norm: the sum of squares over the interior.</summary>
    public static double SumOfSquares(double[] r, Grid g)
    {
        int m1 = g.M1, m2 = g.M2, m3 = g.M3;
        double s = 0;
        for (int i3 = 1; i3 < m3 - 1; i3++)
        {
            for (int i2 = 1; i2 < m2 - 1; i2++)
            {
                ReadOnlySpan<double> row = r.AsSpan(m1 * (i2 + m2 * i3) + 1, m1 - 2);
                for (int i = 0; i < row.Length; i++)
                {
                    s += row[i] * row[i];
                }
            }
        }
        return s;
    }
}
