using System.Diagnostics;
using System.Diagnostics.CodeAnalysis;
using System.Diagnostics.Tracing;

namespace System.MP;

/// <summary>
/// The EventSource "System.MP": one event per MPI operation while the profile is on
/// (<see cref="MpiProfile"/>, any mode, <c>events</c> for these alone), for
/// <c>dotnet-trace collect --providers System.MP</c> and any other EventPipe or in-process
/// listener.  Written at the operation's end with its name, bytes, peer and duration.
/// </summary>
[EventSource(Name = "System.MP")]
internal sealed class MpiEventSource : EventSource
{
    internal static readonly MpiEventSource Log = new();

    private MpiEventSource()
    {
    }

    /// <summary>Writes the operation's event when a listener has enabled this source.</summary>
    [NonEvent]
    internal void Operation(ProfiledCall call, long begin, long end, long bytes, int peer)
    {
        if (IsEnabled())
            Operation(ProfiledCalls.Names[(int)call], bytes, peer, (end - begin) * 1e6 / Stopwatch.Frequency);
    }

    /// <summary>One MPI operation of this rank: which, its bytes (a receive: its buffer's), its peer rank (-1: none) and how long it took.</summary>
    [UnconditionalSuppressMessage("Trimming", "IL2026", Justification = "The payload is a string and primitives, which trimming keeps.")]
    [Event(1, Level = EventLevel.Informational, Message = "{0}: {1} bytes, peer {2}, {3} µs")]
    private unsafe void Operation(string Name, long Bytes, int Peer, double DurationMicroseconds)
    {
        fixed (char* name = Name)
        {
            EventData* data = stackalloc EventData[4];
            data[0] = new EventData { DataPointer = (nint)name, Size = (Name.Length + 1) * sizeof(char) };
            data[1] = new EventData { DataPointer = (nint)(&Bytes), Size = sizeof(long) };
            data[2] = new EventData { DataPointer = (nint)(&Peer), Size = sizeof(int) };
            data[3] = new EventData { DataPointer = (nint)(&DurationMicroseconds), Size = sizeof(double) };
            WriteEventCore(1, 4, data);
        }
    }
}
