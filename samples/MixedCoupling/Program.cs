// MixedCoupling: a C program and a C# program in one MPMD job, exchanging a field every step.
// The C program (solid.c, built as artifacts/bin/coupling-solid) computes heat conduction in a
// wall; this one computes the fluid flowing past it, which enters hot at the left and is carried
// to the right while it gives heat to the wall and takes it back.
//
// usage: mpiexec -n 1 coupling-solid [steps] : -n 2 motor MixedCoupling.dll [steps]
//
// Each program splits the world by application number (Mpi.AppNum) into a communicator of its
// own, where its ranks each update a block of the cells and Allgather puts the field together;
// an intercommunicator joins the two programs' communicators, and every step their leaders swap
// fields across it (Sendrecv) and each broadcasts the other's inside its own communicator.  At
// the end the leader runs the same coupled model serially and checks the job's answer against it.
using System.Globalization;
using System.MP;

const int Cells = 48;
int steps = args.Length > 0 ? int.Parse(args[0], CultureInfo.InvariantCulture) : 200;

var world = Communicator.World;
int app = Mpi.AppNum ?? 0;
using Communicator own = world.Split(app, world.Rank)!;
if (app == 0 || Cells % own.Size != 0 || steps < 1)
{
    Console.Error.WriteLine($"MixedCoupling: run it after the C program (coupling-solid) in the job, on a number of ranks that divides {Cells}");
    Mpi.Abort(2);
}
// The solid program's ranks come first in the world: its leader is world rank 0.
using Intercommunicator inter = Intercommunicator.Create(own, 0, world, 0, 17);

var fluid = new double[Cells];
var solid = new double[Cells];
var next = new double[Cells];
var finalSolid = new double[Cells];
int block = Cells / own.Size, lo = own.Rank * block;
for (int s = 0; s <= steps; s++)
{
    if (own.Rank == 0)
        inter.SendRecv(fluid, 0, 1, solid, 0, 1);
    own.Bcast(solid, 0);
    if (s == steps)
        break; // the last swap brought the wall's final field
    for (int i = lo; i < lo + block; i++)
        next[i] = Fluid(fluid, solid, i);
    own.Allgather(next[lo..(lo + block)], fluid);
}

if (own.Rank == 0)
{
    // The same model, serially: both halves, the same order of operations.
    var f = new double[Cells];
    var w = new double[Cells];
    var f2 = new double[Cells];
    var w2 = new double[Cells];
    for (int s = 0; s < steps; s++)
    {
        for (int i = 0; i < Cells; i++)
        {
            f2[i] = Fluid(f, w, i);
            double left = w[i > 0 ? i - 1 : i], right = w[i < Cells - 1 ? i + 1 : i];
            w2[i] = w[i] + 0.1 * (f[i] - w[i]) + 0.05 * (left - 2.0 * w[i] + right);
        }
        (f, f2) = (f2, f);
        (w, w2) = (w2, w);
    }
    double worst = 0;
    for (int i = 0; i < Cells; i++)
        worst = Math.Max(worst, Math.Max(Math.Abs(f[i] - fluid[i]), Math.Abs(w[i] - solid[i])));
    Console.WriteLine($"fluid (C#, {own.Size} ranks): {steps} steps, mean fluid temperature {fluid.Average():F6}, " +
                      $"mean wall temperature {solid.Average():F6}");
    Console.WriteLine($"coupled against serial: largest difference {worst:G3} ({(worst <= 1e-12 ? "OK" : "WRONG")})");
    if (worst > 1e-12)
        return 1;
}
return 0;

// Upwind advection from a hot inflow (1.0 at the left), and exchange with the wall.
static double Fluid(double[] fluid, double[] solid, int i)
{
    double upstream = i > 0 ? fluid[i - 1] : 1.0;
    return fluid[i] - 0.2 * (fluid[i] - upstream) + 0.1 * (solid[i] - fluid[i]);
}
