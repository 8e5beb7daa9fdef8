using System.Diagnostics;

namespace System.MP;

/// <summary>
/// System.MP's share of <c>MOTOR_STARTUP_TRACE=1</c>: under motor, the phases of its start and
/// shutdown on stderr, in the host's format and on its clock ("motor[pid]: ms phase", counted
/// from the host's first mark, which motor passes as the runtime property Motor.StartupTrace:
/// CLOCK_MONOTONIC in ns, the clock of <see cref="Stopwatch"/> on Linux).  Off otherwise.
/// </summary>
internal static class StartupTrace
{
    private static readonly long s_start = AppContext.GetData("Motor.StartupTrace") is string s && long.TryParse(s, out long t) ? t : -1;

    internal static void Mark(string phase)
    {
        if (s_start < 0)
            return;
        double ms = (Stopwatch.GetTimestamp() - s_start) * (1000.0 / Stopwatch.Frequency);
        Console.Error.WriteLine($"motor[{Environment.ProcessId}]: {ms,8:F2} ms {phase}");
    }
}
