using System.Collections.Generic;
using System.MP.Interop;
using System.Text;

namespace System.MP;

// Dynamic process management (MPI-4.0 chapter 11).
public unsafe partial class Communicator
{
    /// <summary>
    /// The intercommunicator to the job that spawned this one
    /// (MPI_Comm_get_parent), or null when this job was not spawned.
    /// </summary>
    public static Intercommunicator? Parent
    {
        get
        {
            Mpi.EnsureInitialized();
            CommHandle c = CommHandle.Null;
            ThrowHelper.Check(Core.CommGetParent(&c));
            if (c == CommHandle.Null)
                return null;
            return s_parent ??= new Intercommunicator(c);
        }
    }

    private static Intercommunicator? s_parent;

    /// <summary>
    /// Starts <paramref name="maxProcs"/> processes running <paramref name="command"/>
    /// (MPI_Comm_spawn). Collective; the arguments matter at <paramref name="root"/>.
    /// A Motor program spawns more of itself with <see cref="Mpi.SelfCommand"/>.
    /// </summary>
    /// <param name="command">Executable to start (e.g. the path of motor or dotnet).</param>
    /// <param name="args">Its arguments.</param>
    /// <param name="maxProcs">Number of processes.</param>
    /// <param name="root">Rank whose arguments are used.</param>
    /// <returns>An intercommunicator whose remote group is the children.</returns>
    public Intercommunicator Spawn(string command, string[] args, int maxProcs, int root = 0) =>
        Spawn(command, args, maxProcs, null, root);

    /// <summary>
    /// Starts <paramref name="maxProcs"/> copies of <paramref name="command"/> with
    /// hints (MPI_Comm_spawn with an info, MPI-4.0 §11.8.2): reserved keys such as
    /// <c>wdir</c> (the children's working directory), <c>host</c>, <c>path</c>, and
    /// keys the library defines (Open MPI: <c>env</c>, one NAME=value a line).  The
    /// library ignores keys it does not know.  The info is read at <paramref name="root"/>.
    /// </summary>
    /// <param name="command">Executable to start (e.g. the path of motor or dotnet).</param>
    /// <param name="args">Its arguments.</param>
    /// <param name="maxProcs">Number of processes.</param>
    /// <param name="info">The hints, or null for none.</param>
    /// <param name="root">Rank whose arguments are used.</param>
    /// <returns>An intercommunicator whose remote group is the children.</returns>
    /// <exception cref="ObjectDisposedException">The info was disposed.</exception>
    public Intercommunicator Spawn(string command, string[] args, int maxProcs, Info? info, int root = 0)
    {
        if ((uint)root >= (uint)_size)
            ThrowHelper.ThrowRank(root, _size, "a member", nameof(root));
        if (_rank == root && (string.IsNullOrEmpty(command) || maxProcs <= 0 || args is null))
            throw new ArgumentException(SR.SpawnArgs, string.IsNullOrEmpty(command) ? nameof(command) : nameof(maxProcs));
        InfoHandle ih = Info.HandleOf(info);
        return SpawnPinned([SpawnCommand.Unchecked(command ?? "", args ?? [], Math.Max(maxProcs, 1))], [ih], root, multiple: false);
    }

    /// <summary>
    /// Starts the processes of several commands at once, in one job with one
    /// MPI_COMM_WORLD (MPI_Comm_spawn_multiple, MPI-4.0 §11.8.3): each command with
    /// its own arguments, process count and hints.  Collective; the commands matter at
    /// <paramref name="root"/> only (other ranks may pass an empty list).  A child's
    /// <see cref="Mpi.AppNum"/> is the index of its command, its world rank follows the
    /// command order.
    /// </summary>
    /// <param name="commands">The commands, at least one at the root.</param>
    /// <param name="root">Rank whose commands are used.</param>
    /// <returns>An intercommunicator whose remote group is all the children.</returns>
    /// <exception cref="ArgumentException">At the root: no command, or a null one (the message names its index).</exception>
    /// <exception cref="ObjectDisposedException">One of the infos was disposed.</exception>
    public Intercommunicator SpawnMultiple(IReadOnlyList<SpawnCommand> commands, int root = 0)
    {
        if ((uint)root >= (uint)_size)
            ThrowHelper.ThrowRank(root, _size, "a member", nameof(root));
        if (_rank != root)
            return SpawnPinned([], [], root, multiple: true);
        ArgumentNullException.ThrowIfNull(commands);
        if (commands.Count == 0)
            throw new ArgumentException(SR.SpawnMultipleNone, nameof(commands));
        var infos = new InfoHandle[commands.Count];
        for (int i = 0; i < commands.Count; i++)
        {
            SpawnCommand? sc = commands[i];
            if (sc is null)
                throw new ArgumentException(SR.Format(SR.SpawnMultipleCommand, i), nameof(commands));
            infos[i] = Info.HandleOf(sc.Info);
        }
        return SpawnPinned(commands, infos, root, multiple: true);
    }

    // Pins every command and argument as a NUL-terminated UTF-8 string for the length of the
    // call and spawns: MPI_Comm_spawn for one command (Spawn), MPI_Comm_spawn_multiple else.
    private Intercommunicator SpawnPinned(IReadOnlyList<SpawnCommand> commands, InfoHandle[] infos, int root, bool multiple)
    {
        CommHandle h = Handle, c = CommHandle.Null;
        int n = commands.Count, procs = 0, strings = 0;
        foreach (SpawnCommand sc in commands)
        {
            procs += sc.MaxProcs;
            strings += sc.Args.Count + 1;
        }
        var handles = new Runtime.InteropServices.GCHandle[strings];
        // Per command: its name, then its argv with a terminating null.
        var cmd = new nint[Math.Max(n, 1)];
        var argv = new nint[strings + n];
        var argvs = new nint[Math.Max(n, 1)];
        var counts = new int[Math.Max(n, 1)];
        var errors = new int[Math.Max(procs, 1)];
        try
        {
            int s = 0, a = 0;
            for (int i = 0; i < n; i++)
            {
                cmd[i] = PinString(commands[i].Command, ref handles[s++]);
                argvs[i] = a;
                foreach (string arg in commands[i].Args)
                    argv[a++] = PinString(arg ?? "", ref handles[s++]);
                argv[a++] = 0;
                counts[i] = commands[i].MaxProcs;
            }
            fixed (nint* pCmd = cmd, pArgv = argv, pArgvs = argvs)
            fixed (int* pCounts = counts, pErrors = errors)
            fixed (InfoHandle* pInfos = infos)

            {
                for (int i = 0; i < n; i++)
                    pArgvs[i] = (nint)(pArgv + argvs[i]);
                int* err = _rank == root ? pErrors : null;
                if (!multiple)
                    ThrowHelper.Check(Core.CommSpawnInfo((byte*)cmd[0], (byte**)pArgvs[0], counts[0], infos[0], root, h, &c, err));
                else
                    ThrowHelper.Check(Core.CommSpawnMultiple(n, (byte**)pCmd, n == 0 ? null : (byte***)pArgvs, n == 0 ? null : pCounts,
                                                 n == 0 ? null : pInfos, root, h, &c, err));
            }
        }
        finally
        {
            foreach (var gh in handles)
                if (gh.IsAllocated)
                    gh.Free();
        }
        return new Intercommunicator(c);

        static nint PinString(string s, ref Runtime.InteropServices.GCHandle handle)
        {
            handle = Runtime.InteropServices.GCHandle.Alloc(Encoding.UTF8.GetBytes(s + "\0"), Runtime.InteropServices.GCHandleType.Pinned);
            return handle.AddrOfPinnedObject();
        }
    }

    /// <summary>Waits at <paramref name="root"/> for a job to connect to <paramref name="port"/> (MPI_Comm_accept). Collective.</summary>
    /// <param name="port">A port from <see cref="Mpi.OpenPort"/> (used at the root).</param>
    /// <param name="root">Rank that owns the port.</param>
    /// <remarks>
    /// Under Open MPI 4.1 a failure of the root's part before it reaches the other ranks (a port
    /// name that is malformed or from another job when the launcher has no name server,
    /// <c>--ompi-server</c>) is an <see cref="MpiException"/> at the root only: the other ranks wait
    /// inside MPI for ever (Open MPI's defect; MPICH fails every rank).  docs/architecture.md,
    /// "Defects not worked around".
    /// </remarks>
    public Intercommunicator Accept(string port, int root = 0) => AcceptOrConnect(false, port, root);

    /// <summary>Connects to a job waiting in <see cref="Accept"/> on <paramref name="port"/> (MPI_Comm_connect). Collective.</summary>
    /// <param name="port">The accepting job's port (used at the root).</param>
    /// <param name="root">Rank that names the port.</param>
    /// <inheritdoc cref="Accept(string, int)" path="/remarks"/>
    public Intercommunicator Connect(string port, int root = 0) => AcceptOrConnect(true, port, root);

    private Intercommunicator AcceptOrConnect(bool connect, string port, int root)
    {
        CommHandle h = Handle, c = CommHandle.Null;
        if ((uint)root >= (uint)_size)
            ThrowHelper.ThrowRank(root, _size, "a member", nameof(root));
        if (_rank == root)
            ArgumentException.ThrowIfNullOrEmpty(port);
        fixed (byte* p = Encoding.UTF8.GetBytes((port ?? "") + "\0"))
            ThrowHelper.Check(connect ? Core.CommConnect(p, root, h, &c) : Core.CommAccept(p, root, h, &c));
        return new Intercommunicator(c);
    }

    /// <summary>Marks this communicator freed without calling MPI (after a disconnect).</summary>
    private protected void MarkDisposed() => _handle = CommHandle.Null;
}
