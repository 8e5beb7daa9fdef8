// The C# client of the Service sample (no MPI here: plain `dotnet Service.dll client ...`).
using System.Diagnostics;
using System.Globalization;
using Grpc.Core;
using Grpc.Net.Client;

namespace MotorService;

/// <summary>Calls a running Service job on 127.0.0.1:port.</summary>
public static class SolverClient
{
    /// <summary>Runs one client command (see Program.cs) against 127.0.0.1:<paramref name="port"/>.</summary>
    public static async Task<int> Run(int port, string[] args)
    {
        using GrpcChannel channel = GrpcChannel.ForAddress($"http://127.0.0.1:{port}");
        var solver = new Solver.SolverClient(channel);
        long Arg(int i, long otherwise) => args.Length > i ? long.Parse(args[i], CultureInfo.InvariantCulture) : otherwise;
        try
        {
            switch (args)
            {
                case ["pi", ..]:
                {
                    long intervals = Arg(1, 1_000_000), calls = Arg(2, 1), concurrent = Arg(3, 1);
                    var replies = await Concurrently(calls, concurrent,
                        _ => solver.PiAsync(new PiRequest { Intervals = intervals }).ResponseAsync);
                    foreach (PiReply r in replies)
                        Console.WriteLine(FormattableString.Invariant($"pi = {r.Pi:R} from {intervals} intervals on {r.Ranks} ranks (call {r.Call})"));
                    return 0;
                }
                case ["heat", ..]:
                {
                    HeatReply reply = await solver.HeatAsync(HeatProblem((int)Arg(1, 6), (int)Arg(2, 200), (int)Arg(3, -1)));
                    foreach (PlateResult p in reply.Plates)
                        Console.WriteLine(FormattableString.Invariant($"plate {p.Id}: mean {p.Mean:R}, last change {p.Change:E2} (rank {p.Rank})"));
                    return 0;
                }
                case ["fault", ..]:
                    await solver.PiAsync(new PiRequest { Intervals = 1000, Fault = new Fault { Inject = true, Rank = (int)Arg(1, 1) } });
                    Console.WriteLine("the fault was not reported");
                    return 1;
                case ["load", ..]:
                {
                    double seconds = Arg(1, 5);
                    long concurrent = Arg(2, 1), intervals = Arg(3, 10_000);
                    using var duration = new CancellationTokenSource(TimeSpan.FromSeconds(seconds));
                    var (calls, elapsed) = await Load(solver, duration.Token, (int)concurrent, intervals);
                    Console.WriteLine(FormattableString.Invariant($"{calls} calls in {elapsed:F2} s with {concurrent} concurrent clients: {calls / elapsed:F0} calls/s"));
                    return 0;
                }
                case ["status"]:
                    StatusReply status = await solver.StatusAsync(new StatusRequest());
                    Console.WriteLine($"{status.Ranks} ranks; {status.Calls} calls taken, {status.Answered} ended, {status.Stopped} stopped by their callers; running: {Calls(status.Running)}");
                    return 0;
                case ["shutdown"]:
                    ShutdownReply done = await solver.ShutdownAsync(new ShutdownRequest());
                    Console.WriteLine($"the job took {done.Calls} calls and is shutting down; abandoned: {Calls(done.Abandoned)}");
                    return 0;
                default:
                    Console.Error.WriteLine("usage: Service.dll client PORT pi|heat|fault|load|status|shutdown ...");
                    return 2;
            }
        }
        catch (RpcException e)
        {
            Console.WriteLine($"gRPC error {e.StatusCode}: {e.Status.Detail}");
            return 3;
        }
    }

    private static string Calls(IEnumerable<long> calls) => calls.Any() ? string.Join(", ", calls) : "none";

    /// <summary>
    /// <paramref name="count"/> plates of different sizes and edge temperatures (the Python client
    /// makes the same); plate <paramref name="bad"/> has no interior cell, which its rank rejects.
    /// </summary>
    public static HeatRequest HeatProblem(int count, int steps, int bad = -1)
    {
        var request = new HeatRequest { Steps = steps };
        for (int i = 0; i < count; i++)
            request.Plates.Add(new Plate { Id = i, Width = i == bad ? 0 : 8 + i, Height = 6 + i % 3, Top = 100, Bottom = i, Left = 50, Right = 25 });
        return request;
    }

    /// <summary><paramref name="calls"/> calls, at most <paramref name="concurrent"/> at a time; results in call order.</summary>
    private static async Task<T[]> Concurrently<T>(long calls, long concurrent, Func<long, Task<T>> call)
    {
        var results = new T[calls];
        long next = -1;
        await Task.WhenAll(Enumerable.Range(0, (int)concurrent).Select(async _ =>
        {
            for (long i; (i = Interlocked.Increment(ref next)) < calls;)
                results[i] = await call(i);
        }));
        return results;
    }

    /// <summary>
    /// <paramref name="concurrent"/> clients each calling Pi back to back until <paramref name="stop"/>:
    /// the calls answered and the seconds they took.
    /// </summary>
    public static async Task<(long Calls, double Seconds)> Load(Solver.SolverClient solver, CancellationToken stop, int concurrent, long intervals)
    {
        long calls = 0;
        var clock = Stopwatch.StartNew();
        await Task.WhenAll(Enumerable.Range(0, concurrent).Select(async _ =>
        {
            while (!stop.IsCancellationRequested)
            {
                await solver.PiAsync(new PiRequest { Intervals = intervals });
                Interlocked.Increment(ref calls);
            }
        }));
        return (calls, clock.Elapsed.TotalSeconds);
    }
}
