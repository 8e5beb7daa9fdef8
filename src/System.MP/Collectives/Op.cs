using System.Diagnostics.CodeAnalysis;
using System.MP.Interop;
using System.Reflection;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;

namespace System.MP;

/// <summary>
/// A reduction operation for Reduce, Allreduce, Scan, Exscan, ReduceScatter and
/// ReduceScatterBlock: one of MPI's built-in operations, or a C# function
/// (<see cref="Create{T}"/>).
/// </summary>
/// <remarks>
/// <see cref="Sum"/>, <see cref="Product"/>, <see cref="Min"/> and <see cref="Max"/>
/// also reduce a user struct that defines the matching public operators (as the
/// .NET generic-math interfaces <c>IAdditionOperators</c>, <c>IMultiplyOperators</c>
/// and <c>IComparisonOperators</c> require): they run as C# operations made from
/// those operators, with the rules of <see cref="Create{T}"/> (blocking collectives
/// only).  Product of such a struct is not assumed commutative (matrices,
/// quaternions): MPI combines its operands in rank order.
/// </remarks>
public sealed unsafe class Op : IDisposable
{
    private const int CodeUser = -1;

    /// <summary>Sum of numbers (MPI_SUM).</summary>
    public static readonly Op Sum = new(CoreOp.Sum, nameof(Sum));
    /// <summary>Product of numbers (MPI_PROD).</summary>
    public static readonly Op Product = new(CoreOp.Prod, nameof(Product));
    /// <summary>Minimum of numbers (MPI_MIN).</summary>
    public static readonly Op Min = new(CoreOp.Min, nameof(Min));
    /// <summary>Maximum of numbers (MPI_MAX).</summary>
    public static readonly Op Max = new(CoreOp.Max, nameof(Max));
    /// <summary>Logical and of bools or integers (MPI_LAND).</summary>
    public static readonly Op LogicalAnd = new(CoreOp.Land, nameof(LogicalAnd));
    /// <summary>Logical or of bools or integers (MPI_LOR).</summary>
    public static readonly Op LogicalOr = new(CoreOp.Lor, nameof(LogicalOr));
    /// <summary>Logical exclusive or of bools or integers (MPI_LXOR).</summary>
    public static readonly Op LogicalXor = new(CoreOp.Lxor, nameof(LogicalXor));
    /// <summary>Bitwise and of integers (MPI_BAND).</summary>
    public static readonly Op BitwiseAnd = new(CoreOp.Band, nameof(BitwiseAnd));
    /// <summary>Bitwise or of integers (MPI_BOR).</summary>
    public static readonly Op BitwiseOr = new(CoreOp.Bor, nameof(BitwiseOr));
    /// <summary>Bitwise exclusive or of integers (MPI_BXOR).</summary>
    public static readonly Op BitwiseXor = new(CoreOp.Bxor, nameof(BitwiseXor));
    /// <summary>Minimum value with its index, over <see cref="ValueIndex{T}"/> elements (MPI_MINLOC).</summary>
    public static readonly Op MinLoc = new(CoreOp.Minloc, nameof(MinLoc));
    /// <summary>Maximum value with its index, over <see cref="ValueIndex{T}"/> elements (MPI_MAXLOC).</summary>
    public static readonly Op MaxLoc = new(CoreOp.Maxloc, nameof(MaxLoc));
    /// <summary>The origin value replaces the target's (MPI_REPLACE): one-sided accumulates only (<see cref="Window{T}"/>).</summary>
    public static readonly Op Replace = new(CoreOp.Replace, nameof(Replace));
    /// <summary>The target is left as it is (MPI_NO_OP): an atomic read by <see cref="Window{T}.GetAccumulate"/> or <see cref="Window{T}.FetchAndOp"/> only.</summary>
    public static readonly Op NoOp = new(CoreOp.NoOp, nameof(NoOp));

    private readonly int _code;
    private readonly string _name;
    private readonly Impl? _impl;
    private GCHandle _implHandle;
    private OpHandle _handle; // a user operation's, once made (OpHandle.None until then)

    [ThreadStatic]
    private static Exception? t_pending;

    private Op(int code, string name)
    {
        _code = code;
        _name = name;
    }

    private Op(Impl impl, bool commutative, string? name = null)
    {
        _code = CodeUser;
        _name = name ?? $"user operation on {impl.ElementType.Name}";
        _impl = impl;
        IsCommutative = commutative;
    }

    /// <summary>
    /// Creates an operation from a function.  It must be associative; MPI
    /// combines elements as <c>function(earlierRanks, laterRanks)</c>, so a
    /// non-commutative function gets its operands in rank order.
    /// </summary>
    /// <typeparam name="T">
    /// The element type: a struct without references (<c>unmanaged</c>) for the buffer collectives, or
    /// any type the object reductions take (a [Transportable] class, a string, an array...) for
    /// <see cref="Communicator.OReduce{T}(T, Op, int)"/>, <see cref="Communicator.OAllreduce{T}(T, Op)"/>,
    /// OScan, OExscan and OReduceScatter.  A buffer collective over another element type refuses the
    /// operation with <see cref="ArgumentException"/> before anything is sent.
    /// </typeparam>
    /// <param name="function">The combining function, applied element by element.</param>
    /// <param name="commutative">False when the order of operands matters (the object reductions always fold in rank order).</param>
    /// <remarks>
    /// In the buffer collectives it is usable in blocking collectives only: MPI calls it inside the collective.
    /// An exception it throws surfaces as an <see cref="MpiException"/> on the
    /// rank where it was thrown, after the collective returns; when MPI also
    /// failed in that collective, MPI's error is thrown instead, with the
    /// function's exception as its <see cref="Exception.InnerException"/>.
    /// Either way the next collective on the thread starts afresh.
    /// </remarks>
    public static Op Create<T>(Func<T, T, T> function, bool commutative = true)
    {
        ArgumentNullException.ThrowIfNull(function);
        return new Op(new Impl<T>(function), commutative);
    }

    /// <summary>True for MPI's built-in commutative operations and user operations created as commutative.</summary>
    public bool IsCommutative { get; } = true;

    /// <summary>True for operations made by <see cref="Create{T}"/>.</summary>
    public bool IsUserDefined => _code == CodeUser;

    /// <summary>Frees a user operation's MPI object; built-in operations ignore it.</summary>
    public void Dispose()
    {
        if (_handle != OpHandle.None && Mpi.IsInitialized)
            Core.OpFree(_handle);
        _handle = OpHandle.None;
        if (_implHandle.IsAllocated)
            _implHandle.Free();
    }

    /// <inheritdoc/>
    public override string ToString() => _name;

    /// <summary>
    /// The operation that reduces elements of T: this one, or for Sum, Product, Min
    /// and Max of a type that is not a built-in number, the C# operation made from
    /// T's operators (this one, which <see cref="HandleFor"/> then refuses, when T has none).
    /// </summary>
    internal Op For<T>() where T : unmanaged
    {
        if (_code is < CoreOp.Sum or > CoreOp.Max || ElementType<T>.IsInteger || ElementType<T>.IsFloat)
            return this;
        return OperatorOps<T>.Get(_code - CoreOp.Sum) ?? this;
    }

    /// <summary>Sum, Product, Min and Max of T made from T's operators, once per type (null: T lacks them).</summary>
    private static class OperatorOps<T> where T : unmanaged
    {
        private static readonly Op?[] s_ops = new Op?[4];
        private static readonly bool[] s_made = new bool[4];

        internal static Op? Get(int i)
        {
            lock (s_ops)
            {
                if (!s_made[i])
                {
                    s_ops[i] = FromOperators<T>(CoreOp.Sum + i);
                    s_made[i] = true;
                }
                return s_ops[i];
            }
        }
    }

    [UnconditionalSuppressMessage("Trimming", "IL2090",
        Justification = "A trimmed-away operator means the type has none here: the op is refused with ArgumentException, as for any type without it.")]
    private static Op? FromOperators<T>(int code) where T : unmanaged
    {
        Type t = typeof(T);
        const BindingFlags Public = BindingFlags.Public | BindingFlags.Static;
        string name = code switch { CoreOp.Sum => "op_Addition", CoreOp.Prod => "op_Multiply", CoreOp.Min => "op_LessThan", _ => "op_GreaterThan" };
        MethodInfo? m = t.GetMethod(name, Public, [t, t]);
        string opName = $"{(code switch { CoreOp.Sum => nameof(Sum), CoreOp.Prod => nameof(Product), CoreOp.Min => nameof(Min), _ => nameof(Max) })} of {t.Name} (its {name})";
        if (code is CoreOp.Sum or CoreOp.Prod)
        {
            if (m is null || m.ReturnType != t)
                return null;
            return new Op(new Impl<T>(m.CreateDelegate<Func<T, T, T>>()), commutative: code == CoreOp.Sum, opName);
        }
        if (m is null || m.ReturnType != typeof(bool))
            return null;
        // The later rank's operand wins only when strictly better, so ties keep the earlier one.
        Func<T, T, bool> better = m.CreateDelegate<Func<T, T, bool>>();
        return new Op(new Impl<T>((a, b) => better(b, a) ? b : a), commutative: true, opName);
    }

    /// <summary>
    /// The function that combines objects of T in the object reductions: a user operation's
    /// own function, or Sum, Product, Min and Max made from T's operators (ObjectOperators).
    /// </summary>
    [RequiresDynamicCode(Transport.Codecs.DynamicCodeMessage), RequiresUnreferencedCode(Transport.Codecs.DynamicCodeMessage)]
    internal Func<T, T, T> ObjectFunction<T>(string paramName) =>
        _impl?.Function as Func<T, T, T>
        ?? (_code is >= CoreOp.Sum and <= CoreOp.Max ? ObjectOperators.For<T>(_code - CoreOp.Sum) : null)

        ?? throw new ArgumentException(SR.Format(SR.OpNotForType, _name, typeof(T).Name), paramName);

    /// <summary>The core's handle of the operation for elements of T: a built-in's code or a user operation's
    /// handle; throws ArgumentException when the op does not apply to T.</summary>
    internal OpHandle HandleFor<T>(string paramName) where T : unmanaged
    {
        bool ok = _code switch
        {
            CoreOp.Sum or CoreOp.Prod or CoreOp.Min or CoreOp.Max => ElementType<T>.IsInteger || ElementType<T>.IsFloat,
            CoreOp.Land or CoreOp.Lor or CoreOp.Lxor => ElementType<T>.IsInteger || ElementType<T>.Code == CoreDType.Bool,
            CoreOp.Band or CoreOp.Bor or CoreOp.Bxor => ElementType<T>.IsInteger,
            CoreOp.Minloc or CoreOp.Maxloc => ElementType<T>.IsPair,
            CoreOp.Replace or CoreOp.NoOp => true,

            _ => _impl!.ElementType == typeof(T),
        };
        if (!ok)
            throw new ArgumentException(SR.Format(SR.OpNotForType, _name, typeof(T).Name), paramName);
        if (_code != CodeUser)
            return new OpHandle(_code);
        if (_handle == OpHandle.None)
            CreateHandle();
        return _handle;
    }

    private void CreateHandle()
    {
        lock (_impl!)
        {
            if (_handle != OpHandle.None)
                return;
            Mpi.EnsureInitialized();
            if (!_implHandle.IsAllocated)
                _implHandle = GCHandle.Alloc(_impl);
            OpHandle h = OpHandle.None;
            int rc = Core.OpCreate(&Invoke, (void*)GCHandle.ToIntPtr(_implHandle), IsCommutative ? 1 : 0, &h);
            ThrowHelper.Check(rc);
            _handle = h;
        }
    }

    /// <summary>
    /// Ends a blocking collective that ran a user operation on this thread (<paramref name="rc"/>:
    /// the core's result).  Takes what the operation threw, on every path, so that nothing is left
    /// for a later collective (whose operation would skip its data and which would throw this one's
    /// error), then throws MPI's error with the operation's exception inside, or the operation's alone.
    /// </summary>
    internal static void EndCollective(int rc)
    {
        Exception? e = t_pending;
        t_pending = null;
        if (rc < 0)
            throw ThrowHelper.CoreException(rc, inner: e);
        if (e is not null)
            throw new MpiException(SR.UserOpThrew, e);
    }

    [UnmanagedCallersOnly(CallConvs = [typeof(CallConvCdecl)])]
    private static void Invoke(void* input, void* inout, long count, void* state)
    {
        if (t_pending is not null)
            return; // already failed during this collective: leave the data alone
        try
        {
            ((Impl)GCHandle.FromIntPtr((nint)state).Target!).Apply(input, inout, count);
        }
        catch (Exception e)
        {
            t_pending = e;
        }
    }

    private abstract class Impl
    {
        internal abstract Type ElementType { get; }
        internal abstract Delegate Function { get; }
        internal abstract void Apply(void* input, void* inout, long count);
    }

    // Any T: an object reduction only calls the function.  MPI calls Apply only through a handle,
    // which HandleFor makes for an unmanaged T alone, so the elements it walks are plain values.
    private sealed class Impl<T>(Func<T, T, T> function) : Impl
    {
        internal override Type ElementType => typeof(T);

        internal override Delegate Function => function;

        internal override void Apply(void* input, void* inout, long count)
        {
            ref T a = ref Unsafe.AsRef<T>(input), b = ref Unsafe.AsRef<T>(inout);
            for (nint i = 0; i < (nint)count; i++)
                Unsafe.Add(ref b, i) = function(Unsafe.Add(ref a, i), Unsafe.Add(ref b, i));
        }
    }
}
