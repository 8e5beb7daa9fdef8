using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Runtime.Intrinsics;

namespace Npb.FT;

/// <summary>
/// One-dimensional complex FFTs of length n = 2^m, <see cref="Lines"/> lines at a time: the
/// lines of a block are gathered out of the 3-D array into split real and imaginary scratch
/// arrays, element t of line j at t·Lines + j, so each butterfly works on whole vectors of
/// lines with one twiddle factor. The transform is Stockham's self-sorting radix-2 form
/// (NPB's FT uses Swarztrauber's variant): pass l maps element i·lk + k and its
/// partner n/2 later to i·2lk + k and i·2lk + k + lk, lk = 2^(l-1), with no bit reversal.
/// Direction +1 uses exp(+2πi jk/n) as NPB's forward transform does; neither direction scales.
/// Complex data in the 3-D arrays is interleaved (re, im) in doubles.
/// </summary>
internal sealed class BlockFft
{
    /// <summary>Lines transformed together: four 256-bit vectors of doubles.</summary>
    public const int Lines = 16;

    // Roots of unity: entry li + i is exp(iπ·i/li) for li = 1, 2, 4, ... < maxN and 0 ≤ i < li,
    // the factors of the pass whose butterflies are li apart.
    private readonly double[] _cos;
    private readonly double[] _sin;

    // Two scratch blocks: a pass reads one and writes the other.
    private readonly double[] _re0, _im0, _re1, _im1;

    public BlockFft(int maxN)
    {
        _cos = new double[maxN];
        _sin = new double[maxN];
        for (int li = 1; li < maxN; li *= 2)
        {
            double step = Math.PI / li;
            for (int i = 0; i < li; i++)
            {
                _cos[li + i] = Math.Cos(i * step);
                _sin[li + i] = Math.Sin(i * step);
            }
        }
        _re0 = new double[maxN * Lines];
        _im0 = new double[maxN * Lines];
        _re1 = new double[maxN * Lines];
        _im1 = new double[maxN * Lines];
    }

    /// <summary>
    /// Gathers lines that lie one after another: line j of the block starts at double
    /// <paramref name="start"/> + j·2n, its elements adjacent (the x lines).
    /// </summary>
    public void GatherRows(double[] src, int start, int n)
    {
        double[] re = _re0, im = _im0;
        for (int j = 0; j < Lines; j++)
        {
            ReadOnlySpan<double> line = src.AsSpan(start + j * 2 * n, 2 * n);
            int t = j;
            for (int e = 0; e < line.Length - 1; e += 2, t += Lines)
            {
                re[t] = line[e];
                im[t] = line[e + 1];
            }
        }
    }

    /// <summary>Writes the transformed block back where <see cref="GatherRows"/> found it (or into another array of the same layout).</summary>
    public void ScatterRows(double[] dst, int start, int n, bool resultInFirst)
    {
        double[] re = resultInFirst ? _re0 : _re1, im = resultInFirst ? _im0 : _im1;
        for (int j = 0; j < Lines; j++)
        {
            Span<double> line = dst.AsSpan(start + j * 2 * n, 2 * n);
            int t = j;
            for (int e = 0; e < line.Length - 1; e += 2, t += Lines)
            {
                line[e] = re[t];
                line[e + 1] = im[t];
            }
        }
    }

    /// <summary>
    /// Gathers lines that cross the fast axis: element t of line j is at double
    /// <paramref name="start"/> + <paramref name="offsets"/>[t] + 2j (the y and z lines, a
    /// block being Lines neighbouring x positions).
    /// </summary>
    public void GatherColumns(double[] src, int start, int[] offsets)
    {
        double[] re = _re0, im = _im0;
        for (int t = 0; t < offsets.Length; t++)
        {
            ReadOnlySpan<double> row = src.AsSpan(start + offsets[t], 2 * Lines);
            Span<double> r = re.AsSpan(t * Lines, Lines), i = im.AsSpan(t * Lines, Lines);
            for (int j = 0; j < Lines; j++)
            {
                r[j] = row[2 * j];
                i[j] = row[2 * j + 1];
            }
        }
    }

    /// <summary>
    /// <see cref="GatherColumns"/> that first multiplies each element by its real factor
    /// (factor index = element index, half the double index) and stores the product back:
    /// NPB's time step u ← u·exp(-4απ²|k|²) fused into the gather of the inverse transform.
    /// </summary>
    public void GatherColumnsScaled(double[] src, double[] factors, int start, int[] offsets)
    {
        double[] re = _re0, im = _im0;
        for (int t = 0; t < offsets.Length; t++)
        {
            int at = start + offsets[t];
            Span<double> row = src.AsSpan(at, 2 * Lines);
            ReadOnlySpan<double> f = factors.AsSpan(at / 2, Lines);
            Span<double> r = re.AsSpan(t * Lines, Lines), i = im.AsSpan(t * Lines, Lines);
            for (int j = 0; j < Lines; j++)
            {
                double a = row[2 * j] * f[j], b = row[2 * j + 1] * f[j];
                row[2 * j] = a;
                row[2 * j + 1] = b;
                r[j] = a;
                i[j] = b;
            }
        }
    }

    /// <summary>Writes the transformed block to element t of line j at double <paramref name="start"/> + <paramref name="offsets"/>[t] + 2j.</summary>
    public void ScatterColumns(double[] dst, int start, int[] offsets, bool resultInFirst)
    {
        double[] re = resultInFirst ? _re0 : _re1, im = resultInFirst ? _im0 : _im1;
        for (int t = 0; t < offsets.Length; t++)
        {
            Span<double> row = dst.AsSpan(start + offsets[t], 2 * Lines);
            ReadOnlySpan<double> r = re.AsSpan(t * Lines, Lines), i = im.AsSpan(t * Lines, Lines);
            for (int j = 0; j < Lines; j++)
            {
                row[2 * j] = r[j];
                row[2 * j + 1] = i[j];
            }
        }
    }

    /// <summary>
    /// Transforms the gathered block (lines of length n = 2^m) in direction
    /// <paramref name="sign"/> (+1 or -1). Returns whether the result is in the first scratch
    /// block (true after an even number of passes), which the scatter then reads.
    /// </summary>
    public bool Transform(int n, int sign)
    {
        bool inFirst = true;
        for (int lk = 1; lk < n; lk *= 2)
        {
            if (inFirst)
                Pass(n, lk, sign, _re0, _im0, _re1, _im1);
            else
                Pass(n, lk, sign, _re1, _im1, _re0, _im0);
            inFirst = !inFirst;
        }
        return inFirst;
    }

    /// <summary>
    /// One Stockham pass: for each group i (li = n/(2lk) of them) and k &lt; lk, with
    /// a = x[i·lk + k], b = x[i·lk + k + n/2] and w = exp(±iπ·i/li):
    /// y[i·2lk + k] = a + b, y[i·2lk + k + lk] = w·(a - b). The k and line indices of one group
    /// are contiguous in the scratch layout, so each group is one run of lk·Lines doubles.
    /// </summary>
    private void Pass(int n, int lk, int sign, double[] xr, double[] xi, double[] yr, double[] yi)
    {
        int li = n / (2 * lk);
        nuint half = (nuint)(n / 2 * Lines);
        nuint run = (nuint)(lk * Lines);
        ref double xr0 = ref MemoryMarshal.GetArrayDataReference(xr);
        ref double xi0 = ref MemoryMarshal.GetArrayDataReference(xi);
        ref double yr0 = ref MemoryMarshal.GetArrayDataReference(yr);
        ref double yi0 = ref MemoryMarshal.GetArrayDataReference(yi);
        ReadOnlySpan<double> cos = _cos.AsSpan(li, li), sin = _sin.AsSpan(li, li);
        double s = sign;
        for (int i = 0; i < li; i++)
        {
            Vector256<double> wr = Vector256.Create(cos[i]), wi = Vector256.Create(s * sin[i]);
            nuint src = (nuint)i * run, dst = 2 * (nuint)i * run;
            for (nuint e = 0; e < run; e += (nuint)Vector256<double>.Count)
            {
                Vector256<double> ar = Vector256.LoadUnsafe(ref xr0, src + e);
                Vector256<double> ai = Vector256.LoadUnsafe(ref xi0, src + e);
                Vector256<double> br = Vector256.LoadUnsafe(ref xr0, src + half + e);
                Vector256<double> bi = Vector256.LoadUnsafe(ref xi0, src + half + e);
                (ar + br).StoreUnsafe(ref yr0, dst + e);
                (ai + bi).StoreUnsafe(ref yi0, dst + e);
                Vector256<double> dr = ar - br, di = ai - bi;
                (dr * wr - di * wi).StoreUnsafe(ref yr0, dst + run + e);
                (dr * wi + di * wr).StoreUnsafe(ref yi0, dst + run + e);
            }
        }
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    internal static void RequireLines(int count, string what)
    {
        if (count % Lines != 0)
            throw new InvalidOperationException($"FT: {what} ({count}) is not a multiple of the FFT block of {Lines} lines.");
    }
}
