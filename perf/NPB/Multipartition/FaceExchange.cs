using System.MP;

namespace Npb.Multipartition;

/// <summary>
/// The exchange of u's two outermost layers between neighbouring cells (NPB's copy_faces):
/// along each axis one message up to the successor and one down to the predecessor, each
/// holding the faces of all this rank's cells that have a neighbour that way, in cell order
/// (the neighbour's matching cells come in the same order), filling the ghost layers there.
/// Persistent requests over pinned buffers made once; nothing to exchange on one cell a side.
/// </summary>
internal sealed class FaceExchange : IDisposable
{
    private readonly record struct Face(CellBox Cell, int Axis, int First);

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
                int count = f.Cell.FaceCount(f.Axis);
                f.Cell.CopyFace(f.Axis, f.First, Buffer.AsSpan(at, count), pack);
                at += count;
            }
        }
    }

    private readonly List<Link> _sends = [], _receives = [];

    /// <summary>
    /// The exchange of <paramref name="cells"/> with the ranks of <paramref name="predecessor"/>
    /// and <paramref name="successor"/> along each axis, on tags <paramref name="firstTag"/> +
    /// 2a (up) and + 2a + 1 (down).
    /// </summary>
    public FaceExchange(Communicator comm, IReadOnlyList<CellBox> cells, int p, int[] predecessor, int[] successor, int firstTag)
    {
        if (p == 1)
            return;
        for (int a = 0; a < 3; a++)
        {
            int up = firstTag + 2 * a, down = up + 1;
            // Upward: the top two layers of each cell not last along a go to the successor, and
            // the predecessor's fill the ghosts below each cell not first. Downward: the reverse.
            Add(comm, cells, a, send: true, successor[a], up, c => !c.Last[a], c => c.Size[a] - 2);
            Add(comm, cells, a, send: false, predecessor[a], up, c => !c.First[a], c => -2);
            Add(comm, cells, a, send: true, predecessor[a], down, c => !c.First[a], c => 0);
            Add(comm, cells, a, send: false, successor[a], down, c => !c.Last[a], c => c.Size[a]);
        }
    }

    private void Add(Communicator comm, IReadOnlyList<CellBox> cells, int a, bool send, int peer, int tag,
        Func<CellBox, bool> included, Func<CellBox, int> firstLayer)
    {
        Face[] faces = [.. cells.Where(included).Select(c => new Face(c, a, firstLayer(c)))];
        double[] buffer = Mpi.AllocatePinned<double>(faces.Sum(f => f.Cell.FaceCount(a)));
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
