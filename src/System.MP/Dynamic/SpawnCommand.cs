using System.Collections.Generic;

namespace System.MP;

/// <summary>
/// One command of <see cref="Communicator.SpawnMultiple"/>: the executable, its
/// arguments, how many processes run it and the hints for them (MPI_Comm_spawn_multiple's
/// per-command arrays).  Checked when made, so a bad command is refused before any rank
/// enters the collective.
/// </summary>
public sealed class SpawnCommand
{
    /// <summary>Describes one command to spawn.</summary>
    /// <param name="command">Executable to start (e.g. the path of motor or dotnet; see <see cref="Mpi.SelfCommand"/>).</param>
    /// <param name="args">Its arguments (none may be null).</param>
    /// <param name="maxProcs">Number of processes running it, at least 1.</param>
    /// <param name="info">Hints for these processes (MPI-4.0 §11.8.2: <c>wdir</c>, <c>host</c>, <c>path</c>, ...), or null.</param>
    /// <exception cref="ArgumentException"><paramref name="command"/> is empty, or an argument is null.</exception>
    /// <exception cref="ArgumentNullException"><paramref name="command"/> or <paramref name="args"/> is null.</exception>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="maxProcs"/> is not positive.</exception>
    public SpawnCommand(string command, IReadOnlyList<string> args, int maxProcs, Info? info = null)
    {
        ArgumentException.ThrowIfNullOrEmpty(command);
        ArgumentNullException.ThrowIfNull(args);
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(maxProcs);
        foreach (string a in args)
            if (a is null)
                throw new ArgumentException(SR.SpawnNullArgument, nameof(args));
        (Command, Args, MaxProcs, Info) = (command, args, maxProcs, info);
    }

    // Unchecked, for Spawn's own use: its arguments are checked at the root only, and a
    // non-root rank passes whatever it has.
    internal static SpawnCommand Unchecked(string command, IReadOnlyList<string> args, int maxProcs) =>
        new(command, args, maxProcs);

    private SpawnCommand(string command, IReadOnlyList<string> args, int maxProcs) =>
        (Command, Args, MaxProcs) = (command, args, maxProcs);

    /// <summary>The executable.</summary>
    public string Command { get; }

    /// <summary>Its arguments.</summary>
    public IReadOnlyList<string> Args { get; }

    /// <summary>Number of processes running it.</summary>
    public int MaxProcs { get; }

    /// <summary>Hints for these processes, or null.</summary>
    public Info? Info { get; }
}
