// Rank 0's web host: Kestrel serving the Solver service over HTTP/2 on loopback.
using System.Net;
using Microsoft.AspNetCore.Hosting.Server;
using Microsoft.AspNetCore.Hosting.Server.Features;
using Microsoft.AspNetCore.Server.Kestrel.Core;

namespace MotorService;

/// <summary>Rank 0's ASP.NET Core host for the Solver service.</summary>
public static class ServiceHost
{
    /// <summary>A host serving gRPC (HTTP/2 without TLS) on 127.0.0.1:<paramref name="port"/>; stopping it (SIGTERM, Ctrl-C) shuts the job down, abandoning the calls still running.</summary>
    public static WebApplication Build(JobEngine engine, int port)
    {
        WebApplicationBuilder builder = WebApplication.CreateSlimBuilder();
        builder.Logging.SetMinimumLevel(LogLevel.Warning);
        builder.WebHost.ConfigureKestrel(k => k.Listen(IPAddress.Loopback, port, o => o.Protocols = HttpProtocols.Http2));
        builder.Services.AddGrpc();
        builder.Services.AddSingleton(engine);
        WebApplication app = builder.Build();
        app.MapGrpcService<SolverService>();
        app.Lifetime.ApplicationStopping.Register(() => engine.RequestShutdown());
        return app;
    }

    /// <summary>The address the host listens on (with the port chosen when 0 was asked for).</summary>
    public static string Address(WebApplication app) =>
        app.Services.GetRequiredService<IServer>().Features.Get<IServerAddressesFeature>()!.Addresses.First();
}
