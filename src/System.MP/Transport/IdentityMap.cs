using System.Runtime.CompilerServices;

namespace System.MP.Transport;

/// <summary>
/// Object identity to object id, for the encoder's visited set: open
/// addressing with linear probing, at most half full.  Cheaper than Dictionary
/// with ReferenceEqualityComparer (no comparer calls, no entry chains), and each
/// lookup is O(1), so encoding is linear in the number of objects (Motor's list
/// made it quadratic, §7.5).
/// </summary>
/// <remarks>
/// By default an object is hashed by its address (<see cref="ByAddress"/>): free to read,
/// where RuntimeHelpers.GetHashCode costs a runtime call, and about 200 instructions more
/// the first time an object is hashed (a graph just received and sent on, as in a ping-pong),
/// when the runtime makes up its hash code and stores it in the object's header.  An address
/// holds only until a garbage collection moves the object, so the encoder counts collections
/// around a graph and encodes it again with <see cref="ByAddress"/> off (identity hash codes,
/// which never change) if one happened meanwhile (ObjectWriter.WritePiece).  A lookup after
/// such a move may miss an object already added and add it again: that graph's payload is
/// discarded, and the walk still ends, since an object added again under its new address is
/// found there from then on.
/// </remarks>
internal sealed class IdentityMap
{
    private const int InitialCapacity = 256;

    private ObjectSlot[] _keys = new ObjectSlot[InitialCapacity]; // a struct array: stores need no covariance check
    private int[] _ids = new int[InitialCapacity];
    private int _count;

    // Slots filled since the last Clear, while there are at most FilledSlots of them: a small
    // graph's Clear empties those slots instead of the whole table (2 KiB at the initial size).
    private const int FilledSlots = 64;
    private readonly int[] _filled = new int[FilledSlots];

    internal int Capacity => _keys.Length;

    /// <summary>Hash objects by address (valid while no collection moves them) rather than by identity hash code.</summary>
    internal bool ByAddress { get; set; } = true;

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private int Hash(object key) =>
        ByAddress ? (int)(((ulong)Unsafe.As<object, nint>(ref key) * 0x9E3779B97F4A7C15UL) >> 32) : RuntimeHelpers.GetHashCode(key);

    /// <summary>The id slot of <paramref name="key"/>, added (holding 0) when <paramref name="found"/> is false.</summary>
    internal ref int GetOrAdd(object key, out bool found)
    {
        ObjectSlot[] keys = _keys;
        int mask = keys.Length - 1;
        int i = Hash(key) & mask;
        for (object? k; (k = keys[i].Value) is not null; i = (i + 1) & mask)
        {
            if (ReferenceEquals(k, key))
            {
                found = true;
                return ref _ids[i];
            }
        }
        found = false;
        if (2 * (_count + 1) > keys.Length)
        {
            Grow();
            return ref GetOrAdd(key, out found);
        }
        keys[i].Value = key;
        if (_count < FilledSlots)
            _filled[_count] = i;
        _count++;
        _ids[i] = 0;
        return ref _ids[i];
    }

    /// <summary>Forgets every object (the map must not keep the graph alive).</summary>
    internal void Clear()
    {
        if (_count > FilledSlots)
        {
            Array.Clear(_keys);
        }
        else
        {
            ObjectSlot[] keys = _keys;
            for (int j = 0; j < _count; j++)
                keys[_filled[j]].Value = null;
        }
        _count = 0;
    }

    private void Grow()
    {
        ObjectSlot[] oldKeys = _keys;
        int[] oldIds = _ids;
        _keys = new ObjectSlot[oldKeys.Length * 2];
        _ids = new int[oldKeys.Length * 2];
        int mask = _keys.Length - 1, moved = 0;
        for (int j = 0; j < oldKeys.Length; j++)
        {
            if (oldKeys[j].Value is not object k)
                continue;
            int i = Hash(k) & mask;
            while (_keys[i].Value is not null)
                i = (i + 1) & mask;
            _keys[i].Value = k;
            _ids[i] = oldIds[j];
            if (moved < FilledSlots)
                _filled[moved++] = i; // the slots moved: Clear stays right whatever the sizes
        }
    }
}
