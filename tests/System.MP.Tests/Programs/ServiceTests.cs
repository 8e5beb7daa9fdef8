using System.Diagnostics;
using System.Globalization;
using System.Text;
using System.Text.RegularExpressions;
using Grpc.Core;
using Grpc.Net.Client;
using MotorService;
using Xunit;

namespace System.MP.Tests;

/// <summary>
/// samples/Service: a job whose rank 0 serves gRPC, called over loopback from a C# client (here,
/// in the test) and from Debian's Python gRPC (the sample's client.py, stubs generated from
/// solver.proto when it starts).  Every answer is checked against the serial computation of
/// samples/Service/Problems.cs; a rank's exception must come back as a gRPC error naming the rank,
/// and the job must answer the next call; 8 calls in flight at once must each get their own answer,
/// and a call held open on every rank must let later calls through.  Requests above the limits of
/// solver.proto must be refused with INVALID_ARGUMENT naming the limit; a call whose deadline passes
/// or whose caller cancels must stop on every rank; Shutdown and SIGTERM must end the job with a
/// call running, reporting it abandoned.
/// Both cores, library mode and under motor; one job of 3 ranks.
/// </summary>
public class ServiceTests
{
    /// <summary>Debian's interpreter, with python3-grpcio and python3-grpc-tools (not a virtualenv's python3 on PATH).</summary>
    private const string DebianPython = "/usr/bin/python3";

    [Theory]
    [InlineData(2, false, false, true)]
    [InlineData(3, true, false, false)]
    [InlineData(2, false, true, false)]
    [InlineData(2, true, true, true)]
    public async Task ServesCorrectAnswersErrorsAndConcurrentCalls(int ranks, bool hosted, bool openMpi, bool python)
    {
        using var job = new RunningService(ranks, hosted, openMpi ? Job.Launcher.OpenMpi : Job.Launcher.Mpich);
        using GrpcChannel channel = GrpcChannel.ForAddress($"http://127.0.0.1:{job.Port}");
        var solver = new Solver.SolverClient(channel);

        // Answers against the serial computation; plates dealt in blocks by OScatterBlocks' rule.
        PiReply pi = await solver.PiAsync(new PiRequest { Intervals = 300_000 });
        Assert.Equal(ranks, pi.Ranks);
        Assert.Equal(SerialPi(300_000), pi.Pi, 1e-12);
        HeatRequest heat = Plates(7, 120);
        HeatReply relaxed = await solver.HeatAsync(heat);
        AssertRelaxed(heat, relaxed.Plates.Select(p => (p.Id, p.Mean, p.Change, p.Rank)).ToArray(), ranks);

        // A worker rejects a plate without cells, another rank throws on purpose: each comes back as a
        // gRPC error naming the rank and the exception, and the job answers the next call.
        var invalid = await Assert.ThrowsAsync<RpcException>(() => solver.HeatAsync(Plates(7, 10, bad: 6)).ResponseAsync);
        Assert.Equal(StatusCode.InvalidArgument, invalid.StatusCode);
        Assert.Equal($"rank {ranks - 1}: ArgumentException: plate 6 is 0x6: a plate needs at least one interior cell", invalid.Status.Detail);
        var fault = await Assert.ThrowsAsync<RpcException>(() => solver.PiAsync(
            new PiRequest { Intervals = 1000, Fault = new Fault { Inject = true, Rank = 1 } }).ResponseAsync);
        Assert.Equal(StatusCode.Internal, fault.StatusCode);
        Assert.Matches(@"^rank 1: InvalidOperationException: fault injected into call \d+$", fault.Status.Detail);
        Assert.Equal(SerialPi(1000), (await solver.PiAsync(new PiRequest { Intervals = 1000 })).Pi, 1e-12);

        // 8 calls in flight at once, each with its own problem, each with its own answer.
        var calls = Enumerable.Range(0, 8).Select(i => solver.PiAsync(new PiRequest { Intervals = 50_000 + 1_000 * i }).ResponseAsync).ToArray();
        PiReply[] answers = await Task.WhenAll(calls);
        for (int i = 0; i < 8; i++)
            Assert.Equal(SerialPi(50_000 + 1_000 * i), answers[i].Pi, 1e-12);
        Assert.Equal(8, answers.Select(a => a.Call).Distinct().Count());

        // Overlap, without timing: a call whose ranks hold their answers until a later call has
        // reached them is answered only if later calls get through while its own are in flight.
        Task<PiReply> held = solver.PiAsync(new PiRequest { Intervals = 20_000, HoldForLaterCalls = 1 }).ResponseAsync;
        var later = new List<long>();
        for (int i = 0; i < 100 && !held.IsCompleted; i++)
            later.Add((await solver.PiAsync(new PiRequest { Intervals = 1000 })).Call);
        PiReply first = await held;
        Assert.Equal(SerialPi(20_000), first.Pi, 1e-12);
        Assert.Contains(later, call => call > first.Call);

        if (python)
            CallFromPython(job.Port, ranks);

        // The sample's own C# client ends the job on every rank.
        Job.Result stop = Job.Run("dotnet", $"{Job.ManagedProgram("Service")} client {job.Port} shutdown", 60);
        Assert.True(stop.ExitCode == 0, stop.ToString());
        Assert.Matches(@"the job took \d+ calls and is shutting down; abandoned: none", stop.Output);
        Job.Result r = job.WaitForExit();
        Assert.True(r.ExitCode == 0, r.ToString());
        Assert.Matches(@"abandoned 0 still running \(calls: none\); all ranks stopped", r.Output);
    }

    /// <summary>
    /// A service other programs point at must survive them: absurd requests are refused before any
    /// rank sees them, a call that would run for minutes stops on every rank when its deadline passes
    /// or its caller cancels (the job then answers the next calls), and Shutdown or SIGTERM to rank 0
    /// with such a call running ends the job, reporting the call abandoned.  No timing: a stop that
    /// never happens shows as a call still running after a minute (the long call takes many minutes).
    /// </summary>
    [Theory]
    [InlineData(false, false, false, true)]
    [InlineData(true, false, true, false)]
    [InlineData(false, true, true, false)]
    [InlineData(true, true, false, true)]
    public async Task BoundsRequestsStopsCancelledCallsAndShutsDownWithCallsRunning(bool hosted, bool openMpi, bool sigterm, bool python)
    {
        const int ranks = 2;
        using var job = new RunningService(ranks, hosted, openMpi ? Job.Launcher.OpenMpi : Job.Launcher.Mpich);
        using GrpcChannel channel = GrpcChannel.ForAddress($"http://127.0.0.1:{job.Port}");
        var solver = new Solver.SolverClient(channel);

        // Absurd requests, refused with the field and its limit; no call is taken.
        await Refused(solver.PiAsync(new PiRequest { Intervals = 1L << 62 }),
            "intervals = 4611686018427387904 is above the limit of 1000000000000 (solver.proto)");
        await Refused(solver.PiAsync(new PiRequest { Intervals = Limits.MaxIntervals + 1 }),
            "intervals = 1000000000001 is above the limit of 1000000000000 (solver.proto)");
        await Refused(solver.PiAsync(new PiRequest { Intervals = 1000, HoldForLaterCalls = 101 }),
            "hold_for_later_calls = 101 is outside the limits 0 to 100 (solver.proto)");
        HeatRequest huge = Plates(2, 10);
        huge.Plates[1].Width = huge.Plates[1].Height = 1 << 30; // 2^60 cells: overflows an int
        await Refused(solver.HeatAsync(huge), "plate 1: width = 1073741824 is above the limit of 2048 (solver.proto)");
        await Refused(solver.HeatAsync(Plates(Limits.MaxPlates + 1, 1)), "plates = 4097 is above the limit of 4096 (solver.proto)");
        await Refused(solver.HeatAsync(Plates(2, int.MaxValue)), "steps = 2147483647 is above the limit of 1000000 (solver.proto)");
        HeatRequest slow = Plates(10, Limits.MaxSteps);
        foreach (Plate p in slow.Plates)
            p.Width = p.Height = Limits.MaxPlateSide;
        await Refused(solver.HeatAsync(slow),
            "41943040 cells × 1000000 steps = 41943040000000 cell updates is above the limit of 1000000000000 (solver.proto)");
        Assert.Equal(0, (await solver.StatusAsync(new StatusRequest())).Calls);
        Assert.Equal(SerialPi(1000), (await solver.PiAsync(new PiRequest { Intervals = 1000 })).Pi, 1e-12);

        // A call of the largest Pi and one of the largest Heat (minutes of work or more) whose deadlines
        // pass, then a Pi whose caller cancels it once it runs: each stops on every rank, counted as
        // stopped, and the job serves on.
        var late = await Assert.ThrowsAsync<RpcException>(() => solver.PiAsync(
            new PiRequest { Intervals = Limits.MaxIntervals }, deadline: DateTime.UtcNow.AddSeconds(2)).ResponseAsync);
        Assert.Equal(StatusCode.DeadlineExceeded, late.StatusCode);
        await Eventually(solver, s => s.Running.Count == 0 && s.Stopped == 1);
        HeatRequest longest = Plates(1, Limits.MaxSteps);
        longest.Plates[0].Width = longest.Plates[0].Height = 1000; // 10^6 cells × 10^6 steps: the limit
        late = await Assert.ThrowsAsync<RpcException>(() => solver.HeatAsync(longest, deadline: DateTime.UtcNow.AddSeconds(2)).ResponseAsync);
        Assert.Equal(StatusCode.DeadlineExceeded, late.StatusCode);
        await Eventually(solver, s => s.Running.Count == 0 && s.Stopped == 2);
        using (var cancel = new CancellationTokenSource())
        {
            Task<PiReply> cancelled = solver.PiAsync(new PiRequest { Intervals = Limits.MaxIntervals }, cancellationToken: cancel.Token).ResponseAsync;
            await Eventually(solver, s => s.Running.Count == 1);
            await cancel.CancelAsync();
            Assert.Equal(StatusCode.Cancelled, (await Assert.ThrowsAsync<RpcException>(() => cancelled)).StatusCode);
        }
        await Eventually(solver, s => s.Running.Count == 0 && s.Stopped == 3);
        Assert.Equal(SerialPi(300_000), (await solver.PiAsync(new PiRequest { Intervals = 300_000 })).Pi, 1e-12);
        HeatRequest heat = Plates(5, 40);
        AssertRelaxed(heat, (await solver.HeatAsync(heat)).Plates.Select(p => (p.Id, p.Mean, p.Change, p.Rank)).ToArray(), ranks);

        if (python)
            await BoundsFromPython(job.Port, solver);

        // A call running on every rank when the job is told to stop: abandoned, counted, reported.
        Task<PiReply> running = solver.PiAsync(new PiRequest { Intervals = Limits.MaxIntervals }).ResponseAsync;
        StatusReply busy = await Eventually(solver, s => s.Running.Count == 1);
        long call = busy.Running[0];
        if (sigterm)
        {
            Job.Result kill = Job.Run("kill", $"-TERM {job.Pid}", 60);
            Assert.True(kill.ExitCode == 0, kill.ToString());
        }
        else
        {
            ShutdownReply done = await solver.ShutdownAsync(new ShutdownRequest());
            Assert.Equal(busy.Calls, done.Calls);
            Assert.Equal(busy.Answered + 1, done.Calls);
            Assert.Equal(new[] { call }, done.Abandoned);
        }
        var abandoned = await Assert.ThrowsAsync<RpcException>(() => running.WaitAsync(TimeSpan.FromSeconds(60)));
        Assert.Equal(StatusCode.Unavailable, abandoned.StatusCode);
        Assert.Equal($"call {call} abandoned: the job is shutting down (stopped on every rank)", abandoned.Status.Detail);
        Job.Result r = job.WaitForExit();
        Assert.True(r.ExitCode == 0, r.ToString());
        Assert.Contains($"Service: took {busy.Calls} calls, abandoned 1 still running (calls: {call}); all ranks stopped", r.Output);
    }

    /// <summary>The Python client: an absurd request refused, a deadline that stops the call, then a call that succeeds.</summary>
    private static async Task BoundsFromPython(int port, Solver.SolverClient solver)
    {
        long stopped = (await solver.StatusAsync(new StatusRequest())).Stopped;
        Job.Result absurd = Python(port, "pi 4611686018427387904");
        Assert.Equal(3, absurd.ExitCode);
        Assert.Contains("gRPC error INVALID_ARGUMENT: intervals = 4611686018427387904 is above the limit of 1000000000000 (solver.proto)", absurd.Output);
        Job.Result wide = Python(port, "heat 2 10 -1 1073741824");
        Assert.Equal(3, wide.ExitCode);
        Assert.Contains("gRPC error INVALID_ARGUMENT: plate 0: width = 1073741824 is above the limit of 2048 (solver.proto)", wide.Output);
        Job.Result late = Python(port, $"pi {Limits.MaxIntervals} 1 1 2");
        Assert.Equal(3, late.ExitCode);
        Assert.Contains("gRPC error DEADLINE_EXCEEDED", late.Output);
        await Eventually(solver, s => s.Running.Count == 0 && s.Stopped == stopped + 1);
        Job.Result pi = Python(port, "pi 1000");
        Assert.True(pi.ExitCode == 0, pi.ToString());
        Assert.Equal(SerialPi(1000), double.Parse(Regex.Match(pi.Output, @"^pi = (\S+)", RegexOptions.Multiline).Groups[1].Value, CultureInfo.InvariantCulture), 1e-12);
    }

    /// <summary>The call fails with INVALID_ARGUMENT and exactly <paramref name="message"/> (a call taken instead would run for hours: a minute fails it).</summary>
    private static async Task Refused<T>(AsyncUnaryCall<T> call, string message)
    {
        var e = await Assert.ThrowsAsync<RpcException>(() => call.ResponseAsync.WaitAsync(TimeSpan.FromSeconds(60)));
        Assert.Equal((StatusCode.InvalidArgument, message), (e.StatusCode, e.Status.Detail));
    }

    /// <summary>
    /// The job's status once <paramref name="holds"/> of it (asked every 50 ms); a minute without
    /// fails, as a hang: the states waited for come in seconds when the service works.
    /// </summary>
    private static async Task<StatusReply> Eventually(Solver.SolverClient solver, Func<StatusReply, bool> holds)
    {
        var clock = Stopwatch.StartNew();
        while (true)
        {
            StatusReply s = await solver.StatusAsync(new StatusRequest());
            if (holds(s))
                return s;
            Assert.True(clock.Elapsed < TimeSpan.FromSeconds(60), $"the job's status did not come to the state awaited in 60 s: {s}");
            await Task.Delay(50);
        }
    }

    /// <summary>The sample's client.py against the job on <paramref name="port"/>.</summary>
    private static Job.Result Python(int port, string args)
    {
        Assert.True(File.Exists(DebianPython), $"{DebianPython} is missing: install python3-grpcio and python3-grpc-tools (./build.sh deps)");
        string client = Path.Combine(Path.GetDirectoryName(Job.ManagedProgram("Service"))!, "client.py");
        return Job.Run(DebianPython, $"{client} {port} {args}", 60);
    }

    /// <summary>The Python client: the same answers, the same error, then a call that succeeds.</summary>
    private static void CallFromPython(int port, int ranks)
    {
        Job.Result Python(string args) => ServiceTests.Python(port, args);

        Job.Result pi = Python("pi 200000 8 8");
        Assert.True(pi.ExitCode == 0, pi.ToString());
        var values = Regex.Matches(pi.Output, @"^pi = (\S+) from 200000 intervals on (\d+) ranks", RegexOptions.Multiline);
        Assert.Equal(8, values.Count);
        Assert.All(values, m => Assert.Equal(SerialPi(200_000), double.Parse(m.Groups[1].Value, CultureInfo.InvariantCulture), 1e-12));
        Assert.All(values, m => Assert.Equal(ranks.ToString(CultureInfo.InvariantCulture), m.Groups[2].Value));

        Job.Result bad = Python("heat 5 50 4");
        Assert.Equal(3, bad.ExitCode);
        Assert.Contains($"gRPC error INVALID_ARGUMENT: rank {ranks - 1}: ArgumentException: plate 4 is 0x7", bad.Output);

        Job.Result heat = Python("heat 5 50");
        Assert.True(heat.ExitCode == 0, heat.ToString());
        var plates = Regex.Matches(heat.Output, @"^plate (\d+): mean (\S+), last change (\S+) \(rank (\d+)\)", RegexOptions.Multiline)
            .Select(m => (int.Parse(m.Groups[1].Value, CultureInfo.InvariantCulture), Parse(m.Groups[2].Value), Parse(m.Groups[3].Value),
                          int.Parse(m.Groups[4].Value, CultureInfo.InvariantCulture))).ToArray();
        AssertRelaxed(Plates(5, 50), plates, ranks, changeTolerance: 0.01);
    }

    private static double Parse(string s) => double.Parse(s, CultureInfo.InvariantCulture);

    /// <summary>The same plates as the sample's clients make (SolverClient.HeatProblem, client.py).</summary>
    private static HeatRequest Plates(int count, int steps, int bad = -1)
    {
        var request = new HeatRequest { Steps = steps };
        for (int i = 0; i < count; i++)
            request.Plates.Add(new Plate { Id = i, Width = i == bad ? 0 : 8 + i, Height = 6 + i % 3, Top = 100, Bottom = i, Left = 50, Right = 25 });
        return request;
    }

    private static double SerialPi(long intervals) => Solvers.PiPart(intervals, 0, intervals);

    /// <summary>
    /// Each plate's mean and last change equal a serial relaxation; the plates come back in request
    /// order from the ranks OScatterBlocks' rule deals them to (<paramref name="changeTolerance"/>: relative,
    /// for a change printed with 3 digits).
    /// </summary>
    private static void AssertRelaxed(HeatRequest request, (int Id, double Mean, double Change, int Rank)[] got, int ranks, double changeTolerance = 1e-12)
    {
        Assert.Equal(request.Plates.Count, got.Length);
        for (int i = 0; i < got.Length; i++)
        {
            Plate q = request.Plates[i];
            var spec = new PlateSpec { Id = q.Id, Width = q.Width, Height = q.Height, Top = q.Top, Bottom = q.Bottom, Left = q.Left, Right = q.Right };
            PlateOutcome serial = Solvers.Relax([spec], request.Steps, rank: -1)[0];
            int owner = Enumerable.Range(0, ranks).Single(r => Solvers.Block(got.Length, ranks, r) is var (first, end) && first <= i && i < end);
            Assert.Equal((q.Id, owner), (got[i].Id, got[i].Rank));
            Assert.Equal(serial.Mean, got[i].Mean, 1e-12);
            Assert.True(Math.Abs(serial.Change - got[i].Change) <= changeTolerance * serial.Change, $"plate {i}: change {got[i].Change}, serial {serial.Change}");
        }
    }

    /// <summary>
    /// The Service sample started under a launcher (port 0: the job picks a free one and prints it),
    /// running while the test calls it; killed on dispose if it has not stopped by itself.
    /// </summary>
    private sealed class RunningService : IDisposable
    {
        private readonly Process _process;
        private readonly StringBuilder _output = new();

        internal RunningService(int ranks, bool hosted, Job.Launcher launcher)
        {
            string program = Job.ManagedProgram("Service");
            string launch = hosted ? $"{Job.Motor} {program}" : $"dotnet {program}";
            var psi = new ProcessStartInfo(Job.FindLauncher(launcher), $"-n {ranks} {launch} 0")
            {
                RedirectStandardOutput = true,
                RedirectStandardError = true,
                UseShellExecute = false,
            };
            if (launcher == Job.Launcher.OpenMpi)
            {
                Job.RequireOpenMpi();
                psi.Arguments = "--oversubscribe " + psi.Arguments;
                foreach (var (k, v) in Job.OpenMpiEnvironment)
                    psi.Environment[k] = v;
            }
            _process = new Process { StartInfo = psi };
            _process.OutputDataReceived += (_, e) => Append(e.Data);
            _process.ErrorDataReceived += (_, e) => Append(e.Data);
            _process.Start();
            _process.BeginOutputReadLine();
            _process.BeginErrorReadLine();
            var clock = Stopwatch.StartNew();
            Match listening;
            while (!(listening = Regex.Match(Output, @"rank 0 \(pid (\d+)\) serves Solver on http://127\.0\.0\.1:(\d+)")).Success)
            {
                Assert.False(_process.HasExited, $"the job ended before serving:\n{Output}");
                Assert.True(clock.Elapsed < TimeSpan.FromSeconds(90), $"the job did not start serving in 90 s:\n{Output}");
                Thread.Sleep(50);
            }
            Pid = int.Parse(listening.Groups[1].Value, CultureInfo.InvariantCulture);
            Port = int.Parse(listening.Groups[2].Value, CultureInfo.InvariantCulture);
        }

        internal int Port { get; }

        /// <summary>Rank 0's process.</summary>
        internal int Pid { get; }

        private string Output
        {
            get
            {
                lock (_output)
                    return _output.ToString();
            }
        }

        private void Append(string? line)
        {
            if (line is not null)
                lock (_output)
                    _output.AppendLine(line);
        }

        /// <summary>Waits (up to a minute) for the job to end by itself.</summary>
        internal Job.Result WaitForExit()
        {
            bool exited = _process.WaitForExit(60_000);
            if (exited)
                _process.WaitForExit(); // flush the readers
            return new Job.Result(exited ? _process.ExitCode : -1, Output, !exited);
        }

        public void Dispose()
        {
            try
            {
                if (!_process.HasExited)
                    _process.Kill(entireProcessTree: true);
                _process.WaitForExit();
            }
            catch (InvalidOperationException)
            {
            }
            _process.Dispose();
        }
    }
}
