using System.MP;
using Npb.Common;

namespace Npb.CG;

/// <summary>
/// CG, the conjugate gradient kernel (RNR-94-007 §2.5; NPB 2 report for the MPI version):
/// the inverse power method estimates the smallest eigenvalue of a random sparse symmetric
/// positive definite matrix A of order n. Each of the outer iterations solves A·z = x by 25
/// unpreconditioned CG steps, sets ζ = shift + 1/(x·z) and x = z/‖z‖; ζ after the last
/// iteration is checked against NPB's value for the class (relative error ≤ 1e-10).
/// The work is spread over an R × C grid of processes (C = R or 2R, p = R·C a power of two):
/// process (row, col) holds the block of A for its rows and columns and the vector pieces
/// for its columns; see <see cref="Grid"/>.
/// </summary>
public static class Cg
{
    private const int CgSteps = 25;
    private const double Rcond = 0.1;
    private const double Epsilon = 1e-10;

    private readonly record struct Parameters(int N, int NonZeros, int Iterations, double Shift, double Zeta);

    private static readonly ClassTable<Parameters> Classes = new("CG",
        ('S', new(1400, 7, 15, 10, 8.5971775078648)),
        ('W', new(7000, 8, 15, 12, 10.362595087124)),
        ('A', new(14000, 11, 15, 20, 17.130235054029)),
        ('B', new(75000, 13, 75, 60, 22.712745482631)),
        ('C', new(150000, 15, 75, 110, 28.973605592845)),
        ('D', new(1500000, 21, 100, 500, 52.514532105794)),
        ('E', new(9000000, 26, 100, 1500, 77.522164599383)));

    private enum T { Total, Conjugate, ReduceCommunication, NormCommunication }

    /// <summary>Runs class <paramref name="problemClass"/> on <paramref name="world"/>; returns the exit code.</summary>
    public static int Run(Communicator world, char problemClass)
    {
        Parameters p = Classes[problemClass];
        if (!ActiveProcesses.PowerOfTwo(ref world, "CG"))
            return 0;
        var grid = new Grid(world, p.N);

        Report.Banner(world, "CG Benchmark",
            FormattableString.Invariant($" Size: {p.N,10}  (class {problemClass})"),
            FormattableString.Invariant($" Iterations: {p.Iterations,5}"),
            FormattableString.Invariant($" Number of nonzeroes per row: {p.NonZeros,8}"),
            FormattableString.Invariant($" Eigenvalue shift: {p.Shift,9:F3}"));

        var timers = new Timers("total", "conjg", "rcomm", "ncomm");
        var matrix = MatrixBuilder.Build(p.N, p.NonZeros, p.Shift, Rcond, grid);
        using var solver = new Solver(grid, matrix, timers);

        // One untimed outer iteration touches every page and compiles every path.
        solver.ResetX();
        solver.OuterIteration(p.Shift, out _, out _);

        solver.ResetX();
        timers.ClearAll();
        world.Barrier();
        timers.Start((int)T.Total);
        double zeta = 0;
        for (int it = 1; it <= p.Iterations; it++)
        {
            solver.OuterIteration(p.Shift, out double rnorm, out zeta);
            if (world.Rank == 0)
            {
                if (it == 1)
                    Console.WriteLine("\n   iteration           ||r||                 zeta");
                Console.WriteLine(FormattableString.Invariant($"    {it,5}      {rnorm,21:0.00000000000000E+00}{zeta,20:F13}"));
            }
        }
        timers.Stop((int)T.Total);
        double seconds = world.Allreduce(timers.Read((int)T.Total), Op.Max);

        bool print = world.Rank == 0;
        if (print)
            Console.WriteLine(" Benchmark completed ");
        bool verified = Verification.Check("zeta", zeta, p.Zeta, Epsilon, print);
        if (Timers.Detailed)
            timers.PrintSummary(world);
        double nz1 = p.NonZeros * (p.NonZeros + 1.0);
        return new Report
        {
            Name = "CG",
            Class = problemClass,
            Size = Report.Size1(p.N),
            Iterations = p.Iterations,
            Seconds = seconds,
            Mops = 1e-6 * 2 * p.Iterations * (double)p.N * (3.0 + nz1 + 25.0 * (5.0 + nz1) + 3.0) / seconds,
            OperationType = "floating point",
            Verified = verified,
            Processes = world.Size,
        }.Finish(world);
    }

    /// <summary>
    /// The process grid: p = R·C processes, C = R when log2 p is even and C = 2R when it is
    /// odd; rank = row·C + col. Rows of A are cut in R nearly equal blocks; columns in C,
    /// as the row blocks themselves when C = R, or each row block halved when C = 2R. The
    /// product A·v is summed over a process row into the row block, and the piece of the sum
    /// that is column block <c>col</c> of the result goes to the process whose column it is
    /// (the "transpose" partner), so A·v ends up distributed like v.
    /// </summary>
    internal sealed class Grid
    {
        public readonly Communicator World;
        public readonly Communicator Row;           // the processes of this process row
        public readonly int Rank, Rows, Cols, MyRow, MyCol;
        public readonly int FirstRow, RowCount, FirstCol, ColCount;
        public readonly int Transpose;              // rank that holds the row sums of my column block
        public readonly int SendStart, SendCount;   // the part of my row block the transpose partner needs

        public Grid(Communicator world, int n)
        {
            World = world;
            Rank = world.Rank;
            int log = 0;
            while (1 << (log + 1) <= world.Size)
                log++;
            Cols = 1 << (log - log / 2);
            Rows = 1 << (log / 2);
            MyRow = Rank / Cols;
            MyCol = Rank % Cols;
            Row = world.Split(MyRow, MyCol)!;
            (FirstRow, RowCount) = Block(n, Rows, MyRow);
            if (Cols == Rows)
            {
                (FirstCol, ColCount) = Block(n, Cols, MyCol);
                SendStart = 0;
                SendCount = RowCount;
                Transpose = MyCol * Cols + MyRow;
            }
            else
            {
                var (first, count) = Block(n, Rows, MyCol / 2);
                (FirstCol, ColCount) = Half(first, count, MyCol % 2);
                (SendStart, SendCount) = Half(0, RowCount, MyCol % 2);
                Transpose = (MyCol / 2) * Cols + 2 * MyRow + MyCol % 2;
            }
        }

        /// <summary>Block <paramref name="index"/> of <paramref name="n"/> items cut in <paramref name="parts"/>, the first n mod parts one longer.</summary>
        private static (int First, int Count) Block(int n, int parts, int index)
        {
            int size = n / parts, extra = n % parts;
            return (index * size + Math.Min(index, extra), size + (index < extra ? 1 : 0));
        }

        /// <summary>The first (longer) or second half of a range.</summary>
        private static (int First, int Count) Half(int first, int count, int which) =>
            which == 0 ? (first, (count + 1) / 2) : (first + (count + 1) / 2, count / 2);
    }

    /// <summary>This process's block of A in compressed rows, column indices local to its column block.</summary>
    internal sealed record Matrix(int[] RowStart, int[] Column, double[] Value);

    /// <summary>
    /// Builds A as NPB defines it (makea): A = Σ_i size_i · v_i v_iᵀ + (rcond - shift)·I, where
    /// v_i is a random sparse vector of <c>nonzeros</c> entries plus 0.5 at position i, and
    /// size_i = rcond^(i/n). Every process draws the whole sequence (the same on all) and
    /// keeps the products that fall in its block; duplicates within a row are summed in the
    /// order they were drawn.
    /// </summary>
    internal static class MatrixBuilder
    {
        public static Matrix Build(int n, int nonzeros, double shift, double rcond, Grid g)
        {
            double seed = 314159265;
            Random46.Randlc(ref seed, Random46.A);   // NPB draws one number before the matrix
            int lastRow = g.FirstRow + g.RowCount, lastCol = g.FirstCol + g.ColCount;

            var rows = new Growable<int>(1024);
            var cols = new Growable<int>(1024);
            var vals = new Growable<double>(1024);
            var v = new double[nonzeros + 1];
            var at = new int[nonzeros + 1];
            var taken = new bool[n];
            int range = 1;
            while (range < n)
                range *= 2;

            double scale = 1.0, ratio = Math.Pow(rcond, 1.0 / n);
            for (int outer = 0; outer < n; outer++)
            {
                // A sparse vector of `nonzeros` distinct random positions with random values.
                int count = 0;
                while (count < nonzeros)
                {
                    double value = Random46.Randlc(ref seed, Random46.A);
                    double where = Random46.Randlc(ref seed, Random46.A);
                    int i = (int)(range * where);
                    if (i >= n || taken[i])
                        continue;
                    taken[i] = true;
                    v[count] = value;
                    at[count++] = i;
                }
                for (int k = 0; k < count; k++)
                    taken[at[k]] = false;
                // Element `outer` is set to 0.5, appended when it was not drawn.
                bool set = false;
                for (int k = 0; k < count; k++)
                {
                    if (at[k] == outer)
                    {
                        v[k] = 0.5;
                        set = true;
                    }
                }
                if (!set)
                {
                    v[count] = 0.5;
                    at[count++] = outer;
                }

                for (int c = 0; c < count; c++)
                {
                    int col = at[c];
                    if (col < g.FirstCol || col >= lastCol)
                        continue;
                    double colScale = scale * v[c];
                    for (int r = 0; r < count; r++)
                    {
                        int row = at[r];
                        if (row < g.FirstRow || row >= lastRow)
                            continue;
                        rows.Add(row);
                        cols.Add(col);
                        vals.Add(v[r] * colScale);
                    }
                }
                scale *= ratio;
            }
            for (int i = g.FirstRow; i < lastRow; i++)
            {
                if (i >= g.FirstCol && i < lastCol)
                {
                    rows.Add(i);
                    cols.Add(i);
                    vals.Add(rcond - shift);
                }
            }
            return Compress(g, rows, cols, vals);
        }

        /// <summary>
        /// Groups the entries by row (keeping their order), sums duplicates of a column within a
        /// row, drops exact zeros, and lays the rows out compressed, columns in order of first appearance.
        /// </summary>
        private static Matrix Compress(Grid g, Growable<int> rows, Growable<int> cols, Growable<double> vals)
        {
            int nrows = g.RowCount, entries = rows.Count;
            var start = new int[nrows + 1];
            for (int e = 0; e < entries; e++)
                start[rows[e] - g.FirstRow + 1]++;
            for (int r = 0; r < nrows; r++)
                start[r + 1] += start[r];
            var byRowCol = new int[entries];
            var byRowVal = new double[entries];
            var next = (int[])start.Clone();
            for (int e = 0; e < entries; e++)
            {
                int slot = next[rows[e] - g.FirstRow]++;
                byRowCol[slot] = cols[e] - g.FirstCol;
                byRowVal[slot] = vals[e];
            }

            var rowStart = Mpi.AllocatePinned<int>(nrows + 1);
            var column = Mpi.AllocatePinned<int>(entries);
            var value = Mpi.AllocatePinned<double>(entries);
            var sum = new double[g.ColCount];
            var seen = new bool[g.ColCount];
            var order = new int[g.ColCount];
            int nz = 0;
            for (int r = 0; r < nrows; r++)
            {
                rowStart[r] = nz;
                int distinct = 0;
                for (int k = start[r]; k < start[r + 1]; k++)
                {
                    int c = byRowCol[k];
                    sum[c] += byRowVal[k];
                    if (!seen[c] && sum[c] != 0)
                    {
                        seen[c] = true;
                        order[distinct++] = c;
                    }
                }
                for (int d = 0; d < distinct; d++)
                {
                    int c = order[d];
                    seen[c] = false;
                    if (sum[c] != 0)
                    {
                        column[nz] = c;
                        value[nz++] = sum[c];
                    }
                    sum[c] = 0;
                }
            }
            rowStart[nrows] = nz;
            return new Matrix(rowStart, column, value);
        }
    }

    /// <summary>A list of unmanaged values that grows by doubling (the matrix triplets).</summary>
    internal sealed class Growable<TItem>(int capacity) where TItem : unmanaged
    {
        private TItem[] _items = new TItem[capacity];

        public int Count { get; private set; }

        public TItem this[int i] => _items[i];

        public void Add(TItem item)
        {
            if (Count == _items.Length)
                Array.Resize(ref _items, 2 * _items.Length);
            _items[Count++] = item;
        }
    }

    /// <summary>
    /// The vectors and the CG iteration of one process. Vectors x, z, p, q, r have this
    /// process's column block; w holds row sums. All live on the pinned heap for the run, so
    /// the loops run over raw pointers and MPI reads and writes them in place.
    /// </summary>
    internal sealed unsafe class Solver : IDisposable
    {
        private readonly Grid _g;
        private readonly Timers _timers;
        private readonly int _nrows, _ncols;
        private readonly int[] _rowStart, _column;
        private readonly double[] _value;
        private readonly double[] _x, _z, _p, _q, _r, _w, _partner;
        private readonly double[] _norms = new double[2]; // summed in place over the row
        private readonly RequestList _requests = new(2);
        // Recursive doubling over the process row: partner column and the part exchanged at each step.
        private readonly int[] _stepPartner, _stepSendStart, _stepSendCount, _stepRecvCount;

        public Solver(Grid g, Matrix a, Timers timers)
        {
            _g = g;
            _timers = timers;
            _nrows = g.RowCount;
            _ncols = g.ColCount;
            _rowStart = a.RowStart;
            _column = a.Column;
            _value = a.Value;
            int len = Math.Max(_nrows, _ncols) + 1;
            _x = Mpi.AllocatePinned<double>(len);
            _z = Mpi.AllocatePinned<double>(len);
            _p = Mpi.AllocatePinned<double>(len);
            _q = Mpi.AllocatePinned<double>(len);
            _r = Mpi.AllocatePinned<double>(len);
            _w = Mpi.AllocatePinned<double>(len);
            _partner = Mpi.AllocatePinned<double>(len);

            // Steps at distance 1, 2, ..., C/2 along the process row. With C = R every step
            // exchanges the whole row block; with C = 2R the first step (the pair 2k, 2k+1)
            // splits it, each keeping the half it will send on, and the later steps sum that half.
            int steps = 0;
            while (1 << steps < g.Cols)
                steps++;
            _stepPartner = new int[steps];
            _stepSendStart = new int[steps];
            _stepSendCount = new int[steps];
            _stepRecvCount = new int[steps];
            for (int s = 0; s < steps; s++)
            {
                _stepPartner[s] = g.MyRow * g.Cols + (g.MyCol ^ (1 << s));
                _stepRecvCount[s] = g.SendCount;
                if (s == 0 && g.Cols != g.Rows)
                {
                    _stepSendStart[s] = g.SendStart == 0 ? g.SendCount : 0;
                    _stepSendCount[s] = _nrows - g.SendCount;
                }
                else
                {
                    _stepSendStart[s] = g.SendStart;
                    _stepSendCount[s] = g.SendCount;
                }
            }
        }

        public void Dispose() => _requests.Dispose();

        /// <summary>x = (1, ..., 1).</summary>
        public void ResetX() => Array.Fill(_x, 1.0);

        /// <summary>
        /// One step of the inverse power method: z ≈ A⁻¹x by CG, ζ = shift + 1/(x·z),
        /// x = z/‖z‖; <paramref name="rnorm"/> is ‖x - A·z‖ of the solve.
        /// </summary>
        public void OuterIteration(double shift, out double rnorm, out double zeta)
        {
            rnorm = ConjugateGradient();
            double xz = 0, zz = 0;
            fixed (double* x = _x, z = _z)
            {
                for (int j = 0; j < _ncols; j++)
                {
                    xz += x[j] * z[j];
                    zz += z[j] * z[j];
                }
            }
            _norms[0] = xz;
            _norms[1] = zz;
            _timers.Start((int)T.NormCommunication);
            _g.Row.Allreduce(_norms, Op.Sum);
            _timers.Stop((int)T.NormCommunication);
            zeta = shift + 1.0 / _norms[0];
            double scale = 1.0 / Math.Sqrt(_norms[1]);
            fixed (double* x = _x, z = _z)
            {
                for (int j = 0; j < _ncols; j++)
                    x[j] = scale * z[j];
            }
        }

        private double RowSum(double value)
        {
            _timers.Start((int)T.ReduceCommunication);
            double sum = _g.Row.Allreduce(value, Op.Sum);
            _timers.Stop((int)T.ReduceCommunication);
            return sum;
        }

        private double ConjugateGradient()
        {
            _timers.Start((int)T.Conjugate);
            int n = _ncols;
            double rho;
            fixed (double* x = _x, z = _z, p = _p, q = _q, r = _r)
            {
                double sum = 0;
                for (int j = 0; j < n; j++)
                {
                    double xj = x[j];
                    q[j] = 0;
                    z[j] = 0;
                    r[j] = xj;
                    p[j] = xj;
                    sum += xj * xj;
                }
                rho = RowSum(sum);

                for (int step = 0; step < CgSteps; step++)
                {
                    Multiply(_p, _q);
                    double pq = 0;
                    for (int j = 0; j < n; j++)
                        pq += p[j] * q[j];
                    double alpha = rho / RowSum(pq);
                    double rho0 = rho;
                    double rr = 0;
                    for (int j = 0; j < n; j++)
                    {
                        z[j] += alpha * p[j];
                        double rj = r[j] - alpha * q[j];
                        r[j] = rj;
                        rr += rj * rj;
                    }
                    rho = RowSum(rr);
                    double beta = rho / rho0;
                    for (int j = 0; j < n; j++)
                        p[j] = r[j] + beta * p[j];
                }

                // The residual of the solve: ‖x - A·z‖.
                Multiply(_z, _r);
                double dd = 0;
                for (int j = 0; j < n; j++)
                {
                    double d = x[j] - r[j];
                    dd += d * d;
                }
                double norm = Math.Sqrt(RowSum(dd));
                _timers.Stop((int)T.Conjugate);
                return norm;
            }
        }

        /// <summary>result = A·v over the whole grid: local block product, row sums, transpose.</summary>
        private void Multiply(double[] v, double[] result)
        {
            fixed (double* pv = v, w = _w, a = _value)
            fixed (int* rowStart = _rowStart, col = _column)
            {
                // Two partial sums per row (even and odd entries) halve the chain of dependent adds.
                nint k = rowStart[0];
                for (int j = 0; j < _nrows; j++)
                {
                    nint end = rowStart[j + 1];
                    double even = 0, odd = 0;
                    for (; k + 1 < end; k += 2)
                    {
                        even += a[k] * pv[col[k]];
                        odd += a[k + 1] * pv[col[k + 1]];
                    }
                    if (k < end)
                    {
                        even += a[k] * pv[col[k]];
                        k++;
                    }
                    w[j] = even + odd;
                }
            }

            _timers.Start((int)T.ReduceCommunication);
            var world = _g.World;
            for (int s = 0; s < _stepPartner.Length; s++)
            {
                int start = _g.SendStart, count = _stepRecvCount[s];
                world.IRecv(_partner, start, count, _stepPartner[s], s + 1, _requests);
                world.ISend(_w, _stepSendStart[s], _stepSendCount[s], _stepPartner[s], s + 1, _requests);
                _requests.WaitAll();
                fixed (double* w = _w, other = _partner)
                {
                    for (int j = start; j < start + count; j++)
                        w[j] += other[j];
                }
            }
            if (_g.Transpose == _g.Rank)
            {
                Array.Copy(_w, _g.SendStart, result, 0, _ncols);
            }
            else
            {
                world.IRecv(result, 0, _ncols, _g.Transpose, 0, _requests);
                world.ISend(_w, _g.SendStart, _g.SendCount, _g.Transpose, 0, _requests);
                _requests.WaitAll();
            }
            _timers.Stop((int)T.ReduceCommunication);
        }
    }
}
