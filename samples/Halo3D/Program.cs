// Halo3D: Jacobi iteration for the 3-D Laplace equation (a 7-point stencil) on an
// n x n x n grid cut into blocks, one per rank, whose halo exchange is one
// neighborhood collective on a distributed graph: each rank's neighbours are the
// blocks that share a face with its own (3 to 6 inside, fewer at the edges), the
// edge weights are the face areas, and NeighborAlltoallv sends each neighbour its
// face and receives theirs into the ghost layers.  Where the MPI library has
// persistent collectives (MPI 4: MPICH 4.0), the exchange is made once with
// NeighborAlltoallvInit and started every iteration.  Rank 0 then solves the
// whole grid serially and checks that the gathered field matches bit for bit (each
// cell is updated by the same expression in the same order either way).
//
// usage: mpiexec -n 4 motor Halo3D.dll [n=24] [iterations=100]
using System.Globalization;
using System.MP;

int n = args.Length > 0 ? int.Parse(args[0], CultureInfo.InvariantCulture) : 24;
int iterations = args.Length > 1 ? int.Parse(args[1], CultureInfo.InvariantCulture) : 100;
var world = Communicator.World;
int[] dims = Mpi.DimsCreate(world.Size, new int[3]);

// Rank r holds block (p0, p1, p2), row-major over dims; the block's cells are
// [start, end) along each axis.
int[] BlockOf(int rank) => [rank / (dims[1] * dims[2]), rank / dims[2] % dims[1], rank % dims[2]];
int RankOf(int[] p) => (p[0] * dims[1] + p[1]) * dims[2] + p[2];
(int Start, int End) Range(int axis, int p) => (p * n / dims[axis], (p + 1) * n / dims[axis]);
int[] Extents(int rank)
{
    int[] p = BlockOf(rank);
    return [Range(0, p[0]).End - Range(0, p[0]).Start, Range(1, p[1]).End - Range(1, p[1]).Start, Range(2, p[2]).End - Range(2, p[2]).Start];
}

int[] me = BlockOf(world.Rank), ext = Extents(world.Rank);
int[] origin = [Range(0, me[0]).Start, Range(1, me[1]).Start, Range(2, me[2]).Start];

// The face neighbours, as (axis, side): the distributed graph's edges, both ways.
var faces = new List<(int Axis, int Side, int Rank)>();
for (int axis = 0; axis < 3; axis++)
    foreach (int side in new[] { -1, 1 })
    {
        int[] q = (int[])me.Clone();
        q[axis] += side;
        if (q[axis] >= 0 && q[axis] < dims[axis])
            faces.Add((axis, side, RankOf(q)));
    }
int FaceArea(int axis) => ext[(axis + 1) % 3] * ext[(axis + 2) % 3];
int[] neighbours = faces.Select(f => f.Rank).ToArray(), areas = faces.Select(f => FaceArea(f.Axis)).ToArray();
using DistributedGraphCommunicator graph = world.CreateDistributedGraphAdjacent(neighbours, areas, neighbours, areas);

// The local field with one ghost layer on every side; the global boundary's ghosts
// hold the boundary condition: the x = -1 face at 100, the others at 0.
int s1 = ext[2] + 2, s0 = (ext[1] + 2) * s1;
int Index(int i, int j, int k) => (i + 1) * s0 + (j + 1) * s1 + k + 1;
double[] u = new double[(ext[0] + 2) * s0], next = new double[u.Length];
for (int j = -1; j <= ext[1]; j++)
    for (int k = -1; k <= ext[2]; k++)
        if (origin[0] == 0)
            u[Index(-1, j, k)] = next[Index(-1, j, k)] = 100.0;

// The cells of the layer at `layer` along `axis`, in a fixed order over the other two axes
// (the same order on both sides of a face, since neighbours share those extents).
IEnumerable<int> Layer(int axis, int layer)
{
    int a = (axis + 1) % 3, b = (axis + 2) % 3;
    var c = new int[3];
    c[axis] = layer;
    for (c[a] = 0; c[a] < ext[a]; c[a]++)
        for (c[b] = 0; c[b] < ext[b]; c[b]++)
            yield return Index(c[0], c[1], c[2]);
}

int[] counts = areas, displs = new int[faces.Count];
for (int f = 1; f < faces.Count; f++)
    displs[f] = displs[f - 1] + counts[f - 1];
int haloCells = faces.Count == 0 ? 0 : displs[^1] + counts[^1];
var sendHalo = new double[haloCells];
var recvHalo = new double[haloCells];
PersistentRequest? exchange = null;
try
{
    exchange = graph.NeighborAlltoallvInit(sendHalo, counts, displs, recvHalo, counts, displs);
}
catch (NotSupportedException)
{
    // MPI 3 library (Open MPI 4.1): the blocking neighborhood collective each iteration.
}
if (world.Rank == 0)
    Console.WriteLine($"Halo3D: {n}^3 cells, {iterations} iterations on a {dims[0]}x{dims[1]}x{dims[2]} grid of {world.Size} ranks; " +
                      $"halo exchange by {(exchange is null ? "NeighborAlltoallv" : "a persistent NeighborAlltoallv (NeighborAlltoallvInit)")} " +
                      $"on a distributed graph, rank 0 has {graph.OutDegree} neighbours");

for (int it = 0; it < iterations; it++)
{
    // Pack each face towards its neighbour, exchange, unpack into the ghost layers.
    for (int f = 0, at = 0; f < faces.Count; f++)
        foreach (int c in Layer(faces[f].Axis, faces[f].Side < 0 ? 0 : ext[faces[f].Axis] - 1))
            sendHalo[at++] = u[c];
    if (exchange is not null)
    {
        exchange.Start();
        exchange.Wait();
    }
    else
    {
        graph.NeighborAlltoallv(sendHalo, counts, displs, recvHalo, counts, displs);
    }
    for (int f = 0, at = 0; f < faces.Count; f++)
        foreach (int c in Layer(faces[f].Axis, faces[f].Side < 0 ? -1 : ext[faces[f].Axis]))
            u[c] = recvHalo[at++];
    Sweep(u, next, ext, s0, s1);
    (u, next) = (next, u);
}
exchange?.Dispose();

// Gather the interiors at rank 0, block by block, and compare with a serial solve.
var mine = new double[ext[0] * ext[1] * ext[2]];
for (int i = 0, at = 0; i < ext[0]; i++)
    for (int j = 0; j < ext[1]; j++)
        for (int k = 0; k < ext[2]; k++)
            mine[at++] = u[Index(i, j, k)];
int[] blockCells = Enumerable.Range(0, world.Size).Select(r => Extents(r).Aggregate(1, (x, y) => x * y)).ToArray();
int[] blockAt = new int[world.Size];
for (int r = 1; r < world.Size; r++)
    blockAt[r] = blockAt[r - 1] + blockCells[r - 1];
double[]? all = world.Rank == 0 ? new double[n * n * n] : null;
world.Gatherv(mine, all, blockCells, blockAt, 0);
if (world.Rank != 0)
    return 0;

int[] whole = [n, n, n];
int w1 = n + 2, w0 = (n + 2) * w1;
double[] su = new double[(n + 2) * w0], snext = new double[su.Length];
for (int j = 0; j < n + 2; j++)
    for (int k = 0; k < n + 2; k++)
        su[j * w1 + k] = snext[j * w1 + k] = 100.0;
for (int it = 0; it < iterations; it++)
{
    Sweep(su, snext, whole, w0, w1);
    (su, snext) = (snext, su);
}
int mismatches = 0;
for (int r = 0, at = 0; r < world.Size; r++)
{
    int[] p = BlockOf(r), e = Extents(r);
    int[] o = [Range(0, p[0]).Start, Range(1, p[1]).Start, Range(2, p[2]).Start];
    for (int i = 0; i < e[0]; i++)
        for (int j = 0; j < e[1]; j++)
            for (int k = 0; k < e[2]; k++)
            {
                double serial = su[(o[0] + i + 1) * w0 + (o[1] + j + 1) * w1 + o[2] + k + 1];
                if (BitConverter.DoubleToInt64Bits(serial) != BitConverter.DoubleToInt64Bits(all![at++]))
                    mismatches++;
            }
}
double centre = su[(n / 2 + 1) * w0 + (n / 2 + 1) * w1 + n / 2 + 1];
Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"temperature at the centre after {iterations} iterations: {centre:F6}"));
if (mismatches != 0)
{
    Console.WriteLine($"MISMATCH: {mismatches} of {n * n * n} cells differ from the serial computation");
    return 1;
}
Console.WriteLine("field matches the serial computation bit for bit");
return 0;

// One Jacobi step over the interior of a block with extents e and strides s0, s1:
// the same expression, in the same order, for the distributed and the serial grid.
static void Sweep(double[] u, double[] next, int[] e, int s0, int s1)
{
    for (int i = 1; i <= e[0]; i++)
        for (int j = 1; j <= e[1]; j++)
            for (int k = 1; k <= e[2]; k++)
            {
                int c = i * s0 + j * s1 + k;
                next[c] = (u[c - s0] + u[c + s0] + u[c - s1] + u[c + s1] + u[c - 1] + u[c + 1]) / 6.0;
            }
}
