using System.MP;

namespace Npb.SP;

/// <summary>Message tags of SP's exchanges.</summary>
internal static class Tags
{
    /// <summary>Faces travelling up (to the successor) and down along axis a.</summary>
    public static int FaceUp(int a) => 1 + 2 * a;

    public static int FaceDown(int a) => 2 + 2 * a;

    /// <summary>The forward elimination's and the back substitution's messages along axis a.</summary>
    public static int Forward(int a) => 11 + a;

    public static int Backward(int a) => 21 + a;
}

/// <summary>Two layers of a cell's owned points across axis a (all five variables), starting at layer <see cref="First"/> along the axis.</summary>
internal readonly struct Face(Cell c, int a, int first)
{
    public int First { get; } = first;

    public int Count => Cell.Vars * 2 * c.Size[a == 0 ? 1 : 0] * c.Size[a == 2 ? 1 : 2];

    /// <summary>Copies the layers into <paramref name="buffer"/> (pack) or back from it.</summary>
    public void Copy(Span<double> buffer, bool pack)
    {
        int q = a == 0 ? 1 : 0, o = a == 2 ? 1 : 2;
        int nq = c.Size[q], no = c.Size[o], sq = c.Stride[q], so = c.Stride[o], sa = c.Stride[a];
        int at = 0;
        for (int m = 0; m < Cell.Vars; m++)
        {
            for (int t = 0; t < 2; t++)
            {
                for (int ov = 0; ov < no; ov++)
                {
                    int p = m * c.Points + c.Origin + (First + t) * sa + ov * so;
                    if (sq == 1)
                    {
                        Span<double> run = c.U.AsSpan(p, nq);
                        if (pack)
                            run.CopyTo(buffer.Slice(at, nq));
                        else
                            buffer.Slice(at, nq).CopyTo(run);
                        at += nq;
                        continue;
                    }
                    for (int qv = 0; qv < nq; qv++, p += sq, at++)
                    {
                        if (pack)
                            buffer[at] = c.U[p];
                        else
                            c.U[p] = buffer[at];
                    }
                }
            }
        }
    }
}

/// <summary>
/// The exchange of two ghost layers of u across every face between cells (NPB's copy_faces):
/// along each axis one message up to the successor and one down to the predecessor, each
/// holding the faces of all this rank's cells that have a neighbour that way, in cell order
/// (the neighbour's matching cells come in the same order). Persistent requests over pinned
/// buffers made once.
/// </summary>
internal sealed class FaceExchange : IDisposable
{
    private sealed class Link(Face[] faces, double[] buffer, PersistentRequest request)
    {
        public readonly Face[] Faces = faces;
        public readonly double[] Buffer = buffer;
        public readonly PersistentRequest Request = request;

        public void Copy(bool pack)
        {
            int at = 0;
            foreach (Face f in Faces)
            {
                f.Copy(Buffer.AsSpan(at, f.Count), pack);
                at += f.Count;
            }
        }
    }

    private readonly List<Link> _sends = [], _receives = [];

    public FaceExchange(Communicator comm, MultiPartition part)
    {
        int p = part.P;
        for (int a = 0; a < 3; a++)
        {
            Add(comm, part, a, send: true, peer: part.Successor[a], Tags.FaceUp(a), c => c.Coord[a] != p - 1, c => c.Size[a] - 2);
            Add(comm, part, a, send: false, peer: part.Predecessor[a], Tags.FaceUp(a), c => c.Coord[a] != 0, c => -2);
            Add(comm, part, a, send: true, peer: part.Predecessor[a], Tags.FaceDown(a), c => c.Coord[a] != 0, c => 0);
            Add(comm, part, a, send: false, peer: part.Successor[a], Tags.FaceDown(a), c => c.Coord[a] != p - 1, c => c.Size[a]);
        }
    }

    private void Add(Communicator comm, MultiPartition part, int a, bool send, int peer, int tag,
        Func<Cell, bool> included, Func<Cell, int> firstLayer)
    {
        Face[] faces = [.. part.Cells.Where(included).Select(c => new Face(c, a, firstLayer(c)))];
        double[] buffer = Mpi.AllocatePinned<double>(faces.Sum(f => f.Count));
        if (send)
            _sends.Add(new Link(faces, buffer, comm.SendInit(buffer, peer, tag)));
        else
            _receives.Add(new Link(faces, buffer, comm.RecvInit(buffer, peer, tag)));
    }

    /// <summary>Fills every cell's ghost layers that face another cell.</summary>
    public void Exchange()
    {
        foreach (Link r in _receives)
            r.Request.Start();
        foreach (Link s in _sends)
        {
            s.Copy(pack: true);
            s.Request.Start();
        }
        foreach (Link r in _receives)
        {
            r.Request.Wait();
            r.Copy(pack: false);
        }
        foreach (Link s in _sends)
            s.Request.Wait();
    }

    public void Dispose()
    {
        foreach (Link l in _sends.Concat(_receives))
            l.Request.Dispose();
    }
}

/// <summary>
/// The messages of one axis's pipelined line solve: at stage s a rank takes its predecessor's
/// last two eliminated rows for its cell at position s (sent at the predecessor's stage s − 1)
/// and, in the back substitution, its successor's first two solved rows. Persistent requests
/// per stage over pinned buffers made once; the receives of a whole solve are posted at its
/// start, in the order they will be consumed.
/// </summary>
internal sealed class Pipeline : IDisposable
{
    private readonly PersistentRequest?[] _fwdRecv, _fwdSend, _bwdRecv, _bwdSend;
    private readonly double[]?[] _fwdIn, _fwdOut, _bwdIn, _bwdOut;
    private readonly int _p;

    public Pipeline(Communicator comm, MultiPartition part, int a)
    {
        int p = _p = part.P;
        (_fwdRecv, _fwdSend, _bwdRecv, _bwdSend) = (new PersistentRequest?[p], new PersistentRequest?[p], new PersistentRequest?[p], new PersistentRequest?[p]);
        (_fwdIn, _fwdOut, _bwdIn, _bwdOut) = (new double[]?[p], new double[]?[p], new double[]?[p], new double[]?[p]);
        for (int s = 0; s < p; s++)
        {
            var lines = new Lines(part.Cells[part.Slice[a][s]], a);
            if (s > 0)
            {
                _fwdIn[s] = Mpi.AllocatePinned<double>(lines.ForwardCount);
                _fwdRecv[s] = comm.RecvInit(_fwdIn[s]!, part.Predecessor[a], Tags.Forward(a));
                _bwdOut[s] = Mpi.AllocatePinned<double>(lines.BackwardCount);
                _bwdSend[s] = comm.SendInit(_bwdOut[s]!, part.Predecessor[a], Tags.Backward(a));
            }
            if (s < p - 1)
            {
                _fwdOut[s] = Mpi.AllocatePinned<double>(lines.ForwardCount);
                _fwdSend[s] = comm.SendInit(_fwdOut[s]!, part.Successor[a], Tags.Forward(a));
                _bwdIn[s] = Mpi.AllocatePinned<double>(lines.BackwardCount);
                _bwdRecv[s] = comm.RecvInit(_bwdIn[s]!, part.Successor[a], Tags.Backward(a));
            }
        }
    }

    /// <summary>Posts the solve's receives: forward in stage order, backward in reverse stage order.</summary>
    public void Begin()
    {
        for (int s = 1; s < _p; s++)
            _fwdRecv[s]!.Start();
        for (int s = _p - 2; s >= 0; s--)
            _bwdRecv[s]!.Start();
    }

    public Span<double> ReceiveForward(int s)
    {
        _fwdRecv[s]!.Wait();
        return _fwdIn[s];
    }

    public Span<double> ForwardBuffer(int s) => _fwdOut[s];

    public void SendForward(int s) => _fwdSend[s]!.Start();

    public Span<double> ReceiveBackward(int s)
    {
        _bwdRecv[s]!.Wait();
        return _bwdIn[s];
    }

    public Span<double> BackwardBuffer(int s) => _bwdOut[s];

    public void SendBackward(int s) => _bwdSend[s]!.Start();

    /// <summary>Completes the solve's sends, so their buffers can be filled again.</summary>
    public void End()
    {
        for (int s = 0; s < _p; s++)
        {
            if (_fwdSend[s] is { IsActive: true } f)
                f.Wait();
            if (_bwdSend[s] is { IsActive: true } b)
                b.Wait();
        }
    }

    public void Dispose()
    {
        foreach (PersistentRequest? r in _fwdRecv.Concat(_fwdSend).Concat(_bwdRecv).Concat(_bwdSend))
            r?.Dispose();
    }
}
