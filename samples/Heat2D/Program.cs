// Heat2D: Jacobi iteration for the 2-D Laplace equation on a grid split over a
// 2-D Cartesian communicator, with halo exchange between neighbours: each
// iteration's eight messages (a row up and down, a column left and right, both
// ways) are posted into one RequestList and completed by one WaitAll
// (CartesianCommunicator.Shift gives ProcNull at the boundary, whose operations
// complete at once, so edges need no special cases).  Rank 0 also solves the whole grid serially and checks that
// the distributed residuals and final field match.
//
// usage: mpiexec -n 4 motor Heat2D.dll [n=64] [iterations=500]
using System.Globalization;
using System.MP;

int n = args.Length > 0 ? int.Parse(args[0], CultureInfo.InvariantCulture) : 64;
int iterations = args.Length > 1 ? int.Parse(args[1], CultureInfo.InvariantCulture) : 500;
var world = Communicator.World;
int[] dims = Mpi.DimsCreate(world.Size, new int[2]);
using var grid = world.CreateCartesian(dims, new[] { false, false })!;
int pr = grid.Coordinates[0], pc = grid.Coordinates[1];

// Block of rows [r0, r1) and columns [c0, c1) of the n x n interior.
static (int Start, int End) Block(int n, int parts, int index) =>
    (index * n / parts, (index + 1) * n / parts);
var (r0, r1) = Block(n, dims[0], pr);
var (c0, c1) = Block(n, dims[1], pc);
int rows = r1 - r0, cols = c1 - c0, stride = cols + 2;

// Boundary condition: the top edge of the whole plate is held at 100, the rest at 0.
static double Boundary(int i, int j, int n) => i < 0 ? 100.0 : 0.0;

double[] u = new double[(rows + 2) * stride], next = new double[(rows + 2) * stride];
void SetBoundaries(double[] a)
{
    for (int i = -1; i <= rows; i++)
        for (int j = -1; j <= cols; j++)
        {
            int gi = r0 + i, gj = c0 + j;
            if (gi < 0 || gi >= n || gj < 0 || gj >= n)
                a[(i + 1) * stride + j + 1] = Boundary(gi, gj, n);
        }
}
SetBoundaries(u);
SetBoundaries(next);

var (up, down) = grid.Shift(0, 1);
var (left, right) = grid.Shift(1, 1);
var toUp = new double[cols];
var toDown = new double[cols];
var fromUp = new double[cols];
var fromDown = new double[cols];
var toLeft = new double[rows];
var toRight = new double[rows];
var fromLeft = new double[rows];
var fromRight = new double[rows];
using var halo = new RequestList(8);
double residual = 0;
for (int it = 0; it < iterations; it++)
{
    // Halo exchange: the first and last interior row and column go out, the ghost
    // layers come in; tag t is the direction a message travels (0 up, 1 down, 2 left,
    // 3 right), so each receive matches the neighbour's send.
    Array.Copy(u, 1 * stride + 1, toUp, 0, cols);
    Array.Copy(u, rows * stride + 1, toDown, 0, cols);
    for (int i = 0; i < rows; i++)
    {
        toLeft[i] = u[(i + 1) * stride + 1];
        toRight[i] = u[(i + 1) * stride + cols];
    }
    grid.IRecv(fromDown, down, 0, halo);
    grid.IRecv(fromUp, up, 1, halo);
    grid.IRecv(fromRight, right, 2, halo);
    grid.IRecv(fromLeft, left, 3, halo);
    grid.ISend(toUp, up, 0, halo);
    grid.ISend(toDown, down, 1, halo);
    grid.ISend(toLeft, left, 2, halo);
    grid.ISend(toRight, right, 3, halo);
    halo.WaitAll();
    if (down != Mpi.ProcNull) Array.Copy(fromDown, 0, u, (rows + 1) * stride + 1, cols);
    if (up != Mpi.ProcNull) Array.Copy(fromUp, 0, u, 1, cols);
    if (right != Mpi.ProcNull) for (int i = 0; i < rows; i++) u[(i + 1) * stride + cols + 1] = fromRight[i];
    if (left != Mpi.ProcNull) for (int i = 0; i < rows; i++) u[(i + 1) * stride] = fromLeft[i];

    double local = 0;
    for (int i = 1; i <= rows; i++)
        for (int j = 1; j <= cols; j++)
        {
            int k = i * stride + j;
            double v = 0.25 * (u[k - 1] + u[k + 1] + u[k - stride] + u[k + stride]);
            local += (v - u[k]) * (v - u[k]);
            next[k] = v;
        }
    (u, next) = (next, u);
    residual = Math.Sqrt(grid.Allreduce(local, Op.Sum));
}

// Gather the interior at rank 0 (block by block) and compare with a serial solve.
var mine = new double[rows * cols];
for (int i = 0; i < rows; i++)
    Array.Copy(u, (i + 1) * stride + 1, mine, i * cols, cols);
int[] counts = new int[grid.Size], displs = new int[grid.Size];
int[] blockRows = new int[grid.Size], blockCols = new int[grid.Size], blockR0 = new int[grid.Size], blockC0 = new int[grid.Size];
for (int q = 0, at = 0; q < grid.Size; q++)
{
    int[] co = grid.GetCoordinates(q);
    var (qr0, qr1) = Block(n, dims[0], co[0]);
    var (qc0, qc1) = Block(n, dims[1], co[1]);
    (blockRows[q], blockCols[q], blockR0[q], blockC0[q]) = (qr1 - qr0, qc1 - qc0, qr0, qc0);
    counts[q] = blockRows[q] * blockCols[q];
    displs[q] = at;
    at += counts[q];
}
var all = grid.Rank == 0 ? new double[n * n] : null;
grid.Gatherv(mine, all, counts, displs, 0);
if (grid.Rank != 0)
    return 0;

// Serial reference with the same boundary and iteration count.
int s = n + 2;
double[] a = new double[s * s], b = new double[s * s];
for (int j = 0; j < s; j++) { a[j] = b[j] = 100.0; }
double serialResidual = 0;
for (int it = 0; it < iterations; it++)
{
    double local = 0;
    for (int i = 1; i <= n; i++)
        for (int j = 1; j <= n; j++)
        {
            int k = i * s + j;
            double v = 0.25 * (a[k - 1] + a[k + 1] + a[k - s] + a[k + s]);
            local += (v - a[k]) * (v - a[k]);
            b[k] = v;
        }
    (a, b) = (b, a);
    serialResidual = Math.Sqrt(local);
}
double maxDiff = 0;
for (int q = 0; q < grid.Size; q++)
    for (int i = 0; i < blockRows[q]; i++)
        for (int j = 0; j < blockCols[q]; j++)
        {
            double dist = all![displs[q] + i * blockCols[q] + j];
            double ser = a[(blockR0[q] + i + 1) * s + blockC0[q] + j + 1];
            maxDiff = Math.Max(maxDiff, Math.Abs(dist - ser));
        }
Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
    $"Heat2D {n}x{n} on a {dims[0]}x{dims[1]} grid, {iterations} iterations: residual {residual:E6} (serial {serialResidual:E6}), max |distributed - serial| = {maxDiff:E2}"));
bool ok = Math.Abs(residual - serialResidual) <= 1e-9 * Math.Max(1, serialResidual) && maxDiff <= 1e-9;
Console.WriteLine(ok ? "residual matches the serial computation" : "MISMATCH with the serial computation");
return ok ? 0 : 1;
