using System.MP;
using Npb.Common;

namespace Npb.MG;

/// <summary>
/// One level of the distributed periodic grid: this rank's block of (n/p1)·(n/p2)·(n/p3)
/// points plus one ghost layer on each side, stored flat with x fastest: point (i1, i2, i3),
/// 0 ≤ i &lt; interior + 2, at i1 + m1·(i2 + m2·i3); the interior is 1..interior. The ghost
/// layers hold copies of the neighbours' boundary points (periodic at the ends), filled by
/// <see cref="Exchange"/> axis by axis, x then y then z, each axis carrying the layers the
/// previous ones filled, so edges and corners arrive too.
/// </summary>
internal sealed class Grid
{
    /// <summary>Extents including the ghost layers.</summary>
    public readonly int M1, M2, M3;

    /// <summary>Global offset of the first interior point on each axis.</summary>
    public readonly int Off1, Off2, Off3;

    private readonly Halo _halo;

    public Grid(int m1, int m2, int m3, int off1, int off2, int off3, Halo halo)
    {
        (M1, M2, M3) = (m1, m2, m3);
        (Off1, Off2, Off3) = (off1, off2, off3);
        _halo = halo;
    }

    /// <summary>Points including ghosts.</summary>
    public int Length => M1 * M2 * M3;

    /// <summary>A new array for this level, zero.</summary>
    public double[] NewArray() => new double[Length];

    /// <summary>Fills the ghost layers of <paramref name="u"/> from the neighbours (collective over the grid's ranks).</summary>
    public void Exchange(double[] u) => _halo.Exchange(this, u);
}

/// <summary>
/// The ghost-layer exchange of every level: per axis, this rank's first interior layer goes
/// to the lower neighbour's upper ghost layer and its last to the upper neighbour's lower one.
/// On an axis with one process the copy is local (periodic wrap). Otherwise the layers are
/// packed into pinned buffers and moved by persistent requests, made once per level and axis
/// (MPI_Recv_init / MPI_Send_init, started and completed each exchange without allocating).
/// With two processes on an axis both neighbours are the same rank; the tags keep the two
/// directions apart.
/// </summary>
internal sealed class Halo
{
    private readonly Communicator _comm;
    private readonly int[] _procs = new int[3];
    private readonly int[] _lower = new int[3], _upper = new int[3];
    private readonly double[] _sendDown, _sendUp, _recvDown, _recvUp;
    private readonly Dictionary<(Grid, int), PersistentRequest[]> _requests = [];
    private readonly Timers _timers;
    private readonly int _commTimer;

    private const int TagDown = 1, TagUp = 2;

    public Halo(Communicator comm, int p1, int p2, int p3, int c1, int c2, int c3, int maxFace, Timers timers, int commTimer)
    {
        _comm = comm;
        _timers = timers;
        _commTimer = commTimer;
        (_procs[0], _procs[1], _procs[2]) = (p1, p2, p3);
        int[] coords = [c1, c2, c3];
        int[] stride = [1, p1, p1 * p2];
        for (int a = 0; a < 3; a++)
        {
            int p = _procs[a], c = coords[a];
            _lower[a] = comm.Rank + ((c + p - 1) % p - c) * stride[a];
            _upper[a] = comm.Rank + ((c + 1) % p - c) * stride[a];
        }
        _sendDown = Mpi.AllocatePinned<double>(maxFace);
        _sendUp = Mpi.AllocatePinned<double>(maxFace);
        _recvDown = Mpi.AllocatePinned<double>(maxFace);
        _recvUp = Mpi.AllocatePinned<double>(maxFace);
    }

    /// <summary>Makes the persistent requests of <paramref name="grid"/> (call once per level, all ranks alike).</summary>
    public void Prepare(Grid grid)
    {
        for (int a = 0; a < 3; a++)
        {
            if (_procs[a] == 1)
                continue;
            int count = FaceLength(grid, a);
            // From below arrives the lower neighbour's upward layer; from above, the upper one's downward layer.
            _requests[(grid, a)] =
            [
                _comm.RecvInit(_recvDown, 0, count, _lower[a], TagUp),
                _comm.RecvInit(_recvUp, 0, count, _upper[a], TagDown),
                _comm.SendInit(_sendDown, 0, count, _lower[a], TagDown),
                _comm.SendInit(_sendUp, 0, count, _upper[a], TagUp),
            ];
        }
    }

    private static int FaceLength(Grid g, int axis) => axis switch
    {
        0 => (g.M2 - 2) * (g.M3 - 2),
        1 => g.M1 * (g.M3 - 2),
        _ => g.M1 * g.M2,
    };

    public void Exchange(Grid g, double[] u)
    {
        for (int a = 0; a < 3; a++)
        {
            int last = a switch { 0 => g.M1 - 2, 1 => g.M2 - 2, _ => g.M3 - 2 };
            if (_procs[a] == 1)
            {
                // Periodic: ghost 0 is the last interior layer, ghost last+1 the first.
                CopyLayer(g, u, a, last, 0);
                CopyLayer(g, u, a, 1, last + 1);
                continue;
            }
            PersistentRequest[] r = _requests[(g, a)];
            _timers.Start(_commTimer);
            PersistentRequest.StartAll(r.AsSpan(0, 2));
            _timers.Stop(_commTimer);
            Pack(g, u, a, 1, _sendDown);
            Pack(g, u, a, last, _sendUp);
            _timers.Start(_commTimer);
            PersistentRequest.StartAll(r.AsSpan(2, 2));
            PersistentRequest.WaitAll(r.AsSpan());
            _timers.Stop(_commTimer);
            Unpack(g, u, a, 0, _recvDown);
            Unpack(g, u, a, last + 1, _recvUp);
        }
    }

    // A layer of axis 0 spans the interior of y and z; of axis 1, all x and the interior of z;
    // of axis 2, all x and y. Packed in the order x, y, z.

    private static void Pack(Grid g, double[] u, int axis, int layer, double[] buffer)
    {
        int m1 = g.M1, m2 = g.M2, m3 = g.M3, n = 0;
        switch (axis)
        {
            case 0:
                for (int i3 = 1; i3 < m3 - 1; i3++)
                    for (int i2 = 1; i2 < m2 - 1; i2++)
                        buffer[n++] = u[layer + m1 * (i2 + m2 * i3)];
                break;
            case 1:
                for (int i3 = 1; i3 < m3 - 1; i3++, n += m1)
                    u.AsSpan(m1 * (layer + m2 * i3), m1).CopyTo(buffer.AsSpan(n));
                break;
            default:
                u.AsSpan(m1 * m2 * layer, m1 * m2).CopyTo(buffer);
                break;
        }
    }

    private static void Unpack(Grid g, double[] u, int axis, int layer, double[] buffer)
    {
        int m1 = g.M1, m2 = g.M2, m3 = g.M3, n = 0;
        switch (axis)
        {
            case 0:
                for (int i3 = 1; i3 < m3 - 1; i3++)
                    for (int i2 = 1; i2 < m2 - 1; i2++)
                        u[layer + m1 * (i2 + m2 * i3)] = buffer[n++];
                break;
            case 1:
                for (int i3 = 1; i3 < m3 - 1; i3++, n += m1)
                    buffer.AsSpan(n, m1).CopyTo(u.AsSpan(m1 * (layer + m2 * i3), m1));
                break;
            default:
                buffer.AsSpan(0, m1 * m2).CopyTo(u.AsSpan(m1 * m2 * layer));
                break;
        }
    }

    private static void CopyLayer(Grid g, double[] u, int axis, int from, int to)
    {
        int m1 = g.M1, m2 = g.M2, m3 = g.M3;
        switch (axis)
        {
            case 0:
                for (int i3 = 1; i3 < m3 - 1; i3++)
                    for (int i2 = 1; i2 < m2 - 1; i2++)
                    {
                        int row = m1 * (i2 + m2 * i3);
                        u[row + to] = u[row + from];
                    }
                break;
            case 1:
                for (int i3 = 1; i3 < m3 - 1; i3++)
                    u.AsSpan(m1 * (from + m2 * i3), m1).CopyTo(u.AsSpan(m1 * (to + m2 * i3), m1));
                break;
            default:
                u.AsSpan(m1 * m2 * from, m1 * m2).CopyTo(u.AsSpan(m1 * m2 * to, m1 * m2));
                break;
        }
    }
}
