using Npb.Multipartition;

namespace Npb.SP;

/// <summary>
/// One cell of SP's multi-partition with its fields: the solution, the right-hand side (which
/// the solves turn into the update in place), the forcing term, the fifteen coefficients of the
/// three pentadiagonal factors and the quantities derived from u. Every field is a flat array
/// over the cell's points; the five variables (or fifteen coefficients) of a multi-field array
/// are whole fields one after the other, so a line along any axis is one stride through one field.
/// </summary>
internal sealed class Cell : CellBox
{
    /// <summary>Coefficients of one pentadiagonal row; three factors (u, u + c, u − c) make fifteen fields of <see cref="Lhs"/>.</summary>
    public const int Band = 5;

    /// <summary>Coefficients (fifteen fields).</summary>
    public readonly double[] Lhs;

    /// <summary>The speed of sound and its inverse per point.</summary>
    public readonly double[] Speed, Ainv;

    public Cell(int n, int p, int[] coord) : base("SP", n, p, coord, 3 * Band, interleaved: false)
    {
        Lhs = new double[3 * Band * Points];
        Speed = new double[Points];
        Ainv = new double[Points];
    }

    /// <summary>The velocity component along axis a.</summary>
    public double[] Velocity(int a) => a == 0 ? Us : a == 1 ? Vs : Ws;

    /// <summary>The face's runs across it, the five variables' fields one after the other.</summary>
    public override void CopyFace(int a, int first, Span<double> buffer, bool pack)
    {
        int q = a == 0 ? 1 : 0, o = a == 2 ? 1 : 2;
        int nq = Size[q], no = Size[o], sq = Stride[q], so = Stride[o], sa = Stride[a];
        int at = 0;
        for (int m = 0; m < Vars; m++)
        {
            for (int t = 0; t < 2; t++)
            {
                for (int ov = 0; ov < no; ov++)
                {
                    int p = m * Points + Origin + (first + t) * sa + ov * so;
                    if (sq == 1)
                    {
                        Span<double> run = U.AsSpan(p, nq);
                        if (pack)
                            run.CopyTo(buffer.Slice(at, nq));
                        else
                            buffer.Slice(at, nq).CopyTo(run);
                        at += nq;
                        continue;
                    }
                    for (int qv = 0; qv < nq; qv++, p += sq, at++)
                    {
                        if (pack)
                            buffer[at] = U[p];
                        else
                            U[p] = buffer[at];
                    }
                }
            }
        }
    }
}
