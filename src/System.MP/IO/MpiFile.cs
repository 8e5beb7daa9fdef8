using System.ComponentModel;
using System.IO;
using System.MP.Interop;
using System.Runtime.CompilerServices;
using System.Text;

namespace System.MP;

/// <summary>
/// A file opened collectively by the ranks of a communicator for parallel I/O
/// (MPI-IO, MPI-4.0 chapter 14).  Data is read and written as arrays or spans of
/// unmanaged elements: at explicit offsets (<see cref="ReadAt{T}(FileOffset, T[])"/>,
/// collective <see cref="WriteAtAll{T}(FileOffset, T[])"/>, nonblocking
/// <see cref="IWriteAt{T}(FileOffset, T[])"/>), through this rank's file pointer
/// (<see cref="Read{T}(T[])"/>, <see cref="Seek"/>) or through the pointer the ranks
/// share (<see cref="WriteShared{T}(T[])"/>, <see cref="WriteOrdered{T}(T[])"/>).
/// </summary>
/// <remarks>
/// Explicit offsets name their unit (<see cref="FileOffset.Elements"/> of the buffer's type or
/// <see cref="FileOffset.Bytes"/>), so the same call means the same place before and after
/// <see cref="SetView{T}(long, Info?)"/>.  File pointers (<see cref="Seek"/>,
/// <see cref="Position"/>) count elements of the current view's type (bytes until SetView), as in MPI.  A view with a
/// block and a stride lets each rank see only its own blocks of the file, so that
/// ranks interleave blocks.  Errors raised by the MPI library come back as
/// <see cref="MpiException"/> with the MPI error class and string (files use
/// MPI_ERRORS_RETURN); argument errors are refused before MPI is called.
/// Open, Close (Dispose), SetView, the <c>All</c> and <c>Ordered</c> operations,
/// SeekShared, Sync, SetSize, Preallocate and setting Atomicity are collective:
/// every rank of the communicator calls them.  Complete nonblocking operations
/// before closing.  Not thread-safe.
/// </remarks>
public sealed unsafe class MpiFile : IDisposable
{
    private FileHandle _handle;
    private int _elementSize = 1;
    private readonly MpiFileMode _mode;

    private MpiFile(FileHandle handle, MpiFileMode mode, string path)
    {
        _handle = handle;
        _mode = mode;
        Path = path;
    }

    /// <summary>The path the file was opened with.</summary>
    public string Path { get; }

    /// <summary>The access mode the file was opened with.</summary>
    public MpiFileMode Mode => _mode;

    /// <summary>True once the file is closed.</summary>
    public bool IsClosed => _handle == FileHandle.Null;

    /// <summary>Bytes per element of the current view (1 until <see cref="SetView{T}(long, Info?)"/>).</summary>
    public int ElementSize => _elementSize;

    // ---- opening and closing ----

    /// <summary>Opens a file on every rank of <paramref name="communicator"/> (MPI_File_open). Collective.</summary>
    /// <param name="communicator">The ranks that open the file; all pass the same path and mode.</param>
    /// <param name="path">The file's path.</param>
    /// <param name="mode">The access mode (see <see cref="MpiFileMode"/> for the combinations MPI allows).</param>
    /// <param name="info">Hints for the MPI library (e.g. <c>cb_nodes</c>, <c>striping_unit</c>), or null.</param>
    /// <exception cref="ArgumentException">The mode is not a combination MPI allows, or the path is empty.</exception>
    /// <exception cref="MpiException">The MPI library could not open the file (e.g. MPI_ERR_NO_SUCH_FILE without Create, MPI_ERR_FILE_EXISTS with Exclusive); the message names the path and, where the OS can tell, why (a directory that does not exist, a file without Create, no permission), then MPI's own words.</exception>
    public static MpiFile Open(Communicator communicator, string path, MpiFileMode mode, Info? info = null)
    {
        ArgumentNullException.ThrowIfNull(communicator);
        byte[] p = PathBytes(path);
        CheckMode(mode);
        CommHandle comm = communicator.Handle;
        InfoHandle infoHandle = Info.HandleOf(info);
        FileHandle file = FileHandle.Null;
        int rc;
        fixed (byte* pp = p)
            rc = Core.FileOpen(comm, pp, (int)mode, infoHandle, &file);
        ThrowHelper.Check(rc);
        return new MpiFile(file, mode, path);
    }

    /// <summary>Deletes a file (MPI_File_delete).  Not collective: one rank deletes it.</summary>
    /// <exception cref="MpiException">The MPI library could not delete it (e.g. MPI_ERR_NO_SUCH_FILE).</exception>
    public static void Delete(string path, Info? info = null)
    {
        byte[] p = PathBytes(path);
        InfoHandle infoHandle = Info.HandleOf(info);
        int rc;
        fixed (byte* pp = p)
            rc = Core.FileDelete(pp, infoHandle);
        ThrowHelper.Check(rc);
    }

    /// <summary>Closes the file (MPI_File_close). Collective.  Calling it again does nothing.</summary>
    public void Close()
    {
        FileHandle h = _handle;
        if (h == FileHandle.Null)
            return;
        _handle = FileHandle.Null;
        int rc = Core.FileClose(h);
        ThrowHelper.Check(rc);
    }

    /// <summary>Closes the file (<see cref="Close"/>). Collective.</summary>
    public void Dispose() => Close();

    private static byte[] PathBytes(string path)
    {
        ArgumentNullException.ThrowIfNull(path);
        if (path.Length == 0)
            throw new ArgumentException(SR.FilePathEmpty, nameof(path));
        if (path.Contains('\0'))
            throw new ArgumentException(SR.EmbeddedNul, nameof(path));
        return Encoding.UTF8.GetBytes(path + "\0");
    }

    /// <summary>The combinations MPI-4.0 14.2.1 calls erroneous, refused before MPI sees them.</summary>
    private static void CheckMode(MpiFileMode mode)
    {
        const MpiFileMode all = (MpiFileMode)((int)MpiFileMode.Append * 2 - 1);
        const MpiFileMode access = MpiFileMode.ReadOnly | MpiFileMode.WriteOnly | MpiFileMode.ReadWrite;
        if ((mode & ~all) != 0)
            throw new ArgumentOutOfRangeException(nameof(mode), mode, SR.Format(SR.FileModeBits, mode));
        MpiFileMode a = mode & access;
        if (a != MpiFileMode.ReadOnly && a != MpiFileMode.WriteOnly && a != MpiFileMode.ReadWrite)
            throw new ArgumentException(SR.Format(SR.FileModeAccess, mode), nameof(mode));
        if (a == MpiFileMode.ReadOnly && (mode & (MpiFileMode.Create | MpiFileMode.Exclusive)) != 0)
            throw new ArgumentException(SR.Format(SR.FileModeReadOnly, mode & (MpiFileMode.Create | MpiFileMode.Exclusive)), nameof(mode));
        if (a == MpiFileMode.ReadWrite && (mode & MpiFileMode.Sequential) != 0)
            throw new ArgumentException(SR.FileModeSequential, nameof(mode));
    }

    /// <summary>The core handle; throws <see cref="ObjectDisposedException"/> once closed.</summary>
    private FileHandle Handle
    {
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        get
        {
            FileHandle h = _handle;
            if (h == FileHandle.Null)
                throw new ObjectDisposedException(nameof(MpiFile));
            return h;
        }
    }

    // ---- views ----

    /// <summary>
    /// Makes the file a contiguous sequence of <typeparamref name="T"/> starting
    /// <paramref name="displacement"/> bytes in (MPI_File_set_view with etype and filetype
    /// <typeparamref name="T"/>).  Offsets and positions then count elements. Collective.
    /// </summary>
    /// <param name="displacement">Where the view starts, in bytes from the beginning of the file.</param>
    /// <param name="info">Hints, or null.</param>
    public void SetView<T>(long displacement = 0, Info? info = null) where T : unmanaged =>
        SetView(displacement, sizeof(T), 0, 0, info);

    /// <summary>
    /// Makes this rank see <paramref name="blockLength"/> elements of every
    /// <paramref name="stride"/> elements, starting <paramref name="displacement"/> bytes in
    /// (MPI_File_set_view with a filetype of one block resized to the stride).  The classic
    /// interleave: with <c>p</c> ranks, rank <c>r</c> passes displacement
    /// <c>r * blockLength * sizeof(T)</c> and stride <c>p * blockLength</c>, and its
    /// consecutive elements fill every <c>p</c>-th block. Collective.
    /// </summary>
    /// <param name="displacement">Where this rank's view starts, in bytes from the beginning of the file.</param>
    /// <param name="blockLength">Elements of each block this rank sees (positive).</param>
    /// <param name="stride">Elements from the start of one block to the start of the next (at least <paramref name="blockLength"/>).</param>
    /// <param name="info">Hints, or null.</param>
    public void SetView<T>(long displacement, int blockLength, int stride, Info? info = null) where T : unmanaged
    {
        if (blockLength <= 0 || stride < blockLength)
            throw new ArgumentOutOfRangeException(nameof(stride), stride, SR.Format(SR.FileViewStride, stride, blockLength));
        SetView(displacement, sizeof(T), blockLength, stride, info);
    }

    /// <summary>
    /// Makes this rank see one block of a multidimensional array stored in the file: the block of
    /// <paramref name="subsizes"/> elements starting at <paramref name="starts"/> of an array of
    /// <paramref name="sizes"/> elements of <typeparamref name="T"/>, in C order (the last
    /// dimension varies fastest), the array starting <paramref name="displacement"/> bytes in
    /// (MPI_File_set_view with a filetype from MPI_Type_create_subarray).  Each rank passes its own
    /// block; one collective access then moves a rank's whole block, packed in its buffer in the
    /// same order.  Offsets count the block's elements. Collective.
    /// </summary>
    /// <example>
    /// A 2-D grid of <c>rows</c> × <c>cols</c> doubles split by rows between the ranks: each writes its
    /// rows in one call.
    /// <code>
    /// file.SetView&lt;double&gt;(0, sizes: [rows, cols], subsizes: [myRows, cols], starts: [firstRow, 0]);
    /// file.WriteAtAll(FileOffset.Zero, myBlock); // myRows * cols doubles, row after row
    /// </code>
    /// </example>
    /// <param name="displacement">Where the array starts, in bytes from the beginning of the file.</param>
    /// <param name="sizes">The whole array's extent in each dimension (1 to 32 dimensions, each positive).</param>
    /// <param name="subsizes">This rank's block's extent in each dimension (positive, at most the array's).</param>
    /// <param name="starts">Where this rank's block starts in each dimension (from 0; the block must fit).</param>
    /// <param name="info">Hints, or null.</param>
    /// <exception cref="ArgumentException">The three lists differ in length, or have none or more than 32 dimensions.</exception>
    /// <exception cref="ArgumentOutOfRangeException">A size or subsize is not positive, or a block does not fit the array in some dimension.</exception>
    public void SetView<T>(long displacement, ReadOnlySpan<int> sizes, ReadOnlySpan<int> subsizes, ReadOnlySpan<int> starts, Info? info = null)
        where T : unmanaged
    {
        FileHandle h = Handle;
        if (displacement < 0)
            throw new ArgumentOutOfRangeException(nameof(displacement), displacement, SR.Format(SR.FileOffsetNegative, displacement));
        int n = sizes.Length;
        if (n is < 1 or > MaxSubarrayDimensions)
            throw new ArgumentException(SR.Format(SR.FileSubarrayDimensions, n, MaxSubarrayDimensions), nameof(sizes));
        if (subsizes.Length != n || starts.Length != n)
            throw new ArgumentException(SR.Format(SR.FileSubarrayLengths, n, subsizes.Length, starts.Length), subsizes.Length != n ? nameof(subsizes) : nameof(starts));
        for (int d = 0; d < n; d++)
        {
            if (sizes[d] < 1)
                throw new ArgumentOutOfRangeException(nameof(sizes), sizes[d], SR.Format(SR.FileSubarrayExtent, "sizes", d, sizes[d]));
            if (subsizes[d] < 1)
                throw new ArgumentOutOfRangeException(nameof(subsizes), subsizes[d], SR.Format(SR.FileSubarrayExtent, "subsizes", d, subsizes[d]));
            if (starts[d] < 0 || starts[d] > sizes[d] - subsizes[d])
                throw new ArgumentOutOfRangeException(nameof(starts), starts[d], SR.Format(SR.FileSubarrayFit, d, subsizes[d], starts[d], sizes[d]));
        }
        int rc;
        fixed (int* sp = sizes)
        fixed (int* bp = subsizes)
        fixed (int* tp = starts)
            rc = Core.FileSetViewSubarray(h, displacement, sizeof(T), n, sp, bp, tp, Info.HandleOf(info));
        ThrowHelper.Check(rc);
        _elementSize = sizeof(T);
    }

    /// <summary>The most dimensions a subarray view takes (the core's bound).</summary>
    private const int MaxSubarrayDimensions = 32;

    private void SetView(long displacement, int elementSize, int blockLength, int stride, Info? info)
    {
        FileHandle h = Handle;
        if (displacement < 0)
            throw new ArgumentOutOfRangeException(nameof(displacement), displacement, SR.Format(SR.FileOffsetNegative, displacement));
        int rc = Core.FileSetView(h, displacement, elementSize, blockLength, stride, Info.HandleOf(info));
        ThrowHelper.Check(rc);
        _elementSize = elementSize;
    }

    // ---- the one access path ----

    private const int AccessAt = 0, AccessIndividual = 1, AccessShared = 2;

    private static bool IsWrite(int op) => (op & 1) != 0;

    private static int Positioning(int op) =>
        op <= CoreIo.WriteAtAll ? AccessAt : op <= CoreIo.WriteAll ? AccessIndividual : AccessShared;

    /// <summary>Checks an access against the mode, offset and view; returns the file handle.</summary>
    private FileHandle Check(int op, long offset, long bytes, string paramName)
    {
        FileHandle h = Handle;
        if (IsWrite(op) ? (_mode & MpiFileMode.ReadOnly) != 0 : (_mode & MpiFileMode.WriteOnly) != 0)
            throw new NotSupportedException(SR.Format(IsWrite(op) ? SR.FileNotWritable : SR.FileNotReadable, _mode));
        int positioning = Positioning(op);
        if (positioning != AccessShared && (_mode & MpiFileMode.Sequential) != 0)
            throw new NotSupportedException(SR.FileSequential);
        if (positioning == AccessAt && offset < 0)
            throw new ArgumentOutOfRangeException("offset", offset, SR.Format(SR.FileOffsetNegative, offset));
        if (bytes % _elementSize != 0)
            throw new ArgumentException(SR.Format(SR.FileElementSize, bytes, _elementSize), paramName);
        return h;
    }

    private Status Access<T>(int op, long offset, ReadOnlySpan<T> buffer) where T : unmanaged
    {
        long bytes = (long)buffer.Length * sizeof(T);
        FileHandle h = Check(op, offset, bytes, nameof(buffer));
        Status st = default;
        int rc;
        fixed (T* p = buffer) // null for an empty span
            rc = Core.FileIo(h, op, offset, p, bytes, &st);
        ThrowHelper.Check(rc);
        return st;
    }

    private Status Access<T>(int op, long offset, T[] buffer, int bufferOffset, int count) where T : unmanaged
    {
        ThrowHelper.CheckSlice(buffer, bufferOffset, count, nameof(buffer));
        return Access(op, offset, new ReadOnlySpan<T>(buffer, bufferOffset, count));
    }

    private static int Length<T>(T[] buffer)
    {
        if (buffer is null)
            ThrowHelper.ThrowNull(nameof(buffer));
        return buffer.Length;
    }

    private Request Post<T>(int op, FileOffset offset, T[] buffer, int bufferOffset, int count) where T : unmanaged
    {
        long etypes = At<T>(offset);
        ThrowHelper.CheckSlice(buffer, bufferOffset, count, nameof(buffer));
        FileHandle h = Check(op, etypes, (long)count * sizeof(T), nameof(buffer));
        return Request.PostFile(buffer, bufferOffset, count, h, op, etypes);
    }

    // ---- explicit offsets ----

    /// <summary>An offset in the view's etypes for an access of <typeparamref name="T"/> elements.</summary>
    private long At<T>(FileOffset offset) where T : unmanaged => offset.InEtypes(sizeof(T), _elementSize);

    /// <summary>Reads into <paramref name="buffer"/> from <paramref name="offset"/> (MPI_File_read_at).</summary>
    /// <param name="offset">Where reads: <see cref="FileOffset.Elements"/> of <typeparamref name="T"/> or <see cref="FileOffset.Bytes"/>, in the view's data.</param>
    /// <param name="buffer">Receives the data; fewer elements arrive at the end of the file (see <see cref="Status.GetCount{T}"/>).</param>
    /// <returns>The status: <see cref="Status.GetCount{T}"/> gives the elements read.</returns>
    public Status ReadAt<T>(FileOffset offset, Span<T> buffer) where T : unmanaged => Access(CoreIo.ReadAt, At<T>(offset), (ReadOnlySpan<T>)buffer);
    /// <inheritdoc cref="ReadAt{T}(FileOffset, Span{T})"/>
    public Status ReadAt<T>(FileOffset offset, T[] buffer) where T : unmanaged => Access(CoreIo.ReadAt, At<T>(offset), buffer, 0, Length(buffer));
    /// <inheritdoc cref="ReadAt{T}(FileOffset, Span{T})" path="/*[not(self::param)]"/>
    /// <param name="offset">Where reads, in elements of <typeparamref name="T"/> or bytes of the view's data.</param>
    /// <param name="buffer">Receives the data.</param>
    /// <param name="bufferOffset">First element of <paramref name="buffer"/> to fill.</param>
    /// <param name="count">Elements to read.</param>
    public Status ReadAt<T>(FileOffset offset, T[] buffer, int bufferOffset, int count) where T : unmanaged => Access(CoreIo.ReadAt, At<T>(offset), buffer, bufferOffset, count);

    /// <summary>Writes <paramref name="buffer"/> at <paramref name="offset"/> (MPI_File_write_at).</summary>
    /// <param name="offset">Where writes: <see cref="FileOffset.Elements"/> of <typeparamref name="T"/> or <see cref="FileOffset.Bytes"/>, in the view's data.</param>
    /// <param name="buffer">The data.</param>
    /// <returns>The status: <see cref="Status.GetCount{T}"/> gives the elements written.</returns>
    public Status WriteAt<T>(FileOffset offset, ReadOnlySpan<T> buffer) where T : unmanaged => Access(CoreIo.WriteAt, At<T>(offset), buffer);
    /// <inheritdoc cref="WriteAt{T}(FileOffset, ReadOnlySpan{T})"/>
    public Status WriteAt<T>(FileOffset offset, T[] buffer) where T : unmanaged => Access(CoreIo.WriteAt, At<T>(offset), buffer, 0, Length(buffer));
    /// <inheritdoc cref="WriteAt{T}(FileOffset, ReadOnlySpan{T})" path="/*[not(self::param)]"/>
    /// <param name="offset">Where writes, in elements of <typeparamref name="T"/> or bytes of the view's data.</param>
    /// <param name="buffer">The data.</param>
    /// <param name="bufferOffset">First element of <paramref name="buffer"/> to write.</param>
    /// <param name="count">Elements to write.</param>
    public Status WriteAt<T>(FileOffset offset, T[] buffer, int bufferOffset, int count) where T : unmanaged => Access(CoreIo.WriteAt, At<T>(offset), buffer, bufferOffset, count);

    /// <summary>Collective <see cref="ReadAt{T}(FileOffset, Span{T})"/> (MPI_File_read_at_all): every rank calls it, with its own offset and buffer.</summary>
    /// <param name="offset">Where this rank reads: <see cref="FileOffset.Elements"/> of <typeparamref name="T"/> or <see cref="FileOffset.Bytes"/>, in the view's data.</param>
    /// <param name="buffer">Receives the data.</param>
    /// <returns>The status: <see cref="Status.GetCount{T}"/> gives the elements read.</returns>
    public Status ReadAtAll<T>(FileOffset offset, Span<T> buffer) where T : unmanaged => Access(CoreIo.ReadAtAll, At<T>(offset), (ReadOnlySpan<T>)buffer);
    /// <inheritdoc cref="ReadAtAll{T}(FileOffset, Span{T})"/>
    public Status ReadAtAll<T>(FileOffset offset, T[] buffer) where T : unmanaged => Access(CoreIo.ReadAtAll, At<T>(offset), buffer, 0, Length(buffer));
    /// <inheritdoc cref="ReadAtAll{T}(FileOffset, Span{T})" path="/*[not(self::param)]"/>
    /// <param name="offset">Where this rank reads, in elements of <typeparamref name="T"/> or bytes of the view's data.</param>
    /// <param name="buffer">Receives the data.</param>
    /// <param name="bufferOffset">First element of <paramref name="buffer"/> to fill.</param>
    /// <param name="count">Elements to read.</param>
    public Status ReadAtAll<T>(FileOffset offset, T[] buffer, int bufferOffset, int count) where T : unmanaged => Access(CoreIo.ReadAtAll, At<T>(offset), buffer, bufferOffset, count);

    /// <summary>Collective <see cref="WriteAt{T}(FileOffset, ReadOnlySpan{T})"/> (MPI_File_write_at_all): every rank calls it, with its own offset and data.</summary>
    /// <param name="offset">Where this rank writes: <see cref="FileOffset.Elements"/> of <typeparamref name="T"/> or <see cref="FileOffset.Bytes"/>, in the view's data.</param>
    /// <param name="buffer">The data.</param>
    /// <returns>The status: <see cref="Status.GetCount{T}"/> gives the elements written.</returns>
    public Status WriteAtAll<T>(FileOffset offset, ReadOnlySpan<T> buffer) where T : unmanaged => Access(CoreIo.WriteAtAll, At<T>(offset), buffer);
    /// <inheritdoc cref="WriteAtAll{T}(FileOffset, ReadOnlySpan{T})"/>
    public Status WriteAtAll<T>(FileOffset offset, T[] buffer) where T : unmanaged => Access(CoreIo.WriteAtAll, At<T>(offset), buffer, 0, Length(buffer));
    /// <inheritdoc cref="WriteAtAll{T}(FileOffset, ReadOnlySpan{T})" path="/*[not(self::param)]"/>
    /// <param name="offset">Where this rank writes, in elements of <typeparamref name="T"/> or bytes of the view's data.</param>
    /// <param name="buffer">The data.</param>
    /// <param name="bufferOffset">First element of <paramref name="buffer"/> to write.</param>
    /// <param name="count">Elements to write.</param>
    public Status WriteAtAll<T>(FileOffset offset, T[] buffer, int bufferOffset, int count) where T : unmanaged => Access(CoreIo.WriteAtAll, At<T>(offset), buffer, bufferOffset, count);

    // ---- nonblocking, explicit offsets ----

    /// <summary>
    /// Reads into <paramref name="buffer"/> from <paramref name="offset"/> without waiting (MPI_File_iread_at's semantics): at thread
    /// level <see cref="ThreadLevel.Multiple"/> the read runs on a thread of its own while this rank
    /// goes on, and the request completes once the data is in the buffer; below Multiple no other
    /// thread may call MPI, and the read is made inside this call.  A read that fails in the file
    /// system throws <see cref="MpiException"/> from the request's completion (from this call below
    /// Multiple), where MPI's own nonblocking read would never complete (MPICH 4.0) or crash the
    /// process (Open MPI 4.1).
    /// </summary>
    /// <param name="offset">Where to read: <see cref="FileOffset.Elements"/> of <typeparamref name="T"/> or <see cref="FileOffset.Bytes"/>, in the view's data.</param>
    /// <param name="buffer">Receives the data; do not touch it before the request completes.</param>
    /// <returns>The request; its status gives the elements read.</returns>
    public Request IReadAt<T>(FileOffset offset, T[] buffer) where T : unmanaged => Post<T>(CoreIo.ReadAt, offset, buffer, 0, Length(buffer));
    /// <inheritdoc cref="IReadAt{T}(FileOffset, T[])" path="/*[not(self::param)]"/>
    /// <param name="offset">Where to read, in elements of <typeparamref name="T"/> or bytes of the view's data.</param>
    /// <param name="buffer">Receives the data; do not touch it before the request completes.</param>
    /// <param name="bufferOffset">First element of <paramref name="buffer"/> to fill.</param>
    /// <param name="count">Elements to read.</param>
    public Request IReadAt<T>(FileOffset offset, T[] buffer, int bufferOffset, int count) where T : unmanaged => Post<T>(CoreIo.ReadAt, offset, buffer, bufferOffset, count);

    /// <summary>
    /// Writes <paramref name="buffer"/> at <paramref name="offset"/> without waiting (MPI_File_iwrite_at's semantics): at thread
    /// level <see cref="ThreadLevel.Multiple"/> the write runs on a thread of its own while this
    /// rank goes on, and the request completes once the data is written; below Multiple no other
    /// thread may call MPI, and the write is made inside this call.  A write that fails in the file
    /// system (a full device) throws <see cref="MpiException"/> of class MPI_ERR_IO from the
    /// request's completion (from this call below Multiple).
    /// </summary>
    /// <param name="offset">Where to write: <see cref="FileOffset.Elements"/> of <typeparamref name="T"/> or <see cref="FileOffset.Bytes"/>, in the view's data.</param>
    /// <param name="buffer">The data; do not modify it before the request completes.</param>
    /// <returns>The request; its status gives the elements written.</returns>
    public Request IWriteAt<T>(FileOffset offset, T[] buffer) where T : unmanaged => Post<T>(CoreIo.WriteAt, offset, buffer, 0, Length(buffer));
    /// <inheritdoc cref="IWriteAt{T}(FileOffset, T[])" path="/*[not(self::param)]"/>
    /// <param name="offset">Where to write, in elements of <typeparamref name="T"/> or bytes of the view's data.</param>
    /// <param name="buffer">The data; do not modify it before the request completes.</param>
    /// <param name="bufferOffset">First element of <paramref name="buffer"/> to write.</param>
    /// <param name="count">Elements to write.</param>
    public Request IWriteAt<T>(FileOffset offset, T[] buffer, int bufferOffset, int count) where T : unmanaged => Post<T>(CoreIo.WriteAt, offset, buffer, bufferOffset, count);

    // ---- long offsets, refused at compile time ----
    //
    // Each form of an explicit-offset access also exists with a long offset, marked obsolete as
    // an error so that a call written with a bare number does not compile (MPI's own offsets
    // count bytes until SetView and view elements after it).  They stay in the public API for
    // binaries built against them, and each forwards to its FileOffset form: the long counts
    // etypes of the view, so it becomes FileOffset.Bytes of those etypes' bytes.

    /// <summary>The message of the <see cref="long"/>-offset forms, which do not compile.</summary>
    private const string ObsoleteLongOffset =
        "A long file offset counts bytes until SetView and elements of the view after it, so the same number means two places. " +
        "Name the unit: FileOffset.Elements(n) counts elements of the buffer's type, FileOffset.Bytes(n) counts bytes " +
        "(e.g. file.WriteAtAll(FileOffset.Elements(rank * count), data)).";

    /// <summary>The position a <see cref="long"/> offset names in MPI: <paramref name="offset"/> elements of the view's etype.</summary>
    private FileOffset Etypes(long offset)
    {
        _ = Handle; // a closed file is refused first, as by every access
        if (offset < 0)
            throw new ArgumentOutOfRangeException(nameof(offset), offset, SR.Format(SR.FileOffsetNegative, offset));
        return FileOffset.Bytes(checked(offset * _elementSize));
    }

    /// <summary>Refused at compile time: a <see cref="long"/> offset counts bytes until SetView and view elements after; pass a <see cref="FileOffset"/>.</summary>
    [Obsolete(ObsoleteLongOffset, error: true), EditorBrowsable(EditorBrowsableState.Never)]
    public Status ReadAt<T>(long offset, Span<T> buffer) where T : unmanaged => ReadAt(Etypes(offset), buffer);
    /// <inheritdoc cref="ReadAt{T}(long, Span{T})"/>
    [Obsolete(ObsoleteLongOffset, error: true), EditorBrowsable(EditorBrowsableState.Never)]
    public Status ReadAt<T>(long offset, T[] buffer) where T : unmanaged => ReadAt(Etypes(offset), buffer);
    /// <inheritdoc cref="ReadAt{T}(long, Span{T})"/>
    [Obsolete(ObsoleteLongOffset, error: true), EditorBrowsable(EditorBrowsableState.Never)]
    public Status ReadAt<T>(long offset, T[] buffer, int bufferOffset, int count) where T : unmanaged => ReadAt(Etypes(offset), buffer, bufferOffset, count);
    /// <inheritdoc cref="ReadAt{T}(long, Span{T})"/>
    [Obsolete(ObsoleteLongOffset, error: true), EditorBrowsable(EditorBrowsableState.Never)]
    public Status WriteAt<T>(long offset, ReadOnlySpan<T> buffer) where T : unmanaged => WriteAt(Etypes(offset), buffer);
    /// <inheritdoc cref="ReadAt{T}(long, Span{T})"/>
    [Obsolete(ObsoleteLongOffset, error: true), EditorBrowsable(EditorBrowsableState.Never)]
    public Status WriteAt<T>(long offset, T[] buffer) where T : unmanaged => WriteAt(Etypes(offset), buffer);
    /// <inheritdoc cref="ReadAt{T}(long, Span{T})"/>
    [Obsolete(ObsoleteLongOffset, error: true), EditorBrowsable(EditorBrowsableState.Never)]
    public Status WriteAt<T>(long offset, T[] buffer, int bufferOffset, int count) where T : unmanaged => WriteAt(Etypes(offset), buffer, bufferOffset, count);
    /// <inheritdoc cref="ReadAt{T}(long, Span{T})"/>
    [Obsolete(ObsoleteLongOffset, error: true), EditorBrowsable(EditorBrowsableState.Never)]
    public Status ReadAtAll<T>(long offset, Span<T> buffer) where T : unmanaged => ReadAtAll(Etypes(offset), buffer);
    /// <inheritdoc cref="ReadAt{T}(long, Span{T})"/>
    [Obsolete(ObsoleteLongOffset, error: true), EditorBrowsable(EditorBrowsableState.Never)]
    public Status ReadAtAll<T>(long offset, T[] buffer) where T : unmanaged => ReadAtAll(Etypes(offset), buffer);
    /// <inheritdoc cref="ReadAt{T}(long, Span{T})"/>
    [Obsolete(ObsoleteLongOffset, error: true), EditorBrowsable(EditorBrowsableState.Never)]
    public Status ReadAtAll<T>(long offset, T[] buffer, int bufferOffset, int count) where T : unmanaged => ReadAtAll(Etypes(offset), buffer, bufferOffset, count);
    /// <inheritdoc cref="ReadAt{T}(long, Span{T})"/>
    [Obsolete(ObsoleteLongOffset, error: true), EditorBrowsable(EditorBrowsableState.Never)]
    public Status WriteAtAll<T>(long offset, ReadOnlySpan<T> buffer) where T : unmanaged => WriteAtAll(Etypes(offset), buffer);
    /// <inheritdoc cref="ReadAt{T}(long, Span{T})"/>
    [Obsolete(ObsoleteLongOffset, error: true), EditorBrowsable(EditorBrowsableState.Never)]
    public Status WriteAtAll<T>(long offset, T[] buffer) where T : unmanaged => WriteAtAll(Etypes(offset), buffer);
    /// <inheritdoc cref="ReadAt{T}(long, Span{T})"/>
    [Obsolete(ObsoleteLongOffset, error: true), EditorBrowsable(EditorBrowsableState.Never)]
    public Status WriteAtAll<T>(long offset, T[] buffer, int bufferOffset, int count) where T : unmanaged => WriteAtAll(Etypes(offset), buffer, bufferOffset, count);
    /// <inheritdoc cref="ReadAt{T}(long, Span{T})"/>
    [Obsolete(ObsoleteLongOffset, error: true), EditorBrowsable(EditorBrowsableState.Never)]
    public Request IReadAt<T>(long offset, T[] buffer) where T : unmanaged => IReadAt(Etypes(offset), buffer);
    /// <inheritdoc cref="ReadAt{T}(long, Span{T})"/>
    [Obsolete(ObsoleteLongOffset, error: true), EditorBrowsable(EditorBrowsableState.Never)]
    public Request IReadAt<T>(long offset, T[] buffer, int bufferOffset, int count) where T : unmanaged => IReadAt(Etypes(offset), buffer, bufferOffset, count);
    /// <inheritdoc cref="ReadAt{T}(long, Span{T})"/>
    [Obsolete(ObsoleteLongOffset, error: true), EditorBrowsable(EditorBrowsableState.Never)]
    public Request IWriteAt<T>(long offset, T[] buffer) where T : unmanaged => IWriteAt(Etypes(offset), buffer);
    /// <inheritdoc cref="ReadAt{T}(long, Span{T})"/>
    [Obsolete(ObsoleteLongOffset, error: true), EditorBrowsable(EditorBrowsableState.Never)]
    public Request IWriteAt<T>(long offset, T[] buffer, int bufferOffset, int count) where T : unmanaged => IWriteAt(Etypes(offset), buffer, bufferOffset, count);

    // ---- this rank's file pointer ----

    /// <summary>Reads at this rank's file pointer and advances it (MPI_File_read).</summary>
    /// <param name="buffer">Receives the data.</param>
    /// <returns>The status: <see cref="Status.GetCount{T}"/> gives the elements read.</returns>
    public Status Read<T>(Span<T> buffer) where T : unmanaged => Access(CoreIo.Read, 0, (ReadOnlySpan<T>)buffer);
    /// <inheritdoc cref="Read{T}(Span{T})"/>
    public Status Read<T>(T[] buffer) where T : unmanaged => Access(CoreIo.Read, 0, buffer, 0, Length(buffer));
    /// <inheritdoc cref="Read{T}(Span{T})" path="/*[not(self::param)]"/>
    /// <param name="buffer">Receives the data.</param>
    /// <param name="offset">First element of <paramref name="buffer"/> to fill.</param>
    /// <param name="count">Elements to read.</param>
    public Status Read<T>(T[] buffer, int offset, int count) where T : unmanaged => Access(CoreIo.Read, 0, buffer, offset, count);

    /// <summary>Writes at this rank's file pointer and advances it (MPI_File_write).</summary>
    /// <param name="buffer">The data.</param>
    /// <returns>The status: <see cref="Status.GetCount{T}"/> gives the elements written.</returns>
    public Status Write<T>(ReadOnlySpan<T> buffer) where T : unmanaged => Access(CoreIo.Write, 0, buffer);
    /// <inheritdoc cref="Write{T}(ReadOnlySpan{T})"/>
    public Status Write<T>(T[] buffer) where T : unmanaged => Access(CoreIo.Write, 0, buffer, 0, Length(buffer));
    /// <inheritdoc cref="Write{T}(ReadOnlySpan{T})" path="/*[not(self::param)]"/>
    /// <param name="buffer">The data.</param>
    /// <param name="offset">First element of <paramref name="buffer"/> to write.</param>
    /// <param name="count">Elements to write.</param>
    public Status Write<T>(T[] buffer, int offset, int count) where T : unmanaged => Access(CoreIo.Write, 0, buffer, offset, count);

    /// <summary>Collective <see cref="Read{T}(Span{T})"/> (MPI_File_read_all): each rank reads at its own file pointer.</summary>
    /// <param name="buffer">Receives the data.</param>
    /// <returns>The status: <see cref="Status.GetCount{T}"/> gives the elements read.</returns>
    public Status ReadAll<T>(Span<T> buffer) where T : unmanaged => Access(CoreIo.ReadAll, 0, (ReadOnlySpan<T>)buffer);
    /// <inheritdoc cref="ReadAll{T}(Span{T})"/>
    public Status ReadAll<T>(T[] buffer) where T : unmanaged => Access(CoreIo.ReadAll, 0, buffer, 0, Length(buffer));

    /// <summary>Collective <see cref="Write{T}(ReadOnlySpan{T})"/> (MPI_File_write_all): each rank writes at its own file pointer.</summary>
    /// <param name="buffer">The data.</param>
    /// <returns>The status: <see cref="Status.GetCount{T}"/> gives the elements written.</returns>
    public Status WriteAll<T>(ReadOnlySpan<T> buffer) where T : unmanaged => Access(CoreIo.WriteAll, 0, buffer);
    /// <inheritdoc cref="WriteAll{T}(ReadOnlySpan{T})"/>
    public Status WriteAll<T>(T[] buffer) where T : unmanaged => Access(CoreIo.WriteAll, 0, buffer, 0, Length(buffer));

    /// <summary>Moves this rank's file pointer (MPI_File_seek); <paramref name="offset"/> counts elements of the view.</summary>
    public void Seek(long offset, SeekOrigin origin = SeekOrigin.Begin) => SeekPointer(offset, origin, shared: 0);

    /// <summary>This rank's file pointer, in elements of the view (MPI_File_get_position).</summary>
    public long Position => GetPosition(shared: 0);

    // ---- the shared file pointer ----

    /// <summary>Reads at the shared file pointer and advances it for every rank (MPI_File_read_shared); ranks calling it at once are served in some order.</summary>
    /// <param name="buffer">Receives the data.</param>
    /// <returns>The status: <see cref="Status.GetCount{T}"/> gives the elements read.</returns>
    public Status ReadShared<T>(Span<T> buffer) where T : unmanaged => Access(CoreIo.ReadShared, 0, (ReadOnlySpan<T>)buffer);
    /// <inheritdoc cref="ReadShared{T}(Span{T})"/>
    public Status ReadShared<T>(T[] buffer) where T : unmanaged => Access(CoreIo.ReadShared, 0, buffer, 0, Length(buffer));

    /// <summary>Writes at the shared file pointer and advances it for every rank (MPI_File_write_shared).</summary>
    /// <param name="buffer">The data.</param>
    /// <returns>The status: <see cref="Status.GetCount{T}"/> gives the elements written.</returns>
    public Status WriteShared<T>(ReadOnlySpan<T> buffer) where T : unmanaged => Access(CoreIo.WriteShared, 0, buffer);
    /// <inheritdoc cref="WriteShared{T}(ReadOnlySpan{T})"/>
    public Status WriteShared<T>(T[] buffer) where T : unmanaged => Access(CoreIo.WriteShared, 0, buffer, 0, Length(buffer));

    /// <summary>Collective read at the shared file pointer in rank order (MPI_File_read_ordered): rank 0's data first, then rank 1's, ...</summary>
    /// <param name="buffer">Receives this rank's part.</param>
    /// <returns>The status: <see cref="Status.GetCount{T}"/> gives the elements read.</returns>
    public Status ReadOrdered<T>(Span<T> buffer) where T : unmanaged => Access(CoreIo.ReadOrdered, 0, (ReadOnlySpan<T>)buffer);
    /// <inheritdoc cref="ReadOrdered{T}(Span{T})"/>
    public Status ReadOrdered<T>(T[] buffer) where T : unmanaged => Access(CoreIo.ReadOrdered, 0, buffer, 0, Length(buffer));

    /// <summary>Collective write at the shared file pointer in rank order (MPI_File_write_ordered): rank 0's data first, then rank 1's, ...</summary>
    /// <param name="buffer">This rank's part.</param>
    /// <returns>The status: <see cref="Status.GetCount{T}"/> gives the elements written.</returns>
    public Status WriteOrdered<T>(ReadOnlySpan<T> buffer) where T : unmanaged => Access(CoreIo.WriteOrdered, 0, buffer);
    /// <inheritdoc cref="WriteOrdered{T}(ReadOnlySpan{T})"/>
    public Status WriteOrdered<T>(T[] buffer) where T : unmanaged => Access(CoreIo.WriteOrdered, 0, buffer, 0, Length(buffer));

    /// <summary>Moves the shared file pointer (MPI_File_seek_shared). Collective: every rank passes the same values.</summary>
    public void SeekShared(long offset, SeekOrigin origin = SeekOrigin.Begin) => SeekPointer(offset, origin, shared: 1);

    /// <summary>The shared file pointer, in elements of the view (MPI_File_get_position_shared).</summary>
    public long SharedPosition => GetPosition(shared: 1);

    private void SeekPointer(long offset, SeekOrigin origin, int shared)
    {
        FileHandle h = Handle;
        if (origin is not (SeekOrigin.Begin or SeekOrigin.Current or SeekOrigin.End))
            throw new ArgumentOutOfRangeException(nameof(origin), origin, null);
        if (shared == 0 && (_mode & MpiFileMode.Sequential) != 0)
            throw new NotSupportedException(SR.FileSequential);
        if (origin == SeekOrigin.Begin && offset < 0)
            throw new ArgumentOutOfRangeException(nameof(offset), offset, SR.Format(SR.FileOffsetNegative, offset));
        int rc = Core.FileSeek(h, offset, (int)origin, shared);
        ThrowHelper.Check(rc);
    }

    private long GetPosition(int shared)
    {
        FileHandle h = Handle;
        long position = 0;
        int rc = Core.FilePosition(h, shared, &position);
        ThrowHelper.Check(rc);
        return position;
    }

    // ---- the file as a whole ----

    /// <summary>Flushes this process's writes to the storage device (MPI_File_sync). Collective.</summary>
    public void Sync() => ThrowHelper.Check(Core.FileSync(Handle));

    /// <summary>The file's size in bytes (MPI_File_get_size).</summary>
    public long GetSize()
    {
        FileHandle h = Handle;
        long bytes = 0;
        ThrowHelper.Check(Core.FileGetSize(h, &bytes));
        return bytes;
    }

    /// <summary>Truncates or extends the file to <paramref name="bytes"/> (MPI_File_set_size). Collective: every rank passes the same size.</summary>
    public void SetSize(long bytes) => ThrowHelper.Check(Core.FileSetSize(Handle, NonNegative(bytes)));

    /// <summary>Reserves storage for the first <paramref name="bytes"/> of the file (MPI_File_preallocate); the file grows to at least that size. Collective.</summary>
    public void Preallocate(long bytes) => ThrowHelper.Check(Core.FilePreallocate(Handle, NonNegative(bytes)));

    /// <summary>
    /// Atomic mode (MPI-4.0 §14.6.1): when true, concurrent conflicting accesses by
    /// the ranks are sequentially consistent.  Setting it is collective (MPI_File_set_atomicity).
    /// </summary>
    public bool Atomicity
    {
        get
        {
            FileHandle h = Handle;
            int atomic = 0;
            ThrowHelper.Check(Core.FileGetAtomicity(h, &atomic));
            return atomic != 0;
        }
        set => ThrowHelper.Check(Core.FileSetAtomicity(Handle, value ? 1 : 0));
    }

    private static long NonNegative(long bytes) =>
        bytes >= 0 ? bytes : throw new ArgumentOutOfRangeException(nameof(bytes), bytes, SR.Format(SR.FileSizeNegative, bytes));

    /// <summary>The path and state, for debugging.</summary>
    public override string ToString() => _handle == FileHandle.Null ?
 $"MpiFile({Path}, closed)" : $"MpiFile({Path}, {_mode})";
}
