using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using static Npb.LU.Flow;
using static Npb.Common.Gas;

namespace Npb.LU;

/// <summary>Five doubles: one point's values or a product with a 5×5 block.</summary>
internal struct Vec5
{
    public double V0, V1, V2, V3, V4;
}

/// <summary>
/// The two triangular solves of one SSOR step (NPB's jacld/blts and jacu/buts), plane by plane.
/// The implicit operator's blocks are the Jacobians of the inviscid and viscous fluxes
/// (RNR-94-007 §3.3): a neighbour's block B = ±Δt/(2h)·A(u) − Δt/h²·(V(u) + d·I) is applied to
/// the neighbour's correction as it is formed, never stored; the diagonal block
/// I + 2Δt·Σ(V(u)/h² + d/h²) is lower triangular (V has no entries above the diagonal), so
/// each point's solve is a forward substitution.
/// </summary>
internal sealed class Sweeps
{
    private const double R43 = 4.0 / 3.0, C34 = C3 * C4, C1345 = C1 * C3 * C4 * C5;

    private readonly Grid _g;
    private readonly double _omega;
    // Per axis: Δt/(2h), Δt/h², Δt·d/h².
    private readonly double _cx, _vx, _dx, _cy, _vy, _dy, _cz, _vz, _dz;
    // The diagonal block: 1 + 2Δt·Σ d/h², 2Δt·K_m (K_m = c34·Σ κ/h², κ = 4/3 along the axis of m), 2Δt·(K_m − c1345·Σ 1/h²), 2Δt·c1345·Σ 1/h².
    private readonly double _diag, _k1, _k2, _k3, _l1, _l2, _l3, _e;

    public Sweeps(Grid g, double dt, double omega)
    {
        _g = g;
        _omega = omega;
        Axis x = new(g.Nx0, DissI), y = new(g.Ny0, DissJ), z = new(g.Nz0, DissK);
        (_cx, _vx, _dx) = (dt * x.T2, dt * x.T1, dt * x.T1 * x.Dissipation);
        (_cy, _vy, _dy) = (dt * y.T2, dt * y.T1, dt * y.T1 * y.Dissipation);
        (_cz, _vz, _dz) = (dt * z.T2, dt * z.T1, dt * z.T1 * z.Dissipation);
        double sum = x.T1 + y.T1 + z.T1;
        _diag = 1.0 + 2.0 * dt * (x.T1 * x.Dissipation + y.T1 * y.Dissipation + z.T1 * z.Dissipation);
        _k1 = 2.0 * dt * C34 * (sum + (R43 - 1.0) * x.T1);
        _k2 = 2.0 * dt * C34 * (sum + (R43 - 1.0) * y.T1);
        _k3 = 2.0 * dt * C34 * (sum + (R43 - 1.0) * z.T1);
        _e = 2.0 * dt * C1345 * sum;
        _l1 = _k1 - _e;
        _l2 = _k2 - _e;
        _l3 = _k3 - _e;
    }

    /// <summary>
    /// The lower solve on plane <paramref name="k"/>: rsd ← D⁻¹(rsd − ω·Σ B·rsd) over the
    /// neighbours at k−1, j−1, i−1, in increasing j and i. The ghost lines at i = 0 and j = 0
    /// must hold this plane's values from the neighbours.
    /// </summary>
    public void Lower(double[] uField, double[] rsdField, int k)
    {
        Grid g = _g;
        ref double u = ref MemoryMarshal.GetArrayDataReference(uField);
        ref double r = ref MemoryMarshal.GetArrayDataReference(rsdField);
        int sj = g.StrideJ, sk = g.StrideK;
        for (int j = g.Jst; j <= g.Jend; j++)
        {
            int o = g.Index(g.Ist, j, k);
            for (int i = g.Ist; i <= g.Iend; i++, o += Grid.Vars)
            {
                Vec5 acc = default;
                Neighbour(ref u, ref r, o - sk, 3, -_cz, _vz, _dz, ref acc);
                Neighbour(ref u, ref r, o - sj, 2, -_cy, _vy, _dy, ref acc);
                Neighbour(ref u, ref r, o - Grid.Vars, 1, -_cx, _vx, _dx, ref acc);
                ref double w = ref Unsafe.Add(ref r, o);
                Vec5 b;
                b.V0 = w - _omega * acc.V0;
                b.V1 = Unsafe.Add(ref w, 1) - _omega * acc.V1;
                b.V2 = Unsafe.Add(ref w, 2) - _omega * acc.V2;
                b.V3 = Unsafe.Add(ref w, 3) - _omega * acc.V3;
                b.V4 = Unsafe.Add(ref w, 4) - _omega * acc.V4;
                Solve(ref Unsafe.Add(ref u, o), ref b);
                w = b.V0;
                Unsafe.Add(ref w, 1) = b.V1;
                Unsafe.Add(ref w, 2) = b.V2;
                Unsafe.Add(ref w, 3) = b.V3;
                Unsafe.Add(ref w, 4) = b.V4;
            }
        }
    }

    /// <summary>
    /// The upper solve on plane <paramref name="k"/>: rsd ← rsd − D⁻¹·ω·Σ B·rsd over the
    /// neighbours at k+1, j+1, i+1, in decreasing j and i. The ghost lines at i = Nx+1 and
    /// j = Ny+1 must hold this plane's values from the neighbours.
    /// </summary>
    public void Upper(double[] uField, double[] rsdField, int k)
    {
        Grid g = _g;
        ref double u = ref MemoryMarshal.GetArrayDataReference(uField);
        ref double r = ref MemoryMarshal.GetArrayDataReference(rsdField);
        int sj = g.StrideJ, sk = g.StrideK;
        for (int j = g.Jend; j >= g.Jst; j--)
        {
            int o = g.Index(g.Iend, j, k);
            for (int i = g.Iend; i >= g.Ist; i--, o -= Grid.Vars)
            {
                Vec5 acc = default;
                Neighbour(ref u, ref r, o + sk, 3, _cz, _vz, _dz, ref acc);
                Neighbour(ref u, ref r, o + sj, 2, _cy, _vy, _dy, ref acc);
                Neighbour(ref u, ref r, o + Grid.Vars, 1, _cx, _vx, _dx, ref acc);
                Vec5 b;
                b.V0 = _omega * acc.V0;
                b.V1 = _omega * acc.V1;
                b.V2 = _omega * acc.V2;
                b.V3 = _omega * acc.V3;
                b.V4 = _omega * acc.V4;
                Solve(ref Unsafe.Add(ref u, o), ref b);
                ref double w = ref Unsafe.Add(ref r, o);
                w -= b.V0;
                Unsafe.Add(ref w, 1) -= b.V1;
                Unsafe.Add(ref w, 2) -= b.V2;
                Unsafe.Add(ref w, 3) -= b.V3;
                Unsafe.Add(ref w, 4) -= b.V4;
            }
        }
    }

    /// <summary>
    /// acc += (c·A_n(u) − v·V_n(u) − d·I)·w at the neighbour element <paramref name="o"/>: A_n and
    /// V_n are the inviscid and viscous flux Jacobians along axis n (1, 2, 3 for i, j, k), applied
    /// to w without forming them.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static void Neighbour(ref double uRef, ref double rRef, int o, int n, double c, double v, double d, ref Vec5 acc)
    {
        ref double u = ref Unsafe.Add(ref uRef, o);
        ref double w = ref Unsafe.Add(ref rRef, o);
        double inv = 1.0 / u;
        double v1 = Unsafe.Add(ref u, 1) * inv, v2 = Unsafe.Add(ref u, 2) * inv, v3 = Unsafe.Add(ref u, 3) * inv;
        double e = Unsafe.Add(ref u, 4) * inv;
        double w0 = w, w1 = Unsafe.Add(ref w, 1), w2 = Unsafe.Add(ref w, 2), w3 = Unsafe.Add(ref w, 3), w4 = Unsafe.Add(ref w, 4);
        double vn = n == 1 ? v1 : n == 2 ? v2 : v3;
        double wn = n == 1 ? w1 : n == 2 ? w2 : w3;
        double q2 = v1 * v1 + v2 * v2 + v3 * v3;
        double dot = v1 * w1 + v2 * w2 + v3 * w3;

        // Inviscid Jacobian A_n·w.
        double pressure = C2 * (0.5 * q2 * w0 - dot + w4);
        double a0 = wn;
        double a1 = vn * (w1 - v1 * w0) + v1 * wn + (n == 1 ? pressure : 0.0);
        double a2 = vn * (w2 - v2 * w0) + v2 * wn + (n == 2 ? pressure : 0.0);
        double a3 = vn * (w3 - v3 * w0) + v3 * wn + (n == 3 ? pressure : 0.0);
        double a4 = (C2 * q2 - C1 * e) * vn * w0 - C2 * vn * dot + (C1 * e - 0.5 * C2 * q2) * wn + C1 * vn * w4;

        // Viscous Jacobian V_n·w: rows 1..3 are κ·c34/ρ·(w_m − v_m·w0), κ = 4/3 along the axis.
        double k1 = n == 1 ? R43 * C34 : C34, k2 = n == 2 ? R43 * C34 : C34, k3 = n == 3 ? R43 * C34 : C34;
        double d1 = w1 - v1 * w0, d2 = w2 - v2 * w0, d3 = w3 - v3 * w0;
        double b1 = k1 * inv * d1, b2 = k2 * inv * d2, b3 = k3 * inv * d3;
        double b4 = inv * ((k1 - C1345) * v1 * d1 + (k2 - C1345) * v2 * d2 + (k3 - C1345) * v3 * d3 + C1345 * (w4 - e * w0));

        acc.V0 += c * a0 - d * w0;
        acc.V1 += c * a1 - v * b1 - d * w1;
        acc.V2 += c * a2 - v * b2 - d * w2;
        acc.V3 += c * a3 - v * b3 - d * w3;
        acc.V4 += c * a4 - v * b4 - d * w4;
    }

    /// <summary>b ← D(u)⁻¹·b for the diagonal block at the point whose first element is <paramref name="u"/>.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private void Solve(ref double u, ref Vec5 b)
    {
        double inv = 1.0 / u;
        double v1 = Unsafe.Add(ref u, 1) * inv, v2 = Unsafe.Add(ref u, 2) * inv, v3 = Unsafe.Add(ref u, 3) * inv;
        double e = Unsafe.Add(ref u, 4) * inv;
        double x0 = b.V0 / _diag;
        // Rows 1..3: (diag + 2Δt·K_m/ρ)·x_m − 2Δt·K_m/ρ·v_m·x0 = b_m.
        double x1 = (b.V1 + _k1 * inv * v1 * x0) / (_diag + _k1 * inv);
        double x2 = (b.V2 + _k2 * inv * v2 * x0) / (_diag + _k2 * inv);
        double x3 = (b.V3 + _k3 * inv * v3 * x0) / (_diag + _k3 * inv);
        // Row 4: D40·x0 + Σ L_m/ρ·v_m·x_m + (diag + E/ρ)·x4 = b4, D40 = −(Σ L_m·v_m² + E·e)/ρ.
        double d40 = -inv * (_l1 * v1 * v1 + _l2 * v2 * v2 + _l3 * v3 * v3 + _e * e);
        double x4 = (b.V4 - d40 * x0 - inv * (_l1 * v1 * x1 + _l2 * v2 * x2 + _l3 * v3 * x3)) / (_diag + _e * inv);
        b.V0 = x0;
        b.V1 = x1;
        b.V2 = x2;
        b.V3 = x3;
        b.V4 = x4;
    }
}
