// ServiceLoad: MPI bandwidth beside a gRPC service in one job (PadicoTM's claim that
// both keep their full speed).  On 2 ranks, in one run:
//   bw-alone SIZE MB/s       osu_bw windows between rank 0 and 1 (1 GiB per size times SCALE), the service idle
//   rpc-alone N calls/s      N in-process gRPC clients calling Pi back to back (N = 1, 8), no bandwidth traffic
//   bw-serving SIZE MB/s     the same windows while 8 clients call the service
//   rpc-serving 8 calls/s    the calls answered meanwhile
// (alone and serving alternate 3 times per size; each number is the median of its 3).
//   cpu KIND rankR ...       where each rank's processor time went in the bandwidth phases alone
//                            and serving, and in the 8-client gRPC phases (ThreadCpu.cs): percent
//                            of one core by thread name (the bandwidth loop: rank 0's thread
//                            "bandwidth loop", rank 1's main thread)
// The service is samples/Service's (JobEngine's awaits on rank 0, Worker's on rank 1, completed
// by each process's progress engine) on its own communicator; the windows run on the main
// threads over another, so MPI runs at thread level Multiple.  Rank 0 also hosts the clients (the 2 cores are all there is).
//
//   mpiexec -n 2 motor ServiceLoad.dll SIZES SECONDS [SCALE] [INTERVALS]
//   SIZES: comma-separated message sizes; SECONDS: length of each gRPC-alone phase
using System.Globalization;
using System.MP;
using Grpc.Net.Client;
using MotorService;

const int Window = 64, Reps = 3;
var inv = CultureInfo.InvariantCulture;
long[] sizes = args.Length > 0 ? [.. args[0].Split(',').Select(s => long.Parse(s, inv))] : [8192, 65536, 1 << 20];
double seconds = args.Length > 1 ? double.Parse(args[1], inv) : 2;
double scale = args.Length > 2 ? double.Parse(args[2], inv) : 1;
long intervals = args.Length > 3 ? long.Parse(args[3], inv) : 10_000;

Mpi.Init(ThreadLevel.Multiple);
Communicator world = Communicator.World;
if (world.Size != 2 || Mpi.ThreadLevel != ThreadLevel.Multiple)
{
    Console.Error.WriteLine($"ServiceLoad needs 2 ranks and MPI thread level Multiple (has {world.Size} ranks, {Mpi.ThreadLevel})");
    return 1;
}
using Communicator serviceComm = world.Dup(), data = world.Dup();
var send = new byte[sizes.Max()];
var recv = new byte[sizes.Max()];
var reqs = new Request[Window];

const long Serving = 1L << 40; // rank 0's size word: this bandwidth phase runs beside the service
var cpuAlone = new ThreadCpu("bw-alone");
var cpuServing = new ThreadCpu("bw-serving");
var cpuRpc = new ThreadCpu("rpc-alone-8");
if (world.Rank == 1)
{
    var worker = new Thread(() => Worker.Run(serviceComm)) { Name = "service worker" };
    worker.Start();
    // Rank 0 says what comes next: a size to receive windows of (-2 - size: warm-up windows),
    // 0 to wait out a gRPC phase (Serving: one whose CPU time is counted), a size plus Serving
    // for windows beside the service, -1 to end.
    for (long n; (n = data.Bcast(0L, 0)) != -1;)
    {
        if (n == 0 || n == Serving) // a gRPC phase (Serving alone: the one whose CPU is counted)
        {
            if (n == Serving)
                cpuRpc.Begin();
            Idle(data.IBarrier());
            if (n == Serving)
                cpuRpc.End();
            continue;
        }
        bool warmUp = n < 0, beside = n >= Serving;
        long size = warmUp ? -2 - n : n % Serving;
        ThreadCpu? cpu = warmUp ? null : beside ? cpuServing : cpuAlone;
        cpu?.Begin();
        for (int i = 0, count = Windows(size, warmUp); i < count; i++)
            OsuWindow.Exchange(data, send, recv, reqs, (int)size);
        cpu?.End();
    }
    worker.Join();
    foreach (ThreadCpu c in new[] { cpuAlone, cpuServing, cpuRpc })
        Console.WriteLine(c.Report(1));
    return 0;
}

var engine = new JobEngine(serviceComm);
var mpiThread = new Thread(engine.Run) { Name = "service stop" };
mpiThread.Start();
WebApplication app = ServiceHost.Build(engine, 0);
await app.StartAsync();
using GrpcChannel channel = GrpcChannel.ForAddress(ServiceHost.Address(app));
var solver = new Solver.SolverClient(channel);
Console.WriteLine($"# ServiceLoad: {(Mpi.IsHosted ? "motor" : "dotnet")}, 2 ranks, windows of {Window}, Pi calls of {intervals} intervals");

// Warm-up (JIT, HTTP/2 connection, MPI paths), untimed.
await RpcPhase(8, Math.Min(seconds, 1));
for (double start = Mpi.Wtime(); Mpi.Wtime() - start < 1;)
    foreach (long n in sizes)
        Bandwidth(n, warmUp: true);

foreach (int clients in new[] { 1, 8 })
    Console.WriteLine(FormattableString.Invariant($"rpc-alone {clients} {await RpcPhase(clients, seconds, clients == 8 ? cpuRpc : null):F1}"));
// Alone and serving alternate, Reps times per size, so that the drift of a shared machine
// falls on both; each is the median of its Reps.
var alone = sizes.ToDictionary(n => n, _ => new List<double>());
var serving = sizes.ToDictionary(n => n, _ => new List<double>());
long servedCalls = 0;
double servedSeconds = 0;
for (int rep = 0; rep < Reps; rep++)
    foreach (long n in sizes)
    {
        alone[n].Add(Bandwidth(n, cpu: cpuAlone));
        using var stop = new CancellationTokenSource();
        Task<(long Calls, double Seconds)> load = SolverClient.Load(solver, stop.Token, 8, intervals);
        serving[n].Add(Bandwidth(n, cpu: cpuServing));
        await stop.CancelAsync();
        var (calls, elapsed) = await load;
        servedCalls += calls;
        servedSeconds += elapsed;
    }
foreach (long n in sizes)
    Console.WriteLine(FormattableString.Invariant($"bw-alone {n} {Median(alone[n]):F2}"));
foreach (long n in sizes)
    Console.WriteLine(FormattableString.Invariant($"bw-serving {n} {Median(serving[n]):F2}"));
Console.WriteLine(FormattableString.Invariant($"rpc-serving 8 {servedCalls / servedSeconds:F1}"));
foreach (ThreadCpu c in new[] { cpuAlone, cpuServing, cpuRpc })
    Console.WriteLine(c.Report(0));
data.Bcast(-1L, 0);
engine.RequestShutdown();
mpiThread.Join();
await app.StopAsync();
return 0;

// osu_bw at one size: MB/s over Windows(n) windows (a tenth as many to warm up).
// On a thread of its own, named for ThreadCpu (rank 0's main code runs on the thread pool after its first await).
double Bandwidth(long n, bool warmUp = false, ThreadCpu? cpu = null)
{
    double mbs = 0;
    var loop = new Thread(() => mbs = BandwidthHere(n, warmUp, cpu)) { Name = "bandwidth loop" };
    loop.Start();
    loop.Join();
    return mbs;
}

double BandwidthHere(long n, bool warmUp, ThreadCpu? cpu)
{
    data.Bcast(warmUp ? -2 - n : cpu == cpuServing ? n + Serving : n, 0);
    int count = Windows(n, warmUp);
    cpu?.Begin();
    double t0 = Mpi.Wtime();
    for (int i = 0; i < count; i++)
        OsuWindow.Exchange(data, send, recv, reqs, (int)n);
    double t = Mpi.Wtime() - t0;
    cpu?.End();
    return (double)n * Window * count / t / 1e6;
}

// Calls/s of `clients` clients for `duration` seconds; rank 1's main thread waits (without spinning) meanwhile.
async Task<double> RpcPhase(int clients, double duration, ThreadCpu? cpu = null)
{
    data.Bcast(cpu is null ? 0L : Serving, 0);
    cpu?.Begin();
    using var stop = new CancellationTokenSource(TimeSpan.FromSeconds(duration));
    var (calls, elapsed) = await SolverClient.Load(solver, stop.Token, clients, intervals);
    cpu?.End();
    Idle(data.IBarrier());
    return calls / elapsed;
}

// About 1 GiB per size (times SCALE) over the Reps measurements, at least 4 windows each; a tenth of one to warm up.
int Windows(long n, bool warmUp) => Math.Max(warmUp ? 1 : 4, (int)(scale * (1L << 30) / (warmUp ? 10 * Reps : Reps) / (n * Window)));

static double Median(List<double> values)
{
    values.Sort();
    return values[values.Count / 2];
}

// Waits for a request without holding MPI in a blocking call, so the service's thread keeps it.
static void Idle(Request request)
{
    while (!request.Test(out _))
        Thread.Sleep(1);
}
