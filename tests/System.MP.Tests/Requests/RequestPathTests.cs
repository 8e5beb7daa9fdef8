using Scenarios;
using Xunit;

namespace System.MP.Tests;

/// <summary>
/// The per-operation request path (MpiRequest.cs, Request.Sets.cs, BufferHold.cs): no GCHandle
/// per nonblocking operation under motor (MpiStatistics.PinnedHandlesAllocated stays 0), one
/// WaitAll/WaitAny/TestAll over buffer, object and persistent requests together,
/// ObjectRequest.Cancel, the errors of the shortened completion paths, and a full request table
/// (a matched message's receive refused before MPI sees it; MPICH's pool limit), WaitSome and
/// TestSome completing exactly what arrived; as 2-rank jobs
/// (tests/Scenarios/Requests/RequestPath.cs) in library mode and under motor, on both cores.
/// </summary>
public class RequestPathTests
{
    private static Communicator Self => Communicator.Self;

    public static TheoryData<Scenario, bool, bool> Jobs() =>
        Job.EveryCoreAndMode(Scenario.RequestPathPins, Scenario.RequestPathMixedSets, Scenario.RequestPathFullTable,
                             Scenario.RequestPathWaitSome);

    [Theory]
    [MemberData(nameof(Jobs))]
    public void TwoRanks(Scenario scenario, bool hosted, bool openMpi) =>
        Job.RunTwoRanks(scenario, hosted, openMpi);

    /// <summary>
    /// The mixed sets at thread level Multiple with no polls before the blocking wait
    /// (MOTOR_SPIN_POLLS=0), so that a set holding a receive truncated at its post goes straight
    /// into MPI's wait: above MPI_THREAD_SINGLE Open MPI 4.1's MPI_Waitall waited forever for it
    /// (the job timed out) until the core waited for each request there.
    /// </summary>
    [Theory]
    [InlineData(false, false)]
    [InlineData(false, true)]
    [InlineData(true, true)]
    public void SetsWaitInMpiAtOnce(bool hosted, bool openMpi)
    {
        var env = new Dictionary<string, string> { ["MOTOR_SPIN_POLLS"] = "0" };
        if (!hosted)
            env["SCENARIOS_THREAD_LEVEL"] = "Multiple";
        Job.RunScenario(Scenario.RequestPathMixedSets, 2, timeoutSeconds: 60, hosted: hosted, env: env,
                        motorOptions: hosted ? "--thread-level multiple" : "",
                        launcher: openMpi ? Job.Launcher.OpenMpi : Job.Launcher.Mpich);
    }

    /// <summary>
    /// The full table with the hang report on, so that blocking sends and receives take the core's
    /// two steps (a post whose pending part holds an entry of the table, then a wait): a blocking
    /// Recv and Send beside the full table are refused with InsufficientMemoryException before MPI
    /// sees them (before, their MPI requests were outside the table's count, and under MPICH could
    /// reach the pool's abort), the message stays for a later Recv, the refused Send sent nothing.
    /// </summary>
    [Theory]
    [InlineData(true, false)]
    [InlineData(false, true)]
    public void FullTableRefusesBlockingCallsInTwoSteps(bool hosted, bool openMpi) =>
        Job.RunScenario(Scenario.RequestPathFullTable, 2, hosted: hosted,
                        env: hosted ? null : new Dictionary<string, string> { ["MOTOR_HANG_REPORT"] = "600" },
                        motorOptions: hosted ? "--hang-report 600" : "",
                        launcher: openMpi ? Job.Launcher.OpenMpi : Job.Launcher.Mpich);

    [Fact]
    public void LibraryModeCountsTheHandlesItAllocates()
    {
        Communicator c = Self; // initializes MPI
        MpiStatistics before = Mpi.GetStatistics();
        var a = new int[3];
        var b = new int[3];
        Request[] four = [c.IRecv(a, 0, 60), c.IRecv(b, 0, 61), c.ISend(new[] { 1, 2, 3 }, 0, 60), c.ISend(new[] { 4, 5, 6 }, 0, 61)];
        Assert.Equal(4, Mpi.GetStatistics().PinnedHandles); // four arrays in flight, one handle each
        Request.WaitAll(four);
        Assert.Equal(new[] { 4, 5, 6 }, b);
        MpiStatistics after = Mpi.GetStatistics();
        Assert.Equal(4, after.ArraysPinned - before.ArraysPinned);
        // Idle handles of the thread's earlier pins are re-pointed, new ones made for the rest.
        Assert.InRange(after.PinnedHandlesAllocated - before.PinnedHandlesAllocated, 0, 4);
        Assert.Equal(0, after.PinnedHandles);
    }

    /// <summary>
    /// Library mode, one operation at a time on a new array each time (a ping-pong): the thread's one
    /// GCHandle, idle between operations, pins each array in turn; no handle is allocated after the first.
    /// </summary>
    [Fact]
    public void LibraryModeReusesTheThreadsIdleHandle()
    {
        Communicator c = Self;
        Request first = c.IRecv(new int[1], 0, 64); // a pin of this thread's, idle once the receive completes
        c.Send(new[] { 0 }, 0, 64);
        first.Wait();
        MpiStatistics before = Mpi.GetStatistics();
        int bad = 0;
        for (int i = 0; i < 50; i++)
        {
            var got = new int[2];
            Request r = c.IRecv(got, 0, 64);
            bad += Mpi.GetStatistics().PinnedHandles == 1 ? 0 : 1;
            c.Send(new[] { i, -i }, 0, 64);
            r.Wait();
            bad += got[0] == i && got[1] == -i ? 0 : 1;
        }
        MpiStatistics after = Mpi.GetStatistics();
        Assert.Equal(0, bad);
        Assert.Equal(50, after.ArraysPinned - before.ArraysPinned);
        Assert.Equal(0, after.PinnedHandlesAllocated - before.PinnedHandlesAllocated);
        Assert.Equal(0, after.PinnedHandles);
    }

    /// <summary>
    /// Library mode, windows of arrays in flight together (receives and sends on arrays of their
    /// own, a halo's pattern): the thread's idle handles pin each window's arrays; after the first
    /// window none is allocated, and every pin ends with its window.  Windows of 3 + 3 arrays, and
    /// of 32 + 32 (as many as the thread keeps).
    /// </summary>
    [Theory]
    [InlineData(3)]
    [InlineData(RequestPoster.IdlePinLimit / 2)]
    public void LibraryModeKeepsIdleHandlesForWindows(int width)
    {
        Communicator c = Self;
        long allocatedBefore = 0;
        int bad = 0;
        for (int round = 0; round < 20; round++)
        {
            if (round == 1)
                allocatedBefore = Mpi.GetStatistics().PinnedHandlesAllocated;
            bad += Window(c, width, round);
        }
        Assert.Equal(0, bad);
        Assert.Equal(0, Mpi.GetStatistics().PinnedHandlesAllocated - allocatedBefore);
        Assert.Equal(0, Mpi.GetStatistics().PinnedHandles);
    }

    /// <summary>
    /// Library mode, a window of more arrays than the thread keeps idle handles for: the handles
    /// released beyond <see cref="RequestPoster.IdlePinLimit"/> are freed, not kept, and the next
    /// such window allocates exactly that many again; no handle is left behind.
    /// </summary>
    [Fact]
    public void LibraryModeFreesTheHandlesItCannotKeep()
    {
        Communicator c = Self;
        const int beyond = 10;
        int width = (RequestPoster.IdlePinLimit + beyond) / 2; // receives and as many sends
        Assert.Equal(0, Window(c, width, 0)); // fills the thread's idle handles
        RequestPoster poster = RequestPoster.Current;
        Assert.Equal(RequestPoster.IdlePinLimit, poster.IdleCount);
        long held = BufferHold.HandlesHeld, allocated = Mpi.GetStatistics().PinnedHandlesAllocated;
        for (int round = 1; round <= 3; round++)
            Assert.Equal(0, Window(c, width, round));
        Assert.Equal(3 * beyond, Mpi.GetStatistics().PinnedHandlesAllocated - allocated);
        Assert.Equal(held, BufferHold.HandlesHeld); // each window's extra handles freed at its end
        Assert.Equal(RequestPoster.IdlePinLimit, poster.IdleCount);
        Assert.Equal(0, Mpi.GetStatistics().PinnedHandles);
    }

    /// <summary>
    /// One window on <paramref name="width"/> receives and as many sends to self, each on an array
    /// of its own (tags 70 on); the number of wrong counts of arrays pinned and of wrong data.
    /// </summary>
    private static int Window(Communicator c, int width, int round)
    {
        int bad = 0;
        var got = new int[width][];
        var reqs = new Request[2 * width];
        for (int w = 0; w < width; w++)
        {
            reqs[w] = c.IRecv(got[w] = new int[2], 0, 70 + w);
            reqs[width + w] = c.ISend(new[] { round, w }, 0, 70 + w);
        }
        bad += Mpi.GetStatistics().PinnedHandles == 2 * width ? 0 : 1;
        Request.WaitAll(reqs.AsSpan());
        for (int w = 0; w < width; w++)
            bad += got[w][0] == round && got[w][1] == w ? 0 : 1;
        return bad;
    }

    [Fact]
    public void AnyRequestCompletesThroughTheBaseType()
    {
        var got = new int[1];
        MpiRequest r = Self.IRecv(got, 0, 62);
        MpiRequest o = Self.OIRecv<string>(0, 63);
        using Request s = Self.ISend(new[] { 9 }, 0, 62);
        using ObjectRequest os = Self.OISend("x", 0, 63); // nonblocking: a blocking send to self could wait for this receive
        Assert.Equal(62, r.Wait().Tag);
        Assert.Equal(63, o.Wait().Tag);
        MpiRequest.WaitAll(s, os);
        Assert.True(r.IsCompleted && o.IsCompleted && got[0] == 9);
        o.Cancel(); // complete: nothing to cancel
        r.Dispose();
        Assert.Throws<ObjectDisposedException>(() => r.Wait());
    }
}
