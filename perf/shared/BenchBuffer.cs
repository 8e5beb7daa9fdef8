using System.MP;
using System.Runtime.InteropServices;

/// <summary>
/// Where a benchmark's message buffers live, for the placement experiment
/// (perf/compare-placement.sh): ordinary arrays by default, as a user's program has them, or
/// with BENCH_BUFFER=pinned arrays from <see cref="Mpi.AllocatePinned{T}"/>.  With
/// BENCH_BUFFER_REPORT=1 each rank prints at which offset within its page each buffer's data
/// starts, so the C floor can be run on memory laid out the same way (BENCH_BUFFER_OFFSETS).
/// Compiled into samples/PingPong and perf/Bandwidth.
/// </summary>
internal static class BenchBuffer
{
    private static readonly bool s_pinned = Environment.GetEnvironmentVariable("BENCH_BUFFER") switch
    {
        null or "" or "array" => false,
        "pinned" => true,
        string other => throw new ArgumentException($"BENCH_BUFFER={other}: array or pinned"),
    };

    internal static byte[] Allocate(long length) =>
        s_pinned ? Mpi.AllocatePinned<byte>(checked((int)length)) : new byte[length];

    internal static void Report(Communicator world, byte[] send, byte[] recv)
    {
        if (Environment.GetEnvironmentVariable("BENCH_BUFFER_REPORT") == "1")
            Console.Error.WriteLine($"# rank {world.Rank} {(s_pinned ? "pinned" : "array")}: send buffer at page offset " +
                                    $"{PageOffset(send)}, receive buffer at page offset {PageOffset(recv)}");
    }

    private static long PageOffset(byte[] array)
    {
        GCHandle pin = GCHandle.Alloc(array, GCHandleType.Pinned);
        try
        {
            return pin.AddrOfPinnedObject() % 4096;
        }
        finally
        {
            pin.Free();
        }
    }
}
