using System.MP;
using System.Runtime.InteropServices;

namespace Scenarios;

/// <summary>
/// Failures raised inside MPI at the calls no real library can be made to fail on demand: the
/// posts of point-to-point, list, persistent, partitioned and collective operations, matched
/// probes, communicator, window and file creation (at MPI's call and at every later step of the
/// core's), dynamic processes, one-sided calls and their synchronization, file views, object
/// sends, and completions that fail part of a set or all of it.  The job runs on the MPI
/// library with failures a test arms (tests/native/mpi_faults.c, MOTOR_MPI_LIBRARY;
/// ErrorsInsideMpiTests), and each rank arms the call just before the operation under test.  Every
/// failure must surface as an <see cref="MpiException"/> with the class MPI returned and the
/// call's name, the call having run once (the core's MpiErrors and the library's own count), with
/// nothing left behind (requests, MPI requests, GCHandles, communicators; the communicators,
/// windows, files and datatypes MPI holds; under motor, buffers the GC extension pins), nothing
/// sent, and the same operation working afterwards, its data delivered once.  Two ranks.
/// </summary>
internal static unsafe class ErrorsInsideMpiOnDemand
{
    internal static void Register(Dictionary<Scenario, Action<Communicator>> s)
    {
        s[Scenario.MpiFaults] = Run;
        s[Scenario.MpiFaultsAsync] = c => ErrorsInsideMpiOnDemandAsync.Run(c).GetAwaiter().GetResult();
    }

    private static void Run(Communicator c)
    {
        Check.True(c.Size == 2, $"mpi-faults runs on 2 ranks, not {c.Size}");
        PointToPoint(c);
        Lists(c);
        Blocking(c);
        SendRecvByRequests(c);
        MatchedProbe(c);
        Persistent(c);
        Partitioned(c);
        Collectives(c);
        Communicators(c);
        DynamicProcesses(c);
        OneSided(c);
        DynamicWindow(c);
        Files(c);
        Objects(c);
        Completions(c);
        FailedSets(c);
        FailedSendSets(c);
        FailedAtAMark(c);
        FailedTestNeverWaits(c);
        Check.Equal(0L, Mpi.GetStatistics().ActiveRequests, "no request left at the end");
        c.Barrier();
    }

    // ---- the armed library's exports ----

    private static readonly nint s_library = NativeLibrary.Load(
        Environment.GetEnvironmentVariable("MOTOR_MPI_LIBRARY") is { Length: > 0 } path
            ? path : throw new InvalidOperationException("mpi-faults needs MOTOR_MPI_LIBRARY: the library of tests/native/mpi_faults.c"));

    private static readonly delegate* unmanaged<byte*, long, long, byte*, int> s_arm =
        (delegate* unmanaged<byte*, long, long, byte*, int>)NativeLibrary.GetExport(s_library, "mpi_faults_arm");

    private static readonly delegate* unmanaged<byte*, long> s_failed =
        (delegate* unmanaged<byte*, long>)NativeLibrary.GetExport(s_library, "mpi_faults_failed");

    private static readonly delegate* unmanaged<byte*, long> s_live =
        (delegate* unmanaged<byte*, long>)NativeLibrary.GetExport(s_library, "mpi_faults_live");

    private static readonly delegate* unmanaged<void> s_clear =
        (delegate* unmanaged<void>)NativeLibrary.GetExport(s_library, "mpi_faults_clear");

    /// <summary>The next <paramref name="skip"/> calls of <paramref name="call"/> pass, the <paramref name="times"/> after fail with MPI_ERR_OTHER; returns that class's value, or -1 where the library has no such call.</summary>
    internal static int Arm(string call, long skip = 0, long times = 1)
    {
        fixed (byte* name = Encoding(call), cls = Encoding("MPI_ERR_OTHER"))
            return s_arm(name, skip, times, cls);
    }

    internal static long Failed(string call)
    {
        fixed (byte* name = Encoding(call))
            return s_failed(name);
    }

    /// <summary>MPI communicators ("comm") or windows ("win") made and not freed, as the library counts them.</summary>
    private static long Live(string kind)
    {
        fixed (byte* name = Encoding(kind))
            return s_live(name);
    }

    /// <summary>Disarms every call (the counts kept).</summary>
    internal static void Clear() => s_clear();

    private static byte[] Encoding(string s) => System.Text.Encoding.ASCII.GetBytes(s + "\0");

    private static bool Mpi4 => !Mpi.LibraryVersion.StartsWith("Open MPI", StringComparison.Ordinal);

    /// <summary>
    /// Runs <paramref name="action"/> with <paramref name="call"/> armed to fail once after
    /// <paramref name="skip"/> calls, and checks what a failure inside MPI must leave: the
    /// exception, one failing call, no request, MPI request, GCHandle or communicator more.
    /// </summary>
    private static MpiException? Refused(string call, Action action, string what, long skip = 0, bool heldToSync = false)
    {
        long pinned = PinnedAtAMark();
        MpiStatistics before = Mpi.GetStatistics();
        long failed = Failed(call), comms = Live("comm"), wins = Live("win"), files = Live("file"), types = Live("type");
        int errorClass = Arm(call, skip);
        Check.True(errorClass > 0, $"{what}: the library arms {call}");
        MpiException? e = Check.Throws<MpiException>(action, what);
        s_clear();
        MpiStatistics after = Mpi.GetStatistics();
        Check.True(e is not null && e.ErrorClass == errorClass && e.Message.StartsWith(call + ": ", StringComparison.Ordinal) &&
                   e.Message.Contains("MPI_ERR_OTHER", StringComparison.Ordinal),
                   $"{what}: the exception names {call} and MPI_ERR_OTHER ({errorClass}), got class {e?.ErrorClass}: {e?.Message}");
        Check.Equal(failed + 1, Failed(call), $"{what}: {call} failed once");
        Check.Equal(before.MpiErrors + 1, after.MpiErrors, $"{what}: MPI errors counted");
        Check.Equal(before.ActiveRequests, after.ActiveRequests, $"{what}: requests");
        Check.Equal(before.OpenMpiRequests, after.OpenMpiRequests, $"{what}: MPI requests");
        Check.Equal(before.PinnedHandles, after.PinnedHandles, $"{what}: GCHandles");
        Check.Equal(before.Communicators, after.Communicators, $"{what}: communicators");
        Check.Equal(comms, Live("comm"), $"{what}: MPI communicators");
        Check.Equal(wins, Live("win"), $"{what}: MPI windows");
        Check.Equal(files, Live("file"), $"{what}: MPI files");
        Check.Equal(types, Live("type"), $"{what}: MPI datatypes");
        if (!heldToSync) // a one-sided origin stays held until its epoch's synchronization, refused or not
            Check.Equal(pinned, PinnedAtAMark(), $"{what}: buffers the GC extension pins");
        return e;
    }

    // Under motor with the GC extension: the buffers it pins at a full GC's mark (those of
    // operations in flight); elsewhere 0.  A refused post must leave none of its own behind.
    private static long PinnedAtAMark()
    {
        if (!Mpi.GetStatistics().GcExtensionActive)
            return 0;
        GC.Collect();
        return Mpi.GetStatistics().PinnedAtLastMark;
    }

    // Whether blocking sends and receives are a post and a wait (the hang report on).
    private static bool TwoStepBlocking =>
        !string.IsNullOrWhiteSpace(AppContext.GetData("Motor.HangReport") as string ?? Environment.GetEnvironmentVariable("MOTOR_HANG_REPORT"));

    [StructLayout(LayoutKind.Sequential, Size = 13)]
    private struct Thirteen
    {
        public byte First;
    }

    private const int Marker = -99;

    // That rank 0's refused calls on tag sent nothing: a marker sent last on tag is the next
    // message rank 1 gets there (MPI keeps one sender's order on a tag, so a message a refused
    // call sent anyway, or sent twice, would come first).
    private static void NothingMore(Communicator c, int tag, string what)
    {
        if (c.Rank == 0)
        {
            c.Send(new[] { Marker }, 1, tag);
            return;
        }
        var next = new int[1 << 14];
        Status st = c.Recv(next, 0, tag);
        Check.True(st.GetCount<int>() == 1 && next[0] == Marker,
                   $"no message from {what}: the next on tag {tag} is the marker, not {st.GetCount<int>()} ints starting {next[0]}");
    }

    // ---- the cases ----

    // ISend and IRecv refused: nothing sent, nothing received; the next post carries the message.
    private static void PointToPoint(Communicator c)
    {
        const int Tag = 60;
        if (c.Rank == 0)
        {
            Refused("MPI_Isend", () => c.ISend(new[] { -1 }, 1, Tag), "ISend");
            Refused("MPI_Issend", () => c.ISsend(new[] { -2 }, 1, Tag), "ISsend");
            c.ISend(new[] { 11 }, 1, Tag).Wait();
            c.ISsend(new[] { 12 }, 1, Tag).Wait();
        }
        else
        {
            var got = new int[2];
            Refused("MPI_Irecv", () => c.IRecv(got, 0, 1, 0, Tag), "IRecv");
            Check.Equal(0, got[0], "nothing received by the refused IRecv");
            Request first = c.IRecv(got, 0, 1, 0, Tag), second = c.IRecv(got, 1, 1, 0, Tag);
            Request.WaitAll([first, second]);
            Check.Sequence<int>([11, 12], got, "the messages after the refused posts, once each");
        }
        NothingMore(c, Tag, "the refused sends");
    }

    // A list post refused part way: the entry is given back (Count stays), the list goes on, and
    // the receiver gets every message once, the refused one where it was posted again.
    private static void Lists(Communicator c)
    {
        const int Tag = 61, N = 8;
        using var list = new RequestList(N);
        if (c.Rank == 0)
        {
            var values = new int[N];
            for (int i = 0; i < N; i++)
                values[i] = i;
            c.Barrier(); // the receiver's check first: a message arriving between its two marks would unpin a receive
            for (int i = 0; i < 3; i++)
                c.ISend(values, i, 1, 1, Tag, list);
            Refused("MPI_Isend", () => c.ISend(values, 3, 1, 1, Tag, list), "RequestList ISend");
            Check.Equal(3, list.Count, "the refused send's entry given back");
            foreach (int i in new[] { 4, 5, 6, 7, 3 })
                c.ISend(values, i, 1, 1, Tag, list);
            list.WaitAll();
        }
        else
        {
            var got = new int[N];
            Array.Fill(got, -1);
            for (int i = 0; i < 5; i++)
                c.IRecv(got, i, 1, 0, Tag, list);
            Refused("MPI_Irecv", () => c.IRecv(got, 5, 1, 0, Tag, list), "RequestList IRecv");
            Check.Equal(5, list.Count, "the refused receive's entry given back");
            c.Barrier();
            for (int i = 5; i < N; i++)
                c.IRecv(got, i, 1, 0, Tag, list);
            list.WaitAll();
            Check.Sequence<int>([0, 1, 2, 4, 5, 6, 7, 3], got, "every listed message once, in posting order");
        }
        NothingMore(c, Tag, "the refused list send");
    }

    // Blocking Send and Recv refused (MPI_Send and MPI_Recv, or their posts with the hang report on).
    private static void Blocking(Communicator c)
    {
        const int Tag = 62;
        if (c.Rank == 0)
        {
            Refused(TwoStepBlocking ? "MPI_Isend" : "MPI_Send", () => c.Send(new[] { -1 }, 1, Tag), "Send");
            c.Send(new[] { 21 }, 1, Tag);
        }
        else
        {
            var got = new int[1];
            Refused(TwoStepBlocking ? "MPI_Irecv" : "MPI_Recv", () => c.Recv(got, 0, Tag), "Recv");
            Check.Equal(0, got[0], "nothing received by the refused Recv");
            c.Recv(got, 0, Tag);
            Check.Equal(21, got[0], "the message after the refused Send and Recv");
        }
        NothingMore(c, Tag, "the refused Send");
    }

    // SendRecv where the core posts it as two requests (Open MPI; under MPICH one MPI_Sendrecv
    // below 2 GiB): to the peer, the send refused after the receive was posted, the receive taken
    // back, so the peer's next message lands in the next receive.  To itself, the receive refused
    // after the message to itself was posted (Open MPI cancels no send): the message is taken
    // back, small (delivered at once) or large (waiting for its receive), and none is left; with
    // a message to itself pending already, the receive goes first and the refusal posts no send.
    private static void SendRecvByRequests(Communicator c)
    {
        const int Tag = 66;
        if (Mpi4)
            return;
        var got = new int[1];
        Refused("MPI_Irecv", () => c.SendRecv(new[] { -2 }, c.Rank, Tag, got, c.Rank, Tag), "SendRecv to itself, its receive");
        Check.True(!c.IProbe(c.Rank, Tag, out _), "SendRecv to itself, its receive refused: no message to itself left");
        var large = new int[1 << 16]; // 256 KiB: past Open MPI's eager limit, the send waits for a receive
        Refused("MPI_Irecv", () => c.SendRecv(large, c.Rank, Tag, new int[large.Length], c.Rank, Tag), "SendRecv of 256 KiB to itself, its receive");
        Check.True(!c.IProbe(c.Rank, Tag, out _), "SendRecv of 256 KiB to itself, its receive refused: no message to itself left");
        using (Request earlier = c.ISend(new[] { 5 }, c.Rank, Tag))
        {
            Refused("MPI_Irecv", () => c.SendRecv(new[] { -2 }, c.Rank, Tag, got, c.Rank, Tag), "SendRecv to itself behind a pending message, its receive");
            c.Recv(got, c.Rank, Tag);
            Check.Equal(5, got[0], "the message pending before the refused SendRecv to itself");
            earlier.Wait();
        }
        Check.True(!c.IProbe(c.Rank, Tag, out _), "SendRecv to itself behind a pending message, its receive refused: no message of its own left");
        // The message cannot be taken back (MPI refuses the matched probe that finds it): the
        // exception says that it stays, and it does.
        Check.True(Arm("MPI_Improbe") > 0, "the library arms MPI_Improbe");
        MpiException? stays = Refused("MPI_Irecv", () => c.SendRecv(new[] { -4 }, c.Rank, Tag, got, c.Rank, Tag), "SendRecv to itself, its receive and take-back");
        Check.True(stays?.Message.Contains($"sent itself on tag {Tag} could not be taken back and stays pending", StringComparison.Ordinal) == true,
                   $"the exception says a message to itself stays pending: {stays?.Message}");
        c.Recv(got, c.Rank, Tag);
        Check.Equal(-4, got[0], "the message to itself that stayed");
        // A large one's send holds the buffer until its message is received: looked for again.
        Check.True(Arm("MPI_Improbe") > 0, "the library arms MPI_Improbe");
        MpiException? back = Refused("MPI_Irecv", () => c.SendRecv(large, c.Rank, Tag, new int[large.Length], c.Rank, Tag), "SendRecv of 256 KiB to itself, its receive and first take-back");
        Check.True(back?.Message.Contains("stays pending", StringComparison.Ordinal) == false, $"the large message taken back at the second look: {back?.Message}");
        Check.True(!c.IProbe(c.Rank, Tag, out _), "SendRecv of 256 KiB to itself, its take-back refused once: no message to itself left");
        c.SendRecv(new[] { 9 }, c.Rank, Tag, got, c.Rank, Tag);
        Check.Equal(9, got[0], "SendRecv to itself after the refusals");
        c.Barrier();
        if (c.Rank == 1)
        {
            Refused("MPI_Isend", () => c.SendRecv(new[] { -3 }, 0, Tag, got, 0, Tag), "SendRecv to the peer, its send");
            c.Send(new[] { 1 }, 0, Tag + 1); // only now does rank 0 send on Tag
            c.Recv(got, 0, Tag);
            Check.Equal(31, got[0], "SendRecv to the peer: the next receive gets the next message");
        }
        else
        {
            c.Recv(got, 1, Tag + 1);
            c.Send(new[] { 31 }, 1, Tag);
        }
        c.Barrier();
    }

    // MProbe refused at its polls (MPI_Improbe) and at its wait (MPI_Mprobe, while no message
    // has come): the message sent afterwards is matched and received once.
    private static void MatchedProbe(Communicator c)
    {
        const int Tag = 63;
        if (c.Rank == 1)
        {
            Refused("MPI_Improbe", () => c.MProbe(0, Tag), "MProbe's poll");
            Refused("MPI_Mprobe", () => c.MProbe(0, Tag), "MProbe's wait");
        }
        c.Barrier();
        if (c.Rank == 0)
            c.Send(new[] { 31 }, 1, Tag);
        else
        {
            Message m = c.MProbe(0, Tag);
            var got = new int[1];
            m.Recv(got);
            Check.Equal(31, got[0], "the message sent after the refused MProbes");
        }
        c.Barrier();
    }

    // A persistent send and receive refused when made and when started: each Start carries one
    // message.
    private static void Persistent(Communicator c)
    {
        const int Tag = 64;
        if (c.Rank == 0)
        {
            var data = new[] { 41 };
            Refused("MPI_Send_init", () => c.SendInit(data, 1, Tag).Dispose(), "SendInit");
            using PersistentRequest p = c.SendInit(data, 1, Tag);
            Refused("MPI_Start", p.Start, "Start of a persistent send");
            p.Start();
            p.Wait();
            data[0] = 42;
            p.Start();
            p.Wait();
        }
        else
        {
            var got = new int[1];
            Refused("MPI_Recv_init", () => c.RecvInit(got, 0, Tag).Dispose(), "RecvInit");
            using PersistentRequest p = c.RecvInit(got, 0, Tag);
            Refused("MPI_Start", p.Start, "Start of a persistent receive");
            p.Start();
            p.Wait();
            Check.Equal(41, got[0], "the first started send");
            p.Start();
            p.Wait();
            Check.Equal(42, got[0], "the second started send");
        }
        NothingMore(c, Tag, "the refused Start");
    }

    // Partitioned requests (MPI-4.0: MPICH) refused when made, and a Pready refused.
    private static void Partitioned(Communicator c)
    {
        const int Tag = 65, Parts = 4;
        if (!Mpi4)
            return;
        if (c.Rank == 0)
        {
            var data = new[] { 1, 2, 3, 4, 5, 6, 7, 8 };
            Refused("MPI_Psend_init", () => c.PsendInit(data, Parts, 2, 1, Tag).Dispose(), "PsendInit");
            using PartitionedRequest p = c.PsendInit(data, Parts, 2, 1, Tag);
            p.Start();
            p.Pready(0);
            Refused("MPI_Pready", () => p.Pready(1), "Pready");
            for (int i = 1; i < Parts; i++)
                p.Pready(i);
            p.Wait();
        }
        else
        {
            var got = new int[8];
            Refused("MPI_Precv_init", () => c.PrecvInit(got, Parts, 2, 0, Tag).Dispose(), "PrecvInit");
            using PartitionedRequest p = c.PrecvInit(got, Parts, 2, 0, Tag);
            p.Start();
            p.Wait();
            Check.Sequence<int>([1, 2, 3, 4, 5, 6, 7, 8], got, "the partitioned message after the refused calls");
        }
        c.Barrier();
    }

    // Collectives refused on every rank (a collective fails together, or its peers would wait):
    // blocking, nonblocking, neighbourhood; each works afterwards.
    private static void Collectives(Communicator c)
    {
        int r = c.Rank;
        Refused("MPI_Allreduce", () => c.Allreduce(new[] { r }, new int[1], Op.Sum), "Allreduce");
        if (Mpi4)
        {
            var p = new[] { r == 0 ? 52 : 0 };
            Refused("MPI_Bcast_init", () => c.BcastInit(p, 0).Dispose(), "BcastInit");
            using PersistentRequest bcast = c.BcastInit(p, 0);
            bcast.Start();
            bcast.Wait();
            Check.Equal(52, p[0], "a persistent Bcast after the refused one");

            // A persistent Allgather refused at a start, then dropped; the next one gathers.  (On
            // MPICH 4.0 each start posts MPI_Iallgather, whose persistent form is broken there.)
            var all = new int[2];
            PersistentRequest refused = c.AllgatherInit(new[] { r + 1 }, all);
            bool mpich40 = System.Text.RegularExpressions.Regex.IsMatch(Mpi.LibraryVersion, @"^MPICH Version:\s+4\.0\b");
            Refused(mpich40 ? "MPI_Iallgather" : "MPI_Start",
                    refused.Start, "Start of a persistent Allgather");
            refused.Dispose();
            using PersistentRequest gather = c.AllgatherInit(new[] { r + 5 }, all);
            gather.Start();
            gather.Wait();
            Check.Sequence<int>([5, 6], all, "a persistent Allgather after the refused start");
        }
        var sum = new int[1];
        c.Allreduce(new[] { r + 1 }, sum, Op.Sum);
        Check.Equal(3, sum[0], "Allreduce after the refused one");

        // A struct's first collective makes its MPI datatype (contiguous bytes, committed, cached).
        var odd = new Thirteen[2];
        if (r == 0)
            odd[1].First = 53;
        Refused("MPI_Type_commit", () => c.Bcast(odd, 0), "Bcast of a struct, its datatype's commit");
        c.Bcast(odd, 0);
        Check.Equal((byte)53, odd[1].First, "a Bcast of the struct after the refused one");

        var b = new[] { r == 0 ? 51 : 0 };
        Refused("MPI_Ibcast", () => c.IBcast(b, 0), "IBcast");
        c.IBcast(b, 0).Wait();
        Check.Equal(51, b[0], "IBcast after the refused one");

        var s = new int[1];
        Refused("MPI_Iallreduce", () => c.IAllreduce(new[] { r }, s, Op.Max), "IAllreduce");
        c.IAllreduce(new[] { r + 7 }, s, Op.Max).Wait();
        Check.Equal(8, s[0], "IAllreduce after the refused one");

        using CartesianCommunicator ring = c.CreateCartesian([2], [true])!;
        var send = new[] { 10 * r, 10 * r + 1 };
        var recv = new int[2];
        Refused("MPI_Ineighbor_alltoall", () => ring.INeighborAlltoall(send, recv, 1), "INeighborAlltoall");
        ring.INeighborAlltoall(send, recv, 1).Wait();
        int other = 1 - ring.Rank;
        Array.Sort(recv); // both neighbours are the other rank: which message lands where is the library's
        Check.Sequence<int>([10 * other, 10 * other + 1], recv, "INeighborAlltoall after the refused one");
        c.Barrier();
    }

    // Communicator creation refused on every rank, at MPI's creation or at any later step of the
    // core's (errors returned on it):
    // no communicator made, none left in MPI, and the next one works.
    private static void Communicators(Communicator c)
    {
        Refused("MPI_Comm_dup", () => c.Dup().Dispose(), "Dup");
        Refused("MPI_Comm_set_errhandler", () => c.Dup().Dispose(), "Dup, errors returned on it");
        using (Communicator dup = c.Dup())
            Check.Equal(3, dup.Allreduce(c.Rank + 1, Op.Sum), "a Dup after the refused one");
        Refused("MPI_Comm_split", () => c.Split(0, c.Rank)?.Dispose(), "Split");
        using (Communicator split = c.Split(0, c.Rank)!)
            Check.Equal(c.Rank, split.Rank, "a Split after the refused one");
        Refused("MPI_Comm_split_type", () => c.SplitShared().Dispose(), "SplitShared");
        using (Group all = c.Group)
        {
            Refused("MPI_Comm_create", () => c.Create(all)?.Dispose(), "Create from a group");
            using Communicator? made = c.Create(all);
            Check.Equal(c.Size, made?.Size ?? 0, "a communicator from a group after the refused one");
        }
        using (Communicator alone = c.Split(c.Rank, 0)!)
        {
            Refused("MPI_Intercomm_create", () => Intercommunicator.Create(alone, 0, c, 1 - c.Rank, 67).Dispose(), "Intercommunicator.Create");
            using Intercommunicator inter = Intercommunicator.Create(alone, 0, c, 1 - c.Rank, 67);
            Check.Equal(1, inter.RemoteSize, "an intercommunicator after the refused one");
        }
        Refused("MPI_Cart_create", () => c.CreateCartesian([2], [false])?.Dispose(), "CreateCartesian");
        using (CartesianCommunicator grid = c.CreateCartesian([2], [false])!)
            Check.Equal(2, grid.Size, "a Cartesian communicator after the refused one");
        c.Barrier();
    }

    // Dynamic processes refused on every rank (collective over c): Spawn, Accept and Connect
    // fail at once, nothing is made, nobody waits, and the communicator goes on.  The library
    // refuses before MPI sees the call, so this runs where MPI has no spawn or ports too (MPICH
    // over UCX).
    private static void DynamicProcesses(Communicator c)
    {
        Refused("MPI_Comm_spawn", () => c.Spawn("/bin/true", [], 1).Dispose(), "Spawn");
        Refused("MPI_Comm_accept", () => c.Accept("mpi-faults-port", 0).Dispose(), "Accept");
        Refused("MPI_Comm_connect", () => c.Connect("mpi-faults-port", 0).Dispose(), "Connect");
        Check.Equal(3, c.Allreduce(c.Rank + 1, Op.Sum), "the communicator after the refused dynamic calls");
    }

    // Window creation refused on every rank, at MPI's creation or a later step of the core's; a Put, an Accumulate and a CompareAndSwap refused
    // inside an epoch: the target's memory keeps what the calls that ran wrote.
    private static void OneSided(Communicator c)
    {
        Refused("MPI_Win_allocate", () => Window<int>.Allocate(c, 4).Dispose(), "Window.Allocate");
        Refused("MPI_Win_set_errhandler", () => Window<int>.Allocate(c, 4).Dispose(), "Window.Allocate, errors returned on it");
        Refused("MPI_Allgather", () => Window<int>.Allocate(c, 4).Dispose(), "Window.Allocate, the ranks' sizes gathered");
        Refused("MPI_Win_allocate_shared", () => Window<int>.AllocateShared(c, 4).Dispose(), "Window.AllocateShared");
        using (Window<int> shared = Window<int>.AllocateShared(c, 4))
        {
            shared.Span.Fill(c.Rank + 80);
            shared.Fence(); // the stores visible to the other rank
            Refused("MPI_Win_shared_query", () => shared.SharedMemory(1 - c.Rank), "SharedMemory");
            Check.Equal(1 - c.Rank + 80, shared.SharedMemory(1 - c.Rank).Span[3], "the other rank's part after the refused query");
            c.Barrier();
        }
        int[] exposed = Mpi.AllocatePinned<int>(4);
        Refused("MPI_Win_create", () => Window<int>.Create(c, exposed).Dispose(), "Window.Create");
        using Window<int> win = Window<int>.Allocate(c, 4);
        win.Span.Fill(0);
        Refused("MPI_Win_fence", () => win.Fence(), "Fence"); // on every rank: it is collective
        win.Fence();
        if (c.Rank == 0)
        {
            Refused("MPI_Put", () => win.Put([-1], 1, 0), "Put", heldToSync: true);
            win.Put([71], 1, 0);
            Refused("MPI_Accumulate", () => win.Accumulate([-1], Op.Sum, 1, 1), "Accumulate", heldToSync: true);
            win.Accumulate([72], Op.Sum, 1, 1);
        }
        win.Fence();
        Check.Equal(0L, PinnedAtAMark(), "the refused Put's and Accumulate's origins let go at the fence");
        if (c.Rank == 0)
        {
            // A refused lock opens no epoch (the next Lock is not "already open"), a refused
            // flush or unlock closes nothing (the epoch goes on, and its unlock works).
            Refused("MPI_Win_lock", () => win.Lock(1), "Lock");
            win.Lock(1);
            Refused("MPI_Compare_and_swap", () => win.CompareAndSwap(-1, 0, 1, 2), "CompareAndSwap");
            Check.Equal(0, win.CompareAndSwap(73, 0, 1, 2), "CompareAndSwap after the refused one");
            Refused("MPI_Win_flush", () => win.Flush(1), "Flush");
            Refused("MPI_Win_unlock", () => win.Unlock(1), "Unlock");
            win.Unlock(1);
            Refused("MPI_Win_lock_all", () => win.LockAll(), "LockAll");
            win.LockAll();
            win.UnlockAll();
        }
        c.Barrier();
        win.Fence();
        if (c.Rank == 1)
            Check.Sequence<int>([71, 72, 73, 0], win.Span, "the target's window: only the calls that ran");
        c.Barrier();
    }

    // A set whose second operation fails in its completion, found by the poll before the wait
    // (MPI_Testall) or by the wait: MPICH's MPI_Waitall and MPI_Testall complete the first, fail
    // the second and leave the rest pending (MPI_ERR_PENDING), which a second WaitAll completes;
    // under Open MPI the core waits for each request in turn (its MPI_Waitall can hang on a
    // failed set), and then every request completes in the failing call.  Both for Request[] and
    // for a RequestList; every message that completed is delivered.
    private static void Completions(Communicator c)
    {
        const int Tag = 66, N = 4;
        string wait = Mpi4 ? "MPI_Waitall" : "MPI_Wait"; // the Open MPI core: one MPI_Wait per request
        for (int round = 0; round < 2; round++)
        {
            bool listed = round == 1;
            if (c.Rank == 0)
            {
                for (int i = 0; i < N; i++)
                    c.Send(new[] { 100 * round + i }, 1, Tag);
                c.Barrier();
                continue;
            }
            var got = new int[N];
            using var list = new RequestList(N);
            Request[] reqs = PostReceives(c, got, Tag, listed ? list : null);
            string what = listed ? "RequestList.WaitAll" : "Request.WaitAll";
            MpiStatistics before = Mpi.GetStatistics();
            long tests = Failed("MPI_Testall"), waits = Failed(wait);
            int errorClass = Arm("MPI_Testall");
            Check.Equal(errorClass, Arm(wait, wait == "MPI_Wait" ? 1 : 0), $"{what}: the wait armed too");
            MpiException? e = Check.Throws<MpiException>(() => WaitAll(listed, list, reqs), $"{what} with its second operation failing");
            s_clear();
            bool byTest = Failed("MPI_Testall") == tests + 1;
            Check.Equal(tests + waits + 1, Failed("MPI_Testall") + Failed(wait), $"{what}: one completion call failed");
            string call = byTest ? "MPI_Testall" : "MPI_Waitall";
            Check.True(e is not null && e.ErrorClass == errorClass && e.Message.StartsWith(call + ": ", StringComparison.Ordinal),
                       $"{what}: the exception names {call} and the class MPI gave the failed operation ({errorClass}): {e?.ErrorClass} {e?.Message}");
            Check.Equal(before.MpiErrors + 1, Mpi.GetStatistics().MpiErrors, $"{what}: MPI errors counted");
            int pending = byTest || wait == "MPI_Waitall" ? N - 2 : 0;
            Check.Equal(before.ActiveRequests - (N - pending), Mpi.GetStatistics().ActiveRequests,
                        $"{what}: the completed requests freed, the pending ones kept (slots and list entries)");
            if (listed)
                Check.Equal(pending == 0 ? 0 : N, list.Count, $"{what}: the pending entries stay at their indices");
            else
                for (int i = N - pending; i < N; i++) // the pending ones complete on their own, with their message's status
                {
                    Check.Equal(Tag, reqs[i].Wait().Tag, $"{what}: request {i}, pending after the failure, waited for alone");
                    reqs[i] = default; // completed: a request completes once
                }
            Check.Equal(100 * round, got[0], $"{what}: the operation before the failed one delivered");
            WaitAll(listed, list, reqs);
            for (int i = 2; i < N; i++)
                Check.Equal(100 * round + i, got[i], $"{what}: operation {i} delivered");
            Check.Equal(before.ActiveRequests - N, Mpi.GetStatistics().ActiveRequests, $"{what}: every request finished");
            Check.Equal(0, list.Count, $"{what}: the list empty");
            c.Barrier();
        }
    }

    // A test that fails inside MPI and leaves its request pending, met by the GC extension's test
    // at a full collection's mark (under motor): the mark neither cancels nor waits (it holds every
    // managed thread), the array stays pinned and is not tested again at the next mark, and the
    // owner's Wait ends the operation with the failure, named MPI_Test.  No receive is left in MPI:
    // the next message on the tag arrives where it is received next, not in the old array.
    private static void FailedAtAMark(Communicator c)
    {
        const int Tag = 67;
        if (!Mpi.GetStatistics().GcExtensionActive)
            return; // library mode: the GC does not call MPI
        if (c.Rank == 1)
        {
            var old = new int[4];
            MpiStatistics before = Mpi.GetStatistics();
            long failed = Failed("MPI_Test_untouched");
            Request r = c.IRecv(old, 0, Tag);
            int errorClass = Arm("MPI_Test_untouched");
            Check.True(errorClass > 0, "the library arms a test that leaves its request");
            GC.Collect();
            Check.Equal(failed + 1, Failed("MPI_Test_untouched"), "the mark's test of the receive failed");
            Check.True(Mpi.GetStatistics().PinnedAtLastMark >= 1, "the receive's array pinned at the mark of its failed test");
            GC.Collect(); // armed still: a second test would fail again
            s_clear();
            Check.Equal(failed + 1, Failed("MPI_Test_untouched"), "the next mark does not test it again");
            Check.True(Mpi.GetStatistics().PinnedAtLastMark >= 1, "the array still pinned at the next mark");
            Check.Equal(before.ActiveRequests + 1, Mpi.GetStatistics().ActiveRequests, "the receive still pending after the marks");
            MpiException? e = Check.Throws<MpiException>(() => r.Wait(), "Wait of a receive whose test failed at a mark");
            Check.True(e is not null && e.ErrorClass == errorClass && e.Message.StartsWith("MPI_Test: ", StringComparison.Ordinal) &&
                       e.Message.Contains("MPI_ERR_OTHER", StringComparison.Ordinal),
                       $"the failure reported by the owner's Wait, named MPI_Test ({errorClass}): {e?.ErrorClass} {e?.Message}");
            Check.Equal(before.MpiErrors + 1, Mpi.GetStatistics().MpiErrors, "the failure counted once");
            Check.Equal(before.ActiveRequests, Mpi.GetStatistics().ActiveRequests, "the receive finished");
            c.Barrier();
            var next = new int[4];
            Status st = c.Recv(next, 0, Tag);
            Check.True(st.GetCount<int>() == 4 && next[3] == Marker && old[3] == 0,
                       $"the next message on the tag arrives in the next receive ({next[3]}), not in the old array ({old[3]})");
        }
        else
        {
            c.Barrier();
            c.Send(new[] { 1, 2, 3, Marker }, 1, Tag);
        }
        c.Barrier();
    }

    // A test that fails inside MPI and leaves its request pending, for an operation MPI can no
    // longer cancel (the armed library's cancel does nothing): the user's Test asks MPI once to
    // cancel it and returns at once, not complete, as do TestAll and later tests; the array stays
    // held (pinned at a mark under motor).  Rank 0 sends the message the receive waits for only
    // after those tests returned (a test that waited would wait for good).  Once MPI has let go
    // of the operation, the next Test throws the failure, named MPI_Test; no receive is left in MPI.
    private static void FailedTestNeverWaits(Communicator c)
    {
        const int Tag = 68, Go = 69;
        if (c.Rank == 1)
        {
            var old = new int[4];
            MpiStatistics before = Mpi.GetStatistics();
            long failed = Failed("MPI_Test_untouched"), ignored = Failed("MPI_Cancel_ignored");
            Request r = c.IRecv(old, 0, Tag);
            int errorClass = Arm("MPI_Test_untouched");
            Check.True(errorClass > 0 && Arm("MPI_Cancel_ignored") > 0, "the library arms a failed test and a cancel that does nothing");
            for (int i = 0; i < 3; i++)
            {
                Check.True(!r.Test(out _), $"test {i} of a receive whose test failed, MPI unable to cancel it: not complete, returned");
                Check.True(!Request.TestAll([r]), $"TestAll {i} of it: not complete, returned");
            }
            Check.Equal(failed + 1, Failed("MPI_Test_untouched"), "the receive's test failed once");
            Check.Equal(ignored + 1, Failed("MPI_Cancel_ignored"), "MPI asked once to cancel it");
            Check.Equal(before.ActiveRequests + 1, Mpi.GetStatistics().ActiveRequests, "the receive still in flight");
            if (Mpi.GetStatistics().GcExtensionActive)
            {
                GC.Collect();
                Check.True(Mpi.GetStatistics().PinnedAtLastMark >= 1, "the receive's array pinned at a mark while MPI holds it");
            }
            s_clear();
            c.Send(1, 0, Go);
            MpiException? e = null;
            bool completedClean = false;
            while (e is null && !completedClean)
            {
                try
                {
                    completedClean = r.Test(out _);
                }
                catch (MpiException x)
                {
                    e = x;
                }
            }
            Check.True(e is not null && e.ErrorClass == errorClass && e.Message.StartsWith("MPI_Test: ", StringComparison.Ordinal) &&
                       e.Message.Contains("MPI_ERR_OTHER", StringComparison.Ordinal),
                       $"the failure reported by the Test after MPI let go, named MPI_Test ({errorClass}): {e?.ErrorClass} {e?.Message}");
            Check.Equal(Marker, old[3], "MPI finished the operation it could not cancel: the message is in the array it held");
            Check.Equal(before.MpiErrors + 1, Mpi.GetStatistics().MpiErrors, "the failure counted once");
            Check.Equal(before.ActiveRequests, Mpi.GetStatistics().ActiveRequests, "the receive finished");
            c.Barrier();
            var next = new int[4];
            Status st = c.Recv(next, 0, Tag);
            Check.True(st.GetCount<int>() == 4 && next[3] == Marker + 1 && old[3] == Marker,
                       $"the next message on the tag arrives in the next receive ({next[3]}), not in the old array ({old[3]})");
        }
        else
        {
            c.Recv<int>(1, Go);
            c.Send(new[] { 1, 2, 3, Marker }, 1, Tag);
            c.Barrier();
            c.Send(new[] { 1, 2, 3, Marker + 1 }, 1, Tag);
        }
        c.Barrier();
    }

    // A dynamic window refused when made, and an attachment refused: the array is not attached
    // (attaching it again works), and the window still carries a Put.
    private static void DynamicWindow(Communicator c)
    {
        Refused("MPI_Win_create_dynamic", () => Window<long>.CreateDynamic(c).Dispose(), "Window.CreateDynamic");
        using Window<long> win = Window<long>.CreateDynamic(c);
        long[] memory = Mpi.AllocatePinned<long>(2);
        Refused("MPI_Win_attach", () => win.Attach(memory), "Attach");
        long address = win.Attach(memory);
        long[] addresses = c.Allgather(address);
        win.Fence();
        if (c.Rank == 0)
            win.Put([81L], 1, addresses[1]);
        win.Fence();
        if (c.Rank == 1)
            Check.Equal(81L, memory[0], "a Put into the array attached after the refused attachment");
        win.Detach(memory);
        c.Barrier();
    }

    // MpiFile.Open refused by MPI_File_open, and after it opened by the errors-return setting on
    // the file: no file left open in MPI, and the next Open writes.
    private static void Files(Communicator c)
    {
        string path = Path.Combine(Path.GetTempPath(), $"mpi-faults-{c.Bcast(Environment.ProcessId, 0)}.bin");
        const MpiFileMode Mode = MpiFileMode.ReadWrite | MpiFileMode.Create;
        Refused("MPI_File_open", () => MpiFile.Open(c, path, Mode).Dispose(), "MpiFile.Open");
        // The first MPI_File_set_errhandler of an Open is on MPI_FILE_NULL (the default for opens),
        // the second on the file just opened.
        Refused("MPI_File_set_errhandler", () => MpiFile.Open(c, path, Mode).Dispose(), "MpiFile.Open, errors returned on the file", skip: 1);
        using (MpiFile file = MpiFile.Open(c, path, Mode))
        {
            // A strided view refused at each step that makes its types (the element's commit,
            // the file type's commit) and at MPI_File_set_view: no datatype left, the old view kept.
            Refused("MPI_Type_commit", () => file.SetView<long>(0, 1, 2), "SetView, the element type's commit");
            Refused("MPI_Type_commit", () => file.SetView<long>(0, 1, 2), "SetView, the file type's commit", skip: 1);
            Refused("MPI_File_set_view", () => file.SetView<long>(0, 1, 2), "SetView");
            file.WriteAt(FileOffset.Elements(c.Rank), new[] { 90 + c.Rank });
        }
        c.Barrier();
        if (c.Rank == 0)
        {
            Check.Sequence<byte>([90, 0, 0, 0, 91, 0, 0, 0], File.ReadAllBytes(path), "the file written after the refused opens");
            File.Delete(path);
        }
        c.Barrier();
    }

    // Objects: a send refused at its first message (nothing sent), and a posted one refused; the
    // object sent afterwards arrives once, whole.
    private static void Objects(Communicator c)
    {
        const int Tag = 68;
        if (c.Rank == 0)
        {
            Refused(TwoStepBlocking ? "MPI_Isend" : "MPI_Send", () => c.OSend("refused", 1, Tag), "OSend");
            c.OSend("sent", 1, Tag);
            Refused("MPI_Isend", () => c.OISend(new[] { -1L }, 1, Tag), "OISend");
            c.OISend(new[] { 1L, 2L }, 1, Tag).Wait();
        }
        else
        {
            Check.Equal("sent", c.ORecv<string>(0, Tag), "the object sent after the refused OSend");
            Check.Sequence<long>([1L, 2L], c.ORecv<long[]>(0, Tag), "the object posted after the refused OISend");
        }
        NothingMore(c, Tag, "the refused object sends");
        ChunkedObjects(c);
    }

    // A chunked object (more than its first message's 64 KiB) whose second piece MPI refuses,
    // after the first went: the receiver, which has the first, is told (TransportException) by
    // the empty message the sender sends in its place, instead of waiting for the rest forever;
    // the object sent again arrives whole.  Blocking OSend and posted OISend.
    private static void ChunkedObjects(Communicator c)
    {
        const int Blocking = 71, Posted = 72;
        var big = new long[100_000];
        for (int i = 0; i < big.Length; i++)
            big[i] = i * 3L;
        if (c.Rank == 0)
        {
            Refused(TwoStepBlocking ? "MPI_Isend" : "MPI_Send", () => c.OSend(big, 1, Blocking),
                    "OSend of a chunked object, its second piece", skip: 1);
            c.OSend(big, 1, Blocking);
            long active = Mpi.GetStatistics().ActiveRequests;
            int errorClass = Arm("MPI_Isend", 1);
            MpiException? e = Check.Throws<MpiException>(() => c.OISend(big, 1, Posted), "OISend of a chunked object, its second piece");
            s_clear();
            Check.True(e?.ErrorClass == errorClass, $"OISend of a chunked object: MPI's class ({errorClass}): {e?.Message}");
            c.OISend(big, 1, Posted).Wait();
            c.Barrier(); // rank 1 has taken the first piece of the refused OISend: its orphaned request can complete
            c.Barrier(); // the core's sweep at a blocking call frees the orphan once MPI completed it
            Check.Equal(active, Mpi.GetStatistics().ActiveRequests, "OISend of a chunked object: its posted first piece finished");
        }
        else
        {
            foreach (int tag in new[] { Blocking, Posted })
            {
                string what = tag == Blocking ? "OSend" : "OISend";
                TransportException? e = Check.Throws<TransportException>(() => c.ORecv<long[]>(0, tag),
                                                                          $"receiving the chunked object whose {what} failed part way");
                Check.True(e?.Message.Contains("could not send the rest", StringComparison.Ordinal) == true,
                           $"the receiver is told the sender gave up ({what}): {e?.Message}");
                long[]? whole = c.ORecv<long[]>(0, tag);
                Check.True(whole is not null && whole.AsSpan().SequenceEqual(big), $"the chunked object sent again by {what}, whole");
                if (tag == Posted)
                {
                    c.Barrier();
                    c.Barrier();
                }
            }
        }
        c.Barrier();
    }

    // One int from rank 0 into each element of got, posted into the list or (list null) as the requests returned.
    private static Request[] PostReceives(Communicator c, int[] got, int tag, RequestList? list)
    {
        var reqs = new Request[list is null ? got.Length : 0];
        for (int i = 0; i < got.Length; i++)
        {
            if (list is null)
                reqs[i] = c.IRecv(got, i, 1, 0, tag);
            else
                c.IRecv(got, i, 1, 0, tag, list);
        }
        return reqs;
    }

    // A completion call that fails as a whole (its class returned, not MPI_ERR_IN_STATUS), having
    // completed nothing: every operation stays pending, its buffer held, and the next WaitAll
    // completes them all.  (Before, a Request[] set took every operation for complete and freed
    // its slot: the MPI requests were abandoned while MPI could still write the buffers.)
    /// <summary>Completes a round's operations: the list's, or the requests'.</summary>
    private static void WaitAll(bool listed, RequestList list, Request[] reqs)
    {
        if (listed)
            list.WaitAll();
        else
            Request.WaitAll(reqs);
    }

    /// <summary>
    /// A set of sends is completed without MPI's statuses (a send's status says nothing the caller
    /// reads), so when one send fails MPI says MPI_ERR_IN_STATUS and not which: the set fails as a
    /// whole, under "MPI_Waitall (a set with no receive", the sends MPI completed are finished, those it
    /// left pending stay in flight and complete later, and every message arrives once; as a
    /// Request set and as a list.  The polls before the wait are made to find the set incomplete,
    /// so the failing wait runs whether or not the receives came first; in two more rounds a poll
    /// (MPI_Testall, also without statuses) fails instead, under "MPI_Testall (a set with no receive".
    /// </summary>
    private static void FailedSendSets(Communicator c)
    {
        const int Tag = 70, N = 4;
        // The Open MPI core above thread level Single: one MPI_Wait per request.
        string wait = Mpi4 || Mpi.ThreadLevel == ThreadLevel.Single ? "MPI_Waitall" : "MPI_Wait";
        for (int round = 0; round < 4; round++)
        {
            bool listed = round % 2 == 1, byTest = round >= 2;
            string call = byTest ? "MPI_Testall" : wait;
            if (c.Rank == 1)
            {
                c.Barrier();
                for (int i = 0; i < N; i++)
                    Check.Equal(300 + 10 * round + i, c.Recv<int>(0, Tag), $"send set round {round}: message {i} once");
                c.Barrier();
                continue;
            }
            string what = (listed ? "RequestList" : "Request") + $".WaitAll of sends failing in {call}";
            using var list = new RequestList(N);
            var reqs = new Request[N];
            for (int i = 0; i < N; i++)
            {
                int[] value = [300 + 10 * round + i];
                if (listed)
                    c.ISend(value, 1, Tag, list);
                else
                    reqs[i] = c.ISend(value, 1, Tag);
            }
            MpiStatistics before = Mpi.GetStatistics();
            long waits = Failed(call);
            if (!byTest)
                Check.True(Arm("MPI_Testall_incomplete", 0, 1000) > 0, $"{what}: the polls armed (more than a wait makes)");
            int errorClass = Arm(call, call == "MPI_Wait" ? 1 : 0);
            c.Barrier(); // the receiver may take the messages at any time from now
            MpiException? e = Check.Throws<MpiException>(() => WaitAll(listed, list, reqs), what);
            s_clear();
            Check.Equal(waits + 1, Failed(call), $"{what}: the call failed once");
            string name = byTest ? "MPI_Testall (a set with no receive" : "MPI_Waitall (a set with no receive";
            Check.True(e is not null && e.ErrorClass != errorClass && e.Message.StartsWith(name, StringComparison.Ordinal) &&
                       e.Message.Contains("MPI_ERR_IN_STATUS", StringComparison.Ordinal),
                       $"{what}: the exception says the set of sends failed without naming one (MPI_ERR_IN_STATUS, not the class {errorClass} of the send): {e?.ErrorClass} {e?.Message}");
            Check.Equal(before.MpiErrors + 1, Mpi.GetStatistics().MpiErrors, $"{what}: MPI errors counted");
            int pending = call == "MPI_Wait" ? 0 : N - 2; // the library leaves the sends after the failed one pending
            Check.Equal(before.ActiveRequests - (N - pending), Mpi.GetStatistics().ActiveRequests,
                        $"{what}: the completed sends freed, the pending ones kept (slots and list entries)");
            if (listed)
            {
                Check.Equal(pending == 0 ? 0 : N, list.Count, $"{what}: the pending entries stay at their indices");
                list.WaitAll();
            }
            else
            {
                for (int i = 0; i < N - pending; i++)
                    Check.True(reqs[i].Equals(default(Request)), $"{what}: send {i}, completed by the failed set, is the null request");
                Request.WaitAll(reqs);
            }
            Check.Equal(before.ActiveRequests - N, Mpi.GetStatistics().ActiveRequests, $"{what}: every send finished");
            c.Barrier();
        }
    }

    private static void FailedSets(Communicator c)
    {
        const int Tag = 69, N = 4;
        for (int round = 0; round < 2; round++)
        {
            bool listed = round == 1;
            if (c.Rank == 1)
            {
                var got = new int[N];
                using var list = new RequestList(N);
                Request[] reqs = PostReceives(c, got, Tag, listed ? list : null);
                string what = (listed ? "RequestList" : "Request") + ".WaitAll failing as a whole";
                MpiStatistics before = Mpi.GetStatistics();
                long failed = Failed("MPI_Testall_plain");
                int errorClass = Arm("MPI_Testall_plain"); // the poll before the wait: every WaitAll makes one
                MpiException? e = Check.Throws<MpiException>(() => WaitAll(listed, list, reqs), what);
                s_clear();
                Check.Equal(failed + 1, Failed("MPI_Testall_plain"), $"{what}: the poll failed once");
                Check.True(e is not null && e.ErrorClass == errorClass && e.Message.StartsWith("MPI_Testall: ", StringComparison.Ordinal),
                           $"{what}: the exception names MPI_Testall and its class ({errorClass}): {e?.ErrorClass} {e?.Message}");
                MpiStatistics after = Mpi.GetStatistics();
                Check.Equal(before.MpiErrors + 1, after.MpiErrors, $"{what}: MPI errors counted");
                Check.Equal(before.ActiveRequests, after.ActiveRequests, $"{what}: every request still pending");
                Check.Equal(before.OpenMpiRequests, after.OpenMpiRequests, $"{what}: every MPI request still open");
                if (listed)
                    Check.Equal(N, list.Count, $"{what}: every entry still in the list");
                c.Barrier(); // the messages come only now: nothing was received before
                WaitAll(listed, list, reqs);
                Check.Sequence<int>([200 + 10 * round, 201 + 10 * round, 202 + 10 * round, 203 + 10 * round], got,
                                    $"{what}: every message received by the next WaitAll");
                Check.Equal(before.ActiveRequests - N, Mpi.GetStatistics().ActiveRequests, $"{what}: every request finished");
            }
            else
            {
                c.Barrier();
                for (int i = 0; i < N; i++)
                    c.Send(new[] { 200 + 10 * round + i }, 1, Tag);
            }
            c.Barrier();
        }
    }
}

/// <summary>Scenario mpi-faults-async: failures inside MPI under the progress engine (thread level Multiple), on the library of tests/native/mpi_faults.c.</summary>
internal static class ErrorsInsideMpiOnDemandAsync
{
    /// <summary>
    /// The progress engine's MPI_Testsome failing inside MPI, once and then for good: the engine
    /// tests that round's requests one by one instead, so every awaited operation still completes
    /// with its data, alone and in a set; the failure is counted, and nothing is left.  Each
    /// round waits until the library has refused a Testsome while the receives were pending
    /// (the peer sends only after it too saw its failure), so no timing is assumed.
    /// </summary>
    internal static async Task Run(Communicator c)
    {
        Check.True(c.Size == 2, $"mpi-faults-async runs on 2 ranks, not {c.Size}");
        Check.Equal(ThreadLevel.Multiple, Mpi.ThreadLevel, "running at Multiple");
        int peer = 1 - c.Rank;
        const int Data = 71, Set = 72, Seen = 73;
        foreach (long times in new long[] { 1, long.MaxValue / 2 })
        {
            string what = times == 1 ? "Testsome failing once" : "Testsome failing for good";
            MpiStatistics before = Mpi.GetStatistics();
            long failed = ErrorsInsideMpiOnDemand.Failed("MPI_Testsome");
            var one = new long[3];
            var two = new int[2];
            Check.True(ErrorsInsideMpiOnDemand.Arm("MPI_Testsome", 0, times) > 0, $"{what}: the library arms MPI_Testsome");
            Task<Status> alone = c.IRecv(one, peer, Data).WaitAsync();
            Task<Status[]> set = Request.WhenAll(c.IRecv(two, peer, Set));
            var until = DateTime.UtcNow.AddSeconds(30);
            while (ErrorsInsideMpiOnDemand.Failed("MPI_Testsome") == failed && DateTime.UtcNow < until)
                Thread.Sleep(1);
            Check.True(ErrorsInsideMpiOnDemand.Failed("MPI_Testsome") > failed, $"{what}: the engine's MPI_Testsome failed while the receives were pending");
            c.Send(new[] { 1 }, peer, Seen); // each side's failure happened before either sends
            c.Recv(new int[1], peer, Seen);
            c.Send(new long[] { times, c.Rank, 7 }, peer, Data);
            Status st = await alone;
            Check.True(st.Source == peer && st.Tag == Data && one[0] == times && one[1] == peer && one[2] == 7,
                       $"{what}: the awaited receive completed with its data (source {st.Source}, tag {st.Tag})");
            await c.ISend(new[] { 40 + c.Rank, 50 }, peer, Set);
            Status[] got = await set;
            Check.True(got.Length == 1 && got[0].Source == peer && two[0] == 40 + peer && two[1] == 50,
                       $"{what}: the receive awaited in a set completed with its data");
            ErrorsInsideMpiOnDemand.Clear();
            MpiStatistics after = Mpi.GetStatistics();
            long failures = ErrorsInsideMpiOnDemand.Failed("MPI_Testsome") - failed;
            Check.True(times == 1 ? failures == 1 : failures >= 1, $"{what}: MPI_Testsome failed {failures} times");
            Check.True(after.MpiErrors - before.MpiErrors == failures, $"{what}: each failure counted once ({after.MpiErrors - before.MpiErrors} for {failures})");
            Check.Equal(before.ActiveRequests, after.ActiveRequests, $"{what}: no request left");
            c.Barrier();
        }
        Check.Equal(0, AsyncProgress.Pending, "nothing left awaited");
    }
}
