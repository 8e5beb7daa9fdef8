using System.Collections.Generic;
using System.Diagnostics.CodeAnalysis;
using System.MP.CompilerServices;
using System.Runtime.CompilerServices;

namespace System.MP.Transport;

/// <summary>A boxed primitive, decimal or enum: its bytes.  Any bit pattern is a valid value (bools are normalized).</summary>
internal sealed unsafe class ScalarCodec<T> : TypeCodec where T : struct
{
    public ScalarCodec() : base(typeof(T)) =>
        LayoutHash = typeof(T).IsEnum ? (ulong)Type.GetTypeCode(typeof(T)) : 0;

    internal override void Write(ObjectWriter writer, object obj) =>
        Unsafe.WriteUnaligned(writer.Reserve(Unsafe.SizeOf<T>()), Unsafe.Unbox<T>(obj));

    internal override object Create(ObjectReader reader)
    {
        T value = Unsafe.ReadUnaligned<T>(reader.Take(Unsafe.SizeOf<T>()));
        if (typeof(T) == typeof(bool))
            Unsafe.As<T, byte>(ref value) = Unsafe.As<T, byte>(ref value) != 0 ? (byte)1 : (byte)0;
        return value;
    }
}

/// <summary>A string: its length and UTF-16 code units (any sequence of code units is a valid .NET string).</summary>
internal sealed unsafe class StringCodec : TypeCodec
{
    public StringCodec() : base(typeof(string))
    {
    }

    internal override void Write(ObjectWriter writer, object obj)
    {
        string s = (string)obj;
        byte* p = writer.Reserve(4 + 2L * s.Length);
        *(int*)p = s.Length;
        fixed (char* c = s)
            BlockCopy.Copy((byte*)c, p + 4, 2L * s.Length);
    }

    internal override object Create(ObjectReader reader)
    {
        int length = reader.ReadCount(2);
        return new string((char*)reader.Take(2L * length), 0, length);
    }
}

/// <summary>A type that may be named in a payload but never instantiated: object (as an element or argument type) and abstract classes.</summary>
internal sealed class NamedOnlyCodec : TypeCodec
{
    public NamedOnlyCodec(Type type, ulong layoutHash = 0) : base(type) => LayoutHash = layoutHash;

    internal override bool IsInstantiable => false;

    internal override void Write(ObjectWriter writer, object obj) =>
        throw new TransportException(SR.Format(SR.NotTransportable, TransportErrors.Name(Type)));

    internal override object Create(ObjectReader reader) =>
        throw new TransportException(SR.Format(SR.PayloadNotInstantiable, TransportErrors.Name(Type)));
}

/// <summary>
/// A [Transportable] class: a fixed-size body of its flattened fields (base
/// classes first).  Created with RuntimeHelpers.GetUninitializedObject: no
/// constructor, initializer, setter or callback of the type runs.
/// </summary>
[RequiresDynamicCode(Codecs.DynamicCodeMessage)]
[RequiresUnreferencedCode(Codecs.DynamicCodeMessage)]
internal sealed unsafe class ClassCodec : TypeCodec
{
    private readonly int _bodyBytes;
    private readonly bool _hasReferences;
    private readonly ClassEncoder _encode;
    private readonly ClassDecoder _decode;

    public ClassCodec(Type type) : base(type)
    {
        List<Leaf> leaves = CodecEmitter.Flatten(type, out _bodyBytes);
        LayoutHash = CodecEmitter.LayoutHash(type, leaves, _bodyBytes);
        _hasReferences = leaves.Exists(l => l.Kind == LeafKind.Reference);
        _encode = CodecEmitter.ClassEncoderFor(type, leaves);
        _decode = CodecEmitter.ClassDecoderFor(type, leaves);
    }

    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    internal override void Write(ObjectWriter writer, object obj) => _encode(writer, obj, writer.Reserve(_bodyBytes));

    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    internal override object Create(ObjectReader reader)
    {
        byte* body = reader.Take(_bodyBytes);
        object obj = RuntimeHelpers.GetUninitializedObject(Type);
        if (_hasReferences)
            reader.Defer(obj, this, body);
        else
            _decode(reader, obj, body);
        return obj;
    }

    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    internal override void Fill(ObjectReader reader, object obj, byte* body) => _decode(reader, obj, body);
}

/// <summary>
/// How a struct travels inside bodies and arrays: one block when it holds no
/// references (padding included), else its flattened leaves at least one byte,
/// written by the generated codec (<see cref="Generated"/>) or by IL built at run time
/// (<see cref="RunTime"/>); both write the same bytes.
/// </summary>
internal sealed unsafe class StructShape<T> where T : struct
{
    private static StructShape<T>? s_generated, s_runTime;

    /// <summary>The shape through the registered generated codec.</summary>
    internal static StructShape<T> Generated => s_generated ??= new StructShape<T>(GeneratedStruct<T>.Codec!);

    /// <summary>The shape through code generated at run time.</summary>
    internal static StructShape<T> RunTime
    {
        [RequiresDynamicCode(Codecs.DynamicCodeMessage)]
        [RequiresUnreferencedCode(Codecs.DynamicCodeMessage)]
        get => s_runTime ??= new StructShape<T>();
    }

    internal readonly int WireBytes;
    internal readonly bool IsBlock;
    internal readonly bool HasReferences;
    internal readonly ulong LayoutHash;
    private readonly GeneratedCodec<T>? _generated;
    private readonly StructEncoder<T>? _encode;
    private readonly StructDecoder<T>? _decode;

    private StructShape(GeneratedCodec<T> generated)
    {
        IsBlock = !RuntimeHelpers.IsReferenceOrContainsReferences<T>();
        HasReferences = generated.HasReferences;
        WireBytes = IsBlock ? Unsafe.SizeOf<T>() : Math.Max(generated.BodyBytes, 1);
        LayoutHash = CodecRegistry.GeneratedLayoutHash(generated, WireBytes);
        _generated = generated;
    }

    [RequiresDynamicCode(Codecs.DynamicCodeMessage)]
    [RequiresUnreferencedCode(Codecs.DynamicCodeMessage)]
    private StructShape()
    {
        List<Leaf> leaves = CodecEmitter.Flatten(typeof(T), out int bytes);
        IsBlock = !RuntimeHelpers.IsReferenceOrContainsReferences<T>();
        HasReferences = leaves.Exists(l => l.Kind == LeafKind.Reference);
        WireBytes = IsBlock ? Unsafe.SizeOf<T>() : Math.Max(bytes, 1);
        LayoutHash = CodecEmitter.LayoutHash(typeof(T), leaves, WireBytes);
        if (!IsBlock)
        {
            _encode = CodecEmitter.StructEncoderFor<T>(leaves);
            _decode = CodecEmitter.StructDecoderFor<T>(leaves);
        }
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal void Encode(ObjectWriter writer, ref T value, byte* body)
    {
        if (IsBlock)
            Unsafe.WriteUnaligned(body, value);
        else if (_generated is not null)
            _generated.Encode(new ObjectEncoder(writer), ref value, ref *body);
        else
            _encode!(writer, ref value, body);
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal void Decode(ObjectReader reader, ref T value, byte* body)
    {
        if (IsBlock)
            value = Unsafe.ReadUnaligned<T>(body);
        else if (_generated is not null)
            _generated.Decode(new ObjectDecoder(reader), ref value, ref *body);
        else
            _decode!(reader, ref value, body);
    }
}

/// <summary>A boxed [Transportable] struct: one struct body.</summary>
internal sealed unsafe class StructCodec<T> : TypeCodec where T : struct
{
    private readonly StructShape<T> _shape;

    public StructCodec(StructShape<T> shape) : base(typeof(T))
    {
        _shape = shape;
        LayoutHash = shape.LayoutHash;
    }

    internal override void Write(ObjectWriter writer, object obj) =>
        _shape.Encode(writer, ref Unsafe.Unbox<T>(obj), writer.Reserve(_shape.WireBytes));

    internal override object Create(ObjectReader reader)
    {
        byte* body = reader.Take(_shape.WireBytes);
        object boxed = default(T);
        if (_shape.HasReferences)
            reader.Defer(boxed, this, body);
        else
            _shape.Decode(reader, ref Unsafe.Unbox<T>(boxed), body);
        return boxed;
    }

    internal override void Fill(ObjectReader reader, object obj, byte* body) =>
        _shape.Decode(reader, ref Unsafe.Unbox<T>(obj), body);
}
