using System.Runtime.CompilerServices;
using System.Runtime.Intrinsics;

namespace Npb.SP;

/// <summary>
/// A group of neighbouring doubles computed in step: one (<see cref="One"/>) or a SIMD vector
/// (<see cref="Wide"/>). SP's kernels are written once over this interface; each lane of a
/// <see cref="Wide"/> computes exactly what <see cref="One"/> computes for it (the same IEEE
/// operations in the same order), so the vector loops and their scalar remainders agree to
/// the bit.
/// </summary>
internal interface ILanes<T> where T : struct, ILanes<T>
{
    /// <summary>Doubles in the group.</summary>
    static abstract int Width { get; }

    static abstract T Load(ref double at);

    static abstract void Store(ref double at, T value);

    static abstract T Splat(double value);

    static abstract T Max(T a, T b);

    static abstract T Sqrt(T a);

    static abstract T operator +(T a, T b);

    static abstract T operator -(T a, T b);

    static abstract T operator -(T a);

    static abstract T operator *(T a, T b);

    static abstract T operator /(T a, T b);
}

/// <summary>One double.</summary>
internal readonly struct One(double v) : ILanes<One>
{
    private readonly double _v = v;

    public static int Width => 1;

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static One Load(ref double at) => new(at);

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static void Store(ref double at, One value) => at = value._v;

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static One Splat(double value) => new(value);

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static One Max(One a, One b) => new(Math.Max(a._v, b._v));

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static One Sqrt(One a) => new(Math.Sqrt(a._v));

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static One operator +(One a, One b) => new(a._v + b._v);

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static One operator -(One a, One b) => new(a._v - b._v);

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static One operator -(One a) => new(-a._v);

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static One operator *(One a, One b) => new(a._v * b._v);

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static One operator /(One a, One b) => new(a._v / b._v);
}

/// <summary>A 256-bit vector of four doubles.</summary>
internal readonly struct Wide(Vector256<double> v) : ILanes<Wide>
{
    private readonly Vector256<double> _v = v;

    /// <summary>Whether the vector form runs in hardware; otherwise the kernels use <see cref="One"/> alone.</summary>
    public static bool Supported => Vector256.IsHardwareAccelerated;

    public static int Width => Vector256<double>.Count;

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static Wide Load(ref double at) => new(Vector256.LoadUnsafe(ref at));

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static void Store(ref double at, Wide value) => value._v.StoreUnsafe(ref at);

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static Wide Splat(double value) => new(Vector256.Create(value));

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static Wide Max(Wide a, Wide b) => new(Vector256.Max(a._v, b._v));

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static Wide Sqrt(Wide a) => new(Vector256.Sqrt(a._v));

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static Wide operator +(Wide a, Wide b) => new(a._v + b._v);

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static Wide operator -(Wide a, Wide b) => new(a._v - b._v);

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static Wide operator -(Wide a) => new(-a._v);

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static Wide operator *(Wide a, Wide b) => new(a._v * b._v);

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static Wide operator /(Wide a, Wide b) => new(a._v / b._v);
}

/// <summary>
/// A computation at one group of points, p .. p + T.Width − 1 along i, over the fields of a
/// <typeparamref name="TFields"/> (a ref struct of field references), for the vectorized loops
/// of <see cref="Runs"/>; g is the global index along the axis the computation depends on, if any.
/// </summary>
internal interface IPointKernel<TFields> where TFields : allows ref struct
{
    static abstract void At<T>(scoped ref TFields k, int p, int g, bool along) where T : struct, ILanes<T>;
}

/// <summary>Runs of a point kernel: vectors first, the rest one point at a time.</summary>
internal static class Runs
{
    /// <summary>A kernel that is its own fields, at <paramref name="count"/> consecutive points (see the other overload).</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static void Line<TKernel>(scoped ref TKernel k, int p, int g, int count, bool along)
        where TKernel : IPointKernel<TKernel>, allows ref struct =>
        Line<TKernel, TKernel>(ref k, p, g, count, along);

    /// <summary>
    /// The kernel at <paramref name="count"/> consecutive points from p (global index g, which
    /// advances with p when <paramref name="along"/>): groups of <see cref="Wide"/>, then <see cref="One"/>.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static void Line<TFields, TKernel>(scoped ref TFields k, int p, int g, int count, bool along)
        where TFields : allows ref struct
        where TKernel : IPointKernel<TFields>, allows ref struct
    {
        int done = Wide.Supported ? Run<TFields, TKernel, Wide>(ref k, p, g, count, along) : 0;
        Run<TFields, TKernel, One>(ref k, p + done, along ? g + done : g, count - done, along);
    }

    // Out of line, one body per lane type, so that each has its own inlining budget.
    [MethodImpl(MethodImplOptions.NoInlining)]
    private static int Run<TFields, TKernel, T>(scoped ref TFields k, int p, int g, int count, bool along)
        where TFields : allows ref struct
        where TKernel : IPointKernel<TFields>, allows ref struct
        where T : struct, ILanes<T>
    {
        int done = 0, gStep = along ? T.Width : 0;
        for (; done + T.Width <= count; done += T.Width, p += T.Width, g += gStep)
            TKernel.At<T>(ref k, p, g, along);
        return done;
    }
}
