// PairedLatency: what Motor adds to a blocking ping-pong, measured where this machine's noise
// cannot hide it (issue 18 target 2, latency above 8 KiB).  One process per rank runs, for each
// size, blocks of osu_latency's loop through System.MP (Communicator.Send/Recv) and blocks of
// the same loop calling the same MPI library's MPI_Send/MPI_Recv directly (function pointers
// from Mpi.LibraryPath, no GC transition: C's own call), alternating A-B, B-A, on the same
// buffers.  Both ranks follow the same schedule, so no extra message decides it.  Each pair of
// neighbouring blocks ran within milliseconds of each other, on the same cores and pages, so
// their quotient is free of what moves separate runs apart (placement, clock, other tenants).
//
// usage: mpiexec -n 2 motor PairedLatency.dll [max_bytes=65536] [pairs=31] [iteration_scale=1] [min_bytes=0]
// Blocks are 1000 round trips up to 8 KiB, 200 up to 64 KiB, 50 up to 512 KiB and 10 above
// (times iteration_scale, at least 1).  Prints per size: the median half round trip of each
// path (µs), the median of the per-pair quotients System.MP / direct, and their quartiles.
using System.Globalization;
using System.MP;
using System.Runtime.InteropServices;

long max = args.Length > 0 ? long.Parse(args[0], CultureInfo.InvariantCulture) : 65536;
int pairs = args.Length > 1 ? int.Parse(args[1], CultureInfo.InvariantCulture) : 31;
double scale = args.Length > 2 ? double.Parse(args[2], CultureInfo.InvariantCulture) : 1.0;
long min = args.Length > 3 ? long.Parse(args[3], CultureInfo.InvariantCulture) : 0;
var world = Communicator.World;
if (world.Size != 2)
{
    Console.Error.WriteLine("PairedLatency runs on exactly 2 ranks (mpiexec -n 2 ...)");
    Mpi.Abort(1);
}
var direct = new DirectMpi(Mpi.LibraryPath, Mpi.LibraryVersion);
var send = new byte[Math.Max(max, 1)];
var recv = new byte[Math.Max(max, 1)];
Array.Fill(send, (byte)'a');
int rank = world.Rank;
var motor = new double[pairs];
var raw = new double[pairs];
var ratio = new double[pairs];

// Both paths' code is final before the first timed block (the JIT's later tiers, on a busy
// two-core machine, would land inside one block): a second of both first, rank 0 saying
// when it is over.
for (double t = Mpi.Wtime(); world.Bcast(rank == 0 && Mpi.Wtime() - t < 1.0 ? 1 : 0, 0) == 1;)
{
    Run(false, 0, 100);
    Run(true, 0, 100);
}

if (rank == 0)
    Console.WriteLine($"# paired blocks in one process ({pairs} pairs per size, {(Mpi.IsHosted ? "motor VM" : "library mode")}, {Mpi.LibraryVersion.Split('\n')[0].Trim()})\n" +
                      $"# {"size",-10} {"System.MP",10} {"direct",10} {"ratio",8} {"q1",8} {"q3",8}");
for (long n = min; n <= max; n = n == 0 ? 1 : n * 2)
{
    int count = (int)n;
    int iters = Math.Max(1, (int)((n <= 8192 ? 1000 : n <= 65536 ? 200 : n <= 524288 ? 50 : 10) * scale));
    Run(false, count, Math.Max(1, iters / 10)); // the size's first touch of its pages, both paths
    Run(true, count, Math.Max(1, iters / 10));
    for (int p = 0; p < pairs; p++)
    {
        bool motorFirst = (p & 1) == 0;
        double a = Run(!motorFirst, count, iters), b = Run(motorFirst, count, iters);
        motor[p] = motorFirst ? a : b;
        raw[p] = motorFirst ? b : a;
        ratio[p] = motor[p] / raw[p];
    }
    if (rank == 0)
    {
        if (count > 0 && (recv[0] != 'a' || recv[count - 1] != 'a'))
            throw new InvalidOperationException($"ping-pong data corrupted at {n} bytes");
        Array.Sort(motor);
        Array.Sort(raw);
        Array.Sort(ratio);
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"{n,-12} {Median(motor),10:F3} {Median(raw),10:F3} {Median(ratio),8:F4} {ratio[pairs / 4],8:F4} {ratio[pairs - 1 - pairs / 4],8:F4}"));
    }
}
Mpi.Shutdown();

// One block: iters round trips after a barrier; the half round trip in µs.
double Run(bool directPath, int count, int iters)
{
    world.Barrier();
    double t0 = Mpi.Wtime();
    if (directPath)
        direct.PingPong(send, recv, count, rank, iters);
    else
    {
        for (int i = 0; i < iters; i++)
        {
            if (rank == 0)
            {
                world.Send(send, 0, count, 1, 1);
                world.Recv(recv, 0, count, 1, 1);
            }
            else
            {
                world.Recv(recv, 0, count, 0, 1);
                world.Send(send, 0, count, 0, 1);
            }
        }
    }
    return (Mpi.Wtime() - t0) * 1e6 / (2.0 * iters);
}

static double Median(double[] sorted) =>
    sorted.Length % 2 == 1 ? sorted[sorted.Length / 2] : (sorted[sorted.Length / 2 - 1] + sorted[sorted.Length / 2]) / 2;

/// <summary>MPI_Send and MPI_Recv of the library System.MP runs on, called as C calls them.</summary>
internal sealed unsafe class DirectMpi
{
    private readonly delegate* unmanaged[SuppressGCTransition]<void*, int, nint, int, int, nint, int> _send;
    private readonly delegate* unmanaged[SuppressGCTransition]<void*, int, nint, int, int, nint, void*, int> _recv;
    private readonly nint _byte, _world;
    private readonly void* _statusIgnore;

    public DirectMpi(string path, string version)
    {
        nint lib = NativeLibrary.Load(path); // already loaded by the core: the same instance
        _send = (delegate* unmanaged[SuppressGCTransition]<void*, int, nint, int, int, nint, int>)NativeLibrary.GetExport(lib, "MPI_Send");
        _recv = (delegate* unmanaged[SuppressGCTransition]<void*, int, nint, int, int, nint, void*, int>)NativeLibrary.GetExport(lib, "MPI_Recv");
        if (version.Contains("Open MPI", StringComparison.Ordinal))
        {
            // Open MPI's handles are the addresses of its predefined objects; MPI_STATUS_IGNORE is NULL.
            _byte = NativeLibrary.GetExport(lib, "ompi_mpi_byte");
            _world = NativeLibrary.GetExport(lib, "ompi_mpi_comm_world");
            _statusIgnore = null;
        }
        else
        {
            // The MPICH ABI's constants (mpi.h): MPI_BYTE, MPI_COMM_WORLD, MPI_STATUS_IGNORE.
            _byte = 0x4c00010d;
            _world = 0x44000000;
            _statusIgnore = (void*)1;
        }
    }

    public void PingPong(byte[] send, byte[] recv, int count, int rank, int iters)
    {
        fixed (byte* s = send)
        fixed (byte* r = recv)
        {
            for (int i = 0; i < iters; i++)
            {
                if (rank == 0)
                {
                    Check(_send(s, count, _byte, 1, 1, _world));
                    Check(_recv(r, count, _byte, 1, 1, _world, _statusIgnore));
                }
                else
                {
                    Check(_recv(r, count, _byte, 0, 1, _world, _statusIgnore));
                    Check(_send(s, count, _byte, 0, 1, _world));
                }
            }
        }
    }

    private static void Check(int rc)
    {
        if (rc != 0)
            throw new InvalidOperationException($"MPI call failed directly: error {rc}");
    }
}
