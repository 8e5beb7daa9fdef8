using System.MP.Interop;
using System.Runtime.CompilerServices;

namespace System.MP;

/// <summary>
/// A value with the rank (or index) it came from: the element of MinLoc and
/// MaxLoc reductions (MPI_FLOAT_INT, MPI_DOUBLE_INT, MPI_LONG_INT, MPI_2INT,
/// MPI_SHORT_INT for float, double, long, int and short values).
/// </summary>
/// <typeparam name="T">float, double, long, int or short.</typeparam>
/// <param name="value">The value compared.</param>
/// <param name="index">The index carried with it.</param>
public struct ValueIndex<T>(T value, int index) : IEquatable<ValueIndex<T>> where T : unmanaged, IEquatable<T>
{
    /// <summary>The value compared.</summary>
    public T Value = value;

    /// <summary>The index (usually a rank) carried with it; ties keep the smallest.</summary>
    public int Index = index;

    /// <inheritdoc/>
    public readonly bool Equals(ValueIndex<T> other) => Value.Equals(other.Value) && Index == other.Index;

    /// <inheritdoc/>
    public override readonly bool Equals(object? obj) => obj is ValueIndex<T> v && Equals(v);

    /// <inheritdoc/>
    public override readonly int GetHashCode() => HashCode.Combine(Value, Index);

    /// <summary>Compares value and index.</summary>
    public static bool operator ==(ValueIndex<T> left, ValueIndex<T> right) => left.Equals(right);

    /// <summary>Compares value and index.</summary>
    public static bool operator !=(ValueIndex<T> left, ValueIndex<T> right) => !left.Equals(right);

    /// <inheritdoc/>
    public override readonly string ToString() => $"({Value}, {Index})";
}

/// <summary>mpcore's element type code for T (mp_dtype), decided once per T.</summary>
internal static class ElementType<T> where T : unmanaged
{
    internal static readonly int Code = Classify();
    internal static readonly int Size = Unsafe.SizeOf<T>();

    private static int Classify()
    {
        Type t = typeof(T);
        if (t == typeof(sbyte)) return CoreDType.Int8;
        if (t == typeof(byte)) return CoreDType.Uint8;
        if (t == typeof(short)) return CoreDType.Int16;
        if (t == typeof(ushort) || t == typeof(char)) return CoreDType.Uint16;
        if (t == typeof(int)) return CoreDType.Int32;
        if (t == typeof(uint)) return CoreDType.Uint32;
        if (t == typeof(long) || (t == typeof(nint) && IntPtr.Size == 8)) return CoreDType.Int64;
        if (t == typeof(ulong) || (t == typeof(nuint) && IntPtr.Size == 8)) return CoreDType.Uint64;
        if (t == typeof(float)) return CoreDType.Float;
        if (t == typeof(double)) return CoreDType.Double;
        if (t == typeof(bool)) return CoreDType.Bool;
        if (t == typeof(ValueIndex<float>)) return CoreDType.FloatInt;
        if (t == typeof(ValueIndex<double>)) return CoreDType.DoubleInt;
        if (t == typeof(ValueIndex<long>)) return CoreDType.LongInt;
        if (t == typeof(ValueIndex<int>)) return CoreDType.IntInt;
        if (t == typeof(ValueIndex<short>)) return CoreDType.ShortInt;
        if (t.IsEnum)
            return Type.GetTypeCode(Enum.GetUnderlyingType(t)) switch
            {
                TypeCode.SByte => CoreDType.Int8, TypeCode.Byte => CoreDType.Uint8, TypeCode.Int16 => CoreDType.Int16,
                TypeCode.UInt16 => CoreDType.Uint16, TypeCode.Int32 => CoreDType.Int32, TypeCode.UInt32 => CoreDType.Uint32,
                TypeCode.Int64 => CoreDType.Int64, _ => CoreDType.Uint64,
            };
        return CoreDType.Opaque;
    }

    internal static bool IsInteger => Code is >= CoreDType.Int8 and <= CoreDType.Uint64;
    internal static bool IsFloat => Code is CoreDType.Float or CoreDType.Double;
    internal static bool IsPair => Code is >= CoreDType.FloatInt and <= CoreDType.ShortInt;
}
