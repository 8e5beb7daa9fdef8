using System.Diagnostics.CodeAnalysis;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;

namespace System.MP.Transport;

/// <summary>
/// Arrays of every rank: a vector has its length, a multi-dimensional array
/// one length per dimension (shape kept, row-major elements); the elements
/// follow, handled by the subclass.  Every length is checked against the
/// bytes left before anything is allocated.
/// </summary>
internal abstract unsafe class ArrayCodec<T> : TypeCodec, ISliceWriter
{
    private readonly bool _isVector;
    private readonly int _rank;

    protected ArrayCodec(Type arrayType) : base(arrayType)
    {
        _isVector = arrayType.IsSZArray;
        _rank = arrayType.GetArrayRank();
    }

    /// <summary>One-dimensional and zero-based (T[]).</summary>
    private protected bool IsVector => _isVector;

    /// <summary>Bytes one element takes in the payload (at least 1, so a count bounds the allocation).</summary>
    protected abstract long ElementBytes { get; }

    // A run of elements: what follows the count of a vector, and of a list, set or dictionary
    // (CollectionCodecs), which travel their elements exactly as an array of them does.

    /// <summary>Bytes one element of a run takes.</summary>
    internal long RunElementBytes => ElementBytes;

    /// <summary>The elements hold references: a run is decoded in pass 2, once every object exists.</summary>
    internal abstract bool RunHasReferences { get; }

    /// <summary>Writes <paramref name="elements"/> as a run (without a count).</summary>
    internal void WriteRun(ObjectWriter writer, Span<T> elements) => WriteElements(writer, elements);

    /// <summary>Decodes a run at <paramref name="body"/> into <paramref name="elements"/> (pass 2 when <see cref="RunHasReferences"/>).</summary>
    internal virtual void ReadRun(ObjectReader reader, Span<T> elements, byte* body) => FillElements(reader, elements, body);

    protected abstract void WriteElements(ObjectWriter writer, Span<T> elements);

    /// <summary>Reads or defers the elements, which start at the reader's position.</summary>
    protected abstract void ReadElements(ObjectReader reader, Array array, Span<T> elements);

    internal override void Write(ObjectWriter writer, object obj)
    {
        var array = (Array)obj;
        WriteSlice(writer, array, 0, array.Length);
    }

    /// <summary>Writes elements [offset, offset + count) of a vector, or a whole multi-dimensional array.</summary>
    public void WriteSlice(ObjectWriter writer, Array array, int offset, int count)
    {
        if (_isVector)
        {
            *(int*)writer.Reserve(4) = count;
        }
        else
        {
            int* dims = (int*)writer.Reserve(4L * _rank);
            for (int d = 0; d < _rank; d++)
            {
                if (array.GetLowerBound(d) != 0)
                    throw new TransportException(SR.Format(SR.LowerBounds, TransportErrors.Name(Type)));
                dims[d] = array.GetLength(d);
            }
        }
        WriteElements(writer, Elements(array).Slice(offset, count));
    }

    internal override object Create(ObjectReader reader)
    {
        Array array;
        if (_isVector)
        {
            array = NewVector(reader.ReadCount(ElementBytes));
        }
        else
        {
            var lengths = new int[_rank];
            long total = 1;
            for (int d = 0; d < _rank; d++)
            {
                lengths[d] = reader.ReadInt32();
                total *= lengths[d];
                if (lengths[d] < 0 || total * ElementBytes > reader.Remaining)
                    throw TransportErrors.Malformed(SR.Format(SR.PayloadCount, lengths[d], reader.Remaining));
            }
            array = Array.CreateInstanceFromArrayType(Type, lengths);
        }
        ReadElements(reader, array, Elements(array));
        return array;
    }

    /// <summary>A vector for <see cref="Create"/> to fill.</summary>
    protected virtual T[] NewVector(int length) => new T[length];

    internal override void Fill(ObjectReader reader, object obj, byte* body)
    {
        var array = (Array)obj;
        FillElements(reader, Elements(array), body);
    }

    protected virtual void FillElements(ObjectReader reader, Span<T> elements, byte* body)
    {
    }

    /// <summary>All elements of an array of any rank, in memory (row-major) order.</summary>
    private static Span<T> Elements(Array array) =>
        MemoryMarshal.CreateSpan(ref Unsafe.As<byte, T>(ref MemoryMarshal.GetArrayDataReference(array)), array.Length);
}

/// <summary>Elements without references (primitives, enums, plain structs): one block copy.</summary>
internal sealed unsafe class BlockArrayCodec<T> : ArrayCodec<T> where T : struct
{
    public BlockArrayCodec(Type arrayType) : base(arrayType)
    {
    }

    protected override long ElementBytes => Unsafe.SizeOf<T>();

    internal override bool RunHasReferences => false;

    internal override void ReadRun(ObjectReader reader, Span<T> elements, byte* body) =>
        CopyIn(body, elements, (long)elements.Length * Unsafe.SizeOf<T>());

    /// <summary>
    /// A large vector is not zeroed first (<see cref="ReadElements"/> overwrites every byte, or
    /// throws and the array is dropped): the large object heap allocates it alone, so the
    /// zeroing skipped is all of it.  A small one is allocated as usual: an uninitialized
    /// allocation always takes the runtime's slow path and gets an allocation context of its
    /// own size, so the next small objects need a fresh context, which is zeroed anyway
    /// (callgrind: 265 instructions more per 4 KiB vector, perf/callgrind-objects.sh 1).
    /// </summary>
    protected override T[] NewVector(int length) =>
        (long)length * Unsafe.SizeOf<T>() >= LargeObjectBytes ? GC.AllocateUninitializedArray<T>(length) : new T[length];

    private const int LargeObjectBytes = 85_000; // the GC's large object threshold (default GCLOHThreshold)

    /// <summary>A vector in one step: its length and its elements in one reservation, no span slicing or virtual calls.</summary>
    internal override void Write(ObjectWriter writer, object obj)
    {
        if (!IsVector)
        {
            base.Write(writer, obj);
            return;
        }
        T[] vector = Unsafe.As<T[]>(obj); // the codec of exactly this array type: the writer looked it up by the object's type
        long bytes = (long)vector.Length * Unsafe.SizeOf<T>();
        byte* p = writer.Reserve(4 + bytes);
        *(int*)p = vector.Length;
        CopyOut(vector, p + 4, bytes);
    }

    /// <summary>A vector in one step (see <see cref="Write"/>).</summary>
    internal override object Create(ObjectReader reader)
    {
        if (!IsVector)
            return base.Create(reader);
        T[] vector = NewVector(reader.ReadCount(Unsafe.SizeOf<T>()));
        CopyIn(reader, vector);
        return vector;
    }

    protected override void WriteElements(ObjectWriter writer, Span<T> elements)
    {
        long bytes = (long)elements.Length * Unsafe.SizeOf<T>();
        CopyOut(elements, writer.Reserve(bytes), bytes);
    }

    protected override void ReadElements(ObjectReader reader, Array array, Span<T> elements) => CopyIn(reader, elements);

    private static void CopyOut(Span<T> elements, byte* p, long bytes)
    {
        fixed (byte* src = &Unsafe.As<T, byte>(ref MemoryMarshal.GetReference(elements)))
            BlockCopy.Copy(src, p, bytes);
    }

    private static void CopyIn(ObjectReader reader, Span<T> elements)
    {
        long bytes = (long)elements.Length * Unsafe.SizeOf<T>();
        CopyIn(reader.Take(bytes), elements, bytes);
    }

    private static void CopyIn(byte* p, Span<T> elements, long bytes)
    {
        fixed (byte* dst = &Unsafe.As<T, byte>(ref MemoryMarshal.GetReference(elements)))
        {
            BlockCopy.Copy(p, dst, bytes);
            if (typeof(T) == typeof(bool))
                for (long i = 0; i < bytes; i++)
                    dst[i] = dst[i] != 0 ? (byte)1 : (byte)0;
        }
    }
}

/// <summary>Structs holding followed references: element by element through the struct's generated code.</summary>
internal sealed unsafe class StructArrayCodec<T> : ArrayCodec<T> where T : struct
{
    private readonly StructShape<T> _shape;

    public StructArrayCodec(Type arrayType, StructShape<T> shape) : base(arrayType) => _shape = shape;

    private StructShape<T> Shape => _shape;

    protected override long ElementBytes => Shape.WireBytes;

    internal override bool RunHasReferences => Shape.HasReferences;

    protected override void WriteElements(ObjectWriter writer, Span<T> elements)
    {
        int size = Shape.WireBytes;
        byte* p = writer.Reserve((long)elements.Length * size);
        for (int i = 0; i < elements.Length; i++)
            Shape.Encode(writer, ref elements[i], p + (long)i * size);
    }

    protected override void ReadElements(ObjectReader reader, Array array, Span<T> elements)
    {
        byte* body = reader.Take((long)elements.Length * Shape.WireBytes);
        if (Shape.HasReferences)
            reader.Defer(array, this, body);
        else
            FillElements(reader, elements, body);
    }

    protected override void FillElements(ObjectReader reader, Span<T> elements, byte* body)
    {
        int size = Shape.WireBytes;
        for (int i = 0; i < elements.Length; i++)
            Shape.Decode(reader, ref elements[i], body + (long)i * size);
    }
}

/// <summary>Elements of reference type: one object id each, resolved in pass 2 and checked to be a <typeparamref name="T"/>.</summary>
internal sealed unsafe class ReferenceArrayCodec<T> : ArrayCodec<T> where T : class
{
    public ReferenceArrayCodec(Type arrayType) : base(arrayType)
    {
    }

    protected override long ElementBytes => WireFormat.IdBytes;

    internal override bool RunHasReferences => true;

    protected override void WriteElements(ObjectWriter writer, Span<T> elements)
    {
        int* ids = (int*)writer.Reserve((long)elements.Length * WireFormat.IdBytes);
        for (int i = 0; i < elements.Length; i++)
            ids[i] = writer.Ref(elements[i]);
    }

    protected override void ReadElements(ObjectReader reader, Array array, Span<T> elements) =>
        reader.Defer(array, this, reader.Take((long)elements.Length * WireFormat.IdBytes));

    protected override void FillElements(ObjectReader reader, Span<T> elements, byte* body)
    {
        for (int i = 0; i < elements.Length; i++)
            elements[i] = reader.Ref<T>(Unsafe.ReadUnaligned<int>(body + 4L * i))!;
    }
}
