using System.Diagnostics.CodeAnalysis;
using System.Runtime.CompilerServices;

namespace System.MP.Transport;

/// <summary>
/// Entry points of the serializer for the communicator and for tests:
/// encode an object into pooled native memory, decode a payload from bytes.
/// </summary>
internal static unsafe class ObjectTransport
{
    /// <summary>An encoded payload in a rented buffer; return it with <see cref="Release"/>.</summary>
    internal readonly struct Encoded
    {
        internal readonly NativeBuffer Buffer;
        internal readonly long Start;
        internal readonly long Length;

        internal Encoded(NativeBuffer buffer, long start, long length)
        {
            Buffer = buffer;
            Start = start;
            Length = length;
        }

        internal byte* Pointer => Buffer.Pointer + Start;

        internal void Release() => BufferPool.Return(Buffer);
    }

    /// <summary>Encodes <paramref name="obj"/> (or a vector slice of it) into a rented buffer.</summary>
    /// <exception cref="TransportException">Something in the graph may not travel.</exception>
    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    internal static Encoded Encode(object? obj, Array? slice = null, int offset = 0, int count = 0)
    {
        NativeBuffer buffer = BufferPool.Rent(BufferPool.InitialBytes);
        ObjectWriter w = ObjectWriter.Rent(buffer, 0);
        try
        {
            long start = w.WritePiece(obj, slice, offset, count);
            return new Encoded(buffer, start, w.Position - start);
        }
        catch
        {
            BufferPool.Return(buffer);
            throw;
        }
        finally
        {
            w.Return();
        }
    }

    /// <summary>A payload as a managed array (tests, fuzzing).</summary>
    internal static byte[] EncodeToArray(object? obj)
    {
        Encoded e = Encode(obj);
        try
        {
            return new ReadOnlySpan<byte>(e.Pointer, checked((int)e.Length)).ToArray();
        }
        finally
        {
            e.Release();
        }
    }

    /// <summary>Decodes a payload held in managed memory (tests, fuzzing).</summary>
    internal static object? Decode(ReadOnlySpan<byte> payload)
    {
        fixed (byte* p = payload)
            return PayloadChannel.Decode(p, payload.Length);
    }
}
