using System.Runtime.CompilerServices;

namespace System.MP.Transport;

/// <summary>
/// An element of an array of objects that stores without the covariance check an object[]
/// store makes (CastHelpers.StelemRef): the encoder's object queue, the decoder's objects by id.
/// </summary>
internal struct ObjectSlot
{
    internal object? Value;

    /// <summary>Empties the first <paramref name="count"/> slots (so they keep no graph alive).</summary>
    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    internal static void Clear(ObjectSlot[] slots, int count)
    {
        if (count > 16)
        {
            Array.Clear(slots, 0, count);
            return;
        }
        for (int i = 0; i < count; i++)
            slots[i].Value = null;
    }
}
