using System.MP;
using Npb.Common;

namespace Npb.Multipartition;

/// <summary>The root-mean-square norms BT and SP verify with, over all ranks' cells of an n³ grid.</summary>
internal static class Norms
{
    /// <summary>The RMS over the whole grid of u minus the exact solution, per variable (NPB's error_norm). Collective.</summary>
    public static double[] Error(Communicator comm, IEnumerable<CellBox> cells, int n)
    {
        var sums = new double[CellBox.Vars];
        Span<double> exact = stackalloc double[CellBox.Vars];
        double h = 1.0 / (n - 1);
        foreach (CellBox c in cells)
        {
            for (int k = 0; k < c.Size[2]; k++)
            {
                for (int j = 0; j < c.Size[1]; j++)
                {
                    for (int i = 0; i < c.Size[0]; i++)
                    {
                        ExactSolution.Evaluate((c.Low[0] + i) * h, (c.Low[1] + j) * h, (c.Low[2] + k) * h, exact);
                        int e = c.PointStride * c.Index(i, j, k);
                        for (int m = 0; m < CellBox.Vars; m++)
                        {
                            double d = c.U[e + m * c.VarStride] - exact[m];
                            sums[m] += d * d;
                        }
                    }
                }
            }
        }
        return Rms(comm, sums, n);
    }

    /// <summary>The RMS of the right-hand side over the interior points, per variable (NPB's rhs_norm). Collective.</summary>
    public static double[] Rhs(Communicator comm, IEnumerable<CellBox> cells, int n)
    {
        var sums = new double[CellBox.Vars];
        foreach (CellBox c in cells)
        {
            for (int k = c.Lo(2); k <= c.Hi(2); k++)
            {
                for (int j = c.Lo(1); j <= c.Hi(1); j++)
                {
                    for (int i = c.Lo(0); i <= c.Hi(0); i++)
                    {
                        int e = c.PointStride * c.Index(i, j, k);
                        for (int m = 0; m < CellBox.Vars; m++)
                        {
                            double r = c.Rhs[e + m * c.VarStride];
                            sums[m] += r * r;
                        }
                    }
                }
            }
        }
        return Rms(comm, sums, n);
    }

    private static double[] Rms(Communicator comm, double[] sums, int n)
    {
        var total = new double[CellBox.Vars];
        comm.Allreduce(sums, total, Op.Sum);
        double interior = n - 2;
        for (int m = 0; m < CellBox.Vars; m++)
            total[m] = Math.Sqrt(total[m] / interior / interior / interior);
        return total;
    }
}
