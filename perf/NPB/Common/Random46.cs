namespace Npb.Common;

/// <summary>
/// The NPB pseudo-random generator (RNR-94-007 §2.2 and NPB 2 report): the linear
/// congruential sequence x(k+1) = a·x(k) mod 2^46 with a = 5^13, returning x·2^-46 in (0, 1).
/// The seeds are integers below 2^46 kept in doubles, as NPB passes them; the product is
/// taken exactly in 64-bit integers (its low 46 bits are those of the 92-bit product), so the
/// sequence is bit-for-bit the one NPB's 23-bit split double arithmetic produces.
/// </summary>
public static class Random46
{
    // States stay below 2^46, so they convert to double as signed integers: one instruction on
    // any x64, where an unsigned 64-bit conversion is one only with AVX-512.

    /// <summary>The multiplier 5^13 every NPB benchmark uses.</summary>
    public const double A = 1220703125.0;

    /// <summary>2^-46, the scale from the integer state to (0, 1).</summary>
    public const double R46 = 1.0 / 70368744177664.0;

    /// <summary>2^46 - 1, the mask of the state.</summary>
    public const ulong Mask = (1UL << 46) - 1;

    /// <summary>Advances <paramref name="x"/> once by <paramref name="a"/> and returns the new value scaled to (0, 1) (NPB's randlc).</summary>
    public static double Randlc(ref double x, double a)
    {
        ulong next = ((ulong)x * (ulong)a) & Mask;
        x = next;
        return (long)next * R46;
    }

    /// <summary>Fills <paramref name="y"/> with the next y.Length values of the sequence from <paramref name="x"/> and advances it (NPB's vranlc).</summary>
    public static void Vranlc(Span<double> y, ref double x, double a)
    {
        ulong state = (ulong)x, mult = (ulong)a;
        for (int i = 0; i < y.Length; i++)
        {
            state = (state * mult) & Mask;
            y[i] = (long)state * R46;
        }
        x = state;
    }

    /// <summary>a^n mod 2^46 by repeated squaring: the multiplier that jumps a seed n places ahead.</summary>
    public static double Power(double a, long n)
    {
        ulong result = 1, square = (ulong)a;
        while (n > 0)
        {
            if ((n & 1) != 0)
                result = (result * square) & Mask;
            square = (square * square) & Mask;
            n >>= 1;
        }
        return result;
    }
}
