// Service: a parallel program as a service.  Rank 0 of the job hosts a gRPC
// service (solver.proto) on a loopback port; every call is solved by all ranks
// (its work dealt out in blocks, computed, gathered) and answered; a failure on any
// rank comes back as a gRPC error naming the rank, and the job keeps serving.  Requests
// are bounded (Limits.cs), a call stops on every rank when its caller's deadline passes,
// and Shutdown or SIGTERM ends the job soon even with calls running (they are abandoned).
//
// usage: mpiexec.mpich -n 4 motor Service.dll [port]      serve (port 0: any free port)
//        dotnet Service.dll client PORT pi INTERVALS [CALLS [CONCURRENT]]
//        dotnet Service.dll client PORT heat PLATES STEPS [BAD_PLATE]
//        dotnet Service.dll client PORT fault RANK
//        dotnet Service.dll client PORT load SECONDS CONCURRENT INTERVALS
//        dotnet Service.dll client PORT status
//        dotnet Service.dll client PORT shutdown
using System.Globalization;
using System.MP;
using MotorService;

if (args is ["client", var port, .. var rest])
    return await SolverClient.Run(int.Parse(port, CultureInfo.InvariantCulture), rest);

// gRPC handlers post and await MPI requests on the thread pool: thread level Multiple.
Mpi.Init(ThreadLevel.Multiple);
Communicator world = Communicator.World;
if (world.Rank != 0)
{
    Worker.Run(world);
    return 0;
}
var engine = new JobEngine(world);
WebApplication app = ServiceHost.Build(engine, args.Length > 0 ? int.Parse(args[0], CultureInfo.InvariantCulture) : 50051);
app.Start();
Console.WriteLine($"Service: {world.Size} ranks, rank 0 (pid {Environment.ProcessId}) serves Solver on {ServiceHost.Address(app)}");
engine.Run(); // until Shutdown or SIGTERM, and the calls still running have stopped on every rank
await app.StopAsync();
ShutdownReport report = engine.Report!;
string abandoned = report.Abandoned.Length == 0 ? "none" : string.Join(", ", report.Abandoned);
Console.WriteLine($"Service: took {report.Calls} calls, abandoned {report.Abandoned.Length} still running (calls: {abandoned}); all ranks stopped");
return 0;
