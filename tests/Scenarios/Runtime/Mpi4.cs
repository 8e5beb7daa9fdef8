using System.MP;
using static Scenarios.Heap;

namespace Scenarios;

/// <summary>
/// MPI-4 (Session.cs, PartitionedRequest.cs, the v-collective …Init methods, Spawn with an
/// Info): sessions beside the world and on their own, partitioned exchanges with the GC moving
/// the arrays between instances, the persistent v-collectives, scans and reduce-scatters against
/// their blocking forms, every misuse refused before MPI, and errors raised inside MPI.  On Open
/// MPI 4.1, which has none of the MPI-4 calls, each throws NotSupportedException naming the
/// library.  Spawn with hints runs where spawning works (Open MPI).  Two ranks.
/// </summary>
internal static class Mpi4
{
    internal static void Register(Dictionary<Scenario, Action<Communicator>> s)
    {
        s[Scenario.Mpi4Sessions] = Sessions;
        s[Scenario.Mpi4SessionsAlone] = _ => Check.True(false, "runs before the world: Program.cs calls SessionsAlone");
        s[Scenario.Mpi4Partitioned] = Partitioned;
        s[Scenario.Mpi4PersistentCollectives] = PersistentCollectives;
        s[Scenario.Mpi4SpawnInfo] = SpawnInfo;
        s[Scenario.Mpi4SpawnInfoChild] = SpawnInfoChild;
        s[Scenario.Mpi4SpawnMultiple] = SpawnMultiple;
        s[Scenario.Mpi4SpawnMultipleChild] = SpawnMultipleChild;
        s[Scenario.Mpi4LargeCount] = LargeCount;
        s[Scenario.Mpi4Supports] = Supports;
    }

    /// <summary>MPICH 4 has every MPI-4 call used here; Open MPI 4.1 none.</summary>
    private static bool Expected => !Mpi.LibraryVersion.StartsWith("Open MPI v4", StringComparison.Ordinal);

    /// <summary>The call throws NotSupportedException naming the library and the MPI function.</summary>
    private static void NotSupported(string what, string function, Action call)
    {
        try
        {
            call();
            Check.True(false, $"{what}: no exception, expected NotSupportedException");
        }
        catch (NotSupportedException e)
        {
            Check.True(e.Message.Contains("Open MPI", StringComparison.Ordinal) && e.Message.Contains(function, StringComparison.Ordinal),
                       $"{what}: the message names the library and {function}: {e.Message}");
        }
    }

    // ---- asking before using (Mpi.Supports) ----

    // Mpi.Supports answers for the loaded library (every feature on MPICH 4, none on Open MPI
    // 4.1), and each answer agrees with what a call of that feature does: it works where the
    // feature is reported present and throws NotSupportedException where it is reported absent.
    private static void Supports(Communicator c)
    {
        foreach (MpiFeature f in Enum.GetValues<MpiFeature>())
            Check.Equal(Expected, Mpi.Supports(f), $"Supports({f}) under {Mpi.LibraryVersion}");
        Check.Throws<ArgumentOutOfRangeException>(() => Mpi.Supports((MpiFeature)4), "a value that is no feature");
        Check.Throws<ArgumentOutOfRangeException>(() => Mpi.Supports((MpiFeature)(-1)), "a negative feature");

        int[] one = [c.Rank], sum = new int[1];
        Agrees(MpiFeature.PersistentCollectives, "MPI_Allreduce_init", () =>
        {
            using PersistentRequest r = c.AllreduceInit(one, sum, Op.Sum);
            r.Start();
            r.Wait();
            Check.Equal(c.Size * (c.Size - 1) / 2, sum[0], "persistent allreduce, where supported");
        });
        using (CartesianCommunicator ring = c.CreateCartesian([c.Size], [true])!)
            Agrees(MpiFeature.PersistentNeighborhoodCollectives, "MPI_Neighbor_allgather_init", () =>
            {
                int[] got = new int[2];
                using PersistentRequest r = ring.NeighborAllgatherInit(one, got);
                r.Start();
                r.Wait();
                Check.Sequence<int>([(c.Rank + c.Size - 1) % c.Size, (c.Rank + 1) % c.Size], got, "persistent neighbour allgather, where supported");
            });
        int peer = 1 - c.Rank;
        Agrees(MpiFeature.PartitionedCommunication, c.Rank == 0 ? "MPI_Psend_init" : "MPI_Precv_init", () =>
        {
            int[] data = c.Rank == 0 ? [5, 6] : new int[2];
            using PartitionedRequest r = c.Rank == 0 ? c.PsendInit(data, 2, 1, peer, 3) : c.PrecvInit(data, 2, 1, peer, 3);
            r.Start();
            if (c.Rank == 0)
                r.PreadyRange(0, 1);
            r.Wait();
            Check.Sequence<int>([5, 6], data, "partitioned exchange, where supported");
        });
        Agrees(MpiFeature.Sessions, "MPI_Session_init", () =>
        {
            using Session s = Session.Init();
            Check.True(s.ProcessSets.Count > 0, "a session lists process sets, where supported");
        });
    }

    private static void Agrees(MpiFeature feature, string function, Action use)
    {
        if (Mpi.Supports(feature))
            use();
        else
            NotSupported($"{feature}, reported absent", function, use);
    }

    // ---- large counts ----

    // Messages above int.MaxValue bytes go by MPI-4's large-count functions (MPI_Isend_c and
    // the like).  MPICH 4 has them: 2 GiB + 8 bytes travel whole by Send/Recv and by SendRecv
    // (rank 0 to rank 1; one array on each rank, only rank 1's written whole).  Open MPI 4.1
    // lacks them: Send, Recv and a SendRecv on both ranks at once are refused with a specific
    // error before anything is posted (a SendRecv posted its receive, then found its send
    // refused, and both ranks waited for each other), and the next exchange on the same tag
    // gets exactly its own messages.
    private static void LargeCount(Communicator c)
    {
        const int N = (1 << 28) + 1; // longs: 2^31 + 8 bytes
        int peer = 1 - c.Rank;
        var big = new long[N];
        if (!Expected)
        {
            Refused("Send", () => c.Send(big, peer, 40));
            Refused("Recv", () => c.Recv(big, peer, 40));
            Refused("SendRecv with the large send", () => c.SendRecv(big, peer, 41, new long[1], peer, 41));
            Refused("SendRecv with the large receive", () => c.SendRecv(new long[1], peer, 41, big, peer, 41));
            var got = new long[1];
            c.SendRecv(new long[] { 100 + c.Rank }, peer, 41, got, peer, 41);
            Check.Equal(100L + peer, got[0], "the exchange after the refusals: nothing was left posted");
            return;
        }
        for (int round = 0; round < 2; round++)
        {
            if (c.Rank == 0)
            {
                big[0] = 1 + round;
                big[N / 2] = 2 + round;
                big[N - 1] = 3 + round;
                if (round == 0)
                    c.Send(big, peer, 42);
                else
                    c.SendRecv(big, peer, 42, new long[1], peer, 43);
            }
            else
            {
                Status st = round == 0 ? c.Recv(big, peer, 42) : c.SendRecv(new long[] { 7 }, peer, 43, big, peer, 42);
                Check.Equal((long)N * sizeof(long), st.ByteCount, "the whole message's byte count");
                Check.True(big[0] == 1 + round && big[N / 2] == 2 + round && big[N - 1] == 3 + round,
                           $"round {round}: first, middle and last elements ({big[0]}, {big[N / 2]}, {big[N - 1]})");
            }
        }
        c.Barrier();
    }

    /// <summary>The call throws ArgumentOutOfRangeException saying that the library lacks MPI-4's large-count functions.</summary>
    private static void Refused(string what, Action call)
    {
        try
        {
            call();
            Check.True(false, $"{what}: no exception, expected the large-count refusal");
        }
        catch (ArgumentOutOfRangeException e)
        {
            Check.True(e.Message.Contains("large-count", StringComparison.Ordinal), $"{what}: the message says why: {e.Message}");
        }
    }

    // ---- sessions ----

    // A session beside the world: its process sets, their info and groups, a communicator made
    // from the world set that matches the world, one from the self set, misuse and an MPI error.
    private static void Sessions(Communicator c)
    {
        if (!Expected)
        {
            NotSupported("Session.Init", "MPI_Session_init", () => Session.Init().Dispose());
            using Group wg = c.Group;
            NotSupported("CreateFromGroup", "MPI_Comm_create_from_group", () => Communicator.CreateFromGroup(wg, "org.motor.tests").Dispose());
            Check.Equal(c.Size, c.Allreduce(1, Op.Sum), "MPI works after the refused calls");
            return;
        }
        using Session session = Session.Init();
        IReadOnlyList<string> sets = session.ProcessSets;
        Check.True(sets.Contains("mpi://WORLD") && sets.Contains("mpi://SELF"), $"the standard process sets are listed: {string.Join(", ", sets)}");
        using (Info info = session.GetProcessSetInfo("mpi://WORLD"))
            Check.Equal(c.Size.ToString(System.Globalization.CultureInfo.InvariantCulture), info["mpi_size"], "mpi_size of the world set");
        using (Group g = session.GroupFromProcessSet("mpi://WORLD"))
        using (Group wg = c.Group)
        {
            Check.Equal(c.Size, g.Size, "world set group size");
            Check.Equal(c.Rank, g.Rank, "world set group rank");
            Check.Equal(Comparison.Identical, g.Compare(wg), "the world set is the world's group");
            using Communicator sc = Communicator.CreateFromGroup(g, "org.motor.tests.world");
            Check.Equal(c.Size, sc.Size, "communicator from the world set: size");
            Check.Equal(c.Rank, sc.Rank, "communicator from the world set: rank");
            Check.Equal(Comparison.Congruent, Communicator.Compare(sc, c), "congruent with the world");
            Check.Equal(c.Size * (c.Size - 1) / 2, sc.Allreduce(sc.Rank, Op.Sum), "allreduce over it");
            var peer = new int[1];
            if (sc.Rank == 0)
                sc.Send(new[] { 42 }, 1, 3);
            else if (sc.Rank == 1)
                sc.Recv(peer, 0, 3);
            Check.Equal(sc.Rank == 1 ? 42 : 0, peer[0], "point-to-point over it");
        }
        using (Group self = session.GroupFromProcessSet("mpi://SELF"))
        using (Communicator one = Communicator.CreateFromGroup(self, "org.motor.tests.self"))
        {
            Check.Equal(1, one.Size, "communicator from the self set");
            Check.Equal(7, one.Allreduce(7, Op.Sum), "allreduce over self");
        }
        // Misuse, refused before MPI.
        Group disposed = session.GroupFromProcessSet("mpi://WORLD");
        disposed.Dispose();
        Check.Throws<ObjectDisposedException>(() => Communicator.CreateFromGroup(disposed, "t"), "a disposed group");
        using (Group g = session.GroupFromProcessSet("mpi://SELF"))
        {
            Check.Throws<ArgumentException>(() => Communicator.CreateFromGroup(g, ""), "an empty tag");
            Check.Throws<ArgumentException>(() => Communicator.CreateFromGroup(g, new string('x', 257)), "a tag of 257 bytes");
            Check.Throws<ArgumentException>(() => Communicator.CreateFromGroup(g, "a\0b"), "a tag with NUL");
        }
        BadProcessSetNames(session);
        using (Session second = Session.Init())
            Check.True(second.ProcessSets.Count >= 2, "a second session at once");
        session.Dispose();
        Check.True(!session.IsOpen, "disposed");
        Check.Throws<ObjectDisposedException>(() => _ = session.ProcessSets, "process sets of a finalized session");
        Check.Throws<ObjectDisposedException>(() => session.GroupFromProcessSet("mpi://WORLD"), "a group of a finalized session");
        session.Dispose();
        Check.Equal(c.Size, c.Allreduce(1, Op.Sum), "the world after the sessions");
    }

    /// <summary>
    /// Every entry of a session that takes a process set name, given names it must refuse: malformed
    /// ones (ArgumentException before MPI) and names the session does not list (MpiException of
    /// class MPI_ERR_ARG naming the set, as MPI reports it beside the world; MPICH 4.0 ends the
    /// process instead while only sessions exist).  A name differing from a listed one only in case
    /// is the library's to accept (MPICH matches without case), and the session stays usable.
    /// </summary>
    private static void BadProcessSetNames(Session session)
    {
        const int MpichErrArg = 12; // MPI_ERR_ARG in MPICH's mpi.h: sessions exist on MPICH only here
        var entries = new (string Name, Action<string> Call)[]
        {
            ("GetProcessSetInfo", n => session.GetProcessSetInfo(n).Dispose()),
            ("GroupFromProcessSet", n => session.GroupFromProcessSet(n).Dispose()),
        };
        foreach ((string entry, Action<string> call) in entries)
        {
            Check.ThrowsNaming<ArgumentNullException>("processSet", () => call(null!), $"{entry}: a null name");
            Check.ThrowsNaming<ArgumentException>("processSet", () => call(""), $"{entry}: an empty name");
            Check.ThrowsNaming<ArgumentException>("processSet", () => call("mpi://WO\0RLD"), $"{entry}: a name with NUL");
            ArgumentException? tooLong = Check.Throws<ArgumentException>(() => call("mpi://" + new string('X', 251)), $"{entry}: a name of 257 bytes");
            Check.True(tooLong?.Message.Contains("longer than 256", StringComparison.Ordinal) == true, $"{entry}: the long name's message: {tooLong?.Message}");
            foreach (string unknown in new[] { "mpi://no-such-set", "mpi://WORLDS", "mpi:/", "x" })
            {
                MpiException? e = Check.Throws<MpiException>(() => call(unknown), $"{entry}(\"{unknown}\"): an unknown process set");
                Check.True(e is not null && e.ErrorClass == MpichErrArg && e.Message.Contains("MPI_ERR_ARG", StringComparison.Ordinal) &&
                           e.Message.Contains($"\"{unknown}\"", StringComparison.Ordinal) &&
                           e.Message.Contains("mpi://WORLD", StringComparison.Ordinal),
                           $"{entry}(\"{unknown}\"): MPI_ERR_ARG, naming the set and the known ones: class {e?.ErrorClass}: {e?.Message}");
            }
        }
        using (Group g = session.GroupFromProcessSet("mpi://world"))
            Check.True(g.Size >= 1, "a name differing only in case: the library's match");
        using (Info info = session.GetProcessSetInfo("mpi://SELF"))
            Check.Equal("1", info["mpi_size"], "the session after the refused names");
    }

    /// <summary>
    /// The sessions model on its own: run by Program.cs before anything touches the world.  Under
    /// plain dotnet MPI is not initialized until the world is used at the end (MPI-4.0 §11.4.1).
    /// Prints its PASS/FAIL line itself; returns the exit code.
    /// </summary>
    internal static int SessionsAlone()
    {
        string name = Scenario.Mpi4SessionsAlone.Name();
        bool worldBefore = Mpi.IsInitialized;
        Check.Equal(Mpi.IsHosted, worldBefore, "the world is up before Main only under motor");
        Session? session = null;
        try
        {
            session = Session.Init();
        }
        catch (NotSupportedException e)
        {
            Check.True(e.Message.Contains("MPI_Session_init", StringComparison.Ordinal) && !Expected, $"no sessions only on Open MPI 4: {e.Message}");
        }
        if (session is not null)
        {
            BadProcessSetNames(session);
            using Group g = session.GroupFromProcessSet("mpi://WORLD");
            using Communicator c = Communicator.CreateFromGroup(g, "org.motor.tests.alone");
            Check.Rank = c.Rank;
            Check.Equal(worldBefore, Mpi.IsInitialized, "a session does not start the world");
            Check.Equal(c.Size * (c.Size - 1) / 2, c.Allreduce(c.Rank, Op.Sum), "allreduce over a communicator from the session");
            PartitionedRound(c, 4, 3, 0);
            Check.Equal(worldBefore, Mpi.IsInitialized, "still no world");
            c.Dispose();
            g.Dispose();
        }
        // The world model after (or without) the sessions.
        Communicator world = Communicator.World;
        Check.Rank = world.Rank;
        Check.Equal(world.Size, world.Allreduce(1, Op.Sum), "the world after the sessions");
        session?.Dispose();
        Console.WriteLine(Check.Failures == 0 ? $"PASS {name} rank {Check.Rank} ({Check.Passed} checks)"
                                              : $"FAIL {name} rank {Check.Rank}: {Check.Failures} failed, {Check.Passed} passed");
        Mpi.Shutdown();
        return Check.Failures == 0 ? 0 : 1;
    }

    // ---- partitioned communication ----

    private static double PartValue(int round, int partition, int i) => round * 1000 + partition * 10 + i + 0.5;

    /// <summary>One partitioned message from rank 0 to rank 1, made, run once and freed; the receiver checks each part as it arrives.</summary>
    private static void PartitionedRound(Communicator c, int partitions, int count, int round)
    {
        if (c.Rank > 1)
            return;
        var buffer = new double[partitions * count];
        using PartitionedRequest r = c.Rank == 0 ? c.PsendInit(buffer, partitions, count, 1, 5) : c.PrecvInit(buffer, partitions, count, 0, 5);
        Exchange(r, buffer, round, mode: 0);
    }

    /// <summary>
    /// Runs one instance: the sender writes and readies the parts (mode 0 one by one in reverse,
    /// 1 as a range, 2 as a list); the receiver reads each part as soon as it has arrived.
    /// Returns the parts the receiver saw before completion.
    /// </summary>
    private static int Exchange(PartitionedRequest r, double[] buffer, int round, int mode)
    {
        int n = r.Partitions, count = r.PartitionLength, early = 0;
        if (!r.IsSend)
            Array.Fill(buffer, -1); // before Start: MPI may write any part once it is started
        r.Start();
        if (r.IsSend)
        {
            for (int p = 0; p < n; p++)
                for (int i = 0; i < count; i++)
                    buffer[p * count + i] = PartValue(round, p, i);
            if (mode == 0)
                for (int p = n - 1; p >= 0; p--)
                    r.Pready(p);
            else if (mode == 1)
                r.PreadyRange(0, n - 1);
            else
                r.PreadyList(Enumerable.Range(0, n).Reverse().ToArray());
            r.Wait();
            return 0;
        }
        var seen = new bool[n];
        int left = n, bad = 0;
        while (left > 0)
        {
            for (int p = 0; p < n; p++)
            {
                if (seen[p] || !r.Parrived(p))
                    continue;
                seen[p] = true;
                left--;
                early++;
                for (int i = 0; i < count; i++)
                    if (buffer[p * count + i] != PartValue(round, p, i))
                        bad++;
            }
            if (left > 0 && r.IsCompleted)
                break;
        }
        r.Wait();
        Check.Equal(0, bad, $"round {round}: parts read as they arrived hold the sender's values");
        for (int p = 0; p < n; p++)
            for (int i = 0; i < count; i++)
                if (buffer[p * count + i] != PartValue(round, p, i))
                    bad++;
        Check.Equal(0, bad, $"round {round}: the whole message after completion");
        Check.True(r.Parrived(0), "an inactive receive reports its parts arrived");
        return early;
    }

    private static void Partitioned(Communicator c)
    {
        var buffer = new double[8];
        if (!Expected)
        {
            NotSupported("PsendInit", "MPI_Psend_init", () => c.PsendInit(buffer, 4, 2, (c.Rank + 1) % c.Size, 1).Dispose());
            NotSupported("PrecvInit", "MPI_Precv_init", () => c.PrecvInit(buffer, 4, 2, (c.Rank + 1) % c.Size, 1).Dispose());
            BadPeerOrTag(c);
            Check.Equal(c.Size, c.Allreduce(1, Op.Sum), "MPI works after the refused calls");
            return;
        }
        const int partitions = 8, count = 16, rounds = 30;
        long before = Mpi.GetStatistics().PersistentRequests;
        // An ordinary array (staged; the GC moves it between instances) and a pinned-heap one (in place).
        var moving = new double[partitions * count];
        double[] pinned = Mpi.AllocatePinned<double>(partitions * count);
        int peer = c.Rank == 0 ? 1 : 0;
        bool sender = c.Rank == 0;
        PartitionedRequest a = sender ? c.PsendInit(moving, partitions, count, peer, 11) : c.PrecvInit(moving, partitions, count, peer, 11);
        PartitionedRequest b = sender ? c.PsendInit(pinned, partitions, count, peer, 12) : c.PrecvInit(pinned, partitions, count, peer, 12);
        Check.Equal(before + 2, Mpi.GetStatistics().PersistentRequests, "two partitioned requests made");
        Check.True(a.IsSend == sender && a.Partitions == partitions && a.PartitionLength == count, "their shape");
        int early = 0;
        for (int round = 0; round < rounds; round++)
        {
            early += Exchange(a, moving, round, round % 3);
            early += Exchange(b, pinned, round, (round + 1) % 3);
            if (round % 10 == 9)
            {
                var spacer = new byte[4096];
                GC.KeepAlive(spacer);
                CompactAll();
            }
        }
        if (!sender)
            Check.True(early > 0, $"parts were read before their messages completed ({early})");
        // Both started together, completed in one set.
        var both = new[] { a, b };
        PersistentRequest.StartAll(both);
        if (sender)
        {
            Array.Fill(moving, 2.5);
            Array.Fill(pinned, 3.5);
            a.PreadyRange(0, partitions - 1);
            b.PreadyList([.. Enumerable.Range(0, partitions)]);
        }
        else
        {
            Array.Fill(moving, 0);
            Array.Fill(pinned, 0);
        }
        PersistentRequest.WaitAll(both);
        Check.True(moving.All(v => v == 2.5) && pinned.All(v => v == 3.5), "StartAll and WaitAll over partitioned requests");
        Misuse(c, a, sender);
        a.Dispose();
        b.Dispose();
        Check.Equal(before, Mpi.GetStatistics().PersistentRequests, "both freed");
        Check.Throws<ObjectDisposedException>(a.Start, "Start after Dispose");
        Check.Throws<ObjectDisposedException>(() => { if (sender) a.Pready(0); else a.Parrived(0); }, "Pready/Parrived after Dispose");
        Truncated(c, sender, peer);
        Check.Equal(c.Size, c.Allreduce(1, Op.Sum), "MPI works after the partitioned exchanges");
    }

    /// <summary>
    /// Peers and tags of the Init calls, refused before the core on every library (also one without
    /// partitioned communication), naming the argument as the point-to-point calls do.
    /// </summary>
    private static void BadPeerOrTag(Communicator c)
    {
        var small = new double[4];
        Check.ThrowsNaming<ArgumentOutOfRangeException>("dest", () => c.PsendInit(small, 2, 2, c.Size, 1), "a destination outside the communicator");
        Check.ThrowsNaming<ArgumentOutOfRangeException>("dest", () => c.PsendInit(small, 2, 2, -7, 1), "a negative destination");
        Check.ThrowsNaming<ArgumentOutOfRangeException>("source", () => c.PrecvInit(small, 2, 2, Mpi.AnySource, 1), "AnySource (no wildcards)");
        Check.ThrowsNaming<ArgumentOutOfRangeException>("source", () => c.PrecvInit(small, 2, 2, c.Size, 1), "a source outside the communicator");
        Check.ThrowsNaming<ArgumentOutOfRangeException>("tag", () => c.PrecvInit(small, 2, 2, 0, Mpi.AnyTag), "AnyTag (no wildcards)");
        Check.ThrowsNaming<ArgumentOutOfRangeException>("tag", () => c.PsendInit(small, 2, 2, 0, -1), "a negative tag");
    }

    /// <summary>Every misuse of a made request and of the Init calls is refused before MPI sees it.</summary>
    private static void Misuse(Communicator c, PartitionedRequest r, bool sender)
    {
        var small = new double[10];
        Check.Throws<ArgumentException>(() => c.PsendInit(small, 4, 3, 1, 1), "a buffer shorter than partitions × count");
        Check.Throws<ArgumentOutOfRangeException>(() => c.PsendInit(small, 0, 1, 1, 1), "no partitions");
        Check.Throws<ArgumentOutOfRangeException>(() => c.PrecvInit(small, 2, -1, 1, 1), "a negative count");
        BadPeerOrTag(c);
        Check.Throws<ArgumentNullException>(() => c.PsendInit<double>(null!, 2, 2, 0, 1), "a null buffer");
        if (sender)
        {
            Check.Throws<InvalidOperationException>(() => r.Pready(0), "Pready before Start");
            Check.Throws<InvalidOperationException>(() => r.Parrived(0), "Parrived on a send");
            r.Start();
            Check.Throws<ArgumentOutOfRangeException>(() => r.Pready(r.Partitions), "Pready past the last partition");
            Check.Throws<ArgumentOutOfRangeException>(() => r.Pready(-1), "Pready of a negative partition");
            Check.Throws<ArgumentOutOfRangeException>(() => r.PreadyRange(3, 2), "an empty range");
            Check.Throws<ArgumentOutOfRangeException>(() => r.PreadyList([0, r.Partitions]), "a list with a partition out of range");
            Check.Throws<InvalidOperationException>(r.Start, "Start while active");
            r.PreadyRange(0, r.Partitions - 1);
            r.Wait();
        }
        else
        {
            Check.Throws<InvalidOperationException>(() => r.Pready(0), "Pready on a receive");
            r.Start();
            Check.Throws<ArgumentOutOfRangeException>(() => r.Parrived(r.Partitions), "Parrived past the last partition");
            Check.Throws<ArgumentOutOfRangeException>(() => r.Parrived(-1), "Parrived of a negative partition");
            r.Wait();
        }
    }

    // Inside MPI: the receiver's message is smaller than the sender's (MPI-4.0 4.2.2 allows
    // different partitionings of the same size only): the receive fails with MPI's truncation
    // error, and MPI goes on working.
    private static void Truncated(Communicator c, bool sender, int peer)
    {
        if (c.Rank > 1)
            return;
        var big = new double[8];
        var small = new double[4];
        using PartitionedRequest r = sender ? c.PsendInit(big, 4, 2, peer, 13) : c.PrecvInit(small, 2, 2, peer, 13);
        r.Start();
        if (sender)
        {
            r.PreadyRange(0, 3);
            r.Wait();
            return;
        }
        try
        {
            r.Wait();
            Check.True(false, "a receive smaller than the message completed without an error");
        }
        catch (MpiException e)
        {
            Check.True(e.ErrorClass != 0, $"the truncation comes from MPI with its error class: {e.GetType().Name} {e.Message.Split('\n')[0]}");
        }
    }

    // ---- persistent collectives: v-forms, scans, reduce-scatter ----

    private static int V(int rank, int round, int i) => rank * 1000 + round * 100 + i;

    private static void PersistentCollectives(Communicator c)
    {
        int n = c.Size, me = c.Rank;
        // Rank r contributes r + 1 elements; blocks are laid out with a gap of one.
        int[] counts = [.. Enumerable.Range(0, n).Select(r => r + 1)];
        int[] displs = new int[n];
        for (int r = 1; r < n; r++)
            displs[r] = displs[r - 1] + counts[r - 1] + 1;
        int extent = displs[n - 1] + counts[n - 1];
        var send = new int[me + 1];
        var gathered = new int[extent + 2];
        var allGathered = new int[extent];
        var scattered = new int[me + 1];
        var toScatter = new int[extent];
        var scan = new int[3];
        var exscan = new int[3];
        var three = new int[3];
        var rsbSend = new int[2 * n];
        var rsb = new int[2];
        var rsSend = new int[counts.Sum()];
        var rs = new int[me + 1];
        int[] aCounts = [.. Enumerable.Repeat(2, n)], aDispls = [.. Enumerable.Range(0, n).Select(r => 3 * r)];
        var a2aSend = new int[3 * n];
        var a2aRecv = new int[3 * n];
        if (!Expected)
        {
            foreach ((string name, Action make) in new (string, Action)[]
                     {
                         ("GathervInit", () => c.GathervInit(send, gathered, counts, displs, 0).Dispose()),
                         ("ScattervInit", () => c.ScattervInit(toScatter, counts, displs, scattered, 0).Dispose()),
                         ("AllgathervInit", () => c.AllgathervInit(send, allGathered, counts, displs).Dispose()),
                         ("AlltoallvInit", () => c.AlltoallvInit(a2aSend, aCounts, aDispls, a2aRecv, aCounts, aDispls).Dispose()),
                         ("ScanInit", () => c.ScanInit(three, scan, Op.Sum).Dispose()),
                         ("ExscanInit", () => c.ExscanInit(three, exscan, Op.Sum).Dispose()),
                         ("ReduceScatterBlockInit", () => c.ReduceScatterBlockInit(rsbSend, rsb, Op.Sum).Dispose()),
                         ("ReduceScatterInit", () => c.ReduceScatterInit(rsSend, rs, counts, Op.Sum).Dispose()),
                     })
                NotSupported(name, "_init", make);
            Check.Equal(c.Size, c.Allreduce(1, Op.Sum), "MPI works after the refused calls");
            return;
        }
        long before = Mpi.GetStatistics().PersistentRequests;
        int[] countsCopy = [.. counts], displsCopy = [.. displs];
        PersistentRequest[] reqs =
        [
            c.GathervInit(send, me == 0 ? gathered : null, countsCopy, displsCopy, 0),
            c.ScattervInit(me == 0 ? toScatter : null, countsCopy, displsCopy, scattered, 0),
            c.AllgathervInit(send, allGathered, countsCopy, displsCopy),
            c.AlltoallvInit(a2aSend, aCounts, aDispls, a2aRecv, aCounts, aDispls),
            c.ScanInit(three, scan, Op.Sum),
            c.ExscanInit(three, exscan, Op.Max),
            c.ReduceScatterBlockInit(rsbSend, rsb, Op.Sum),
            c.ReduceScatterInit(rsSend, rs, countsCopy, Op.Sum),
        ];
        Check.Equal(before + reqs.Length, Mpi.GetStatistics().PersistentRequests, "eight persistent collectives made");
        // The counts were copied: changing the caller's arrays changes nothing.
        Array.Fill(countsCopy, 0);
        Array.Fill(displsCopy, 0);
        Array.Fill(gathered, -7); // the gaps between blocks keep this
        int bad = 0;
        for (int round = 0; round < 12; round++)
        {
            for (int i = 0; i < send.Length; i++)
                send[i] = V(me, round, i);
            for (int i = 0; i < toScatter.Length; i++)
                toScatter[i] = V(0, round, i);
            for (int i = 0; i < a2aSend.Length; i++)
                a2aSend[i] = V(me, round, i);
            for (int i = 0; i < 3; i++)
                three[i] = V(me, round, i);
            for (int i = 0; i < rsbSend.Length; i++)
                rsbSend[i] = V(me, round, i);
            for (int i = 0; i < rsSend.Length; i++)
                rsSend[i] = V(me, round, i);
            if (round % 2 == 0)
            {
                PersistentRequest.StartAll(reqs);
                PersistentRequest.WaitAll(reqs);
            }
            else
            {
                foreach (PersistentRequest r in reqs)
                {
                    r.Start();
                    r.Wait();
                }
            }
            bad += Compare(c, round, counts, displs, send, gathered, allGathered, toScatter, scattered, aCounts, aDispls,
                           a2aSend, a2aRecv, three, scan, exscan, rsbSend, rsb, rsSend, rs);
            if (round % 4 == 3)
                CompactAll();
        }
        Check.Equal(0, bad, "twelve rounds of eight persistent collectives match their blocking forms");
        foreach (PersistentRequest r in reqs)
            r.Dispose();
        Check.Equal(before, Mpi.GetStatistics().PersistentRequests, "all freed");
        // Misuse, refused before MPI.
        Check.Throws<ArgumentException>(() => c.AllgathervInit(send, allGathered, [1], [0]), "counts of the wrong length");
        Check.Throws<ArgumentException>(() => c.AllgathervInit(send, new int[1], counts, displs), "blocks past the receive buffer");
        Check.Throws<ArgumentException>(() => c.ScanInit(three, scan, Op.Create<int>((x, y) => x + y)), "a user operation");
        Check.Throws<ArgumentException>(() => c.ReduceScatterInit(rsSend, rs, [1], Op.Sum), "reduce-scatter counts of the wrong length");
        Check.Throws<ArgumentException>(() => c.ReduceScatterBlockInit(new int[1], rsb, Op.Sum), "a reduce-scatter-block send too short");
        Check.Throws<ArgumentOutOfRangeException>(() => c.GathervInit(send, gathered, counts, displs, n), "a root outside the communicator");
        Check.Equal(before, Mpi.GetStatistics().PersistentRequests, "nothing was made by the refused calls");
        Check.Equal(n, c.Allreduce(1, Op.Sum), "MPI works after the refused calls");
    }

    /// <summary>Runs the blocking forms on the same inputs and counts the elements that differ.</summary>
    private static int Compare(Communicator c, int round, int[] counts, int[] displs, int[] send, int[] gathered, int[] allGathered,
                               int[] toScatter, int[] scattered, int[] aCounts, int[] aDispls, int[] a2aSend, int[] a2aRecv,
                               int[] three, int[] scan, int[] exscan, int[] rsbSend, int[] rsb, int[] rsSend, int[] rs)
    {
        int bad = 0, me = c.Rank;
        void Same(ReadOnlySpan<int> expected, ReadOnlySpan<int> actual)
        {
            for (int i = 0; i < expected.Length; i++)
                if (expected[i] != actual[i])
                    bad++;
        }
        var g = new int[gathered.Length];
        Array.Fill(g, -7);
        c.Gatherv(send, me == 0 ? g : null, counts, displs, 0);
        if (me == 0)
            Same(g, gathered);
        var ag = new int[allGathered.Length];
        c.Allgatherv(send, ag, counts, displs);
        Same(ag, allGathered);
        for (int r = 0; r < c.Size; r++) // independent of the library: rank r's block holds V(r, round, i)
            for (int i = 0; i < counts[r]; i++)
                if (allGathered[displs[r] + i] != V(r, round, i))
                    bad++;
        var sc = new int[scattered.Length];
        c.Scatterv(me == 0 ? toScatter : null, counts, displs, sc, 0);
        Same(sc, scattered);
        var a2a = new int[a2aRecv.Length];
        c.Alltoallv(a2aSend, aCounts, aDispls, a2a, aCounts, aDispls);
        for (int r = 0; r < c.Size; r++) // only the blocks: the gap after each is not written
            Same(a2a.AsSpan(aDispls[r], aCounts[r]), a2aRecv.AsSpan(aDispls[r], aCounts[r]));
        var s = new int[3];
        c.Scan(three, s, Op.Sum);
        Same(s, scan);
        var e = new int[3];
        c.Exscan(three, e, Op.Max);
        if (me > 0)
            Same(e, exscan);
        var b = new int[rsb.Length];
        c.ReduceScatterBlock(rsbSend, b, Op.Sum);
        Same(b, rsb);
        var q = new int[rs.Length];
        c.ReduceScatter(rsSend, q, counts, Op.Sum);
        Same(q, rs);
        return bad;
    }

    // ---- spawn with an info ----

    // The root spawns one child with "wdir" set to a fresh directory; the child reports the
    // directory it runs in, which must be that one.  Where spawning is not available (Debian's
    // MPICH) the library's own error surfaces as before.  A disposed info is refused before MPI.
    private static void SpawnInfo(Communicator c)
    {
        var (command, args) = Mpi.SelfCommand;
        string dir = Path.Combine(Path.GetTempPath(), $"motor-wdir-{Environment.ProcessId}-{Guid.NewGuid():N}");
        Info stale = new();
        stale.Dispose();
        Check.Throws<ObjectDisposedException>(() => c.Spawn(command, [.. args, Scenario.Mpi4SpawnInfoChild.Name()], 1, stale), "a disposed info");
        Directory.CreateDirectory(dir);
        try
        {
            using Info info = new();
            info["wdir"] = dir;
            Check.Equal(dir, info["wdir"], "the hint is set");
            Intercommunicator? child = SpawnWhereSupported(c, "Spawn", () => c.Spawn(command, [.. args, Scenario.Mpi4SpawnInfoChild.Name()], 1, c.Rank == 0 ? info : null));
            if (child is null)
                return;
            using (child)
            {
                Check.Equal(1, child.RemoteSize, "one child");
                if (c.Rank == 0)
                {
                    string? where = child.ORecv<string>(0, 9);
                    Check.Equal(Path.GetFullPath(dir), where, "the child runs in the directory given as wdir");
                }
                child.Disconnect();
            }
        }
        finally
        {
            Directory.Delete(dir, recursive: true);
        }
    }

    // The spawn, or null where the library cannot spawn (Debian's MPICH) and the test did not
    // require it: then the library's own error surfaced, with its class, and MPI still works.
    private static Intercommunicator? SpawnWhereSupported(Communicator c, string what, Func<Intercommunicator> spawn)
    {
        try
        {
            return spawn();
        }
        catch (MpiException e) when (Environment.GetEnvironmentVariable("MOTOR_TEST_DYNAMIC") != "required")
        {
            Console.WriteLine($"UNSUPPORTED by this MPI library: {what}: {e.Message.Split('\n')[0]}");
            Check.True(e.ErrorClass != 0, "the library's own error, with its class");
            Check.Equal(c.Size, c.Allreduce(1, Op.Sum), "MPI works after the spawn failed");
            return null;
        }
    }

    private static void SpawnInfoChild(Communicator c)
    {
        if (Dynamic.SpawnedParent() is not { } parent)
            return;
        if (c.Rank == 0)
            parent.OSend(Environment.CurrentDirectory, 0, 9);
        parent.Disconnect();
    }

    // ---- spawn_multiple ----

    // The root starts two commands in one call, each with its own wdir hint and argument: the
    // children share one world of 2, child i ran command i (its world rank and Mpi.AppNum are
    // i) and reports its directory and argument.  Bad commands are refused before MPI on every
    // rank (each its own root, so no rank waits in the collective for one that threw).
    private static void SpawnMultiple(Communicator c)
    {
        var (command, args) = Mpi.SelfCommand;
        string[] childArgs = [.. args, Scenario.Mpi4SpawnMultipleChild.Name()];
        Check.Throws<ArgumentException>(() => c.SpawnMultiple([], c.Rank), "no command");
        Check.Throws<ArgumentException>(() => c.SpawnMultiple([new SpawnCommand(command, childArgs, 1), null!], c.Rank), "a null command");
        Check.Throws<ArgumentNullException>(() => c.SpawnMultiple(null!, c.Rank), "no list");
        Check.Throws<ArgumentOutOfRangeException>(() => new SpawnCommand(command, childArgs, 0), "no processes");
        Check.Throws<ArgumentException>(() => new SpawnCommand("", childArgs, 1), "no command name");
        Check.Throws<ArgumentException>(() => new SpawnCommand(command, [.. childArgs, null!], 1), "a null argument");
        Check.Throws<ArgumentOutOfRangeException>(() => c.SpawnMultiple([new SpawnCommand(command, childArgs, 1)], c.Size), "a root outside");
        Info stale = new();
        stale.Dispose();
        Check.Throws<ObjectDisposedException>(() => c.SpawnMultiple([new SpawnCommand(command, childArgs, 1, stale)], c.Rank), "a disposed info");
        Check.Equal(c.Size, c.Allreduce(1, Op.Sum), "nothing was started by the refused calls");

        string[] dirs = [.. Enumerable.Range(0, 2).Select(i => Path.Combine(Path.GetTempPath(), $"motor-wdir{i}-{Environment.ProcessId}-{Guid.NewGuid():N}"))];
        foreach (string d in dirs)
            Directory.CreateDirectory(d);
        using Info first = new(), second = new();
        first["wdir"] = dirs[0];
        second["wdir"] = dirs[1];
        try
        {
            // Only the root's list is read; the other rank passes none.
            SpawnCommand[] commands = c.Rank == 0
                ? [new SpawnCommand(command, [.. childArgs, "--note=first"], 1, first), new SpawnCommand(command, [.. childArgs, "--note=second"], 1, second)]
                : [];
            Intercommunicator? children = SpawnWhereSupported(c, "SpawnMultiple", () => c.SpawnMultiple(commands));
            if (children is null)
                return;
            using (children)
            {
                Check.Equal(2, children.RemoteSize, "one child per command");
                if (c.Rank == 0)
                {
                    string[] names = ["first", "second"];
                    for (int i = 0; i < 2; i++)
                    {
                        string? report = children.ORecv<string>(i, 11);
                        Check.Equal($"{i}|{names[i]}|{Path.GetFullPath(dirs[i])}", report, $"child {i} ran command {i} in its wdir");
                    }
                }
                children.Disconnect();
            }
        }
        finally
        {
            foreach (string d in dirs)
                Directory.Delete(d, recursive: true);
        }
    }

    private static void SpawnMultipleChild(Communicator c)
    {
        if (Dynamic.SpawnedParent() is not { } parent)
            return;
        Check.Equal(2, c.Size, "both commands' children share one world");
        Check.Equal(c.Rank, Mpi.AppNum ?? -1, "MPI_APPNUM is the command's index");
        string which = Environment.GetCommandLineArgs()[^1]["--note=".Length..];
        parent.OSend($"{Mpi.AppNum}|{which}|{Environment.CurrentDirectory}", 0, 11);
        parent.Disconnect();
    }
}
