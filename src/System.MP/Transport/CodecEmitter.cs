using System.Collections.Generic;
using System.MP.CompilerServices;
using System.Diagnostics.CodeAnalysis;
using System.Reflection;
using System.Reflection.Emit;
using System.Runtime.CompilerServices;

namespace System.MP.Transport;

/// <summary>Writes the fields of a class instance into its fixed-size body at <paramref name="body"/>.</summary>
internal unsafe delegate void ClassEncoder(ObjectWriter writer, object obj, byte* body);

/// <summary>Fills the fields of a class instance from its body.</summary>
internal unsafe delegate void ClassDecoder(ObjectReader reader, object obj, byte* body);

/// <summary>Writes the fields of a struct into its fixed-size body.</summary>
internal unsafe delegate void StructEncoder<T>(ObjectWriter writer, ref T value, byte* body);

/// <summary>Fills the fields of a struct from its body.</summary>
internal unsafe delegate void StructDecoder<T>(ObjectReader reader, ref T value, byte* body);

/// <summary>One value that travels in a body: a primitive, a block of bytes, or a followed reference.</summary>
internal enum LeafKind { Primitive, Blit, Reference }

/// <summary>A leaf of a type's flattened fields: the field path from the object, and where it sits in the body.</summary>
internal sealed record Leaf(FieldInfo[] Path, LeafKind Kind, Type Type, int Offset, int Size);

/// <summary>
/// Generates each type's encoder and decoder once, as IL in a DynamicMethod: the run-time
/// path, for types the System.MP source generator wrote no codec for (generic types, F# and
/// VB projects, MOTOR_OBJECT_CODECS=runtime).  A DynamicMethod with skipped visibility
/// stores straight into private and readonly fields (also of base classes in other
/// assemblies) and works on structs by reference, so the body of an object is a run of
/// plain loads and stores at constant offsets with no per-object reflection and no boxing;
/// the generated codecs do the same through UnsafeAccessor and write the same bytes.
/// Nested structs are flattened into their leaves at generation time;
/// structs without references travel as one block.
/// </summary>
[RequiresDynamicCode(Codecs.DynamicCodeMessage)]
[RequiresUnreferencedCode(Codecs.DynamicCodeMessage)]
internal static unsafe class CodecEmitter
{
    private const BindingFlags InstanceFields = BindingFlags.Instance | BindingFlags.Public | BindingFlags.NonPublic | BindingFlags.DeclaredOnly;

    /// <summary>The leaves of <paramref name="type"/>'s instance fields (base classes first for a class).</summary>
    internal static List<Leaf> Flatten(Type type, out int bodyBytes)
    {
        var leaves = new List<Leaf>();
        int offset = 0;
        var chain = new List<Type>();
        for (Type? t = type; t is not null && t != typeof(object) && t != typeof(ValueType); t = t.BaseType)
            chain.Add(t);
        for (int i = chain.Count - 1; i >= 0; i--)
            AddFields(chain[i], [], leaves, ref offset);
        bodyBytes = offset;
        return leaves;
    }

    private static void AddFields(Type declaring, FieldInfo[] prefix, List<Leaf> leaves, ref int offset)
    {
        FieldInfo[] fields = declaring.GetFields(InstanceFields);
        Array.Sort(fields, (a, b) => a.MetadataToken.CompareTo(b.MetadataToken));
        foreach (FieldInfo f in fields)
        {
            FieldInfo[] path = [.. prefix, f];
            Type ft = f.FieldType;
            if (ft.IsPointer || ft.IsFunctionPointer || ft.IsUnmanagedFunctionPointer)
                continue; // an address means nothing on another rank
            if (ft.IsPrimitive || ft.IsEnum)
            {
                int size = PrimitiveSize(ft);
                leaves.Add(new Leaf(path, LeafKind.Primitive, ft, offset, size));
                offset += size;
            }
            else if (ft.IsValueType && !Codecs.ContainsReferences(ft))
            {
                int size = RuntimeHelpers.SizeOf(ft.TypeHandle);
                leaves.Add(new Leaf(path, LeafKind.Blit, ft, offset, size));
                offset += size;
            }
            else if (ft.IsValueType)
            {
                AddFields(ft, path, leaves, ref offset); // nested struct with references: its own rules
            }
            else if (f.IsDefined(typeof(TransportableAttribute), inherit: false))
            {
                leaves.Add(new Leaf(path, LeafKind.Reference, ft, offset, WireFormat.IdBytes));
                offset += WireFormat.IdBytes;
            }
            // an unmarked reference field does not travel: it arrives null
        }
    }

    internal static int PrimitiveSize(Type t)
    {
        t = t.IsEnum ? Enum.GetUnderlyingType(t) : t;
        return t == typeof(nint) || t == typeof(nuint) ? 8 : RuntimeHelpers.SizeOf(t.TypeHandle);
    }

    /// <summary>A hash of the flattened layout, compared by the receiver so that differing builds of a type are refused.</summary>
    internal static ulong LayoutHash(Type type, List<Leaf> leaves, int extra)
    {
        var h = new TransportLayoutHash(); // the same hash generated codecs compute (CodecRegistry.GeneratedLayoutHash)
        h.Add(type.Name);
        h.Add(extra);
        foreach (Leaf l in leaves)
        {
            foreach (FieldInfo f in l.Path)
                h.Add(f.Name);
            h.Add(l.Type.Name);
            h.Add((int)l.Kind * 1000 + l.Size);
        }
        return h.Value;
    }

    internal static ClassEncoder ClassEncoderFor(Type type, List<Leaf> leaves) =>
        (ClassEncoder)Emit(type, leaves, byRef: false, encode: true).CreateDelegate(typeof(ClassEncoder));

    internal static ClassDecoder ClassDecoderFor(Type type, List<Leaf> leaves) =>
        (ClassDecoder)Emit(type, leaves, byRef: false, encode: false).CreateDelegate(typeof(ClassDecoder));

    internal static StructEncoder<T> StructEncoderFor<T>(List<Leaf> leaves) =>
        (StructEncoder<T>)Emit(typeof(T), leaves, byRef: true, encode: true).CreateDelegate(typeof(StructEncoder<T>));

    internal static StructDecoder<T> StructDecoderFor<T>(List<Leaf> leaves) =>
        (StructDecoder<T>)Emit(typeof(T), leaves, byRef: true, encode: false).CreateDelegate(typeof(StructDecoder<T>));

    private static readonly MethodInfo s_writerRef = typeof(ObjectWriter).GetMethod(nameof(ObjectWriter.Ref), BindingFlags.Instance | BindingFlags.NonPublic)!;
    private static readonly MethodInfo s_readerRef = typeof(ObjectReader).GetMethod(nameof(ObjectReader.RefUnchecked), BindingFlags.Instance | BindingFlags.NonPublic)!;
    private static readonly MethodInfo s_badReference = typeof(ObjectReader).GetMethod(nameof(ObjectReader.BadReference), BindingFlags.Instance | BindingFlags.NonPublic)!;
    private static readonly MethodInfo s_typeFromHandle = typeof(Type).GetMethod(nameof(Type.GetTypeFromHandle))!;
    private static readonly MethodInfo s_getType = typeof(object).GetMethod(nameof(object.GetType))!;
    private static readonly MethodInfo s_typeEquals = typeof(Type).GetMethod("op_Equality", [typeof(Type), typeof(Type)])!;

    /// <summary>
    /// (writer|reader, object|ref T, byte* body): for each leaf, the address of
    /// its field (the instance, then ldflda down the path) and of its bytes in
    /// the body, then a load/store pair or a block copy.  References go
    /// through ObjectWriter.Ref (object to id) and ObjectReader.RefUnchecked (id to
    /// an object), checked in line to be an F.
    /// </summary>
    private static DynamicMethod Emit(Type type, List<Leaf> leaves, bool byRef, bool encode)
    {
        Type first = encode ? typeof(ObjectWriter) : typeof(ObjectReader);
        var dm = new DynamicMethod((encode ? "MotorEncode_" : "MotorDecode_") + type.Name, typeof(void),
            [first, byRef ? type.MakeByRefType() : typeof(object), typeof(byte*)], typeof(CodecEmitter).Module, skipVisibility: true);
        ILGenerator il = dm.GetILGenerator();
        // A class codec is only ever handed an instance of exactly its type (the writer looks the
        // codec up by the object's type, the reader created the object), so the object argument is
        // used as it is, without a castclass per object (CastHelpers.ChkCastClass: ~17 instructions).
        foreach (Leaf leaf in leaves)
        {
            FieldInfo field = leaf.Path[^1];
            if (encode)
            {
                BodyAddress(il, leaf.Offset);
                if (leaf.Kind == LeafKind.Reference)
                    il.Emit(OpCodes.Ldarg_0);
                Owner(il, leaf.Path);
                if (leaf.Kind == LeafKind.Blit)
                {
                    il.Emit(OpCodes.Ldflda, field);
                    BlockCopy(il, leaf.Size);
                    continue;
                }
                il.Emit(OpCodes.Ldfld, field);
                if (leaf.Kind == LeafKind.Reference)
                    il.Emit(OpCodes.Call, s_writerRef);
                Store(il, leaf.Kind == LeafKind.Reference ? typeof(int) : leaf.Type);
            }
            else
            {
                Owner(il, leaf.Path);
                if (leaf.Kind == LeafKind.Blit)
                {
                    il.Emit(OpCodes.Ldflda, field);
                    BodyAddress(il, leaf.Offset);
                    BlockCopy(il, leaf.Size);
                    continue;
                }
                if (leaf.Kind == LeafKind.Reference)
                    CheckedReference(il, leaf);
                else
                {
                    BodyAddress(il, leaf.Offset);
                    Load(il, leaf.Type);
                }
                il.Emit(OpCodes.Stfld, field);
            }
        }
        il.Emit(OpCodes.Ret);
        return dm;
    }

    /// <summary>
    /// Pushes the object a reference leaf names, checked in line to be of the field's type
    /// (ObjectReader.Ref&lt;F&gt; did this through a shared generic and a cast helper per reference):
    /// <c>o = reader.RefUnchecked(id); o is null, exactly an F, or else (isinst) an F; else throw reader.BadReference(id, F)</c>.
    /// </summary>
    private static void CheckedReference(ILGenerator il, Leaf leaf)
    {
        LocalBuilder obj = il.DeclareLocal(typeof(object));
        Label store = il.DefineLabel(), storeNull = il.DefineLabel(), storeObj = il.DefineLabel();
        il.Emit(OpCodes.Ldarg_0);
        BodyAddress(il, leaf.Offset);
        Load(il, typeof(int));
        il.Emit(OpCodes.Call, s_readerRef);
        il.Emit(OpCodes.Stloc, obj);
        il.Emit(OpCodes.Ldloc, obj);
        il.Emit(OpCodes.Brfalse, storeNull); // id 0: null stored
        if (ExactTypeFirst(leaf.Type))
        {
            // Mostly the object is exactly an F: obj.GetType() == typeof(F), which the JIT makes one
            // method-table comparison (isinst of a class that is not sealed, or of an array type, calls a cast helper).
            il.Emit(OpCodes.Ldloc, obj);
            il.Emit(OpCodes.Callvirt, s_getType);
            il.Emit(OpCodes.Ldtoken, leaf.Type);
            il.Emit(OpCodes.Call, s_typeFromHandle);
            il.Emit(OpCodes.Call, s_typeEquals);
            il.Emit(OpCodes.Brtrue, storeObj);
        }
        il.Emit(OpCodes.Ldloc, obj);
        il.Emit(OpCodes.Isinst, leaf.Type);
        il.Emit(OpCodes.Dup);
        il.Emit(OpCodes.Brtrue, store); // an F: stored
        il.Emit(OpCodes.Pop);
        il.Emit(OpCodes.Ldarg_0);
        BodyAddress(il, leaf.Offset);
        Load(il, typeof(int));
        il.Emit(OpCodes.Ldtoken, leaf.Type);
        il.Emit(OpCodes.Call, s_typeFromHandle);
        il.Emit(OpCodes.Call, s_badReference);
        il.Emit(OpCodes.Throw);
        il.MarkLabel(storeNull);
        il.Emit(OpCodes.Ldnull);
        il.Emit(OpCodes.Br, store);
        il.MarkLabel(storeObj);
        il.Emit(OpCodes.Ldloc, obj);
        il.MarkLabel(store);
    }

    /// <summary>A class an object can be exactly (not object, an interface or an abstract class).</summary>
    private static bool ExactTypeFirst(Type t) => t != typeof(object) && !t.IsInterface && !t.IsAbstract;

    private static void BodyAddress(ILGenerator il, int offset)
    {
        il.Emit(OpCodes.Ldarg_2);
        if (offset != 0)
        {
            il.Emit(OpCodes.Ldc_I4, offset);
            il.Emit(OpCodes.Add);
        }
    }

    /// <summary>Pushes the object or managed pointer whose field is the path's last element.</summary>
    private static void Owner(ILGenerator il, FieldInfo[] path)
    {
        il.Emit(OpCodes.Ldarg_1);
        for (int i = 0; i < path.Length - 1; i++)
            il.Emit(OpCodes.Ldflda, path[i]);
    }

    private static void BlockCopy(ILGenerator il, int size)
    {
        il.Emit(OpCodes.Ldc_I4, size);
        il.Emit(OpCodes.Unaligned, (byte)1);
        il.Emit(OpCodes.Cpblk);
    }

    private static void Store(ILGenerator il, Type t)
    {
        t = t.IsEnum ? Enum.GetUnderlyingType(t) : t;
        if (t == typeof(nint))
            il.Emit(OpCodes.Conv_I8);
        else if (t == typeof(nuint))
            il.Emit(OpCodes.Conv_U8);
        il.Emit(OpCodes.Unaligned, (byte)1);
        il.Emit(Type.GetTypeCode(t) switch
        {
            TypeCode.Boolean or TypeCode.Byte or TypeCode.SByte => OpCodes.Stind_I1,
            TypeCode.Int16 or TypeCode.UInt16 or TypeCode.Char => OpCodes.Stind_I2,
            TypeCode.Int32 or TypeCode.UInt32 => OpCodes.Stind_I4,
            TypeCode.Single => OpCodes.Stind_R4,
            TypeCode.Double => OpCodes.Stind_R8,
            _ => OpCodes.Stind_I8, // long, ulong, nint, nuint
        });
    }

    private static void Load(ILGenerator il, Type t)
    {
        t = t.IsEnum ? Enum.GetUnderlyingType(t) : t;
        il.Emit(OpCodes.Unaligned, (byte)1);
        il.Emit(Type.GetTypeCode(t) switch
        {
            TypeCode.Boolean or TypeCode.Byte => OpCodes.Ldind_U1,
            TypeCode.SByte => OpCodes.Ldind_I1,
            TypeCode.Int16 => OpCodes.Ldind_I2,
            TypeCode.UInt16 or TypeCode.Char => OpCodes.Ldind_U2,
            TypeCode.Int32 => OpCodes.Ldind_I4,
            TypeCode.UInt32 => OpCodes.Ldind_U4,
            TypeCode.Single => OpCodes.Ldind_R4,
            TypeCode.Double => OpCodes.Ldind_R8,
            _ => OpCodes.Ldind_I8,
        });
        if (t == typeof(bool))
        {
            // any non-zero byte is true; store a canonical 1
            il.Emit(OpCodes.Ldc_I4_0);
            il.Emit(OpCodes.Cgt_Un);
        }
        else if (t == typeof(nint))
        {
            il.Emit(OpCodes.Conv_I);
        }
        else if (t == typeof(nuint))
        {
            il.Emit(OpCodes.Conv_U);
        }
    }
}
