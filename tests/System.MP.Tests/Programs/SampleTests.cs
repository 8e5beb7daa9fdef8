using System.Globalization;
using System.Text.RegularExpressions;
using Xunit;

namespace System.MP.Tests;

/// <summary>Every sample in samples/ runs here (samples/Service, a job serving gRPC, in <see cref="ServiceTests"/>).</summary>
public class SampleTests
{
    [Theory]
    [InlineData(2, false)]
    [InlineData(3, false)]
    [InlineData(2, true)]
    public void HelloListsEveryRankInOrder(int ranks, bool hosted)
    {
        Job.Result r = Job.Mpi(ranks, Job.ManagedProgram("Hello"), hosted: hosted);
        Assert.True(r.ExitCode == 0, r.ToString());
        var lines = r.Output.Split('\n').Where(l => l.StartsWith("Hello from rank", StringComparison.Ordinal)).ToArray();
        Assert.Equal(ranks, lines.Length);
        for (int i = 0; i < ranks; i++)
            Assert.StartsWith($"Hello from rank {i} of {ranks} on ", lines[i]);
        Assert.Contains("MPI library: MPICH", r.Output);
        Assert.Contains(hosted ? "(motor VM, thread level" : "(library mode, thread level", r.Output);
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void PingPongPrintsALatencyForEverySize(bool hosted)
    {
        // A short run: sizes 0..64 KiB with 1% of the OSU iterations.
        Job.Result r = Job.Mpi(2, Job.ManagedProgram("PingPong"), "65536 0.01", hosted: hosted);
        Assert.True(r.ExitCode == 0, r.ToString());
        var rows = Regex.Matches(r.Output, @"^(\d+)\s+([0-9.]+)\s*$", RegexOptions.Multiline);
        var sizes = rows.Select(m => long.Parse(m.Groups[1].Value, CultureInfo.InvariantCulture)).ToArray();
        Assert.Equal(new long[] { 0, 1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536 }, sizes);
        Assert.All(rows, m => Assert.True(double.Parse(m.Groups[2].Value, CultureInfo.InvariantCulture) > 0));
    }

    [Theory]
    [InlineData(1)]
    [InlineData(3)]
    public void PiIsWithinItsErrorBar(int ranks)
    {
        Job.Result r = Job.Mpi(ranks, Job.ManagedProgram("Pi"), "300000");
        Assert.True(r.ExitCode == 0, r.ToString()); // the sample checks |estimate - π| <= 5 standard errors
        Assert.Contains($"darts on {ranks} ranks", r.Output);
    }

    [Theory]
    [InlineData(1, "1x1")]
    [InlineData(2, "2x1")]
    [InlineData(4, "2x2")]
    public void Heat2DMatchesTheSerialSolution(int ranks, string grid)
    {
        Job.Result r = Job.Mpi(ranks, Job.ManagedProgram("Heat2D"), "24 150");
        Assert.True(r.ExitCode == 0, r.ToString());
        Assert.Contains($"on a {grid} grid", r.Output);
        Assert.Contains("residual matches the serial computation", r.Output);
    }

    /// <summary>
    /// The 3-D stencil whose halo exchange is a neighborhood collective on a distributed graph
    /// (persistent on MPICH 4, blocking on Open MPI 4.1); the sample compares the gathered field
    /// with a serial solve bit for bit.  Both cores, library mode and under motor.
    /// </summary>
    [Theory]
    [InlineData(2, false, false, "2x1x1", "a persistent NeighborAlltoallv")]
    [InlineData(4, true, false, "2x2x1", "a persistent NeighborAlltoallv")]
    [InlineData(2, true, true, "2x1x1", "by NeighborAlltoallv")]
    [InlineData(3, false, true, "3x1x1", "by NeighborAlltoallv")]
    public void Halo3DMatchesTheSerialSolution(int ranks, bool hosted, bool openMpi, string grid, string exchange)
    {
        Job.Result r = Job.Mpi(ranks, Job.ManagedProgram("Halo3D"), "12 40", hosted: hosted,
                               launcher: openMpi ? Job.Launcher.OpenMpi : Job.Launcher.Mpich);
        Assert.True(r.ExitCode == 0, r.ToString());
        Assert.Contains($"on a {grid} grid of {ranks} ranks", r.Output);
        Assert.Contains(exchange, r.Output);
        Assert.Contains("field matches the serial computation bit for bit", r.Output);
    }

    [Theory]
    [InlineData(1, 0)]
    [InlineData(3, 1)]
    public void ObjectTransportMatchesTheSerialComputation(int ranks, int splitPairs)
    {
        Job.Result r = Job.Mpi(ranks, Job.ManagedProgram("ObjectTransport"), "1000 50");
        Assert.True(r.ExitCode == 0, r.ToString()); // the sample compares every gathered particle with a serial run
        Assert.Contains($"1000 particles, ballistic, 50 steps of 0.01 on {ranks} ranks", r.Output);
        Assert.Contains($"split between blocks (a copy on each side): {splitPairs}", r.Output);
        Assert.Equal(ranks, r.Output.Split('\n').Count(l => l.Contains("token signed by rank", StringComparison.Ordinal)));
        Assert.Contains("gathered particles match the serial computation", r.Output);
    }

    /// <summary>
    /// The F# sample: records travel by OBcast, OScatter and OGather, plain values by typed
    /// collectives and a span; the sample checks every outcome against a serial sweep, bit for bit.
    /// 3 ranks deal 25 oscillators unevenly (9, 8, 8); the Open MPI core runs it too.
    /// </summary>
    [Theory]
    [InlineData(2, true, false)]
    [InlineData(2, false, false)]
    [InlineData(3, true, false)]
    [InlineData(2, true, true)]
    public void FSharpSweepMatchesTheSerialSweep(int ranks, bool hosted, bool openMpi)
    {
        Job.Result r = Job.Mpi(ranks, Job.ManagedProgram("Sweep"), "25 600", hosted: hosted,
                               launcher: openMpi ? Job.Launcher.OpenMpi : Job.Launcher.Mpich);
        Assert.True(r.ExitCode == 0, r.ToString());
        Assert.Contains($"25 oscillators, 600 steps of 0.01 (semi-implicit Euler) on {ranks} ranks: 15000 steps in all", r.Output);
        Assert.Contains($"outcomes came from {ranks} ranks", r.Output);
        Assert.Contains("gathered outcomes match the serial sweep", r.Output);
    }

    /// <summary>
    /// The multiscale coupling sample spawns its micro job, so it runs under Open MPI
    /// (the sample itself checks the coupled result against a serial run, bit for bit).
    /// </summary>
    [Theory]
    [InlineData(1, 2, true)]
    [InlineData(2, 3, false)]
    public void CouplingMatchesTheSerialComputation(int macroRanks, int microRanks, bool hosted)
    {
        Job.Result r = Job.Mpi(macroRanks, Job.ManagedProgram("Coupling"), $"{microRanks} 12 60", hosted: hosted,
                               launcher: Job.Launcher.OpenMpi);
        Assert.True(r.ExitCode == 0, r.ToString());
        Assert.Contains($"coupled 12 macro cells with {microRanks} micro ranks for 60 steps", r.Output);
        Assert.Contains("max |coupled - serial| = 0.00E+000", r.Output);
    }

    [Fact]
    public void CouplingUnderMpichRunsOrExplainsWhyNot()
    {
        // Debian's MPICH (ch4:ucx) cannot spawn: the sample must say so and what to use
        // instead; an MPICH that can spawn must run it to the right answer.
        Job.Result r = Job.Mpi(1, Job.ManagedProgram("Coupling"), "2 4 2", hosted: true);
        if (r.Output.Contains("coupled 4 macro cells", StringComparison.Ordinal))
        {
            Assert.True(r.ExitCode == 0 && r.Output.Contains("max |coupled - serial| = 0.00E+000"), r.ToString());
            return;
        }
        Assert.True(r.ExitCode == 3, r.ToString());
        Assert.Contains("needs an MPI library that can spawn processes", r.Output);
        Assert.Contains("MPI_Comm_spawn", r.Output);
    }

    [Fact]
    public void PingPongNeedsTwoRanks()
    {
        Job.Result r = Job.Mpi(1, Job.ManagedProgram("PingPong"), "64 0.01", 60);
        Assert.NotEqual(0, r.ExitCode);
        Assert.Contains("needs at least 2 ranks", r.Output);
    }

    [Theory]
    [InlineData(2, false)]
    [InlineData(1, true)]
    public void MixedCouplingOfACAndACSharpProgramMatchesTheSerialModel(int csharpRanks, bool hosted)
    {
        // An MPMD job: the C half (artifacts/bin/coupling-solid) first, then the C# half.
        string csharp = $"{(hosted ? Job.Motor : "dotnet")} {Job.ManagedProgram("MixedCoupling")} 60";
        Job.Result r = Job.Run(Job.MpichLauncher, $"-n 1 {Job.NativeProgram("coupling-solid")} 60 : -n {csharpRanks} {csharp}", 90);
        Assert.False(r.TimedOut, r.ToString());
        Assert.True(r.ExitCode == 0, r.ToString());
        Assert.Contains("solid (C, 1 ranks): 60 steps, mean wall temperature", r.Output);
        Assert.Contains($"fluid (C#, {csharpRanks} ranks): 60 steps", r.Output);
        Assert.Contains("(OK)", r.Output);
    }
}
