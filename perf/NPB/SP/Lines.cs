using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using static Npb.SP.Model;

namespace Npb.SP;

/// <summary>
/// The scalar pentadiagonal solves of one axis on one cell (NPB's lhsx/y/z and the Thomas
/// algorithm of x/y/z_solve), written once for the three axes. The lines along axis a are
/// indexed by the two other axes, "lanes" q (the faster in memory) and o; loops run o, then
/// the row along the line, then q, so the inner loop walks a row of lanes.
/// Factor 0 (coefficients 0..4) carries variables 0..2, factor 1 (u + c) variable 3, factor 2
/// (u − c) variable 4. Rows −2 and −1 along the axis are ghost rows: before the elimination of
/// a cell that is not the first on its line, they receive the previous cell's last two
/// eliminated rows (diagonal 1, sub-diagonals 0), so the elimination simply starts at −2;
/// rows Size and Size + 1 likewise receive the next cell's first two solved values before the
/// back substitution.
/// </summary>
internal readonly struct Lines
{
    private readonly Cell _c;
    private readonly int _a, _s, _n, _qs, _os, _qlo, _qhi, _olo, _ohi, _pts;

    public Lines(Cell c, int a)
    {
        _c = c;
        _a = a;
        _s = c.Stride[a];
        _n = c.Size[a];
        int q = a == 0 ? 1 : 0, o = a == 2 ? 1 : 2;
        _qs = c.Stride[q];
        _os = c.Stride[o];
        (_qlo, _qhi, _olo, _ohi) = (c.Lo(q), c.Hi(q), c.Lo(o), c.Hi(o));
        _pts = c.Points;
    }

    /// <summary>Lines through the cell's interior along the axis.</summary>
    public int Count => (_qhi - _qlo + 1) * (_ohi - _olo + 1);

    /// <summary>Doubles of the forward message (two rows of six coefficients and five values per line).</summary>
    public int ForwardCount => 22 * Count;

    /// <summary>Doubles of the backward message (two rows of five values per line).</summary>
    public int BackwardCount => 10 * Count;

    private int Row(int row, int o) => _c.Origin + row * _s + o * _os;

    /// <summary>
    /// The three factors' coefficients at the interior rows: the second-order implicit terms
    /// (u ± c shifts the sub- and super-diagonal by dt/(2h)·c) plus the fourth-difference
    /// dissipation. Boundary rows keep the identity.
    /// </summary>
    public void Build(Model model)
    {
        AxisConstants ax = model.Axes[_a];
        Cell c = _c;
        int pts = _pts, s = _s;
        ref double lhs = ref MemoryMarshal.GetArrayDataReference(c.Lhs);
        ref double vel = ref MemoryMarshal.GetArrayDataReference(c.Velocity(_a));
        ref double rho = ref MemoryMarshal.GetArrayDataReference(c.RhoI);
        ref double speed = ref MemoryMarshal.GetArrayDataReference(c.Speed);
        double d = ax.D, dtt1 = ax.Dtt1, dtt2 = ax.Dtt2, c2dtt1 = ax.C2Dtt1, dtdssp = model.Dt * Dssp;
        for (int o = _olo; o <= _ohi; o++)
        {
            for (int row = c.Lo(_a); row <= c.Hi(_a); row++)
            {
                ReadOnlySpan<double> diss = model.Dissipation.AsSpan(5 * (row + c.Low[_a]), 5);
                double e0 = dtdssp * diss[0], e1 = dtdssp * diss[1], e2 = dtdssp * diss[2], e3 = dtdssp * diss[3], e4 = dtdssp * diss[4];
                int p = Row(row, o) + _qlo * _qs;
                for (int q = _qlo; q <= _qhi; q++, p += _qs)
                {
                    double rm = Viscous(d, C3C4 * Unsafe.Add(ref rho, p - s));
                    double rc = Viscous(d, C3C4 * Unsafe.Add(ref rho, p));
                    double rp = Viscous(d, C3C4 * Unsafe.Add(ref rho, p + s));
                    double l1 = -dtt2 * Unsafe.Add(ref vel, p - s) - dtt1 * rm + e1;
                    double l2 = 1.0 + c2dtt1 * rc + e2;
                    double l3 = dtt2 * Unsafe.Add(ref vel, p + s) - dtt1 * rp + e3;
                    double sm = dtt2 * Unsafe.Add(ref speed, p - s), sp = dtt2 * Unsafe.Add(ref speed, p + s);
                    ref double f = ref Unsafe.Add(ref lhs, p);
                    Unsafe.Add(ref f, 0 * pts) = e0;
                    Unsafe.Add(ref f, 1 * pts) = l1;
                    Unsafe.Add(ref f, 2 * pts) = l2;
                    Unsafe.Add(ref f, 3 * pts) = l3;
                    Unsafe.Add(ref f, 4 * pts) = e4;
                    Unsafe.Add(ref f, 5 * pts) = e0;
                    Unsafe.Add(ref f, 6 * pts) = l1 - sm;
                    Unsafe.Add(ref f, 7 * pts) = l2;
                    Unsafe.Add(ref f, 8 * pts) = l3 + sp;
                    Unsafe.Add(ref f, 9 * pts) = e4;
                    Unsafe.Add(ref f, 10 * pts) = e0;
                    Unsafe.Add(ref f, 11 * pts) = l1 + sm;
                    Unsafe.Add(ref f, 12 * pts) = l2;
                    Unsafe.Add(ref f, 13 * pts) = l3 - sp;
                    Unsafe.Add(ref f, 14 * pts) = e4;
                }
            }
        }
    }

    /// <summary>The largest of the viscous and dissipative eigenvalue bounds at a point (ρ⁻¹ scaled by c3c4).</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static double Viscous(double d, double ru1) =>
        Math.Max(Math.Max(d + Con43 * ru1, d + C1C5 * ru1), Math.Max(d + ru1, d));

    /// <summary>Forward elimination from row <paramref name="first"/> (0, or −2 after <see cref="UnpackForward"/>) to the last row, which ends scaled to diagonal 1.</summary>
    public void Forward(int first)
    {
        ref double lhs = ref MemoryMarshal.GetArrayDataReference(_c.Lhs);
        ref double rhs = ref MemoryMarshal.GetArrayDataReference(_c.Rhs);
        ForwardFactor(ref lhs, ref rhs, 3, first);
        ForwardFactor(ref Unsafe.Add(ref lhs, Cell.Band * _pts), ref Unsafe.Add(ref rhs, 3 * _pts), 1, first);
        ForwardFactor(ref Unsafe.Add(ref lhs, 2 * Cell.Band * _pts), ref Unsafe.Add(ref rhs, 4 * _pts), 1, first);
    }

    private void ForwardFactor(ref double l, ref double r, int vars, int first)
    {
        int pts = _pts, s = _s, last = _n - 1;
        for (int o = _olo; o <= _ohi; o++)
        {
            for (int row = first; row <= last - 1; row++)
            {
                int p = Row(row, o) + _qlo * _qs;
                bool full = row < last - 1;
                for (int q = _qlo; q <= _qhi; q++, p += _qs)
                {
                    int p1 = p + s;
                    double fac1 = 1.0 / Unsafe.Add(ref l, 2 * pts + p);
                    ref double l3 = ref Unsafe.Add(ref l, 3 * pts + p), l4 = ref Unsafe.Add(ref l, 4 * pts + p);
                    l3 = fac1 * l3;
                    l4 = fac1 * l4;
                    double a1 = Unsafe.Add(ref l, pts + p1);
                    Unsafe.Add(ref l, 2 * pts + p1) -= a1 * l3;
                    Unsafe.Add(ref l, 3 * pts + p1) -= a1 * l4;
                    for (int m = 0; m < vars; m++)
                    {
                        ref double x = ref Unsafe.Add(ref r, m * pts + p);
                        x = fac1 * x;
                        Unsafe.Add(ref r, m * pts + p1) -= a1 * x;
                    }
                    if (full)
                    {
                        int p2 = p1 + s;
                        double a0 = Unsafe.Add(ref l, p2);
                        Unsafe.Add(ref l, pts + p2) -= a0 * l3;
                        Unsafe.Add(ref l, 2 * pts + p2) -= a0 * l4;
                        for (int m = 0; m < vars; m++)
                            Unsafe.Add(ref r, m * pts + p2) -= a0 * Unsafe.Add(ref r, m * pts + p);
                    }
                    else
                    {
                        double fac2 = 1.0 / Unsafe.Add(ref l, 2 * pts + p1);
                        Unsafe.Add(ref l, 3 * pts + p1) *= fac2;
                        Unsafe.Add(ref l, 4 * pts + p1) *= fac2;
                        for (int m = 0; m < vars; m++)
                            Unsafe.Add(ref r, m * pts + p1) *= fac2;
                    }
                }
            }
        }
    }

    /// <summary>Back substitution from row <paramref name="last"/> down to row 0 (rows above it must hold the solution).</summary>
    public void Backward(int last)
    {
        ref double lhs = ref MemoryMarshal.GetArrayDataReference(_c.Lhs);
        ref double rhs = ref MemoryMarshal.GetArrayDataReference(_c.Rhs);
        int pts = _pts, s = _s;
        for (int m = 0; m < Cell.Vars; m++)
        {
            ref double l = ref Unsafe.Add(ref lhs, (m < 3 ? 0 : m - 2) * Cell.Band * pts);
            ref double r = ref Unsafe.Add(ref rhs, m * pts);
            for (int o = _olo; o <= _ohi; o++)
            {
                for (int row = last; row >= 0; row--)
                {
                    int p = Row(row, o) + _qlo * _qs;
                    for (int q = _qlo; q <= _qhi; q++, p += _qs)
                    {
                        ref double x = ref Unsafe.Add(ref r, p);
                        x = x - Unsafe.Add(ref l, 3 * pts + p) * Unsafe.Add(ref r, p + s)
                              - Unsafe.Add(ref l, 4 * pts + p) * Unsafe.Add(ref r, p + 2 * s);
                    }
                }
            }
        }
    }

    /// <summary>Packs the last two eliminated rows of every line: per row, the super-diagonals of the three factors and the five values.</summary>
    public void PackForward(Span<double> buffer) => CopyForward(buffer, _n - 2, pack: true);

    /// <summary>Stores the previous cell's last two rows into the ghost rows −2 and −1.</summary>
    public void UnpackForward(Span<double> buffer) => CopyForward(buffer, -2, pack: false);

    private void CopyForward(Span<double> buffer, int firstRow, bool pack)
    {
        double[] lhs = _c.Lhs, rhs = _c.Rhs;
        int pts = _pts, at = 0;
        for (int o = _olo; o <= _ohi; o++)
        {
            for (int q = _qlo; q <= _qhi; q++)
            {
                for (int t = 0; t < 2; t++)
                {
                    int p = Row(firstRow + t, o) + q * _qs;
                    for (int f = 0; f < 3; f++)
                    {
                        Move(lhs, (f * Cell.Band + 3) * pts + p, buffer, at++, pack);
                        Move(lhs, (f * Cell.Band + 4) * pts + p, buffer, at++, pack);
                    }
                    for (int m = 0; m < Cell.Vars; m++)
                        Move(rhs, m * pts + p, buffer, at++, pack);
                }
            }
        }
    }

    /// <summary>Packs the solved values of rows 0 and 1 of every line.</summary>
    public void PackBackward(Span<double> buffer) => CopyBackward(buffer, 0, pack: true);

    /// <summary>Stores the next cell's first two solved rows into the ghost rows Size and Size + 1.</summary>
    public void UnpackBackward(Span<double> buffer) => CopyBackward(buffer, _n, pack: false);

    private void CopyBackward(Span<double> buffer, int firstRow, bool pack)
    {
        double[] rhs = _c.Rhs;
        int pts = _pts, at = 0;
        for (int o = _olo; o <= _ohi; o++)
        {
            for (int q = _qlo; q <= _qhi; q++)
            {
                for (int t = 0; t < 2; t++)
                {
                    int p = Row(firstRow + t, o) + q * _qs;
                    for (int m = 0; m < Cell.Vars; m++)
                        Move(rhs, m * pts + p, buffer, at++, pack);
                }
            }
        }
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static void Move(double[] field, int index, Span<double> buffer, int at, bool pack)
    {
        if (pack)
            buffer[at] = field[index];
        else
            field[index] = buffer[at];
    }
}
