using System.MP.Interop;
using System.Runtime.CompilerServices;
using System.Text;

namespace System.MP;

/// <summary>
/// An MPI info object (MPI-4.0 chapter 10): string hints passed when a file is
/// opened (<see cref="MpiFile.Open"/>), such as <c>cb_nodes</c> or <c>striping_unit</c>.
/// The MPI library may ignore hints it does not know.  Dispose it when done; a
/// file keeps no reference to the info it was opened with.
/// </summary>
public sealed unsafe class Info : IDisposable
{
    private InfoHandle _handle; // InfoHandle.Null once disposed

    /// <summary>Creates an empty info object (MPI_Info_create); initializes MPI if needed.</summary>
    public Info()
    {
        Mpi.EnsureInitialized();
        InfoHandle h = InfoHandle.Null;
        int rc = Core.InfoCreate(&h);
        ThrowHelper.Check(rc);
        _handle = h;
    }

    internal Info(InfoHandle handle) => _handle = handle; // one the library made (a process set's info)

    /// <summary>The value of <paramref name="key"/>, or null when it is not set (MPI_Info_get); setting stores it (MPI_Info_set).</summary>
    /// <param name="key">A non-empty key shorter than the MPI library's MPI_MAX_INFO_KEY.</param>
    /// <exception cref="ArgumentException">The key is empty, or the key or value is longer than the library allows.</exception>
    /// <exception cref="ArgumentNullException">The key, or the value set, is null.</exception>
    /// <exception cref="ObjectDisposedException">The info was disposed.</exception>
    public string? this[string key]
    {
        get
        {
            InfoHandle h = Handle;
            byte[] k = KeyBytes(key);
            int found = 0, rc;
            fixed (byte* pk = k)
            {
                rc = Core.InfoGet(h, pk, null, 0, &found);
                ThrowHelper.Check(rc);
                if (found == 0)
                    return null;
                var value = new byte[rc + 1];
                fixed (byte* pv = value)
                    rc = Core.InfoGet(h, pk, pv, value.Length, &found);
                ThrowHelper.Check(rc);
                return Encoding.UTF8.GetString(value, 0, Math.Min(rc, value.Length - 1));
            }
        }
        set
        {
            InfoHandle h = Handle;
            byte[] k = KeyBytes(key);
            if (value is null)
                ThrowHelper.ThrowNull(nameof(value));
            if (value.Contains('\0'))
                throw new ArgumentException(SR.EmbeddedNul, nameof(value));
            byte[] v = Encoding.UTF8.GetBytes(value + "\0");
            int rc;
            fixed (byte* pk = k)
            fixed (byte* pv = v)
                rc = Core.InfoSet(h, pk, pv);
            ThrowHelper.Check(rc);
        }
    }

    /// <summary>Frees the info object (MPI_Info_free).  Calling it again does nothing.</summary>
    public void Dispose()
    {
        InfoHandle h = _handle;
        if (h == InfoHandle.Null)
            return;
        _handle = InfoHandle.Null;
        int rc = Core.InfoFree(h);
        ThrowHelper.Check(rc);
    }

    /// <summary>The core handle; throws <see cref="ObjectDisposedException"/> once disposed.</summary>
    internal InfoHandle Handle
    {
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        get
        {
            InfoHandle h = _handle;
            if (h == InfoHandle.Null)
                throw new ObjectDisposedException(nameof(Info));
            return h;
        }
    }

    /// <summary>The core handle of an optional info: <see cref="InfoHandle.Null"/> for none.</summary>
    internal static InfoHandle HandleOf(Info? info) => info is null ? InfoHandle.Null : info.Handle;


    private static byte[] KeyBytes(string key)
    {
        if (key is null)
            ThrowHelper.ThrowNull(nameof(key));
        if (key.Length == 0)
            throw new ArgumentException(SR.InfoKeyEmpty, nameof(key));
        if (key.Contains('\0'))
            throw new ArgumentException(SR.EmbeddedNul, nameof(key));
        return Encoding.UTF8.GetBytes(key + "\0");
    }
}
