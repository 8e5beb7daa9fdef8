using MultiPartition = Npb.Multipartition.MultiPartition<Npb.SP.Cell>;
using System.MP;
using Npb.Common;
using Npb.Multipartition;

namespace Npb.SP;

/// <summary>
/// One rank's part of SP: its cells of the multi-partition and the time steps of NPB's adi —
/// the face exchange and right-hand side, the x, y and z factors solved along lines that cross
/// the ranks in p pipelined stages, and the update.
/// </summary>
internal sealed class Solver : IDisposable
{
    /// <summary>The timers of the detailed report (NPB_TIMERS=1 or a file timer.flag).</summary>
    public enum Phase { Total, Rhs, XSolve, YSolve, ZSolve, Faces, XComm, YComm, ZComm }

    private readonly Communicator _comm;
    private readonly MultiPartition _part;
    private readonly Model _model;
    private readonly FaceExchange? _faces;
    private readonly Pipeline[]? _pipelines;
    private readonly bool _timed = Timers.Detailed;

    public Timers Timers { get; } = new(Enum.GetNames<Phase>());

    public Cell[] Cells => _part.Cells;

    public Solver(Communicator comm, MultiPartition part, Model model)
    {
        _comm = comm;
        _part = part;
        _model = model;
        if (part.P > 1)
        {
            _faces = new FaceExchange(comm, part.Cells, part.P, part.Predecessor, part.Successor, Tags.Faces);
            _pipelines = [new Pipeline(comm, part, 0), new Pipeline(comm, part, 1), new Pipeline(comm, part, 2)];
        }
        foreach (Cell c in part.Cells)
        {
            Setup.InitializeLhs(c);
            Setup.Forcing(model, c);
        }
    }

    /// <summary>Sets u to the initial state.</summary>
    public void Initialize()
    {
        foreach (Cell c in _part.Cells)
            Setup.Initialize(_model, c);
    }

    /// <summary>The ghost layers from the neighbouring cells, then the right-hand side of every cell.</summary>
    public void ComputeRhs()
    {
        if (_faces != null)
        {
            Start(Phase.Faces);
            _faces.Exchange();
            Stop(Phase.Faces);
        }
        Start(Phase.Rhs);
        foreach (Cell c in _part.Cells)
            Rhs.Compute(_model, c);
        Stop(Phase.Rhs);
    }

    /// <summary>One time step (NPB's adi).</summary>
    public void Step()
    {
        ComputeRhs();
        Start(Phase.Rhs);
        foreach (Cell c in _part.Cells)
            Rhs.ToEigenbasis(c);
        Stop(Phase.Rhs);
        Solve(0, Phase.XSolve, Phase.XComm);
        Solve(1, Phase.YSolve, Phase.YComm);
        Solve(2, Phase.ZSolve, Phase.ZComm);
        foreach (Cell c in _part.Cells)
            Rhs.Add(c);
    }

    /// <summary>
    /// The factor of axis a on every line: forward elimination through this rank's cells in the
    /// order of their position along the axis (stage s handles the cell at position s, after the
    /// predecessor's cell at s − 1 sent its last two rows), then back substitution in reverse
    /// order, each cell sending its first two solved rows back; after its substitution a cell's
    /// rhs is transformed for the next factor.
    /// </summary>
    private void Solve(int a, Phase phase, Phase comm)
    {
        Start(phase);
        int p = _part.P;
        Pipeline? pipe = _pipelines?[a];
        if (pipe != null)
        {
            Start(comm);
            pipe.Begin();
            Stop(comm);
        }
        for (int s = 0; s < p; s++)
        {
            var lines = new Lines(_part.Cells[_part.Slice[a][s]], a);
            lines.Build(_model);
            if (s > 0)
            {
                Start(comm);
                lines.UnpackForward(pipe!.ReceiveForward(s));
                Stop(comm);
            }
            lines.Forward(s > 0 ? -2 : 0);
            if (s < p - 1)
            {
                Start(comm);
                lines.PackForward(pipe!.ForwardBuffer(s));
                pipe.SendForward(s);
                Stop(comm);
            }
        }
        for (int s = p - 1; s >= 0; s--)
        {
            Cell c = _part.Cells[_part.Slice[a][s]];
            var lines = new Lines(c, a);
            if (s < p - 1)
            {
                Start(comm);
                lines.UnpackBackward(pipe!.ReceiveBackward(s));
                Stop(comm);
            }
            lines.Backward(s < p - 1 ? c.Size[a] - 1 : c.Size[a] - 2);
            if (s > 0)
            {
                Start(comm);
                lines.PackBackward(pipe!.BackwardBuffer(s));
                pipe.SendBackward(s);
                Stop(comm);
            }
            Eigen.AfterSolve(c, a);
        }
        if (pipe != null)
        {
            Start(comm);
            pipe.End();
            Stop(comm);
        }
        Stop(phase);
    }

    /// <summary>The root-mean-square error of u against the exact solution over the whole grid (collective).</summary>
    public double[] ErrorNorm() => Norms.Error(_comm, _part.Cells, _model.N);

    /// <summary>The root-mean-square of the right-hand side over the interior (collective); call after <see cref="ComputeRhs"/>.</summary>
    public double[] RhsNorm() => Norms.Rhs(_comm, _part.Cells, _model.N);

    public void Start(Phase t)
    {
        if (_timed || t == Phase.Total)
            Timers.Start((int)t);
    }

    public void Stop(Phase t)
    {
        if (_timed || t == Phase.Total)
            Timers.Stop((int)t);
    }

    public void Dispose()
    {
        _faces?.Dispose();
        if (_pipelines != null)
        {
            foreach (Pipeline p in _pipelines)
                p.Dispose();
        }
    }
}
