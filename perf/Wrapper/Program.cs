// Wrapper: the classic managed MPI binding, as a baseline for System.MP.
// DllImport of the MPI library (MPICH ABI), every buffer pinned by a GCHandle
// for the duration of each call, marshalled status structs - the way
// wrapper libraries are commonly written.  Same methodology and output rows
// as perf/native/pingpong.c and perf/native/bandwidth.c.
//
//   mpiexec -n 2 dotnet Wrapper.dll latency   [max_bytes] [iteration_scale]
//   mpiexec -n 2 dotnet Wrapper.dll bandwidth [max_bytes] [iteration_scale]
//   dotnet Wrapper.dll window windows [bytes]     (one rank: perf/callgrind.sh)
using System.Globalization;
using System.Runtime.InteropServices;

string mode = args.Length > 0 ? args[0] : "latency";
long max = args.Length > 1 ? long.Parse(args[1], CultureInfo.InvariantCulture) : 4L << 20;
double scale = args.Length > 2 ? double.Parse(args[2], CultureInfo.InvariantCulture) : 1.0;

Mpi.Check(Mpi.MPI_Init(IntPtr.Zero, IntPtr.Zero));
if (mode == "window")
{
    Wrapper.SelfWindows(max, args.Length > 2 ? int.Parse(args[2], CultureInfo.InvariantCulture) : 8);
    Mpi.MPI_Finalize();
    return 0;
}
Mpi.Check(Mpi.MPI_Comm_rank(Mpi.CommWorld, out int rank));
Mpi.Check(Mpi.MPI_Comm_size(Mpi.CommWorld, out int size));
if (size < 2)
{
    Console.Error.WriteLine("Wrapper needs 2 ranks");
    Mpi.MPI_Abort(Mpi.CommWorld, 1);
}
var send = new byte[Math.Max(max, 1)];
var recv = new byte[Math.Max(max, 1)];
Array.Fill(send, (byte)'a');
var w = new Wrapper(rank);
if (mode == "bandwidth")
    w.Bandwidth(send, recv, max, scale);
else
    w.Latency(send, recv, max, scale);
Mpi.MPI_Finalize();
return 0;

internal sealed class Wrapper(int rank)
{
    private const int Large = 8192, Window = 64;

    // Blocking send: pin, call, unpin (what every wrapper does without `fixed`).
    private static void Send(byte[] buffer, int count, int dest, int tag)
    {
        GCHandle h = GCHandle.Alloc(buffer, GCHandleType.Pinned);
        try
        {
            Mpi.Check(Mpi.MPI_Send(h.AddrOfPinnedObject(), count, Mpi.Byte, dest, tag, Mpi.CommWorld));
        }
        finally
        {
            h.Free();
        }
    }

    private static Mpi.Status Recv(byte[] buffer, int count, int source, int tag)
    {
        GCHandle h = GCHandle.Alloc(buffer, GCHandleType.Pinned);
        try
        {
            Mpi.Check(Mpi.MPI_Recv(h.AddrOfPinnedObject(), count, Mpi.Byte, source, tag, Mpi.CommWorld, out Mpi.Status st));
            return st;
        }
        finally
        {
            h.Free();
        }
    }

    internal void Latency(byte[] send, byte[] recv, long max, double scale)
    {
        if (rank == 0)
            Console.WriteLine("# C# P/Invoke wrapper ping-pong (GCHandle per call, osu_latency methodology)");
        Warmup(send, recv);
        for (long n = 0; n <= max; n = n == 0 ? 1 : n * 2)
        {
            int count = (int)n, warm = n > Large ? 10 : 100;
            int iters = Math.Max(1, (int)((n > Large ? 1000 : 10000) * scale));
            double t0 = 0;
            Mpi.Check(Mpi.MPI_Barrier(Mpi.CommWorld));
            for (int i = 0; i < warm + iters; i++)
            {
                if (i == warm)
                    t0 = Mpi.MPI_Wtime();
                if (rank == 0)
                {
                    Send(send, count, 1, 1);
                    Recv(recv, count, 1, 1);
                }
                else if (rank == 1)
                {
                    Recv(recv, count, 0, 1);
                    Send(send, count, 0, 1);
                }
            }
            if (rank == 0)
                Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"{n,-12} {(Mpi.MPI_Wtime() - t0) * 1e6 / (2.0 * iters),12:F3}"));
        }
    }

    internal void Bandwidth(byte[] send, byte[] recv, long max, double scale)
    {
        if (rank == 0)
            Console.WriteLine($"# C# P/Invoke wrapper bandwidth (GCHandle per operation, osu_bw methodology, window {Window})");
        Warmup(send, recv);
        var reqs = new int[Window];
        var pins = new GCHandle[Window];
        var statuses = new Mpi.Status[Window];
        // Windows for a second before anything is timed, as in perf/Bandwidth
        // (tiered compilation done); rank 0 decides when to stop.
        var go = new byte[1];
        for (double start = Mpi.MPI_Wtime(); rank < 2;)
        {
            for (int i = 0; i < 100; i++)
                Exchange(send, recv, (int)Math.Min(i % 2 == 0 ? 8 : 4096, max), reqs, pins, statuses);
            go[0] = (byte)(Mpi.MPI_Wtime() - start < 1.0 ? 1 : 0);
            if (rank == 0)
                Send(go, 1, 1, 3);
            else
                Recv(go, 1, 0, 3);
            if (go[0] == 0)
                break;
        }
        for (long n = 1; n <= max; n *= 2)
        {
            int count = (int)n, warm = n > Large ? 2 : 10;
            int iters = Math.Max(1, (int)((n > Large ? 20 : 100) * scale));
            double t0 = 0;
            Mpi.Check(Mpi.MPI_Barrier(Mpi.CommWorld));
            for (int i = 0; i < warm + iters; i++)
            {
                if (i == warm)
                    t0 = Mpi.MPI_Wtime();
                if (rank < 2)
                    Exchange(send, recv, count, reqs, pins, statuses);
            }
            if (rank == 0)
                Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"{n,-12} {(double)n * Window * iters / (Mpi.MPI_Wtime() - t0) / 1e6,14:G6}"));
        }
    }

    // One window: 64 messages from rank 0 to rank 1, then a 4-byte acknowledgement.
    private void Exchange(byte[] send, byte[] recv, int count, int[] reqs, GCHandle[] pins, Mpi.Status[] statuses)
    {
        byte[] buffer = rank == 0 ? send : recv;
        for (int k = 0; k < Window; k++)
        {
            // A nonblocking operation keeps its pin until it completes.
            pins[k] = GCHandle.Alloc(buffer, GCHandleType.Pinned);
            Mpi.Check(rank == 0
                ? Mpi.MPI_Isend(pins[k].AddrOfPinnedObject(), count, Mpi.Byte, 1, 100, Mpi.CommWorld, out reqs[k])
                : Mpi.MPI_Irecv(pins[k].AddrOfPinnedObject(), count, Mpi.Byte, 0, 100, Mpi.CommWorld, out reqs[k]));
        }
        Mpi.Check(Mpi.MPI_Waitall(Window, reqs, statuses));
        for (int k = 0; k < Window; k++)
            pins[k].Free();
        if (rank == 0)
            Recv(recv, 4, 1, 101);
        else
            Send(send, 4, 0, 101);
    }

    // perf/native/window.c's loop: 64 Irecv + 64 Isend to self, two Waitalls.
    internal static void SelfWindows(long windows, int bytes)
    {
        var send = new byte[bytes];
        var recv = new byte[bytes];
        var rreqs = new int[Window];
        var sreqs = new int[Window];
        var pins = new GCHandle[2 * Window];
        var statuses = new Mpi.Status[Window];
        for (long i = 0; i < windows; i++)
        {
            for (int k = 0; k < Window; k++)
            {
                pins[k] = GCHandle.Alloc(recv, GCHandleType.Pinned);
                Mpi.Check(Mpi.MPI_Irecv(pins[k].AddrOfPinnedObject(), bytes, Mpi.Byte, 0, 100, Mpi.CommSelf, out rreqs[k]));
            }
            for (int k = 0; k < Window; k++)
            {
                pins[Window + k] = GCHandle.Alloc(send, GCHandleType.Pinned);
                Mpi.Check(Mpi.MPI_Isend(pins[Window + k].AddrOfPinnedObject(), bytes, Mpi.Byte, 0, 100, Mpi.CommSelf, out sreqs[k]));
            }
            Mpi.Check(Mpi.MPI_Waitall(Window, rreqs, statuses));
            Mpi.Check(Mpi.MPI_Waitall(Window, sreqs, statuses));
            for (int k = 0; k < 2 * Window; k++)
                pins[k].Free();
        }
    }

    // JIT warm-up, as in samples/PingPong.
    private void Warmup(byte[] send, byte[] recv)
    {
        for (int i = 0; i < 20000 && rank < 2; i++)
        {
            if (rank == 0)
            {
                Send(send, 8, 1, 2);
                Recv(recv, 8, 1, 2);
            }
            else
            {
                Recv(recv, 8, 0, 2);
                Send(send, 8, 0, 2);
            }
        }
    }
}

/// <summary>The MPI entry points the baseline needs, bound by DllImport (MPICH ABI: integer handles).</summary>
internal static partial class Mpi
{
    private const string Lib = "libmpich.so.12";
    internal const int CommWorld = 0x44000000; // MPI_COMM_WORLD in the MPICH ABI
    internal const int CommSelf = 0x44000001;  // MPI_COMM_SELF
    internal const int Byte = 0x4c00010d;      // MPI_BYTE

    [StructLayout(LayoutKind.Sequential)]
    internal struct Status
    {
        public int CountLo, CountHiAndCancelled, Source, Tag, Error;
    }

    internal static void Check(int rc)
    {
        if (rc != 0)
            throw new InvalidOperationException($"MPI error {rc}");
    }

    [DllImport(Lib)] internal static extern int MPI_Init(IntPtr argc, IntPtr argv);
    [DllImport(Lib)] internal static extern int MPI_Finalize();
    [DllImport(Lib)] internal static extern int MPI_Abort(int comm, int code);
    [DllImport(Lib)] internal static extern int MPI_Comm_rank(int comm, out int rank);
    [DllImport(Lib)] internal static extern int MPI_Comm_size(int comm, out int size);
    [DllImport(Lib)] internal static extern int MPI_Barrier(int comm);
    [DllImport(Lib)] internal static extern double MPI_Wtime();
    [DllImport(Lib)] internal static extern int MPI_Send(IntPtr buf, int count, int type, int dest, int tag, int comm);
    [DllImport(Lib)] internal static extern int MPI_Recv(IntPtr buf, int count, int type, int source, int tag, int comm, out Status status);
    [DllImport(Lib)] internal static extern int MPI_Isend(IntPtr buf, int count, int type, int dest, int tag, int comm, out int request);
    [DllImport(Lib)] internal static extern int MPI_Irecv(IntPtr buf, int count, int type, int source, int tag, int comm, out int request);
    [DllImport(Lib)] internal static extern int MPI_Waitall(int count, [In, Out] int[] requests, [Out] Status[] statuses);
}
