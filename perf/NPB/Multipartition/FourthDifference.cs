namespace Npb.Multipartition;

/// <summary>The fourth-difference artificial dissipation of BT and SP (NPB 2 report).</summary>
internal static class FourthDifference
{
    /// <summary>
    /// The stencil at global point g of n along an axis (1 ≤ g ≤ n − 2): the weights of the
    /// points g−2 .. g+2 into <paramref name="w"/>, one-sided next to the boundary as the
    /// specification prescribes (zero weight on points outside the grid).
    /// </summary>
    public static void Weights(int g, int n, Span<double> w)
    {
        ReadOnlySpan<double> weights =
            g == 1 ? [0, 0, 5, -4, 1] :
            g == 2 ? [0, -4, 6, -4, 1] :
            g == n - 3 ? [1, -4, 6, -4, 0] :
            g == n - 2 ? [1, -4, 5, 0, 0] :
            [1, -4, 6, -4, 1];
        weights.CopyTo(w);
    }
}
