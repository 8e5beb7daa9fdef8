using Scenarios;
using Xunit;

namespace System.MP.Tests;

/// <summary>
/// Every buffer collective (Communicator.Collectives.cs, Op.cs): reductions, data movement,
/// the vector variants, user operations, nonblocking collectives and argument checks, on 1, 2, 3
/// and 4 ranks (tests/Scenarios/Collectives/Collectives.cs), and a cross-section on the Open MPI core,
/// checking actual values; the scans, reduce-scatters with uneven counts, v-collectives in flight,
/// the scalar forms and user structs on 2 and 3 ranks in both modes; on one rank in process.
/// </summary>
public class CollectiveTests
{
    public static TheoryData<Scenario, int, bool, bool> Jobs()
    {
        // scenario, ranks, under motor, on the Open MPI core
        var data = new TheoryData<Scenario, int, bool, bool>();
        foreach (Scenario scenario in new[] { Scenario.CollReduce, Scenario.CollMove, Scenario.CollVector, Scenario.CollUserop,
                                              Scenario.CollNonblocking, Scenario.CollBadArgs })
            for (int ranks = 1; ranks <= 4; ranks++)
                data.Add(scenario, ranks, false, false);
        data.Add(Scenario.CollReduce, 2, false, true);
        data.Add(Scenario.CollVector, 2, true, true);
        // Open MPI computes on with one array as send and recv (MPICH refuses it) and runs no user op
        // after a truncated receive: both libraries must see the same refusals and clean state.
        data.Add(Scenario.CollBadArgs, 2, false, true);
        data.Add(Scenario.CollUserop, 2, true, true);
        return data;
    }

    [Theory]
    [MemberData(nameof(Jobs))]
    public void MultiRank(Scenario scenario, int ranks, bool hosted, bool openMpi)
    {
        Job.Result r = Job.RunScenario(scenario, ranks, hosted: hosted, launcher: openMpi ? Job.Launcher.OpenMpi : Job.Launcher.Mpich);
        Assert.DoesNotContain("leaked", r.Output); // MPI objects are freed before finalize
    }

    private readonly record struct Vec(long X, long Y) :
        Numerics.IAdditionOperators<Vec, Vec, Vec>, Numerics.IComparisonOperators<Vec, Vec, bool>
    {
        public static Vec operator +(Vec a, Vec b) => new(a.X + b.X, a.Y + b.Y);
        public static bool operator <(Vec a, Vec b) => a.X < b.X || (a.X == b.X && a.Y < b.Y);
        public static bool operator >(Vec a, Vec b) => b < a;
        public static bool operator <=(Vec a, Vec b) => !(b < a);
        public static bool operator >=(Vec a, Vec b) => !(a < b);
    }

    private readonly record struct Plain(int A);

    /// <summary>
    /// The nonblocking scans, reduce-scatters with equal and uneven counts, v-collectives in
    /// flight across compactions, the scalar forms, built-in ops on user structs through their
    /// operators and misuse of the uneven forms: one 2-rank job on both cores in both modes.  On
    /// 3 ranks, a reduce-scatter with an empty block and the v-collectives across an
    /// intercommunicator, once per core.
    /// </summary>
    public static TheoryData<Scenario[], int, bool, bool> UnevenJobs()
    {
        Scenario[] twoRanks = [Scenario.CollScans, Scenario.CollReduceScatter, Scenario.CollVectorInFlight, Scenario.CollScalars,
                               Scenario.CollUserStructs, Scenario.CollUnevenBadArgs];
        Scenario[] threeRanks = [Scenario.CollReduceScatterEmptyBlock, Scenario.CollIntercommVector];
        var data = new TheoryData<Scenario[], int, bool, bool>();
        foreach (bool hosted in new[] { false, true })
            foreach (bool openMpi in new[] { false, true })
                data.Add(twoRanks, 2, hosted, openMpi);
        data.Add(threeRanks, 3, true, false);
        data.Add(threeRanks, 3, false, true);
        return data;
    }

    [Theory]
    [MemberData(nameof(UnevenJobs))]
    public void UnevenAndScalarForms(Scenario[] scenarios, int ranks, bool hosted, bool openMpi) =>
        Job.RunScenarios(scenarios, ranks, hosted: hosted, launcher: openMpi ? Job.Launcher.OpenMpi : Job.Launcher.Mpich);

    /// <summary>
    /// The v-collectives with packed blocks (no displacements) and null where MPI ignores an
    /// argument, in every form, intercommunicator roots without placeholder buffers, Alltoall(v)
    /// over slices and Allreduce in place: 2 ranks
    /// in both modes on both MPIs; 3 ranks (a root group with a Mpi.ProcNull rank) once per MPI.
    /// </summary>
    public static TheoryData<Scenario[], int, bool, bool> DefaultsJobs()
    {
        Scenario[] scenarios = [Scenario.CollVectorDefaults, Scenario.CollInterRootsWithoutBuffers, Scenario.CollSlicesInPlace];
        var data = new TheoryData<Scenario[], int, bool, bool>();
        foreach (bool hosted in new[] { false, true })
            foreach (bool openMpi in new[] { false, true })
                data.Add(scenarios, 2, hosted, openMpi);
        data.Add(scenarios, 3, true, false);
        data.Add(scenarios, 3, false, true);
        return data;
    }

    [Theory]
    [MemberData(nameof(DefaultsJobs))]
    public void PackedBlocksAndNullArguments(Scenario[] scenarios, int ranks, bool hosted, bool openMpi) =>
        Job.RunScenarios(scenarios, ranks, hosted: hosted, launcher: openMpi ? Job.Launcher.OpenMpi : Job.Launcher.Mpich);

    private static Communicator Self => Communicator.Self;

    [Fact]
    public void TheScalarFormsOnOneRank()
    {
        int v = 0;
        Self.Bcast(ref v, 0);
        Assert.Equal(0, v);
        Assert.Equal(new[] { 7L }, Self.Allgather(7L));
        Assert.Equal(new short[] { 3 }, Self.Gather((short)3, 0));
        Assert.Equal(11, Self.Scatter(new[] { 11 }, 0));
        Assert.Throws<ArgumentException>(() => Self.Scatter(Array.Empty<int>(), 0));
        Assert.Throws<ArgumentOutOfRangeException>(() => Self.Gather(1, 1));
    }

    [Fact]
    public void UserStructsReduceThroughTheirOperators()
    {
        var v = new Vec(3, -4);
        Assert.Equal(v, Self.Allreduce(v, Op.Sum));
        Assert.Equal(v, Self.Allreduce(v, Op.Min));
        var recv = new Vec[1];
        Self.ReduceScatter([v], recv, [1], Op.Max);
        Assert.Equal(v, recv[0]);
        Assert.Throws<ArgumentException>(() => Self.IScan([v], recv, Op.Sum));
        Assert.Throws<ArgumentException>(() => Self.Allreduce(new Plain(), Op.Product));
    }
}
