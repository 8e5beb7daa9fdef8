using Npb.Multipartition;

namespace Npb.BT;

/// <summary>
/// One cell of BT's multi-partition with its fields: five doubles a point for the vector
/// fields (the variable fastest, then x, then y, then z) and one for the scalar ones, all on
/// the same point index. Rhs becomes the correction the line solves make of it.
/// </summary>
internal sealed class Cell : CellBox
{
    /// <summary>The upper off-diagonal blocks of the line systems after forward elimination, one 5×5 block per point.</summary>
    public readonly double[] Lhsc;

    /// <summary>Per axis, the weights of the fourth-difference dissipation at each local index (five per index).</summary>
    public readonly double[][] Stencils = new double[3][];

    public Cell(int n, int p, int[] coord) : base("BT", n, p, coord, Flow.Block, interleaved: true)
    {
        for (int d = 0; d < 3; d++)
        {
            Stencils[d] = new double[Flow.Vars * Size[d]];
            for (int l = 0; l < Size[d]; l++)
                FourthDifference.Weights(Low[d] + l, n, Stencils[d].AsSpan(Flow.Vars * l, Flow.Vars));
        }
        Lhsc = new double[Flow.Block * Points];
    }

    /// <summary>The two axes other than <paramref name="d"/>: the inner one (a) and the outer one (b) of a sweep over lines along d.</summary>
    public static (int A, int B) Across(int d) => d == 0 ? (1, 2) : d == 1 ? (0, 2) : (0, 1);

    /// <summary>Lines along <paramref name="d"/> through interior points: the lines a solve along d works on.</summary>
    public int InteriorLines(int d)
    {
        var (a, b) = Across(d);
        return (Hi(a) - Lo(a) + 1) * (Hi(b) - Lo(b) + 1);
    }

    /// <summary>The face's rows along x, each of the five variables of every point in turn.</summary>
    public override void CopyFace(int a, int first, Span<double> buffer, bool pack)
    {
        int[] lo = [0, 0, 0], hi = [Size[0], Size[1], Size[2]];
        lo[a] = first;
        hi[a] = first + 2;
        int row = Flow.Vars * (hi[0] - lo[0]), pos = 0;
        for (int k = lo[2]; k < hi[2]; k++)
        {
            for (int j = lo[1]; j < hi[1]; j++, pos += row)
            {
                Span<double> field = U.AsSpan(Flow.Vars * Index(lo[0], j, k), row);
                Span<double> packed = buffer.Slice(pos, row);
                if (pack)
                    field.CopyTo(packed);
                else
                    packed.CopyTo(field);
            }
        }
    }
}
