using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using static Npb.SP.Model;
using static Npb.Common.Gas;

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
        var k = new PointFields(c);
        for (int z = -1; z <= c.Size[2]; z++)
        {
            for (int y = -1; y <= c.Size[1]; y++)
                Runs.Line(ref k, c.Index(-1, y, z), 0, c.Size[0] + 2, along: false);
        }
    }

    /// <summary>u, the rhs and the quantities derived from u, at each point of a cell; as a kernel, <see cref="Derived"/>.</summary>
    internal ref struct PointFields : IPointKernel<PointFields>
    {
        public ref double U0, U1, U2, U3, U4, R0, R1, R2, R3, R4, RhoI, Us, Vs, Ws, Square, Qs, Speed, Ainv;

        public PointFields(Cell c)
        {
            int pts = c.Points;
            U0 = ref MemoryMarshal.GetArrayDataReference(c.U);
            U1 = ref Unsafe.Add(ref U0, pts);
            U2 = ref Unsafe.Add(ref U0, 2 * pts);
            U3 = ref Unsafe.Add(ref U0, 3 * pts);
            U4 = ref Unsafe.Add(ref U0, 4 * pts);
            R0 = ref MemoryMarshal.GetArrayDataReference(c.Rhs);
            R1 = ref Unsafe.Add(ref R0, pts);
            R2 = ref Unsafe.Add(ref R0, 2 * pts);
            R3 = ref Unsafe.Add(ref R0, 3 * pts);
            R4 = ref Unsafe.Add(ref R0, 4 * pts);
            RhoI = ref MemoryMarshal.GetArrayDataReference(c.RhoI);
            Us = ref MemoryMarshal.GetArrayDataReference(c.Us);
            Vs = ref MemoryMarshal.GetArrayDataReference(c.Vs);
            Ws = ref MemoryMarshal.GetArrayDataReference(c.Ws);
            Square = ref MemoryMarshal.GetArrayDataReference(c.Square);
            Qs = ref MemoryMarshal.GetArrayDataReference(c.Qs);
            Speed = ref MemoryMarshal.GetArrayDataReference(c.Speed);
            Ainv = ref MemoryMarshal.GetArrayDataReference(c.Ainv);
        }

        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        public static void At<T>(scoped ref PointFields k, int p, int g, bool along) where T : struct, ILanes<T>
        {
            T u1 = Get<T>(ref k.U1, p), u2 = Get<T>(ref k.U2, p), u3 = Get<T>(ref k.U3, p);
            T one = T.Splat(1.0);
            T rhoInv = one / Get<T>(ref k.U0, p);
            T.Store(ref Unsafe.Add(ref k.RhoI, p), rhoInv);
            T.Store(ref Unsafe.Add(ref k.Us, p), u1 * rhoInv);
            T.Store(ref Unsafe.Add(ref k.Vs, p), u2 * rhoInv);
            T.Store(ref Unsafe.Add(ref k.Ws, p), u3 * rhoInv);
            T square = T.Splat(0.5) * (u1 * u1 + u2 * u2 + u3 * u3) * rhoInv;
            T.Store(ref Unsafe.Add(ref k.Square, p), square);
            T.Store(ref Unsafe.Add(ref k.Qs, p), square * rhoInv);
            T aux = T.Sqrt(T.Splat(C1C2) * rhoInv * (Get<T>(ref k.U4, p) - square));
            T.Store(ref Unsafe.Add(ref k.Speed, p), aux);
            T.Store(ref Unsafe.Add(ref k.Ainv, p), one / aux);
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

    /// <summary>The convective, viscous and fourth-difference dissipation terms along axis a, added to the rhs at the interior points; vectorized along i.</summary>
    private static void Axis(Model model, Cell c, int a)
    {
        var t = new AxisTerms(model, c, a);
        bool along = a == 0;
        for (int k = c.Lo(2); k <= c.Hi(2); k++)
        {
            for (int j = c.Lo(1); j <= c.Hi(1); j++)
            {
                int i = c.Lo(0), hi = c.Hi(0);
                int p = c.Index(i, j, k);
                int g = a == 0 ? i + c.Low[0] : a == 1 ? j + c.Low[1] : k + c.Low[2];
                Runs.Line(ref t, p, g, hi - i + 1, along);
            }
        }
    }

    /// <summary>The fields and constants of one axis's terms: the momentum along the axis (A) and the two across it (B, C) with their velocities.</summary>
    private ref struct AxisTerms : IPointKernel<AxisTerms>
    {
        public ref double U0, UA, UB, UC, U4, R0, RA, RB, RC, R4, VelA, VelB, VelC, Qs, Sq, Rho;
        public ref double D0, D1, D2, D3, D4;
        public int S;
        public double T2, Dt1, Con2, Con243, Con3, Con4, Con5;

        public AxisTerms(Model model, Cell c, int a)
        {
            AxisConstants ax = model.Axes[a];
            int pts = c.Points, ma = 1 + a, mb = a == 0 ? 2 : 1, mc = a == 2 ? 2 : 3;
            ref double u = ref MemoryMarshal.GetArrayDataReference(c.U);
            ref double r = ref MemoryMarshal.GetArrayDataReference(c.Rhs);
            U0 = ref u;
            UA = ref Unsafe.Add(ref u, ma * pts);
            UB = ref Unsafe.Add(ref u, mb * pts);
            UC = ref Unsafe.Add(ref u, mc * pts);
            U4 = ref Unsafe.Add(ref u, 4 * pts);
            R0 = ref r;
            RA = ref Unsafe.Add(ref r, ma * pts);
            RB = ref Unsafe.Add(ref r, mb * pts);
            RC = ref Unsafe.Add(ref r, mc * pts);
            R4 = ref Unsafe.Add(ref r, 4 * pts);
            VelA = ref MemoryMarshal.GetArrayDataReference(c.Velocity(a));
            VelB = ref MemoryMarshal.GetArrayDataReference(c.Velocity(mb - 1));
            VelC = ref MemoryMarshal.GetArrayDataReference(c.Velocity(mc - 1));
            Qs = ref MemoryMarshal.GetArrayDataReference(c.Qs);
            Sq = ref MemoryMarshal.GetArrayDataReference(c.Square);
            Rho = ref MemoryMarshal.GetArrayDataReference(c.RhoI);
            D0 = ref MemoryMarshal.GetArrayDataReference(model.Stencil[0]);
            D1 = ref MemoryMarshal.GetArrayDataReference(model.Stencil[1]);
            D2 = ref MemoryMarshal.GetArrayDataReference(model.Stencil[2]);
            D3 = ref MemoryMarshal.GetArrayDataReference(model.Stencil[3]);
            D4 = ref MemoryMarshal.GetArrayDataReference(model.Stencil[4]);
            S = c.Stride[a];
            (T2, Dt1, Con2, Con243, Con3, Con4, Con5) = (ax.T2, ax.DT1, ax.Con2, ax.Con2 * Con43, ax.Con3, ax.Con4, ax.Con5);
        }

        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        public static void At<T>(scoped ref AxisTerms k, int p, int g, bool along) where T : struct, ILanes<T> =>
            AxisPoint<T>(ref k, p, g, along);
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static T Get<T>(ref double field, int p) where T : struct, ILanes<T> => T.Load(ref Unsafe.Add(ref field, p));

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static T Second<T>(ref double field, int p, int s, T two) where T : struct, ILanes<T> =>
        Get<T>(ref field, p + s) - two * Get<T>(ref field, p) + Get<T>(ref field, p - s);

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static void AxisPoint<T>(scoped ref AxisTerms t, int p, int g, bool along) where T : struct, ILanes<T>
    {
        int s = t.S, pp = p + s, pm = p - s;
        T two = T.Splat(2.0), t2 = T.Splat(t.T2), dt1 = T.Splat(t.Dt1), c1 = T.Splat(C1), c2 = T.Splat(C2);
        T up1 = Get<T>(ref t.VelA, pp), um1 = Get<T>(ref t.VelA, pm), uijk = Get<T>(ref t.VelA, p);

        ref double x0 = ref Unsafe.Add(ref t.R0, p);
        T.Store(ref x0, T.Load(ref x0) + dt1 * Second<T>(ref t.U0, p, s, two) - t2 * (Get<T>(ref t.UA, pp) - Get<T>(ref t.UA, pm)));

        T u4p = Get<T>(ref t.U4, pp), u4m = Get<T>(ref t.U4, pm), sqp = Get<T>(ref t.Sq, pp), sqm = Get<T>(ref t.Sq, pm);
        ref double xa = ref Unsafe.Add(ref t.RA, p);
        T uap = Get<T>(ref t.UA, pp), uam = Get<T>(ref t.UA, pm);
        T.Store(ref xa, T.Load(ref xa) + dt1 * (uap - two * Get<T>(ref t.UA, p) + uam)
            + T.Splat(t.Con243) * (up1 - two * uijk + um1)
            - t2 * (uap * up1 - uam * um1 + (u4p - sqp - u4m + sqm) * c2));

        T con2 = T.Splat(t.Con2);
        ref double xb = ref Unsafe.Add(ref t.RB, p);
        T ubp = Get<T>(ref t.UB, pp), ubm = Get<T>(ref t.UB, pm);
        T.Store(ref xb, T.Load(ref xb) + dt1 * (ubp - two * Get<T>(ref t.UB, p) + ubm)
            + con2 * Second<T>(ref t.VelB, p, s, two)
            - t2 * (ubp * up1 - ubm * um1));

        ref double xc = ref Unsafe.Add(ref t.RC, p);
        T ucp = Get<T>(ref t.UC, pp), ucm = Get<T>(ref t.UC, pm);
        T.Store(ref xc, T.Load(ref xc) + dt1 * (ucp - two * Get<T>(ref t.UC, p) + ucm)
            + con2 * Second<T>(ref t.VelC, p, s, two)
            - t2 * (ucp * up1 - ucm * um1));

        ref double x4 = ref Unsafe.Add(ref t.R4, p);
        T u4c = Get<T>(ref t.U4, p);
        T.Store(ref x4, T.Load(ref x4) + dt1 * (u4p - two * u4c + u4m)
            + T.Splat(t.Con3) * Second<T>(ref t.Qs, p, s, two)
            + T.Splat(t.Con4) * (up1 * up1 - two * uijk * uijk + um1 * um1)
            + T.Splat(t.Con5) * (u4p * Get<T>(ref t.Rho, pp) - two * u4c * Get<T>(ref t.Rho, p) + u4m * Get<T>(ref t.Rho, pm))
            - t2 * ((c1 * u4p - c2 * sqp) * up1 - (c1 * u4m - c2 * sqm) * um1));

        T d0 = Weight<T>(ref t.D0, g, along), d1 = Weight<T>(ref t.D1, g, along), d2 = Weight<T>(ref t.D2, g, along);
        T d3 = Weight<T>(ref t.D3, g, along), d4 = Weight<T>(ref t.D4, g, along), dssp = T.Splat(Dssp);
        Dissipate<T>(ref t.U0, ref t.R0, p, s, d0, d1, d2, d3, d4, dssp);
        Dissipate<T>(ref t.UA, ref t.RA, p, s, d0, d1, d2, d3, d4, dssp);
        Dissipate<T>(ref t.UB, ref t.RB, p, s, d0, d1, d2, d3, d4, dssp);
        Dissipate<T>(ref t.UC, ref t.RC, p, s, d0, d1, d2, d3, d4, dssp);
        Dissipate<T>(ref t.U4, ref t.R4, p, s, d0, d1, d2, d3, d4, dssp);
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static T Weight<T>(ref double table, int g, bool along) where T : struct, ILanes<T> =>
        along ? T.Load(ref Unsafe.Add(ref table, g)) : T.Splat(Unsafe.Add(ref table, g));

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static void Dissipate<T>(ref double u, ref double r, int p, int s, T d0, T d1, T d2, T d3, T d4, T dssp) where T : struct, ILanes<T>
    {
        ref double x = ref Unsafe.Add(ref r, p);
        T.Store(ref x, T.Load(ref x) - dssp * (d0 * Get<T>(ref u, p - 2 * s) + d1 * Get<T>(ref u, p - s) + d2 * Get<T>(ref u, p)
                                            + d3 * Get<T>(ref u, p + s) + d4 * Get<T>(ref u, p + 2 * s)));
    }

    /// <summary>The rhs times the inverse of the x factor's eigenvector matrix (NPB's txinvr).</summary>
    public static void ToEigenbasis(Cell c) => Interior<ToEigenbasisKernel>(c);

    /// <summary>u += rhs at the interior points (NPB's add).</summary>
    public static void Add(Cell c) => Interior<AddKernel>(c);

    /// <summary>A kernel at every interior point of the cell.</summary>
    public static void Interior<TKernel>(Cell c) where TKernel : IPointKernel<PointFields>
    {
        var k = new PointFields(c);
        for (int z = c.Lo(2); z <= c.Hi(2); z++)
        {
            for (int y = c.Lo(1); y <= c.Hi(1); y++)
                Runs.Line<PointFields, TKernel>(ref k, c.Index(c.Lo(0), y, z), 0, c.Hi(0) - c.Lo(0) + 1, along: false);
        }
    }

    private struct ToEigenbasisKernel : IPointKernel<PointFields>
    {
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        public static void At<T>(scoped ref PointFields k, int p, int g, bool along) where T : struct, ILanes<T>
        {
            T ru1 = Get<T>(ref k.RhoI, p), uu = Get<T>(ref k.Us, p), vv = Get<T>(ref k.Vs, p), ww = Get<T>(ref k.Ws, p);
            T ac = Get<T>(ref k.Speed, p), ainv = Get<T>(ref k.Ainv, p), ac2inv = ainv * ainv;
            T r1 = Get<T>(ref k.R0, p), r2 = Get<T>(ref k.R1, p), r3 = Get<T>(ref k.R2, p), r4 = Get<T>(ref k.R3, p), r5 = Get<T>(ref k.R4, p);
            T bt = T.Splat(Bt);
            T t1 = T.Splat(C2) * ac2inv * (Get<T>(ref k.Qs, p) * r1 - uu * r2 - vv * r3 - ww * r4 + r5);
            T t2 = bt * ru1 * (uu * r1 - r2);
            T t3 = bt * ru1 * ac * t1;
            T.Store(ref Unsafe.Add(ref k.R0, p), r1 - t1);
            T.Store(ref Unsafe.Add(ref k.R1, p), -ru1 * (ww * r1 - r4));
            T.Store(ref Unsafe.Add(ref k.R2, p), ru1 * (vv * r1 - r3));
            T.Store(ref Unsafe.Add(ref k.R3, p), -t2 + t3);
            T.Store(ref Unsafe.Add(ref k.R4, p), t2 + t3);
        }
    }

    private struct AddKernel : IPointKernel<PointFields>
    {
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        public static void At<T>(scoped ref PointFields k, int p, int g, bool along) where T : struct, ILanes<T>
        {
            Add<T>(ref k.U0, ref k.R0, p);
            Add<T>(ref k.U1, ref k.R1, p);
            Add<T>(ref k.U2, ref k.R2, p);
            Add<T>(ref k.U3, ref k.R3, p);
            Add<T>(ref k.U4, ref k.R4, p);
        }

        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        private static void Add<T>(ref double u, ref double r, int p) where T : struct, ILanes<T> =>
            T.Store(ref Unsafe.Add(ref u, p), Get<T>(ref u, p) + Get<T>(ref r, p));
    }
}
