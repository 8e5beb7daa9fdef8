using System.MP;
using Npb.Common;
using static Npb.BT.Flow;

namespace Npb.BT;

/// <summary>
/// The implicit solve along one axis (NPB's x_solve, y_solve, z_solve): on every line of
/// interior points the block-tridiagonal system A·Δ(l−1) + B·Δ(l) + C·Δ(l+1) = rhs(l) with the
/// 5×5 blocks of the linearized fluxes and viscous terms, Δ = 0 on the boundary. Block
/// Gaussian elimination runs forward through the cells along the axis, stage by stage, each
/// rank passing the last eliminated row of every line (C' and rhs', 30 doubles) to the rank
/// with the next cell; back-substitution returns the first Δ of every line (5 doubles).
/// In each stage every rank works on one of its cells (the multi-partition).
/// </summary>
internal sealed unsafe class LineSolver : IDisposable
{
    private const int ForwardTag = 20, BackwardTag = 30;

    private readonly Partition _part;
    private readonly Coefficients _k;
    private readonly int _d;
    private readonly Timers _timers;
    private readonly int _solveTimer, _commTimer;
    private readonly bool _timed = Timers.Detailed;
    private readonly double[] _fjac, _njac;
    private readonly double[] _forwardOut, _forwardIn, _backwardOut, _backwardIn;
    private readonly PersistentRequest?[] _forwardSend, _forwardReceive, _backwardSend, _backwardReceive;

    public LineSolver(Communicator comm, Partition part, Coefficients k, int d, Timers timers, int solveTimer, int commTimer)
    {
        _part = part;
        _k = k;
        _d = d;
        _timers = timers;
        _solveTimer = solveTimer;
        _commTimer = commTimer;
        int maxSize = part.Cells.Max(c => c.Size[d]);
        _fjac = new double[Block * (maxSize + 2)];
        _njac = new double[Block * (maxSize + 2)];
        int p = part.P, maxLines = part.Cells.Max(c => c.InteriorLines(d));
        _forwardOut = Mpi.AllocatePinned<double>((Block + Vars) * maxLines);
        _forwardIn = Mpi.AllocatePinned<double>((Block + Vars) * maxLines);
        _backwardOut = Mpi.AllocatePinned<double>(Vars * maxLines);
        _backwardIn = Mpi.AllocatePinned<double>(Vars * maxLines);
        _forwardSend = new PersistentRequest?[p];
        _forwardReceive = new PersistentRequest?[p];
        _backwardSend = new PersistentRequest?[p];
        _backwardReceive = new PersistentRequest?[p];
        for (int stage = 0; stage < p; stage++)
        {
            int lines = part.AtStage(d, stage).InteriorLines(d);
            if (stage < p - 1)
            {
                _forwardSend[stage] = comm.SendInit(_forwardOut, 0, (Block + Vars) * lines, part.Successor[d], ForwardTag + d);
                _backwardReceive[stage] = comm.RecvInit(_backwardIn, 0, Vars * lines, part.Successor[d], BackwardTag + d);
            }
            if (stage > 0)
            {
                _forwardReceive[stage] = comm.RecvInit(_forwardIn, 0, (Block + Vars) * lines, part.Predecessor[d], ForwardTag + d);
                _backwardSend[stage] = comm.SendInit(_backwardOut, 0, Vars * lines, part.Predecessor[d], BackwardTag + d);
            }
        }
    }

    /// <summary>Solves the systems of every line along the axis; the solution replaces rhs.</summary>
    public void Solve()
    {
        if (_timed)
            _timers.Start(_solveTimer);
        int p = _part.P;
        PersistentRequest? pending = null;
        for (int stage = 0; stage < p; stage++)
        {
            Receive(_forwardReceive[stage], ref pending);
            Forward(_part.AtStage(_d, stage));
            pending = _forwardSend[stage];
            pending?.Start();
        }
        Complete(ref pending);
        for (int stage = p - 1; stage >= 0; stage--)
        {
            Receive(_backwardReceive[stage], ref pending);
            Backward(_part.AtStage(_d, stage));
            pending = _backwardSend[stage];
            pending?.Start();
        }
        Complete(ref pending);
        if (_timed)
            _timers.Stop(_solveTimer);
    }

    /// <summary>Receives a stage's input, then completes the previous stage's send, whose buffer the stage fills again.</summary>
    private void Receive(PersistentRequest? receive, ref PersistentRequest? pending)
    {
        if (receive is null)
            return;
        if (_timed)
            _timers.Start(_commTimer);
        receive.Start();
        receive.Wait();
        Complete(ref pending);
        if (_timed)
            _timers.Stop(_commTimer);
    }

    private static void Complete(ref PersistentRequest? pending)
    {
        pending?.Wait();
        pending = null;
    }

    /// <summary>Forward elimination on every line of <paramref name="c"/>: rhs becomes B'⁻¹rhs', Lhsc becomes B'⁻¹C.</summary>
    private void Forward(Cell c)
    {
        int d = _d, s = c.Stride(d);
        var (da, db) = Cell.Across(d);
        int sa = c.Stride(da), sb = c.Stride(db);
        int l0 = c.InteriorLow(d), l1 = c.InteriorHigh(d);
        bool first = c.First[d], last = c.Last[d];
        double t1 = _k.Dt * _k.T1, t2 = _k.Dt * _k.T2, diagonal = t1 * Dissipation[d];
        double* a = stackalloc double[Block];
        double* bb = stackalloc double[Block];
        int line = 0;
        fixed (double* u = c.U, rhs = c.Rhs, lhsc = c.Lhsc, rhoI = c.RhoI, qs = c.Qs, fjac = _fjac, njac = _njac)
        fixed (double* incoming = _forwardIn, outgoing = _forwardOut)
        {
            for (int b = c.InteriorLow(db); b <= c.InteriorHigh(db); b++)
            {
                for (int ia = c.InteriorLow(da); ia <= c.InteriorHigh(da); ia++, line++)
                {
                    int p0 = c.Origin + ia * sa + b * sb;
                    // Jacobians at l0−1 .. l1+1, stored at index l+1.
                    for (int l = l0 - 1; l <= l1 + 1; l++)
                    {
                        int pt = p0 + l * s;
                        Jacobians(u + Vars * pt, rhoI[pt], qs[pt], fjac + Block * (l + 1), njac + Block * (l + 1));
                    }
                    for (int l = l0; l <= l1; l++)
                    {
                        int pt = p0 + l * s;
                        double* r = rhs + Vars * pt;
                        double* cc = lhsc + Block * pt;
                        LowerBlock(a, fjac + Block * l, njac + Block * l, t1, t2, diagonal);
                        DiagonalBlock(bb, njac + Block * (l + 1), t1, diagonal);
                        double* previousC = null, previousR = null;
                        if (l > l0)
                        {
                            previousC = lhsc + Block * (pt - s);
                            previousR = rhs + Vars * (pt - s);
                        }
                        else if (!first)
                        {
                            previousC = incoming + (Block + Vars) * line;
                            previousR = previousC + Block;
                        }
                        if (previousC != null)
                        {
                            Blocks.MatVecSub(a, previousR, r);
                            Blocks.MatMulSub(a, previousC, bb);
                        }
                        if (last && l == l1)
                        {
                            // Δ beyond the last interior point is 0: C there multiplies nothing.
                            Blocks.Solve(bb, r);
                        }
                        else
                        {
                            UpperBlock(cc, fjac + Block * (l + 2), njac + Block * (l + 2), t1, t2, diagonal);
                            Blocks.Solve(bb, cc, r);
                        }
                    }
                    if (!last)
                    {
                        int pt = p0 + l1 * s;
                        double* o = outgoing + (Block + Vars) * line;
                        new ReadOnlySpan<double>(lhsc + Block * pt, Block).CopyTo(new Span<double>(o, Block));
                        new ReadOnlySpan<double>(rhs + Vars * pt, Vars).CopyTo(new Span<double>(o + Block, Vars));
                    }
                }
            }
        }
    }

    /// <summary>Back-substitution on every line of <paramref name="c"/>: rhs becomes Δ.</summary>
    private void Backward(Cell c)
    {
        int d = _d, s = c.Stride(d);
        var (da, db) = Cell.Across(d);
        int sa = c.Stride(da), sb = c.Stride(db);
        int l0 = c.InteriorLow(d), l1 = c.InteriorHigh(d);
        bool first = c.First[d], last = c.Last[d];
        int line = 0;
        fixed (double* rhs = c.Rhs, lhsc = c.Lhsc, incoming = _backwardIn, outgoing = _backwardOut)
        {
            for (int b = c.InteriorLow(db); b <= c.InteriorHigh(db); b++)
            {
                for (int ia = c.InteriorLow(da); ia <= c.InteriorHigh(da); ia++, line++)
                {
                    int p0 = c.Origin + ia * sa + b * sb;
                    if (!last)
                    {
                        int pt = p0 + l1 * s;
                        Blocks.MatVecSub(lhsc + Block * pt, incoming + Vars * line, rhs + Vars * pt);
                    }
                    for (int l = l1 - 1; l >= l0; l--)
                    {
                        int pt = p0 + l * s;
                        Blocks.MatVecSub(lhsc + Block * pt, rhs + Vars * (pt + s), rhs + Vars * pt);
                    }
                    if (!first)
                        new ReadOnlySpan<double>(rhs + Vars * (p0 + l0 * s), Vars).CopyTo(new Span<double>(outgoing + Vars * line, Vars));
                }
            }
        }
    }

    /// <summary>
    /// The flux Jacobian (fjac) and the viscous Jacobian (njac) along the axis at one point,
    /// from u there, 1/ρ and |v|²/2 (row-major 5×5 blocks).
    /// </summary>
    private void Jacobians(double* u, double rhoI, double qs, double* f, double* n)
    {
        int md = 1 + _d;
        double tmp1 = rhoI, tmp2 = tmp1 * tmp1, tmp3 = tmp1 * tmp2;
        double ud = u[md];
        new Span<double>(f, Block).Clear();
        new Span<double>(n, Block).Clear();
        f[md] = 1.0;
        double energy = 0;
        for (int r = 1; r <= 3; r++)
        {
            double* fr = f + Vars * r;
            double* nr = n + Vars * r;
            if (r == md)
            {
                fr[0] = -(ud * ud * tmp2) + C2 * qs;
                for (int col = 1; col <= 3; col++)
                    fr[col] = col == md ? (2.0 - C2) * ud * tmp1 : -C2 * u[col] * tmp1;
                fr[4] = C2;
            }
            else
            {
                fr[0] = -(u[r] * ud) * tmp2;
                fr[r] = ud * tmp1;
                fr[md] = u[r] * tmp1;
            }
            double viscous = r == md ? Con43 * C3C4 : C3C4;
            nr[0] = -viscous * tmp2 * u[r];
            nr[r] = viscous * tmp1;
            energy -= (viscous - C1345) * tmp3 * (u[r] * u[r]);
            n[4 * Vars + r] = (viscous - C1345) * tmp2 * u[r];
            f[4 * Vars + r] = r == md ? C1 * u[4] * tmp1 - C2 * (ud * ud * tmp2 + qs) : -C2 * (u[r] * ud) * tmp2;
        }
        f[4 * Vars] = (C2 * 2.0 * qs - C1 * (u[4] * tmp1)) * (ud * tmp1);
        f[4 * Vars + 4] = C1 * (ud * tmp1);
        n[4 * Vars] = energy - C1345 * tmp2 * u[4];
        n[4 * Vars + 4] = C1345 * tmp1;
    }

    /// <summary>A(l) = −dt/(2h)·fjac(l−1) − dt/h²·njac(l−1) − dt/h²·d·I.</summary>
    private static void LowerBlock(double* a, double* f, double* n, double t1, double t2, double diagonal)
    {
        for (int e = 0; e < Block; e++)
            a[e] = -t2 * f[e] - t1 * n[e];
        for (int m = 0; m < Vars; m++)
            a[m * (Vars + 1)] -= diagonal;
    }

    /// <summary>B(l) = I + 2dt/h²·njac(l) + 2dt/h²·d·I.</summary>
    private static void DiagonalBlock(double* b, double* n, double t1, double diagonal)
    {
        for (int e = 0; e < Block; e++)
            b[e] = t1 * 2.0 * n[e];
        for (int m = 0; m < Vars; m++)
            b[m * (Vars + 1)] += 1.0 + 2.0 * diagonal;
    }

    /// <summary>C(l) = dt/(2h)·fjac(l+1) − dt/h²·njac(l+1) − dt/h²·d·I.</summary>
    private static void UpperBlock(double* c, double* f, double* n, double t1, double t2, double diagonal)
    {
        for (int e = 0; e < Block; e++)
            c[e] = t2 * f[e] - t1 * n[e];
        for (int m = 0; m < Vars; m++)
            c[m * (Vars + 1)] -= diagonal;
    }

    public void Dispose()
    {
        foreach (PersistentRequest?[] set in new[] { _forwardSend, _forwardReceive, _backwardSend, _backwardReceive })
        {
            foreach (PersistentRequest? r in set)
                r?.Dispose();
        }
    }
}

/// <summary>The 5×5 block operations of the block-tridiagonal solves (row-major blocks, 5-vectors).</summary>
internal static unsafe class Blocks
{
    /// <summary>r −= A·x.</summary>
    public static void MatVecSub(double* a, double* x, double* r)
    {
        double x0 = x[0], x1 = x[1], x2 = x[2], x3 = x[3], x4 = x[4];
        for (int m = 0; m < Vars; m++, a += Vars)
            r[m] = r[m] - a[0] * x0 - a[1] * x1 - a[2] * x2 - a[3] * x3 - a[4] * x4;
    }

    /// <summary>B −= A·C.</summary>
    public static void MatMulSub(double* a, double* c, double* b)
    {
        for (int m = 0; m < Vars; m++, a += Vars, b += Vars)
        {
            double a0 = a[0], a1 = a[1], a2 = a[2], a3 = a[3], a4 = a[4];
            for (int n = 0; n < Vars; n++)
                b[n] = b[n] - a0 * c[n] - a1 * c[Vars + n] - a2 * c[2 * Vars + n] - a3 * c[3 * Vars + n] - a4 * c[4 * Vars + n];
        }
    }

    /// <summary>
    /// C ← B⁻¹C and r ← B⁻¹r by Gauss–Jordan elimination on B without pivoting (B is
    /// diagonally dominant); B is destroyed (NPB's binvcrhs).
    /// </summary>
    public static void Solve(double* b, double* c, double* r)
    {
        for (int p = 0; p < Vars; p++)
        {
            double* bp = b + Vars * p;
            double* cp = c + Vars * p;
            double pivot = 1.0 / bp[p];
            for (int n = p + 1; n < Vars; n++)
                bp[n] *= pivot;
            for (int n = 0; n < Vars; n++)
                cp[n] *= pivot;
            r[p] *= pivot;
            for (int q = 0; q < Vars; q++)
            {
                if (q == p)
                    continue;
                double* bq = b + Vars * q;
                double* cq = c + Vars * q;
                double coeff = bq[p];
                for (int n = p + 1; n < Vars; n++)
                    bq[n] -= coeff * bp[n];
                for (int n = 0; n < Vars; n++)
                    cq[n] -= coeff * cp[n];
                r[q] -= coeff * r[p];
            }
        }
    }

    /// <summary>r ← B⁻¹r by the same elimination (NPB's binvrhs); B is destroyed.</summary>
    public static void Solve(double* b, double* r)
    {
        for (int p = 0; p < Vars; p++)
        {
            double* bp = b + Vars * p;
            double pivot = 1.0 / bp[p];
            for (int n = p + 1; n < Vars; n++)
                bp[n] *= pivot;
            r[p] *= pivot;
            for (int q = 0; q < Vars; q++)
            {
                if (q == p)
                    continue;
                double* bq = b + Vars * q;
                double coeff = bq[p];
                for (int n = p + 1; n < Vars; n++)
                    bq[n] -= coeff * bp[n];
                r[q] -= coeff * r[p];
            }
        }
    }
}
