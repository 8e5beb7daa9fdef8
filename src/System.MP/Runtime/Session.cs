using System.Collections.Generic;
using System.MP.Interop;
using System.Text;

namespace System.MP;

/// <summary>
/// An MPI session (MPI-4.0 §11.3): a handle on MPI of its own, from which a
/// program or library asks for process sets (<c>mpi://WORLD</c>, <c>mpi://SELF</c>,
/// and any the launcher defines), the group of one, and then a communicator of
/// exactly that group with <see cref="Communicator.CreateFromGroup"/> — without
/// relying on <see cref="Communicator.World"/>.
/// </summary>
/// <remarks>
/// Works whether or not the world model is up.  Under motor (MPI initialized
/// before Main) or after the program used <see cref="Communicator.World"/>, the
/// session lives beside the world.  Under plain dotnet, a session made first
/// starts MPI through the session alone (no MPI_Init); using the world later
/// brings the world model up beside it (MPI-4.0 §11.4.1).  Dispose the session
/// (MPI_Session_finalize) after freeing the communicators and groups made from
/// it; sessions still open are finalized at process exit.  Needs an MPI-4 library
/// (MPICH 4.0 or later): elsewhere <see cref="Init"/> throws
/// <see cref="NotSupportedException"/> naming the library.
/// </remarks>
public sealed unsafe class Session : IDisposable
{
    private static readonly object s_lock = new();
    private static bool s_exitHooked;
    private SessionHandle _handle;

    private Session(SessionHandle handle) => _handle = handle;

    /// <summary>Starts a session (MPI_Session_init); errors are returned as exceptions, not fatal.</summary>
    /// <param name="info">Hints for the library (e.g. <c>thread_level</c>), or null.  An <see cref="Info"/> needs MPI up, so passing one starts the world model first.</param>
    /// <exception cref="NotSupportedException">The MPI library has no sessions (Open MPI 4.1).</exception>
    /// <exception cref="InvalidOperationException">MPI was already shut down in this process.</exception>
    /// <exception cref="DllNotFoundException">No MPI library or message-passing core could be loaded.</exception>
    public static Session Init(Info? info = null)
    {
        InfoHandle infoHandle = Info.HandleOf(info);
        lock (s_lock)
        {
            CoreLoader.EnsureLoaded();
            SessionHandle s = SessionHandle.Null;
            int rc = Core.SessionInit(infoHandle, &s);
            ThrowHelper.Check(rc);
            if (!s_exitHooked)
            {
                s_exitHooked = true;
                AppDomain.CurrentDomain.ProcessExit += OnProcessExit;
            }
            return new Session(s);
        }
    }

    /// <summary>True until the session is disposed.</summary>
    public bool IsOpen => _handle != SessionHandle.Null;

    /// <summary>The names of the process sets this session sees (MPI_Session_get_num_psets, MPI_Session_get_nth_pset), in the library's order.</summary>
    /// <exception cref="ObjectDisposedException">The session was disposed.</exception>
    public IReadOnlyList<string> ProcessSets
    {
        get
        {
            SessionHandle h = Handle;
            int n = 0;
            ThrowHelper.Check(Core.SessionNumPsets(h, &n));
            var names = new string[n];
            byte* buf = stackalloc byte[257];
            for (int i = 0; i < n; i++)
            {
                int len = ThrowHelper.Check(Core.SessionNthPset(h, i, buf, 257));
                names[i] = Encoding.UTF8.GetString(buf, Math.Min(len, 256));
            }
            return names;
        }
    }

    /// <summary>The info of a process set (MPI_Session_get_pset_info), such as <c>mpi_size</c>; dispose it when done.</summary>
    /// <param name="processSet">A name from <see cref="ProcessSets"/>.</param>
    /// <exception cref="ArgumentException">The name is empty or contains NUL.</exception>
    /// <exception cref="MpiException">The session does not list the process set (class MPI_ERR_ARG, the message naming the sets it lists); looked up before MPI sees the name, which MPICH 4.0 would take as a fatal error while only sessions exist.</exception>
    /// <exception cref="ObjectDisposedException">The session was disposed.</exception>
    public Info GetProcessSetInfo(string processSet)
    {
        SessionHandle h = Handle;
        InfoHandle info = InfoHandle.Null;
        byte[] name = NameBytes(processSet);
        fixed (byte* p = name)
            ThrowHelper.Check(Core.SessionPsetInfo(h, p, &info));
        return new Info(info);
    }

    /// <summary>The group of a process set (MPI_Group_from_session_pset), e.g. <c>"mpi://WORLD"</c>; dispose it when done.</summary>
    /// <param name="processSet">A name from <see cref="ProcessSets"/>.</param>
    /// <exception cref="ArgumentException">The name is empty or contains NUL.</exception>
    /// <exception cref="MpiException">The session does not list the process set (class MPI_ERR_ARG, the message naming the sets it lists); looked up before MPI sees the name, which MPICH 4.0 would take as a fatal error while only sessions exist.</exception>
    /// <exception cref="ObjectDisposedException">The session was disposed.</exception>
    public Group GroupFromProcessSet(string processSet)
    {
        SessionHandle h = Handle;
        GroupHandle g = GroupHandle.Null;
        byte[] name = NameBytes(processSet);
        fixed (byte* p = name)
            ThrowHelper.Check(Core.GroupFromPset(h, p, &g));
        return new Group(g);
    }

    /// <summary>Finalizes the session (MPI_Session_finalize).  Free its communicators and groups first.  Calling it again does nothing.</summary>
    /// <exception cref="MpiException">The library refused (e.g. communicators of the session are still open).</exception>
    public void Dispose()
    {
        SessionHandle h = _handle;
        if (h == SessionHandle.Null)
            return;
        _handle = SessionHandle.Null;
        ThrowHelper.Check(Core.SessionFinalize(h));
    }

    private SessionHandle Handle
    {
        get
        {
            SessionHandle h = _handle;
            if (h == SessionHandle.Null)

                throw new ObjectDisposedException(nameof(Session), SR.SessionFinalized);
            return h;
        }
    }

    private static byte[] NameBytes(string processSet)
    {
        if (processSet is null)
            ThrowHelper.ThrowNull(nameof(processSet));
        if (processSet.Length == 0 || processSet.Contains('\0'))
            throw new ArgumentException(SR.ProcessSetName, nameof(processSet));
        return Encoding.UTF8.GetBytes(processSet + "\0");
    }

    /// <summary>MPI started through sessions alone ends with them (the world model finalizes everything itself).</summary>
    private static void OnProcessExit(object? sender, EventArgs e)
    {
        if (!Mpi.IsInitialized && Core.State() == CoreConst.StateReady)
            Core.Finalize(Environment.ExitCode);
    }
}
