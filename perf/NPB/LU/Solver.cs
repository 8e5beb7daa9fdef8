using System.MP;
using Npb.Common;
using static Npb.LU.Flow;
using static Npb.Common.Gas;

namespace Npb.LU;

/// <summary>
/// One rank's part of LU: the solution u, the residual (which the sweeps turn into the
/// correction in place) and the forcing term on this rank's box, with the exchanges and the
/// SSOR pseudo-time stepping of NPB's ssor.
/// </summary>
internal sealed class Solver : IDisposable
{
    /// <summary>The timers of the detailed report (NPB_TIMERS=1 or a file timer.flag).</summary>
    public enum Phase { Total, Rhs, Lower, Upper, Halo, LowerComm, UpperComm, Reduce }

    private readonly Communicator _comm;
    private readonly Grid _g;
    private readonly double _dt;
    private readonly double[] _u, _rsd, _frct;
    private readonly Residual _residual;
    private readonly Sweeps _sweeps;
    private readonly HaloExchange _halo;
    private readonly Wavefront _lower, _upper;
    private readonly double[] _partial = new double[Grid.Vars], _total = new double[Grid.Vars];
    private readonly bool _timed = Timers.Detailed;

    public Timers Timers { get; } = new(Enum.GetNames<Phase>());

    public Solver(Communicator comm, Grid g, double dt)
    {
        _comm = comm;
        _g = g;
        _dt = dt;
        _u = g.NewField();
        _rsd = g.NewField();
        _frct = g.NewField();
        _residual = new Residual(g);
        _sweeps = new Sweeps(g, dt, Omega);
        _halo = new HaloExchange(comm, g);
        _lower = Wavefront.Lower(comm, g);
        _upper = Wavefront.Upper(comm, g);
    }

    /// <summary>u at the points on the global boundary: the exact solution (NPB's setbv).</summary>
    public void SetBoundary()
    {
        Grid g = _g;
        Span<double> e = stackalloc double[Grid.Vars];
        for (int k = 1; k <= g.Nz; k++)
        {
            for (int j = 1; j <= g.Ny; j++)
            {
                for (int i = 1; i <= g.Nx; i++)
                {
                    int gi = g.Ipt + i, gj = g.Jpt + j;
                    if (k == 1 || k == g.Nz || gi == 1 || gi == g.Nx0 || gj == 1 || gj == g.Ny0)
                    {
                        Flow.Exact(gi, gj, k, g.Nx0, g.Ny0, g.Nz0, e);
                        e.CopyTo(_u.AsSpan(g.Index(i, j, k), Grid.Vars));
                    }
                }
            }
        }
    }

    /// <summary>
    /// u at the interior points: the transfinite (trilinear blending) interpolation of the
    /// boundary values along the three axes (NPB's setiv).
    /// </summary>
    public void SetInitial()
    {
        Grid g = _g;
        Span<double> xLow = stackalloc double[Grid.Vars], xHigh = stackalloc double[Grid.Vars];
        Span<double> yLow = stackalloc double[Grid.Vars], yHigh = stackalloc double[Grid.Vars];
        Span<double> zLow = stackalloc double[Grid.Vars], zHigh = stackalloc double[Grid.Vars];
        for (int k = 2; k <= g.Nz - 1; k++)
        {
            double zeta = (double)(k - 1) / (g.Nz0 - 1);
            for (int j = 1; j <= g.Ny; j++)
            {
                int gj = g.Jpt + j;
                if (gj == 1 || gj == g.Ny0)
                    continue;
                double eta = (double)(gj - 1) / (g.Ny0 - 1);
                for (int i = 1; i <= g.Nx; i++)
                {
                    int gi = g.Ipt + i;
                    if (gi == 1 || gi == g.Nx0)
                        continue;
                    double xi = (double)(gi - 1) / (g.Nx0 - 1);
                    Exact(1, gj, k, xLow);
                    Exact(g.Nx0, gj, k, xHigh);
                    Exact(gi, 1, k, yLow);
                    Exact(gi, g.Ny0, k, yHigh);
                    Exact(gi, gj, 1, zLow);
                    Exact(gi, gj, g.Nz0, zHigh);
                    int o = g.Index(i, j, k);
                    for (int m = 0; m < Grid.Vars; m++)
                    {
                        double px = (1.0 - xi) * xLow[m] + xi * xHigh[m];
                        double py = (1.0 - eta) * yLow[m] + eta * yHigh[m];
                        double pz = (1.0 - zeta) * zLow[m] + zeta * zHigh[m];
                        _u[o + m] = px + py + pz - px * py - py * pz - pz * px + px * py * pz;
                    }
                }
            }
        }
    }

    private void Exact(int gi, int gj, int k, Span<double> e) => Flow.Exact(gi, gj, k, _g.Nx0, _g.Ny0, _g.Nz0, e);

    /// <summary>
    /// The forcing term: minus the discrete operator applied to the exact solution, so that
    /// the exact solution is the discrete steady state (NPB's erhs).
    /// </summary>
    public void ComputeForcing()
    {
        Grid g = _g;
        Array.Clear(_frct);
        Span<double> e = stackalloc double[Grid.Vars];
        for (int k = 1; k <= g.Nz; k++)
        {
            for (int j = 1; j <= g.Ny; j++)
            {
                for (int i = 1; i <= g.Nx; i++)
                {
                    Exact(g.Ipt + i, g.Jpt + j, k, e);
                    e.CopyTo(_rsd.AsSpan(g.Index(i, j, k), Grid.Vars));
                }
            }
        }
        _halo.Exchange(_rsd);
        _residual.Add(_rsd, _frct);
    }

    /// <summary>rsd = R(u) − forcing at every point (zero on the boundary, where both are zero).</summary>
    private void ComputeResidual()
    {
        Start(Phase.Rhs);
        Grid g = _g;
        for (int k = 1; k <= g.Nz; k++)
        {
            for (int j = 1; j <= g.Ny; j++)
            {
                int o = g.Index(1, j, k);
                ReadOnlySpan<double> f = _frct.AsSpan(o, Grid.Vars * g.Nx);
                Span<double> r = _rsd.AsSpan(o, f.Length);
                for (int t = 0; t < f.Length; t++)
                    r[t] = -f[t];
            }
        }
        Start(Phase.Halo);
        _halo.Exchange(_u);
        Stop(Phase.Halo);
        _residual.Add(_u, _rsd);
        Stop(Phase.Rhs);
    }

    /// <summary>
    /// <paramref name="steps"/> SSOR pseudo-time steps (NPB's ssor); returns the residual norms
    /// after the last and the time of the stepping loop, the maximum over the ranks.
    /// </summary>
    public (double[] ResidualNorms, double Seconds) Ssor(int steps, bool printSteps)
    {
        Grid g = _g;
        double relax = 1.0 / (Omega * (2.0 - Omega));
        double[] norms = new double[Grid.Vars];
        ComputeResidual();
        Norm(_rsd, norms);
        Timers.ClearAll();
        _comm.Barrier();
        double t0 = Mpi.Wtime();
        Timers.Start((int)Phase.Total);
        for (int step = 1; step <= steps; step++)
        {
            if (printSteps && _comm.Rank == 0 && (step % 20 == 0 || step == steps || step == 1))
                Console.WriteLine(FormattableString.Invariant($" Time step {step,4}"));
            for (int k = 2; k <= g.Nz - 1; k++)
                Scale(k, _dt);

            _lower.Begin();
            for (int k = 2, t = 0; k <= g.Nz - 1; k++, t++)
            {
                Start(Phase.LowerComm);
                _lower.Receive(_rsd, t, k);
                Stop(Phase.LowerComm);
                Start(Phase.Lower);
                _sweeps.Lower(_u, _rsd, k);
                Stop(Phase.Lower);
                Start(Phase.LowerComm);
                _lower.Send(_rsd, t, k);
                Stop(Phase.LowerComm);
            }
            _lower.End();

            _upper.Begin();
            for (int k = g.Nz - 1, t = 0; k >= 2; k--, t++)
            {
                Start(Phase.UpperComm);
                _upper.Receive(_rsd, t, k);
                Stop(Phase.UpperComm);
                Start(Phase.Upper);
                _sweeps.Upper(_u, _rsd, k);
                Stop(Phase.Upper);
                Start(Phase.UpperComm);
                _upper.Send(_rsd, t, k);
                Stop(Phase.UpperComm);
            }
            _upper.End();

            for (int k = 2; k <= g.Nz - 1; k++)
                Update(k, relax);
            ComputeResidual();
            if (step == steps)
                Norm(_rsd, norms);
        }
        Timers.Stop((int)Phase.Total);
        double seconds = Mpi.Wtime() - t0;
        return (norms, _comm.Allreduce(seconds, Op.Max));
    }

    /// <summary>The interior points of row j of plane k, as one span of a field (i = Ist..Iend).</summary>
    private Span<double> InteriorRow(double[] field, int j, int k) =>
        field.AsSpan(_g.Index(_g.Ist, j, k), Grid.Vars * (_g.Iend - _g.Ist + 1));

    private void Scale(int k, double factor)
    {
        for (int j = _g.Jst; j <= _g.Jend; j++)
        {
            Span<double> r = InteriorRow(_rsd, j, k);
            for (int t = 0; t < r.Length; t++)
                r[t] *= factor;
        }
    }

    private void Update(int k, double relax)
    {
        for (int j = _g.Jst; j <= _g.Jend; j++)
        {
            ReadOnlySpan<double> r = InteriorRow(_rsd, j, k);
            Span<double> u = InteriorRow(_u, j, k);
            for (int t = 0; t < r.Length; t++)
                u[t] += relax * r[t];
        }
    }

    /// <summary>The root-mean-square over the interior points of each of the five variables of <paramref name="field"/> (collective).</summary>
    private void Norm(double[] field, double[] norms)
    {
        Grid g = _g;
        Array.Clear(_partial);
        for (int k = 2; k <= g.Nz - 1; k++)
        {
            for (int j = g.Jst; j <= g.Jend; j++)
            {
                for (int i = g.Ist; i <= g.Iend; i++)
                {
                    int o = g.Index(i, j, k);
                    for (int m = 0; m < Grid.Vars; m++)
                        _partial[m] += field[o + m] * field[o + m];
                }
            }
        }
        Reduce(norms);
    }

    private void Reduce(double[] norms)
    {
        Start(Phase.Reduce);
        _comm.Allreduce(_partial, _total, Op.Sum);
        Stop(Phase.Reduce);
        double points = (double)(_g.Nx0 - 2) * (_g.Ny0 - 2) * (_g.Nz0 - 2);
        for (int m = 0; m < Grid.Vars; m++)
            norms[m] = Math.Sqrt(_total[m] / points);
    }

    /// <summary>The root-mean-square difference from the exact solution over the interior points (NPB's error; collective).</summary>
    public double[] SolutionError()
    {
        Grid g = _g;
        Span<double> e = stackalloc double[Grid.Vars];
        Array.Clear(_partial);
        for (int k = 2; k <= g.Nz - 1; k++)
        {
            for (int j = g.Jst; j <= g.Jend; j++)
            {
                for (int i = g.Ist; i <= g.Iend; i++)
                {
                    Exact(g.Ipt + i, g.Jpt + j, k, e);
                    int o = g.Index(i, j, k);
                    for (int m = 0; m < Grid.Vars; m++)
                    {
                        double d = e[m] - _u[o + m];
                        _partial[m] += d * d;
                    }
                }
            }
        }
        double[] norms = new double[Grid.Vars];
        Reduce(norms);
        return norms;
    }

    /// <summary>
    /// The surface integral of the pressure over the faces of the box [2, nx0−1] × [2, ny0−2] ×
    /// [3, nz0−1] (NPB's pintgr), by the trapezoidal rule: a node's weight is the number of
    /// the face's cells it is a corner of, so each rank sums its own nodes and one reduction
    /// adds the ranks (collective).
    /// </summary>
    public double SurfaceIntegral()
    {
        Grid g = _g;
        int i1 = 2, i2 = g.Nx0 - 1, j1 = 2, j2 = g.Ny0 - 2, k1 = 3, k2 = g.Nz0 - 1;
        double dxi = 1.0 / (g.Nx0 - 1), deta = 1.0 / (g.Ny0 - 1), dzeta = 1.0 / (g.Nz0 - 1);
        double sumK = 0, sumJ = 0, sumI = 0;
        for (int k = 1; k <= g.Nz; k++)
        {
            for (int j = 1; j <= g.Ny; j++)
            {
                int gj = g.Jpt + j;
                for (int i = 1; i <= g.Nx; i++)
                {
                    int gi = g.Ipt + i;
                    bool onK = k == k1 || k == k2, onJ = gj == j1 || gj == j2, onI = gi == i1 || gi == i2;
                    if (!onK && !onJ && !onI)
                        continue;
                    double p = Pressure(g.Index(i, j, k));
                    if (onK)
                        sumK += Weight(gi, i1, i2) * Weight(gj, j1, j2) * p;
                    if (onJ)
                        sumJ += Weight(gi, i1, i2) * Weight(k, k1, k2) * p;
                    if (onI)
                        sumI += Weight(gj, j1, j2) * Weight(k, k1, k2) * p;
                }
            }
        }
        double[] partial = [dxi * deta * sumK, dxi * dzeta * sumJ, deta * dzeta * sumI], total = new double[3];
        _comm.Allreduce(partial, total, Op.Sum);
        return 0.25 * (total[0] + total[1] + total[2]);
    }

    private double Pressure(int o)
    {
        double[] u = _u;
        return C2 * (u[o + 4] - 0.5 * (u[o + 1] * u[o + 1] + u[o + 2] * u[o + 2] + u[o + 3] * u[o + 3]) / u[o]);
    }

    private static double Weight(int x, int lo, int hi) => x < lo || x > hi ? 0 : x == lo || x == hi ? 1 : 2;

    private void Start(Phase p)
    {
        if (_timed)
            Timers.Start((int)p);
    }

    private void Stop(Phase p)
    {
        if (_timed)
            Timers.Stop((int)p);
    }

    public void Dispose()
    {
        _halo.Dispose();
        _lower.Dispose();
        _upper.Dispose();
    }
}
