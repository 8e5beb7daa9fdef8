using System.Globalization;
using System.Text.Json;
using System.Text.RegularExpressions;
using Microsoft.Diagnostics.Tracing;
using Scenarios;
using Xunit;

namespace System.MP.Tests;

/// <summary>
/// The MPI profile, timeline and EventSource events (src/System.MP/Diagnostics/MpiProfile.cs),
/// on a program whose operations are known (tests/Scenarios/Diagnostics/ProfileKnown.cs: rank 0
/// sends 1,000 messages of 8 bytes to rank 1, every rank runs 10 Allreduces of one long, then
/// exchanges 16 bytes with the other rank 5 times through a RequestList and 5 times through
/// Requests): the figures must be exact.  Turned on by <c>MOTOR_PROFILE</c> in library mode and
/// <c>motor --profile</c> under motor.
/// </summary>
public class ProfileTests
{
    private const int Sends = 1000, Allreduces = 10, Exchanges = 5;

    /// <summary>The bytes of each rank's operations: 8 per message and Allreduce, 16 per nonblocking post.</summary>
    private const long BytesPerRank = 8L * (Sends + Allreduces) + 16L * 4 * Exchanges;

    public static TheoryData<bool, bool> Modes => new() { { false, false }, { true, false }, { false, true }, { true, true } };

    private static string TempFile(string name) =>
        Path.Combine(Path.GetTempPath(), $"motor-profile-{Guid.NewGuid():N}-{name}");

    /// <summary>A 2-rank run of <paramref name="scenario"/> with the profile set to <paramref name="mode"/> (motor: by its flag).</summary>
    private static Job.Result Run(Scenario scenario, bool hosted, bool openMpi, string mode) =>
        Job.RunScenario(scenario, 2, hosted: hosted, motorOptions: hosted ? $"--profile {mode}" : "",
                        env: hosted ? null : new Dictionary<string, string> { ["MOTOR_PROFILE"] = mode },
                        launcher: openMpi ? Job.Launcher.OpenMpi : Job.Launcher.Mpich);

    /// <summary>The row of an operation in the table: its total calls and bytes.</summary>
    private static (long Calls, long Bytes) Row(string table, string operation)
    {
        Match m = Regex.Match(table, $@"^{operation} +(\d+) +(\d+) ", RegexOptions.Multiline);
        Assert.True(m.Success, $"no row for {operation} in\n{table}");
        return (long.Parse(m.Groups[1].Value, CultureInfo.InvariantCulture), long.Parse(m.Groups[2].Value, CultureInfo.InvariantCulture));
    }

    private static void AssertKnownTable(string table)
    {
        Assert.Contains("Motor MPI profile: 2 ranks", table);
        Assert.Equal((Sends, 8L * Sends), Row(table, "Send"));
        Assert.Equal((Sends, 8L * Sends), Row(table, "Recv"));
        Assert.Equal((2L * Allreduces, 2 * 8L * Allreduces), Row(table, "Allreduce"));
        Assert.Equal((4L * Exchanges, 16 * 4L * Exchanges), Row(table, "ISend"));
        Assert.Equal((4L * Exchanges, 16 * 4L * Exchanges), Row(table, "IRecv"));
        Assert.Equal((4L * Exchanges, 0), Row(table, "WaitAll"));
        // Per rank: the known program's calls, and the share of wall time in MPI.
        Assert.Matches(@"(?m)^   0 +[0-9.]+ +[0-9.]+ +[0-9.]+% +1040$", table);
        Assert.Matches(@"(?m)^   1 +[0-9.]+ +[0-9.]+ +[0-9.]+% +1040$", table);
        Assert.Matches(@"MPI share of wall time: min [0-9.]+% \(rank [01]\), mean [0-9.]+%, max [0-9.]+% \(rank [01]\)", table);
        // The histogram: every message of the program is 8 bytes.
        Assert.Matches(@"(?m)^Send +\[8 B, 16 B\): 1000$", table);
        Assert.Matches(@"(?m)^Recv +\[8 B, 16 B\): 1000$", table);
        Assert.Matches(@"(?m)^Allreduce +\[8 B, 16 B\): 20$", table);
        Assert.Matches(@"(?m)^ISend +\[16 B, 32 B\): 20$", table);
        // The call sites: the program's own methods, with their calls.
        Assert.Matches(@"(?m)^ +[0-9.]+ +1000  Send +Scenarios\.ProfileKnown\.SendAndReceive$", table);
        Assert.Matches(@"(?m)^ +[0-9.]+ +1000  Recv +Scenarios\.ProfileKnown\.SendAndReceive$", table);
        Assert.Matches(@"(?m)^ +[0-9.]+ +20  Allreduce +Scenarios\.ProfileKnown\.Reduce$", table);
        Assert.Matches(@"(?m)^ +[0-9.]+ +20  WaitAll +Scenarios\.ProfileKnown\.Exchange$", table);
    }

    [Theory]
    [MemberData(nameof(Modes))]
    public void TheProfileCountsAKnownProgramExactly(bool hosted, bool openMpi)
    {
        string file = TempFile("profile.txt");
        try
        {
            Job.Result r = Run(Scenario.ProfileKnown, hosted, openMpi, $"profile:{file}");
            Assert.Contains($"motor profile: profile written to {file}", r.Output);
            AssertKnownTable(File.ReadAllText(file));
        }
        finally
        {
            File.Delete(file);
        }
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void TheProfileGoesToStderrByDefault(bool hosted)
    {
        Job.Result r = Run(Scenario.ProfileKnown, hosted, openMpi: false, "1");
        AssertKnownTable(r.Output);
        Assert.Single(Regex.Matches(r.Output, "Motor MPI profile:"));
    }

    [Fact]
    public void WithoutTheSettingNothingIsProfiled()
    {
        Job.Result r = Job.RunScenario(Scenario.ProfileKnown, 2);
        Assert.DoesNotContain("Motor MPI profile", r.Output);
        Assert.DoesNotContain("motor profile", r.Output);
    }

    /// <summary>
    /// The timeline: one Chrome trace-event file for the job, each rank a process, every operation
    /// a begin and an end on its thread, in time order and nested.
    /// </summary>
    [Theory]
    [MemberData(nameof(Modes))]
    public void TheTimelineHasABeginAndAnEndForEveryOperation(bool hosted, bool openMpi)
    {
        string file = TempFile("trace.json");
        try
        {
            Job.Result r = Run(Scenario.ProfileKnown, hosted, openMpi, $"trace:{file}");
            Assert.Contains($"motor profile: timeline written to {file}", r.Output);
            AssertKnownTable(r.Output); // the table still goes to stderr
            using JsonDocument doc = JsonDocument.Parse(File.ReadAllText(file));
            var begins = new Dictionary<(int Pid, string Name), int>();
            var depth = new Dictionary<(int Pid, int Tid), int>();
            var last = new Dictionary<(int Pid, int Tid), double>();
            var processNames = new Dictionary<int, string>();
            foreach (JsonElement e in doc.RootElement.GetProperty("traceEvents").EnumerateArray())
            {
                int pid = e.GetProperty("pid").GetInt32(), tid = e.GetProperty("tid").GetInt32();
                string ph = e.GetProperty("ph").GetString()!;
                if (ph == "M")
                {
                    if (e.GetProperty("name").GetString() == "process_name")
                        processNames[pid] = e.GetProperty("args").GetProperty("name").GetString()!;
                    continue;
                }
                double ts = e.GetProperty("ts").GetDouble();
                Assert.True(ts >= 0, $"negative time {ts}");
                Assert.True(ts >= last.GetValueOrDefault((pid, tid)), $"rank {pid} thread {tid}: time goes back to {ts}");
                last[(pid, tid)] = ts;
                if (ph == "B")
                {
                    string name = e.GetProperty("name").GetString()!;
                    begins[(pid, name)] = begins.GetValueOrDefault((pid, name)) + 1;
                    depth[(pid, tid)] = depth.GetValueOrDefault((pid, tid)) + 1;
                    if (name is "Send" or "Recv" or "Allreduce")
                        Assert.Equal(8, e.GetProperty("args").GetProperty("bytes").GetInt64());
                }
                else
                {
                    Assert.Equal("E", ph);
                    depth[(pid, tid)] = depth.GetValueOrDefault((pid, tid)) - 1;
                    Assert.True(depth[(pid, tid)] >= 0, $"rank {pid} thread {tid}: an end without a begin");
                }
            }
            Assert.All(depth, d => Assert.Equal(0, d.Value));
            Assert.Equal(new Dictionary<int, string> { [0] = "rank 0", [1] = "rank 1" }, processNames);
            Assert.Equal(Sends, begins.GetValueOrDefault((0, "Send")));
            Assert.Equal(Sends, begins.GetValueOrDefault((1, "Recv")));
            Assert.Equal(0, begins.GetValueOrDefault((1, "Send")));
            Assert.Equal(0, begins.GetValueOrDefault((0, "Recv")));
            Assert.Equal(Allreduces, begins.GetValueOrDefault((0, "Allreduce")));
            Assert.Equal(Allreduces, begins.GetValueOrDefault((1, "Allreduce")));
            for (int rank = 0; rank < 2; rank++)
                foreach (string call in new[] { "ISend", "IRecv", "WaitAll" })
                    Assert.Equal(2 * Exchanges, begins.GetValueOrDefault((rank, call)));
        }
        finally
        {
            File.Delete(file);
        }
    }

    /// <summary>Each operation is one event of the EventSource "System.MP" (counted by an in-process listener in the scenario).</summary>
    [Theory]
    [MemberData(nameof(Modes))]
    public void EveryOperationIsAnEventSourceEvent(bool hosted, bool openMpi)
    {
        Job.Result r = Run(Scenario.ProfileListener, hosted, openMpi, "events");
        Assert.DoesNotContain("Motor MPI profile", r.Output); // events alone: no table
    }

    /// <summary>The dotnet-trace tool's package (restored by build.sh from .config/dotnet-tools.json).</summary>
    private static string DotnetTrace()
    {
        using JsonDocument manifest = JsonDocument.Parse(File.ReadAllText(Path.Combine(Job.Root, ".config", "dotnet-tools.json")));
        string version = manifest.RootElement.GetProperty("tools").GetProperty("dotnet-trace").GetProperty("version").GetString()!;
        string packages = Environment.GetEnvironmentVariable("NUGET_PACKAGES") is { Length: > 0 } p ? p
            : Path.Combine(Environment.GetFolderPath(Environment.SpecialFolder.UserProfile), ".nuget", "packages");
        string tools = Path.Combine(packages, "dotnet-trace", version, "tools");
        string? dll = Directory.Exists(tools) ? Directory.GetFiles(tools, "dotnet-trace.dll", SearchOption.AllDirectories).FirstOrDefault() : null;
        Assert.True(dll is not null, $"dotnet-trace {version} is not restored in {packages}: run ./build.sh build (dotnet tool restore)");
        return dll;
    }

    /// <summary>
    /// <c>dotnet-trace collect --providers System.MP</c> around each rank of a 2-rank job records
    /// every operation of that rank: the nettrace files, read with TraceEvent, hold exactly the
    /// known program's operations and bytes.
    /// </summary>
    [Theory]
    [MemberData(nameof(Modes))]
    public void DotnetTraceCapturesEveryOperationOfEachRank(bool hosted, bool openMpi)
    {
        string dir = TempFile("dotnet-trace");
        Directory.CreateDirectory(dir);
        try
        {
            string wrapper = Path.Combine(dir, "trace-rank.sh");
            File.WriteAllText(wrapper,
                "#!/bin/sh\n" +
                "rank=${PMI_RANK:-$OMPI_COMM_WORLD_RANK}\n" +
                $"exec dotnet {DotnetTrace()} collect --show-child-io --providers System.MP -o {dir}/rank$rank.nettrace -- \"$@\"\n");
            string program = hosted ? $"{Job.Motor} {Job.ScenariosProgram}" : $"dotnet {Job.ScenariosProgram}";
            Job.Result r = Job.Mpi(2, "sh", $"{wrapper} {program} {Scenario.ProfileKnown.Name()}", timeoutSeconds: 180,
                                   env: new Dictionary<string, string> { ["MOTOR_PROFILE"] = "events" },
                                   launcher: openMpi ? Job.Launcher.OpenMpi : Job.Launcher.Mpich);
            Assert.True(r.ExitCode == 0, r.ToString());
            for (int rank = 0; rank < 2; rank++)
            {
                var (counts, bytes) = ReadOperations(Path.Combine(dir, $"rank{rank}.nettrace"));
                Assert.Equal(rank == 0 ? Sends : 0, counts.GetValueOrDefault("Send"));
                Assert.Equal(rank == 1 ? Sends : 0, counts.GetValueOrDefault("Recv"));
                Assert.Equal(Allreduces, counts.GetValueOrDefault("Allreduce"));
                Assert.Equal(2 * Exchanges, counts.GetValueOrDefault("WaitAll"));
                Assert.Equal(BytesPerRank, bytes);
            }
        }
        finally
        {
            Directory.Delete(dir, recursive: true);
        }
    }

    /// <summary>The Operation events of "System.MP" in a nettrace file: count by name, and their bytes.</summary>
    private static (Dictionary<string, int> Counts, long Bytes) ReadOperations(string nettrace)
    {
        Assert.True(File.Exists(nettrace), $"dotnet-trace wrote no {nettrace}");
        var counts = new Dictionary<string, int>();
        long bytes = 0;
        using var source = new EventPipeEventSource(nettrace);
        source.Dynamic.All += e =>
        {
            if (e.ProviderName != "System.MP" || e.EventName != "Operation")
                return;
            string name = (string)e.PayloadByName("Name");
            counts[name] = counts.GetValueOrDefault(name) + 1;
            bytes += (long)e.PayloadByName("Bytes");
        };
        source.Process();
        return (counts, bytes);
    }

    [Theory]
    [InlineData("sometimes", "sometimes")]
    [InlineData("events:x.json", "events:x.json")]
    [InlineData("profile:", "profile:")]
    public void AMalformedSettingIsRefusedBeforeMpiStarts(string setting, string quoted)
    {
        Job.Result motor = Job.Run(Job.Motor, $"--profile {setting} {Job.ScenariosProgram} {Scenario.ProfileKnown.Name()}", 60);
        Assert.Equal(2, motor.ExitCode); // motor's bad-usage status
        Assert.Contains($"motor: --profile '{quoted}' is not 1, profile, profile:FILE, trace, trace:FILE or events", motor.Output);

        Job.Result library = Job.Run("dotnet", $"{Job.ScenariosProgram} {Scenario.ProfileKnown.Name()}", 60,
                                     new Dictionary<string, string> { ["MOTOR_PROFILE"] = setting });
        Assert.NotEqual(0, library.ExitCode);
        Assert.Contains($"System.ArgumentException: The profile setting '{quoted}' (motor --profile, or MOTOR_PROFILE) is not one of", library.Output);
        Assert.DoesNotContain("PASS", library.Output);
    }

    /// <summary>A file that cannot be written is named at the start, before any MPI operation, on every rank; nothing fails at exit.</summary>
    [Theory]
    [InlineData(false, "trace:/nonexistent-motor-dir/trace.json", "/nonexistent-motor-dir/trace.json")]
    [InlineData(true, "profile:/nonexistent-motor-dir/p.txt", "/nonexistent-motor-dir/p.txt")]
    [InlineData(false, "profile:/tmp", "/tmp")]
    public void AnUnwritableFileIsRefusedAtTheStart(bool hosted, string setting, string path)
    {
        Job.Result r = Job.Mpi(2, Job.ScenariosProgram, Scenario.ProfileKnown.Name(), 90, hosted: hosted,
                               env: new Dictionary<string, string> { ["MOTOR_PROFILE"] = setting });
        Assert.False(r.TimedOut, r.ToString());
        Assert.NotEqual(0, r.ExitCode);
        Assert.Contains($"The profile setting '{setting}' names the file {path}, which cannot be written:", r.Output);
        Assert.DoesNotContain("PASS", r.Output);
    }
}
