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

    internal const int Opaque = 0, Int8 = 1, UInt8 = 2, Int16 = 3, UInt16 = 4, Int32 = 5, UInt32 = 6,
        Int64 = 7, UInt64 = 8, Float = 9, Double = 10, Bool = 11, FloatInt = 12, DoubleInt = 13,
        LongInt = 14, TwoInt = 15, ShortInt = 16;

    private static int Classify()
    {
        Type t = typeof(T);
        if (t == typeof(sbyte)) return Int8;
        if (t == typeof(byte)) return UInt8;
        if (t == typeof(short)) return Int16;
        if (t == typeof(ushort) || t == typeof(char)) return UInt16;
        if (t == typeof(int)) return Int32;
        if (t == typeof(uint)) return UInt32;
        if (t == typeof(long) || (t == typeof(nint) && IntPtr.Size == 8)) return Int64;
        if (t == typeof(ulong) || (t == typeof(nuint) && IntPtr.Size == 8)) return UInt64;
        if (t == typeof(float)) return Float;
        if (t == typeof(double)) return Double;
        if (t == typeof(bool)) return Bool;
        if (t == typeof(ValueIndex<float>)) return FloatInt;
        if (t == typeof(ValueIndex<double>)) return DoubleInt;
        if (t == typeof(ValueIndex<long>)) return LongInt;
        if (t == typeof(ValueIndex<int>)) return TwoInt;
        if (t == typeof(ValueIndex<short>)) return ShortInt;
        if (t.IsEnum)
            return Type.GetTypeCode(Enum.GetUnderlyingType(t)) switch
            {
                TypeCode.SByte => Int8, TypeCode.Byte => UInt8, TypeCode.Int16 => Int16,
                TypeCode.UInt16 => UInt16, TypeCode.Int32 => Int32, TypeCode.UInt32 => UInt32,
                TypeCode.Int64 => Int64, _ => UInt64,
            };
        return Opaque;
    }

    internal static bool IsInteger => Code is >= Int8 and <= UInt64;
    internal static bool IsFloat => Code is Float or Double;
    internal static bool IsPair => Code is >= FloatInt and <= ShortInt;
}
