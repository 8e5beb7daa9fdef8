using Scenarios;
using Xunit;

namespace System.MP.Tests;

/// <summary>
/// The rest of point-to-point and the buffer collectives: ISsend,
/// WaitSome/TestSome, SendRecvReplace, typed and nonblocking receives of matched messages, the
/// nonblocking scans, reduce-scatters and v-collectives, ReduceScatter with uneven counts, Exscan
/// of arrays, the scalar collectives, built-in ops on user structs through their operators, and
/// the v-collectives across an intercommunicator — as jobs (tests/Scenarios/Remainder.cs) on the
/// MPICH and the Open MPI core, in library mode and under motor; and on one rank in process.
/// </summary>
public class RemainderTests
{
    private static Communicator Self => Communicator.Self;

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

    /// <summary>Two ranks on both cores in both modes; the 3-rank job once per core, one hosted.</summary>
    public static TheoryData<Scenario, int, bool, bool> Jobs()
    {
        var data = new TheoryData<Scenario, int, bool, bool>();
        foreach (bool hosted in new[] { false, true })
            foreach (bool openMpi in new[] { false, true })
                data.Add(Scenario.RemainderTwoRanks, 2, hosted, openMpi);
        data.Add(Scenario.RemainderUneven, 3, true, false);
        data.Add(Scenario.RemainderUneven, 3, false, true);
        return data;
    }

    [Theory]
    [MemberData(nameof(Jobs))]
    public void RunsAsAJob(Scenario scenario, int ranks, bool hosted, bool openMpi) =>
        Job.RunScenario(scenario, ranks, hosted: hosted, launcher: openMpi ? Job.Launcher.OpenMpi : Job.Launcher.Mpich);

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
    public void ASendRecvReplaceToItselfKeepsTheArray()
    {
        int[] a = [4, 5, 6];
        Status st = Self.SendRecvReplace(a, 0, 3, 0, 3);
        Assert.Equal(new[] { 4, 5, 6 }, a);
        Assert.Equal(3, st.GetCount<int>());
    }

    [Fact]
    public void MatchedMessagesReceiveIntoTypedBuffersOnce()
    {
        // A send to oneself completes only once it is matched (MPICH): nonblocking here.
        Request s1 = Self.ISend(new[] { 2.5f }, 0, 8);
        Message m = Self.MProbe(0, 8);
        Assert.Equal(2.5f, m.Recv<float>());
        s1.Wait();
        Assert.Throws<InvalidOperationException>(() => m.IRecv(new float[1]));
        Request s2 = Self.ISend(new[] { 1, 2, 3 }, 0, 9);
        var got = new int[5];
        Request r = Self.MProbe(0, 9).IRecv(got, 1, 4);
        Assert.Equal(3, r.Wait().GetCount<int>());
        s2.Wait();
        Assert.Equal(new[] { 0, 1, 2, 3, 0 }, got);
    }

    [Fact]
    public void WaitSomeAndTestSomeReportWhatCompleted()
    {
        var a = new int[1];
        var b = new int[1];
        Request ra = Self.IRecv(a, 0, 20), rb = Self.IRecv(b, 0, 21);
        Assert.Empty(Request.TestSome([ra, rb], out _));
        Self.Send(9, 0, 21);
        int[] idx = Request.WaitSome([ra, rb], out Status[] st);
        Assert.Equal(new[] { 1 }, idx);
        Assert.Equal(21, st[0].Tag);
        Assert.Throws<ArgumentException>(() => Request.TestSome([ra, ra], out _));
        Self.ISsend(new[] { 8 }, 0, 20).Wait();
        Assert.Equal(new[] { 0 }, Request.WaitSome([ra, rb], out _));
        Assert.Equal((8, 9), (a[0], b[0]));
        Assert.Empty(Request.WaitSome([ra, rb], out _));
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
