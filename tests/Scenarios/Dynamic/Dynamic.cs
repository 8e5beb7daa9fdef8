using System.MP;

namespace Scenarios;

/// <summary>Intercommunicators, spawn, ports and name publishing.</summary>
internal static class Dynamic
{
    internal static void Register(Dictionary<Scenario, Action<Communicator>> s)
    {
        s[Scenario.Intercomm] = Intercomm;
        s[Scenario.Spawn] = Spawn;
        s[Scenario.SpawnChild] = SpawnChild;
        s[Scenario.PortServer] = PortServer;
        s[Scenario.PortClient] = PortClient;
        s[Scenario.Names] = Names;
    }

    private static void Intercomm(Communicator c)
    {
        // Two halves: low ranks (color 0) and high ranks (color 1).
        int p = c.Size, r = c.Rank, half = p / 2, color = r < half ? 0 : 1;
        using Communicator local = c.Split(color, r)!;
        int remoteLeader = color == 0 ? half : 0; // leader ranks in c
        using Intercommunicator inter = Intercommunicator.Create(local, 0, c, remoteLeader, 77);
        int remoteSize = color == 0 ? p - half : half;
        Check.True(inter.IsInter, "is an intercommunicator");
        Check.Equal(remoteSize, inter.RemoteSize, "remote size");
        Check.Equal(local.Size, inter.Size, "local size");
        // Point-to-point addresses the remote group: rank i of each group pairs
        // with rank i of the other where both exist.
        int partner = inter.Rank;
        if (partner < remoteSize)
        {
            var got = new int[1];
            Status st = inter.SendRecv(new[] { r }, partner, 5, got, partner, 5);
            Check.Equal(color == 0 ? half + partner : partner, got[0], "message from the remote group");
            Check.Equal(partner, st.Source, "source is a remote rank");
        }
        Check.Throws<ArgumentOutOfRangeException>(() => inter.Send(new[] { 1 }, remoteSize, 0), "dest beyond the remote group");
        // Broadcast from group 0's rank 0 to group 1.
        int root = color == 0 ? (local.Rank == 0 ? Mpi.Root : Mpi.ProcNull) : 0;
        var data = color == 0 && local.Rank == 0 ? new[] { 3, 1, 4 } : new int[3];
        inter.Bcast(data, root);
        if (color == 1)
            Check.Sequence<int>(new[] { 3, 1, 4 }, data, "intercommunicator bcast");
        // Allreduce across: each group gets the reduction of the other group.
        int otherSum = color == 0 ? Enumerable.Range(half, p - half).Sum() : Enumerable.Range(0, half).Sum();
        Check.Equal(otherSum, inter.Allreduce(r, Op.Sum), "intercommunicator allreduce");
        inter.Barrier();
        Check.Throws<NotSupportedException>(() => inter.Scan(1, Op.Sum), "scan is intracommunicator-only");
        Check.Throws<ArgumentOutOfRangeException>(() => inter.Bcast(data, remoteSize + 2), "root outside the remote group");
        using Communicator merged = inter.Merge(high: color == 1);
        Check.Equal(p, merged.Size, "merged size");
        Check.Equal(r, merged.Rank, "high group is ordered last");
        Check.Equal(p * (p - 1) / 2, merged.Allreduce(r, Op.Sum), "collective over the merged communicator");
    }

    /// <summary>
    /// True when the job runs on an MPI that must support dynamic processes
    /// (the tests set MOTOR_TEST_DYNAMIC=required for Open MPI jobs).
    /// </summary>
    private static bool Required => Environment.GetEnvironmentVariable("MOTOR_TEST_DYNAMIC") == "required";

    /// <summary>
    /// Runs a dynamic-process operation.  Where the MPI library cannot do it
    /// (Debian's MPICH over UCX lacks ports and spawn) it must fail with an
    /// MpiException carrying the library's reason, and MPI must keep working.
    /// Returns false in that case; when <see cref="Required"/>, the failure propagates.
    /// </summary>
    private static bool Supported(Communicator c, Action action, string what)
    {
        try
        {
            action();
            return true;
        }
        catch (MpiException e) when (!Required && e.Message.Contains("not supported", StringComparison.OrdinalIgnoreCase) ||
                                     e.Message.Contains("Error in spawn call", StringComparison.Ordinal))
        {
            Console.WriteLine($"UNSUPPORTED by this MPI library: {what}: {e.Message.Split('\n')[0]}");
            Check.True(e.ErrorClass != 0 && e.Message.StartsWith("MPI_", StringComparison.Ordinal), $"{what}: the error names the MPI call and class");
            Check.Equal(c.Size, c.Allreduce(1, Op.Sum), $"MPI works after {what} failed");
            return false;
        }
    }

    private static void Spawn(Communicator c)
    {
        var (command, args) = Mpi.SelfCommand;
        Intercommunicator? spawned = null;
        if (!Supported(c, () => spawned = c.Spawn(command, [.. args, Scenario.SpawnChild.Name()], 2), "Spawn"))
            return;
        using Intercommunicator children = spawned!;
        Check.Equal(2, children.RemoteSize, "two children");
        if (c.Rank == 0)
        {
            children.Send(new[] { 10, 20, 30 }, 1, 1);
            Check.Equal(21, children.Recv<int>(1, 2), "reply from child 1");
        }
        using Communicator all = children.Merge(high: false);
        Check.Equal(c.Size + 2, all.Size, "merged parent and children");
        Check.Equal(c.Rank, all.Rank, "parents come first");
        Check.Equal(c.Size + 2, all.Allreduce(1, Op.Sum), "collective over parents and children");
        children.Disconnect();
        Check.True(children.IsDisposed, "disconnected");
    }

    /// <summary>A spawned child's parent intercommunicator; null (and a failed check) when this job was not spawned.</summary>
    internal static Intercommunicator? SpawnedParent()
    {
        Intercommunicator? parent = Communicator.Parent;
        Check.True(parent is not null, "a spawned job has a parent");
        return parent;
    }

    private static void SpawnChild(Communicator c)
    {
        if (Dynamic.SpawnedParent() is not { } parent)
            return;
        Check.Equal(2, c.Size, "children world");
        if (c.Rank == 1)
        {
            var got = new int[3];
            parent.Recv(got, 0, 1);
            Check.Sequence<int>(new[] { 10, 20, 30 }, got, "data from the parent");
            parent.Send(got[1] + 1, 0, 2);
        }
        using Communicator all = parent.Merge(high: true);
        Check.Equal(parent.RemoteSize + c.Rank, all.Rank, "children come last");
        Check.Equal(all.Size, all.Allreduce(1, Op.Sum), "collective over parents and children");
        parent.Disconnect();
    }

    /// <summary>A service name to publish the port under (MOTOR_TEST_SERVICE), when a name server runs.</summary>
    private static string? Service => Environment.GetEnvironmentVariable("MOTOR_TEST_SERVICE") is { Length: > 0 } s ? s : null;

    private static string PortFile => Environment.GetEnvironmentVariable("MOTOR_TEST_PORT_FILE")
        ?? throw new InvalidOperationException("MOTOR_TEST_PORT_FILE is not set");

    private static void PortServer(Communicator c)
    {
        string port = "";
        if (!Supported(c, () => port = c.Rank == 0 ? Mpi.OpenPort() : "", "OpenPort"))
        {
            if (c.Rank == 0)
                File.WriteAllText(PortFile, "unsupported");
            return;
        }
        Check.True(c.Rank != 0 || port.Length > 0, "a port name");
        if (c.Rank == 0)
        {
            if (Service is string service)
                Mpi.PublishName(service, port);
            File.WriteAllText(PortFile + ".tmp", port);
            File.Move(PortFile + ".tmp", PortFile, overwrite: true);
        }
        using Intercommunicator client = c.Accept(port, 0);
        if (c.Rank == 0 && Service is string published)
            Mpi.UnpublishName(published, port);
        Check.Equal(1, client.RemoteSize, "one client");
        if (c.Rank == 0)
        {
            client.Send(new[] { 7.5, 8.5 }, 0, 3);
            Check.Equal(16.0, client.Recv<double>(0, 4), "reply from the other job");
            Mpi.ClosePort(port);
        }
        client.Disconnect();
    }

    private static void PortClient(Communicator c)
    {
        string port = "";
        if (c.Rank == 0)
        {
            for (int i = 0; i < 600 && !File.Exists(PortFile); i++)
                Thread.Sleep(50);
            port = File.ReadAllText(PortFile);
            // With a name server, the other job's port is also found by name.
            if (Service is string service && port != "unsupported")
                Check.Equal(port, Mpi.LookupName(service), "the published port, looked up by name");
        }
        if (c.Bcast(port == "unsupported", 0))
        {
            Check.Throws<MpiException>(() => Mpi.OpenPort(), "ports are unsupported on this side too");
            return;
        }
        using Intercommunicator server = c.Connect(port, 0);
        var got = new double[2];
        server.Recv(got, 0, 3);
        Check.Sequence<double>(new[] { 7.5, 8.5 }, got, "data from the other job");
        server.Send(got[0] + got[1], 0, 4);
        server.Disconnect();
    }

    private static void Names(Communicator c)
    {
        // Publishing needs a name server; without one the library's own error
        // must surface as an MpiException with a message, and MPI keeps working.
        // A name nobody published is MPI's error inside MPI_Lookup_name, with its class named
        // (MPICH's string says only "Invalid service name"), on every library and launcher.
        try
        {
            string found = Mpi.LookupName($"motor-never-published-{Environment.ProcessId}");
            Check.True(false, $"lookup of a name nobody published: no exception (got '{found}')");
        }
        catch (MpiException e)
        {
            Check.True(e.ErrorClass != 0 && e.Message.StartsWith("MPI_Lookup_name: ", StringComparison.Ordinal) &&
                       e.Message.Contains("MPI_ERR_NAME", StringComparison.Ordinal),
                       $"lookup of a name nobody published: MPI_ERR_NAME from MPI_Lookup_name ({e.Message})");
        }
        string port = "";
        if (!Supported(c, () => port = Mpi.OpenPort(), "OpenPort"))
        {
            Check.Throws<ArgumentException>(() => Mpi.PublishName("", "x"), "empty service name");
            return;
        }
        try
        {
            Mpi.PublishName("motor-test-" + c.Rank, port);
            Check.Equal(port, Mpi.LookupName("motor-test-" + c.Rank), "lookup finds the published port");
            Mpi.UnpublishName("motor-test-" + c.Rank, port);
        }
        catch (MpiException e) when (!Required)
        {
            Console.WriteLine($"name service unavailable: {e.Message}");
            Check.True(e.Message.Length > 0 && e.ErrorClass != 0, "clear error without a name server");
        }
        Check.Throws<ArgumentException>(() => Mpi.PublishName("", port), "empty service name");
        Mpi.ClosePort(port);
        Check.Equal(c.Size, c.Allreduce(1, Op.Sum), "MPI works after the name service");
    }
}
