using System.Diagnostics.CodeAnalysis;
using System.MP.Interop;
using System.Runtime.CompilerServices;
using System.Text;

namespace System.MP;

/// <summary>
/// Where the exceptions of the hot paths are built: they call these cold,
/// non-inlined methods so their own code stays small.  Every core error
/// (a negative MP_E* code) becomes its .NET exception in <see cref="CoreException"/>.
/// </summary>
internal static class ThrowHelper
{
    /// <summary>Throws the .NET exception that matches a negative mpcore code.</summary>
    [DoesNotReturn, MethodImpl(MethodImplOptions.NoInlining)]
    internal static void ThrowCore(int code) => throw CoreException(code);

    /// <summary>
    /// The check after every core call: <paramref name="rc"/> is 0, a count, a handle or a negative
    /// MP_E* code, which becomes its exception (inlined: the hot paths keep one compare and branch).
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static int Check(int rc)
    {
        if (rc < 0)
            ThrowCore(rc);
        return rc;
    }

    /// <summary>As <see cref="Check(int)"/>; a range error names <paramref name="rangeParam"/>.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static void Check(int rc, string rangeParam)
    {
        if (rc < 0)
            ThrowCore(rc, rangeParam);
    }

    /// <summary>
    /// Throws the .NET exception that matches a negative mpcore code; a range error (rank, tag,
    /// count, root) names <paramref name="rangeParam"/>, the argument only the core could check.
    /// </summary>
    [DoesNotReturn, MethodImpl(MethodImplOptions.NoInlining)]
    internal static void ThrowCore(int code, string rangeParam) => throw CoreException(code, rangeParam);

    /// <summary>
    /// The .NET exception of a negative mpcore code.  <paramref name="rangeParam"/>: the parameter
    /// a range error is about, when the caller knows it.  <paramref name="inner"/>: what a user
    /// operation threw in the same call, kept as the inner exception of MPI's errors (the only
    /// ones that can follow it: the core refuses everything else before MPI runs the operation).
    /// </summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    internal static unsafe Exception CoreException(int code, string? rangeParam = null, Exception? inner = null)
    {
        int errorClass = 0;
        int len = Core.LastError(&errorClass, null, 0); // the whole message, however long
        var text = new byte[len + 1];
        fixed (byte* buf = text)
            len = Math.Min(Core.LastError(&errorClass, buf, text.Length), len);
        string detail = Encoding.UTF8.GetString(text, 0, len);
        return code switch
        {
            CoreError.Truncate => new MessageTruncatedException(detail, errorClass, inner),
            CoreError.Mpi => new MpiException(detail, errorClass, inner),
            CoreError.State => new InvalidOperationException(detail),
            CoreError.Rank or CoreError.Tag or CoreError.Count or CoreError.Root => new ArgumentOutOfRangeException(rangeParam, detail),
            CoreError.Invalid => new ArgumentException(detail),
            CoreError.Handle => new ObjectDisposedException(null, detail),
            CoreError.NoMemory => new InsufficientMemoryException(detail),
            CoreError.NoLibrary or CoreError.NoSymbol => new DllNotFoundException(detail),
            CoreError.NotSupported => new NotSupportedException(detail),
            CoreError.Busy or CoreError.ObjectPiece => new InvalidOperationException(detail),
            _ => new MpiException(SR.Format(SR.CoreError, detail, code), errorClass, inner),
        };
    }

    [DoesNotReturn, MethodImpl(MethodImplOptions.NoInlining)]
    internal static void ThrowDisposed() => throw new ObjectDisposedException(nameof(Communicator));

    [DoesNotReturn, MethodImpl(MethodImplOptions.NoInlining)]
    internal static void ThrowRank(int rank, int size, string what, string paramName) =>
        throw new ArgumentOutOfRangeException(paramName, rank, SR.Format(SR.RankOutOfRange, rank, size, what));

    [DoesNotReturn, MethodImpl(MethodImplOptions.NoInlining)]
    internal static void ThrowTag(int tag, bool allowAny, string paramName) =>
        throw new ArgumentOutOfRangeException(paramName, tag,
            SR.Format(SR.TagOutOfRange, tag, Mpi.TagUpperBound, allowAny ? SR.OrAnyTag : ""));

    /// <summary>The same non-empty array as send and receive buffer of one call (MPI-4.0 2.5.4 forbids aliased arguments).</summary>
    [DoesNotReturn, MethodImpl(MethodImplOptions.NoInlining)]
    internal static void ThrowSameArray(string message, string paramName) => throw new ArgumentException(message, paramName);

    [DoesNotReturn, MethodImpl(MethodImplOptions.NoInlining)]
    internal static void ThrowTargetIndex(long index, bool dynamic) =>
        throw new ArgumentOutOfRangeException("targetIndex", index,
            SR.Format(dynamic ? SR.WindowAddressNotPositive : SR.WindowIndexNegative, index));

    /// <summary>Checks that <paramref name="count"/> elements from <paramref name="offset"/> lie inside <paramref name="buffer"/>.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static void CheckSlice<T>(T[] buffer, int offset, int count, string paramName)
    {
        if (buffer is null)
            ThrowNull(paramName);
        if ((uint)offset > (uint)buffer.Length || (uint)count > (uint)(buffer.Length - offset))
            ThrowSlice(buffer.Length, offset, count);
    }

    [DoesNotReturn, MethodImpl(MethodImplOptions.NoInlining)]
    internal static void ThrowSlice(int length, int offset, int count)
    {
        if ((uint)offset > (uint)length)
            throw new ArgumentOutOfRangeException(nameof(offset), offset, SR.Format(SR.OffsetOutOfRange, offset, length));
        throw new ArgumentOutOfRangeException(nameof(count), count, SR.Format(SR.CountOutOfRange, count, offset, length));
    }

    [DoesNotReturn, MethodImpl(MethodImplOptions.NoInlining)]
    internal static void ThrowNull(string paramName) => throw new ArgumentNullException(paramName);

    [DoesNotReturn, MethodImpl(MethodImplOptions.NoInlining)]
    internal static void ThrowNullRequest(int index) =>
        throw new ArgumentNullException("requests", SR.Format(SR.NullRequest, index));

    [DoesNotReturn, MethodImpl(MethodImplOptions.NoInlining)]
    internal static void ThrowRepeatedRequest(int first, int second) =>
        throw new ArgumentException(SR.Format(SR.RepeatedRequest, first, second), "requests");

    [DoesNotReturn, MethodImpl(MethodImplOptions.NoInlining)]
    internal static void ThrowRequestActive() => throw new InvalidOperationException(SR.PersistentActive);

    [DoesNotReturn, MethodImpl(MethodImplOptions.NoInlining)]
    internal static void ThrowStaleRequest() => throw new ObjectDisposedException(nameof(Request), SR.StaleRequest);

    [DoesNotReturn, MethodImpl(MethodImplOptions.NoInlining)]
    internal static void ThrowRequestDisposed() => throw new ObjectDisposedException(nameof(PersistentRequest));

    [DoesNotReturn, MethodImpl(MethodImplOptions.NoInlining)]
    internal static void ThrowStatusesTooShort(int statuses, int requests) =>
        throw new ArgumentException(SR.Format(SR.StatusesTooShort, statuses, requests), "statuses");

    [DoesNotReturn, MethodImpl(MethodImplOptions.NoInlining)]
    internal static void ThrowShortScalar(long bytes, Type type, int size) =>
        throw new MpiException(SR.Format(SR.ScalarShortMessage, bytes, type.Name, size), 0);
}
