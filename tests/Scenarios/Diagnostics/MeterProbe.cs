using System.Runtime.CompilerServices;

namespace Scenarios;

/// <summary>Reads the System.MP meter as any in-process listener would (shared with the xUnit project).</summary>
internal static class MeterProbe
{
    /// <summary>
    /// The value of the meter's "mp.operations" instrument; -1 when no such instrument is
    /// published.  Its own method: the JIT loads the metrics assembly when it compiles this.
    /// </summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    internal static long ObserveOperations()
    {
        long seen = -1;
        using var listener = new System.Diagnostics.Metrics.MeterListener();
        listener.InstrumentPublished = (instrument, l) =>
        {
            if (instrument.Meter.Name == "System.MP" && instrument.Name == "mp.operations")
                l.EnableMeasurementEvents(instrument);
        };
        listener.SetMeasurementEventCallback<long>((_, value, _, _) => seen = value);
        listener.Start();
        listener.RecordObservableInstruments();
        return seen;
    }
}
