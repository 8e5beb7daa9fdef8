namespace Npb.Common;

/// <summary>
/// A run NPB does not define: a class the benchmark has no parameters for, or a process
/// count its decomposition cannot use. Raised before any data is distributed; every rank
/// reaches the same decision from the same arguments, so no rank is left waiting, and the
/// program prints the message on rank 0 and exits with <see cref="ExitCode"/>.
/// </summary>
public sealed class RefusalException(string message) : Exception(message)
{
    /// <summary>The exit code of a refused run (verification failures exit with 1).</summary>
    public const int ExitCode = 2;
}
