using System.Collections.Generic;

namespace System.MP;

// Communicator attributes (MPI-4.0 §7.7): values cached on a communicator under keyvals, with
// the keyval's copy function run by Dup and its delete function run by DeleteAttribute,
// SetAttribute over an existing value, and Dispose (MPI_Comm_free) — in reverse order of
// setting (a replaced value keeps its place), as MPI_Finalize deletes MPI_COMM_SELF's (§11.2.4).  Kept in managed code: the
// callbacks are C# functions that run on the calling thread of Dup, Dispose or Shutdown, with
// .NET exceptions and no way for MPI to call into the runtime from MPI_Finalize at exit or from
// a thread the runtime does not know.  The rules are MPI's:
//  - Dup copies each attribute its copy function agrees to, in order of setting; a copy
//    function that throws fails the Dup on this rank: the attributes already copied are
//    deleted, the new communicator is freed, and the exception propagates (MPICH does the same
//    when a copy callback returns an error).
//  - A delete function that throws leaves that attribute in place and propagates: from
//    DeleteAttribute or SetAttribute the old value stays; from Dispose the communicator is not
//    freed (MPICH: "the communicator must not be freed"), the attributes deleted before it are
//    gone, and Dispose may be called again.
//  - Attributes are local to the rank; Split, Create and the other constructors start empty.
public partial class Communicator
{
    private readonly List<CachedAttribute> _attributes = [];

    /// <summary>
    /// Creates a key for caching attributes on communicators (MPI_Comm_create_keyval).
    /// </summary>
    /// <param name="copy">
    /// Run by <see cref="Dup"/> for each communicator that has the attribute: returns whether the
    /// duplicate gets it and with which value.  Null means never copied
    /// (<see cref="Keyval{T}.NullCopy"/>); <see cref="Keyval{T}.DupCopy"/> copies the value as is.
    /// </param>
    /// <param name="delete">Run when the attribute is deleted, replaced, or its communicator disposed (null: nothing to do).</param>
    /// <returns>The key; dispose it when no new attributes will be set with it.</returns>
    public static Keyval<T> CreateKeyval<T>(AttributeCopier<T>? copy = null, Action<Communicator, T>? delete = null) => new(copy, delete);

    /// <summary>
    /// Caches <paramref name="value"/> on this communicator under <paramref name="keyval"/>
    /// (MPI_Comm_set_attr); a value already there is deleted first (its delete function runs).
    /// </summary>
    /// <param name="keyval">The key.</param>
    /// <param name="value">The value.</param>
    /// <exception cref="ObjectDisposedException">The keyval or the communicator was disposed.</exception>
    public void SetAttribute<T>(Keyval<T> keyval, T value)
    {
        _ = Handle;
        ArgumentNullException.ThrowIfNull(keyval);
        keyval.ThrowIfDisposed();
        lock (_attributes)
        {
            var attribute = new CachedAttribute<T>(keyval, value);
            int i = _attributes.FindIndex(a => a.Key == keyval);
            if (i < 0)
            {
                _attributes.Add(attribute);
                return;
            }
            _attributes[i].Delete(this); // throws: the old value stays
            _attributes[i] = attribute;  // in its place, as MPICH keeps it

        }
    }

    /// <summary>Gets the attribute cached under <paramref name="keyval"/> (MPI_Comm_get_attr).</summary>
    /// <param name="keyval">The key.</param>
    /// <param name="value">The value, or default when there is none.</param>
    /// <returns>True when the communicator has the attribute.</returns>
    /// <exception cref="ObjectDisposedException">The keyval or the communicator was disposed.</exception>
    public bool TryGetAttribute<T>(Keyval<T> keyval, out T value)
    {
        _ = Handle;
        ArgumentNullException.ThrowIfNull(keyval);
        keyval.ThrowIfDisposed();
        lock (_attributes)
        {
            if (_attributes.Find(a => a.Key == keyval) is CachedAttribute<T> found)
            {
                value = found.Value;
                return true;
            }
        }
        value = default!;
        return false;
    }

    /// <summary>Deletes the attribute cached under <paramref name="keyval"/>, running its delete function (MPI_Comm_delete_attr).</summary>
    /// <param name="keyval">The key.</param>
    /// <returns>True when there was an attribute to delete.</returns>
    /// <exception cref="ObjectDisposedException">The keyval or the communicator was disposed.</exception>
    public bool DeleteAttribute<T>(Keyval<T> keyval)
    {
        _ = Handle;
        ArgumentNullException.ThrowIfNull(keyval);
        keyval.ThrowIfDisposed();
        lock (_attributes)
        {
            int i = _attributes.FindIndex(a => a.Key == keyval);
            if (i < 0)
                return false;
            _attributes[i].Delete(this); // throws: the attribute stays
            _attributes.RemoveAt(i);
            return true;
        }
    }

    /// <summary>Gives <paramref name="copy"/> (a new duplicate of this communicator) the attributes the copy functions agree to.</summary>
    private void CopyAttributesTo(Communicator copy)
    {
        lock (_attributes)
        {
            try
            {
                foreach (CachedAttribute a in _attributes)
                    if (a.TryCopy(this) is { } copied)
                        copy._attributes.Add(copied);
            }
            catch
            {
                copy.DeleteAttributes(); // a delete that throws here hides the copy's exception, as in MPI
                copy.Free();
                throw;
            }
        }
    }

    /// <summary>Deletes every attribute, the last set first; stops at a delete function that throws (that one and the earlier ones stay).</summary>
    internal void DeleteAttributes()
    {
        lock (_attributes)
        {
            for (int i = _attributes.Count - 1; i >= 0; i--)
            {
                _attributes[i].Delete(this);
                _attributes.RemoveAt(i);
            }
        }
    }

    private abstract class CachedAttribute
    {
        internal abstract object Key { get; }
        internal abstract CachedAttribute? TryCopy(Communicator source);
        internal abstract void Delete(Communicator owner);
    }

    private sealed class CachedAttribute<T>(Keyval<T> key, T value) : CachedAttribute
    {
        internal override object Key => key;
        internal T Value => value;

        internal override CachedAttribute? TryCopy(Communicator source) =>
            key.Copy is { } copy && copy(source, value, out T copied) ? new CachedAttribute<T>(key, copied) : null;

        internal override void Delete(Communicator owner) => key.Delete?.Invoke(owner, value);
    }
}
