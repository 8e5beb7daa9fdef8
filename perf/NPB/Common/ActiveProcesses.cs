using System.MP;

namespace Npb.Common;

/// <summary>
/// NPB 3.4's answer to a process count that a benchmark's decomposition cannot use in full.
/// By default the run is refused. When rank 0 sees <c>NPB_NPROCS_STRICT</c> set to <c>off</c>
/// (<c>OFF</c>, <c>0</c>, or a value starting with n, N, f, F or -), the largest count the
/// decomposition can use does the work on a communicator of its own, and the remaining ranks
/// wait, without computing, until the working ranks end.
/// </summary>
public static class ActiveProcesses
{
    private static Communicator? s_job;

    /// <summary>The number of processes in the job (0 until <see cref="Select"/> ran).</summary>
    public static int JobSize { get; private set; }

    /// <summary>
    /// Narrows <paramref name="world"/> to the ranks that work: unchanged when
    /// <paramref name="usable"/> is its size; otherwise, when NPB_NPROCS_STRICT allows it, its
    /// first <paramref name="usable"/> ranks. Returns false on a rank that only waited (after
    /// the working ranks called <see cref="Release"/>); that rank returns from the benchmark.
    /// Collective over <paramref name="world"/>.
    /// </summary>
    /// <param name="world">Every process of the job; on return, the working ones.</param>
    /// <param name="usable">The largest process count not above the job's that the decomposition uses.</param>
    /// <param name="refusal">NPB's message for the job's count, raised when the run is strict or <paramref name="usable"/> is 0.</param>
    public static bool Select(ref Communicator world, int usable, string refusal)
    {
        JobSize = world.Size;
        if (usable == world.Size)
            return true;
        bool lenient = world.Bcast(world.Rank == 0 && IsLenient(Environment.GetEnvironmentVariable("NPB_NPROCS_STRICT")), 0);
        if (!lenient || usable < 1)
            throw new RefusalException(refusal);
        bool working = world.Rank < usable;
        Communicator? work = world.Split(working ? 0 : Mpi.Undefined, world.Rank);
        if (working)
        {
            s_job = world;
            world = work!;
            return true;
        }
        // A waiting rank polls gently, so that on a shared or oversubscribed node it leaves
        // the cores to the working ranks.
        Request released = world.IBarrier();
        while (!released.Test(out _))
            Thread.Sleep(1);
        return false;
    }

    /// <summary>Called by every working rank when the benchmark ended: lets the waiting ranks go.</summary>
    public static void Release()
    {
        // The waiting ranks are in a nonblocking barrier, which only a nonblocking one matches.
        if (s_job is { } job)
            job.IBarrier().Wait();
    }

    /// <summary>
    /// <see cref="Select"/> for a decomposition that takes a power of two of the ranks: the
    /// job's, or its largest power of two when NPB_NPROCS_STRICT allows. A count above
    /// <paramref name="max"/> is refused, as NPB does.
    /// </summary>
    public static bool PowerOfTwo(ref Communicator world, string benchmark, int max = int.MaxValue)
    {
        int processes = world.Size;
        if (processes > max)
            throw new RefusalException(FormattableString.Invariant(
                $"{benchmark}: the number of processes ({processes}) exceeds the maximum of {max} for this class."));
        return Select(ref world, PowerOfTwoBelow(processes),
            FormattableString.Invariant($"{benchmark}: the number of processes ({processes}) must be a power of two."));
    }

    /// <summary>
    /// <see cref="Select"/> for the multi-partition of an n³ grid (BT, SP): p² ranks, p cells
    /// along each axis, each cell at least 3 points wide. The job's count when it is such a
    /// square, or the largest such square below it when NPB_NPROCS_STRICT allows; otherwise
    /// NPB's refusal (not a square, or cells too small).
    /// </summary>
    public static bool Square(ref Communicator world, string benchmark, int n)
    {
        const int MinCellPoints = 3;
        int processes = world.Size;
        int side = (int)Math.Sqrt(processes + 1.0e-3);
        string refusal = side * side != processes
            ? FormattableString.Invariant($"{benchmark}: no process grid for {processes} processes; expecting a square number of processes (such as {side * side}).")
            : FormattableString.Invariant($"{benchmark}: a {n}^3 grid in {side}x{side}x{side} cells leaves a cell smaller than {MinCellPoints} points; use fewer processes or a larger class.");
        while (side > 0 && n / side < MinCellPoints)
            side--;
        return Select(ref world, side * side, refusal);
    }

    /// <summary>Whether NPB_NPROCS_STRICT's value lets a run leave ranks idle.</summary>
    public static bool IsLenient(string? value) =>
        !string.IsNullOrEmpty(value) && (value is "0" or "off" or "OFF" || "nNfF-".Contains(value[0]));

    /// <summary>The largest power of two not above <paramref name="processes"/>.</summary>
    public static int PowerOfTwoBelow(int processes) => processes < 1 ? 0 : 1 << System.Numerics.BitOperations.Log2((uint)processes);
}
