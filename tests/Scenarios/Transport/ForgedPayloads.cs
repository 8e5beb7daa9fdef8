using System.Text;

namespace Scenarios;

/// <summary>
/// Hostile object payloads built byte by byte (the layout of
/// src/System.MP/Transport/WireFormat.cs), for the rejection tests.
/// </summary>
public static class ForgedPayloads
{
    private const uint Magic = 0x52544F4D;
    private const uint Version = 2u << 8; // flags: wire format version 2, not chunked
    private const long HeaderBytes = 24;
    private const byte Builtin = 0, Named = 1, Vector = 2;
    private const byte IntCode = 8, StringCode = 1, ObjectCode = 0;

    /// <summary>Header, a type table of <paramref name="typeCount"/> entries, then <paramref name="objectCount"/> objects.</summary>
    public static byte[] Build(int typeCount, Action<BinaryWriter> table, int objectCount, Action<BinaryWriter> objects)
    {
        byte[] t = Bytes(w =>
        {
            w.Write(typeCount);
            table(w);
        });
        byte[] o = Bytes(objects);
        return Bytes(w =>
        {
            w.Write(Magic);
            w.Write(Version);
            w.Write(HeaderBytes + t.Length + 4 + o.Length);
            w.Write(t.Length);
            w.Write(0); // continuation tag
            w.Write(t);
            w.Write(objectCount);
            w.Write(o);
        });
    }

    /// <summary>
    /// The start of a chunked payload that is not one: signature, version and the chunked
    /// flag right, <paramref name="size"/> bytes (not the chunk size) announcing
    /// <paramref name="announced"/>.  The receive path once waited forever for its "rest".
    /// </summary>
    public static byte[] ChunkedStart(int size, long announced)
    {
        var b = new byte[size];
        BitConverter.TryWriteBytes(b, Magic);
        BitConverter.TryWriteBytes(b.AsSpan(4), Version | 1u);
        BitConverter.TryWriteBytes(b.AsSpan(8), announced);
        return b;
    }

    /// <summary>One object of the type named <paramref name="fullName"/> in <paramref name="assembly"/>, with an 8-byte body.</summary>
    public static byte[] OfNamedType(string fullName, string assembly) =>
        Build(1, w =>
        {
            w.Write(Named);
            Name(w, fullName);
            Name(w, assembly);
            w.Write(0UL);
            w.Write((byte)0);
        }, 1, o =>
        {
            o.Write(0);
            o.Write(0L);
        });

    /// <summary>An int[] that claims <paramref name="claimed"/> elements but carries <paramref name="present"/> bytes.</summary>
    public static byte[] IntArrayClaiming(int claimed, int present) =>
        Build(2, w =>
        {
            w.Write(Builtin);
            w.Write(IntCode);
            w.Write(Vector);
            w.Write(0);
        }, 1, o =>
        {
            o.Write(1);
            o.Write(claimed);
            o.Write(new byte[present]);
        });

    /// <summary>A string that claims <paramref name="claimed"/> characters and carries 4 bytes.</summary>
    public static byte[] StringClaiming(int claimed) =>
        Build(1, w =>
        {
            w.Write(Builtin);
            w.Write(StringCode);
        }, 1, o =>
        {
            o.Write(0);
            o.Write(claimed);
            o.Write(0);
        });

    /// <summary>An object[] of one element that refers to object 9 of 1.</summary>
    public static byte[] DanglingReference() =>
        Build(2, w =>
        {
            w.Write(Builtin);
            w.Write(ObjectCode);
            w.Write(Vector);
            w.Write(0);
        }, 1, o =>
        {
            o.Write(1);
            o.Write(1);
            o.Write(9);
        });

    /// <summary>Claims two billion objects in a few bytes.</summary>
    public static byte[] HugeObjectCount() =>
        Build(1, w =>
        {
            w.Write(Builtin);
            w.Write(IntCode);
        }, 2_000_000_000, o => o.Write(0));

    private static void Name(BinaryWriter w, string s)
    {
        byte[] b = Encoding.UTF8.GetBytes(s);
        w.Write(b.Length);
        w.Write(b);
    }

    private static byte[] Bytes(Action<BinaryWriter> write)
    {
        using var m = new MemoryStream();
        using (var w = new BinaryWriter(m, Encoding.UTF8, leaveOpen: true))
            write(w);
        return m.ToArray();
    }
}
