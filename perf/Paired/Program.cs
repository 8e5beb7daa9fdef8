// Paired: what Motor adds to a ping-pong or to osu_bw's windows, measured where this machine's
// noise cannot hide it.  One process per rank runs, for each size, blocks of
// the benchmark's loop through System.MP and blocks of the same loop calling the same MPI
// library's functions directly (function pointers from Mpi.LibraryPath, no GC transition: C's
// own call), one after another on the same buffers, the order rotating from one set of blocks to
// the next.  Both ranks follow the same schedule, so no extra message decides it.  Neighbouring
// blocks ran within milliseconds of each other, on the same cores and pages, so their quotient
// is free of what moves separate runs apart (placement, clock, other tenants).
//
//   mpiexec -n 2 motor Paired.dll latency   [max_bytes=65536] [sets=31] [iteration_scale=1] [min_bytes=0]
//   mpiexec -n 2 motor Paired.dll bandwidth [max_bytes=65536] [sets=31] [iteration_scale=1] [min_bytes=1]
//   mpiexec -n 2 motor Paired.dll rate      [max_bytes=65536] [sets=31] [iteration_scale=1] [min_bytes=1]
//   mpiexec -n 2 motor --thread-level multiple Paired.dll rate-await [max_bytes] [sets] [iteration_scale] [min_bytes]
//
// latency: osu_latency's blocking ping-pong; paths motor (Communicator.Send/Recv) and direct
// (MPI_Send/MPI_Recv); blocks of 1000 round trips up to 8 KiB, 200 up to 64 KiB, 50 up to 512 KiB,
// 10 above; half round trip in µs.
// bandwidth: osu_bw's window of 64 nonblocking sends and a 4-byte acknowledgement (perf/Bandwidth's
// OsuWindow); paths motor (Request objects and Request.WaitAll), motor-list (a RequestList) and
// direct (MPI_Isend/MPI_Irecv/MPI_Waitall, then MPI_Recv/MPI_Send of the acknowledgement); blocks
// of 100 windows up to 8 KiB, 20 above; MB/s.
// rate: osu_mbw_mr's message rate between one pair (the same window: 64 nonblocking sends, the
// receiver's 64 receives, all waited for, and the acknowledgement); paths motor, motor-list and
// direct as for bandwidth, and motor-span (Request objects completed by the allocation-free
// WaitAll(ReadOnlySpan<Request>), no status array); messages per second.  rate-await (thread level Multiple, which the
// engine needs): the window's requests awaited together (await MpiRequest.WhenAll) through the
// progress engine (motor-await), against direct at the same thread level.
// Block sizes times iteration_scale, at least 1.
// Prints per size each path's median over its blocks, then for each System.MP path the median of
// its per-set quotients to direct and their quartiles.
using System.Globalization;
using System.MP;
using System.Runtime.InteropServices;

const int Window = 64;
string mode = args.Length > 0 ? args[0] : "latency";
if (mode is not ("latency" or "bandwidth" or "rate" or "rate-await"))
{
    Console.Error.WriteLine($"Paired: the mode is latency, bandwidth, rate or rate-await, not '{mode}'");
    return 2;
}
bool latency = mode == "latency", rate = mode.StartsWith("rate", StringComparison.Ordinal);
long max = args.Length > 1 ? long.Parse(args[1], CultureInfo.InvariantCulture) : 65536;
int sets = args.Length > 2 ? int.Parse(args[2], CultureInfo.InvariantCulture) : 31;
double scale = args.Length > 3 ? double.Parse(args[3], CultureInfo.InvariantCulture) : 1.0;
long min = args.Length > 4 ? long.Parse(args[4], CultureInfo.InvariantCulture) : latency ? 0 : 1;
if (sets < 1)
{
    Console.Error.WriteLine($"Paired: at least 1 set of blocks per size, not {sets}");
    return 2;
}
var world = Communicator.World;
if (world.Size != 2)
{
    Console.Error.WriteLine("Paired runs on exactly 2 ranks (mpiexec -n 2 ...)");
    Mpi.Abort(1);
}
int rank = world.Rank;
if (mode == "rate-await" && Mpi.ThreadLevel != ThreadLevel.Multiple)
{
    Console.Error.WriteLine("Paired rate-await awaits through the progress engine: run it at thread level Multiple (motor --thread-level multiple)");
    return 2;
}
var direct = new DirectMpi(Mpi.LibraryPath, Mpi.LibraryVersion, Window);
var send = new byte[Math.Max(max, 1)];
var recv = new byte[Math.Max(max, 1)];
Array.Fill(send, (byte)'a');
var reqs = new Request[Window];
var awaited = new MpiRequest[Window];
using var list = new RequestList(Window);
string[] paths = latency ? ["motor", "direct"] : mode == "rate-await" ? ["motor-await", "direct"]
                 : rate ? ["motor", "motor-span", "motor-list", "direct"] : ["motor", "motor-list", "direct"];
int directPath = paths.Length - 1;
var values = new double[paths.Length][];
var ratios = new double[paths.Length - 1][];
for (int p = 0; p < paths.Length; p++)
    values[p] = new double[sets];
for (int p = 0; p < paths.Length - 1; p++)
    ratios[p] = new double[sets];

// Every path's code is final before the first timed block (the JIT's later tiers, on a busy
// two-core machine, would land inside one block): a second of all of them first, rank 0 saying
// when it is over.
for (double t = Mpi.Wtime(); world.Bcast(rank == 0 && Mpi.Wtime() - t < 1.0 ? 1 : 0, 0) == 1;)
{
    for (int p = 0; p < paths.Length; p++)
        Block(p, latency ? 0 : 8, 20);
}

if (rank == 0)
{
    Console.WriteLine($"# paired blocks in one process: {mode}, {sets} sets per size, {(Mpi.IsHosted ? "motor VM" : "library mode")}, " +
                      $"{Mpi.LibraryVersion.Split('\n')[0].Trim()}; {(latency ? "half round trip, µs" : rate ? "messages/s" : "MB/s")}");
    Console.WriteLine($"# {"size",-10} {string.Join(' ', paths.Select(p => $"{p,10}"))} " +
                      string.Join(' ', paths[..^1].Select(p => $"{p + "/direct",14} {"q1",7} {"q3",7}")));
}
for (long n = min; n <= max; n = n == 0 ? 1 : n * 2)
{
    int count = (int)n;
    int iters = Math.Max(1, (int)((latency ? n <= 8192 ? 1000 : n <= 65536 ? 200 : n <= 524288 ? 50 : 10
                                           : n <= 8192 ? 100 : 20) * scale));
    for (int p = 0; p < paths.Length; p++)
        Block(p, count, Math.Max(1, iters / 10)); // the size's first touch of its pages, every path
    for (int s = 0; s < sets; s++)
    {
        for (int k = 0; k < paths.Length; k++)
        {
            int p = (s + k) % paths.Length; // each path first, middle and last in turn
            values[p][s] = Block(p, count, iters);
        }
        for (int p = 0; p < paths.Length - 1; p++)
            ratios[p][s] = values[p][s] / values[directPath][s];
    }
    if (rank == (latency ? 0 : 1) && count > 0 && (recv[0] != 'a' || recv[count - 1] != 'a'))
        throw new InvalidOperationException($"{mode}: data corrupted at {n} bytes");
    if (rank == 0)
    {
        var row = new System.Text.StringBuilder(string.Create(CultureInfo.InvariantCulture, $"{n,-12}"));
        foreach (double[] v in values)
            row.Append(CultureInfo.InvariantCulture, $" {Stats.Median(v),10:G6}");
        foreach (double[] r in ratios)
        {
            Array.Sort(r);
            row.Append(CultureInfo.InvariantCulture, $" {Stats.Median(r),14:F4} {r[sets / 4],7:F4} {r[sets - 1 - sets / 4],7:F4}");
        }
        Console.WriteLine(row);
    }
}
Mpi.Shutdown();
return 0;

// One block of path p after a barrier: iters round trips (µs per half round trip) or windows (MB/s).
double Block(int p, int count, int iters)
{
    world.Barrier();
    double t0 = Mpi.Wtime();
    for (int i = 0; i < iters; i++)
    {
        if (p == directPath)
        {
            if (latency)
                direct.RoundTrip(send, recv, count, rank);
            else
                direct.Window(send, recv, count, rank);
        }
        else if (latency)
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
        else if (paths[p] == "motor-await")
        {
            AwaitWindow(world, send, recv, awaited, count).GetAwaiter().GetResult();
        }
        else if (p == 0)
        {
            OsuWindow.Exchange(world, send, recv, reqs, count);
        }
        else if (paths[p] == "motor-span")
        {
            OsuWindow.Exchange(world, send, recv, reqs, count, spans: true);
        }
        else
        {
            OsuWindow.Exchange(world, send, recv, list, count);
        }
    }
    double seconds = Mpi.Wtime() - t0;
    return latency ? seconds * 1e6 / (2.0 * iters)
         : rate ? (double)Window * iters / seconds
         : (double)count * Window * iters / seconds / 1e6;
}

// OsuWindow.Exchange with the window's requests awaited together (the engine completes them).
static async Task AwaitWindow(Communicator comm, byte[] send, byte[] recv, MpiRequest[] reqs, int count)
{
    if (comm.Rank == 0)
    {
        for (int w = 0; w < reqs.Length; w++)
            reqs[w] = comm.ISend(send, 0, count, 1, 100);
        await MpiRequest.WhenAll(reqs).ConfigureAwait(false);
        comm.Recv<int>(1, 101);
    }
    else
    {
        for (int w = 0; w < reqs.Length; w++)
            reqs[w] = comm.IRecv(recv, 0, count, 0, 100);
        await MpiRequest.WhenAll(reqs).ConfigureAwait(false);
        comm.Send(0, 0, 101);
    }
}

/// <summary>The MPI library System.MP runs on, called as C calls it (the MPICH ABI or Open MPI's).</summary>
internal sealed unsafe class DirectMpi
{
    private readonly delegate* unmanaged[SuppressGCTransition]<void*, int, nint, int, int, nint, int> _send;
    private readonly delegate* unmanaged[SuppressGCTransition]<void*, int, nint, int, int, nint, void*, int> _recv;
    private readonly delegate* unmanaged[SuppressGCTransition]<void*, int, nint, int, int, nint, void*, int> _isend;
    private readonly delegate* unmanaged[SuppressGCTransition]<void*, int, nint, int, int, nint, void*, int> _irecv;
    private readonly delegate* unmanaged[SuppressGCTransition]<int, void*, void*, int> _waitall;
    private readonly nint _byte, _int, _world;
    private readonly void* _statusIgnore, _statusesIgnore;
    private readonly int _requestSize, _window;
    private readonly byte[] _requests;

    public DirectMpi(string path, string version, int window)
    {
        nint lib = NativeLibrary.Load(path); // already loaded by the core: the same instance
        _send = (delegate* unmanaged[SuppressGCTransition]<void*, int, nint, int, int, nint, int>)NativeLibrary.GetExport(lib, "MPI_Send");
        _recv = (delegate* unmanaged[SuppressGCTransition]<void*, int, nint, int, int, nint, void*, int>)NativeLibrary.GetExport(lib, "MPI_Recv");
        _isend = (delegate* unmanaged[SuppressGCTransition]<void*, int, nint, int, int, nint, void*, int>)NativeLibrary.GetExport(lib, "MPI_Isend");
        _irecv = (delegate* unmanaged[SuppressGCTransition]<void*, int, nint, int, int, nint, void*, int>)NativeLibrary.GetExport(lib, "MPI_Irecv");
        _waitall = (delegate* unmanaged[SuppressGCTransition]<int, void*, void*, int>)NativeLibrary.GetExport(lib, "MPI_Waitall");
        if (version.Contains("Open MPI", StringComparison.Ordinal))
        {
            // Open MPI's handles are the addresses of its predefined objects (a request is a pointer);
            // MPI_STATUS_IGNORE and MPI_STATUSES_IGNORE are NULL.
            _byte = NativeLibrary.GetExport(lib, "ompi_mpi_byte");
            _int = NativeLibrary.GetExport(lib, "ompi_mpi_int");
            _world = NativeLibrary.GetExport(lib, "ompi_mpi_comm_world");
            _statusIgnore = _statusesIgnore = null;
            _requestSize = sizeof(nint);
        }
        else
        {
            // The MPICH ABI's constants (mpi.h): MPI_BYTE, MPI_INT, MPI_COMM_WORLD, MPI_STATUS_IGNORE,
            // MPI_STATUSES_IGNORE; a request is an int.
            _byte = 0x4c00010d;
            _int = 0x4c000405;
            _world = 0x44000000;
            _statusIgnore = (void*)1;
            _statusesIgnore = (void*)1;
            _requestSize = sizeof(int);
        }
        _window = window;
        _requests = GC.AllocateArray<byte>(window * _requestSize, pinned: true);
    }

    /// <summary>One round trip of osu_latency's loop between ranks 0 and 1.</summary>
    public void RoundTrip(byte[] send, byte[] recv, int count, int rank)
    {
        fixed (byte* s = send)
        fixed (byte* r = recv)
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

    /// <summary>One of osu_bw's windows (as OsuWindow.Exchange): rank 0 sends, rank 1 receives and acknowledges.</summary>
    public void Window(byte[] send, byte[] recv, int count, int rank)
    {
        int ack = 0;
        fixed (byte* s = send)
        fixed (byte* r = recv)
        fixed (byte* q = _requests)
        {
            if (rank == 0)
            {
                for (int w = 0; w < _window; w++)
                    Check(_isend(s, count, _byte, 1, 100, _world, q + w * _requestSize));
                Check(_waitall(_window, q, _statusesIgnore));
                Check(_recv(&ack, 1, _int, 1, 101, _world, _statusIgnore));
            }
            else
            {
                for (int w = 0; w < _window; w++)
                    Check(_irecv(r, count, _byte, 0, 100, _world, q + w * _requestSize));
                Check(_waitall(_window, q, _statusesIgnore));
                Check(_send(&ack, 1, _int, 0, 101, _world));
            }
        }
    }

    private static void Check(int rc)
    {
        if (rc != 0)
            throw new InvalidOperationException($"an MPI call made directly failed: error {rc}");
    }
}
