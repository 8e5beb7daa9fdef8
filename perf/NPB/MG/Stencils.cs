using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Runtime.Intrinsics;
using System.Runtime.Intrinsics.X86;
using Npb.Common;

namespace Npb.MG;

/// <summary>
/// The four 27-point operators of MG (NAS report RNR-94-007, kernel MG) on one rank's block, interior points
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
    /// corners. The weights halve with each step in x, so per fine row the column sums
    /// P[i] = f[i]/2 + ring[i]/4 + diag[i]/8 are formed with vectors and s[j] = P[2j] + (P[2j-1] + P[2j+1])/2.
    /// </summary>
    public void Restrict(double[] fine, Grid gf, double[] coarse, Grid gc)
    {
        _timers.Start((int)MgTimer.Restrict);
        int m1 = gf.M1, m2 = gf.M2, plane = m1 * m2;
        int c1 = gc.M1, c2 = gc.M2, c3 = gc.M3;
        CheckRow(fine.Length, m1 * m2 * (2 * (c3 - 2) + 2));
        CheckRow(m1, 2 * (c1 - 2) + 2);
        ref double f0 = ref MemoryMarshal.GetArrayDataReference(fine);
        ref double sums = ref MemoryMarshal.GetArrayDataReference(_ring);
        Vector256<double> half = Vector256.Create(0.5), quarter = Vector256.Create(0.25), eighth = Vector256.Create(0.125);
        Span<double> s = coarse;
        for (int j3 = 1; j3 < c3 - 1; j3++)
        {
            for (int j2 = 1; j2 < c2 - 1; j2++)
            {
                nuint c = (nuint)(m1 * (2 * j2 + m2 * 2 * j3));
                nuint sr = c - (nuint)m1, nr = c + (nuint)m1, b = c - (nuint)plane, t = c + (nuint)plane;
                nuint sb = sr - (nuint)plane, st = sr + (nuint)plane, nb = nr - (nuint)plane, nt = nr + (nuint)plane;
                nuint i = 0, end = (nuint)m1;
                for (; i + 4 <= end; i += 4)
                {
                    Vector256<double> ring = Vector256.LoadUnsafe(ref f0, sr + i) + Vector256.LoadUnsafe(ref f0, nr + i)
                        + Vector256.LoadUnsafe(ref f0, b + i) + Vector256.LoadUnsafe(ref f0, t + i);
                    Vector256<double> diag = Vector256.LoadUnsafe(ref f0, sb + i) + Vector256.LoadUnsafe(ref f0, nb + i)
                        + Vector256.LoadUnsafe(ref f0, st + i) + Vector256.LoadUnsafe(ref f0, nt + i);
                    (half * Vector256.LoadUnsafe(ref f0, c + i) + quarter * ring + eighth * diag).StoreUnsafe(ref sums, i);
                }
                for (; i < end; i++)
                {
                    double ring = Unsafe.Add(ref f0, sr + i) + Unsafe.Add(ref f0, nr + i) + Unsafe.Add(ref f0, b + i) + Unsafe.Add(ref f0, t + i);
                    double diag = Unsafe.Add(ref f0, sb + i) + Unsafe.Add(ref f0, nb + i) + Unsafe.Add(ref f0, st + i) + Unsafe.Add(ref f0, nt + i);
                    Unsafe.Add(ref sums, i) = 0.5 * Unsafe.Add(ref f0, c + i) + 0.25 * ring + 0.125 * diag;
                }
                Span<double> row = s.Slice(c1 * (j2 + c2 * j3), c1);
                for (int j1 = 1; j1 < row.Length - 1; j1++)
                {
                    nuint at = (nuint)(2 * j1);
                    row[j1] = Unsafe.Add(ref sums, at) + 0.5 * (Unsafe.Add(ref sums, at - 1) + Unsafe.Add(ref sums, at + 1));
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
                nuint j = 0;
                for (; j + 4 <= (nuint)mm1; j += 4)
                {
                    Vector256<double> here = Vector256.LoadUnsafe(ref z0, c + j);
                    Vector256<double> y = here + Vector256.LoadUnsafe(ref z0, cy + j);
                    Vector256<double> up = Vector256.LoadUnsafe(ref z0, cz + j);
                    y.StoreUnsafe(ref zy, j);
                    (here + up).StoreUnsafe(ref zz, j);
                    (y + up + Vector256.LoadUnsafe(ref z0, cyz + j)).StoreUnsafe(ref zyz, j);
                }
                for (; j < (nuint)mm1; j++)
                {
                    double here = Unsafe.Add(ref z0, c + j);
                    double y = here + Unsafe.Add(ref z0, cy + j);
                    Unsafe.Add(ref zy, j) = y;
                    Unsafe.Add(ref zz, j) = here + Unsafe.Add(ref z0, cz + j);
                    Unsafe.Add(ref zyz, j) = y + Unsafe.Add(ref z0, cz + j) + Unsafe.Add(ref z0, cyz + j);
                }
                nuint f00 = (nuint)(m1 * (2 * j2 + m2 * 2 * j3));
                nuint f10 = f00 + (nuint)m1, f01 = f00 + (nuint)(m1 * m2), f11 = f01 + (nuint)m1;
                nuint count = (nuint)(mm1 - 1);
                Spread(ref Unsafe.Add(ref u0, f00), ref Unsafe.Add(ref z0, c), 1.0, 0.5, count);
                Spread(ref Unsafe.Add(ref u0, f10), ref zy, 0.5, 0.25, count);
                Spread(ref Unsafe.Add(ref u0, f01), ref zz, 0.5, 0.25, count);
                Spread(ref Unsafe.Add(ref u0, f11), ref zyz, 0.25, 0.125, count);
            }
        }
        _timers.Stop((int)MgTimer.Interpolate);
    }

    private double[]? _yz;

    /// <summary>
    /// One fine row of the prolongation: u[2j] += even·a[j], u[2j+1] += odd·(a[j] + a[j+1])
    /// for j &lt; count (a has count + 1 entries). With AVX the even and odd results of four j
    /// are interleaved in registers and added to eight consecutive points.
    /// </summary>
    private static void Spread(ref double u, ref double a, double even, double odd, nuint count)
    {
        nuint j = 0;
        if (Avx.IsSupported)
        {
            Vector256<double> we = Vector256.Create(even), wo = Vector256.Create(odd);
            for (; j + 4 <= count; j += 4)
            {
                Vector256<double> here = Vector256.LoadUnsafe(ref a, j);
                Vector256<double> e = we * here, o = wo * (here + Vector256.LoadUnsafe(ref a, j + 1));
                Vector256<double> low = Avx.UnpackLow(e, o), high = Avx.UnpackHigh(e, o);   // e0 o0 e2 o2 | e1 o1 e3 o3
                (Vector256.LoadUnsafe(ref u, 2 * j) + Avx.Permute2x128(low, high, 0x20)).StoreUnsafe(ref u, 2 * j);
                (Vector256.LoadUnsafe(ref u, 2 * j + 4) + Avx.Permute2x128(low, high, 0x31)).StoreUnsafe(ref u, 2 * j + 4);
            }
        }
        for (; j < count; j++)
        {
            double here = Unsafe.Add(ref a, j);
            Unsafe.Add(ref u, 2 * j) += even * here;
            Unsafe.Add(ref u, 2 * j + 1) += odd * (here + Unsafe.Add(ref a, j + 1));
        }
    }

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
