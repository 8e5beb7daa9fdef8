namespace System.MP;

/// <summary>
/// Decides what a duplicate gets of an attribute (MPI's copy callback, MPI-4.0 §7.7.2):
/// called by <see cref="Communicator.Dup"/> once per attribute the communicator has.
/// </summary>
/// <param name="source">The communicator being duplicated.</param>
/// <param name="value">The attribute's value on <paramref name="source"/>.</param>
/// <param name="copy">The value the duplicate gets, when the function returns true.</param>
/// <returns>True to give the duplicate the attribute, false to leave it out.</returns>
public delegate bool AttributeCopier<T>(Communicator source, T value, out T copy);

/// <summary>
/// A key under which communicators cache attributes of type <typeparamref name="T"/>
/// (MPI_Comm_create_keyval), made by <see cref="Communicator.CreateKeyval{T}"/>; libraries
/// layered on MPI keep their per-communicator state this way.  Its copy function decides what
/// <see cref="Communicator.Dup"/> passes on; its delete function runs when an attribute is
/// deleted, replaced, or its communicator is disposed.
/// </summary>
/// <remarks>
/// Disposing the keyval (MPI_Comm_free_keyval) makes it unusable for setting, getting or
/// deleting attributes (<see cref="ObjectDisposedException"/>); attributes already set with it
/// stay, and their copy and delete functions still run, as MPI-4.0 §7.7.2 says.
/// </remarks>
public sealed class Keyval<T> : IDisposable
{
    private volatile bool _disposed;

    internal Keyval(AttributeCopier<T>? copy, Action<Communicator, T>? delete)
    {
        Copy = copy;
        Delete = delete;
    }

    /// <summary>A copy function that never copies (MPI_COMM_NULL_COPY_FN): duplicates do not get the attribute.</summary>
    public static AttributeCopier<T> NullCopy { get; } = (Communicator _, T _, out T copy) =>
    {
        copy = default!;
        return false;
    };

    /// <summary>A copy function that gives duplicates the same value (MPI_COMM_DUP_FN).</summary>
    public static AttributeCopier<T> DupCopy { get; } = (Communicator _, T value, out T copy) =>
    {
        copy = value;
        return true;
    };

    /// <summary>True once <see cref="Dispose"/> was called.</summary>
    public bool IsDisposed => _disposed;

    internal AttributeCopier<T>? Copy { get; }

    internal Action<Communicator, T>? Delete { get; }

    /// <summary>
    /// Frees the keyval (MPI_Comm_free_keyval): it can no longer be used; attributes set with it
    /// stay until deleted, with their copy and delete functions.  Disposing twice is harmless.
    /// </summary>
    public void Dispose() => _disposed = true;

    internal void ThrowIfDisposed() => ObjectDisposedException.ThrowIf(_disposed, this);
}
