using System.MP.Interop;
using System.Diagnostics.CodeAnalysis;
using System.MP.Transport;

namespace System.MP;

// Object reductions: any [Transportable] type or string, combined by a C#
// function.  The algorithm is gather, combine, share: every rank's value travels to one rank
// as its own payload (the split representation of OGather), that rank folds them from the
// left in rank order — ((v0 ∘ v1) ∘ v2) ∘ … — and the outcome goes back by OBcast (OAllreduce)
// or by the split representation of OScatter (OScan, OExscan, OReduceScatter).  So the result
// is exactly the serial fold: the function need not be commutative, and even floating-point
// results do not depend on the number of ranks' tree shape (MPI-4.0 §6.9.1 asks only for
// associativity and leaves the bracketing to the library).  The combining rank holds every
// value at once and does p - 1 combinations: the right trade for the object graphs these
// operations are for, and no more traffic than a gather and a broadcast.
//
// A function that throws does so on the combining rank only; that rank tells the others and
// every rank throws MpiException: there its InnerException is the function's exception,
// elsewhere the message names the rank, the exception type and its message.  The job goes on.
public partial class Communicator
{
    /// <summary>
    /// Combines one object per rank at <paramref name="root"/>: the values of ranks 0, 1, …, Size-1
    /// folded from the left, <c>op(op(v0, v1), v2)…</c>.  Collective; intracommunicators only.
    /// </summary>
    /// <remarks>
    /// The values meet at the root, which runs <paramref name="op"/> Size - 1 times in rank order;
    /// the function is assumed associative, not commutative, and the result is exactly the serial
    /// fold.  When <paramref name="op"/> throws, every rank throws <see cref="MpiException"/>: at the
    /// root with the function's exception as InnerException, elsewhere naming it.
    /// </remarks>
    /// <param name="value">This rank's value (a [Transportable] object, string, array, number...).</param>
    /// <param name="op">The combining function.</param>
    /// <param name="root">Rank that gets the result.</param>
    /// <returns>At the root, the combined value; default elsewhere.</returns>
    /// <exception cref="MpiException">The function threw (on the root, or reported by it).</exception>
    /// <exception cref="TransportException">A rank's value may not travel (every rank throws), or a malformed payload.</exception>
    [RequiresDynamicCode(ObjectsNeedDynamicCode), RequiresUnreferencedCode(ObjectsNeedDynamicCode)]
    public T? OReduce<T>(T value, Func<T, T, T> op, int root)
    {
        CommHandle h = Handle;
        RequireIntra("OReduce");
        ArgumentNullException.ThrowIfNull(op);
        CheckRoot(root);
        T[]? values = GatherValues(value, root, h);
        if (_rank != root)
        {
            ThrowIfRootFailed(Bcast(0L, root), root);
            return default;
        }
        T result = Combine(values!, op, out Failure failure);
        Bcast(failure.Marker, root);
        if (failure.Happened)
            ThrowFailure(failure, root);
        return result;
    }

    /// <summary>
    /// <see cref="OReduce{T}(T, Func{T, T, T}, int)"/> with <see cref="Op.Sum"/>, <see cref="Op.Product"/>,
    /// <see cref="Op.Min"/>, <see cref="Op.Max"/>, or an operation made by <see cref="Op.Create{T}"/>:
    /// the built-in operations work through T's generic-math operators (<c>IAdditionOperators</c>,
    /// <c>IMultiplyOperators</c>, <c>IComparisonOperators</c>, or the matching public operators), strings
    /// sum by concatenation and compare ordinally.  Min and Max keep the earlier rank's value on ties.
    /// </summary>
    /// <param name="value">This rank's value.</param>
    /// <param name="op">The operation.</param>
    /// <param name="root">Rank that gets the result.</param>
    /// <exception cref="ArgumentException"><paramref name="op"/> is not defined for T (on the rank that passed it, before anything is sent).</exception>
    [RequiresDynamicCode(ObjectsNeedDynamicCode), RequiresUnreferencedCode(ObjectsNeedDynamicCode)]
    public T? OReduce<T>(T value, Op op, int root) => OReduce(value, ObjectOp<T>(op), root);

    /// <summary>
    /// Combines one object per rank as <see cref="OReduce{T}(T, Func{T, T, T}, int)"/> does (at rank 0)
    /// and gives every rank the result: rank 0 its own, the others a copy.  Collective; intracommunicators only.
    /// </summary>
    /// <param name="value">This rank's value.</param>
    /// <param name="op">The combining function (run on rank 0 only, in rank order).</param>
    /// <returns>The combined value.</returns>
    /// <exception cref="MpiException">The function threw (on rank 0, or reported by it).</exception>
    /// <exception cref="TransportException">A value or the result may not travel (every rank throws), or a malformed payload.</exception>
    [RequiresDynamicCode(ObjectsNeedDynamicCode), RequiresUnreferencedCode(ObjectsNeedDynamicCode)]
    public T? OAllreduce<T>(T value, Func<T, T, T> op)
    {
        CommHandle h = Handle;
        RequireIntra("OAllreduce");
        ArgumentNullException.ThrowIfNull(op);
        T[]? values = GatherValues(value, 0, h);
        Failure failure = default;
        T? result = _rank == 0 ? Combine(values!, op, out failure) : default;
        return BcastObject(result, 0, h, failure);
    }

    /// <summary><see cref="OAllreduce{T}(T, Func{T, T, T})"/> with a built-in operation (see <see cref="OReduce{T}(T, Op, int)"/>).</summary>
    /// <param name="value">This rank's value.</param>
    /// <param name="op">The operation.</param>
    /// <exception cref="ArgumentException"><paramref name="op"/> is not defined for T.</exception>
    [RequiresDynamicCode(ObjectsNeedDynamicCode), RequiresUnreferencedCode(ObjectsNeedDynamicCode)]
    public T? OAllreduce<T>(T value, Op op) => OAllreduce(value, ObjectOp<T>(op));

    /// <summary>
    /// Inclusive prefix reduction of objects: rank r gets <c>op(…op(op(v0, v1), v2)…, vr)</c>
    /// (rank 0 its value).  The prefixes are folded on rank 0 in rank order. Collective; intracommunicators only.
    /// </summary>
    /// <param name="value">This rank's value.</param>
    /// <param name="op">The combining function (run on rank 0 only).</param>
    /// <returns>This rank's prefix.</returns>
    /// <exception cref="MpiException">The function threw (on rank 0, or reported by it).</exception>
    /// <exception cref="TransportException">A value or a prefix may not travel (every rank throws), or a malformed payload.</exception>
    [RequiresDynamicCode(ObjectsNeedDynamicCode), RequiresUnreferencedCode(ObjectsNeedDynamicCode)]
    public T? OScan<T>(T value, Func<T, T, T> op)
    {
        CommHandle h = Handle;
        RequireIntra("OScan");
        ArgumentNullException.ThrowIfNull(op);
        return Prefixes(value, op, inclusive: true, h);
    }

    /// <summary><see cref="OScan{T}(T, Func{T, T, T})"/> with a built-in operation (see <see cref="OReduce{T}(T, Op, int)"/>).</summary>
    /// <param name="value">This rank's value.</param>
    /// <param name="op">The operation.</param>
    /// <exception cref="ArgumentException"><paramref name="op"/> is not defined for T.</exception>
    [RequiresDynamicCode(ObjectsNeedDynamicCode), RequiresUnreferencedCode(ObjectsNeedDynamicCode)]
    public T? OScan<T>(T value, Op op) => OScan(value, ObjectOp<T>(op));

    /// <summary>
    /// Exclusive prefix reduction of objects: rank r &gt; 0 gets the values of ranks 0..r-1 folded in
    /// rank order; rank 0 gets default (MPI leaves it undefined).  Collective; intracommunicators only.
    /// </summary>
    /// <param name="value">This rank's value.</param>
    /// <param name="op">The combining function (run on rank 0 only).</param>
    /// <returns>This rank's exclusive prefix.</returns>
    /// <exception cref="MpiException">The function threw (on rank 0, or reported by it).</exception>
    /// <exception cref="TransportException">A value or a prefix may not travel (every rank throws), or a malformed payload.</exception>
    [RequiresDynamicCode(ObjectsNeedDynamicCode), RequiresUnreferencedCode(ObjectsNeedDynamicCode)]
    public T? OExscan<T>(T value, Func<T, T, T> op)
    {
        CommHandle h = Handle;
        RequireIntra("OExscan");
        ArgumentNullException.ThrowIfNull(op);
        return Prefixes(value, op, inclusive: false, h);
    }

    /// <summary><see cref="OExscan{T}(T, Func{T, T, T})"/> with a built-in operation (see <see cref="OReduce{T}(T, Op, int)"/>).</summary>
    /// <param name="value">This rank's value.</param>
    /// <param name="op">The operation.</param>
    /// <exception cref="ArgumentException"><paramref name="op"/> is not defined for T.</exception>
    [RequiresDynamicCode(ObjectsNeedDynamicCode), RequiresUnreferencedCode(ObjectsNeedDynamicCode)]
    public T? OExscan<T>(T value, Op op) => OExscan(value, ObjectOp<T>(op));

    /// <summary>
    /// Combines the ranks' arrays element by element (element i folded over the ranks in rank
    /// order) and scatters the result: rank r gets <paramref name="counts"/>[r] elements, starting
    /// after the blocks of ranks 0..r-1 (MPI_Reduce_scatter for objects).  Collective; intracommunicators only.
    /// </summary>
    /// <param name="values">This rank's elements: exactly the sum of <paramref name="counts"/>.</param>
    /// <param name="counts">Each rank's block length, one entry per rank, the same on every rank.</param>
    /// <param name="op">The combining function (run on rank 0 only).</param>
    /// <returns>This rank's block of the result.</returns>
    /// <exception cref="ArgumentException">Wrong lengths here (before anything is sent), or the ranks' counts or lengths disagree (detected on rank 0; every rank throws).</exception>
    /// <exception cref="MpiException">The function threw (on rank 0, or reported by it).</exception>
    /// <exception cref="TransportException">An element may not travel (every rank throws), or a malformed payload.</exception>
    [RequiresDynamicCode(ObjectsNeedDynamicCode), RequiresUnreferencedCode(ObjectsNeedDynamicCode)]
    public T[] OReduceScatter<T>(T[] values, int[] counts, Func<T, T, T> op)
    {
        CommHandle h = Handle;
        RequireIntra("OReduceScatter");
        ArgumentNullException.ThrowIfNull(values);
        ArgumentNullException.ThrowIfNull(op);
        long total = CheckObjectCounts(counts, nameof(counts), _size);
        if (values.Length != total)
            throw new ArgumentException(SR.Format(SR.ObjectCountsTotal, nameof(values), values.Length, nameof(counts), total), nameof(values));
        // Rank 0 checks that every rank passed the same counts (p ints each: small next to the objects).
        int p = _size;
        int[]? allCounts = _rank == 0 ? new int[p * p] : null;
        Gather(counts, allCounts, 0);
        T[][]? arrays = GatherBlocks<T[]>([values], 0, h) is { } b ? Array.ConvertAll(b, x => x[0]) : null;
        Failure failure = default;
        T[]? combined = null;
        if (_rank == 0)
        {
            failure = AgreeOnCounts(allCounts!, counts);
            if (!failure.Happened)
            {
                for (int r = 0; r < p && !failure.Happened; r++)
                    if (arrays![r]?.Length != total)
                        failure = new Failure(MismatchMarker, SR.Format(SR.ObjectLengthsDisagree, r, arrays[r]?.Length ?? -1, total));
            }
            if (!failure.Happened)
                combined = CombineElements(arrays!, (int)total, op, out failure);
        }
        return ScatterPieces<T[]>((starts, sizes) => EncodeSlices(combined!, p, starts, sizes, r => counts[r]), 0, h, failure)!;
    }

    /// <summary><see cref="OReduceScatter{T}(T[], int[], Func{T, T, T})"/> with a built-in operation (see <see cref="OReduce{T}(T, Op, int)"/>).</summary>
    /// <param name="values">This rank's elements: exactly the sum of <paramref name="counts"/>.</param>
    /// <param name="counts">Each rank's block length, the same on every rank.</param>
    /// <param name="op">The operation.</param>
    /// <exception cref="ArgumentException"><paramref name="op"/> is not defined for T, or as for the function form.</exception>
    [RequiresDynamicCode(ObjectsNeedDynamicCode), RequiresUnreferencedCode(ObjectsNeedDynamicCode)]
    public T[] OReduceScatter<T>(T[] values, int[] counts, Op op) => OReduceScatter(values, counts, ObjectOp<T>(op));

    // ---- machinery ----

    [RequiresDynamicCode(ObjectsNeedDynamicCode), RequiresUnreferencedCode(ObjectsNeedDynamicCode)]
    private static Func<T, T, T> ObjectOp<T>(Op op)
    {
        ArgumentNullException.ThrowIfNull(op);
        return op.ObjectFunction<T>(nameof(op));
    }

    /// <summary>Every rank's value at <paramref name="root"/>, in rank order (null elsewhere).</summary>
    [RequiresDynamicCode(ObjectsNeedDynamicCode), RequiresUnreferencedCode(ObjectsNeedDynamicCode)]
    private T[]? GatherValues<T>(T value, int root, CommHandle h)
    {
        T[][]? blocks = GatherBlocks<T>([value], root, h);
        if (blocks is null)
            return null;
        var values = new T[blocks.Length];
        for (int r = 0; r < blocks.Length; r++)
        {
            if (blocks[r].Length != 1) // a rank called another collective
                throw TransportErrors.Malformed(SR.Format(SR.ObjectOneValue, r, blocks[r].Length));
            values[r] = blocks[r][0];
        }
        return values;
    }

    /// <summary>The left fold of <paramref name="values"/>; a throwing function becomes the failure every rank learns.</summary>
    private T Combine<T>(T[] values, Func<T, T, T> op, out Failure failure)
    {
        failure = default;
        T acc = values[0];
        for (int r = 1; r < values.Length; r++)
        {
            if (!TryApply(op, acc, values[r], out acc, out failure))
                return default!;
        }
        return acc;
    }

    private T[]? CombineElements<T>(T[][] arrays, int n, Func<T, T, T> op, out Failure failure)
    {
        failure = default;
        var acc = (T[])arrays[0].Clone();
        for (int r = 1; r < arrays.Length; r++)
            for (int i = 0; i < n; i++)
                if (!TryApply(op, acc[i], arrays[r][i], out acc[i], out failure))
                    return null;
        return acc;
    }

    private bool TryApply<T>(Func<T, T, T> op, T a, T b, out T result, out Failure failure)
    {
        try
        {
            result = op(a, b);
            failure = default;
            return true;
        }
        catch (Exception e)
        {
            result = default!;
            failure = new Failure(CombineFailedMarker, SR.Format(SR.ObjectOpThrew, _rank, e.GetType().FullName, e.Message), e);
            return false;
        }
    }

    [RequiresDynamicCode(ObjectsNeedDynamicCode), RequiresUnreferencedCode(ObjectsNeedDynamicCode)]
    private T? Prefixes<T>(T value, Func<T, T, T> op, bool inclusive, CommHandle h)
    {
        T[]? values = GatherValues(value, 0, h);
        Failure failure = default;
        T?[]? prefixes = null;
        if (_rank == 0)
        {
            int p = values!.Length;
            prefixes = new T?[p];
            T acc = values[0];
            for (int r = 0; r < p; r++)
            {
                if (r > 0 && !TryApply(op, acc, values[r], out acc, out failure))
                    break;
                if (inclusive)
                    prefixes[r] = acc;
                else if (r + 1 < p)
                    prefixes[r + 1] = acc;
            }
        }
        return ScatterPieces<T>((starts, counts) => EncodePieces(counts.Length, starts, counts, (w, r) => w.WritePiece(prefixes![r])),
                                0, h, failure);
    }

    /// <summary>Checks a counts array (one non-negative entry for each of <paramref name="p"/> ranks); returns their sum.</summary>
    private static long CheckObjectCounts(int[] counts, string name, int p)
    {
        ArgumentNullException.ThrowIfNull(counts, name);
        if (counts.Length != p)
            throw new ArgumentException(SR.Format(SR.CountsLength, name, counts.Length, p), name);
        long total = 0;
        for (int i = 0; i < counts.Length; i++)
        {
            if (counts[i] < 0)
                throw new ArgumentException(SR.Format(SR.NegativeEntry, name, i, counts[i]), name);
            total += counts[i];
        }
        if (total > Array.MaxLength)
            throw new ArgumentException(SR.Format(SR.ObjectCountsTooLarge, name, total), name);
        return total;
    }

    /// <summary>At rank 0: the first rank whose counts differ from rank 0's, as the failure every rank learns.</summary>
    private static Failure AgreeOnCounts(int[] allCounts, int[] mine)
    {
        int p = mine.Length;
        for (int r = 1; r < p; r++)
            for (int i = 0; i < p; i++)
                if (allCounts[r * p + i] != mine[i])
                    return new Failure(MismatchMarker, SR.Format(SR.ObjectCountsDisagree, r, i, allCounts[r * p + i], mine[i]));
        return default;
    }
}
