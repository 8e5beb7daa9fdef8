using Partition = Npb.Multipartition.MultiPartition<Npb.BT.Cell>;
using System.MP;
using Npb.Common;
using Npb.Multipartition;
using static Npb.BT.Flow;
using static Npb.Common.Gas;

namespace Npb.BT;

/// <summary>
/// One rank's part of BT: its cells, the face exchange and the three line solves, and the
/// steps of NPB's adi: exchange the faces, compute the right-hand side, solve the
/// block-tridiagonal systems along x, y and z, add the correction to u.
/// </summary>
internal sealed unsafe class Solver : IDisposable
{
    /// <summary>The timers of the detailed report (NPB_TIMERS=1 or a file timer.flag).</summary>
    public enum Phase { Total, Io, Rhs, XSolve, YSolve, ZSolve, Exchange, XComm, YComm, ZComm }

    private readonly Communicator _comm;
    private readonly Partition _part;
    private readonly Coefficients _k;
    private readonly FaceExchange _faces;

    /// <summary>The face exchange's first tag (the line solves use 20 and up).</summary>
    private const int FaceTag = 10;

    private readonly LineSolver[] _solvers;
    private readonly bool _timed = Timers.Detailed;

    public Timers Timers { get; } = new(Enum.GetNames<Phase>());

    public Partition Partition => _part;

    public Solver(Communicator comm, Partition part, double dt)
    {
        _comm = comm;
        _part = part;
        _k = new Coefficients(part.N, dt);
        _faces = new FaceExchange(comm, part.Cells, part.P, part.Predecessor, part.Successor, FaceTag);
        _solvers = [.. Enumerable.Range(0, 3).Select(d => new LineSolver(comm, part, _k, d, Timers, (int)Phase.XSolve + d, (int)Phase.XComm + d))];
    }

    /// <summary>
    /// u at every point: the exact solution on the global boundary, inside the transfinite
    /// (trilinear blending) interpolation of the boundary values; 1 in the ghosts that lie
    /// outside the grid, which only the reciprocal of ρ ever reads (NPB's initialize).
    /// </summary>
    public void Initialize()
    {
        int n = _part.N;
        double h = _k.H;
        foreach (Cell c in _part.Cells)
        {
            Array.Fill(c.U, 1.0);
            for (int k = 0; k < c.Size[2]; k++)
            {
                int gk = c.Low[2] + k;
                double zeta = gk * h;
                for (int j = 0; j < c.Size[1]; j++)
                {
                    int gj = c.Low[1] + j;
                    double eta = gj * h;
                    for (int i = 0; i < c.Size[0]; i++)
                    {
                        int gi = c.Low[0] + i;
                        double xi = gi * h;
                        Span<double> u = c.U.AsSpan(Vars * c.Index(i, j, k), Vars);
                        if (gi == 0 || gi == n - 1 || gj == 0 || gj == n - 1 || gk == 0 || gk == n - 1)
                            ExactSolution.Evaluate(xi, eta, zeta, u);
                        else
                            ExactSolution.Interpolate(xi, eta, zeta, u);
                    }
                }
            }
        }
    }

    /// <summary>
    /// The forcing term: minus the discrete operator of the right-hand side applied to the
    /// exact solution, at the interior points (NPB's exact_rhs). Computed along whole lines
    /// of the global grid, so a cell needs nothing from its neighbours.
    /// </summary>
    public void ComputeForcing()
    {
        int n = _part.N;
        var ue = new double[Vars * n];
        var buf = new double[Vars * n];
        var cuf = new double[n];
        var q = new double[n];
        Span<double> point = stackalloc double[3];
        foreach (Cell c in _part.Cells)
        {
            Array.Clear(c.Forcing);
            for (int d = 0; d < 3; d++)
            {
                var (da, db) = Cell.Across(d);
                int s = c.Stride[d];
                for (int b = c.Lo(db); b <= c.Hi(db); b++)
                {
                    for (int a = c.Lo(da); a <= c.Hi(da); a++)
                    {
                        // The exact solution and its derived quantities along the whole global line.
                        point[da] = (c.Low[da] + a) * _k.H;
                        point[db] = (c.Low[db] + b) * _k.H;
                        for (int g = 0; g < n; g++)
                        {
                            point[d] = g * _k.H;
                            Span<double> e = ue.AsSpan(Vars * g, Vars);
                            ExactSolution.Evaluate(point[0], point[1], point[2], e);
                            double inverse = 1.0 / e[0];
                            for (int m = 1; m < Vars; m++)
                                buf[Vars * g + m] = inverse * e[m];
                            double vd = buf[Vars * g + 1 + d];
                            cuf[g] = vd * vd;
                            buf[Vars * g] = buf[Vars * g + 1] * buf[Vars * g + 1] + buf[Vars * g + 2] * buf[Vars * g + 2] + buf[Vars * g + 3] * buf[Vars * g + 3];
                            q[g] = 0.5 * (buf[Vars * g + 1] * e[1] + buf[Vars * g + 2] * e[2] + buf[Vars * g + 3] * e[3]);
                        }
                        int p0 = c.Origin + a * c.Stride[da] + b * c.Stride[db];
                        for (int l = c.Lo(d); l <= c.Hi(d); l++)
                            ForcingAt(c.Forcing.AsSpan(Vars * (p0 + l * s), Vars), d, c.Low[d] + l, ue, buf, cuf, q, c.Stencils[d].AsSpan(Vars * l, Vars));
                    }
                }
            }
            foreach (var (i, j, k) in InteriorPoints(c))
            {
                Span<double> f = c.Forcing.AsSpan(Vars * c.Index(i, j, k), Vars);
                for (int m = 0; m < Vars; m++)
                    f[m] = -f[m];
            }
        }
    }

    /// <summary>Adds the fluxes and the dissipation along axis d of the exact solution at global point g to <paramref name="f"/>.</summary>
    private void ForcingAt(Span<double> f, int d, int g, double[] ue, double[] buf, double[] cuf, double[] q, ReadOnlySpan<double> w)
    {
        int md = 1 + d, ma = 1 + (d + 1) % 3, mb = 1 + (d + 2) % 3;
        int o = Vars * g, om = o - Vars, op = o + Vars;
        double t2 = _k.T2, ddt1 = Dissipation[d] * _k.T1;
        double SecondDifference(double[] a, int m) => a[op + m] - 2.0 * a[o + m] + a[om + m];
        double vp = buf[op + md], vm = buf[om + md];
        f[0] += -t2 * (ue[op + md] - ue[om + md]) + ddt1 * SecondDifference(ue, 0);
        f[md] += -t2 * ((ue[op + md] * vp + C2 * (ue[op + 4] - q[g + 1])) - (ue[om + md] * vm + C2 * (ue[om + 4] - q[g - 1])))
            + _k.Con1 * SecondDifference(buf, md) + ddt1 * SecondDifference(ue, md);
        foreach (int m in (ReadOnlySpan<int>)[ma, mb])
        {
            f[m] += -t2 * (ue[op + m] * vp - ue[om + m] * vm)
                + _k.Con2 * SecondDifference(buf, m) + ddt1 * SecondDifference(ue, m);
        }
        f[4] += -t2 * (vp * (C1 * ue[op + 4] - C2 * q[g + 1]) - vm * (C1 * ue[om + 4] - C2 * q[g - 1]))
            + 0.5 * _k.Con3 * SecondDifference(buf, 0) + _k.Con4 * (cuf[g + 1] - 2.0 * cuf[g] + cuf[g - 1])
            + _k.Con5 * SecondDifference(buf, 4) + ddt1 * SecondDifference(ue, 4);
        for (int m = 0; m < Vars; m++)
        {
            double sum = 0;
            for (int t = -2; t <= 2; t++)
            {
                if (w[t + 2] != 0)
                    sum += w[t + 2] * ue[o + t * Vars + m];
            }
            f[m] -= Dssp * sum;
        }
    }

    private static IEnumerable<(int I, int J, int K)> InteriorPoints(Cell c)
    {
        for (int k = c.Lo(2); k <= c.Hi(2); k++)
            for (int j = c.Lo(1); j <= c.Hi(1); j++)
                for (int i = c.Lo(0); i <= c.Hi(0); i++)
                    yield return (i, j, k);
    }

    /// <summary>One time step (NPB's adi): faces, right-hand side, the x, y and z solves, u += correction.</summary>
    public void Step()
    {
        ExchangeAndComputeRhs();
        foreach (LineSolver s in _solvers)
            s.Solve();
        Add();
    }

    /// <summary>Fills the ghost layers from the neighbouring cells, then computes the right-hand side (NPB's copy_faces).</summary>
    public void ExchangeAndComputeRhs()
    {
        if (_timed)
            Timers.Start((int)Phase.Exchange);
        _faces.Exchange();
        if (_timed)
        {
            Timers.Stop((int)Phase.Exchange);
            Timers.Start((int)Phase.Rhs);
        }
        foreach (Cell c in _part.Cells)
            ComputeRhs(c);
        if (_timed)
            Timers.Stop((int)Phase.Rhs);
    }

    /// <summary>
    /// rhs = dt · (forcing + the discrete fluxes, viscous terms and fourth-difference
    /// dissipation of u along x, y and z) at the interior points; the auxiliary scalars on the
    /// points and the first ghost layer (NPB's compute_rhs).
    /// </summary>
    private void ComputeRhs(Cell c)
    {
        fixed (double* u = c.U, rhoI = c.RhoI, us = c.Us, vs = c.Vs, ws = c.Ws, qs = c.Qs, square = c.Square)
        {
            for (int k = -1; k <= c.Size[2]; k++)
            {
                for (int j = -1; j <= c.Size[1]; j++)
                {
                    int p = c.Index(-1, j, k);
                    for (int i = -1; i <= c.Size[0]; i++, p++)
                    {
                        double* v = u + Vars * p;
                        double inverse = 1.0 / v[0];
                        rhoI[p] = inverse;
                        us[p] = v[1] * inverse;
                        vs[p] = v[2] * inverse;
                        ws[p] = v[3] * inverse;
                        double kinetic = 0.5 * (v[1] * v[1] + v[2] * v[2] + v[3] * v[3]) * inverse;
                        square[p] = kinetic;
                        qs[p] = kinetic * inverse;
                    }
                }
            }
        }
        c.Forcing.AsSpan().CopyTo(c.Rhs);
        for (int d = 0; d < 3; d++)
            RhsAlong(c, d);
        double dt = _k.Dt;
        fixed (double* rhs = c.Rhs)
        {
            for (int k = c.Lo(2); k <= c.Hi(2); k++)
            {
                for (int j = c.Lo(1); j <= c.Hi(1); j++)
                {
                    double* r = rhs + Vars * c.Index(c.Lo(0), j, k);
                    double* end = rhs + Vars * (c.Index(c.Hi(0), j, k) + 1);
                    for (; r < end; r++)
                        *r *= dt;
                }
            }
        }
    }

    /// <summary>The terms of the right-hand side along axis <paramref name="d"/>, line by line.</summary>
    private void RhsAlong(Cell c, int d)
    {
        var (da, db) = Cell.Across(d);
        int s = c.Stride[d], sa = c.Stride[da], sb = c.Stride[db];
        int md = 1 + d, ma = 1 + da, mb = 1 + db;
        double t2 = _k.T2, ddt1 = Dissipation[d] * _k.T1;
        double con1 = _k.Con2 * Con43, con2 = _k.Con2, con3 = _k.Con3, con4 = _k.Con4, con5 = _k.Con5;
        int l0 = c.Lo(d), l1 = c.Hi(d);
        double[][] velocities = [c.Us, c.Vs, c.Ws];
        fixed (double* u = c.U, rhs = c.Rhs, rhoI = c.RhoI, qs = c.Qs, square = c.Square, stencil = c.Stencils[d])
        fixed (double* vel = velocities[d], va = velocities[da], vb = velocities[db])
        {
            for (int b = c.Lo(db); b <= c.Hi(db); b++)
            {
                for (int a = c.Lo(da); a <= c.Hi(da); a++)
                {
                    int p0 = c.Origin + a * sa + b * sb;
                    for (int l = l0; l <= l1; l++)
                    {
                        int p = p0 + l * s, pm = p - s, pp = p + s;
                        double* r = rhs + Vars * p;
                        double* q = u + Vars * p;
                        double* qm = q - Vars * s;
                        double* qp = q + Vars * s;
                        double v0 = vel[p], vm = vel[pm], vp = vel[pp];
                        r[0] += ddt1 * (qp[0] - 2.0 * q[0] + qm[0]) - t2 * (qp[md] - qm[md]);
                        r[md] += ddt1 * (qp[md] - 2.0 * q[md] + qm[md]) + con1 * (vp - 2.0 * v0 + vm)
                            - t2 * (qp[md] * vp - qm[md] * vm + (qp[4] - square[pp] - qm[4] + square[pm]) * C2);
                        r[ma] += ddt1 * (qp[ma] - 2.0 * q[ma] + qm[ma]) + con2 * (va[pp] - 2.0 * va[p] + va[pm])
                            - t2 * (qp[ma] * vp - qm[ma] * vm);
                        r[mb] += ddt1 * (qp[mb] - 2.0 * q[mb] + qm[mb]) + con2 * (vb[pp] - 2.0 * vb[p] + vb[pm])
                            - t2 * (qp[mb] * vp - qm[mb] * vm);
                        r[4] += ddt1 * (qp[4] - 2.0 * q[4] + qm[4]) + con3 * (qs[pp] - 2.0 * qs[p] + qs[pm])
                            + con4 * (vp * vp - 2.0 * v0 * v0 + vm * vm)
                            + con5 * (qp[4] * rhoI[pp] - 2.0 * q[4] * rhoI[p] + qm[4] * rhoI[pm])
                            - t2 * ((C1 * qp[4] - C2 * square[pp]) * vp - (C1 * qm[4] - C2 * square[pm]) * vm);

                        double* w = stencil + Vars * l;
                        double* q2m = qm - Vars * s;
                        double* q2p = qp + Vars * s;
                        double w0 = Dssp * w[0], w1 = Dssp * w[1], w2 = Dssp * w[2], w3 = Dssp * w[3], w4 = Dssp * w[4];
                        for (int m = 0; m < Vars; m++)
                            r[m] -= w0 * q2m[m] + w1 * qm[m] + w2 * q[m] + w3 * qp[m] + w4 * q2p[m];
                    }
                }
            }
        }
    }

    /// <summary>u += the correction, at the interior points (NPB's add).</summary>
    private void Add()
    {
        foreach (Cell c in _part.Cells)
        {
            fixed (double* u = c.U, rhs = c.Rhs)
            {
                for (int k = c.Lo(2); k <= c.Hi(2); k++)
                {
                    for (int j = c.Lo(1); j <= c.Hi(1); j++)
                    {
                        int first = Vars * c.Index(c.Lo(0), j, k), last = Vars * (c.Index(c.Hi(0), j, k) + 1);
                        for (int e = first; e < last; e++)
                            u[e] += rhs[e];
                    }
                }
            }
        }
    }

    /// <summary>The RMS norm over the whole grid of u minus the exact solution, per variable (NPB's error_norm). Collective.</summary>
    public double[] ErrorNorm() => Norms.Error(_comm, _part.Cells, _part.N);

    /// <summary>The RMS norm of the right-hand side over the interior points, per variable (NPB's rhs_norm). Collective.</summary>
    public double[] RhsNorm() => Norms.Rhs(_comm, _part.Cells, _part.N);

    public void Dispose()
    {
        _faces.Dispose();
        foreach (LineSolver s in _solvers)
            s.Dispose();
    }
}
