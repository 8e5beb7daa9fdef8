using System.IO;
using System.MP;
using System.Runtime.InteropServices;
using static Scenarios.Heap;

namespace Scenarios;

/// <summary>
/// Parallel I/O (MpiFile.cs, Info.cs): files written collectively by MPI-IO and read back
/// byte-exactly with plain .NET file APIs, files written by .NET read by MPI-IO, interleaved
/// views, both file pointers, nonblocking accesses while the GC moves everything else, hints,
/// and every failure mode (argument errors before MPI, MPI's own errors with their class).
/// Each job works in a fresh temporary directory that rank 0 removes.  Two ranks (any number works).
/// </summary>
internal static class Files
{
    internal static void Register(Dictionary<Scenario, Action<Communicator>> s)
    {
        s[Scenario.FilesRoundTrip] = c => InTempDirectory(c, RoundTrip);
        s[Scenario.FilesNonblocking] = c => InTempDirectory(c, Nonblocking);
        s[Scenario.FilesErrors] = c => InTempDirectory(c, Errors);
        s[Scenario.FilesOffsetUnits] = c => InTempDirectory(c, OffsetUnits);
        s[Scenario.FilesSubarrayViews] = c => InTempDirectory(c, SubarrayViews);
        s[Scenario.FilesInBackground] = c => InTempDirectory(c, InBackground);
    }

    /// <summary>Runs body with a directory every rank sees; rank 0 makes it and removes it.</summary>
    private static void InTempDirectory(Communicator c, Action<Communicator, string> body)
    {
        string? mine = c.Rank == 0 ? Directory.CreateTempSubdirectory("motor-mpiio-").FullName : null;
        string dir = c.OBcast(mine, 0)!;
        try
        {
            body(c, dir);
        }
        finally
        {
            c.Barrier();
            if (c.Rank == 0)
            {
                Directory.Delete(dir, recursive: true);
                Check.True(!Directory.Exists(dir), "temporary directory removed");
            }
        }
    }

    private static int Value(int rank, int i) => rank * 1_000_000 + i * 7 + 3;

    // Explicit offsets name their unit (FileOffset).  The line that overlapped when a long offset
    // counted bytes on a fresh file, WriteAtAll(rank * count, ints), written with Elements, puts
    // each rank's ints after rank * count ints; after SetView<int> the same call names the same
    // place; Bytes counts bytes either way; a position inside one of the view's elements is refused.
    private static void OffsetUnits(Communicator c, string dir)
    {
        int p = c.Size, r = c.Rank, next = (r + 1) % p;
        const int count = 5;
        string path = Path.Combine(dir, "units.bin");
        int[] Values(int rank) => Enumerable.Range(0, count).Select(i => Value(rank, i)).ToArray();
        using (var f = MpiFile.Open(c, path, MpiFileMode.ReadWrite | MpiFileMode.Create))
        {
            Check.Equal(1, f.ElementSize, "a fresh file's view is bytes");
            f.WriteAtAll(FileOffset.Elements((long)r * count), Values(r));
            f.Sync();
            c.Barrier();
            int[] whole = MemoryMarshal.Cast<byte, int>(File.ReadAllBytes(path)).ToArray();
            Check.Sequence<int>(Enumerable.Range(0, p).SelectMany(Values).ToArray(), whole,
                                "fresh file: Elements(rank * count) of ints are disjoint blocks, one after another");
            c.Barrier();

            int[] back = new int[count];
            f.ReadAtAll(FileOffset.Bytes((long)next * count * sizeof(int)), back);
            Check.Sequence<int>(Values(next), back, "fresh file: Bytes counts bytes");
            f.SetView<int>();
            Array.Clear(back);
            f.ReadAtAll(FileOffset.Elements((long)next * count), back);
            Check.Sequence<int>(Values(next), back, "after SetView<int>: the same Elements offset names the same place");
            Array.Clear(back);
            f.ReadAtAll(FileOffset.Bytes((long)next * count * sizeof(int)), back);
            Check.Sequence<int>(Values(next), back, "after SetView<int>: the same Bytes offset names the same place");
            byte[] raw = new byte[sizeof(int)];
            f.ReadAt(FileOffset.Elements(((long)next * count + 1) * sizeof(int)), raw);
            Check.Equal(Value(next, 1), BitConverter.ToInt32(raw), "Elements counts the buffer's elements: bytes for a byte[]");

            ArgumentException inside = Check.Throws<ArgumentException>(() => f.ReadAt(FileOffset.Bytes(2), new int[1]),
                                                                      "a byte offset inside one of the view's ints")!;
            Check.True(inside.Message.Contains("2 bytes") && inside.Message.Contains("4-byte"), $"the offset and the element size named: {inside.Message}");
            Check.Throws<ArgumentException>(() => f.ReadAt(FileOffset.Elements(3), new byte[4]), "three bytes: inside an int of the view");
            Check.Throws<ArgumentException>(() => f.IReadAt(FileOffset.Elements(1), new short[2]), "nonblocking: one short is half an int");
            f.SetView<long>();
            Check.Throws<ArgumentException>(() => f.WriteAt(FileOffset.Elements(1), new int[2]), "one int is half a long of the view");
            Check.Throws<ArgumentOutOfRangeException>(() => f.ReadAt(FileOffset.Elements(long.MaxValue / 2), new int[2]),
                                                      "an element offset whose bytes overflow");
            long[] pair = new long[2];
            f.ReadAt(FileOffset.Elements(1), pair, 1, 1);
            Check.Equal((uint)Value(0, 2) | ((long)Value(0, 3) << 32), pair[1], "after SetView<long>: Elements(1) of a long[] is the file's second long");
        }
        Check.Throws<ArgumentOutOfRangeException>(() => FileOffset.Elements(-1), "a negative element offset");
        Check.Throws<ArgumentOutOfRangeException>(() => FileOffset.Bytes(-8), "a negative byte offset");
        Check.True(FileOffset.Elements(0) == FileOffset.Bytes(0) && FileOffset.Zero == FileOffset.Elements(0), "zero is the start in either unit");
        Check.True(FileOffset.Elements(3) != FileOffset.Bytes(3), "three elements and three bytes differ");
        Check.Equal("12 bytes", FileOffset.Bytes(12).ToString(), "ToString names the unit");
        Check.Equal("3 elements", FileOffset.Elements(3).ToString(), "ToString names the unit");
    }

    // Subarray views (MPI_Type_create_subarray): a 4 × 3 × 5 array of ints (C order) split along
    // its last dimension, each rank's block written by one collective call from a packed buffer;
    // .NET reads the whole file back as the array in order.  Then each rank reads the other's
    // block through a view of it, an element offset inside a block names that block's element,
    // and a displacement puts the array after a header.  Any rank count: the last dimension is
    // split in p nearly equal parts (p <= 5).
    private static void SubarrayViews(Communicator c, string dir)
    {
        int p = c.Size, r = c.Rank;
        const int Z = 4, Y = 3, X = 5;
        Check.True(p <= X, "at most 5 ranks: one column of x each");
        (int Start, int Width) Part(int q) => (q * X / p, (q + 1) * X / p - q * X / p);
        int[] Block(int q, int bias)
        {
            (int x0, int w) = Part(q);
            var b = new List<int>();
            for (int z = 0; z < Z; z++)
                for (int y = 0; y < Y; y++)
                    for (int x = x0; x < x0 + w; x++)
                        b.Add(bias + (z * Y + y) * X + x);
            return [.. b];
        }
        string path = Path.Combine(dir, "subarray.bin");
        (int start, int width) = Part(r);
        using (var f = MpiFile.Open(c, path, MpiFileMode.ReadWrite | MpiFileMode.Create))
        {
            f.SetView<int>(0, sizes: [Z, Y, X], subsizes: [Z, Y, width], starts: [0, 0, start]);
            Check.Equal(sizeof(int), f.ElementSize, "a subarray view's element size");
            Status st = f.WriteAtAll(FileOffset.Zero, Block(r, 0));
            Check.Equal(Z * Y * width, st.GetCount<int>(), "one collective write moved the whole block");
            f.Sync();
            c.Barrier();
            int[] whole = MemoryMarshal.Cast<byte, int>(File.ReadAllBytes(path)).ToArray();
            Check.Sequence<int>(Enumerable.Range(0, Z * Y * X).ToArray(), whole, "the blocks tile the array in C order");
            c.Barrier();

            int other = (r + 1) % p;
            (int os, int ow) = Part(other);
            f.SetView<int>(0, [Z, Y, X], [Z, Y, ow], [0, 0, os]);
            int[] theirs = new int[Z * Y * ow];
            f.ReadAtAll(FileOffset.Zero, theirs);
            Check.Sequence<int>(Block(other, 0), theirs, "another rank's block read through a view of it");
            int[] last = new int[1];
            f.ReadAt(FileOffset.Elements(Z * Y * ow - 1), last);
            Check.Equal(((Z - 1) * Y + Y - 1) * X + os + ow - 1, last[0], "an element offset counts the block's elements");
            f.ReadAt(FileOffset.Bytes(sizeof(int) * (long)ow), last);
            Check.Equal(1 * X + os, last[0], "a byte offset counts the block's bytes: the first of its second row");
        }
        c.Barrier();
        // After a 16-byte header: the displacement moves the whole array.
        string withHeader = Path.Combine(dir, "subarray-header.bin");
        using (var f = MpiFile.Open(c, withHeader, MpiFileMode.WriteOnly | MpiFileMode.Create))
        {
            if (r == 0)
                f.WriteAt(FileOffset.Zero, new long[] { 0x4d4f544f52, Z * Y * X });
            f.SetView<int>(16, [Z, Y, X], [Z, Y, width], [0, 0, start]);
            f.WriteAtAll(FileOffset.Zero, Block(r, 100));
            f.Sync();
        }
        c.Barrier();
        byte[] bytes = File.ReadAllBytes(withHeader);
        Check.Equal(0x4d4f544f52L, BitConverter.ToInt64(bytes, 0), "the header before the array");
        Check.Sequence<int>(Enumerable.Range(100, Z * Y * X).ToArray(), MemoryMarshal.Cast<byte, int>(bytes.AsSpan(16)).ToArray(),
                            "the array after the displacement");
        c.Barrier();

        // Misuse, refused before MPI (the view stays as it was).
        using (var f = MpiFile.Open(c, path, MpiFileMode.ReadOnly))
        {
            Check.ThrowsNaming<ArgumentException>("sizes", () => f.SetView<int>(0, [], [], []), "no dimensions");
            Check.ThrowsNaming<ArgumentException>("sizes", () => f.SetView<int>(0, new int[33], new int[33], new int[33]), "33 dimensions");
            Check.ThrowsNaming<ArgumentException>("subsizes", () => f.SetView<int>(0, [4, 3], [4], [0, 0]), "subsizes of another length");
            Check.ThrowsNaming<ArgumentException>("starts", () => f.SetView<int>(0, [4, 3], [4, 3], [0]), "starts of another length");
            Check.ThrowsNaming<ArgumentOutOfRangeException>("sizes", () => f.SetView<int>(0, [4, 0], [1, 1], [0, 0]), "an empty dimension");
            Check.ThrowsNaming<ArgumentOutOfRangeException>("subsizes", () => f.SetView<int>(0, [4, 3], [0, 1], [0, 0]), "an empty block");
            Check.ThrowsNaming<ArgumentOutOfRangeException>("starts", () => f.SetView<int>(0, [4, 3], [2, 2], [3, 0]), "a block past the end");
            Check.ThrowsNaming<ArgumentOutOfRangeException>("starts", () => f.SetView<int>(0, [4, 3], [2, 2], [0, -1]), "a negative start");
            Check.ThrowsNaming<ArgumentOutOfRangeException>("displacement", () => f.SetView<int>(-4, [4], [1], [0]), "a negative displacement");
            Check.Equal(1, f.ElementSize, "a refused view leaves the file's view as it was");
            int[] first = new int[2];
            f.ReadAt(FileOffset.Elements(3), first);
            Check.Sequence<int>([3, 4], first, "reads still go through the old view");
        }
    }

    // At thread level Multiple IWriteAt and IReadAt return before their access is done: it runs
    // on a thread of its own.  Shown without timing: in atomic mode MPI locks the byte range of
    // each write (fcntl), and rank 1 holds a lock on that range until rank 0 has tested the
    // request after IWriteAt returned, so the write cannot be done then; it completes once the
    // lock goes.  Reads run the same way, with a compacting GC while they are in flight, and an
    // access that fails in the file system fails its request (MPI's own nonblocking accesses
    // never complete in MPICH 4.0 and crash Open MPI 4.1 there).
    private static void InBackground(Communicator c, string dir)
    {
        Check.Equal(ThreadLevel.Multiple, Mpi.ThreadLevel, "the job runs at Multiple (the test sets MOTOR_THREAD_LEVEL)");
        int r = c.Rank;
        const int n = 4096;
        string path = Path.Combine(dir, "background.bin");
        int[] data = Enumerable.Range(0, n).Select(i => Value(7, i)).ToArray();
        using (var f = MpiFile.Open(c, path, MpiFileMode.ReadWrite | MpiFileMode.Create))
        {
            f.SetView<int>();
            f.Atomicity = true;
            using (FileStream? holder = r == 1 ? new FileStream(path, FileMode.Open, FileAccess.ReadWrite, FileShare.ReadWrite) : null)
            {
                if (!OperatingSystem.IsMacOS()) // byte-range locks (fcntl); the suite runs on Linux
                    holder?.Lock(0, n * sizeof(int));
                c.Barrier();
                if (r == 0)
                {
                    Request w = f.IWriteAt(FileOffset.Zero, data);
                    bool doneEarly = w.Test(out _);
                    c.Send([doneEarly ? 1 : 0], 1, 71);
                    Check.True(!doneEarly, "IWriteAt returned with its write still waiting for rank 1's lock");
                    Check.Equal(n, w.Wait().GetCount<int>(), "the write completed once the lock went");
                }
                else
                {
                    c.Recv(new int[1], 0, 71);
                    Check.Equal(0L, new FileInfo(path).Length, "nothing written while the lock was held");
                    if (!OperatingSystem.IsMacOS())
                        holder!.Unlock(0, n * sizeof(int));
                }
            }
            c.Barrier();
            f.Atomicity = false;
            var back = new int[4][];
            var reads = new Request[back.Length];
            for (int k = 0; k < back.Length; k++)
            {
                back[k] = new int[n / back.Length];
                reads[k] = f.IReadAt(FileOffset.Elements((long)k * back[k].Length), back[k]);
            }
            CompactAll();
            Request.WaitAll(reads);
            Check.Sequence<int>(data, back.SelectMany(b => b).ToArray(), "reads in the background, a compacting GC while in flight");
        }
        using (var full = MpiFile.Open(Communicator.Self, "/dev/full", MpiFileMode.WriteOnly))
        {
            Request w = full.IWriteAt(FileOffset.Zero, new long[32]);
            ExpectMpi(() => w.Wait(), "MPI_", "MPI_ERR_IO", "a background write to a full device fails its request");
        }
        bool openMpi = Mpi.LibraryVersion.StartsWith("Open MPI", StringComparison.Ordinal);
        using (var mem = MpiFile.Open(Communicator.Self, "/proc/self/mem", MpiFileMode.ReadOnly))
        {
            Request q = mem.IReadAt(FileOffset.Zero, new byte[64]);
            if (openMpi) // its blocking read reports EIO as 0 bytes read
                Check.Equal(0, q.Wait().GetCount<byte>(), "Open MPI: a failed background read completes, 0 bytes read");
            else
                ExpectMpi(() => q.Wait(), "MPI_", "MPI_ERR_IO", "a background read that fails (EIO) fails its request");
        }
        Check.Equal(0L, Mpi.GetStatistics().ActiveRequests, "no request left behind");
        Check.Equal(2 * c.Size, c.Allreduce(2, Op.Sum), "the ranks go on");
    }

    private static void RoundTrip(Communicator c, string dir)
    {
        int p = c.Size, r = c.Rank;

        // 1. Contiguous blocks by WriteAtAll; .NET reads the whole file byte for byte.
        const int n = 1000;
        string blocks = Path.Combine(dir, "blocks.bin");
        var mine = new int[n];
        for (int i = 0; i < n; i++)
            mine[i] = Value(r, i);
        using (var f = MpiFile.Open(c, blocks, MpiFileMode.WriteOnly | MpiFileMode.Create))
        {
            f.SetView<int>();
            Check.Equal(sizeof(int), f.ElementSize, "element size after SetView<int>");
            Status st = f.WriteAtAll(FileOffset.Elements((long)r * n), mine);
            Check.Equal(n, st.GetCount<int>(), "WriteAtAll status counts the elements written");
            f.Sync(); // sync-barrier: every rank's writes are in the file (MPI-4.0 14.6.1)
            c.Barrier();
            Check.Equal((long)p * n * sizeof(int), f.GetSize(), "GetSize after the collective write");
        }
        c.Barrier();
        if (r == 0)
        {
            var expected = new int[p * n];
            for (int q = 0; q < p; q++)
                for (int i = 0; i < n; i++)
                    expected[q * n + i] = Value(q, i);
            Check.Sequence<byte>(MemoryMarshal.AsBytes<int>(expected), File.ReadAllBytes(blocks), "MPI-IO blocks read by File.ReadAllBytes");
        }

        // 2. Interleaved view: rank r's consecutive doubles fill every p-th block of b.
        const int b = 16, rounds = 40;
        string interleaved = Path.Combine(dir, "interleaved.bin");
        var data = new double[b * rounds];
        for (int i = 0; i < data.Length; i++)
            data[i] = r + i / 1024.0;
        using (var f = MpiFile.Open(c, interleaved, MpiFileMode.ReadWrite | MpiFileMode.Create))
        {
            f.SetView<double>((long)r * b * sizeof(double), b, p * b);
            f.WriteAll(data);
            Check.Equal((long)data.Length, f.Position, "the individual pointer advanced over this rank's elements");
            var back = new double[data.Length];
            Status st = f.ReadAtAll(FileOffset.Zero, back);
            Check.Equal(data.Length, st.GetCount<double>(), "ReadAtAll count through the view");
            Check.Sequence<double>(data, back, "interleaved data read back through the same view");
            f.Seek(b, SeekOrigin.Begin); // this rank's second block
            var second = new double[b];
            f.Read(second.AsSpan());
            Check.Sequence<double>(data.AsSpan(b, b), second, "Seek then Read in the view");
            Check.Equal((long)2 * b, f.Position, "Position after Seek and Read");
        }
        c.Barrier();
        if (r == 0)
        {
            byte[] bytes = File.ReadAllBytes(interleaved);
            Check.Equal((long)p * data.Length * sizeof(double), bytes.LongLength, "interleaved file size");
            var all = MemoryMarshal.Cast<byte, double>(bytes);
            int bad = 0;
            for (int k = 0; k < all.Length; k++)
            {
                int block = k / b, owner = block % p, local = (block / p) * b + k % b;
                if (all[k] != owner + local / 1024.0)
                    bad++;
            }
            Check.Equal(0, bad, "every p-th block belongs to its rank, in order");
        }

        // 3. A file written by .NET, read by MPI-IO at offsets, by pointer and by shared pointer.
        string dotnet = Path.Combine(dir, "dotnet.bin");
        var source = new long[p * 100];
        for (int i = 0; i < source.Length; i++)
            source[i] = (long)i * i - 5;
        if (r == 0)
            File.WriteAllBytes(dotnet, MemoryMarshal.AsBytes<long>(source).ToArray());
        c.Barrier();
        using (var f = MpiFile.Open(c, dotnet, MpiFileMode.ReadOnly))
        {
            Check.Equal(MpiFileMode.ReadOnly, f.Mode, "Mode");
            var part = new long[100];
            f.ReadAtAll(FileOffset.Bytes((long)r * 100 * sizeof(long)), part); // byte offsets before any view
            Check.Sequence<long>(source.AsSpan(r * 100, 100), part, "ReadAtAll of a .NET-written file (byte offsets)");
            f.SetView<long>();
            var slice = new long[10];
            f.ReadAt(FileOffset.Elements(3), slice, 2, 5);
            Check.Sequence<long>(source.AsSpan(3, 5), slice.AsSpan(2, 5), "ReadAt with buffer offset and count (element offsets)");
            Check.Equal(0L, slice[0] | slice[1] | slice[7], "ReadAt wrote nothing outside its slice");
            var tail = new long[10];
            Status st = f.ReadAt(FileOffset.Elements(source.Length - 4), tail);
            Check.Equal(4, st.GetCount<long>(), "a read past the end of the file returns what is there");
            Check.Sequence<long>(source.AsSpan(source.Length - 4), tail.AsSpan(0, 4), "the tail");
            var ordered = new long[r + 1];
            f.ReadOrdered(ordered);
            int start = r * (r + 1) / 2; // ranks before r read 1, 2, ..., r elements
            Check.Sequence<long>(source.AsSpan(start, r + 1), ordered, "ReadOrdered: rank order");
            f.SeekShared(0);
            c.Barrier(); // no rank moves the shared pointer while another reads it
            Check.Equal(0L, f.SharedPosition, "SeekShared(0)");
            c.Barrier();
            Check.Equal(source.LongLength * sizeof(long), f.GetSize(), "GetSize of a .NET-written file");
        }

        // 4. Shared pointer: ordered writes land in rank order, shared writes each land once.
        string shared = Path.Combine(dir, "shared.bin");
        using (var info = new Info())
        {
            info["cb_nodes"] = "1";
            info["striping_unit"] = "65536";
            Check.Equal("1", info["cb_nodes"], "Info get returns what was set");
            Check.True(info["no_such_hint"] is null, "Info get of an unset key is null");
            using var f = MpiFile.Open(c, shared, MpiFileMode.WriteOnly | MpiFileMode.Create | MpiFileMode.UniqueOpen, info);
            f.SetView<int>();
            var rec = new int[r + 1];
            Array.Fill(rec, 100 + r);
            f.WriteOrdered(rec);
            c.Barrier();
            f.WriteShared(new[] { 900 + r, 901 + r }.AsSpan());
            c.Barrier();
            Check.Equal((long)p * (p + 1) / 2 + 2 * p, f.SharedPosition, "shared pointer after ordered and shared writes");
        }
        c.Barrier();
        if (r == 0)
        {
            var ints = MemoryMarshal.Cast<byte, int>(File.ReadAllBytes(shared)).ToArray();
            var expected = new List<int>();
            for (int q = 0; q < p; q++)
                expected.AddRange(Enumerable.Repeat(100 + q, q + 1));
            Check.Sequence<int>(expected.ToArray(), ints.AsSpan(0, expected.Count), "WriteOrdered: rank 0's data first, then rank 1's");
            var records = new List<(int, int)>();
            for (int k = expected.Count; k + 1 < ints.Length; k += 2)
                records.Add((ints[k], ints[k + 1]));
            Check.Equal(p, records.Count, "one record per WriteShared");
            Check.True(Enumerable.Range(0, p).All(q => records.Contains((900 + q, 901 + q))), "every rank's shared write is there, whole");
        }

        // 5. Size, preallocation, atomicity, append and delete-on-close.
        string sized = Path.Combine(dir, "sized.bin");
        using (var f = MpiFile.Open(c, sized, MpiFileMode.ReadWrite | MpiFileMode.Create | MpiFileMode.DeleteOnClose))
        {
            f.Preallocate(4096);
            Check.True(f.GetSize() >= 4096, $"Preallocate(4096) grows the file ({f.GetSize()})");
            // Collective calls need not synchronize (Open MPI's SetSize does not): without the
            // barrier one rank's SetSize(100) could come before the other's GetSize above.
            c.Barrier();
            f.SetSize(100);
            Check.Equal(100L, f.GetSize(), "SetSize truncates");
            c.Barrier();
            f.Atomicity = true;
            Check.True(f.Atomicity, "Atomicity set");
            f.Atomicity = false;
            Check.True(!f.Atomicity, "Atomicity cleared");
            if (r == 0)
                f.WriteAt(FileOffset.Bytes(100), new byte[] { 1, 2, 3 });
            f.Sync();
            c.Barrier();
            Check.Equal(103L, f.GetSize(), "a write past the end extends the file");
        }
        c.Barrier();
        Check.True(!File.Exists(sized), "DeleteOnClose removed the file");
        using (var f = MpiFile.Open(c, blocks, MpiFileMode.WriteOnly | MpiFileMode.Append))
        {
            Check.Equal((long)p * n * sizeof(int), f.Position, "Append: the individual pointer starts at the end");
            f.SeekShared(0, SeekOrigin.End);
            c.Barrier();
            Check.Equal((long)p * n * sizeof(int), f.SharedPosition, "SeekShared to the end");
            c.Barrier();
            f.WriteOrdered(new[] { -r - 1 });
        }
        c.Barrier();
        if (r == 0)
        {
            var ints = MemoryMarshal.Cast<byte, int>(File.ReadAllBytes(blocks));
            Check.Equal(p * n + p, ints.Length, "Append added one int per rank");
            Check.Equal(-p, ints[^1], "the last rank's int is last");
            MpiFile.Delete(blocks);
            Check.True(!File.Exists(blocks), "MpiFile.Delete removed the file");
        }
    }

    // Nonblocking accesses while the GC compacts: each is made inside its post, with the array
    // fixed for that call (the GC may run during it), and what lands in the file must be exactly
    // what was in the arrays.
    private static void Nonblocking(Communicator c, string dir)
    {
        int p = c.Size, r = c.Rank;
        const int chunks = 64, len = 2048;
        string path = Path.Combine(dir, "nonblocking.bin");
        long handles = Mpi.GetStatistics().ArraysPinned;
        using (var f = MpiFile.Open(c, path, MpiFileMode.ReadWrite | MpiFileMode.Create))
        {
            f.SetView<int>();
            var arrays = new int[chunks][];
            var reqs = new Request[chunks];
            var garbage = new List<object>();
            for (int k = 0; k < chunks; k++)
            {
                arrays[k] = new int[len];
                for (int i = 0; i < len; i++)
                    arrays[k][i] = Value(r, k * len + i);
                long offset = ((long)k * p + r) * len;
                reqs[k] = k % 2 == 0 ? f.IWriteAt(FileOffset.Elements(offset), arrays[k]) : f.IWriteAt(FileOffset.Elements(offset), arrays[k], 0, len);
                garbage.Add(new byte[1000 + k]); // something to move around them
                if (k % 8 == 0)
                    CompactAll();
            }
            // Made inside the post (a failed nonblocking access never completes in MPICH 4.0 and
            // crashes Open MPI 4.1's MPI_Wait: scenario files-errors, DeviceFull), so complete at once,
            // the arrays needing no hold (none registered, no GCHandle).
            Check.Equal(0L, Mpi.GetStatistics().OpenMpiRequests, "every IWriteAt complete when it returns (no MPI request open)");
            CompactAll();
            Status[] sts = Request.WaitAll(reqs);
            Check.True(sts.All(s => s.GetCount<int>() == len), "every IWriteAt wrote all its elements");
            Check.Equal(0L, Mpi.GetStatistics().PinnedHandles, "no pin is left after completion");
            Check.Equal(handles, Mpi.GetStatistics().ArraysPinned, "no GCHandle for accesses made inside their post");
            c.Barrier();

            // Read the other rank's chunks back nonblocking, with GCs in between.
            int other = (r + 1) % p;
            var back = new int[chunks][];
            for (int k = 0; k < chunks; k++)
            {
                back[k] = new int[len + 4];
                reqs[k] = f.IReadAt(FileOffset.Elements(((long)k * p + other) * len), back[k], 2, len);
                if (k % 8 == 0)
                    CompactAll();
            }
            Check.Equal(0L, Mpi.GetStatistics().OpenMpiRequests, "every IReadAt complete when it returns (no MPI request open)");
            int bad = 0;
            for (int k = 0; k < chunks; k++)
            {
                Status st = reqs[k].Wait();
                if (st.GetCount<int>() != len || back[k][0] != 0 || back[k][len + 3] != 0)
                    bad++;
                for (int i = 0; i < len; i++)
                    if (back[k][2 + i] != Value(other, k * len + i))
                        bad++;
            }
            Check.Equal(0, bad, "IReadAt read the other rank's chunks exactly, into their slices");
            GC.KeepAlive(garbage);

            // A request dropped without Wait completes and lets go of its array all the same.
            DropOne(f, r);
            for (int i = 0; i < 3 && Mpi.GetStatistics().OrphanedRequests > 0; i++)
            {
                GC.Collect();
                GC.WaitForPendingFinalizers();
                c.Barrier();
            }
        }
        c.Barrier();
        if (r == 0)
        {
            var ints = MemoryMarshal.Cast<byte, int>(File.ReadAllBytes(path));
            Check.True(ints.Length >= chunks * p * len, $"file holds every chunk ({ints.Length} ints)");
            int bad = 0;
            for (int k = 0; k < chunks; k++)
                for (int q = 0; q < p; q++)
                    for (int i = 0; i < len; i++)
                        if (ints[(k * p + q) * len + i] != Value(q, k * len + i))
                            bad++;
            Check.Equal(0, bad, "the nonblocking writes, read by File.ReadAllBytes");
        }
    }

    private static void DropOne(MpiFile f, int r) => _ = f.IReadAt(FileOffset.Elements(r), new int[16]);

    private static void Errors(Communicator c, string dir)
    {
        int r = c.Rank;
        string path = Path.Combine(dir, "errors.bin");
        string missing = Path.Combine(dir, "missing.bin");
        long mpiErrors = Mpi.GetStatistics().MpiErrors;

        // Refused before MPI: modes MPI calls erroneous, bad paths, bad arguments.
        Check.Throws<ArgumentException>(() => MpiFile.Open(c, path, MpiFileMode.ReadOnly | MpiFileMode.Create), "ReadOnly | Create");
        Check.Throws<ArgumentException>(() => MpiFile.Open(c, path, MpiFileMode.ReadOnly | MpiFileMode.Exclusive), "ReadOnly | Exclusive");
        Check.Throws<ArgumentException>(() => MpiFile.Open(c, path, MpiFileMode.ReadWrite | MpiFileMode.Sequential | MpiFileMode.Create), "ReadWrite | Sequential");
        Check.Throws<ArgumentException>(() => MpiFile.Open(c, path, MpiFileMode.ReadOnly | MpiFileMode.WriteOnly), "two access modes");
        Check.Throws<ArgumentException>(() => MpiFile.Open(c, path, MpiFileMode.Create), "no access mode");
        Check.Throws<ArgumentOutOfRangeException>(() => MpiFile.Open(c, path, (MpiFileMode)(1 << 12) | MpiFileMode.ReadOnly), "unknown mode bit");
        Check.Throws<ArgumentException>(() => MpiFile.Open(c, "", MpiFileMode.ReadOnly), "empty path");
        Check.Throws<ArgumentException>(() => MpiFile.Open(c, "a\0b", MpiFileMode.ReadOnly), "path with NUL");
        Check.Throws<ArgumentNullException>(() => MpiFile.Open(c, null!, MpiFileMode.ReadOnly), "null path");
        Check.Throws<ArgumentNullException>(() => MpiFile.Open(null!, path, MpiFileMode.ReadOnly), "null communicator");
        using (var info = new Info())
        {
            Check.Throws<ArgumentException>(() => info[""] = "x", "empty info key");
            Check.Throws<ArgumentNullException>(() => info["k"] = null, "null info value");
            Check.Throws<ArgumentException>(() => info[new string('k', 300)] = "x", "info key longer than MPI_MAX_INFO_KEY");
            Check.Throws<ArgumentException>(() => info["k"] = new string('v', 5000), "info value longer than MPI_MAX_INFO_VAL");
        }
        var disposedInfo = new Info();
        disposedInfo.Dispose();
        disposedInfo.Dispose(); // twice is fine
        Check.Throws<ObjectDisposedException>(() => _ = disposedInfo["k"], "disposed Info");
        Check.Throws<ObjectDisposedException>(() => MpiFile.Open(c, path, MpiFileMode.ReadOnly, disposedInfo), "open with a disposed Info");

        using (var f = MpiFile.Open(c, path, MpiFileMode.ReadWrite | MpiFileMode.Create))
        {
            var a = new int[8];
            Check.Throws<ArgumentOutOfRangeException>(() => f.WriteAt(FileOffset.Elements(-1), a), "negative offset");
            Check.Throws<ArgumentOutOfRangeException>(() => f.ReadAt(FileOffset.Zero, a, 4, 5), "count past the end of the array");
            Check.Throws<ArgumentOutOfRangeException>(() => f.ReadAt(FileOffset.Zero, a, -1, 2), "negative buffer offset");
            Check.Throws<ArgumentOutOfRangeException>(() => f.IWriteAt(FileOffset.Zero, a, 9, 0), "nonblocking: buffer offset past the end");
            Check.Throws<ArgumentOutOfRangeException>(() => f.IReadAt(FileOffset.Bytes(-2), a), "nonblocking: negative offset");
            Check.Throws<ArgumentNullException>(() => f.WriteAt(FileOffset.Zero, (int[])null!), "null array");
            Check.Throws<ArgumentOutOfRangeException>(() => f.SetView<int>(-4), "negative displacement");
            Check.Throws<ArgumentOutOfRangeException>(() => f.SetView<int>(0, 4, 3), "stride shorter than the block");
            Check.Throws<ArgumentOutOfRangeException>(() => f.SetView<int>(0, 0, 3), "empty block");
            Check.Throws<ArgumentOutOfRangeException>(() => f.SetSize(-1), "negative size");
            Check.Throws<ArgumentOutOfRangeException>(() => f.Preallocate(-1), "negative preallocation");
            Check.Throws<ArgumentOutOfRangeException>(() => f.Seek(-1), "seek before the beginning");
            f.SetView<long>();
            Check.Throws<ArgumentException>(() => f.WriteAt(FileOffset.Zero, new int[3]), "12 bytes are not whole 8-byte elements");
            Check.Throws<ArgumentException>(() => f.IReadAt(FileOffset.Zero, new byte[5]), "nonblocking: not whole elements");
            f.WriteAt(FileOffset.Elements(r * 4), new int[4]); // two longs' worth of ints is fine
            Check.Equal(8L, f.Position + 8, "Position untouched by explicit-offset writes");
        }
        c.Barrier();
        using (var ro = MpiFile.Open(c, path, MpiFileMode.ReadOnly))
        {
            Check.Throws<NotSupportedException>(() => ro.WriteAt(FileOffset.Zero, new byte[1]), "write to a file opened ReadOnly");
            Check.Throws<NotSupportedException>(() => ro.WriteShared(new byte[1]), "shared write to a file opened ReadOnly");
            Check.Throws<NotSupportedException>(() => ro.IWriteAt(FileOffset.Zero, new byte[1]), "nonblocking write to a file opened ReadOnly");
        }
        using (var wo = MpiFile.Open(c, path, MpiFileMode.WriteOnly))
        {
            Check.Throws<NotSupportedException>(() => wo.ReadAt(FileOffset.Zero, new byte[1]), "read of a file opened WriteOnly");
            Check.Throws<NotSupportedException>(() => wo.Read(new byte[1]), "pointer read of a file opened WriteOnly");
        }
        using (var seq = MpiFile.Open(c, path, MpiFileMode.WriteOnly | MpiFileMode.Sequential))
        {
            Check.Throws<NotSupportedException>(() => seq.WriteAt(FileOffset.Zero, new byte[1]), "explicit offset on a Sequential file");
            Check.Throws<NotSupportedException>(() => seq.Write(new byte[1]), "individual pointer on a Sequential file");
            Check.Throws<NotSupportedException>(() => seq.Seek(0), "Seek on a Sequential file");
        }
        var closed = MpiFile.Open(c, path, MpiFileMode.ReadOnly);
        closed.Close();
        closed.Dispose(); // closing twice is fine
        Check.True(closed.IsClosed, "IsClosed");
        Check.Throws<ObjectDisposedException>(() => closed.ReadAt(FileOffset.Zero, new byte[1]), "read after Close");
        Check.Throws<ObjectDisposedException>(() => closed.IReadAt(FileOffset.Zero, new byte[1]), "nonblocking read after Close");
        Check.Throws<ObjectDisposedException>(() => closed.GetSize(), "GetSize after Close");
        Check.Throws<ObjectDisposedException>(() => closed.SetView<int>(), "SetView after Close");
        Check.Throws<ObjectDisposedException>(() => _ = closed.Position, "Position after Close");
        Check.Equal(mpiErrors, Mpi.GetStatistics().MpiErrors, "none of the above reached MPI");

        // Raised inside MPI: the error class by name, MPI's string, the call.
        // A failed open names the path and, where the OS tells, why (MPI's own text says neither).
        MpiException? e = ExpectMpi(() => MpiFile.Open(c, missing, MpiFileMode.ReadOnly), "MPI_File_open", "MPI_ERR_NO_SUCH_FILE", "open of a missing file without Create");
        Check.True(e?.Message.StartsWith($"MPI_File_open: \"{missing}\": the file does not exist, and the mode has no Create; ", StringComparison.Ordinal) == true,
                   $"open of a missing file: the path and why first: {e?.Message}");
        ExpectMpi(() => MpiFile.Open(c, path, MpiFileMode.WriteOnly | MpiFileMode.Create | MpiFileMode.Exclusive), "MPI_File_open", "MPI_ERR_FILE_EXISTS", "Exclusive create of an existing file");
        string noDir = Path.Combine(dir, "no-dir"), inNoDir = Path.Combine(noDir, "x.bin");
        foreach (MpiFileMode mode in new[] { MpiFileMode.WriteOnly | MpiFileMode.Create, MpiFileMode.ReadWrite | MpiFileMode.Create, MpiFileMode.ReadOnly })
        {
            e = ExpectMpi(() => MpiFile.Open(c, inNoDir, mode), "MPI_File_open", "", $"{mode} in a missing directory");
            Check.True(e?.Message.StartsWith($"MPI_File_open: \"{inNoDir}\": the directory \"{noDir}\" does not exist; ", StringComparison.Ordinal) == true,
                       $"{mode} in a missing directory: the path and the missing directory first: {e?.Message}");
        }
        e = ExpectMpi(() => MpiFile.Open(c, "ufs:" + inNoDir, MpiFileMode.WriteOnly | MpiFileMode.Create), "MPI_File_open", "", "create in a missing directory, with ROMIO's prefix");
        Check.True(e?.Message.Contains($"the directory \"{noDir}\" does not exist", StringComparison.Ordinal) == true,
                   $"create in a missing directory, with ROMIO's prefix: the directory named: {e?.Message}");
        e = ExpectMpi(() => MpiFile.Open(c, Path.Combine(path, "x.bin"), MpiFileMode.WriteOnly | MpiFileMode.Create), "MPI_File_open", "", "create below a file");
        Check.True(e?.Message.Contains($"\"{path}\" is not a directory", StringComparison.Ordinal) == true,
                   $"create below a file: the file named as no directory: {e?.Message}");
        c.Barrier();
        if (r == 0)
            ExpectMpi(() => MpiFile.Delete(missing), "MPI_File_delete", "MPI_ERR_NO_SUCH_FILE", "delete of a missing file");
        Check.True(Mpi.GetStatistics().MpiErrors > mpiErrors, "those errors were MPI's");

        // The file is still usable after MPI errors on other opens.
        using (var f = MpiFile.Open(c, path, MpiFileMode.ReadOnly))
            Check.True(f.GetSize() >= 32, "the file opens after the errors");
        DeviceFull(c);
    }

    // Writes that fail inside the file system (ENOSPC, as on a full scratch file system or an
    // exceeded quota), on /dev/full: every write raises MpiException of class MPI_ERR_IO.
    // Before, Open MPI 4.1 returned success from the blocking writes with nothing written (the
    // data lost without a word), MPICH 4.0's nonblocking write never completed (Wait hung) and
    // Open MPI's crashed the process in MPI_Wait; the core now checks every byte of a write MPI
    // reports done and makes IWriteAt's write inside the post.
    private static void DeviceFull(Communicator c)
    {
        const string Full = "/dev/full";
        Check.True(File.Exists(Full), $"{Full} exists (the Linux device whose writes fail with ENOSPC)");
        long before = Mpi.GetStatistics().MpiErrors;
        var data = new long[32];
        Array.Fill(data, c.Rank + 1);
        using (var f = MpiFile.Open(c, Full, MpiFileMode.WriteOnly))
        {
            f.SetView<long>();
            ExpectMpi(() => f.WriteAt(FileOffset.Elements(c.Rank * 32), data), "MPI_File_write_at", "MPI_ERR_IO", "write to a full device");
            ExpectMpi(() => f.WriteAtAll(FileOffset.Elements(c.Rank * 32), data), "MPI_File_write_at_all", "MPI_ERR_IO", "collective write to a full device");
            ExpectMpi(() => f.Write(data), "MPI_File_write", "MPI_ERR_IO", "pointer write to a full device");
            ExpectMpi(() => f.WriteAll(data), "MPI_File_write_all", "MPI_ERR_IO", "collective pointer write to a full device");
            ExpectMpi(() => f.IWriteAt(FileOffset.Elements(c.Rank * 32), data).Wait(), "MPI_File_write_at", "MPI_ERR_IO", "nonblocking write to a full device");
            f.WriteAt(FileOffset.Zero, Array.Empty<long>()); // nothing to write: nothing lost
            Check.Equal(0L, Mpi.GetStatistics().ActiveRequests, "no request left by the refused nonblocking write");
        }
        Check.Equal(before + 5, Mpi.GetStatistics().MpiErrors, "each refused write counted once as an MPI error");

        // A read that fails in the file system (EIO: this process's memory at address 0). MPICH
        // reports MPI_ERR_IO; Open MPI 4.1 reports a read of 0 bytes, as at the end of a file.
        // Before, IReadAt's request never completed under MPICH and crashed Open MPI's Wait.
        bool openMpi = Mpi.LibraryVersion.StartsWith("Open MPI", StringComparison.Ordinal);
        using (var mem = MpiFile.Open(Communicator.Self, "/proc/self/mem", MpiFileMode.ReadOnly))
        {
            var into = new byte[64];
            if (openMpi)
                Check.Equal(0, mem.IReadAt(FileOffset.Zero, into).Wait().GetCount<byte>(), "Open MPI: a failed nonblocking read completes, 0 bytes read");
            else
                ExpectMpi(() => mem.IReadAt(FileOffset.Zero, into).Wait(), "MPI_File_read_at", "MPI_ERR_IO", "nonblocking read that fails (EIO)");
            Check.Equal(0L, Mpi.GetStatistics().ActiveRequests, "no request left by the failed read");
        }
        Check.Equal(2 * c.Size, c.Allreduce(2, Op.Sum), "the ranks go on after the failed writes and read");
    }

    private static MpiException? ExpectMpi(Action action, string call, string errorClass, string what)
    {
        try
        {
            action();
            Check.True(false, $"{what}: no exception, expected MpiException");
        }
        catch (MpiException e)
        {
            Check.True(e.ErrorClass != 0, $"{what}: carries MPI's error class ({e.ErrorClass}: {e.Message})");
            Check.True(e.Message.StartsWith(call, StringComparison.Ordinal), $"{what}: names {call} ({e.Message})");
            Check.True(errorClass.Length == 0 || e.Message.Contains(errorClass, StringComparison.Ordinal), $"{what}: names {errorClass} ({e.Message})");
            return e;
        }
        catch (Exception e)
        {
            Check.True(false, $"{what}: {e.GetType().Name} ({e.Message}), expected MpiException");
        }
        return null;
    }
}
