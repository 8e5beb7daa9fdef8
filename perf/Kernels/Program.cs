// Kernels: the numeric idioms of perf/NPB measured against each other, in one process.
//
//   dotnet Kernels.dll [rounds=7] [n=96]        (or: motor Kernels.dll, mpiexec -n 1 ...)
//
// Each kernel is written several ways that compute the same numbers; the ways run
// interleaved, round after round, and the report gives each one's median time and its ratio
// to the first way (the idiom docs/guide/performance.md recommends).  A check sum per way must agree, or the program
// exits 1.  What the ways are, and what the figures mean, is in perf/NPB/README.md
// ("Idioms").
using System.Diagnostics;
using System.Runtime.CompilerServices;

int rounds = args.Length > 0 ? int.Parse(args[0]) : 7;
int n = args.Length > 1 ? int.Parse(args[1]) : 96;
const int WarmCalls = 60;

var kernels = new (string Kernel, (string Way, Action Run, Func<double> Result)[] Ways)[]
{
    ("7-point residual r = v - A u on an n^3 grid", Stencil.Ways(n)),
    ("the same, loops in Fortran order on [i,j,k]", Stencil.FortranOrder(n)),
    ("a scratch array per call (256 Ki doubles, 64 calls)", Scratch.Ways()),
};

bool agree = true;
Console.WriteLine($"Kernels: n = {n}, {rounds} rounds, runtime {Environment.Version}, tiered compilation {(Environment.GetEnvironmentVariable("DOTNET_TieredCompilation") ?? "default")}");
foreach (var (kernel, ways) in kernels)
{
    var times = new List<double>[ways.Length];
    var sums = new double[ways.Length];
    for (int w = 0; w < ways.Length; w++)
    {
        times[w] = [];
        // Untimed calls until the method runs its fully optimized code (tiered compilation
        // promotes a method after 30 calls, in the background), as a long run's kernels do.
        for (int warm = 0; warm < WarmCalls; warm++)
            ways[w].Run();
        sums[w] = ways[w].Result();
    }
    for (int r = 0; r < rounds; r++)
    {
        for (int w = 0; w < ways.Length; w++)
        {
            var clock = Stopwatch.StartNew();
            ways[w].Run();
            times[w].Add(clock.Elapsed.TotalMilliseconds);
        }
    }
    Console.WriteLine();
    Console.WriteLine(kernel);
    double first = Median(times[0]);
    for (int w = 0; w < ways.Length; w++)
    {
        double m = Median(times[w]);
        bool same = Math.Abs(sums[w] - sums[0]) <= 1e-9 * Math.Abs(sums[0]);
        agree &= same;
        Console.WriteLine($"  {ways[w].Way,-44} {m,9:F2} ms  {m / first,6:F2}x{(same ? "" : "  WRONG SUM")}");
    }
}
return agree ? 0 : 1;

static double Median(List<double> xs)
{
    var s = xs.OrderBy(x => x).ToArray();
    return s.Length % 2 == 1 ? s[s.Length / 2] : (s[s.Length / 2 - 1] + s[s.Length / 2]) / 2;
}

/// <summary>MG's residual: r = v - (a0 u + a1 (sum of the 6 face neighbours)) over the interior.</summary>
static class Stencil
{
    private const double A0 = -8.0 / 3.0, A1 = 1.0 / 6.0;

    public static (string, Action, Func<double>)[] Ways(int n)
    {
        double[] u = Field(n, 1), v = Field(n, 2), r = new double[n * n * n];
        double[,,] u3 = ToCube(u, n), v3 = ToCube(v, n), r3 = new double[n, n, n];
        double[][][] uj = ToJagged(u, n), vj = ToJagged(v, n), rj = ToJagged(r, n);
        return
        [
            ("flat double[], index i + n*(j + n*k)", () => FlatIndex(u, v, r, n), () => Sum(r)),
            ("flat double[], a span per row and neighbour", () => FlatSpans(u, v, r, n), () => Sum(r)),
            ("flat double[], unsafe pointers", () => FlatPointers(u, v, r, n), () => Sum(r)),
            ("double[][][] (jagged)", () => Jagged(uj, vj, rj, n), () => Sum(rj, n)),
            ("double[,,] [k,j,i] (C order)", () => Cube(u3, v3, r3, n), () => Sum(r3)),
        ];
    }

    public static (string, Action, Func<double>)[] FortranOrder(int n)
    {
        double[] u = Field(n, 1), v = Field(n, 2), r = new double[n * n * n];
        double[,,] u3 = ToCube(u, n), v3 = ToCube(v, n), r3 = new double[n, n, n];
        return
        [
            ("flat double[], index i + n*(j + n*k)", () => FlatIndex(u, v, r, n), () => Sum(r)),
            ("double[,,] [i,j,k], i innermost (transposed)", () => CubeFortranOrder(u3, v3, r3, n), () => Sum(r3)),
        ];
    }

    private static double[] Field(int n, int seed)
    {
        var f = new double[n * n * n];
        var rng = new Random(seed);
        for (int i = 0; i < f.Length; i++)
            f[i] = rng.NextDouble();
        return f;
    }

    private static double[,,] ToCube(double[] f, int n)
    {
        var c = new double[n, n, n];
        for (int k = 0; k < n; k++)
            for (int j = 0; j < n; j++)
                for (int i = 0; i < n; i++)
                    c[k, j, i] = f[i + n * (j + n * k)];
        return c;
    }

    private static double[][][] ToJagged(double[] f, int n)
    {
        var c = new double[n][][];
        for (int k = 0; k < n; k++)
        {
            c[k] = new double[n][];
            for (int j = 0; j < n; j++)
                c[k][j] = f.AsSpan((j + n * k) * n, n).ToArray();
        }
        return c;
    }

    private static void FlatSpans(double[] u, double[] v, double[] r, int n)
    {
        int plane = n * n;
        for (int k = 1; k < n - 1; k++)
        {
            for (int j = 1; j < n - 1; j++)
            {
                int row = n * (j + n * k);
                ReadOnlySpan<double> uc = u.AsSpan(row, n), un = u.AsSpan(row - n, n), us = u.AsSpan(row + n, n);
                ReadOnlySpan<double> ud = u.AsSpan(row - plane, n), uu = u.AsSpan(row + plane, n), vc = v.AsSpan(row, n);
                Span<double> rc = r.AsSpan(row, n);
                for (int i = 1; i < rc.Length - 1; i++)
                    rc[i] = vc[i] - A0 * uc[i] - A1 * (uc[i - 1] + uc[i + 1] + un[i] + us[i] + ud[i] + uu[i]);
            }
        }
    }

    private static void FlatIndex(double[] u, double[] v, double[] r, int n)
    {
        int plane = n * n;
        for (int k = 1; k < n - 1; k++)
            for (int j = 1; j < n - 1; j++)
                for (int i = 1; i < n - 1; i++)
                {
                    int c = i + n * (j + n * k);
                    r[c] = v[c] - A0 * u[c] - A1 * (u[c - 1] + u[c + 1] + u[c - n] + u[c + n] + u[c - plane] + u[c + plane]);
                }
    }

    private static unsafe void FlatPointers(double[] u, double[] v, double[] r, int n)
    {
        int plane = n * n;
        fixed (double* pu = u, pv = v, pr = r)
        {
            for (int k = 1; k < n - 1; k++)
                for (int j = 1; j < n - 1; j++)
                {
                    int row = n * (j + n * k);
                    double* uc = pu + row, vc = pv + row, rc = pr + row;
                    for (int i = 1; i < n - 1; i++)
                        rc[i] = vc[i] - A0 * uc[i] - A1 * (uc[i - 1] + uc[i + 1] + uc[i - n] + uc[i + n] + uc[i - plane] + uc[i + plane]);
                }
        }
    }

    private static void Jagged(double[][][] u, double[][][] v, double[][][] r, int n)
    {
        for (int k = 1; k < n - 1; k++)
            for (int j = 1; j < n - 1; j++)
            {
                double[] uc = u[k][j], un = u[k][j - 1], us = u[k][j + 1], ud = u[k - 1][j], uu = u[k + 1][j], vc = v[k][j], rc = r[k][j];
                for (int i = 1; i < n - 1; i++)
                    rc[i] = vc[i] - A0 * uc[i] - A1 * (uc[i - 1] + uc[i + 1] + un[i] + us[i] + ud[i] + uu[i]);
            }
    }

    private static void Cube(double[,,] u, double[,,] v, double[,,] r, int n)
    {
        for (int k = 1; k < n - 1; k++)
            for (int j = 1; j < n - 1; j++)
                for (int i = 1; i < n - 1; i++)
                    r[k, j, i] = v[k, j, i] - A0 * u[k, j, i]
                        - A1 * (u[k, j, i - 1] + u[k, j, i + 1] + u[k, j - 1, i] + u[k, j + 1, i] + u[k - 1, j, i] + u[k + 1, j, i]);
    }

    // A Fortran u(i,j,k) copied as u[i,j,k]: C# stores the last index contiguously, so the
    // Fortran loop order (i innermost) now strides through memory by n*n elements.
    private static void CubeFortranOrder(double[,,] u, double[,,] v, double[,,] r, int n)
    {
        for (int k = 1; k < n - 1; k++)
            for (int j = 1; j < n - 1; j++)
                for (int i = 1; i < n - 1; i++)
                    r[i, j, k] = v[i, j, k] - A0 * u[i, j, k]
                        - A1 * (u[i - 1, j, k] + u[i + 1, j, k] + u[i, j - 1, k] + u[i, j + 1, k] + u[i, j, k - 1] + u[i, j, k + 1]);
    }

    private static double Sum(double[] r)
    {
        double s = 0;
        foreach (double x in r)
            s += x;
        return s;
    }

    private static double Sum(double[,,] r)
    {
        double s = 0;
        foreach (double x in r)
            s += x;
        return s;
    }

    private static double Sum(double[][][] r, int n)
    {
        double s = 0;
        for (int k = 0; k < n; k++)
            for (int j = 0; j < n; j++)
                foreach (double x in r[k][j])
                    s += x;
        return s;
    }
}

/// <summary>A routine that needs a work array: allocated on every call, or kept and reused.</summary>
static class Scratch
{
    private const int Length = 256 * 1024, Calls = 64;

    public static (string, Action, Func<double>)[] Ways()
    {
        double[] input = new double[Length];
        for (int i = 0; i < Length; i++)
            input[i] = i % 97;
        double[] kept = new double[Length];
        double result = 0;
        return
        [
            ("work array kept between calls", () => result = Repeat(input, () => kept), () => result),
            ("new double[] on every call", () => result = Repeat(input, () => new double[Length]), () => result),
            ("GC.AllocateUninitializedArray on every call", () => result = Repeat(input, () => GC.AllocateUninitializedArray<double>(Length)), () => result),
        ];
    }

    private static double Repeat(double[] input, Func<double[]> work)
    {
        double s = 0;
        for (int c = 0; c < Calls; c++)
            s += Smooth(input, work());
        return s;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static double Smooth(double[] input, double[] w)
    {
        w[0] = input[0];
        for (int i = 1; i < input.Length; i++)
            w[i] = 0.5 * (input[i] + input[i - 1]);
        double s = 0;
        for (int i = 0; i < w.Length; i++)
            s += w[i];
        return s;
    }
}
