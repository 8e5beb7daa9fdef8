using Npb.Common;

namespace Npb.LU;

/// <summary>
/// LU's two-dimensional decomposition (NPB 3.4 MPI): the ranks form an xdim × ydim grid over
/// the i and j axes (xdim/2 ≤ ydim ≤ xdim, rank = row + xdim·column), every rank holds all of
/// k. A rank's box is stored with two ghost layers on each side in i and j, five doubles a point
/// (the five conserved variables), i fastest, then j, then k: one flat array per field.
/// Indices are 1-based as in the specification: owned points i = 1..Nx, j = 1..Ny, k = 1..Nz;
/// ghosts i = -1, 0, Nx+1, Nx+2 (likewise j).
/// </summary>
internal sealed class Grid
{
    /// <summary>Doubles per grid point: ρ, ρu, ρv, ρw, ρE.</summary>
    public const int Vars = 5;

    /// <summary>Global grid points along each axis.</summary>
    public readonly int Nx0, Ny0, Nz0;

    /// <summary>Points this rank owns along each axis.</summary>
    public readonly int Nx, Ny, Nz;

    /// <summary>Global index of the point before this rank's first (global i = Ipt + i).</summary>
    public readonly int Ipt, Jpt;

    /// <summary>The owned points not on the global boundary: i in [Ist, Iend], j in [Jst, Jend].</summary>
    public readonly int Ist, Iend, Jst, Jend;

    /// <summary>Neighbour ranks across the i = 1 face, the i = Nx face, the j = 1 face and the j = Ny face; -1 at the global boundary (NPB's north, south, west, east).</summary>
    public readonly int ILow, IHigh, JLow, JHigh;

    /// <summary>The process grid.</summary>
    public readonly int XDim, YDim;

    /// <summary>Distance in doubles between neighbouring points along i, j and k.</summary>
    public readonly int StrideI = Vars, StrideJ, StrideK;

    /// <summary>Doubles in one field array.</summary>
    public readonly int Length;

    private readonly int _origin;

    private Grid(int n, int rank, int xdim, int ydim)
    {
        Nx0 = Ny0 = Nz0 = n;
        XDim = xdim;
        YDim = ydim;
        int row = rank % xdim, col = rank / xdim;
        (Nx, Ipt) = Split(n, xdim, row);
        (Ny, Jpt) = Split(n, ydim, col);
        Nz = n;
        ILow = row > 0 ? rank - 1 : -1;
        IHigh = row < xdim - 1 ? rank + 1 : -1;
        JLow = col > 0 ? rank - xdim : -1;
        JHigh = col < ydim - 1 ? rank + xdim : -1;
        Ist = ILow < 0 ? 2 : 1;
        Iend = IHigh < 0 ? Nx - 1 : Nx;
        Jst = JLow < 0 ? 2 : 1;
        Jend = JHigh < 0 ? Ny - 1 : Ny;
        StrideJ = Vars * (Nx + 4);
        StrideK = StrideJ * (Ny + 4);
        long length = (long)StrideK * Nz;
        if (length > Array.MaxLength)
            throw new RefusalException(FormattableString.Invariant(
                $"LU: a {Nx}x{Ny}x{Nz} subdomain does not fit in one array; use more processes."));
        Length = (int)length;
        _origin = Vars + StrideJ - StrideK; // i = -1, j = -1, k = 1 is element 0
    }

    /// <summary>
    /// The decomposition of an n³ grid over <paramref name="processes"/> ranks, or NPB's refusal
    /// when the count does not form a grid xdim × ydim with xdim/2 ≤ ydim ≤ xdim, or leaves a
    /// rank fewer than 3 points along an axis.
    /// </summary>
    public static Grid Create(int n, int processes, int rank)
    {
        var (xdim, ydim) = ProcessGrid(processes);
        if (xdim < 0)
            throw new RefusalException(NoGrid(processes));
        if (n / xdim < 3 || n / ydim < 3)
            throw new RefusalException(FormattableString.Invariant(
                $"LU: a {n}^3 grid over {xdim}x{ydim} processes leaves a subdomain smaller than 3 points; use fewer processes or a larger class."));
        return new Grid(n, rank, xdim, ydim);
    }

    /// <summary>xdim × ydim = p with ydim ≤ xdim ≤ 2·ydim and xdim as small as possible; (-1, -1) when none.</summary>
    public static (int XDim, int YDim) ProcessGrid(int p)
    {
        for (int x = (int)Math.Sqrt(p); x <= p; x++)
        {
            if (x > 0 && p % x == 0 && p / x <= x && x <= 2 * (p / x))
                return (x, p / x);
        }
        return (-1, -1);
    }

    /// <summary>NPB's refusal of a process count that forms no grid.</summary>
    public static string NoGrid(int processes) => FormattableString.Invariant(
        $"LU: no process grid for {processes} processes; expecting nx*ny processes with nx/2 <= ny <= nx (such as {LargestGrid(processes)}).");

    /// <summary>The largest process count not above <paramref name="p"/> that forms a grid.</summary>
    public static int LargestGrid(int p)
    {
        for (int q = p; q > 1; q--)
        {
            if (ProcessGrid(q).XDim > 0)
                return q;
        }
        return 1;
    }

    /// <summary>Block distribution of n points over parts: the first n mod parts blocks get one more.</summary>
    private static (int Count, int Offset) Split(int n, int parts, int index)
    {
        int q = n / parts, r = n % parts;
        return index < r ? (q + 1, index * (q + 1)) : (q, index * q + r);
    }

    /// <summary>Element of variable 0 at point (i, j, k) in a field array.</summary>
    public int Index(int i, int j, int k) => _origin + i * Vars + j * StrideJ + k * StrideK;

    /// <summary>A new field array with this rank's layout.</summary>
    public double[] NewField() => new double[Length];
}
