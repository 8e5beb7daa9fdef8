using System.MP;
using System.Runtime.InteropServices;

namespace Scenarios;

/// <summary>
/// Communicators across the native boundary (NativeCommTests): a native MPI library
/// (tests/native/mixed/commlib.c, its path in MOTOR_TEST_COMMLIB) called with a split
/// communicator's handle in C form (MPICH's int or Open MPI's pointer) and in Fortran form, doing
/// its own Allreduce and Sendrecv on it; communicators the library makes, taken over (owned:
/// freed by Dispose) and borrowed (the library uses and frees it after Dispose), with object
/// transport on them; a group's handle; the world's handle giving World back; bad handles refused.
/// </summary>
internal static unsafe class NativeComms
{
    internal static void Register(Dictionary<Scenario, Action<Communicator>> s)
    {
        s[Scenario.NativeComm] = Run;
    }

    private static void Run(Communicator world)
    {
        string path = Environment.GetEnvironmentVariable("MOTOR_TEST_COMMLIB") ?? "";
        nint lib = NativeLibrary.Load(path);
        bool pointers = Mpi.LibraryVersion.Contains("Open MPI", StringComparison.Ordinal); // MPI_Comm's C type
        var ringF = (delegate* unmanaged<int, int>)NativeLibrary.GetExport(lib, "commlib_ring_f");
        var reversedF = (delegate* unmanaged<int, int>)NativeLibrary.GetExport(lib, "commlib_reversed_f");
        var freeF = (delegate* unmanaged<int, int>)NativeLibrary.GetExport(lib, "commlib_free_f");
        var groupSizeF = (delegate* unmanaged<int, int>)NativeLibrary.GetExport(lib, "commlib_group_size_f");
        var nullF = (delegate* unmanaged<int>)NativeLibrary.GetExport(lib, "commlib_null_f");
        nint ring = NativeLibrary.GetExport(lib, "commlib_ring"), reversed = NativeLibrary.GetExport(lib, "commlib_reversed");
        int Ring(Communicator c) => pointers ? ((delegate* unmanaged<nint, int>)ring)(c.MpiHandle)
                                             : ((delegate* unmanaged<int, int>)ring)((int)c.MpiHandle);
        nint Reversed(Communicator c) => pointers ? ((delegate* unmanaged<nint, nint>)reversed)(c.MpiHandle)
                                                  : ((delegate* unmanaged<int, int>)reversed)((int)c.MpiHandle);

        int me = world.Rank, n = world.Size;
        // A split communicator (the ranks in reverse order) handed to the library in both forms.
        using (Communicator split = world.Split(0, n - 1 - me)!)
        {
            int r = split.Rank, expected = n * (n + 1) / 2 * 1000 + (r + n - 1) % n * 100;
            Check.Equal(expected, Ring(split), "the library's Allreduce and Sendrecv on a split communicator (C handle)");
            Check.Equal(expected, ringF(split.FortranHandle), "the same through its Fortran handle");
            Check.Equal(n * (n + 1) / 2, split.Allreduce(r + 1, Op.Sum), "the communicator still Motor's after the library's calls");
        }

        // A communicator the library made, taken over: Dispose frees it.
        using (Communicator owned = Communicator.FromMpiHandle(Reversed(world), HandleOwnership.Owned))
        {
            Check.Equal(n - 1 - me, owned.Rank, "the library's communicator, adopted from its C handle: its ranks reversed");
            Check.Equal(n * (n - 1) / 2, owned.Allreduce(owned.Rank, Op.Sum), "an Allreduce on it");
            Objects(owned, "on a communicator the library made (owned)");
        }

        // One lent: used here, disposed, then still the library's to use and to free.
        int lent = reversedF(world.FortranHandle);
        Communicator borrowed = Communicator.FromFortranHandle(lent, HandleOwnership.Borrowed);
        Check.Equal(n - 1 - me, borrowed.Rank, "the library's communicator, adopted from its Fortran handle");
        Objects(borrowed, "on a communicator the library lent (borrowed)");
        borrowed.Dispose();
        Check.True(borrowed.IsDisposed, "the borrowed communicator is disposed here");
        Check.Equal(n * (n + 1) / 2 * 1000 + (n - 1 - me + n - 1) % n * 100, ringF(lent), "the library uses it after Dispose: not freed");
        Check.Equal(0, freeF(lent), "and frees it itself (MPI_Comm_free succeeds)");

        // Groups, the predefined communicators, bad input.
        using (Group g = world.Group)
            Check.Equal(n, groupSizeF(g.FortranHandle), "a group's Fortran handle, its size read by the library");
        Check.True(ReferenceEquals(Communicator.World, Communicator.FromMpiHandle(world.MpiHandle, HandleOwnership.Owned)),
                   "MPI_COMM_WORLD's handle gives World back");
        Check.True(ReferenceEquals(Communicator.Self, Communicator.FromFortranHandle(Communicator.Self.FortranHandle, HandleOwnership.Borrowed)),
                   "MPI_COMM_SELF's handle gives Self back");
        Check.True(Throws<ArgumentException>(() => Communicator.FromFortranHandle(nullF(), HandleOwnership.Owned)),
                   "MPI_COMM_NULL's handle is refused");
        Check.True(Throws<ArgumentOutOfRangeException>(() => Communicator.FromMpiHandle(world.MpiHandle, (HandleOwnership)7)),
                   "an ownership that is neither is refused");
        world.Barrier();
    }

    /// <summary>A small object and one past a payload's first message (continuation pieces) around a ring.</summary>
    private static void Objects(Communicator c, string where)
    {
        int next = (c.Rank + 1) % c.Size, prev = (c.Rank + c.Size - 1) % c.Size;
        var large = new long[40_000];
        for (int i = 0; i < large.Length; i++)
            large[i] = (long)c.Rank << 32 | (uint)i;
        using ObjectRequest s = c.OISend(large, next, 3);
        long[]? got = c.ORecv<long[]>(prev, 3);
        s.Wait();
        bool exact = got is { Length: 40_000 };
        for (int i = 0; exact && i < got!.Length; i++)
            exact = got[i] == ((long)prev << 32 | (uint)i);
        Check.True(exact, $"a 320,000-byte object {where}");
    }

    private static bool Throws<T>(Action a) where T : Exception
    {
        try
        {
            a();
            return false;
        }
        catch (T)
        {
            return true;
        }
    }
}
