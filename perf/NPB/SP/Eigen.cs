using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using static Npb.SP.Model;

namespace Npb.SP;

/// <summary>
/// The changes of eigenvector basis between the factors (NPB's ninvr, pinvr and tzetar): after
/// the x solve the values go to the basis of the y factor, after the y solve to that of the z
/// factor, and after the z solve back to the conserved variables.
/// </summary>
internal static class Eigen
{
    /// <summary>Applies the transform that follows the solve along axis a to the cell's interior.</summary>
    public static void AfterSolve(Cell c, int a)
    {
        int pts = c.Points;
        ref double r = ref MemoryMarshal.GetArrayDataReference(c.Rhs);
        ref double u0 = ref MemoryMarshal.GetArrayDataReference(c.U);
        for (int k = c.Lo(2); k <= c.Hi(2); k++)
        {
            for (int j = c.Lo(1); j <= c.Hi(1); j++)
            {
                int p = c.Index(c.Lo(0), j, k);
                for (int i = c.Lo(0); i <= c.Hi(0); i++, p++)
                {
                    ref double x0 = ref Unsafe.Add(ref r, p), x1 = ref Unsafe.Add(ref r, pts + p), x2 = ref Unsafe.Add(ref r, 2 * pts + p);
                    ref double x3 = ref Unsafe.Add(ref r, 3 * pts + p), x4 = ref Unsafe.Add(ref r, 4 * pts + p);
                    double r1 = x0, r2 = x1, r3 = x2, r4 = x3, r5 = x4;
                    if (a == 0)
                    {
                        double t1 = Bt * r3, t2 = 0.5 * (r4 + r5);
                        x0 = -r2;
                        x1 = r1;
                        x2 = Bt * (r4 - r5);
                        x3 = -t1 + t2;
                        x4 = t1 + t2;
                    }
                    else if (a == 1)
                    {
                        double t1 = Bt * r1, t2 = 0.5 * (r4 + r5);
                        x0 = Bt * (r4 - r5);
                        x1 = -r3;
                        x2 = r2;
                        x3 = -t1 + t2;
                        x4 = t1 + t2;
                    }
                    else
                    {
                        double xvel = c.Us[p], yvel = c.Vs[p], zvel = c.Ws[p], ac = c.Speed[p];
                        double ac2u = ac * ac, uzik1 = Unsafe.Add(ref u0, p), btuz = Bt * uzik1;
                        double t1 = btuz * c.Ainv[p] * (r4 + r5);
                        double t2 = r3 + t1;
                        double t3 = btuz * (r4 - r5);
                        x0 = t2;
                        x1 = -uzik1 * r2 + xvel * t2;
                        x2 = uzik1 * r1 + yvel * t2;
                        x3 = zvel * t2 + t3;
                        x4 = uzik1 * (-xvel * r2 + yvel * r1) + c.Qs[p] * t2 + C2Iv * ac2u * t1 + zvel * t3;
                    }
                }
            }
        }
    }
}
