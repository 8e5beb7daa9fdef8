using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using static Npb.SP.Model;
using static Npb.Common.Gas;

namespace Npb.SP;

/// <summary>
/// The scalar pentadiagonal solves of one axis on one cell (NPB's lhsx/y/z and the Thomas
/// algorithm of x/y/z_solve), written once for the three axes. The lines along axis a are
/// indexed by the two other axes, "lanes" q (the faster in memory) and o. For the y and z
/// factors the lanes lie side by side (q is i), so the loops run o, then the row along the
/// line, then q, a vector of lanes at a time; for the x factor each line runs its rows in turn.
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
    /// dissipation. Boundary rows keep the identity. Vectorized along i: across the lanes for
    /// the y and z factors, along the rows for the x factor.
    /// </summary>
    public void Build(Model model)
    {
        var k = new BuildTerms(model, _c, _a);
        Cell c = _c;
        int rlo = c.Lo(_a), rhi = c.Hi(_a);
        for (int o = _olo; o <= _ohi; o++)
        {
            if (_qs == 1)
            {
                // The y and z factors: a row of lanes at a time.
                for (int row = rlo; row <= rhi; row++)
                {
                    int g = row + c.Low[_a], p = Row(row, o) + _qlo, count = _qhi - _qlo + 1;
                    Runs.Line(ref k, p, g, count, along: false);
                }
            }
            else
            {
                // The x factor: a line at a time, its rows in groups.
                for (int q = _qlo; q <= _qhi; q++)
                {
                    int g = rlo + c.Low[_a], p = Row(rlo, o) + q * _qs, count = rhi - rlo + 1;
                    Runs.Line(ref k, p, g, count, along: true);
                }
            }
        }
    }

    /// <summary>What the coefficients of one axis are computed from.</summary>
    private ref struct BuildTerms : IPointKernel<BuildTerms>
    {
        public ref double Lhs, Vel, Rho, Speed, E0, E1, E2, E3, E4;
        public int Pts, S;
        public double D, Dtt1, Dtt2, C2Dtt1;

        public BuildTerms(Model model, Cell c, int a)
        {
            AxisConstants ax = model.Axes[a];
            Lhs = ref MemoryMarshal.GetArrayDataReference(c.Lhs);
            Vel = ref MemoryMarshal.GetArrayDataReference(c.Velocity(a));
            Rho = ref MemoryMarshal.GetArrayDataReference(c.RhoI);
            Speed = ref MemoryMarshal.GetArrayDataReference(c.Speed);
            E0 = ref MemoryMarshal.GetArrayDataReference(model.LhsStencil[0]);
            E1 = ref MemoryMarshal.GetArrayDataReference(model.LhsStencil[1]);
            E2 = ref MemoryMarshal.GetArrayDataReference(model.LhsStencil[2]);
            E3 = ref MemoryMarshal.GetArrayDataReference(model.LhsStencil[3]);
            E4 = ref MemoryMarshal.GetArrayDataReference(model.LhsStencil[4]);
            Pts = c.Points;
            S = c.Stride[a];
            (D, Dtt1, Dtt2, C2Dtt1) = (ax.D, ax.Dtt1, ax.Dtt2, ax.C2Dtt1);
        }

        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        public static void At<T>(scoped ref BuildTerms k, int p, int g, bool along) where T : struct, ILanes<T> =>
            BuildPoint<T>(ref k, p, g, along);
    }

    /// <summary>The fifteen coefficients of the row at point p (global index g along the axis); with <paramref name="along"/>, the group runs along the axis.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static void BuildPoint<T>(scoped ref BuildTerms k, int p, int g, bool along) where T : struct, ILanes<T>
    {
        int s = k.S, pts = k.Pts;
        T e0 = Coefficient<T>(ref k.E0, g, along), e1 = Coefficient<T>(ref k.E1, g, along), e2 = Coefficient<T>(ref k.E2, g, along);
        T e3 = Coefficient<T>(ref k.E3, g, along), e4 = Coefficient<T>(ref k.E4, g, along);
        T d = T.Splat(k.D), dtt1 = T.Splat(k.Dtt1), dtt2 = T.Splat(k.Dtt2);
        T rm = Viscous(d, T.Load(ref Unsafe.Add(ref k.Rho, p - s)));
        T rc = Viscous(d, T.Load(ref Unsafe.Add(ref k.Rho, p)));
        T rp = Viscous(d, T.Load(ref Unsafe.Add(ref k.Rho, p + s)));
        T l1 = T.Splat(-k.Dtt2) * T.Load(ref Unsafe.Add(ref k.Vel, p - s)) - dtt1 * rm + e1;
        T l2 = T.Splat(1.0) + T.Splat(k.C2Dtt1) * rc + e2;
        T l3 = dtt2 * T.Load(ref Unsafe.Add(ref k.Vel, p + s)) - dtt1 * rp + e3;
        T sm = dtt2 * T.Load(ref Unsafe.Add(ref k.Speed, p - s)), sp = dtt2 * T.Load(ref Unsafe.Add(ref k.Speed, p + s));
        ref double f = ref Unsafe.Add(ref k.Lhs, p);
        T.Store(ref f, e0);
        T.Store(ref Unsafe.Add(ref f, pts), l1);
        T.Store(ref Unsafe.Add(ref f, 2 * pts), l2);
        T.Store(ref Unsafe.Add(ref f, 3 * pts), l3);
        T.Store(ref Unsafe.Add(ref f, 4 * pts), e4);
        T.Store(ref Unsafe.Add(ref f, 5 * pts), e0);
        T.Store(ref Unsafe.Add(ref f, 6 * pts), l1 - sm);
        T.Store(ref Unsafe.Add(ref f, 7 * pts), l2);
        T.Store(ref Unsafe.Add(ref f, 8 * pts), l3 + sp);
        T.Store(ref Unsafe.Add(ref f, 9 * pts), e4);
        T.Store(ref Unsafe.Add(ref f, 10 * pts), e0);
        T.Store(ref Unsafe.Add(ref f, 11 * pts), l1 + sm);
        T.Store(ref Unsafe.Add(ref f, 12 * pts), l2);
        T.Store(ref Unsafe.Add(ref f, 13 * pts), l3 - sp);
        T.Store(ref Unsafe.Add(ref f, 14 * pts), e4);
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static T Coefficient<T>(ref double table, int g, bool along) where T : struct, ILanes<T> =>
        along ? T.Load(ref Unsafe.Add(ref table, g)) : T.Splat(Unsafe.Add(ref table, g));

    /// <summary>The largest of the viscous and dissipative eigenvalue bounds at a point, from its 1/ρ.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static T Viscous<T>(T d, T rhoInv) where T : struct, ILanes<T>
    {
        T ru1 = T.Splat(C3C4) * rhoInv;
        return T.Max(T.Max(d + T.Splat(Con43) * ru1, d + T.Splat(C1C5) * ru1), T.Max(d + ru1, d));
    }

    /// <summary>The five coefficient fields of one factor and the values it carries (three for factor 0, one otherwise).</summary>
    private ref struct Band
    {
        public ref double L0, L1, L2, L3, L4, R0, R1, R2;
        public bool Three;

        public Band(Cell c, int factor)
        {
            int pts = c.Points;
            ref double l = ref Unsafe.Add(ref MemoryMarshal.GetArrayDataReference(c.Lhs), factor * Cell.Band * pts);
            ref double r = ref Unsafe.Add(ref MemoryMarshal.GetArrayDataReference(c.Rhs), (factor == 0 ? 0 : factor + 2) * pts);
            L0 = ref l;
            L1 = ref Unsafe.Add(ref l, pts);
            L2 = ref Unsafe.Add(ref l, 2 * pts);
            L3 = ref Unsafe.Add(ref l, 3 * pts);
            L4 = ref Unsafe.Add(ref l, 4 * pts);
            R0 = ref r;
            R1 = ref Unsafe.Add(ref r, pts);
            R2 = ref Unsafe.Add(ref r, 2 * pts);
            Three = factor == 0;
        }
    }

    /// <summary>Forward elimination from row <paramref name="first"/> (0, or −2 after <see cref="UnpackForward"/>) to the last row, which ends scaled to diagonal 1.</summary>
    public void Forward(int first)
    {
        for (int f = 0; f < 3; f++)
        {
            var b = new Band(_c, f);
            if (Wide.Supported && _qs == 1)
                ForwardAcross<Wide>(ref b, first);
            else
                ForwardAlong(ref b, first);
        }
    }

    /// <summary>The y and z factors: rows in order, each row over all lanes at once, a vector of lanes at a time.</summary>
    private void ForwardAcross<T>(scoped ref Band b, int first) where T : struct, ILanes<T>
    {
        int s = _s, last = _n - 1;
        for (int o = _olo; o <= _ohi; o++)
        {
            for (int row = first; row <= last - 1; row++)
            {
                int p = Row(row, o) + _qlo, q = _qlo;
                if (row < last - 1)
                {
                    for (; q + T.Width - 1 <= _qhi; q += T.Width, p += T.Width)
                        Eliminate<T>(ref b, p, s);
                    for (; q <= _qhi; q++, p++)
                        Eliminate<One>(ref b, p, s);
                }
                else
                {
                    for (; q + T.Width - 1 <= _qhi; q += T.Width, p += T.Width)
                        EliminateLast<T>(ref b, p, s);
                    for (; q <= _qhi; q++, p++)
                        EliminateLast<One>(ref b, p, s);
                }
            }
        }
    }

    /// <summary>The x factor (lanes apart in memory): each line in turn, its rows in order.</summary>
    private void ForwardAlong(scoped ref Band b, int first)
    {
        int s = _s, last = _n - 1;
        for (int o = _olo; o <= _ohi; o++)
        {
            for (int q = _qlo; q <= _qhi; q++)
            {
                int p = Row(first, o) + q * _qs;
                for (int row = first; row < last - 1; row++, p += s)
                    Eliminate<One>(ref b, p, s);
                EliminateLast<One>(ref b, p, s);
            }
        }
    }

    /// <summary>Row p's super-diagonals divided by its diagonal; returns 1/diagonal, by which its values are scaled too.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static T Scale<T>(scoped ref Band b, int p, out T l3, out T l4) where T : struct, ILanes<T>
    {
        T fac1 = T.Splat(1.0) / T.Load(ref Unsafe.Add(ref b.L2, p));
        l3 = fac1 * T.Load(ref Unsafe.Add(ref b.L3, p));
        l4 = fac1 * T.Load(ref Unsafe.Add(ref b.L4, p));
        T.Store(ref Unsafe.Add(ref b.L3, p), l3);
        T.Store(ref Unsafe.Add(ref b.L4, p), l4);
        return fac1;
    }

    /// <summary>Row p scaled to diagonal 1, then removed from the two rows below it.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static void Eliminate<T>(scoped ref Band b, int p, int s) where T : struct, ILanes<T>
    {
        int p1 = p + s, p2 = p1 + s;
        T fac1 = Scale<T>(ref b, p, out T l3, out T l4);
        T a1 = T.Load(ref Unsafe.Add(ref b.L1, p1));
        T.Store(ref Unsafe.Add(ref b.L2, p1), T.Load(ref Unsafe.Add(ref b.L2, p1)) - a1 * l3);
        T.Store(ref Unsafe.Add(ref b.L3, p1), T.Load(ref Unsafe.Add(ref b.L3, p1)) - a1 * l4);
        T a0 = T.Load(ref Unsafe.Add(ref b.L0, p2));
        T.Store(ref Unsafe.Add(ref b.L1, p2), T.Load(ref Unsafe.Add(ref b.L1, p2)) - a0 * l3);
        T.Store(ref Unsafe.Add(ref b.L2, p2), T.Load(ref Unsafe.Add(ref b.L2, p2)) - a0 * l4);
        EliminateValue<T>(ref b.R0, p, p1, p2, fac1, a1, a0);
        if (b.Three)
        {
            EliminateValue<T>(ref b.R1, p, p1, p2, fac1, a1, a0);
            EliminateValue<T>(ref b.R2, p, p1, p2, fac1, a1, a0);
        }
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static void EliminateValue<T>(ref double r, int p, int p1, int p2, T fac1, T a1, T a0) where T : struct, ILanes<T>
    {
        T x = fac1 * T.Load(ref Unsafe.Add(ref r, p));
        T.Store(ref Unsafe.Add(ref r, p), x);
        T.Store(ref Unsafe.Add(ref r, p1), T.Load(ref Unsafe.Add(ref r, p1)) - a1 * x);
        T.Store(ref Unsafe.Add(ref r, p2), T.Load(ref Unsafe.Add(ref r, p2)) - a0 * x);
    }

    /// <summary>The last two rows: row p scaled and removed from row p + s, which is then scaled too.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static void EliminateLast<T>(scoped ref Band b, int p, int s) where T : struct, ILanes<T>
    {
        int p1 = p + s;
        T fac1 = Scale<T>(ref b, p, out T l3, out T l4);
        T a1 = T.Load(ref Unsafe.Add(ref b.L1, p1));
        T d1 = T.Load(ref Unsafe.Add(ref b.L2, p1)) - a1 * l3;
        T.Store(ref Unsafe.Add(ref b.L2, p1), d1);
        T fac2 = T.Splat(1.0) / d1;
        T.Store(ref Unsafe.Add(ref b.L3, p1), fac2 * (T.Load(ref Unsafe.Add(ref b.L3, p1)) - a1 * l4));
        T.Store(ref Unsafe.Add(ref b.L4, p1), fac2 * T.Load(ref Unsafe.Add(ref b.L4, p1)));
        EliminateLastValue<T>(ref b.R0, p, p1, fac1, a1, fac2);
        if (b.Three)
        {
            EliminateLastValue<T>(ref b.R1, p, p1, fac1, a1, fac2);
            EliminateLastValue<T>(ref b.R2, p, p1, fac1, a1, fac2);
        }
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static void EliminateLastValue<T>(ref double r, int p, int p1, T fac1, T a1, T fac2) where T : struct, ILanes<T>
    {
        T x = fac1 * T.Load(ref Unsafe.Add(ref r, p));
        T.Store(ref Unsafe.Add(ref r, p), x);
        T.Store(ref Unsafe.Add(ref r, p1), fac2 * (T.Load(ref Unsafe.Add(ref r, p1)) - a1 * x));
    }

    /// <summary>Back substitution from row <paramref name="last"/> down to row 0 (the two rows after it must hold the solution).</summary>
    public void Backward(int last)
    {
        for (int m = 0; m < Cell.Vars; m++)
        {
            int f = m < 3 ? 0 : m - 2;
            ref double l3 = ref Unsafe.Add(ref MemoryMarshal.GetArrayDataReference(_c.Lhs), (f * Cell.Band + 3) * _pts);
            ref double l4 = ref Unsafe.Add(ref l3, _pts);
            ref double r = ref Unsafe.Add(ref MemoryMarshal.GetArrayDataReference(_c.Rhs), m * _pts);
            if (Wide.Supported && _qs == 1)
                BackwardAcross<Wide>(ref l3, ref l4, ref r, last);
            else
                BackwardAlong(ref l3, ref l4, ref r, last);
        }
    }

    private void BackwardAcross<T>(ref double l3, ref double l4, ref double r, int last) where T : struct, ILanes<T>
    {
        int s = _s;
        for (int o = _olo; o <= _ohi; o++)
        {
            for (int row = last; row >= 0; row--)
            {
                int p = Row(row, o) + _qlo, q = _qlo;
                for (; q + T.Width - 1 <= _qhi; q += T.Width, p += T.Width)
                    Substitute<T>(ref l3, ref l4, ref r, p, s);
                for (; q <= _qhi; q++, p++)
                    Substitute<One>(ref l3, ref l4, ref r, p, s);
            }
        }
    }

    private void BackwardAlong(ref double l3, ref double l4, ref double r, int last)
    {
        int s = _s;
        for (int o = _olo; o <= _ohi; o++)
        {
            for (int q = _qlo; q <= _qhi; q++)
            {
                int p = Row(last, o) + q * _qs;
                for (int row = last; row >= 0; row--, p -= s)
                    Substitute<One>(ref l3, ref l4, ref r, p, s);
            }
        }
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static void Substitute<T>(ref double l3, ref double l4, ref double r, int p, int s) where T : struct, ILanes<T>
    {
        T x = T.Load(ref Unsafe.Add(ref r, p))
            - T.Load(ref Unsafe.Add(ref l3, p)) * T.Load(ref Unsafe.Add(ref r, p + s))
            - T.Load(ref Unsafe.Add(ref l4, p)) * T.Load(ref Unsafe.Add(ref r, p + 2 * s));
        T.Store(ref Unsafe.Add(ref r, p), x);
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
