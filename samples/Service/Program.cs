// Service: a parallel program as a service.  Rank 0 of the job hosts a gRPC
// service (solver.proto) on a loopback port; every call is solved by all ranks
// (its work dealt out in blocks, computed, gathered) and answered; a failure on any
// rank comes back as a gRPC error naming the rank, and the job keeps serving.
//
// usage: mpiexec.mpich -n 4 motor Service.dll [port]      serve (port 0: any free port)
//        dotnet Service.dll client PORT pi INTERVALS [CALLS [CONCURRENT]]
//        dotnet Service.dll client PORT heat PLATES STEPS [BAD_PLATE]
//        dotnet Service.dll client PORT fault RANK
//        dotnet Service.dll client PORT load SECONDS CONCURRENT INTERVALS
//        dotnet Service.dll client PORT shutdown
using System.Globalization;
using System.MP;
using System.Net;
using Microsoft.AspNetCore.Hosting.Server;
using Microsoft.AspNetCore.Hosting.Server.Features;
using Microsoft.AspNetCore.Server.Kestrel.Core;
using MotorService;

if (args is ["client", var port, .. var rest])
    return await SolverClient.Run(int.Parse(port, CultureInfo.InvariantCulture), rest);

// The engine's loop is the only code that calls MPI on rank 0, on this (the main) thread.
Mpi.Init(ThreadLevel.Funneled);
Communicator world = Communicator.World;
if (world.Rank != 0)
{
    Worker.Run(world);
    return 0;
}
var engine = new JobEngine(world);
WebApplication app = ServiceHost.Build(engine, args.Length > 0 ? int.Parse(args[0], CultureInfo.InvariantCulture) : 50051);
app.Start();
Console.WriteLine($"Service: {world.Size} ranks, rank 0 serves Solver on {ServiceHost.Address(app)}");
engine.Run();
await app.StopAsync();
Console.WriteLine($"Service: answered {engine.Answered} calls; all ranks stopped");
return 0;

/// <summary>Rank 0's ASP.NET Core host for the Solver service.</summary>
internal static class ServiceHost
{
    /// <summary>A host serving gRPC (HTTP/2 without TLS) on 127.0.0.1:<paramref name="port"/>; stopping it (SIGTERM, Ctrl-C) shuts the job down.</summary>
    public static WebApplication Build(JobEngine engine, int port)
    {
        WebApplicationBuilder builder = WebApplication.CreateSlimBuilder();
        builder.Logging.SetMinimumLevel(LogLevel.Warning);
        builder.WebHost.ConfigureKestrel(k => k.Listen(IPAddress.Loopback, port, o => o.Protocols = HttpProtocols.Http2));
        builder.Services.AddGrpc();
        builder.Services.AddSingleton(engine);
        WebApplication app = builder.Build();
        app.MapGrpcService<SolverService>();
        app.Lifetime.ApplicationStopping.Register(engine.RequestShutdown);
        return app;
    }

    /// <summary>The address the host listens on (with the port chosen when 0 was asked for).</summary>
    public static string Address(WebApplication app) =>
        app.Services.GetRequiredService<IServer>().Features.Get<IServerAddressesFeature>()!.Addresses.First();
}
