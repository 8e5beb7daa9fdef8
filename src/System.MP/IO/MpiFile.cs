using System.IO;
using System.MP.Interop;
using System.Runtime.CompilerServices;
using System.Text;

namespace System.MP;

/// <summary>
/// A file opened collectively by the ranks of a communicator for parallel I/O
/// (MPI-IO, MPI-4.0 chapter 14).  Data is read and written as arrays or spans of
/// unmanaged elements: at explicit offsets (<see cref="ReadAt{T}(long, T[])"/>,
/// collective <see cref="WriteAtAll{T}(long, T[])"/>, nonblocking
/// <see cref="IWriteAt{T}(long, T[])"/>), through this rank's file pointer
/// (<see cref="Read{T}(T[])"/>, <see cref="Seek"/>) or through the pointer the ranks
/// share (<see cref="WriteShared{T}(T[])"/>, <see cref="WriteOrdered{T}(T[])"/>).
/// </summary>
/// <remarks>
/// Offsets and positions count elements of the current view's element type
/// (bytes until <see cref="SetView{T}(long, Info?)"/>), as in MPI.  A view with a
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
        op <= CoreConst.IoWriteAtAll ? AccessAt : op <= CoreConst.IoWriteAll ? AccessIndividual : AccessShared;

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

    private Request Post<T>(int op, long offset, T[] buffer, int bufferOffset, int count) where T : unmanaged
    {
        ThrowHelper.CheckSlice(buffer, bufferOffset, count, nameof(buffer));
        FileHandle h = Check(op, offset, (long)count * sizeof(T), nameof(buffer));
        return Request.PostFile(buffer, bufferOffset, count, h, op, offset);
    }

    // ---- explicit offsets ----

    /// <summary>Reads into <paramref name="buffer"/> from <paramref name="offset"/> (MPI_File_read_at).</summary>
    /// <param name="offset">Where to read, in elements of the view.</param>
    /// <param name="buffer">Receives the data; fewer elements arrive at the end of the file (see <see cref="Status.GetCount{T}"/>).</param>
    /// <returns>The status: <see cref="Status.GetCount{T}"/> gives the elements read.</returns>
    public Status ReadAt<T>(long offset, Span<T> buffer) where T : unmanaged => Access(CoreConst.IoReadAt, offset, (ReadOnlySpan<T>)buffer);
    /// <inheritdoc cref="ReadAt{T}(long, Span{T})"/>
    public Status ReadAt<T>(long offset, T[] buffer) where T : unmanaged => Access(CoreConst.IoReadAt, offset, buffer, 0, Length(buffer));
    /// <inheritdoc cref="ReadAt{T}(long, Span{T})"/>
    /// <param name="offset">Where to read, in elements of the view.</param>
    /// <param name="buffer">Receives the data.</param>
    /// <param name="bufferOffset">First element of <paramref name="buffer"/> to fill.</param>
    /// <param name="count">Elements to read.</param>
    public Status ReadAt<T>(long offset, T[] buffer, int bufferOffset, int count) where T : unmanaged => Access(CoreConst.IoReadAt, offset, buffer, bufferOffset, count);

    /// <summary>Writes <paramref name="buffer"/> at <paramref name="offset"/> (MPI_File_write_at).</summary>
    /// <param name="offset">Where to write, in elements of the view.</param>
    /// <param name="buffer">The data.</param>
    /// <returns>The status: <see cref="Status.GetCount{T}"/> gives the elements written.</returns>
    public Status WriteAt<T>(long offset, ReadOnlySpan<T> buffer) where T : unmanaged => Access(CoreConst.IoWriteAt, offset, buffer);
    /// <inheritdoc cref="WriteAt{T}(long, ReadOnlySpan{T})"/>
    public Status WriteAt<T>(long offset, T[] buffer) where T : unmanaged => Access(CoreConst.IoWriteAt, offset, buffer, 0, Length(buffer));
    /// <inheritdoc cref="WriteAt{T}(long, ReadOnlySpan{T})"/>
    /// <param name="offset">Where to write, in elements of the view.</param>
    /// <param name="buffer">The data.</param>
    /// <param name="bufferOffset">First element of <paramref name="buffer"/> to write.</param>
    /// <param name="count">Elements to write.</param>
    public Status WriteAt<T>(long offset, T[] buffer, int bufferOffset, int count) where T : unmanaged => Access(CoreConst.IoWriteAt, offset, buffer, bufferOffset, count);

    /// <summary>Collective <see cref="ReadAt{T}(long, Span{T})"/> (MPI_File_read_at_all): every rank calls it, with its own offset and buffer.</summary>
    /// <param name="offset">Where this rank reads, in elements of the view.</param>
    /// <param name="buffer">Receives the data.</param>
    /// <returns>The status: <see cref="Status.GetCount{T}"/> gives the elements read.</returns>
    public Status ReadAtAll<T>(long offset, Span<T> buffer) where T : unmanaged => Access(CoreConst.IoReadAtAll, offset, (ReadOnlySpan<T>)buffer);
    /// <inheritdoc cref="ReadAtAll{T}(long, Span{T})"/>
    public Status ReadAtAll<T>(long offset, T[] buffer) where T : unmanaged => Access(CoreConst.IoReadAtAll, offset, buffer, 0, Length(buffer));
    /// <inheritdoc cref="ReadAtAll{T}(long, Span{T})"/>
    /// <param name="offset">Where this rank reads, in elements of the view.</param>
    /// <param name="buffer">Receives the data.</param>
    /// <param name="bufferOffset">First element of <paramref name="buffer"/> to fill.</param>
    /// <param name="count">Elements to read.</param>
    public Status ReadAtAll<T>(long offset, T[] buffer, int bufferOffset, int count) where T : unmanaged => Access(CoreConst.IoReadAtAll, offset, buffer, bufferOffset, count);

    /// <summary>Collective <see cref="WriteAt{T}(long, ReadOnlySpan{T})"/> (MPI_File_write_at_all): every rank calls it, with its own offset and data.</summary>
    /// <param name="offset">Where this rank writes, in elements of the view.</param>
    /// <param name="buffer">The data.</param>
    /// <returns>The status: <see cref="Status.GetCount{T}"/> gives the elements written.</returns>
    public Status WriteAtAll<T>(long offset, ReadOnlySpan<T> buffer) where T : unmanaged => Access(CoreConst.IoWriteAtAll, offset, buffer);
    /// <inheritdoc cref="WriteAtAll{T}(long, ReadOnlySpan{T})"/>
    public Status WriteAtAll<T>(long offset, T[] buffer) where T : unmanaged => Access(CoreConst.IoWriteAtAll, offset, buffer, 0, Length(buffer));
    /// <inheritdoc cref="WriteAtAll{T}(long, ReadOnlySpan{T})"/>
    /// <param name="offset">Where this rank writes, in elements of the view.</param>
    /// <param name="buffer">The data.</param>
    /// <param name="bufferOffset">First element of <paramref name="buffer"/> to write.</param>
    /// <param name="count">Elements to write.</param>
    public Status WriteAtAll<T>(long offset, T[] buffer, int bufferOffset, int count) where T : unmanaged => Access(CoreConst.IoWriteAtAll, offset, buffer, bufferOffset, count);

    // ---- nonblocking, explicit offsets ----

    /// <summary>
    /// Reads into <paramref name="buffer"/> from <paramref name="offset"/> as a nonblocking
    /// operation (MPI_File_iread_at's semantics) whose request is complete when this returns: the
    /// read is made inside the call, since a nonblocking access that fails in the file system
    /// never completes in MPICH 4.0 and crashes Open MPI 4.1's wait.  A failed read throws
    /// <see cref="MpiException"/> here (Open MPI 4.1 reports some failed reads as 0 elements read).
    /// </summary>
    /// <param name="offset">Where to read, in elements of the view.</param>
    /// <param name="buffer">Receives the data; do not touch it before the request completes.</param>
    /// <returns>The request; its status gives the elements read.</returns>
    public Request IReadAt<T>(long offset, T[] buffer) where T : unmanaged => Post(CoreConst.IoReadAt, offset, buffer, 0, Length(buffer));
    /// <inheritdoc cref="IReadAt{T}(long, T[])"/>
    /// <param name="offset">Where to read, in elements of the view.</param>
    /// <param name="buffer">Receives the data; do not touch it before the request completes.</param>
    /// <param name="bufferOffset">First element of <paramref name="buffer"/> to fill.</param>
    /// <param name="count">Elements to read.</param>
    public Request IReadAt<T>(long offset, T[] buffer, int bufferOffset, int count) where T : unmanaged => Post(CoreConst.IoReadAt, offset, buffer, bufferOffset, count);

    /// <summary>
    /// Writes <paramref name="buffer"/> at <paramref name="offset"/> as a nonblocking operation
    /// (MPI_File_iwrite_at's semantics) whose request is complete when this returns: the write
    /// is made inside the call, since a nonblocking write that fails in the file system (a full
    /// device) never completes in MPICH 4.0 and crashes Open MPI 4.1's wait.  A failed write
    /// throws <see cref="MpiException"/> (class MPI_ERR_IO) here, and no request is made.
    /// </summary>
    /// <param name="offset">Where to write, in elements of the view.</param>
    /// <param name="buffer">The data; do not modify it before the request completes.</param>
    /// <returns>The request; its status gives the elements written.</returns>
    public Request IWriteAt<T>(long offset, T[] buffer) where T : unmanaged => Post(CoreConst.IoWriteAt, offset, buffer, 0, Length(buffer));
    /// <inheritdoc cref="IWriteAt{T}(long, T[])"/>
    /// <param name="offset">Where to write, in elements of the view.</param>
    /// <param name="buffer">The data; do not modify it before the request completes.</param>
    /// <param name="bufferOffset">First element of <paramref name="buffer"/> to write.</param>
    /// <param name="count">Elements to write.</param>
    public Request IWriteAt<T>(long offset, T[] buffer, int bufferOffset, int count) where T : unmanaged => Post(CoreConst.IoWriteAt, offset, buffer, bufferOffset, count);

    // ---- this rank's file pointer ----

    /// <summary>Reads at this rank's file pointer and advances it (MPI_File_read).</summary>
    /// <param name="buffer">Receives the data.</param>
    /// <returns>The status: <see cref="Status.GetCount{T}"/> gives the elements read.</returns>
    public Status Read<T>(Span<T> buffer) where T : unmanaged => Access(CoreConst.IoRead, 0, (ReadOnlySpan<T>)buffer);
    /// <inheritdoc cref="Read{T}(Span{T})"/>
    public Status Read<T>(T[] buffer) where T : unmanaged => Access(CoreConst.IoRead, 0, buffer, 0, Length(buffer));
    /// <inheritdoc cref="Read{T}(Span{T})"/>
    /// <param name="buffer">Receives the data.</param>
    /// <param name="offset">First element of <paramref name="buffer"/> to fill.</param>
    /// <param name="count">Elements to read.</param>
    public Status Read<T>(T[] buffer, int offset, int count) where T : unmanaged => Access(CoreConst.IoRead, 0, buffer, offset, count);

    /// <summary>Writes at this rank's file pointer and advances it (MPI_File_write).</summary>
    /// <param name="buffer">The data.</param>
    /// <returns>The status: <see cref="Status.GetCount{T}"/> gives the elements written.</returns>
    public Status Write<T>(ReadOnlySpan<T> buffer) where T : unmanaged => Access(CoreConst.IoWrite, 0, buffer);
    /// <inheritdoc cref="Write{T}(ReadOnlySpan{T})"/>
    public Status Write<T>(T[] buffer) where T : unmanaged => Access(CoreConst.IoWrite, 0, buffer, 0, Length(buffer));
    /// <inheritdoc cref="Write{T}(ReadOnlySpan{T})"/>
    /// <param name="buffer">The data.</param>
    /// <param name="offset">First element of <paramref name="buffer"/> to write.</param>
    /// <param name="count">Elements to write.</param>
    public Status Write<T>(T[] buffer, int offset, int count) where T : unmanaged => Access(CoreConst.IoWrite, 0, buffer, offset, count);

    /// <summary>Collective <see cref="Read{T}(Span{T})"/> (MPI_File_read_all): each rank reads at its own file pointer.</summary>
    /// <param name="buffer">Receives the data.</param>
    /// <returns>The status: <see cref="Status.GetCount{T}"/> gives the elements read.</returns>
    public Status ReadAll<T>(Span<T> buffer) where T : unmanaged => Access(CoreConst.IoReadAll, 0, (ReadOnlySpan<T>)buffer);
    /// <inheritdoc cref="ReadAll{T}(Span{T})"/>
    public Status ReadAll<T>(T[] buffer) where T : unmanaged => Access(CoreConst.IoReadAll, 0, buffer, 0, Length(buffer));

    /// <summary>Collective <see cref="Write{T}(ReadOnlySpan{T})"/> (MPI_File_write_all): each rank writes at its own file pointer.</summary>
    /// <param name="buffer">The data.</param>
    /// <returns>The status: <see cref="Status.GetCount{T}"/> gives the elements written.</returns>
    public Status WriteAll<T>(ReadOnlySpan<T> buffer) where T : unmanaged => Access(CoreConst.IoWriteAll, 0, buffer);
    /// <inheritdoc cref="WriteAll{T}(ReadOnlySpan{T})"/>
    public Status WriteAll<T>(T[] buffer) where T : unmanaged => Access(CoreConst.IoWriteAll, 0, buffer, 0, Length(buffer));

    /// <summary>Moves this rank's file pointer (MPI_File_seek); <paramref name="offset"/> counts elements of the view.</summary>
    public void Seek(long offset, SeekOrigin origin = SeekOrigin.Begin) => SeekPointer(offset, origin, shared: 0);

    /// <summary>This rank's file pointer, in elements of the view (MPI_File_get_position).</summary>
    public long Position => GetPosition(shared: 0);

    // ---- the shared file pointer ----

    /// <summary>Reads at the shared file pointer and advances it for every rank (MPI_File_read_shared); ranks calling it at once are served in some order.</summary>
    /// <param name="buffer">Receives the data.</param>
    /// <returns>The status: <see cref="Status.GetCount{T}"/> gives the elements read.</returns>
    public Status ReadShared<T>(Span<T> buffer) where T : unmanaged => Access(CoreConst.IoReadShared, 0, (ReadOnlySpan<T>)buffer);
    /// <inheritdoc cref="ReadShared{T}(Span{T})"/>
    public Status ReadShared<T>(T[] buffer) where T : unmanaged => Access(CoreConst.IoReadShared, 0, buffer, 0, Length(buffer));

    /// <summary>Writes at the shared file pointer and advances it for every rank (MPI_File_write_shared).</summary>
    /// <param name="buffer">The data.</param>
    /// <returns>The status: <see cref="Status.GetCount{T}"/> gives the elements written.</returns>
    public Status WriteShared<T>(ReadOnlySpan<T> buffer) where T : unmanaged => Access(CoreConst.IoWriteShared, 0, buffer);
    /// <inheritdoc cref="WriteShared{T}(ReadOnlySpan{T})"/>
    public Status WriteShared<T>(T[] buffer) where T : unmanaged => Access(CoreConst.IoWriteShared, 0, buffer, 0, Length(buffer));

    /// <summary>Collective read at the shared file pointer in rank order (MPI_File_read_ordered): rank 0's data first, then rank 1's, ...</summary>
    /// <param name="buffer">Receives this rank's part.</param>
    /// <returns>The status: <see cref="Status.GetCount{T}"/> gives the elements read.</returns>
    public Status ReadOrdered<T>(Span<T> buffer) where T : unmanaged => Access(CoreConst.IoReadOrdered, 0, (ReadOnlySpan<T>)buffer);
    /// <inheritdoc cref="ReadOrdered{T}(Span{T})"/>
    public Status ReadOrdered<T>(T[] buffer) where T : unmanaged => Access(CoreConst.IoReadOrdered, 0, buffer, 0, Length(buffer));

    /// <summary>Collective write at the shared file pointer in rank order (MPI_File_write_ordered): rank 0's data first, then rank 1's, ...</summary>
    /// <param name="buffer">This rank's part.</param>
    /// <returns>The status: <see cref="Status.GetCount{T}"/> gives the elements written.</returns>
    public Status WriteOrdered<T>(ReadOnlySpan<T> buffer) where T : unmanaged => Access(CoreConst.IoWriteOrdered, 0, buffer);
    /// <inheritdoc cref="WriteOrdered{T}(ReadOnlySpan{T})"/>
    public Status WriteOrdered<T>(T[] buffer) where T : unmanaged => Access(CoreConst.IoWriteOrdered, 0, buffer, 0, Length(buffer));

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
