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

    /// <summary>Prints the heading of NPB's verification of the pseudo-applications: the class and the tolerance.</summary>
    public static void Begin(char problemClass, double epsilon)
    {
        Console.WriteLine();
        Console.WriteLine($" Verification being performed for class {problemClass}");
        Console.WriteLine(FormattableString.Invariant($" Accuracy setting for epsilon = {epsilon,20:E13}"));
    }

    /// <summary>
    /// Checks and prints each of a set of norms (one per variable) as NPB does: the heading
    /// "Comparison of RMS-norms of <paramref name="what"/>", then one line per variable labelled
    /// <paramref name="label"/> 1, 2, ... Returns whether all passed.
    /// </summary>
    public static bool CheckNorms(string what, string label, ReadOnlySpan<double> values, ReadOnlySpan<double> references, double epsilon)
    {
        Console.WriteLine($" Comparison of RMS-norms of {what}");
        bool ok = true;
        for (int m = 0; m < values.Length; m++)
            ok &= Check(FormattableString.Invariant($"{label} {m + 1}"), values[m], references[m], epsilon, print: true);
        return ok;
    }

    /// <summary>
    /// The verification of the pseudo-applications (LU, BT, SP) up to their own checks: the
    /// heading (<see cref="Begin"/>), then the RMS norms of the residual and of the solution
    /// error, the latter under the heading "Comparison of RMS-norms of <paramref name="errorWhat"/>".
    /// Returns whether all passed.
    /// </summary>
    public static bool CheckResidualAndError(char problemClass, double epsilon,
        ReadOnlySpan<double> residual, ReadOnlySpan<double> residualReference,
        ReadOnlySpan<double> error, ReadOnlySpan<double> errorReference, string errorWhat = "solution error")
    {
        Begin(problemClass, epsilon);
        bool ok = CheckNorms("residual", "residual", residual, residualReference, epsilon);
        return CheckNorms(errorWhat, "error", error, errorReference, epsilon) && ok;
    }

    /// <summary>Prints the pseudo-applications' verdict line.</summary>
    public static void Verdict(bool verified) =>
        Console.WriteLine(verified ? " Verification Successful" : " Verification failed");
}
