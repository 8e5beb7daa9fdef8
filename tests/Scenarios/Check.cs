using System.Runtime.CompilerServices;

namespace Scenarios;

/// <summary>Assertions for scenarios: a failure is recorded with its rank, and the scenario goes on.</summary>
internal static class Check
{
    internal static int Failures;
    internal static int Passed;
    internal static int Rank;

    internal static void True(bool condition, string what, [CallerLineNumber] int line = 0)
    {
        if (condition)
        {
            Passed++;
            return;
        }
        Failures++;
        Console.Error.WriteLine($"FAIL rank {Rank} line {line}: {what}");
    }

    internal static void Equal<T>(T expected, T actual, string what, [CallerLineNumber] int line = 0) =>
        True(EqualityComparer<T>.Default.Equals(expected, actual), $"{what}: expected {expected}, got {actual}", line);

    /// <summary>Passes when a checker found no problem (null); otherwise records the problem it describes.</summary>
    internal static void Null(string? problem, string what, [CallerLineNumber] int line = 0) =>
        True(problem is null, $"{what}: {problem}", line);

    internal static void Sequence<T>(ReadOnlySpan<T> expected, ReadOnlySpan<T> actual, string what, [CallerLineNumber] int line = 0)
        where T : IEquatable<T>
    {
        if (expected.Length != actual.Length)
        {
            True(false, $"{what}: length {actual.Length}, expected {expected.Length}", line);
            return;
        }
        for (int i = 0; i < expected.Length; i++)
        {
            if (!expected[i].Equals(actual[i]))
            {
                True(false, $"{what}: element {i} is {actual[i]}, expected {expected[i]}", line);
                return;
            }
        }
        Passed++;
    }

    /// <summary>Checks that the action throws TException; returns it, or null (a failure recorded).</summary>
    internal static TException? Throws<TException>(Action action, string what, [CallerLineNumber] int line = 0)
        where TException : Exception
    {
        try
        {
            action();
            True(false, $"{what}: no exception, expected {typeof(TException).Name}", line);
        }
        catch (TException e)
        {
            Passed++;
            return e;
        }
        catch (Exception e)
        {
            True(false, $"{what}: {e.GetType().Name} ({e.Message}), expected {typeof(TException).Name}", line);
        }
        return null;
    }

    /// <summary>Checks that the action throws TException whose ParamName is <paramref name="param"/>; returns it, or null.</summary>
    internal static TException? ThrowsNaming<TException>(string param, Action action, string what, [CallerLineNumber] int line = 0)
        where TException : ArgumentException
    {
        TException? e = Throws<TException>(action, what, line);
        if (e is not null)
            Equal(param, e.ParamName, $"{what}: the parameter named", line);
        return e;
    }
}
