using System.Runtime.CompilerServices;

namespace System.MP;

/// <summary>
/// Keeps what a rank writes to its console free of terminal control codes.  Open MPI's mpirun
/// gives each rank a pseudo-terminal for its output, and .NET's console, finding a terminal on
/// standard output, writes the terminal's keypad-transmit string (terminfo <c>smkx</c>,
/// <c>ESC[?1h ESC=</c> for xterm) before the first text.  mpirun forwards those bytes with the
/// rank's output, into the files and parsers it is redirected to.  A rank's pseudo-terminal has
/// no user typing at it, so System.MP describes it to .NET as the terminal it is, TERM=dumb (no
/// keypad mode, no colours), before the console starts: when the module loads, which under
/// motor is before Main and under plain dotnet when Main first refers to System.MP.
/// </summary>
internal static class RankConsole
{
    /// <summary>The variables each MPI launcher sets for the processes it starts (Open MPI, Hydra and PMI-2, PMIx).</summary>
    private static readonly string[] s_launcherVariables = ["OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"];

    // A library's module initializer (CA2255) is wanted here: it is the one point that runs
    // before the app's first Console use in both modes.
#pragma warning disable CA2255
    [ModuleInitializer]
#pragma warning restore CA2255
    internal static void Initialize() => KeepPlain();

    /// <summary>Sets TERM=dumb for .NET's console when this process is a rank whose standard output is a terminal.</summary>
    /// <returns>True when it set TERM.</returns>
    internal static bool KeepPlain()
    {
        if (OperatingSystem.IsWindows() || Console.IsOutputRedirected)
            return false; // a pipe or a file: .NET writes no control codes of its own
        if (Array.TrueForAll(s_launcherVariables, v => string.IsNullOrEmpty(Environment.GetEnvironmentVariable(v))))
            return false; // not started by a launcher: the terminal may be the user's
        Environment.SetEnvironmentVariable("TERM", "dumb");
        return true;
    }
}
