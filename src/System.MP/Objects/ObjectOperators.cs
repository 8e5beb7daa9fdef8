using System.Diagnostics.CodeAnalysis;
using System.Numerics;
using System.Reflection;

namespace System.MP;

/// <summary>
/// Sum, Product, Min and Max of objects for the object reductions, made once per type from
/// the type's generic-math interfaces (<c>IAdditionOperators</c>, <c>IMultiplyOperators</c>,
/// <c>IComparisonOperators</c>; so every .NET number, BigInteger and user types that implement
/// them), else from its public operators, else (Min and Max) from <c>IComparable&lt;T&gt;</c>.
/// Strings sum by concatenation and compare ordinally.  Min and Max keep the earlier rank's
/// operand on ties, so the result does not depend on the order of equal values.
/// </summary>
/// <remarks>
/// A one-dimensional array combines element by element, each pair of elements by the element
/// type's own rule (so <c>int[]</c> sums as MPI sums a buffer, <c>string[]</c> concatenates each
/// position, <c>double[][]</c> goes two levels down); the two arrays must have the same length, and
/// a null array or one of another length makes the operation throw <see cref="ArgumentException"/>
/// (on the combining rank, which tells the others).  String concatenation is not an MPI
/// operation (MPI reduces numbers only): it is what folding strings in rank order with <c>+</c>
/// gives, and MPI's rank-order rule for non-commutative operations (MPI-4.0 §6.9.1) keeps it
/// deterministic.
/// </remarks>
[RequiresDynamicCode(Transport.Codecs.DynamicCodeMessage), RequiresUnreferencedCode(Transport.Codecs.DynamicCodeMessage)]
internal static class ObjectOperators
{
    [RequiresDynamicCode(Transport.Codecs.DynamicCodeMessage), RequiresUnreferencedCode(Transport.Codecs.DynamicCodeMessage)]
    private static class Cache<T>
    {
        internal static readonly Func<T, T, T>?[] Ops = [Make(0), Make(1), Make(2), Make(3)];

        private static Func<T, T, T>? Make(int i)
        {
            Type t = typeof(T);
            if (t.IsSZArray)
                return (Func<T, T, T>?)typeof(ObjectOperators).GetMethod(nameof(ElementWise), BindingFlags.NonPublic | BindingFlags.Static)!
                                                              .MakeGenericMethod(t.GetElementType()!).Invoke(null, [i]);
            if (t == typeof(string))
            {
                Func<string, string, string> f = i switch
                {
                    0 => string.Concat,
                    2 => (a, b) => string.CompareOrdinal(b, a) < 0 ? b : a,
                    3 => (a, b) => string.CompareOrdinal(b, a) > 0 ? b : a,
                    _ => null!,
                };
                return (Func<T, T, T>?)(object?)f;
            }
            Type generic = i switch
            {
                0 => typeof(IAdditionOperators<,,>),
                1 => typeof(IMultiplyOperators<,,>),
                _ => typeof(IComparisonOperators<,,>),
            };
            Type result = i < 2 ? t : typeof(bool);
            string helper = i switch { 0 => nameof(Add), 1 => nameof(Multiply), 2 => nameof(Less), _ => nameof(Greater) };
            // Looked up, not made: MakeGenericType would throw for a T outside the interface's constraint.
            if (Array.Exists(t.GetInterfaces(), x => x.IsGenericType && x.GetGenericTypeDefinition() == generic &&
                                                      x.GenericTypeArguments is [var a, var b, var c] && a == t && b == t && c == result))
                return (Func<T, T, T>)typeof(ObjectOperators).GetMethod(helper, BindingFlags.NonPublic | BindingFlags.Static)!
                                                           .MakeGenericMethod(t).Invoke(null, null)!;
            string name = i switch { 0 => "op_Addition", 1 => "op_Multiply", 2 => "op_LessThan", _ => "op_GreaterThan" };
            MethodInfo? m = t.GetMethod(name, BindingFlags.Public | BindingFlags.Static, [t, t]);
            if (i < 2)
                return m is not null && m.ReturnType == t ? m.CreateDelegate<Func<T, T, T>>() : null;
            if (m is not null && m.ReturnType == typeof(bool))
            {
                Func<T, T, bool> better = m.CreateDelegate<Func<T, T, bool>>();
                return (a, b) => better(b, a) ? b : a;
            }
            if (!typeof(IComparable<T>).IsAssignableFrom(t))
                return null;
            int sign = i == 2 ? -1 : 1;
            return (a, b) => Math.Sign(((IComparable<T>)b!).CompareTo(a)) == sign ? b : a;
        }
    }

    /// <summary>Sum (0), Product (1), Min (2) or Max (3) of T; null when T has no such operator.</summary>
    internal static Func<T, T, T>? For<T>(int i) => Cache<T>.Ops[i];

    /// <summary>Operation <paramref name="i"/> on arrays of <typeparamref name="TElement"/>, element by element (null: the element type has none).</summary>
    private static Func<TElement[], TElement[], TElement[]>? ElementWise<TElement>(int i)
    {
        if (For<TElement>(i) is not { } element)
            return null;
        return (a, b) =>
        {
            if (a is null || b is null || a.Length != b.Length)
                throw new ArgumentException(SR.Format(SR.ObjectArrayOperands, a?.Length ?? -1, b?.Length ?? -1));
            var result = new TElement[a.Length];
            for (int k = 0; k < result.Length; k++)
                result[k] = element(a[k], b[k]);
            return result;
        };
    }

    private static Func<T, T, T> Add<T>() where T : IAdditionOperators<T, T, T> => (a, b) => a + b;

    private static Func<T, T, T> Multiply<T>() where T : IMultiplyOperators<T, T, T> => (a, b) => a * b;

    // The later rank's operand wins only when strictly better: ties keep the earlier one.
    private static Func<T, T, T> Less<T>() where T : IComparisonOperators<T, T, bool> => (a, b) => b < a ? b : a;

    private static Func<T, T, T> Greater<T>() where T : IComparisonOperators<T, T, bool> => (a, b) => b > a ? b : a;
}
