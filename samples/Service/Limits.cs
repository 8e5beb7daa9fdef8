// The bounds of a request (written in solver.proto too): rank 0 checks them before a call
// is taken, so no rank ever starts on a request that would run for hours or overflow.
namespace MotorService;

/// <summary>The largest request the service takes; above a limit the call fails with INVALID_ARGUMENT.</summary>
public static class Limits
{
    /// <summary>Pi's intervals (minutes of work on a few ranks: such a call wants a deadline).</summary>
    public const long MaxIntervals = 1_000_000_000_000;

    /// <summary>Later calls a Pi call may wait for (<see cref="Work.HoldForLaterCalls"/>).</summary>
    public const int MaxHoldForLaterCalls = 100;

    /// <summary>Plates in one Heat call.</summary>
    public const int MaxPlates = 4096;

    /// <summary>Interior cells along either side of a plate (two arrays of 2050² doubles: 67 MB).</summary>
    public const int MaxPlateSide = 2048;

    /// <summary>Jacobi sweeps of a Heat call.</summary>
    public const int MaxSteps = 1_000_000;

    /// <summary>Cells of all plates times the sweeps: the cell updates of a Heat call.</summary>
    public const long MaxCellUpdates = 1_000_000_000_000;

    /// <summary>Why <paramref name="request"/> is above a limit, or null when it is within them all.</summary>
    public static string? Violation(PiRequest request) =>
        Above("intervals", request.Intervals, MaxIntervals)
        ?? Outside("hold_for_later_calls", request.HoldForLaterCalls, 0, MaxHoldForLaterCalls);

    /// <summary>Why <paramref name="request"/> is above a limit, or null when it is within them all.</summary>
    public static string? Violation(HeatRequest request)
    {
        if ((Above("plates", request.Plates.Count, MaxPlates) ?? Above("steps", request.Steps, MaxSteps)) is { } count)
            return count;
        long cells = 0;
        foreach (Plate p in request.Plates)
        {
            if ((Above($"plate {p.Id}: width", p.Width, MaxPlateSide) ?? Above($"plate {p.Id}: height", p.Height, MaxPlateSide)) is { } side)
                return side;
            cells += (long)Math.Max(p.Width, 0) * Math.Max(p.Height, 0); // at most 4096 · 2048²
        }
        // At most 1.8·10^10 cells times 10^6 steps: the product fits a long.
        long updates = cells * request.Steps;
        return updates > MaxCellUpdates
            ? $"{cells} cells × {request.Steps} steps = {updates} cell updates is above the limit of {MaxCellUpdates} (solver.proto)"
            : null;
    }

    private static string? Above(string what, long value, long limit) =>
        value > limit ? $"{what} = {value} is above the limit of {limit} (solver.proto)" : null;

    private static string? Outside(string what, long value, long min, long max) =>
        value < min || value > max ? $"{what} = {value} is outside the limits {min} to {max} (solver.proto)" : null;
}
