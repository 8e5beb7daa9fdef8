using Npb.Common;

namespace Npb.Multipartition;

/// <summary>
/// The geometry of one cell of the multi-partition (BT, SP): a box of the n³ grid stored with
/// two ghost layers on every side, i fastest, then j, then k, and its five-variable fields u,
/// the right-hand side and the forcing term. Local indices of owned points run 0..Size−1 along
/// each axis; the ghosts are −2, −1, Size and Size+1. Variable m of point index p is element
/// m·<see cref="VarStride"/> + p·<see cref="PointStride"/>: BT keeps a point's five variables
/// together, SP each variable's field whole. The benchmark's cell adds its own fields and the
/// copy of its faces.
/// </summary>
internal abstract class CellBox
{
    /// <summary>Doubles a point in each of the exchanged fields: ρ, ρu, ρv, ρw, ρE.</summary>
    public const int Vars = 5;

    /// <summary>Position of the cell in the p×p×p grid of cells along each axis (0-based).</summary>
    public readonly int[] Coord;

    /// <summary>Owned points along each axis.</summary>
    public readonly int[] Size = new int[3];

    /// <summary>Global index of the first owned point along each axis.</summary>
    public readonly int[] Low = new int[3];

    /// <summary>Whether the cell holds the global boundary at the low (First) or high (Last) end of an axis.</summary>
    public readonly bool[] First = new bool[3], Last = new bool[3];

    /// <summary>Distance between neighbouring points along each axis: 1, then a row, then a plane.</summary>
    public readonly int[] Stride = new int[3];

    /// <summary>Stride[1] and Stride[2], for the point index.</summary>
    public readonly int StrideJ, StrideK;

    /// <summary>Points (with ghosts) in the box.</summary>
    public readonly int Points;

    /// <summary>Point index of the local point (0, 0, 0).</summary>
    public readonly int Origin;

    /// <summary>Distance in a five-variable field between variables of a point, and between points.</summary>
    public readonly int VarStride, PointStride;

    /// <summary>The solution, the right-hand side, the forcing term: <see cref="Vars"/> doubles a point each.</summary>
    public readonly double[] U, Rhs, Forcing;

    /// <summary>What the right-hand side derives from u, one double a point: 1/ρ, the velocities u, v, w, q = |v|²/2 and ρ|v|²/2 (NPB's rho_i, us, vs, ws, qs, square).</summary>
    public readonly double[] RhoI, Us, Vs, Ws, Qs, Square;

    /// <summary>
    /// The box of cell <paramref name="coord"/> of an n³ grid cut into p cells along each axis
    /// (the first n mod p cells one point longer), its five-variable fields a point's variables
    /// together when <paramref name="interleaved"/>. A box whose widest field,
    /// <paramref name="perPoint"/> doubles a point, does not fit in one array is refused.
    /// </summary>
    protected CellBox(string benchmark, int n, int p, int[] coord, int perPoint, bool interleaved)
    {
        Coord = coord;
        for (int a = 0; a < 3; a++)
        {
            int size = n / p, excess = n % p, c = coord[a];
            (Size[a], Low[a]) = c < excess ? (size + 1, c * (size + 1)) : (size, excess * (size + 1) + (c - excess) * size);
            First[a] = c == 0;
            Last[a] = c == p - 1;
        }
        Stride[0] = 1;
        Stride[1] = Size[0] + 4;
        Stride[2] = Stride[1] * (Size[1] + 4);
        (StrideJ, StrideK) = (Stride[1], Stride[2]);
        long points = (long)Stride[2] * (Size[2] + 4);
        if (points * perPoint > Array.MaxLength)
            throw new RefusalException(FormattableString.Invariant(
                $"{benchmark}: a {Size[0]}x{Size[1]}x{Size[2]} cell does not fit in one array; use more processes."));
        Points = (int)points;
        Origin = 2 + 2 * Stride[1] + 2 * Stride[2];
        (VarStride, PointStride) = interleaved ? (1, Vars) : (Points, 1);
        U = new double[Vars * Points];
        Rhs = new double[Vars * Points];
        Forcing = new double[Vars * Points];
        RhoI = new double[Points];
        Us = new double[Points];
        Vs = new double[Points];
        Ws = new double[Points];
        Qs = new double[Points];
        Square = new double[Points];
    }

    /// <summary>The point index of local point (i, j, k).</summary>
    public int Index(int i, int j, int k) => Origin + i + j * StrideJ + k * StrideK;

    /// <summary>First local index along axis a of a point not on the global boundary.</summary>
    public int Lo(int a) => First[a] ? 1 : 0;

    /// <summary>Last local index along axis a of a point not on the global boundary.</summary>
    public int Hi(int a) => Last[a] ? Size[a] - 2 : Size[a] - 1;

    /// <summary>Doubles in two layers of the owned points across axis a, five variables each.</summary>
    public int FaceCount(int a) => Vars * 2 * Size[a == 0 ? 1 : 0] * Size[a == 2 ? 1 : 2];

    /// <summary>
    /// Copies the two layers of u across axis a starting at local layer <paramref name="first"/>
    /// (owned points only) into <paramref name="buffer"/> (pack) or back from it; the
    /// <see cref="FaceCount"/> doubles in an order of the benchmark's choosing, the same on both sides.
    /// </summary>
    public abstract void CopyFace(int a, int first, Span<double> buffer, bool pack);
}
