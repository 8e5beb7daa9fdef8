using System.MP;

namespace Npb.LU;

/// <summary>
/// A layer of points on one face of a rank's box: all points with i (or j) fixed at
/// <see cref="Layer"/>, the other in-plane index running over [<see cref="Lo"/>, <see cref="Hi"/>],
/// at one k. Packs such a line into a message buffer and unpacks it back, five doubles a point.
/// </summary>
internal readonly struct FaceLine(Grid grid, bool fixedI, int layer, int lo, int hi)
{
    /// <summary>Fixed i (the line runs along j, strided) or fixed j (the line runs along i, contiguous).</summary>
    public bool FixedI { get; } = fixedI;
    public int Layer { get; } = layer;
    public int Lo { get; } = lo;
    public int Hi { get; } = hi;

    /// <summary>Doubles in one line.</summary>
    public int Count => Grid.Vars * (Hi - Lo + 1);

    public void Pack(double[] field, int k, Span<double> buffer)
    {
        if (FixedI)
        {
            int src = grid.Index(Layer, Lo, k), stride = grid.StrideJ;
            for (int t = 0, n = Hi - Lo + 1; t < n; t++, src += stride)
                field.AsSpan(src, Grid.Vars).CopyTo(buffer.Slice(t * Grid.Vars, Grid.Vars));
        }
        else
        {
            field.AsSpan(grid.Index(Lo, Layer, k), Count).CopyTo(buffer);
        }
    }

    public void Unpack(ReadOnlySpan<double> buffer, double[] field, int k)
    {
        if (FixedI)
        {
            int dst = grid.Index(Layer, Lo, k), stride = grid.StrideJ;
            for (int t = 0, n = Hi - Lo + 1; t < n; t++, dst += stride)
                buffer.Slice(t * Grid.Vars, Grid.Vars).CopyTo(field.AsSpan(dst, Grid.Vars));
        }
        else
        {
            buffer[..Count].CopyTo(field.AsSpan(grid.Index(Lo, Layer, k), Count));
        }
    }
}

/// <summary>Message tags of LU's exchanges, one per kind and direction of travel.</summary>
internal static class Tags
{
    public const int HaloUpI = 1, HaloDownI = 2, HaloUpJ = 3, HaloDownJ = 4;
    public const int LowerI = 11, LowerJ = 12, UpperI = 13, UpperJ = 14;
}

/// <summary>
/// The exchange of two ghost layers on each side in i and j before the residual is formed
/// (NPB's exchange_3, both directions at once: the residual's stencils are axis-aligned, so the
/// corners are never read). Each face is one persistent send and one persistent receive over
/// pinned buffers made once.
/// </summary>
internal sealed class HaloExchange : IDisposable
{
    private sealed class Face(FaceLine[] outgoing, FaceLine[] incoming, double[] outBuffer, double[] inBuffer,
        PersistentRequest send, PersistentRequest receive)
    {
        public readonly FaceLine[] Outgoing = outgoing, Incoming = incoming;
        public readonly double[] OutBuffer = outBuffer, InBuffer = inBuffer;
        public readonly PersistentRequest Send = send, Receive = receive;
    }

    private readonly Face[] _faces;
    private readonly int _nz;

    public HaloExchange(Communicator comm, Grid g)
    {
        _nz = g.Nz;
        var faces = new List<Face>();
        void Add(int peer, bool fixedI, int send0, int recv0, int lo, int hi, int sendTag, int recvTag)
        {
            if (peer < 0)
                return;
            FaceLine[] outgoing = [new(g, fixedI, send0, lo, hi), new(g, fixedI, send0 + 1, lo, hi)];
            FaceLine[] incoming = [new(g, fixedI, recv0, lo, hi), new(g, fixedI, recv0 + 1, lo, hi)];
            int count = 2 * outgoing[0].Count * g.Nz;
            double[] outBuffer = Mpi.AllocatePinned<double>(count), inBuffer = Mpi.AllocatePinned<double>(count);
            faces.Add(new Face(outgoing, incoming, outBuffer, inBuffer,
                comm.SendInit(outBuffer, peer, sendTag), comm.RecvInit(inBuffer, peer, recvTag)));
        }
        Add(g.ILow, true, 1, -1, 1, g.Ny, Tags.HaloDownI, Tags.HaloUpI);
        Add(g.IHigh, true, g.Nx - 1, g.Nx + 1, 1, g.Ny, Tags.HaloUpI, Tags.HaloDownI);
        Add(g.JLow, false, 1, -1, 1, g.Nx, Tags.HaloDownJ, Tags.HaloUpJ);
        Add(g.JHigh, false, g.Ny - 1, g.Ny + 1, 1, g.Nx, Tags.HaloUpJ, Tags.HaloDownJ);
        _faces = [.. faces];
    }

    /// <summary>Fills the ghost layers of <paramref name="field"/> from the neighbours' edges.</summary>
    public void Exchange(double[] field)
    {
        foreach (Face f in _faces)
            f.Receive.Start();
        foreach (Face f in _faces)
        {
            Copy(f.Outgoing, field, f.OutBuffer, pack: true);
            f.Send.Start();
        }
        foreach (Face f in _faces)
        {
            f.Receive.Wait();
            Copy(f.Incoming, field, f.InBuffer, pack: false);
        }
        foreach (Face f in _faces)
            f.Send.Wait();
    }

    private void Copy(FaceLine[] layers, double[] field, double[] buffer, bool pack)
    {
        int pos = 0;
        foreach (FaceLine line in layers)
        {
            for (int k = 1; k <= _nz; k++, pos += line.Count)
            {
                if (pack)
                    line.Pack(field, k, buffer.AsSpan(pos, line.Count));
                else
                    line.Unpack(buffer.AsSpan(pos, line.Count), field, k);
            }
        }
    }

    public void Dispose()
    {
        foreach (Face f in _faces)
        {
            f.Send.Dispose();
            f.Receive.Dispose();
        }
    }
}

/// <summary>
/// The pipelined exchange of the SSOR sweeps (NPB's exchange_1): in the lower sweep a rank
/// takes plane k's last values of its low-i and low-j neighbours before solving plane k, and
/// passes its own high edges on after; the upper sweep runs the other way. Each link keeps two
/// persistent requests over two pinned buffers, so the receive for the plane after next is
/// already posted while this plane is solved, and a send buffer is reused only after its
/// previous send completed.
/// </summary>
internal sealed class Wavefront : IDisposable
{
    private sealed class Link(FaceLine line, double[][] buffers, PersistentRequest[] requests)
    {
        public readonly FaceLine Line = line;
        public readonly double[][] Buffers = buffers;
        public readonly PersistentRequest[] Requests = requests;
    }

    private readonly Link[] _in, _out;
    private readonly int _planes;

    private Wavefront(Link[] incoming, Link[] outgoing, int planes)
    {
        _in = incoming;
        _out = outgoing;
        _planes = planes;
    }

    /// <summary>The links of the lower sweep (in from low i and low j, out to high i and high j).</summary>
    public static Wavefront Lower(Communicator comm, Grid g) => new(
        [.. Links(comm, g.ILow, new FaceLine(g, true, 0, g.Jst, g.Jend), Tags.LowerI, receive: true),
         .. Links(comm, g.JLow, new FaceLine(g, false, 0, g.Ist, g.Iend), Tags.LowerJ, receive: true)],
        [.. Links(comm, g.IHigh, new FaceLine(g, true, g.Nx, g.Jst, g.Jend), Tags.LowerI, receive: false),
         .. Links(comm, g.JHigh, new FaceLine(g, false, g.Ny, g.Ist, g.Iend), Tags.LowerJ, receive: false)],
        g.Nz - 2);

    /// <summary>The links of the upper sweep (in from high i and high j, out to low i and low j).</summary>
    public static Wavefront Upper(Communicator comm, Grid g) => new(
        [.. Links(comm, g.IHigh, new FaceLine(g, true, g.Nx + 1, g.Jst, g.Jend), Tags.UpperI, receive: true),
         .. Links(comm, g.JHigh, new FaceLine(g, false, g.Ny + 1, g.Ist, g.Iend), Tags.UpperJ, receive: true)],
        [.. Links(comm, g.ILow, new FaceLine(g, true, 1, g.Jst, g.Jend), Tags.UpperI, receive: false),
         .. Links(comm, g.JLow, new FaceLine(g, false, 1, g.Ist, g.Iend), Tags.UpperJ, receive: false)],
        g.Nz - 2);

    private static Link[] Links(Communicator comm, int peer, FaceLine line, int tag, bool receive)
    {
        if (peer < 0)
            return [];
        var buffers = new double[2][];
        var requests = new PersistentRequest[2];
        for (int s = 0; s < 2; s++)
        {
            buffers[s] = Mpi.AllocatePinned<double>(line.Count);
            requests[s] = receive ? comm.RecvInit(buffers[s], peer, tag) : comm.SendInit(buffers[s], peer, tag);
        }
        return [new Link(line, buffers, requests)];
    }

    /// <summary>Posts the receives of the first two planes of a sweep.</summary>
    public void Begin()
    {
        foreach (Link l in _in)
        {
            l.Requests[0].Start();
            if (_planes > 1)
                l.Requests[1].Start();
        }
    }

    /// <summary>Waits for the neighbours' values of the <paramref name="step"/>-th plane of the sweep (plane <paramref name="k"/>) and stores them in the ghost lines.</summary>
    public void Receive(double[] field, int step, int k)
    {
        foreach (Link l in _in)
        {
            int s = step & 1;
            l.Requests[s].Wait();
            l.Line.Unpack(l.Buffers[s], field, k);
            if (step + 2 < _planes)
                l.Requests[s].Start();
        }
    }

    /// <summary>Sends this rank's edge of plane <paramref name="k"/>, the <paramref name="step"/>-th of the sweep.</summary>
    public void Send(double[] field, int step, int k)
    {
        foreach (Link l in _out)
        {
            int s = step & 1;
            PersistentRequest r = l.Requests[s];
            if (r.IsActive)
                r.Wait();
            l.Line.Pack(field, k, l.Buffers[s]);
            r.Start();
        }
    }

    /// <summary>Completes the sends of the sweep.</summary>
    public void End()
    {
        foreach (Link l in _out)
        {
            foreach (PersistentRequest r in l.Requests)
            {
                if (r.IsActive)
                    r.Wait();
            }
        }
    }

    public void Dispose()
    {
        foreach (Link l in _in.Concat(_out))
        {
            foreach (PersistentRequest r in l.Requests)
                r.Dispose();
        }
    }
}
