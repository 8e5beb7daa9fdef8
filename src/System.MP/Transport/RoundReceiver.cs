namespace System.MP.Transport;

/// <summary>
/// A payload an object collective receives in rounds (OBcast's chunks, OScatter's slices): the
/// buffer grows only by bytes that arrived, never by what the root announced, and the header
/// is checked against the announced size as soon as it is in.  A payload refused there is
/// still taken off the wire round by round (into one chunk of scratch), so every rank's
/// rounds stay matched and the communicator stays usable; the refusal is thrown at the end.
/// </summary>
internal unsafe struct RoundReceiver(NativeBuffer buffer, long announced)
{
    private long _received;
    private bool _checked;
    private string? _refused;

    /// <summary>Where the next <paramref name="part"/> bytes go.</summary>
    internal byte* Next(long part)
    {
        if (_refused is not null)
        {
            buffer.EnsureCapacity(part); // scratch: the bytes are dropped
            return buffer.Pointer;
        }
        buffer.EnsureCapacity(_received + part);
        return buffer.Pointer + _received;
    }

    /// <summary>Records that <paramref name="part"/> bytes arrived at <see cref="Next"/>.</summary>
    internal void Arrived(long part)
    {
        if (_refused is null)
            _received += part;
        if (!_checked && (_received >= WireFormat.HeaderBytes || _received >= announced))
        {
            _checked = true;
            _refused = HeaderProblem(buffer.Pointer, _received, announced);
        }
    }

    /// <summary>The payload, once every round arrived; a refused header throws <see cref="TransportException"/>.</summary>
    internal readonly byte* Payload => _refused is null ? buffer.Pointer : throw TransportErrors.Malformed(_refused);

    /// <summary>
    /// Signature, version and known flags, and a total that is the announced size (a payload
    /// too short for a header is left to the decoder, which refuses it).
    /// </summary>
    private static string? HeaderProblem(byte* p, long received, long announced)
    {
        if (received < WireFormat.HeaderBytes)
            return null;
        if (PayloadChannel.SignatureProblem(p) is string problem)
            return problem;
        long total = *(long*)(p + WireFormat.OffsetTotal);
        return total == announced ? null : SR.Format(SR.PayloadAnnouncedTotal, announced, total);
    }
}
