using Partition = Npb.Multipartition.MultiPartition<Npb.BT.Cell>;
using System.MP;
using System.Runtime.Intrinsics;
using Npb.Common;
using static Npb.BT.Flow;
using static Npb.Common.Gas;

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
        int d = _d, s = c.Stride[d];
        var (da, db) = Cell.Across(d);
        int sa = c.Stride[da], sb = c.Stride[db];
        int l0 = c.Lo(d), l1 = c.Hi(d);
        bool first = c.First[d], last = c.Last[d];
        double t1 = _k.Dt * _k.T1, t2 = _k.Dt * _k.T2, diagonal = t1 * Dissipation[d];
        double* a = stackalloc double[Block];
        double* bb = stackalloc double[Block];
        int line = 0;
        fixed (double* u = c.U, rhs = c.Rhs, lhsc = c.Lhsc, rhoI = c.RhoI, qs = c.Qs, fjac = _fjac, njac = _njac)
        fixed (double* incoming = _forwardIn, outgoing = _forwardOut)
        {
            for (int b = c.Lo(db); b <= c.Hi(db); b++)
            {
                for (int ia = c.Lo(da); ia <= c.Hi(da); ia++, line++)
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
        int d = _d, s = c.Stride[d];
        var (da, db) = Cell.Across(d);
        int sa = c.Stride[da], sb = c.Stride[db];
        int l0 = c.Lo(d), l1 = c.Hi(d);
        bool first = c.First[d], last = c.Last[d];
        int line = 0;
        fixed (double* rhs = c.Rhs, lhsc = c.Lhsc, incoming = _backwardIn, outgoing = _backwardOut)
        {
            for (int b = c.Lo(db); b <= c.Hi(db); b++)
            {
                for (int ia = c.Lo(da); ia <= c.Hi(da); ia++, line++)
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
        Combine(a, f, n, -t2, -t1);
        for (int m = 0; m < Vars; m++)
            a[m * (Vars + 1)] -= diagonal;
    }

    /// <summary>B(l) = I + 2dt/h²·njac(l) + 2dt/h²·d·I.</summary>
    private static void DiagonalBlock(double* b, double* n, double t1, double diagonal)
    {
        Combine(b, n, n, 0.0, t1 * 2.0);
        for (int m = 0; m < Vars; m++)
            b[m * (Vars + 1)] += 1.0 + 2.0 * diagonal;
    }

    /// <summary>C(l) = dt/(2h)·fjac(l+1) − dt/h²·njac(l+1) − dt/h²·d·I.</summary>
    private static void UpperBlock(double* c, double* f, double* n, double t1, double t2, double diagonal)
    {
        Combine(c, f, n, t2, -t1);
        for (int m = 0; m < Vars; m++)
            c[m * (Vars + 1)] -= diagonal;
    }

    /// <summary>x = α·f + β·n over one block, four entries at a time where the hardware has 256-bit vectors.</summary>
    private static void Combine(double* x, double* f, double* n, double alpha, double beta)
    {
        int e = 0;
        if (Vector256.IsHardwareAccelerated)
        {
            Vector256<double> va = Vector256.Create(alpha), vb = Vector256.Create(beta);
            for (; e + 4 <= Block; e += 4)
                (va * Vector256.Load(f + e) + vb * Vector256.Load(n + e)).Store(x + e);
        }
        for (; e < Block; e++)
            x[e] = alpha * f[e] + beta * n[e];
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
        r[0] = r[0] - a[0] * x0 - a[1] * x1 - a[2] * x2 - a[3] * x3 - a[4] * x4;
        r[1] = r[1] - a[5] * x0 - a[6] * x1 - a[7] * x2 - a[8] * x3 - a[9] * x4;
        r[2] = r[2] - a[10] * x0 - a[11] * x1 - a[12] * x2 - a[13] * x3 - a[14] * x4;
        r[3] = r[3] - a[15] * x0 - a[16] * x1 - a[17] * x2 - a[18] * x3 - a[19] * x4;
        r[4] = r[4] - a[20] * x0 - a[21] * x1 - a[22] * x2 - a[23] * x3 - a[24] * x4;
    }

    /// <summary>B −= A·C.</summary>
    public static void MatMulSub(double* a, double* c, double* b)
    {
        for (int m = 0; m < Vars; m++, a += Vars, b += Vars)
        {
            double a0 = a[0], a1 = a[1], a2 = a[2], a3 = a[3], a4 = a[4];
            b[0] = b[0] - a0 * c[0] - a1 * c[5] - a2 * c[10] - a3 * c[15] - a4 * c[20];
            b[1] = b[1] - a0 * c[1] - a1 * c[6] - a2 * c[11] - a3 * c[16] - a4 * c[21];
            b[2] = b[2] - a0 * c[2] - a1 * c[7] - a2 * c[12] - a3 * c[17] - a4 * c[22];
            b[3] = b[3] - a0 * c[3] - a1 * c[8] - a2 * c[13] - a3 * c[18] - a4 * c[23];
            b[4] = b[4] - a0 * c[4] - a1 * c[9] - a2 * c[14] - a3 * c[19] - a4 * c[24];
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
            double c0 = cp[0] * pivot, c1 = cp[1] * pivot, c2 = cp[2] * pivot, c3 = cp[3] * pivot, c4 = cp[4] * pivot;
            cp[0] = c0;
            cp[1] = c1;
            cp[2] = c2;
            cp[3] = c3;
            cp[4] = c4;
            double rp = r[p] * pivot;
            r[p] = rp;
            for (int q = 0; q < Vars; q++)
            {
                if (q == p)
                    continue;
                double* bq = b + Vars * q;
                double* cq = c + Vars * q;
                double coeff = bq[p];
                for (int n = p + 1; n < Vars; n++)
                    bq[n] -= coeff * bp[n];
                cq[0] -= coeff * c0;
                cq[1] -= coeff * c1;
                cq[2] -= coeff * c2;
                cq[3] -= coeff * c3;
                cq[4] -= coeff * c4;
                r[q] -= coeff * rp;
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
            double rp = r[p] * pivot;
            r[p] = rp;
            for (int q = 0; q < Vars; q++)
            {
                if (q == p)
                    continue;
                double* bq = b + Vars * q;
                double coeff = bq[p];
                for (int n = p + 1; n < Vars; n++)
                    bq[n] -= coeff * bp[n];
                r[q] -= coeff * rp;
            }
        }
    }
}
