// How the MPI loops wait when a pass made no progress: MPI has no file descriptor to
// block on, so they poll — yielding the core for a short while after the last progress
// (answers usually follow within it), then sleeping a millisecond per pass so that an
// idle rank does not burn a core.
using System.Diagnostics;

namespace MotorService;

/// <summary>The wait between passes of a polling loop.</summary>
internal struct Backoff
{
    private const long YieldTicks = 2 * TimeSpan.TicksPerMillisecond;
    private long _lastProgress;

    /// <summary>Call after each pass: resets on progress, else yields or sleeps.</summary>
    public void After(bool progressed)
    {
        long now = Stopwatch.GetTimestamp();
        if (progressed || _lastProgress == 0)
            _lastProgress = now;
        else if (Stopwatch.GetElapsedTime(_lastProgress, now).Ticks < YieldTicks)
            Thread.Yield();
        else
            Thread.Sleep(1);
    }
}
