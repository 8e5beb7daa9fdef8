// The NAS Parallel Benchmarks (NPB 3.4, MPI version) over System.MP, one program for all:
//
//   mpiexec -n 2 motor  Npb.dll cg A
//   mpiexec -n 4 dotnet Npb.dll ep S
//
// Each benchmark prints NPB's standard report and exits 0 only when it verified (1 when
// verification failed, 2 when NPB does not define the class or process count asked for).
using System.MP;
using Npb.Common;

var world = Communicator.World;
if (args.Length != 2 && !(args.Length == 3 && args[0].Equals("bt", StringComparison.OrdinalIgnoreCase)))
{
    if (world.Rank == 0)
        Console.Error.WriteLine("usage: mpiexec -n <processes> motor Npb.dll <benchmark> <class> [full]   (benchmarks: ep is cg mg ft lu bt sp; classes: S W A B C D E; bt full: BT-IO)");
    return Refuse();
}

try
{
    char problemClass = ProblemClass.Parse(args[1]);
    int code = args[0].ToUpperInvariant() switch
    {
        "EP" => Npb.EP.Ep.Run(world, problemClass),
        "IS" => Npb.IS.Is.Run(world, problemClass),
        "CG" => Npb.CG.Cg.Run(world, problemClass),
        "MG" => Npb.MG.Mg.Run(world, problemClass),
        "FT" => Npb.FT.Ft.Run(world, problemClass),
        "LU" => Npb.LU.Lu.Run(world, problemClass),
        "BT" => Npb.BT.Bt.Run(world, problemClass, args.Length > 2 ? args[2] : null),
        "SP" => Npb.SP.Sp.Run(world, problemClass),
        _ => throw new RefusalException($"benchmark '{args[0]}' is not implemented here (NPB's MPI benchmarks: EP, IS, CG, MG, FT, LU, BT, SP)."),
    };
    ActiveProcesses.Release();
    return code;
}
catch (RefusalException refusal)
{
    if (world.Rank == 0)
        Console.Error.WriteLine(refusal.Message);
    return Refuse();
}

// Every rank refuses together, so MPI ends in order and the exit code is the refusal's
// alone (a rank leaving with a failure while MPI is in use would abort the job).
static int Refuse()
{
    Mpi.Shutdown();
    return RefusalException.ExitCode;
}
