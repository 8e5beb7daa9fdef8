using System.MP;
using static Npb.BT.Flow;

namespace Npb.BT;

/// <summary>
/// The exchange of u's two outermost layers between neighbouring cells (NPB's copy_faces):
/// along each axis and direction one message carries the faces of all of this rank's cells
/// that have a neighbour that way (they all go to the same rank), and fills the ghost layers
/// of the matching cells there. Six persistent sends and receives over pinned buffers.
/// </summary>
internal sealed class FaceExchange : IDisposable
{
    /// <summary>The two layers of one cell's face: the box [Lo, Hi) in local indices.</summary>
    private readonly record struct Slab(Cell Cell, int[] Lo, int[] Hi);

    private sealed class Direction(Slab[] outgoing, Slab[] incoming, double[] outBuffer, PersistentRequest send, PersistentRequest receive, double[] inBuffer)
    {
        public readonly Slab[] Outgoing = outgoing, Incoming = incoming;
        public readonly double[] OutBuffer = outBuffer, InBuffer = inBuffer;
        public readonly PersistentRequest Send = send, Receive = receive;
    }

    private readonly Direction[] _directions;

    public FaceExchange(Communicator comm, Partition part)
    {
        var directions = new List<Direction>();
        if (part.P > 1)
        {
            for (int d = 0; d < 3; d++)
            {
                // Upward: the top two layers of each cell not last along d go to the successor,
                // and the predecessor's fill the ghosts below each cell not first. Downward: the reverse.
                foreach (bool up in new[] { true, false })
                {
                    int to = up ? part.Successor[d] : part.Predecessor[d];
                    int from = up ? part.Predecessor[d] : part.Successor[d];
                    int tag = 10 + 2 * d + (up ? 0 : 1);
                    Slab[] outgoing = [.. part.Cells.Where(c => up ? !c.Last[d] : !c.First[d]).Select(c => Layers(c, d, up ? c.Size[d] - 2 : 0))];
                    Slab[] incoming = [.. part.Cells.Where(c => up ? !c.First[d] : !c.Last[d]).Select(c => Layers(c, d, up ? -2 : c.Size[d]))];
                    double[] outBuffer = Mpi.AllocatePinned<double>(outgoing.Sum(Count));
                    double[] inBuffer = Mpi.AllocatePinned<double>(incoming.Sum(Count));
                    directions.Add(new Direction(outgoing, incoming, outBuffer, comm.SendInit(outBuffer, to, tag), comm.RecvInit(inBuffer, from, tag), inBuffer));
                }
            }
        }
        _directions = [.. directions];
    }

    private static Slab Layers(Cell c, int d, int first)
    {
        int[] lo = [0, 0, 0], hi = [c.Size[0], c.Size[1], c.Size[2]];
        lo[d] = first;
        hi[d] = first + 2;
        return new Slab(c, lo, hi);
    }

    private static int Count(Slab s) => Vars * (s.Hi[0] - s.Lo[0]) * (s.Hi[1] - s.Lo[1]) * (s.Hi[2] - s.Lo[2]);

    /// <summary>Fills the ghost layers of every cell that has a neighbour, from that neighbour's edge layers.</summary>
    public void Exchange()
    {
        foreach (Direction x in _directions)
            x.Receive.Start();
        foreach (Direction x in _directions)
        {
            Copy(x.Outgoing, x.OutBuffer, pack: true);
            x.Send.Start();
        }
        foreach (Direction x in _directions)
        {
            x.Receive.Wait();
            Copy(x.Incoming, x.InBuffer, pack: false);
        }
        foreach (Direction x in _directions)
            x.Send.Wait();
    }

    private static void Copy(Slab[] slabs, double[] buffer, bool pack)
    {
        int pos = 0;
        foreach (Slab s in slabs)
        {
            Cell c = s.Cell;
            int row = Vars * (s.Hi[0] - s.Lo[0]);
            for (int k = s.Lo[2]; k < s.Hi[2]; k++)
            {
                for (int j = s.Lo[1]; j < s.Hi[1]; j++, pos += row)
                {
                    Span<double> field = c.U.AsSpan(Vars * c.Point(s.Lo[0], j, k), row);
                    Span<double> packed = buffer.AsSpan(pos, row);
                    if (pack)
                        field.CopyTo(packed);
                    else
                        packed.CopyTo(field);
                }
            }
        }
    }

    public void Dispose()
    {
        foreach (Direction x in _directions)
        {
            x.Send.Dispose();
            x.Receive.Dispose();
        }
    }
}
