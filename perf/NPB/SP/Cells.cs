using Npb.Common;

namespace Npb.SP;

/// <summary>
/// One cell of SP's multi-partition: a box of the global grid with two ghost layers on every
/// side, holding the solution, the right-hand side (which the solves turn into the update in
/// place), the forcing term, the fifteen coefficients of the three pentadiagonal factors and the
/// quantities derived from u. Every field is a flat array, i fastest, then j, then k; the five
/// variables (or fifteen coefficients) of a multi-field array are whole fields one after the
/// other, so a line along any axis is one stride through one field. Local indices of owned
/// points run from 0 to Size − 1; ghosts are −2, −1, Size and Size + 1.
/// </summary>
internal sealed class Cell
{
    /// <summary>Variables of the model problem: ρ, ρu, ρv, ρw, ρE.</summary>
    public const int Vars = 5;

    /// <summary>Coefficients of one pentadiagonal row; three factors (u, u + c, u − c) make fifteen fields of <see cref="Lhs"/>.</summary>
    public const int Band = 5;

    /// <summary>Position of the cell in the p × p × p grid of cells along each axis (0-based).</summary>
    public readonly int[] Coord;

    /// <summary>Owned points along each axis.</summary>
    public readonly int[] Size = new int[3];

    /// <summary>Global index of the first owned point along each axis.</summary>
    public readonly int[] Low = new int[3];

    /// <summary>1 where the cell's first (<see cref="Start"/>) or last (<see cref="End"/>) layer is on the global boundary, else 0: the interior points run from Start to Size − End − 1.</summary>
    public readonly int[] Start = new int[3], End = new int[3];

    /// <summary>Distance between neighbouring points along each axis: 1, then a row, then a plane.</summary>
    public readonly int[] Stride = new int[3];

    /// <summary>Points (with ghosts) in one field.</summary>
    public readonly int Points;

    /// <summary>Element of the point (0, 0, 0) in a field.</summary>
    public readonly int Origin;

    /// <summary>Solution, right-hand side and forcing (five fields each); coefficients (fifteen fields).</summary>
    public readonly double[] U, Rhs, Forcing, Lhs;

    /// <summary>Velocities, q = |v|²/2, 1/ρ, speed of sound, its inverse, ρ|v|²/2 per point.</summary>
    public readonly double[] Us, Vs, Ws, Qs, RhoI, Speed, Ainv, Square;

    public Cell(int n, int p, int[] coord)
    {
        Coord = coord;
        for (int a = 0; a < 3; a++)
        {
            int size = n / p, excess = n % p, c = coord[a];
            (Size[a], Low[a]) = c < excess ? (size + 1, c * (size + 1)) : (size, excess * (size + 1) + (c - excess) * size);
            Start[a] = c == 0 ? 1 : 0;
            End[a] = c == p - 1 ? 1 : 0;
        }
        Stride[0] = 1;
        Stride[1] = Size[0] + 4;
        Stride[2] = Stride[1] * (Size[1] + 4);
        long points = (long)Stride[2] * (Size[2] + 4);
        if (points * 15 > Array.MaxLength)
            throw new RefusalException(FormattableString.Invariant(
                $"SP: a {Size[0]}x{Size[1]}x{Size[2]} cell does not fit in one array; use more processes."));
        Points = (int)points;
        Origin = 2 + 2 * Stride[1] + 2 * Stride[2];
        U = new double[Vars * Points];
        Rhs = new double[Vars * Points];
        Forcing = new double[Vars * Points];
        Lhs = new double[3 * Band * Points];
        Us = new double[Points];
        Vs = new double[Points];
        Ws = new double[Points];
        Qs = new double[Points];
        RhoI = new double[Points];
        Speed = new double[Points];
        Ainv = new double[Points];
        Square = new double[Points];
    }

    /// <summary>Element of the local point (i, j, k) in a field.</summary>
    public int Index(int i, int j, int k) => Origin + i + j * Stride[1] + k * Stride[2];

    /// <summary>First interior point along axis a.</summary>
    public int Lo(int a) => Start[a];

    /// <summary>Last interior point along axis a.</summary>
    public int Hi(int a) => Size[a] - End[a] - 1;

    /// <summary>The velocity component along axis a.</summary>
    public double[] Velocity(int a) => a == 0 ? Us : a == 1 ? Vs : Ws;
}

/// <summary>
/// SP's multi-partition decomposition (NPB 3.4 MPI): the p² ranks (p² must be a square) each own
/// p cells of a p × p × p grid of cells, one in every slab along every axis, placed diagonally:
/// rank (i0 + p·j0) owns cell c at (i0 + c, j0 − c, c) mod p. Along any axis, the cell next to
/// each of a rank's cells belongs to one and the same rank, its successor on that axis, so a
/// line solve passes through all ranks in p stages with every rank busy at every stage.
/// </summary>
internal sealed class MultiPartition
{
    /// <summary>Cells along each axis, and cells per rank.</summary>
    public readonly int P;

    /// <summary>This rank's cells, by their z slab (cell c has Coord[2] == c).</summary>
    public readonly Cell[] Cells;

    /// <summary>The rank owning the neighbouring cell below (<see cref="Predecessor"/>) and above (<see cref="Successor"/>) each of this rank's cells along each axis (periodic in the rank grid).</summary>
    public readonly int[] Predecessor = new int[3], Successor = new int[3];

    /// <summary>Slice[a][s]: the cell of this rank whose coordinate along axis a is s.</summary>
    public readonly int[][] Slice = [new int[0], new int[0], new int[0]];

    private MultiPartition(int n, int p, int rank)
    {
        P = p;
        int i0 = rank % p, j0 = rank / p;
        Cells = new Cell[p];
        for (int a = 0; a < 3; a++)
            Slice[a] = new int[p];
        for (int c = 0; c < p; c++)
        {
            Cells[c] = new Cell(n, p, [(i0 + c) % p, ((j0 - c) % p + p) % p, c]);
            for (int a = 0; a < 3; a++)
                Slice[a][Cells[c].Coord[a]] = c;
        }
        int Wrap(int v) => (v % p + p) % p;
        Predecessor[0] = Wrap(i0 - 1) + p * j0;
        Predecessor[1] = i0 + p * Wrap(j0 - 1);
        Predecessor[2] = Wrap(i0 + 1) + p * Wrap(j0 - 1);
        Successor[0] = Wrap(i0 + 1) + p * j0;
        Successor[1] = i0 + p * Wrap(j0 + 1);
        Successor[2] = Wrap(i0 - 1) + p * Wrap(j0 + 1);
    }

    /// <summary>
    /// The cells of rank <paramref name="rank"/> for an n³ grid, or NPB's refusal when the process
    /// count is not a square or leaves a cell fewer than 3 points along an axis.
    /// </summary>
    public static MultiPartition Create(int n, int processes, int rank)
    {
        int p = (int)Math.Sqrt(processes + 0.001);
        if (p * p != processes)
            throw new RefusalException(FormattableString.Invariant(
                $"SP: no process grid for {processes} processes; expecting a square number of processes (such as {p * p})."));
        if (n / p < 3)
            throw new RefusalException(FormattableString.Invariant(
                $"SP: a {n}^3 grid in {p}x{p}x{p} cells leaves a cell smaller than 3 points; use fewer processes or a larger class."));
        return new MultiPartition(n, p, rank);
    }
}
