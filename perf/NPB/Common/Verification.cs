namespace Npb.Common;

/// <summary>
/// NPB's verification rule: a computed value passes when its relative error against the
/// reference value of the class is at most epsilon (|value - reference| / |reference| ≤ ε).
/// </summary>
public static class Verification
{
    /// <summary>The relative error of <paramref name="value"/> against <paramref name="reference"/> (the absolute error when the reference is 0).</summary>
    public static double RelativeError(double value, double reference) =>
        reference == 0 ? Math.Abs(value) : Math.Abs((value - reference) / reference);

    /// <summary>
    /// Whether <paramref name="value"/> is within <paramref name="epsilon"/> of <paramref name="reference"/>;
    /// NaN never is. When <paramref name="print"/>, writes the comparison in NPB's form.
    /// </summary>
    public static bool Check(string label, double value, double reference, double epsilon, bool print)
    {
        double error = RelativeError(value, reference);
        bool ok = error <= epsilon;
        if (print)
        {
            Console.WriteLine(FormattableString.Invariant($" {label}: computed {value,22:0.0000000000000E+00} reference {reference,22:0.0000000000000E+00} error {error,10:0.000E+00}{(ok ? "" : "  FAILED")}"));
        }
        return ok;
    }
}
