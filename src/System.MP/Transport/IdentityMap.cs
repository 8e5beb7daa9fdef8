using System.Collections.Generic;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;

namespace System.MP.Transport;

/// <summary>
/// Object identity to object id, for the encoder's visited set: open
/// addressing with linear probing, at most half full.  Cheaper than Dictionary
/// with ReferenceEqualityComparer (no comparer calls, no entry chains), and each
/// lookup is O(1), so encoding is linear in the number of objects (Motor's list
/// made it quadratic, §7.5).
/// </summary>
/// <remarks>
/// By default an object is keyed by its address (<see cref="ByAddress"/>): free to read,
/// where RuntimeHelpers.GetHashCode costs a runtime call, and about 200 instructions more
/// the first time an object is hashed (a graph just received and sent on, as in a ping-pong),
/// when the runtime makes up its hash code and stores it in the object's header.  The table
/// holds addresses, not references: adding an object stores no reference (no GC write
/// barrier), the map keeps nothing alive, and each entry carries the stamp of the graph that
/// added it, so <see cref="Clear"/> forgets every entry by changing the stamp.  An address
/// holds only until a garbage collection moves the object, so the encoder counts collections
/// around a graph and encodes it again with <see cref="ByAddress"/> off (a dictionary by
/// identity hash code, which never changes) if one happened meanwhile (ObjectWriter.WritePiece).
/// A lookup after such a move may miss an object already added, or find another object moved
/// to its old address: that graph's payload is discarded, and the walk still ends, since every
/// lookup either gives an id already handed out or queues an object under its new address,
/// where it is found from then on.
/// </remarks>
internal sealed class IdentityMap
{
    private const int InitialCapacity = 256;

    private struct Entry
    {
        internal nint Address;
        internal int Id;
        internal int Stamp; // the graph that added it: an entry of another stamp is empty
    }

    private Entry[] _entries = new Entry[InitialCapacity];
    private int _stamp = 1; // never 0, the stamp of a new table's entries
    private int _count;
    private Dictionary<object, int>? _byIdentity; // while !ByAddress

    internal int Capacity => _entries.Length;

    /// <summary>Key objects by address (valid while no collection moves them) rather than by identity hash code.</summary>
    internal bool ByAddress { get; set; } = true;

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static int Hash(nint address) => (int)(((ulong)address * 0x9E3779B97F4A7C15UL) >> 32);

    /// <summary>The id slot of <paramref name="key"/>, added (holding 0) when <paramref name="found"/> is false.</summary>
    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    internal ref int GetOrAdd(object key, out bool found)
    {
        if (!ByAddress)
            return ref CollectionsMarshal.GetValueRefOrAddDefault(_byIdentity ??= new(ReferenceEqualityComparer.Instance), key, out found);
        nint address = Unsafe.As<object, nint>(ref key);
        Entry[] entries = _entries;
        int mask = entries.Length - 1, stamp = _stamp;
        ref Entry first = ref MemoryMarshal.GetArrayDataReference(entries); // length a power of 2: i & mask is in range
        int i = Hash(address) & mask;
        for (; Unsafe.Add(ref first, i).Stamp == stamp; i = (i + 1) & mask)
        {
            if (Unsafe.Add(ref first, i).Address == address)
            {
                found = true;
                return ref Unsafe.Add(ref first, i).Id;
            }
        }
        found = false;
        if (2 * (_count + 1) > entries.Length)
        {
            Grow();
            return ref GetOrAdd(key, out found);
        }
        ref Entry e = ref Unsafe.Add(ref first, i);
        e.Address = address;
        e.Stamp = stamp;
        e.Id = 0;
        _count++;
        return ref e.Id;
    }

    /// <summary>Forgets every object.</summary>
    internal void Clear()
    {
        _count = 0;
        _byIdentity?.Clear();
        if (++_stamp == 0) // after 2^32 graphs a stamp would come round again: start from empty entries
        {
            Array.Clear(_entries);
            _stamp = 1;
        }
    }

    private void Grow()
    {
        Entry[] old = _entries;
        var entries = new Entry[old.Length * 2];
        int mask = entries.Length - 1;
        foreach (Entry e in old)
        {
            if (e.Stamp != _stamp)
                continue;
            int i = Hash(e.Address) & mask;
            while (entries[i].Stamp == _stamp)
                i = (i + 1) & mask;
            entries[i] = e;
        }
        _entries = entries;
    }
}
