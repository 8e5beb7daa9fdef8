using Npb.Common;

namespace Npb.BT;

/// <summary>
/// One cell of the multi-partition: a box of the n³ grid with its fields, stored with two
/// ghost layers on every side, five doubles a point for the vector fields (the variable
/// fastest, then x, then y, then z) and one for the scalar ones, all on the same point index.
/// Local indices run 0..Size−1 along each axis; the ghosts are −2, −1, Size, Size+1.
/// </summary>
internal sealed class Cell
{
    /// <summary>Position in the p×p×p grid of cells, points along each axis, global index of the first point.</summary>
    public readonly int[] Coord = new int[3], Size = new int[3], Low = new int[3];

    /// <summary>Whether the cell holds the global boundary at the low (First) or high (Last) end of an axis.</summary>
    public readonly bool[] First = new bool[3], Last = new bool[3];

    /// <summary>Distance between neighbouring points along y and z, in points.</summary>
    public readonly int StrideJ, StrideK;

    /// <summary>Point index of the local point (0, 0, 0).</summary>
    public readonly int Origin;

    /// <summary>The solution, the right-hand side (then the correction the solves make of it), the forcing term.</summary>
    public readonly double[] U, Rhs, Forcing;

    /// <summary>1/ρ; the velocities u, v, w; |v|²/2; the kinetic energy ρ|v|²/2 (NPB's rho_i, us, vs, ws, qs, square), on the points and the first ghost layer.</summary>
    public readonly double[] RhoI, Us, Vs, Ws, Qs, Square;

    /// <summary>The upper off-diagonal blocks of the line systems after forward elimination, one 5×5 block per point.</summary>
    public readonly double[] Lhsc;

    /// <summary>Per axis, the weights of the fourth-difference dissipation at each local index (five per index).</summary>
    public readonly double[][] Stencils = new double[3][];

    public Cell(int n, int p, int x, int y, int z)
    {
        Coord[0] = x;
        Coord[1] = y;
        Coord[2] = z;
        for (int d = 0; d < 3; d++)
        {
            int size = n / p, excess = n % p, c = Coord[d];
            Size[d] = c < excess ? size + 1 : size;
            Low[d] = c < excess ? c * (size + 1) : excess * (size + 1) + (c - excess) * size;
            First[d] = c == 0;
            Last[d] = c == p - 1;
            Stencils[d] = new double[Flow.Vars * Size[d]];
            for (int l = 0; l < Size[d]; l++)
                Flow.DissipationStencil(Low[d] + l, n, Stencils[d].AsSpan(Flow.Vars * l, Flow.Vars));
        }
        StrideJ = Size[0] + 4;
        StrideK = StrideJ * (Size[1] + 4);
        int points = StrideK * (Size[2] + 4);
        Origin = 2 + 2 * StrideJ + 2 * StrideK;
        U = new double[Flow.Vars * points];
        Rhs = new double[Flow.Vars * points];
        Forcing = new double[Flow.Vars * points];
        RhoI = new double[points];
        Us = new double[points];
        Vs = new double[points];
        Ws = new double[points];
        Qs = new double[points];
        Square = new double[points];
        Lhsc = new double[Flow.Block * points];
    }

    /// <summary>The point index of local point (i, j, k).</summary>
    public int Point(int i, int j, int k) => Origin + i + j * StrideJ + k * StrideK;

    /// <summary>Distance between neighbouring points along axis <paramref name="d"/>.</summary>
    public int Stride(int d) => d == 0 ? 1 : d == 1 ? StrideJ : StrideK;

    /// <summary>First local index along <paramref name="d"/> of a point not on the global boundary.</summary>
    public int InteriorLow(int d) => First[d] ? 1 : 0;

    /// <summary>Last local index along <paramref name="d"/> of a point not on the global boundary.</summary>
    public int InteriorHigh(int d) => Last[d] ? Size[d] - 2 : Size[d] - 1;

    /// <summary>The two axes other than <paramref name="d"/>: the inner one (a) and the outer one (b) of a sweep over lines along d.</summary>
    public static (int A, int B) Across(int d) => d == 0 ? (1, 2) : d == 1 ? (0, 2) : (0, 1);

    /// <summary>Lines along <paramref name="d"/> through interior points: the lines a solve along d works on.</summary>
    public int InteriorLines(int d)
    {
        var (a, b) = Across(d);
        return (InteriorHigh(a) - InteriorLow(a) + 1) * (InteriorHigh(b) - InteriorLow(b) + 1);
    }
}

/// <summary>
/// BT's multi-partition decomposition (NPB 3.4 MPI; Bruno and Cappello's scheme): with p²
/// processes the grid is cut into p×p×p cells and every rank holds p of them, one in each
/// plane of cells along every axis, so that each stage of a line solve keeps every rank busy.
/// Rank r = x + p·y holds the cells (x + c, y − c, c) mod p for c = 0..p−1; along each axis
/// the neighbouring cells of all of a rank's cells belong to one predecessor and one
/// successor rank.
/// </summary>
internal sealed class Partition
{
    /// <summary>Grid points along each axis; cells (and processes) along each axis of the cell grid.</summary>
    public readonly int N, P;

    /// <summary>This rank's cells; index c holds the cell with z coordinate c.</summary>
    public readonly Cell[] Cells;

    /// <summary>Per axis, the rank holding the cells just below (Predecessor) and just above (Successor) this rank's.</summary>
    public readonly int[] Predecessor = new int[3], Successor = new int[3];

    private readonly Cell[][] _slice = new Cell[3][];

    private Partition(int n, int p, int rank)
    {
        N = n;
        P = p;
        int x = rank % p, y = rank / p;
        Cells = new Cell[p];
        for (int c = 0; c < p; c++)
            Cells[c] = new Cell(n, p, (x + c) % p, (y - c + p) % p, c);
        for (int d = 0; d < 3; d++)
        {
            _slice[d] = new Cell[p];
            foreach (Cell cell in Cells)
                _slice[d][cell.Coord[d]] = cell;
        }
        int Rank(int cx, int cy) => (cx + p) % p + p * ((cy + p) % p);
        Predecessor[0] = Rank(x - 1, y);
        Successor[0] = Rank(x + 1, y);
        Predecessor[1] = Rank(x, y - 1);
        Successor[1] = Rank(x, y + 1);
        Predecessor[2] = Rank(x + 1, y - 1);
        Successor[2] = Rank(x - 1, y + 1);
    }

    /// <summary>
    /// The decomposition of an n³ grid over <paramref name="processes"/> ranks, or NPB's refusal
    /// when the count is not a square or leaves a cell fewer than 3 points along an axis.
    /// </summary>
    public static Partition Create(int n, int processes, int rank)
    {
        int p = (int)Math.Sqrt(processes + 1.0e-3);
        if (p * p != processes)
            throw new RefusalException(FormattableString.Invariant(
                $"BT: no process grid for {processes} processes; expecting a square number of processes (such as {p * p})."));
        if (n / p < 3)
            throw new RefusalException(FormattableString.Invariant(
                $"BT: a {n}^3 grid in {p}x{p}x{p} cells leaves a cell smaller than 3 points; use fewer processes or a larger class."));
        return new Partition(n, p, rank);
    }

    /// <summary>This rank's cell at position <paramref name="stage"/> along axis <paramref name="d"/>.</summary>
    public Cell AtStage(int d, int stage) => _slice[d][stage];
}
