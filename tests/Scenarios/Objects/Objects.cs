using System.MP;

namespace Scenarios;

/// <summary>Object operations over real MPI jobs: every scenario checks the data that arrived.</summary>
internal static class Objects
{
    internal static void Register(Dictionary<Scenario, Action<Communicator>> s)
    {
        s[Scenario.ObjectsP2p] = PointToPoint;
        s[Scenario.ObjectsCollectives] = Collectives;
        s[Scenario.ObjectsReject] = Reject;
        s[Scenario.ObjectsNonblocking] = Nonblocking;
        s[Scenario.ObjectsChunked] = Chunked;
        s[Scenario.ObjectsBadArgs] = BadArgs;
        s[Scenario.ObjectsIntercomm] = Intercomm;
        s[Scenario.ObjectsCollections] = Collections;
    }

    /// <summary>
    /// Graphs with List, HashSet and Dictionary fields (TransportSamples.MakeBag: lists of ints,
    /// strings, objects, structs and enums, sets, dictionaries with string and object keys and
    /// values, an array of lists, empty and null ones, shared references and a cycle through a
    /// dictionary's list): OSend/ORecv both ways, OBcast, OIRecv, and a set with a comparer the
    /// receiver could not rebuild refused on the sender before anything is sent.
    /// </summary>
    private static void Collections(Communicator c)
    {
        int p = c.Size;
        if (c.Rank == 0)
        {
            for (int seed = 0; seed < 3; seed++)
                c.OSend(TransportSamples.MakeBag(seed), 1, 40);
            c.OSend(new List<Bag> { TransportSamples.MakeBag(7), TransportSamples.MakeBag(8) }, 1, 41);
            c.OSend(new Dictionary<string, string> { ["MPI.NET"] = "flattened", ["Motor"] = "as is" }, 1, 41);
            var refused = new Bag { Words = new HashSet<string>(StringComparer.OrdinalIgnoreCase) { "a" } };
            try
            {
                c.OSend(refused, 1, 42);
                Check.True(false, "a set with a comparer the receiver cannot rebuild was sent");
            }
            catch (TransportException e)
            {
                Check.True(e.Message.Contains("default comparer", StringComparison.Ordinal), $"refused for its comparer: {e.Message}");
            }
            c.OSend(TransportSamples.MakeBag(9), 1, 42); // nothing of the refused one went out: this is the next message
            Check.Null(TransportSamples.CheckBag(c.ORecv<Bag>(1, 43), 4), "bag sent back by rank 1");
        }
        else if (c.Rank == 1)
        {
            for (int seed = 0; seed < 3; seed++)
                Check.Null(TransportSamples.CheckBag(c.ORecv<Bag>(0, 40), seed), $"bag {seed}");
            List<Bag>? bags = c.ORecv<List<Bag>>(0, 41);
            Check.True(bags is { Count: 2 }, "a list of bags as the root");
            Check.Null(TransportSamples.CheckBag(bags![0], 7), "first bag of the list");
            Check.Null(TransportSamples.CheckBag(bags[1], 8), "second bag of the list");
            var names = c.ORecv<Dictionary<string, string>>(0, 41);
            Check.Sequence<string>(["MPI.NET", "Motor"], names?.Keys.ToArray(), "dictionary keys in their order");
            Check.Sequence<string>(["flattened", "as is"], names?.Values.ToArray(), "dictionary values in their order");
            ObjectRequest<Bag> r = c.OIRecv<Bag>(0, 42);
            r.Wait();
            Check.Null(TransportSamples.CheckBag(r.Result, 9), "the bag after the refused one");
            c.OSend(TransportSamples.MakeBag(4), 0, 43);
        }
        // The root keeps its own object; the others check what arrived.
        Bag sent = TransportSamples.MakeBag(5);
        Bag? all = c.OBcast(c.Rank == 0 ? sent : null, 0);
        if (c.Rank == 0)
            Check.True(ReferenceEquals(all, sent), "the root keeps its bag");
        else
            Check.Null(TransportSamples.CheckBag(all, 5), "OBcast bag");
        Dictionary<int, List<Bag>>? children = c.OBcast(c.Rank == p - 1 ? TransportSamples.MakeBag(6).Children : null, p - 1);
        Check.True(children is { Count: 2 } && children[1].Count == 1, "OBcast of a dictionary as the root");
        Check.True(ReferenceEquals(children![1][0].Children, children), "the cycle through the root dictionary");
        if (c.Rank != p - 1)
            Check.Null(TransportSamples.CheckBag(children[1][0], 6), "the bag the dictionary holds");
    }

    /// <summary>
    /// Object operations across an intercommunicator between the two halves of
    /// the job: point-to-point to the remote group, OBcast, OScatter and OGather
    /// with Mpi.Root / ProcNull at the root's side, an encoding failure that
    /// fails every rank, and OAllgather of the remote group's blocks.
    /// </summary>
    private static void Intercomm(Communicator c)
    {
        int p = c.Size, half = p / 2, color = c.Rank < half ? 0 : 1;
        using Communicator local = c.Split(color, c.Rank)!;
        using Intercommunicator inter = Intercommunicator.Create(local, 0, c, color == 0 ? half : 0, 31);
        int me = inter.Rank, remote = inter.RemoteSize;

        // Point-to-point: rank i of group 0 sends a graph to rank i of group 1.
        if (color == 0 && me < remote)
            inter.OSend(TransportSamples.Figure5(10 + me), me, 1);
        if (color == 1 && me < remote)
            Check.Null(TransportSamples.CheckFigure5(inter.ORecv<LinkedList>(me, 1, out Status st), 10 + me), "graph from the remote group");

        // OBcast from group 0's rank 0 to every rank of group 1.
        int bcastRoot = color == 0 ? (me == 0 ? Mpi.Root : Mpi.ProcNull) : 0;
        LinkedList? list = inter.OBcast(color == 0 && me == 0 ? TransportSamples.Figure5(25) : null, bcastRoot);
        if (color == 1)
            Check.Null(TransportSamples.CheckFigure5(list, 25), "OBcast across");
        else
            Check.True(me == 0 ? list is not null : list is null, "the root keeps its object, its group gets default");

        // OScatter from group 1's rank 0: block i goes to rank i of group 0.
        int scatterRoot = color == 1 ? (me == 0 ? Mpi.Root : Mpi.ProcNull) : 0;
        int n = 2 * half + 1;
        string[]? all = color == 1 && me == 0 ? [.. Enumerable.Range(0, n).Select(i => $"w{i}")] : null;
        string[]? block = inter.OScatterBlocks(all, scatterRoot);
        if (color == 0)
        {
            int size = n / half + (me < n % half ? 1 : 0), first = me * (n / half) + Math.Min(me, n % half);
            Check.Sequence<string>([.. Enumerable.Range(first, size).Select(i => $"w{i}")], block, "OScatter across");
        }
        else
        {
            Check.True(block is null, "the scattering group gets no block");
        }

        // OGather at group 1's rank 0 of group 0's blocks (rank i gives i + 1 shapes sharing one object).
        var shared = new Shape { Name = $"g{me}" };
        Shape[] mine = [.. Enumerable.Range(0, me + 1).Select(_ => shared)];
        Shape[]? gathered = inter.OGather(mine, scatterRoot);
        if (color == 1 && me == 0)
        {
            Check.Equal(half * (half + 1) / 2, gathered!.Length, "OGather across: all blocks");
            int at = 0;
            for (int r = 0; r < half; r++)
                for (int i = 0; i <= r; i++, at++)
                    Check.True(gathered[at].Name == $"g{r}" && ReferenceEquals(gathered[at], gathered[at - i]), $"block {r} in rank order, shared within");
        }
        else
        {
            Check.True(gathered is null, "only the root gets the gathered array");
        }

        // A block that may not travel fails every rank that takes part (the
        // senders and the root), then the intercommunicator still works.
        object[] bad = color == 0 && me == half - 1 ? [new Plain()] : ["fine"];
        if (scatterRoot == Mpi.ProcNull)
            Check.True(inter.OGather(bad, scatterRoot) is null, "ProcNull ranks take no part");
        else
            Check.Throws<TransportException>(() => inter.OGather(bad, scatterRoot), "OGather with an unmarked type");
        int after = inter.OBcast(color == 0 && me == 0 ? 25 : 0, bcastRoot);
        if (color == 1)
            Check.Equal(25, after, "the intercommunicator works after the failure");

        int[] fromRemote = inter.OAllgather(new[] { 100 * color + me });
        Check.Sequence<int>([.. Enumerable.Range(0, remote).Select(i => 100 * (1 - color) + i)], fromRemote, "OAllgather across gives the remote group's blocks");
        Check.Throws<ArgumentOutOfRangeException>(() => inter.OBcast(1, remote + 3), "root outside the remote group");
    }

    private static void PointToPoint(Communicator c)
    {
        if (c.Rank == 0)
        {
            c.OSend(null, 1, 1);
            object[] primitives = [true, 'ж', (sbyte)-1, (byte)2, (short)-3, (ushort)4, -5, 6u, -7L, 8ul, 9.5f, 10.25, 11.5m, (nint)12, (nuint)13, Color.Blue];
            foreach (object p in primitives)
                c.OSend(p, 1, 2);
            c.OSend("", 1, 3);
            c.OSend("Grüße, 世界 😀", 1, 3);
            c.OSend(new[] { 1.5, 2.5 }, 1, 4);
            c.OSend(new object?[] { "a", 1, null }, 1, 4);
            c.OSend(new int[][] { [1], [2, 3] }, 1, 4);
            c.OSend(new int[,] { { 1, 2, 3 }, { 4, 5, 6 } }, 1, 4);
            c.OSend(TransportSamples.Figure5(20), 1, 5);
            c.OSend(TransportSamples.Ring(5), 1, 5);
            var shared = new int[] { 42 };
            c.OSend(new Pair { A = shared, B = shared }, 1, 5);
            c.OSend(new Circle(7) { Name = "c", Radius = 3, X = 1 }, 1, 5);
            c.OSend(new Body { Pos = new Vec3(1, 2, 3), In = new Inner { A = 9 }, Id = 4 }, 1, 5);
            c.OSend(TransportSamples.MakeHolder(), 1, 5);
            c.OSend(new[] { "zero", "one", "two", "three", "four" }, 1, 3, 1, 6); // a slice: one, two, three
            c.OSend(TransportSamples.Figure5(100_000), 1, 7);
            Check.Null(TransportSamples.CheckRing(c.ORecv<DNode>(1, 8), 100_000), "100,000-node ring back from rank 1");
        }
        else if (c.Rank == 1)
        {
            Check.True(c.ORecv(0, 1) is null, "null");
            object[] expected = [true, 'ж', (sbyte)-1, (byte)2, (short)-3, (ushort)4, -5, 6u, -7L, 8ul, 9.5f, 10.25, 11.5m, (nint)12, (nuint)13, Color.Blue];
            foreach (object e in expected)
            {
                object? got = c.ORecv(0, 2);
                Check.True(e.Equals(got) && got!.GetType() == e.GetType(), $"primitive {e.GetType().Name}: {got}");
            }
            Check.Equal("", c.ORecv<string>(0, 3), "empty string");
            Check.Equal("Grüße, 世界 😀", c.ORecv<string>(0, 3, out Status st), "non-ASCII string");
            Check.Equal(0, st.Source, "status source");
            Check.Equal(3, st.Tag, "status tag");
            Check.True(st.ByteCount > 24, $"status byte count {st.ByteCount}");
            Check.Sequence<double>([1.5, 2.5], c.ORecv<double[]>(0, 4), "double[]");
            var objs = c.ORecv<object?[]>(Mpi.AnySource, 4)!;
            Check.True(objs.Length == 3 && (string?)objs[0] == "a" && (int?)objs[1] == 1 && objs[2] is null, "object[]");
            var jagged = c.ORecv<int[][]>(0, Mpi.AnyTag)!;
            Check.True(jagged.Length == 2 && jagged[1][1] == 3, "jagged");
            var md = c.ORecv<int[,]>(0, 4)!;
            Check.True(md.GetLength(0) == 2 && md.GetLength(1) == 3 && md[1, 2] == 6 && md[0, 1] == 2, "int[,]");
            Check.Null(TransportSamples.CheckFigure5(c.ORecv<LinkedList>(0, 5), 20), "Figure 5 list");
            Check.Null(TransportSamples.CheckRing(c.ORecv<DNode>(0, 5), 5), "doubly-linked ring");
            var pair = c.ORecv<Pair>(0, 5)!;
            Check.True(pair.A is int[] { Length: 1 } a && a[0] == 42 && ReferenceEquals(pair.A, pair.B), "shared reference arrives once");
            var circle = c.ORecv<Shape>(0, 5) as Circle;
            Check.True(circle is { Name: "c", Radius: 3, X: 1, Stamp: 7 }, "inheritance");
            var body = c.ORecv<Body>(0, 5);
            Check.True(body.Pos.Z == 3 && body.In.A == 9 && body.Id == 4, "nested structs");
            Check.Null(TransportSamples.CheckHolder(c.ORecv<Holder>(0, 5)), "struct fields with references");
            Check.Sequence<string>(["one", "two", "three"], c.ORecv<string[]>(0, 6), "slice");
            var list = c.ORecv<LinkedList>(0, 7);
            Check.Null(TransportSamples.CheckFigure5(list, 100_000), "100,000-node list");
            c.OSend(TransportSamples.Ring(100_000), 0, 8);
            Check.True(c.ORecv(Mpi.ProcNull, 0, out Status pn) is null && pn.Source == Mpi.ProcNull, "receive from ProcNull");
            c.OSend("nowhere", Mpi.ProcNull, 0);
        }
        GraphsWhileCollecting(c);
    }

    /// <summary>
    /// The encoder hashes objects by address and encodes a graph again when a collection ran
    /// meanwhile (ObjectWriter.WritePiece): with a thread collecting gen 0 all the time,
    /// rings and shared arrays still arrive intact, sent and echoed back as fresh objects.
    /// </summary>
    private static void GraphsWhileCollecting(Communicator c)
    {
        if (c.Rank > 1)
            return;
        bool stop = false;
        var collector = new Thread(() =>
        {
            while (!Volatile.Read(ref stop))
            {
                GC.Collect(0, GCCollectionMode.Forced, blocking: true); // gen-0 survivors move (a full collection each time is slow in library mode)
                Thread.Sleep(1);
            }
        }) { IsBackground = true };
        collector.Start();
        for (int i = 0; i < 20; i++)
        {
            if (c.Rank == 0)
            {
                var shared = new int[] { i };
                c.OSend(TransportSamples.Ring(2000), 1, 9);
                c.OSend(new Pair { A = shared, B = shared }, 1, 9);
                Check.Null(TransportSamples.CheckRing(c.ORecv<DNode>(1, 9), 2000), $"ring {i} echoed while collecting");
                var pair = c.ORecv<Pair>(1, 9)!;
                Check.True(pair.A is int[] { Length: 1 } a && a[0] == i && ReferenceEquals(pair.A, pair.B), $"shared array {i} echoed while collecting");
            }
            else
            {
                c.OSend(c.ORecv<DNode>(0, 9), 0, 9);
                c.OSend(c.ORecv<Pair>(0, 9), 0, 9);
            }
        }
        Volatile.Write(ref stop, true);
        collector.Join();
    }

    private static void Collectives(Communicator c)
    {
        int p = c.Size, r = c.Rank;
        // OBcast: graphs, null, values; the root keeps its own object.
        LinkedList root = TransportSamples.Figure5(30);
        LinkedList? got = c.OBcast(r == 1 ? root : null, 1);
        if (r == 1)
            Check.True(ReferenceEquals(got, root), "the root gets its own object back");
        else
            Check.Null(TransportSamples.CheckFigure5(got, 30), "OBcast list");
        Check.True(c.OBcast<string>(null, 0) is null, "OBcast null");
        Check.Equal(99, c.OBcast(r == 0 ? 99 : -1, 0), "OBcast int");

        // OScatter: n not divisible by p, n < p, n = 0; rank r gets n/p (+1 when r < n%p) in rank order.
        foreach (int n in new[] { 7, p - 1, 0, 2 * p })
        {
            string[]? all = r == 0 ? [.. Enumerable.Range(0, n).Select(i => $"s{i}")] : null;
            string[] block = c.OScatterBlocks(all, 0)!;
            int size = n / p + (r < n % p ? 1 : 0), first = r * (n / p) + Math.Min(r, n % p);
            Check.Sequence<string>([.. Enumerable.Range(first, size).Select(i => $"s{i}")], block, $"OScatter n={n}");
        }

        // Elements sharing references: within a block they stay shared; each block is a copy.
        var a = new Shape { Name = "A" };
        var b = new Shape { Name = "B" };
        Shape[]? shapes = r == 2 % p ? [a, a, b, b, a, a] : null;
        Shape[] mine = c.OScatterBlocks(shapes, 2 % p)!;
        Check.Equal(6 / p + (r < 6 % p ? 1 : 0), mine.Length, "shared-reference block size");
        if (p == 3)
        {
            Check.True(ReferenceEquals(mine[0], mine[1]) && mine[0].Name == (r == 0 ? "A" : r == 1 ? "B" : "A"), "shared elements stay shared in a block");
            if (r == 2)
                Check.True(!ReferenceEquals(mine[0], a), "a block is a copy, even at the root");
        }

        // OGather: rank r contributes r + 1 ... blocks of different lengths, rank 0 an empty one.
        int[][] block2 = [.. Enumerable.Range(0, r).Select(i => new[] { r, i })];
        int[][]? gathered = c.OGather(block2, p - 1);
        if (r == p - 1)
        {
            var expected = Enumerable.Range(0, p).SelectMany(q => Enumerable.Range(0, q).Select(i => $"{q}.{i}")).ToArray();
            Check.Sequence<string>(expected, gathered!.Select(x => $"{x[0]}.{x[1]}").ToArray(), "OGather in rank order");
        }
        else
        {
            Check.True(gathered is null, "OGather is null off the root");
        }
        var circle = new Circle(r) { Name = $"c{r}" };
        Shape[] everyone = c.OAllgather<Shape>([circle, circle]);
        Check.Equal(2 * p, everyone.Length, "OAllgather length");
        for (int q = 0; q < p; q++)
            Check.True(everyone[2 * q] is Circle cq && cq.Stamp == q && cq.Name == $"c{q}" && ReferenceEquals(everyone[2 * q], everyone[2 * q + 1]),
                $"OAllgather block of rank {q}");
        Check.Equal(0, c.OAllgather(Array.Empty<object>()).Length, "OAllgather of empty blocks");
    }

    private static void Reject(Communicator c)
    {
        const int tag = 5;
        if (c.Rank == 0)
        {
            // Sender side: refused before anything is sent (rank 1 would otherwise receive it).
            Check.Throws<TransportException>(() => c.OSend(new Plain(), 1, tag), "unmarked type");
            Check.Throws<TransportException>(() => c.OSend(new Pair { A = new MemoryStream() }, 1, tag), "stream in a followed field");
            // Receiver side: hostile payloads sent as raw bytes with the same tag, then a good one.
            c.Send(ForgedPayloads.OfNamedType("System.IO.FileStream", "System.Private.CoreLib"), 1, tag);
            c.Send(ForgedPayloads.OfNamedType("Microsoft.Win32.SafeHandles.SafeFileHandle", "System.Private.CoreLib"), 1, tag);
            c.Send(ForgedPayloads.OfNamedType("System.Action", "System.Private.CoreLib"), 1, tag);
            c.Send(ForgedPayloads.IntArrayClaiming(int.MaxValue, 8), 1, tag);
            c.Send(ForgedPayloads.DanglingReference(), 1, tag);
            c.Send(new byte[] { 1, 2, 3 }, 1, tag);
            c.Send(ForgedPayloads.ChunkedStart(40, 1L << 40), 1, tag);
            var noise = new byte[48];
            new Random(5).NextBytes(noise);
            noise[4] |= 1; // "chunked", announcing far more than it has: refused at once, nothing more is waited for
            BitConverter.TryWriteBytes(noise.AsSpan(8), 1L << 33);
            c.Send(noise, 1, tag);
            // The one-step paths of block vectors and class bodies check what they read too.
            c.Send(ForgedPayloads.IntArrayClaiming(1, 8), 1, tag);
            c.Send(ListWithAMistypedReference(c), 1, tag);
            c.Send(ListWithAMistypedReference(c, arrayIsItself: true), 1, tag);
            c.OSend(42, 1, tag);
            c.OSend(TransportSamples.Figure5(5), 1, tag);
        }
        else if (c.Rank == 1)
        {
            Expect(c, tag, "System.IO.FileStream");
            Expect(c, tag, "SafeFileHandle");
            Expect(c, tag, "System.Action");
            Expect(c, tag, "count");
            Expect(c, tag, "reference");
            Expect(c, tag, "Malformed");
            Expect(c, tag, "first message of a chunked payload");
            Expect(c, tag, "signature");
            Expect(c, tag, "follow the last item");
            Expect(c, tag, "is a System.Int32[] where a Scenarios.LinkedList is required");
            Expect(c, tag, "is a Scenarios.LinkedList where a System.Int32[] is required");
            Check.Throws<TransportException>(() => c.ORecv<string>(0, tag), "an int where a string is expected");
            Check.Null(TransportSamples.CheckFigure5(c.ORecv<LinkedList>(0, tag), 5), "the rank keeps working after rejections");
        }
        // Collectives: a refused object at the root fails every rank instead of hanging them; the next call works.
        Check.Throws<TransportException>(() => c.OBcast<object>(c.Rank == 0 ? new Plain() : null, 0), "OBcast of an unmarked type");
        Check.Throws<TransportException>(() => c.OScatterBlocks<object>(c.Rank == 0 ? [1, new Plain()] : null, 0), "OScatter of an unmarked type");
        Check.Throws<TransportException>(() => c.OAllgather<object>(c.Rank == 1 ? [new Plain()] : [1]), "OAllgather with one bad block");
        Check.Equal("fine", c.OBcast(c.Rank == 0 ? "fine" : null, 0), "OBcast after the failures");
        Check.Equal(c.Size, c.OAllgather(new[] { c.Rank }).Length, "OAllgather after the failures");
    }

    /// <summary>
    /// The payload of a one-node LinkedList (an OSend to self, received as bytes) whose next
    /// field is made to refer to the node's own int[] (object 2), or (<paramref name="arrayIsItself"/>)
    /// its array field to the node itself (object 1): each checked against the field's type.
    /// </summary>
    private static byte[] ListWithAMistypedReference(Communicator c, bool arrayIsItself = false)
    {
        const int selfTag = 77;
        using ObjectRequest send = c.OISend(new LinkedList { array = [1, 2] }, c.Rank, selfTag);
        Message m = c.MProbe(c.Rank, selfTag);
        var bytes = new byte[m.Status.GetCount<byte>()];
        m.Recv(bytes);
        send.Wait();
        // header (24 bytes, type-table bytes at 16), the table, the object count, object 1's
        // type entry, then its body: the ids of array (2) and next (0), in field order.
        int body = 24 + BitConverter.ToInt32(bytes, 16) + 4 + 4;
        Check.Equal(2, BitConverter.ToInt32(bytes, body), "the list's array is object 2");
        if (arrayIsItself)
            BitConverter.TryWriteBytes(bytes.AsSpan(body), 1);
        else
            BitConverter.TryWriteBytes(bytes.AsSpan(body + 4), 2);
        return bytes;
    }

    private static void Expect(Communicator c, int tag, string inMessage)
    {
        try
        {
            c.ORecv(0, tag);
            Check.True(false, $"payload expected to be refused ({inMessage}) was accepted");
        }
        catch (TransportException e)
        {
            Check.True(e.Message.Contains(inMessage, StringComparison.Ordinal), $"refusal names '{inMessage}': {e.Message}");
        }
    }

    private static void Nonblocking(Communicator c)
    {
        if (c.Rank == 0)
        {
            var list = TransportSamples.Figure5(50);
            ObjectRequest s1 = c.OISend(list, 1, 1);
            list.value = -1; // serialized at posting: the change does not travel
            ObjectRequest s2 = c.OISend(TransportSamples.Ring(10), 1, 2);
            c.OISend("dropped request still delivered", 1, 3).Dispose();
            s2.Wait();
            s1.Wait();
            Check.True(s1.IsCompleted && s2.Test(out _), "sends complete");
            var back = c.OIRecv<int[]>(1, 4);
            Check.Sequence<int>([1, 2, 3], back.Result, "reply");
            Check.True(back.IsCompleted, "reply completed");
        }
        else if (c.Rank == 1)
        {
            ObjectRequest<DNode> ring = c.OIRecv<DNode>(0, 2);
            ObjectRequest<LinkedList> list = c.OIRecv<LinkedList>(0, 1);
            var text = c.OIRecv<string>(Mpi.AnySource, 3);
            Status st;
            while (!list.Test(out st))
            {
            }
            Check.Equal(1, st.Tag, "list status tag");
            Check.Null(TransportSamples.CheckFigure5(list.Result, 50), "OIRecv list (the change after OISend did not travel)");
            Check.Null(TransportSamples.CheckRing(ring.Result, 10), "OIRecv ring");
            Check.Equal("dropped request still delivered", text.Result, "dropped OISend");
            var wrong = c.OIRecv<string>(0, 9);
            c.OISend(new[] { 1, 2, 3 }, 0, 4).Wait();
            wrong.Dispose(); // never matched: nothing was received
        }
    }

    /// <summary>Run with MOTOR_OBJECT_CHUNK_BYTES=256: every payload here takes several messages or rounds.</summary>
    private static void Chunked(Communicator c)
    {
        int p = c.Size, r = c.Rank;
        Check.Equal("256", Environment.GetEnvironmentVariable("MOTOR_OBJECT_CHUNK_BYTES"), "run with 256-byte chunks");
        if (r == 0)
        {
            c.OSend(TransportSamples.Figure5(400), 1, 1);
            c.OISend(TransportSamples.Ring(300), 1, 2).Wait();
        }
        else if (r == 1)
        {
            Check.Null(TransportSamples.CheckFigure5(c.ORecv<LinkedList>(0, 1, out Status st), 400), "chunked OSend");
            Check.True(st.ByteCount > 4096, $"payload of {st.ByteCount} bytes");
            Check.Null(TransportSamples.CheckRing(c.OIRecv<DNode>(0, 2).Result, 300), "chunked OISend");
        }
        LinkedList? bcast = c.OBcast(r == p - 1 ? TransportSamples.Figure5(200) : null, p - 1);
        if (r != p - 1)
            Check.Null(TransportSamples.CheckFigure5(bcast, 200), "chunked OBcast");
        int n = 100 * p + 1;
        string[]? all = r == 0 ? [.. Enumerable.Range(0, n).Select(i => $"string number {i}")] : null;
        string[] block = c.OScatterBlocks(all, 0)!;
        int first = r * (n / p) + Math.Min(r, n % p);
        Check.Sequence<string>([.. Enumerable.Range(first, n / p + (r < n % p ? 1 : 0)).Select(i => $"string number {i}")], block, "chunked OScatter");
        string[]? gathered = c.OGather(block, 0);
        if (r == 0)
            Check.Sequence<string>(all!, gathered, "chunked OGather");
        LinkedList[] lists = c.OAllgather(new[] { TransportSamples.Figure5(40 * (r + 1)) });
        for (int q = 0; q < p; q++)
            Check.Null(TransportSamples.CheckFigure5(lists[q], 40 * (q + 1)), $"chunked OAllgather block {q}");
    }

    private static void BadArgs(Communicator c)
    {
        int[] a = [1, 2, 3];
        Check.Throws<ArgumentOutOfRangeException>(() => c.OSend(a, c.Size, 0), "dest = Size");
        Check.Throws<ArgumentOutOfRangeException>(() => c.OSend(a, -5, 0), "negative dest");
        Check.Throws<ArgumentOutOfRangeException>(() => c.OSend(a, 0, -1), "negative tag");
        Check.Throws<ArgumentOutOfRangeException>(() => c.OSend(a, 0, Mpi.AnyTag), "AnyTag on a send");
        Check.Throws<ArgumentOutOfRangeException>(() => c.OSend(a, 2, 2, 0, 0), "offset + count past the end");
        Check.Throws<ArgumentOutOfRangeException>(() => c.OSend(a, -1, 1, 0, 0), "negative offset");
        Check.Throws<ArgumentOutOfRangeException>(() => c.OSend(a, 0, -1, 0, 0), "negative count");
        Check.Throws<ArgumentNullException>(() => c.OSend(null!, 0, 1, 0, 0), "null array");
        Check.Throws<ArgumentException>(() => c.OSend(new int[2, 2], 0, 1, 0, 0), "multi-dimensional array with offset and count");
        Check.Throws<ArgumentOutOfRangeException>(() => c.ORecv(c.Size + 1, 0), "source out of range");
        Check.Throws<ArgumentOutOfRangeException>(() => c.ORecv(0, -7), "negative receive tag");
        Check.Throws<ArgumentOutOfRangeException>(() => c.OISend(a, c.Size, 0), "OISend dest");
        Check.Throws<ArgumentOutOfRangeException>(() => c.OIRecv<int[]>(0, -2), "OIRecv tag");
        Check.Throws<ArgumentOutOfRangeException>(() => c.OBcast(a, c.Size), "OBcast root");
        Check.Throws<ArgumentOutOfRangeException>(() => c.OScatterBlocks(a, -1), "OScatter root");
        Check.Throws<ArgumentOutOfRangeException>(() => c.OGather(a, c.Size), "OGather root");
        Check.Throws<ArgumentNullException>(() => c.OGather<int>(null!, 0), "OGather null block");
        Check.Throws<ArgumentNullException>(() => c.OAllgather<int>(null!), "OAllgather null block");
        if (c.Rank == 0)
            Check.Throws<ArgumentNullException>(() => c.OScatterBlocks<int>(null, 0), "OScatter null array at the root");
        Communicator d = c.Dup();
        d.Dispose();
        Check.Throws<ObjectDisposedException>(() => d.OSend(a, 0, 0), "OSend on a disposed communicator");
        Check.Throws<ObjectDisposedException>(() => d.ORecv(0, 0), "ORecv on a disposed communicator");
        Check.Throws<ObjectDisposedException>(() => d.OBcast(a, 0), "OBcast on a disposed communicator");
        // Nothing was sent by any of the above: this exchange sees only its own message.
        if (c.Rank == 0)
            c.OSend("only message", 1, 0);
        else if (c.Rank == 1)
            Check.Equal("only message", c.ORecv<string>(Mpi.AnySource, Mpi.AnyTag), "no stray message");
    }
}
