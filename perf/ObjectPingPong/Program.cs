// ObjectPingPong: Motor's Figure 11.  A linked list whose nodes each hold an
// int[] (4096 data bytes in total, spread evenly over N nodes) goes from rank
// 0 to rank 1 and back; the round-trip time includes serialization at both
// ends.  Side by side, in interleaved rounds of the same run:
//   objects   OSend / ORecv (System.MP object transport)
//   json      System.Text.Json with ReferenceHandler.Preserve, bytes over System.MP (matched probe + Recv)
//   mempack   MemoryPack with circular references, bytes over System.MP
//   raw       the 4096 bytes as one int[] (Send / Recv): the floor
//   mprobe    the same bytes received by matched probe (MProbe + Message.Recv), as
//             any receive must that learns the size from the message itself
// Reports the median of the rounds, the ratio to raw and to objects, and
// the cost per node of OSend/ORecv above the matched-probe floor (constant
// when the cost is linear in N).
//
// usage: mpiexec -n 2 dotnet ObjectPingPong.dll [maxNodes=16384] [rounds=5] [budgetMs=40]
//        mpiexec -n 2 motor ObjectPingPong.dll steady ITERATIONS METHOD   (one long run of round trips of
//        the 1-node list, METHOD objects or raw, after as many untimed: the steady state of an
//        application's message loop, where gen0 collections recur; prints the time per round trip
//        and the collections, with the gen0 budget motor gave the GC: perf/README.md "The gen0 budget")
//        dotnet ObjectPingPong.dll self ITERATIONS METHOD [nodes=1]   (one rank, for callgrind:
//        ITERATIONS nonblocking sends to itself, each received by METHOD: objects (OISend + ORecv),
//        echo (the same, each time sending the graph received last), raw (ISend + Recv) or mprobe
//        (ISend + MProbe + Message.Recv); perf/callgrind-objects.sh)
using System.Globalization;
using System.MP;
using System.Text.Json;
using System.Text.Json.Serialization;
using MemoryPack;

if (args.Length > 0 && args[0] == "self")
    return Bench.Self(Communicator.World, int.Parse(args[1], CultureInfo.InvariantCulture), args[2],
                      args.Length > 3 ? int.Parse(args[3], CultureInfo.InvariantCulture) : 1);
if (args.Length > 0 && args[0] == "steady")
    return Bench.Steady(Communicator.World, int.Parse(args[1], CultureInfo.InvariantCulture), args[2]);
int maxNodes = args.Length > 0 ? int.Parse(args[0], CultureInfo.InvariantCulture) : 16384;
int rounds = args.Length > 1 ? int.Parse(args[1], CultureInfo.InvariantCulture) : 5;
double budget = (args.Length > 2 ? double.Parse(args[2], CultureInfo.InvariantCulture) : 40) / 1000;
var world = Communicator.World;
if (world.Size < 2)
{
    Console.Error.WriteLine("ObjectPingPong needs at least 2 ranks");
    return 1;
}

// Serializers recurse down the list; give them room (Motor's Java baseline overflowed at 1024 nodes).
int exit = 0;
var thread = new Thread(() => exit = Bench.Run(world, maxNodes, rounds, budget), 1 << 29);
thread.Start();
thread.Join();
return exit;

[Transportable]
[MemoryPackable(GenerateType.CircularReference)]
public partial class Node
{
    [Transportable]
    [MemoryPackOrder(0)]
    public int[]? Data;

    [Transportable]
    [MemoryPackOrder(1)]
    public Node? Next;

    /// <summary>1024 ints spread as evenly as possible over <paramref name="n"/> nodes.</summary>
    public static Node Make(int n)
    {
        Node? head = null;
        for (int i = n - 1; i >= 0; i--)
        {
            var data = new int[1024 / n + (i < 1024 % n ? 1 : 0)];
            for (int j = 0; j < data.Length; j++)
                data[j] = i * 1000 + j;
            head = new Node { Data = data, Next = head };
        }
        return head!;
    }

    public static bool Same(Node? a, Node? b)
    {
        for (; a is not null && b is not null; a = a.Next, b = b.Next)
            if (!a.Data.AsSpan().SequenceEqual(b.Data))
                return false;
        return a is null && b is null;
    }
}

internal static class Bench
{
    private const int Tag = 11;

    private static readonly JsonSerializerOptions Json = new()
    {
        IncludeFields = true,
        ReferenceHandler = ReferenceHandler.Preserve,
        MaxDepth = 1 << 20,
    };

    internal static int Run(Communicator c, int maxNodes, int rounds, double budget)
    {
        // objects, raw and mprobe run back to back in each round, so that their per-round quotients
        // compare times taken within about a tenth of a second of each other (this machine's speed
        // changes from one second to the next: perf/README.md).
        string[] methods = ["objects", "raw", "mprobe", "json", "mempack"];
        var sizes = new List<int>();
        for (int n = 1; n <= maxNodes; n *= 2)
            sizes.Add(n);
        var results = new Dictionary<(string, int), List<double>>();
        bool ok = true;
        // Warm-up: JIT and codec generation for every method.
        foreach (string m in methods)
            ok &= Exchange(c, m, Node.Make(8), 20, out _);
        // Calibration: the round trip of each case sets its iteration count, so that each case takes
        // about the budget (decided at rank 0, told to rank 1).  A first round trip well below the
        // budget is timed again over 20: alone, right after a collection, it is slower than the
        // rest and would cut the case short.
        var iterations = new Dictionary<(string, int), int>();
        foreach (int n in sizes)
        {
            foreach (string m in methods)
            {
                ok &= Exchange(c, m, Node.Make(n), 1, out double once);
                if (c.Bcast(once < budget / 100 ? 1 : 0, 0) == 1)
                {
                    ok &= Exchange(c, m, Node.Make(n), 20, out double twenty);
                    once = twenty / 20;
                }
                iterations[(m, n)] = c.Bcast(Math.Clamp((int)(budget / once), 1, 1_000_000), 0);
                results[(m, n)] = [];
            }
        }
        for (int round = 0; round < rounds; round++)
        {
            foreach (int n in sizes)
            {
                Node list = Node.Make(n);
                foreach (string m in methods)
                {
                    // A case slower than a second per round trip is measured in the first round only.
                    if (round > 0 && c.Bcast(Median(results[(m, n)]) > 1.0 ? 1 : 0, 0) == 1)
                        continue;
                    int iters = iterations[(m, n)];
                    ok &= Exchange(c, m, list, iters, out double seconds);
                    results[(m, n)].Add(seconds / iters);
                }
            }
        }
        if (c.Rank != 0)
            return 0;
        Console.WriteLine($"# Motor Figure 11: linked-list ping-pong, 4096 data bytes over N nodes; round trip in microseconds (median of {rounds} interleaved rounds); ratios: median of the per-round quotients");
        Console.WriteLine($"# MPI: {Mpi.LibraryVersion.Split('\n')[0].Trim()}");
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"{"N",6} {"objects",10} {"json",10} {"mempack",10} {"raw",8} {"mprobe",8} {"obj/raw",8} {"obj/mprobe",10} {"json/obj",9} {"mp/obj",7} {"obj ns/node",12}"));
        foreach (int n in sizes)
        {
            double o = Median(results[("objects", n)]) * 1e6, j = Median(results[("json", n)]) * 1e6;
            double mp = Median(results[("mempack", n)]) * 1e6, r = Median(results[("raw", n)]) * 1e6;
            double mr = Median(results[("mprobe", n)]) * 1e6;
            double Quotient(string a, string b) => MedianQuotient(results[(a, n)], results[(b, n)]);
            Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
                $"{n,6} {o,10:F1} {j,10:F1} {mp,10:F1} {r,8:F1} {mr,8:F1} {Quotient("objects", "raw"),8:F2} {Quotient("objects", "mprobe"),10:F2} {Quotient("json", "objects"),9:F2} {Quotient("mempack", "objects"),7:F2} {(o - mr) * 1000 / n,12:F0}"));
        }
        Console.WriteLine(ok ? "data checked: every method returned the list it was sent" : "DATA MISMATCH");
        return ok ? 0 : 1;
    }

    /// <summary>One rank sends to itself <paramref name="iters"/> times (callgrind: instructions per send + receive).</summary>
    internal static int Self(Communicator c, int iters, string method, int nodes)
    {
        Node list = Node.Make(nodes);
        int[] raw = new int[1024], into = new int[1024]; // MPICH refuses a self-send into its own buffer
        Node? back = null;
        // As in a long run, whatever the sends and receives keep between messages (the writer's and
        // reader's caches, pooled buffers) is in gen2 when counting starts, whatever the gen0
        // budget: 16 messages, then two full collections (the same in both of callgrind's runs).
        for (int pass = 0; pass < 2; pass++)
        {
            for (int i = 0; i < (pass == 0 ? 16 : iters); i++)
                SelfOnce(c, method, list, raw, into, ref back);
            if (pass == 0)
            {
                GC.Collect();
                GC.Collect();
            }
        }
        return method is not ("objects" or "echo") || Node.Same(list, back) ? 0 : 1;
    }

    private static void SelfOnce(Communicator c, string method, Node list, int[] raw, int[] into, ref Node? back)
    {
        if (method is "objects" or "echo")
        {
            // echo sends back the graph it received last, as rank 1 of the ping-pong does:
            // objects the encoder has not seen before (no identity hash code yet)
            using ObjectRequest r = c.OISend(method == "echo" && back is not null ? back : list, c.Rank, Tag);
            back = c.ORecv<Node>(c.Rank, Tag);
            r.Wait();
            return;
        }
        using Request s = c.ISend(raw, c.Rank, Tag);
        if (method == "raw")
            c.Recv(into, c.Rank, Tag);
        else
            c.MProbe(c.Rank, Tag).Recv(into);
        s.Wait();
    }

    /// <summary>
    /// The steady state: <paramref name="iters"/> untimed round trips of the 1-node list, then as
    /// many timed, without a collection in between; rank 0 prints the time per round trip.
    /// </summary>
    internal static int Steady(Communicator c, int iters, string method)
    {
        bool ok = Exchange(c, method, Node.Make(1), iters, out _, collect: false);
        int collections = GC.CollectionCount(0);
        TimeSpan paused = GC.GetTotalPauseDuration();
        ok &= Exchange(c, method, Node.Make(1), iters, out double seconds, collect: false);
        collections = GC.CollectionCount(0) - collections;
        paused = GC.GetTotalPauseDuration() - paused;
        if (c.Rank == 0)
        {
            Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
                $"# steady {method}: µs per round trip of the 1-node list after {iters} untimed; {collections} gen0 collections pausing {paused.TotalMilliseconds:F1} ms in all, gen0 budget {Mpi.GetStatistics().GcGen0Budget} bytes{(ok ? "" : ", DATA MISMATCH")}"));
            Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"1-node list {seconds / iters * 1e6:F3}"));
        }
        return ok ? 0 : 1;
    }

    /// <summary>Runs <paramref name="iters"/> round trips; rank 0 checks the last list it got back.</summary>
    private static bool Exchange(Communicator c, string method, Node list, int iters, out double seconds, bool collect = true)
    {
        int peer = c.Rank == 0 ? 1 : 0;
        int[] raw = new int[1024];
        Node? back = null;
        if (collect)
        {
            GC.Collect(); // the previous case's garbage is not this case's cost
            GC.WaitForPendingFinalizers();
        }
        c.Barrier();
        double t0 = Mpi.Wtime();
        for (int i = 0; i < iters; i++)
        {
            if (c.Rank == 0)
            {
                Send(c, method, list, raw, peer);
                back = Receive(c, method, raw, peer);
            }
            else if (c.Rank == 1)
            {
                Send(c, method, Receive(c, method, raw, peer), raw, peer);
            }
        }
        seconds = Mpi.Wtime() - t0;
        return c.Rank != 0 || method is "raw" or "mprobe" || Node.Same(list, back);
    }

    private static void Send(Communicator c, string method, Node? list, int[] raw, int peer)
    {
        switch (method)
        {
            case "objects": c.OSend(list, peer, Tag); break;
            case "json": c.Send(JsonSerializer.SerializeToUtf8Bytes(list, Json), peer, Tag); break;
            case "mempack": c.Send(MemoryPackSerializer.Serialize(list), peer, Tag); break;
            default: c.Send(raw, peer, Tag); break; // raw, mprobe
        }
    }

    private static Node? Receive(Communicator c, string method, int[] raw, int peer)
    {
        if (method == "objects")
            return c.ORecv<Node>(peer, Tag);
        if (method == "raw")
        {
            c.Recv(raw, peer, Tag);
            return null;
        }
        Message m = c.MProbe(peer, Tag);
        if (method == "mprobe")
        {
            m.Recv(raw);
            return null;
        }
        var bytes = new byte[m.Status.GetCount<byte>()];
        m.Recv(bytes);
        return method == "json" ? JsonSerializer.Deserialize<Node>(bytes, Json) : MemoryPackSerializer.Deserialize<Node>(bytes);
    }

    /// <summary>The median over the rounds both cases ran in of a's time divided by b's in that round.</summary>
    private static double MedianQuotient(List<double> a, List<double> b) =>
        Median(Enumerable.Range(0, Math.Min(a.Count, b.Count)).Select(i => a[i] / b[i]).ToList());

    private static double Median(List<double> xs) => Stats.Median(xs);
}
