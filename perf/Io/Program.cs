// Io: a collective write of one file and a collective read of it back over
// System.MP's MpiFile; the same measurements as perf/native/io.c
// (WriteAtAll of one contiguous block per rank then Sync, ReadAtAll; timed
// between barriers; bandwidth = whole file / time, best of reps).
//
// usage: mpiexec -n 2 motor Io.dll [total_bytes=67108864] [dir=/tmp] [reps=3]
// IO_BUFFER=array (default: an ordinary array, on the large object heap at these sizes),
// pinned (Mpi.AllocatePinned: the pinned object heap) or native (page-aligned
// NativeMemory): where the buffer lives, for the placement experiment of perf/README.
using System.Globalization;
using System.MP;

var world = Communicator.World;
int rank = world.Rank, size = world.Size;
long total = args.Length > 0 ? long.Parse(args[0], CultureInfo.InvariantCulture) : 64L << 20;
string dir = args.Length > 1 ? args[1] : "/tmp";
int reps = args.Length > 2 ? int.Parse(args[2], CultureInfo.InvariantCulture) : 3;
int block = checked((int)(total / size));
int pid = world.Bcast(Environment.ProcessId, 0);
string path = Path.Combine(dir, $"motor-io-cs-{pid}.bin");
string kind = Environment.GetEnvironmentVariable("IO_BUFFER") ?? "array";
if (kind is not ("array" or "pinned" or "native"))
    throw new ArgumentException($"IO_BUFFER={kind}: array, pinned or native");
byte[] arr = kind == "array" ? GC.AllocateUninitializedArray<byte>(block) : kind == "pinned" ? Mpi.AllocatePinned<byte>(block) : [];
Span<byte> buf;
unsafe { buf = kind == "native" ? new Span<byte>(System.Runtime.InteropServices.NativeMemory.AlignedAlloc((nuint)block, 4096), block) : arr; }
buf.Fill((byte)(rank + 1));
double bestWrite = 0, bestRead = 0;
for (int i = 0; i < reps; i++)
{
    double tw, tr;
    using (var f = MpiFile.Open(world, path, MpiFileMode.ReadWrite | MpiFileMode.Create))
    {
        world.Barrier();
        double t0 = Mpi.Wtime();
        f.WriteAtAll(FileOffset.Bytes((long)rank * block), (ReadOnlySpan<byte>)buf);
        f.Sync();
        world.Barrier();
        tw = Mpi.Wtime() - t0;
        t0 = Mpi.Wtime();
        f.ReadAtAll(FileOffset.Bytes((long)rank * block), buf);
        world.Barrier();
        tr = Mpi.Wtime() - t0;
    }
    if (rank == 0)
        MpiFile.Delete(path);
    if (buf[0] != rank + 1 || buf[^1] != rank + 1)
        throw new InvalidOperationException($"rank {rank} read back the wrong bytes");
    double mb = (double)block * size / 1e6;
    bestWrite = Math.Max(bestWrite, mb / tw);
    bestRead = Math.Max(bestRead, mb / tr);
}
if (rank == 0)
{
    long bytes = (long)block * size;
    Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"write_at_all {bytes} {bestWrite:F1}"));
    Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"read_at_all {bytes} {bestRead:F1}"));
}
