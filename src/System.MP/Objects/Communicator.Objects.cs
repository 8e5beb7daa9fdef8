using System.Diagnostics.CodeAnalysis;
using System.MP.Interop;
using System.MP.Transport;
using System.Runtime.ExceptionServices;

namespace System.MP;

// Object operations (Motor Figure 4, §4.2.2, §7.5): whole object graphs,
// serialized into pooled native memory (nothing to pin).  A payload's first
// message has at most WireFormat.FirstChunkBytes, so ORecv takes it with one
// posted receive into a pooled buffer of that size (matching exactly what a
// receive with that source, tag and communicator matches); the rest of a
// larger payload follows on the same communicator under a tag above
// Mpi.TagUpperBound, one of those kept for the object transport.  OIRecv
// matches by matched probe (MPI-4.0 §3.8.2) when tested or waited for.
// Object collectives use split representations: one independently decodable
// payload per rank, counts first, then Scatterv/Gatherv/Allgatherv of bytes.
// Payloads above WireFormat.ChunkBytes travel in rounds of at most that
// many bytes, so MPI's int counts and displacements never overflow.
public unsafe partial class Communicator
{
    private const string ObjectsNeedDynamicCode = Codecs.DynamicCodeMessage;

    /// <summary>
    /// Sends an object graph to <paramref name="dest"/>: the object's value
    /// fields, the objects its [Transportable] reference fields lead to, array
    /// elements, strings; shared references and cycles arrive as such.
    /// </summary>
    /// <param name="obj">The root object (may be null).</param>
    /// <param name="dest">Destination rank, or <see cref="Mpi.ProcNull"/>.</param>
    /// <param name="tag">Message tag in [0, MPI_TAG_UB].</param>
    /// <exception cref="TransportException">An object of the graph may not travel; nothing was sent.</exception>
    [RequiresDynamicCode(ObjectsNeedDynamicCode), RequiresUnreferencedCode(ObjectsNeedDynamicCode)]
    public void OSend(object? obj, int dest, int tag)
    {
        CommHandle h = Handle;
        CheckDest(dest);
        CheckSendTag(tag);
        ObjectTransport.Encoded payload = ObjectTransport.Encode(obj);
        try
        {
            PayloadChannel.Send(payload, dest, tag, h);
        }
        finally
        {
            payload.Release();
        }
    }

    /// <summary>
    /// Sends <paramref name="count"/> elements of a one-dimensional array from
    /// <paramref name="offset"/>; the receiver gets an array of that many elements.
    /// </summary>
    /// <param name="array">A one-dimensional, zero-based array.</param>
    /// <param name="offset">Index of the first element to send.</param>
    /// <param name="count">Number of elements to send.</param>
    /// <param name="dest">Destination rank, or <see cref="Mpi.ProcNull"/>.</param>
    /// <param name="tag">Message tag in [0, MPI_TAG_UB].</param>
    /// <exception cref="TransportException">An element may not travel; nothing was sent.</exception>
    [RequiresDynamicCode(ObjectsNeedDynamicCode), RequiresUnreferencedCode(ObjectsNeedDynamicCode)]
    public void OSend(Array array, int offset, int count, int dest, int tag)
    {
        CheckVectorSlice(array, offset, count);
        CommHandle h = Handle;
        CheckDest(dest);
        CheckSendTag(tag);
        ObjectTransport.Encoded payload = ObjectTransport.Encode(null, array, offset, count);
        try
        {
            PayloadChannel.Send(payload, dest, tag, h);
        }
        finally
        {
            payload.Release();
        }
    }

    /// <summary>Receives an object graph sent with OSend.</summary>
    /// <param name="source">Source rank, <see cref="Mpi.AnySource"/> or <see cref="Mpi.ProcNull"/>.</param>
    /// <param name="tag">Message tag, or <see cref="Mpi.AnyTag"/>.</param>
    /// <returns>A copy of the sent graph's root (null from <see cref="Mpi.ProcNull"/>).</returns>
    /// <exception cref="TransportException">The payload is malformed or names a type that may not travel, or its sender gave it up part way (an MPI failure after its first message); the message is consumed.</exception>
    [RequiresDynamicCode(ObjectsNeedDynamicCode), RequiresUnreferencedCode(ObjectsNeedDynamicCode)]
    public object? ORecv(int source, int tag) => ORecv(source, tag, out _);

    /// <summary>Receives an object graph sent with OSend, and its status.</summary>
    /// <param name="source">Source rank, <see cref="Mpi.AnySource"/> or <see cref="Mpi.ProcNull"/>.</param>
    /// <param name="tag">Message tag, or <see cref="Mpi.AnyTag"/>.</param>
    /// <param name="status">Sender, tag and payload size in bytes.</param>
    /// <returns>A copy of the sent graph's root (null from <see cref="Mpi.ProcNull"/>).</returns>
    /// <exception cref="TransportException">The payload is malformed or names a type that may not travel, or its sender gave it up part way (an MPI failure after its first message); the message is consumed.</exception>
    [RequiresDynamicCode(ObjectsNeedDynamicCode), RequiresUnreferencedCode(ObjectsNeedDynamicCode)]
    public object? ORecv(int source, int tag, out Status status)
    {
        CommHandle h = Handle;
        CheckSource(source);
        CheckRecvTag(tag);
        return PayloadChannel.Receive(source, tag, h, out status);
    }

    /// <summary>Receives an object graph whose root must be a <typeparamref name="T"/> (or null).</summary>
    /// <param name="source">Source rank, <see cref="Mpi.AnySource"/> or <see cref="Mpi.ProcNull"/>.</param>
    /// <param name="tag">Message tag, or <see cref="Mpi.AnyTag"/>.</param>
    /// <exception cref="TransportException">The payload is malformed, its sender gave it up part way, or its root is not a <typeparamref name="T"/>.</exception>
    [RequiresDynamicCode(ObjectsNeedDynamicCode), RequiresUnreferencedCode(ObjectsNeedDynamicCode)]
    public T? ORecv<T>(int source, int tag) => Expect<T>(ORecv(source, tag, out _));

    /// <summary>Receives an object graph whose root must be a <typeparamref name="T"/> (or null), and its status.</summary>
    /// <param name="source">Source rank, <see cref="Mpi.AnySource"/> or <see cref="Mpi.ProcNull"/>.</param>
    /// <param name="tag">Message tag, or <see cref="Mpi.AnyTag"/>.</param>
    /// <param name="status">Sender, tag and payload size in bytes.</param>
    /// <exception cref="TransportException">The payload is malformed, its sender gave it up part way, or its root is not a <typeparamref name="T"/>.</exception>
    [RequiresDynamicCode(ObjectsNeedDynamicCode), RequiresUnreferencedCode(ObjectsNeedDynamicCode)]
    public T? ORecv<T>(int source, int tag, out Status status) => Expect<T>(ORecv(source, tag, out status));

    /// <summary>
    /// Starts sending an object graph.  The graph is serialized before this
    /// returns, so the objects may change at once; the request completes when
    /// the payload has left.
    /// </summary>
    /// <param name="obj">The root object (may be null).</param>
    /// <param name="dest">Destination rank, or <see cref="Mpi.ProcNull"/>.</param>
    /// <param name="tag">Message tag in [0, MPI_TAG_UB].</param>
    /// <exception cref="TransportException">An object of the graph may not travel; nothing was sent.</exception>
    [RequiresDynamicCode(ObjectsNeedDynamicCode), RequiresUnreferencedCode(ObjectsNeedDynamicCode)]
    public ObjectRequest OISend(object? obj, int dest, int tag)
    {
        CommHandle h = Handle;
        CheckDest(dest);
        CheckSendTag(tag);
        return ObjectRequest.PostSend(ObjectTransport.Encode(obj), dest, tag, h);
    }

    /// <summary>
    /// Starts receiving an object graph whose root must be a <typeparamref name="T"/>;
    /// <see cref="ObjectRequest{T}.Result"/> is the object.  The message is matched
    /// (matched probe) when the request is tested or waited for.
    /// </summary>
    /// <param name="source">Source rank, <see cref="Mpi.AnySource"/> or <see cref="Mpi.ProcNull"/>.</param>
    /// <param name="tag">Message tag, or <see cref="Mpi.AnyTag"/>.</param>
    [RequiresDynamicCode(ObjectsNeedDynamicCode), RequiresUnreferencedCode(ObjectsNeedDynamicCode)]
    public ObjectRequest<T> OIRecv<T>(int source, int tag)
    {
        CommHandle h = Handle;
        CheckSource(source);
        CheckRecvTag(tag);
        return new ObjectRequest<T>(this, source, tag, h);
    }

    /// <summary>
    /// Broadcasts the root's object graph: the root gets its object back, every other rank a copy. Collective.
    /// On an intercommunicator the root passes <see cref="Mpi.Root"/>, the rest of its group
    /// <see cref="Mpi.ProcNull"/> (they get default), and the other group the root's rank; every
    /// rank of the other group gets a copy.
    /// </summary>
    /// <param name="obj">At the root, the object (may be null); ignored elsewhere.</param>
    /// <param name="root">Rank whose object is broadcast.</param>
    /// <exception cref="TransportException">At the root, an object may not travel (every rank throws); elsewhere, a malformed payload.</exception>
    [RequiresDynamicCode(ObjectsNeedDynamicCode), RequiresUnreferencedCode(ObjectsNeedDynamicCode)]
    public T? OBcast<T>(T? obj, int root)
    {
        CommHandle h = Handle;
        CheckRoot(root);
        if (_isInter && root == Mpi.ProcNull)
            return default;
        return BcastObject(obj, root, h);
    }

    /// <summary>
    /// The form of <see cref="OBcast{T}(T, int)"/> for ranks that have nothing to pass: the same
    /// as passing null (default).  Other ranks call it to receive the root's object without a
    /// placeholder, which matters where null is not a value of the type (F# records and
    /// unions); at the root it broadcasts null.  Collective.
    /// </summary>
    /// <param name="root">Rank whose object is broadcast.</param>
    /// <returns>The root's object graph, a copy on every rank other than the root.</returns>
    /// <exception cref="TransportException">A malformed payload.</exception>
    [RequiresDynamicCode(ObjectsNeedDynamicCode), RequiresUnreferencedCode(ObjectsNeedDynamicCode)]
    public T? OBcast<T>(int root) => OBcast<T>(default, root);

    /// <summary>
    /// Splits the root's array into Size blocks in rank order and gives block r
    /// to rank r: with n elements and p ranks, rank r gets n / p elements, plus
    /// one when r &lt; n % p.  Each block travels as its own payload, so
    /// references shared between elements of one block stay shared. Collective.
    /// </summary>
    /// <remarks>
    /// On an intercommunicator the root (<see cref="Mpi.Root"/>) splits the array into
    /// RemoteSize blocks for the other group, which passes the root's rank; the root and the
    /// rest of its group (<see cref="Mpi.ProcNull"/>) get null.
    /// </remarks>
    /// <param name="array">At the root, the elements; ignored elsewhere (may be null).</param>
    /// <param name="root">Rank that scatters.</param>
    /// <returns>This rank's block.</returns>
    /// <exception cref="TransportException">At the root, an element may not travel (every rank throws); elsewhere, a malformed payload.</exception>
    [RequiresDynamicCode(ObjectsNeedDynamicCode), RequiresUnreferencedCode(ObjectsNeedDynamicCode)]
    public T[]? OScatter<T>(T[]? array, int root)
    {
        CommHandle h = Handle;
        CheckRoot(root);
        if (_isInter && root == Mpi.ProcNull)
            return null;
        if (IsRoot(root) && array is null)
            throw new ArgumentNullException(nameof(array), SR.Format(SR.BufferRequiredAtRoot, nameof(array)));
        return ScatterPieces<T[]>((starts, counts) =>
        {
            int n = array!.Length, p = counts.Length;
            return EncodeSlices(array, p, starts, counts, r => n / p + (r < n % p ? 1 : 0));
        }, root, h);
    }

    /// <summary>
    /// The form of <see cref="OScatter{T}(T[], int)"/> for ranks other than the root, which
    /// have no array to pass (the same as passing null; the root must pass its array).
    /// Collective.
    /// </summary>
    /// <param name="root">Rank that scatters.</param>
    /// <returns>This rank's block.</returns>
    /// <exception cref="ArgumentNullException">Called at the root, which must pass the elements.</exception>
    /// <exception cref="TransportException">A malformed payload.</exception>
    [RequiresDynamicCode(ObjectsNeedDynamicCode), RequiresUnreferencedCode(ObjectsNeedDynamicCode)]
    public T[]? OScatter<T>(int root) => OScatter<T>(null, root);

    /// <summary>
    /// Collects every rank's block at the root, concatenated in rank order.
    /// Each block travels as its own payload. Collective.
    /// </summary>
    /// <remarks>
    /// On an intercommunicator the root (<see cref="Mpi.Root"/>) collects the blocks of
    /// every rank of the other group, which passes the root's rank; the root's own
    /// <paramref name="block"/> is ignored, and the rest of its group passes
    /// <see cref="Mpi.ProcNull"/> and gets null.
    /// </remarks>
    /// <param name="block">This rank's elements.</param>
    /// <param name="root">Rank that collects.</param>
    /// <returns>At the root, all elements in rank order; null elsewhere.</returns>
    /// <exception cref="TransportException">A block's element may not travel (every rank throws), or a malformed payload.</exception>
    [RequiresDynamicCode(ObjectsNeedDynamicCode), RequiresUnreferencedCode(ObjectsNeedDynamicCode)]
    public T[]? OGather<T>(T[] block, int root)
    {
        CommHandle h = Handle;
        return GathersNothing(block, root) ? null : GatherObjects(block, root, h);
    }

    /// <summary>Every rank gets every rank's block, concatenated in rank order. Collective; intracommunicators only.</summary>
    /// <param name="block">This rank's elements.</param>
    /// <returns>All elements in rank order.</returns>
    /// <exception cref="TransportException">A block's element may not travel (every rank throws), or a malformed payload.</exception>
    [RequiresDynamicCode(ObjectsNeedDynamicCode), RequiresUnreferencedCode(ObjectsNeedDynamicCode)]
    public T[] OAllgather<T>(T[] block)
    {
        CommHandle h = Handle;
        RequireIntra("OAllgather");
        if (block is null)
            ThrowHelper.ThrowNull(nameof(block));
        return GatherObjects(block, -1, h)!;
    }

    // ---- machinery ----

    /// <summary>Checks OGather's arguments; true for the ranks of an intercommunicator's root group other than the root.</summary>
    private bool GathersNothing<T>(T[] block, int root)
    {
        CheckRoot(root);
        if (_isInter && root == Mpi.ProcNull)
            return true;
        if (block is null && !(_isInter && root == Mpi.Root))
            ThrowHelper.ThrowNull(nameof(block));
        return false;
    }

    /// <summary>OBcast's transport; a root that <paramref name="failure"/> names sends the failure instead of its object.</summary>
    [RequiresDynamicCode(ObjectsNeedDynamicCode), RequiresUnreferencedCode(ObjectsNeedDynamicCode)]
    private T? BcastObject<T>(T? obj, int root, CommHandle h, Failure failure = default)
    {
        if (IsRoot(root))
        {
            if (failure.Happened)
            {
                Bcast(failure.Marker, root);
                ThrowFailure(failure, root);
            }
            ObjectTransport.Encoded payload = EncodeAtRoot(() => ObjectTransport.Encode(obj), root);
            try
            {
                Bcast(payload.Length, root);
                BcastBytes(payload.Pointer, payload.Length, root, h);
            }
            finally
            {
                payload.Release();
            }
            return obj;
        }
        long length = Bcast(0L, root);
        ThrowIfRootFailed(length, root);
        NativeBuffer buffer = BufferPool.Rent(Math.Min(length, WireFormat.ChunkBytes));
        try
        {
            var payload = new RoundReceiver(buffer, length);
            for (long off = 0; off < length; off += WireFormat.ChunkBytes)
            {
                long part = Math.Min(WireFormat.ChunkBytes, length - off);
                BcastBytes(payload.Next(part), part, root, h);
                payload.Arrived(part);
            }
            return Expect<T>(PayloadChannel.Decode(payload.Payload, length));
        }
        finally
        {
            BufferPool.Return(buffer);
        }
    }


    private static void CheckVectorSlice(Array array, int offset, int count)
    {
        if (array is null)
            ThrowHelper.ThrowNull(nameof(array));
        if (!array.GetType().IsSZArray)
            throw new ArgumentException(SR.Format(SR.ArrayNotVector, TransportErrors.Name(array.GetType())), nameof(array));
        if ((uint)offset > (uint)array.Length || (uint)count > (uint)(array.Length - offset))
            ThrowHelper.ThrowSlice(array.Length, offset, count);
    }

    /// <summary>The root of a received graph as a <typeparamref name="T"/>.</summary>
    internal static T? Expect<T>(object? obj)
    {
        if (obj is T value)
            return value;
        if (obj is null && default(T) is null)
            return default;
        throw new TransportException(SR.Format(SR.ReceivedWrongType,
            obj is null ? "null" : TransportErrors.Name(obj.GetType()), TransportErrors.Name(typeof(T))));
    }

    /// <summary>At the root of a collective: encode, or tell the other ranks (length -1) that encoding failed, then rethrow.</summary>
    private ObjectTransport.Encoded EncodeAtRoot(Func<ObjectTransport.Encoded> encode, int root)
    {
        try
        {
            return encode();
        }
        catch (TransportException)
        {
            Bcast(EncodeFailedMarker, root);
            throw;
        }
    }

    // What a root sends instead of a size when it cannot send its objects.
    private const long EncodeFailedMarker = -1; // TransportException everywhere
    private const long CombineFailedMarker = -2; // a user function threw: MpiException everywhere, the message follows
    private const long MismatchMarker = -3;      // the ranks' arguments disagree: ArgumentException everywhere, the message follows

    /// <summary>Why the root of an object collective failed after it started (default: it did not).</summary>
    private readonly struct Failure(long marker, string message, Exception? inner = null)
    {
        internal bool Happened => marker != 0;
        internal long Marker => marker;
        internal string Message => message;
        internal Exception ToException() =>
            marker == MismatchMarker ? new ArgumentException(message) : new MpiException(message, inner!);
    }

    /// <summary>At the root, once the marker went out: the message follows, then the root throws.</summary>
    [DoesNotReturn, RequiresDynamicCode(ObjectsNeedDynamicCode), RequiresUnreferencedCode(ObjectsNeedDynamicCode)]
    private void ThrowFailure(Failure failure, int root)
    {
        BcastObject(failure.Message, root, Handle);
        throw failure.ToException();
    }

    /// <summary>Away from the root: a negative size is the root's failure marker; throws what the root threw.</summary>
    [RequiresDynamicCode(ObjectsNeedDynamicCode), RequiresUnreferencedCode(ObjectsNeedDynamicCode)]
    private void ThrowIfRootFailed(long marker, int root)
    {
        if (marker >= 0)
            return;
        if (marker == EncodeFailedMarker)
            throw new TransportException(SR.Format(SR.RootEncodeFailed, root));
        string message = BcastObject<string>(null, root, Handle) ?? string.Empty;
        throw marker == MismatchMarker ? new ArgumentException(message) : new MpiException(message);
    }

    private static void BcastBytes(byte* p, long length, int root, CommHandle comm)
    {
        int chunk = WireFormat.ChunkBytes;
        long off = 0;
        do
        {
            CollDesc d = Desc<byte>(CollKind.Bcast, Math.Min(chunk, length - off), null, p + off, root);
            Run(comm, &d, false);
            off += chunk;
        }
        while (off < length);
    }
}
