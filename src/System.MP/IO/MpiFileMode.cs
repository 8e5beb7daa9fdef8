using System.MP.Interop;

namespace System.MP;

/// <summary>
/// Access modes of <see cref="MpiFile.Open"/> (MPI-4.0 §14.2.1, MPI_MODE_*).  Exactly one of
/// <see cref="ReadOnly"/>, <see cref="WriteOnly"/> and <see cref="ReadWrite"/> is required;
/// <see cref="ReadOnly"/> excludes <see cref="Create"/> and <see cref="Exclusive"/>, and
/// <see cref="Sequential"/> excludes <see cref="ReadWrite"/>.
/// </summary>
[Flags]
public enum MpiFileMode
{
    /// <summary>Read only (MPI_MODE_RDONLY).</summary>
    ReadOnly = CoreFileMode.Rdonly,
    /// <summary>Write only (MPI_MODE_WRONLY).</summary>
    WriteOnly = CoreFileMode.Wronly,
    /// <summary>Reading and writing (MPI_MODE_RDWR).</summary>
    ReadWrite = CoreFileMode.Rdwr,
    /// <summary>Create the file if it does not exist (MPI_MODE_CREATE).</summary>
    Create = CoreFileMode.Create,
    /// <summary>With <see cref="Create"/>: fail if the file exists (MPI_MODE_EXCL).</summary>
    Exclusive = CoreFileMode.Excl,
    /// <summary>Delete the file when it is closed (MPI_MODE_DELETE_ON_CLOSE).</summary>
    DeleteOnClose = CoreFileMode.DeleteOnClose,
    /// <summary>No other process opens the file concurrently (MPI_MODE_UNIQUE_OPEN).</summary>
    UniqueOpen = CoreFileMode.UniqueOpen,
    /// <summary>The file is accessed sequentially, through the shared file pointer only (MPI_MODE_SEQUENTIAL).</summary>
    Sequential = CoreFileMode.Sequential,
    /// <summary>Both file pointers start at the end of the file (MPI_MODE_APPEND).</summary>
    Append = CoreFileMode.Append,
}
