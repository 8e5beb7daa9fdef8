using System.MP.Interop;

namespace System.MP;

/// <summary>Who frees an MPI communicator that native code made and a <see cref="Communicator"/> wraps.</summary>
public enum HandleOwnership
{
    /// <summary>
    /// The native code keeps it: disposing the Communicator only stops using it, and the native
    /// code frees it (MPI_Comm_free) after that, never before.
    /// </summary>
    Borrowed,

    /// <summary>
    /// The Communicator takes it over: disposing it frees it (MPI_Comm_free), and the native code
    /// must never free it.
    /// </summary>
    Owned,
}

// Communicators across the native boundary (MPI-4.0 19.3.4): the MPI handle behind a
// Communicator for a C or Fortran library, and a communicator such a library made, wrapped.
public unsafe partial class Communicator
{
    /// <summary>
    /// The MPI communicator in C form, for a native library that takes an <c>MPI_Comm</c>: under
    /// MPICH (and the libraries of its ABI) an <c>int</c>, here sign-extended (pass <c>(int)</c> of it),
    /// under Open MPI a pointer.  Valid while this Communicator is not disposed; the native code
    /// uses it and never frees it.
    /// </summary>
    public nint MpiHandle => (nint)MpiHandleOf(Core.CommHandle, Handle, fortran: false);

    /// <summary>
    /// The MPI communicator in Fortran form (MPI_Comm_c2f: an <c>INTEGER</c>, the same under both
    /// ABIs), for a Fortran library or a C one that takes an <c>MPI_Fint</c>.  Valid while this
    /// Communicator is not disposed; the native code never frees it.
    /// </summary>
    public int FortranHandle => (int)MpiHandleOf(Core.CommHandle, Handle, fortran: true);

    /// <summary>The C form (a long) or the Fortran form of the MPI handle behind a core handle, by the core's comm_handle or group_handle.</summary>
    internal static long MpiHandleOf<THandle>(delegate* unmanaged[Cdecl, SuppressGCTransition]<THandle, long*, int*, int> get, THandle handle, bool fortran)
        where THandle : unmanaged
    {
        long c = 0;
        int f = 0;
        int rc = fortran ? get(handle, null, &f) : get(handle, &c, null);
        ThrowHelper.Check(rc);
        return fortran ? f : c;
    }

    /// <summary>
    /// Wraps a communicator that native code made (its <c>MPI_Comm</c>, as <see cref="MpiHandle"/>
    /// gives one), as a Communicator, an <see cref="Intercommunicator"/> or the class of its
    /// topology.  A local call: the other members need not make it, nor run .NET.  Motor sets
    /// MPI_ERRORS_RETURN on the communicator (MPI's errors become exceptions), for the native code
    /// too.  The handles of MPI_COMM_WORLD and MPI_COMM_SELF give <see cref="World"/> and
    /// <see cref="Self"/>.
    /// </summary>
    /// <param name="handle">The <c>MPI_Comm</c>: MPICH's <c>int</c> or Open MPI's pointer.</param>
    /// <param name="ownership">Who frees it: see <see cref="HandleOwnership"/>.</param>
    /// <exception cref="ArgumentException">The handle is MPI_COMM_NULL, or not an MPICH handle (more than 32 bits).</exception>
    /// <exception cref="MpiException">MPI refused the handle (not a communicator).</exception>
    public static Communicator FromMpiHandle(nint handle, HandleOwnership ownership) => Adopt(handle, 0, ownership);

    /// <summary>
    /// Wraps a communicator that native code made, given in Fortran form (an <c>INTEGER</c>, as
    /// <see cref="FortranHandle"/> gives one); otherwise as <see cref="FromMpiHandle"/>.
    /// </summary>
    /// <param name="handle">The Fortran handle (MPI_Comm_c2f).</param>
    /// <param name="ownership">Who frees it: see <see cref="HandleOwnership"/>.</param>
    /// <exception cref="ArgumentException">The handle is MPI_COMM_NULL's.</exception>
    /// <exception cref="MpiException">MPI refused the handle (not a communicator).</exception>
    public static Communicator FromFortranHandle(int handle, HandleOwnership ownership) => Adopt(handle, 1, ownership);

    private static Communicator Adopt(long handle, int fortran, HandleOwnership ownership)
    {
        if (ownership is not (HandleOwnership.Borrowed or HandleOwnership.Owned))
            throw new ArgumentOutOfRangeException(nameof(ownership), ownership, SR.HandleOwnershipUnknown);
        Mpi.EnsureInitialized();
        CommHandle comm = CommHandle.Null;
        int rc = Core.CommFromHandle(handle, fortran, ownership == HandleOwnership.Owned ? 1 : 0, &comm);
        ThrowHelper.Check(rc);
        return comm == CommHandle.World ? World : comm == CommHandle.Self ? Self : Wrap(comm)!;

    }
}
