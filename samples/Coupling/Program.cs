// Coupling: the multiscale use case.  A macro-scale job simulates heat flow
// along a bar made of a layered material whose conductivity depends on
// temperature.  At every macro step it needs, for each macro cell, the
// effective conductivity of that cell's microstructure at the cell's current
// temperature - a fine-scale problem.  The macro job spawns a sub-job of
// micro solvers (running this same program), hands them [Transportable] work
// objects across the intercommunicator (OScatterBlocks), and gathers the results
// (OGather).  At the end the macro job repeats the whole run serially and
// checks that the coupled answer is identical.
//
// usage: mpiexec -n 1 motor Coupling.dll [micro_ranks=2] [cells=16] [steps=200]
// Needs an MPI with dynamic processes (Open MPI: mpirun.openmpi; Debian's
// MPICH over UCX cannot spawn).
using System.Globalization;
using System.MP;
using Coupling;

if (Communicator.Parent is Intercommunicator parent)
    return Micro.Serve(parent);

int microRanks = args.Length > 0 ? int.Parse(args[0], CultureInfo.InvariantCulture) : 2;
int cells = args.Length > 1 ? int.Parse(args[1], CultureInfo.InvariantCulture) : 16;
int steps = args.Length > 2 ? int.Parse(args[2], CultureInfo.InvariantCulture) : 200;
if (microRanks < 1 || cells < 2 || steps < 1)
{
    Console.Error.WriteLine("usage: Coupling.dll [micro_ranks>=1] [cells>=2] [steps>=1]");
    return 2;
}

var world = Communicator.World;
var (command, selfArgs) = Mpi.SelfCommand;
Intercommunicator micro;
try
{
    micro = world.Spawn(command, selfArgs, microRanks);
}
catch (MpiException e)
{
    if (world.Rank == 0)
        Console.Error.WriteLine($"Coupling needs an MPI library that can spawn processes:\n{e.Message}\n" +
                                "Run it with Open MPI, e.g. mpirun.openmpi -n 1 motor Coupling.dll");
    return 3;
}

// Only macro rank 0 drives the micro job; the other macro ranks take part in
// the intercommunicator collectives as ProcNull.
bool driver = world.Rank == 0;
int root = driver ? Mpi.Root : Mpi.ProcNull;
var bar = Macro.Initial(cells);
double t0 = Mpi.Wtime();
var microHosts = new SortedSet<string>(StringComparer.Ordinal);
for (int step = 0; step < steps; step++)
{
    micro.OBcast(new Command { Step = step, Done = false }, root);
    MicroTask[]? tasks = driver ? Macro.Tasks(bar) : null;
    micro.OScatterBlocks(tasks, root);
    MicroResult[]? results = micro.OGather(Array.Empty<MicroResult>(), root);
    if (driver)
    {
        bar = Macro.Step(bar, Macro.Conductivities(results!, cells));
        microHosts.UnionWith(results!.Select(r => r.Host ?? "?"));
    }
}
micro.OBcast(new Command { Step = steps, Done = true }, root);
micro.Disconnect();
double seconds = Mpi.Wtime() - t0;

if (!driver)
    return 0;
// The same run without the micro job: identical arithmetic, so identical bits.
var serial = Macro.Initial(cells);
for (int step = 0; step < steps; step++)
    serial = Macro.Step(serial, Macro.Conductivities([.. Macro.Tasks(serial).Select(Micro.Solve)], cells));
double diff = bar.Zip(serial, (a, b) => Math.Abs(a - b)).Max();
Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
    $"coupled {cells} macro cells with {microRanks} micro ranks for {steps} steps in {seconds:F2} s; " +
    $"T(mid) = {bar[cells / 2]:F6}; max |coupled - serial| = {diff:E2}"));
Console.WriteLine($"macro rank 0 ran on {Mpi.ProcessorName}; micro solvers ran on {string.Join(", ", microHosts)}");
if (diff != 0)
{
    Console.Error.WriteLine("the coupled result differs from the serial computation");
    return 1;
}
return 0;

namespace Coupling
{
    /// <summary>What the macro job tells the micro job before each step.</summary>
    [Transportable]
    public sealed class Command
    {
        public int Step;
        public bool Done;
    }

    /// <summary>
    /// One micro problem: the layered microstructure of a macro cell at a temperature.
    /// Value fields always travel; the reference field travels because it is marked.
    /// </summary>
    [Transportable]
    public sealed class MicroTask
    {
        public int Cell;
        public double Temperature;
        [Transportable] public Layer[] Layers = [];
    }

    /// <summary>A layer of the microstructure: its thickness and base conductivity.</summary>
    [Transportable]
    public struct Layer
    {
        public double Thickness;
        public double BaseConductivity;
    }

    /// <summary>The micro job's answer for one cell.</summary>
    [Transportable]
    public sealed class MicroResult
    {
        public int Cell;
        public double Conductivity;
        /// <summary>|numerical - analytic| effective conductivity: the micro solver's own check.</summary>
        public double Error;
        public int SolvedBy;
        /// <summary>The node the micro solver ran on (MPI_Get_processor_name).</summary>
        [Transportable] public string? Host;
    }

    internal static class Macro
    {
        internal static double[] Initial(int cells)
        {
            var t = new double[cells];
            t[0] = 1.0; // hot end; the far end stays at 0
            return t;
        }

        /// <summary>Each cell's microstructure: layers that differ from cell to cell (deterministic).</summary>
        internal static MicroTask[] Tasks(double[] bar)
        {
            var tasks = new MicroTask[bar.Length];
            for (int i = 0; i < bar.Length; i++)
            {
                var layers = new Layer[8 + i % 5];
                for (int j = 0; j < layers.Length; j++)
                    layers[j] = new Layer { Thickness = 1.0 + (i * 7 + j * 3) % 4, BaseConductivity = 0.5 + (i + 2 * j) % 6 };
                tasks[i] = new MicroTask { Cell = i, Temperature = bar[i], Layers = layers };
            }
            return tasks;
        }

        internal static double[] Conductivities(MicroResult[] results, int cells)
        {
            var k = new double[cells];
            var seen = new bool[cells];
            foreach (MicroResult r in results)
            {
                if (r.Error > 1e-9)
                    throw new InvalidOperationException($"micro solver {r.SolvedBy} is off by {r.Error:E2} at cell {r.Cell}");
                k[r.Cell] = r.Conductivity;
                seen[r.Cell] = true;
            }
            if (results.Length != cells || Array.IndexOf(seen, false) >= 0)
                throw new InvalidOperationException($"{results.Length} micro results for {cells} cells");
            return k;
        }

        /// <summary>One explicit step of the heat equation with face conductivities from neighbouring cells.</summary>
        internal static double[] Step(double[] t, double[] k)
        {
            const double dt = 0.05;
            var next = (double[])t.Clone();
            for (int i = 1; i < t.Length - 1; i++)
            {
                double kw = 2 * k[i - 1] * k[i] / (k[i - 1] + k[i]);
                double ke = 2 * k[i] * k[i + 1] / (k[i] + k[i + 1]);
                next[i] = t[i] + dt * (ke * (t[i + 1] - t[i]) - kw * (t[i] - t[i - 1]));
            }
            return next;
        }
    }

    internal static class Micro
    {
        /// <summary>The micro job: receive tasks, solve them, send results back, until told to stop.</summary>
        internal static int Serve(Intercommunicator parent)
        {
            while (true)
            {
                Command? command = parent.OBcast<Command>(null, 0);
                if (command is null || command.Done)
                    break;
                MicroTask[] mine = parent.OScatterBlocks<MicroTask>(null, 0)!;
                var results = new MicroResult[mine.Length];
                for (int i = 0; i < mine.Length; i++)
                {
                    results[i] = Solve(mine[i]);
                    results[i].SolvedBy = Communicator.World.Rank;
                    results[i].Host = Mpi.ProcessorName;
                }
                parent.OGather(results, 0);
            }
            parent.Disconnect();
            return 0;
        }

        /// <summary>
        /// Steady conduction through the layers, -(k u')' = 0 with u = 0 and 1 at
        /// the ends, on a fine grid (tridiagonal solve); the effective
        /// conductivity is the flux times the total thickness.  k depends on the
        /// temperature: k = k0 (1 + T / 2).
        /// </summary>
        internal static MicroResult Solve(MicroTask task)
        {
            const int perLayer = 16;
            int n = task.Layers.Length * perLayer; // fine cells
            var h = new double[n];
            var k = new double[n];
            double length = 0;
            for (int c = 0; c < n; c++)
            {
                Layer layer = task.Layers[c / perLayer];
                h[c] = layer.Thickness / perLayer;
                k[c] = layer.BaseConductivity * (1 + task.Temperature / 2);
                length += h[c];
            }
            // Unknowns: u at the n - 1 interior nodes; conductance of fine cell c is k/h.
            int m = n - 1;
            var lower = new double[m];
            var diag = new double[m];
            var upper = new double[m];
            var rhs = new double[m];
            for (int j = 0; j < m; j++)
            {
                double gw = k[j] / h[j], ge = k[j + 1] / h[j + 1];
                lower[j] = -gw;
                diag[j] = gw + ge;
                upper[j] = -ge;
            }
            rhs[m - 1] = k[n - 1] / h[n - 1]; // u = 1 at the right end
            // Thomas algorithm.
            for (int j = 1; j < m; j++)
            {
                double f = lower[j] / diag[j - 1];
                diag[j] -= f * upper[j - 1];
                rhs[j] -= f * rhs[j - 1];
            }
            var u = new double[m];
            u[m - 1] = rhs[m - 1] / diag[m - 1];
            for (int j = m - 2; j >= 0; j--)
                u[j] = (rhs[j] - upper[j] * u[j + 1]) / diag[j];
            double flux = k[0] / h[0] * u[0]; // through the first fine cell
            double numerical = flux * length;
            // Layers in series: the thickness-weighted harmonic mean.
            double resistance = 0;
            for (int c = 0; c < n; c++)
                resistance += h[c] / k[c];
            double analytic = length / resistance;
            return new MicroResult { Cell = task.Cell, Conductivity = numerical, Error = Math.Abs(numerical - analytic) / analytic };
        }
    }
}
