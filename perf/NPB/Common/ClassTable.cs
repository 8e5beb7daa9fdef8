namespace Npb.Common;

/// <summary>
/// The problem parameters of one benchmark per NPB class (S, W, A, B, C, D, E, F), as the NPB
/// reports and <c>setparams</c> define them. Looking up a class the benchmark does not
/// define is a refusal, with the classes it does define in the message.
/// </summary>
public sealed class ClassTable<T>(string benchmark, params (char Class, T Parameters)[] rows)
{
    /// <summary>The parameters of class <paramref name="problemClass"/>, or a <see cref="RefusalException"/>.</summary>
    public T this[char problemClass]
    {
        get
        {
            foreach (var (c, p) in rows)
            {
                if (c == problemClass)
                    return p;
            }
            throw new RefusalException(
                $"{benchmark}: class {problemClass} is not defined; classes: {string.Join(' ', rows.Select(r => r.Class))}.");
        }
    }
}

/// <summary>The class argument of the command line.</summary>
public static class ProblemClass
{
    /// <summary>
    /// Reads a class argument: one letter, case ignored. Anything else is a refusal naming the
    /// classes NPB knows.
    /// </summary>
    public static char Parse(string argument)
    {
        if (argument.Length == 1 && "SWABCDEFswabcdef".Contains(argument[0], StringComparison.Ordinal))
            return char.ToUpperInvariant(argument[0]);
        throw new RefusalException($"unknown class '{argument}': NPB classes are S, W, A, B, C, D, E and F.");
    }
}
