/// <summary>Statistics the benchmark programs share (linked into each project that prints them).</summary>
internal static class Stats
{
    /// <summary>The median of <paramref name="values"/> (the mean of the two middle ones for an even count); any order.</summary>
    internal static double Median(IEnumerable<double> values)
    {
        double[] s = [.. values.Order()];
        return s.Length % 2 == 1 ? s[s.Length / 2] : (s[s.Length / 2 - 1] + s[s.Length / 2]) / 2;
    }
}
