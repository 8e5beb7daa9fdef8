using System.MP;

namespace Scenarios;

/// <summary>
/// The runtime's own exceptions in a rank under MPI (a null dereference, a division by zero, an
/// index out of range: the first two trapped as signals UCX would take for itself), each caught
/// where it is thrown, and MPI works afterwards.
/// </summary>
internal static class ManagedExceptions
{
    internal static void Register(Dictionary<Scenario, Action<Communicator>> s) => s[Scenario.ManagedExceptions] = Run;

    private sealed class Holder
    {
        public int[]? Data = null;
    }

    private static void Run(Communicator c)
    {
        // UCX traps SIGSEGV/SIGFPE by default; the runtime needs them for these.
        Holder? h = c.Rank < 0 ? new Holder() : null;
        Check.Throws<NullReferenceException>(() => _ = h!.Data, "null dereference after MPI init");
        int zero = c.Rank - c.Rank;
        Check.Throws<DivideByZeroException>(() => _ = 10 / zero, "integer division by zero");
        var small = new int[2];
        int index = c.Size + 5;
        Check.Throws<IndexOutOfRangeException>(() => small[index] = 1, "index out of range");
        var holder = new Holder();
        Check.Throws<NullReferenceException>(() => holder.Data![0] = 1, "null array element store");
        // MPI keeps working after the signals were handled by the runtime.
        int right = (c.Rank + 1) % c.Size, left = (c.Rank + c.Size - 1) % c.Size;
        var got = new int[1];
        c.SendRecv(new[] { c.Rank }, right, 1, got, left, 1);
        Check.Equal(left, got[0], "messages after exceptions");
    }
}
