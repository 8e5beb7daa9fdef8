using System.Collections.Generic;
using Scenarios;
using Xunit;

namespace System.MP.Tests;

/// <summary>
/// Buffer point-to-point (Communicator.PointToPoint.cs, Status.cs, Message.cs): Send/Recv,
/// ISend/IRecv, ISsend, SendRecv, SendRecvReplace, probes and matched probes (into typed buffers),
/// statuses, truncation and argument checks.
/// In process on a singleton job (self messages), and as multi-rank jobs
/// (tests/Scenarios/PointToPoint/PointToPointBuffers.cs) in library mode, under motor and on
/// the Open MPI core; each job checks the data that arrived.
/// </summary>
public class PointToPointTests
{
    private static Communicator Self => Communicator.Self;

    public static TheoryData<Scenario, int, bool, bool> Jobs => new()
    {
        // scenario, ranks, under motor, on the Open MPI core
        { Scenario.Types, 2, false, false },
        { Scenario.ZeroLength, 2, false, false },
        { Scenario.Procnull, 2, false, false },
        { Scenario.AnySourceTag, 3, false, false },
        { Scenario.Ordering, 2, false, false },
        { Scenario.Probe, 2, false, false },
        { Scenario.Mprobe, 2, false, false },
        { Scenario.Nonblocking, 2, false, false },
        { Scenario.Cancel, 2, false, false },
        { Scenario.Syncsend, 2, false, false },
        { Scenario.Truncate, 2, false, false },
        { Scenario.SendrecvRing, 3, false, false },
        { Scenario.Types, 2, true, false },
        { Scenario.Nonblocking, 2, true, false },
        { Scenario.Cancel, 2, true, false },
        { Scenario.Truncate, 2, true, false },
        { Scenario.AnySourceTag, 3, true, false },
        { Scenario.Nonblocking, 2, false, true },
        { Scenario.Truncate, 2, false, true },
        { Scenario.Cancel, 2, true, true },
        { Scenario.Mprobe, 2, true, true },
    };

    [Theory]
    [MemberData(nameof(Jobs))]
    public void MultiRank(Scenario scenario, int ranks, bool hosted, bool openMpi) =>
        Job.RunScenario(scenario, ranks, hosted: hosted, launcher: openMpi ? Job.Launcher.OpenMpi : Job.Launcher.Mpich);

    [Fact]
    public void SelfMessagesArriveIntact()
    {
        var c = Communicator.Self;
        var data = Enumerable.Range(0, 300).Select(i => i * 1.5).ToArray();
        var got = new double[300];
        Request r = c.IRecv(got, 0, 7);
        c.Send(data, 0, 7); // matches the posted receive
        Status st = r.Wait();
        Assert.Equal(data, got);
        Assert.Equal(0, st.Source);
        Assert.Equal(7, st.Tag);
        Assert.Equal(300, st.GetCount<double>());
        Assert.Equal(600, st.GetCount<float>());
        Assert.Equal(150, st.GetCount<Guid>()); // 2400 bytes
        Assert.Throws<ObjectDisposedException>(() => r.Wait()); // a request completes once

        // A blocking send to self may wait for its receive (MPI-4.0 3.5), so
        // self messages below start nonblocking.
        Request s = c.ISend(new[] { 42L }, 0, 1);
        Assert.Equal(42L, c.Recv<long>(0, 1, out Status s1));
        Assert.Equal(8, s1.ByteCount);
        s.Wait();
    }

    [Fact]
    public void CountIsUndefinedForPartialElements()
    {
        var c = Communicator.Self;
        Request s = c.ISend(new byte[6], 0, 2);
        Status st = c.Recv(new byte[16], 0, 2);
        s.Wait();
        Assert.Equal(6, st.GetCount<byte>());
        Assert.Equal(3, st.GetCount<short>());
        Assert.Equal(Mpi.Undefined, st.GetCount<int>());
    }

    [Fact]
    public void TruncationWritesNothingOutsideTheWindow()
    {
        var c = Communicator.Self;
        Request s = c.ISend(Enumerable.Range(1, 10).ToArray(), 0, 3);
        var buf = Enumerable.Repeat(-1, 9).ToArray();
        var e = Assert.Throws<MessageTruncatedException>(() => c.Recv(buf, 2, 5, 0, 3));
        Assert.NotEqual(0, e.ErrorClass);
        Assert.Contains("runcat", e.Message);
        Assert.Equal(-1, buf[0]);
        Assert.Equal(-1, buf[1]);
        Assert.Equal(-1, buf[7]);
        Assert.Equal(-1, buf[8]);
        s.Wait();
        // A short scalar message is reported, not silently accepted.
        Request s2 = c.ISend(new byte[] { 1 }, 0, 4);
        Assert.Throws<MpiException>(() => c.Recv<int>(0, 4));
        s2.Wait();
    }

    [Fact]
    public void BadArgumentsThrowBeforeAnythingIsSent()
    {
        var c = Communicator.Self;
        var a = new int[4];
        Assert.Equal("dest", Assert.Throws<ArgumentOutOfRangeException>(() => c.Send(a, 1, 0)).ParamName);
        Assert.Equal("dest", Assert.Throws<ArgumentOutOfRangeException>(() => c.Send(5, 1, 0)).ParamName);
        Assert.Equal("tag", Assert.Throws<ArgumentOutOfRangeException>(() => c.Send(a, 0, -2)).ParamName);
        Assert.Equal("count", Assert.Throws<ArgumentOutOfRangeException>(() => c.Send(a, 0, 5, 0, 0)).ParamName);
        Assert.Equal("count", Assert.Throws<ArgumentOutOfRangeException>(() => c.Recv(a, 1, -1, 0, 0)).ParamName);
        Assert.Equal("offset", Assert.Throws<ArgumentOutOfRangeException>(() => c.ISend(a, 5, 0, 0, 0)).ParamName);
        Assert.Equal("offset", Assert.Throws<ArgumentOutOfRangeException>(() => c.IRecv(a, -1, 1, 0, 0)).ParamName);
        Assert.Equal("source", Assert.Throws<ArgumentOutOfRangeException>(() => c.Recv(a, 1, 0)).ParamName);
        Assert.Equal("source", Assert.Throws<ArgumentOutOfRangeException>(() => c.IRecv(a, -4, 0)).ParamName);
        Assert.Equal("sendTag", Assert.Throws<ArgumentOutOfRangeException>(() => c.SendRecv(a, 0, -1, a, 0, 0)).ParamName);
        Assert.Equal("recvTag", Assert.Throws<ArgumentOutOfRangeException>(() => c.SendRecv(a, 0, 0, a, 0, -5)).ParamName);
        Assert.Equal("buffer", Assert.Throws<ArgumentNullException>(() => c.Send((int[])null!, 0, 0)).ParamName);
        Assert.Throws<ArgumentNullException>(() => c.SendRecv(null!, 0, 0, a, 0, 0));
        // One array for both (MPICH's MPI_Sendrecv to self aborts the process on it).
        Assert.Contains("SendRecvReplace", Assert.Throws<ArgumentException>(() => c.SendRecv(a, 0, 0, a, 0, 0)).Message);
        var none = Array.Empty<int>();
        Assert.Equal(0, c.SendRecv(none, 0, 9, none, 0, 9).ByteCount); // empty: nothing overlaps
        Assert.Equal(Mpi.AnyTag, Request.WaitAll(new Request[1])[0].Tag); // the null request: the empty status
        Assert.False(c.IProbe(Mpi.AnySource, Mpi.AnyTag, out _)); // nothing was sent
    }

    /// <summary>
    /// ISsend, SendRecvReplace (a shorter and a truncated message, ProcNull, misuse) and matched
    /// messages received into typed buffers (one value, nonblocking across a compaction, a slice,
    /// twice refused): one 2-rank job each on both cores, in library mode and under motor.
    /// </summary>
    [Theory]
    [MemberData(nameof(AsyncTests.CoresAndModes), MemberType = typeof(AsyncTests))]
    public void SyncSendsReplacesAndTypedMatchedReceives(bool hosted, bool openMpi) =>
        Job.RunScenarios([Scenario.Issend, Scenario.SendrecvReplace, Scenario.MprobeTyped], 2, hosted: hosted,
                         launcher: openMpi ? Job.Launcher.OpenMpi : Job.Launcher.Mpich);

    /// <summary>
    /// One value by SendRecv and by IRecv&lt;T&gt; (Result, TryGetResult, a request set, await, a short
    /// message, refusals; ScalarForms.cs) at thread level Multiple, which await needs: 2 ranks on
    /// both cores, in library mode and under motor.
    /// </summary>
    [Theory]
    [MemberData(nameof(AsyncTests.CoresAndModes), MemberType = typeof(AsyncTests))]
    public void OneValueBySendRecvAndIRecv(bool hosted, bool openMpi) =>
        Job.RunScenario(Scenario.ScalarSendRecvIRecv, 2, hosted: hosted,
                        env: hosted ? null : new Dictionary<string, string> { ["SCENARIOS_THREAD_LEVEL"] = "Multiple" },
                        motorOptions: hosted ? "--thread-level multiple" : "",
                        launcher: openMpi ? Job.Launcher.OpenMpi : Job.Launcher.Mpich);

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
}
