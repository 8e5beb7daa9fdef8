namespace Npb.Multipartition;

/// <summary>
/// The multi-partition decomposition of BT and SP (NPB 3.4 MPI; Bruno and Cappello's scheme):
/// with p² processes the grid is cut into p×p×p cells and every rank holds p of them, one in
/// each plane of cells along every axis, so that each stage of a line solve keeps every rank
/// busy. Rank r = x + p·y holds the cells (x + c, y − c, c) mod p for c = 0..p−1; along each
/// axis the neighbouring cells of all of a rank's cells belong to one predecessor and one
/// successor rank.
/// </summary>
internal sealed class MultiPartition<TCell> where TCell : CellBox
{
    /// <summary>Grid points along each axis; cells (and processes) along each axis of the cell grid.</summary>
    public readonly int N, P;

    /// <summary>This rank's cells; index c holds the cell with z coordinate c.</summary>
    public readonly TCell[] Cells;

    /// <summary>Per axis, the rank holding the cells just below (Predecessor) and just above (Successor) this rank's (periodic in the rank grid).</summary>
    public readonly int[] Predecessor = new int[3], Successor = new int[3];

    /// <summary>Slice[a][s]: the index in <see cref="Cells"/> of this rank's cell whose coordinate along axis a is s.</summary>
    public readonly int[][] Slice = [new int[0], new int[0], new int[0]];

    /// <summary>
    /// The cells of rank <paramref name="rank"/> of p² for an n³ grid, each made by
    /// <paramref name="newCell"/>(n, p, coordinates). The count is one
    /// <see cref="Npb.Common.ActiveProcesses.Square"/> accepted.
    /// </summary>
    public MultiPartition(int n, int processes, int rank, Func<int, int, int[], TCell> newCell)
    {
        int p = (int)Math.Sqrt(processes + 1.0e-3);
        if (p * p != processes)
            throw new ArgumentOutOfRangeException(nameof(processes), processes, "not a square");
        N = n;
        P = p;
        int x = rank % p, y = rank / p;
        Cells = new TCell[p];
        for (int a = 0; a < 3; a++)
            Slice[a] = new int[p];
        for (int c = 0; c < p; c++)
        {
            Cells[c] = newCell(n, p, [(x + c) % p, (y - c + p) % p, c]);
            for (int a = 0; a < 3; a++)
                Slice[a][Cells[c].Coord[a]] = c;
        }
        int Rank(int cx, int cy) => (cx + p) % p + p * ((cy + p) % p);
        Predecessor[0] = Rank(x - 1, y);
        Successor[0] = Rank(x + 1, y);
        Predecessor[1] = Rank(x, y - 1);
        Successor[1] = Rank(x, y + 1);
        Predecessor[2] = Rank(x + 1, y - 1);
        Successor[2] = Rank(x - 1, y + 1);
    }

    /// <summary>This rank's cell at position <paramref name="stage"/> along axis <paramref name="a"/>.</summary>
    public TCell AtStage(int a, int stage) => Cells[Slice[a][stage]];
}
