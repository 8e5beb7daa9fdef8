using System.Runtime.CompilerServices;
using static Npb.SP.Model;
using static Npb.Common.Gas;
using static Npb.SP.Rhs;

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
        if (a == 0)
            Interior<AfterX>(c);
        else if (a == 1)
            Interior<AfterY>(c);
        else
            Interior<AfterZ>(c);
    }

    private struct AfterX : IPointKernel<PointFields>
    {
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        public static void At<T>(scoped ref PointFields k, int p, int g, bool along) where T : struct, ILanes<T>
        {
            T r1 = Get<T>(ref k.R0, p), r2 = Get<T>(ref k.R1, p), r3 = Get<T>(ref k.R2, p), r4 = Get<T>(ref k.R3, p), r5 = Get<T>(ref k.R4, p);
            T t1 = T.Splat(Bt) * r3, t2 = T.Splat(0.5) * (r4 + r5);
            T.Store(ref Unsafe.Add(ref k.R0, p), -r2);
            T.Store(ref Unsafe.Add(ref k.R1, p), r1);
            T.Store(ref Unsafe.Add(ref k.R2, p), T.Splat(Bt) * (r4 - r5));
            T.Store(ref Unsafe.Add(ref k.R3, p), -t1 + t2);
            T.Store(ref Unsafe.Add(ref k.R4, p), t1 + t2);
        }
    }

    private struct AfterY : IPointKernel<PointFields>
    {
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        public static void At<T>(scoped ref PointFields k, int p, int g, bool along) where T : struct, ILanes<T>
        {
            T r1 = Get<T>(ref k.R0, p), r2 = Get<T>(ref k.R1, p), r3 = Get<T>(ref k.R2, p), r4 = Get<T>(ref k.R3, p), r5 = Get<T>(ref k.R4, p);
            T t1 = T.Splat(Bt) * r1, t2 = T.Splat(0.5) * (r4 + r5);
            T.Store(ref Unsafe.Add(ref k.R0, p), T.Splat(Bt) * (r4 - r5));
            T.Store(ref Unsafe.Add(ref k.R1, p), -r3);
            T.Store(ref Unsafe.Add(ref k.R2, p), r2);
            T.Store(ref Unsafe.Add(ref k.R3, p), -t1 + t2);
            T.Store(ref Unsafe.Add(ref k.R4, p), t1 + t2);
        }
    }

    private struct AfterZ : IPointKernel<PointFields>
    {
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        public static void At<T>(scoped ref PointFields k, int p, int g, bool along) where T : struct, ILanes<T>
        {
            T r1 = Get<T>(ref k.R0, p), r2 = Get<T>(ref k.R1, p), r3 = Get<T>(ref k.R2, p), r4 = Get<T>(ref k.R3, p), r5 = Get<T>(ref k.R4, p);
            T xvel = Get<T>(ref k.Us, p), yvel = Get<T>(ref k.Vs, p), zvel = Get<T>(ref k.Ws, p), ac = Get<T>(ref k.Speed, p);
            T ac2u = ac * ac, uzik1 = Get<T>(ref k.U0, p), btuz = T.Splat(Bt) * uzik1;
            T t1 = btuz * Get<T>(ref k.Ainv, p) * (r4 + r5);
            T t2 = r3 + t1;
            T t3 = btuz * (r4 - r5);
            T.Store(ref Unsafe.Add(ref k.R0, p), t2);
            T.Store(ref Unsafe.Add(ref k.R1, p), -uzik1 * r2 + xvel * t2);
            T.Store(ref Unsafe.Add(ref k.R2, p), uzik1 * r1 + yvel * t2);
            T.Store(ref Unsafe.Add(ref k.R3, p), zvel * t2 + t3);
            T.Store(ref Unsafe.Add(ref k.R4, p), uzik1 * (-xvel * r2 + yvel * r1) + Get<T>(ref k.Qs, p) * t2 + T.Splat(C2Iv) * ac2u * t1 + zvel * t3);
        }
    }
}
