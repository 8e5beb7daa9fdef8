using System.MP.Interop;
using System.Text;

namespace System.MP;

/// <summary>
/// Hints passed to the calls that create MPI objects (MPI_Info, MPI-4.0 10):
/// key/value strings such as <c>no_locks</c> or <c>accumulate_ordering</c> for
/// <see cref="Window{T}"/>.  MPI ignores keys it does not know.
/// </summary>
/// <example>
/// <code>
/// using var info = new Info { ["no_locks"] = "true" };
/// using var win = Window&lt;long&gt;.Allocate(Communicator.World, 100, info);
/// </code>
/// </example>
public sealed unsafe class Info : IDisposable
{
    private int _handle;

    /// <summary>An empty info object (MPI_Info_create).  Initializes MPI if needed.</summary>
    public Info()
    {
        Mpi.EnsureInitialized();
        int h = 0;
        Check(Core.InfoCreate(&h));
        _handle = h;
    }

    /// <summary>
    /// The value of <paramref name="key"/>, or null when it is not set (MPI_Info_get);
    /// setting it stores the value (MPI_Info_set).  Keys and values are bounded by
    /// the library (MPI_MAX_INFO_KEY and MPI_MAX_INFO_VAL: 36 and 256 under Open MPI).
    /// </summary>
    /// <exception cref="ArgumentException">The key or value is empty or too long.</exception>
    /// <exception cref="ObjectDisposedException">The info was disposed.</exception>
    public string? this[string key]
    {
        get
        {
            int h = Handle;
            byte[] k = Utf8(key, nameof(key));
            fixed (byte* pk = k)
            {
                int len = Core.InfoGet(h, pk, null, 0);
                if (len == -1)
                    return null;
                Check(len);
                var value = new byte[len + 1];
                fixed (byte* pv = value)
                    Check(Core.InfoGet(h, pk, pv, value.Length));
                return Encoding.UTF8.GetString(value, 0, len);
            }
        }
        set
        {
            int h = Handle;
            byte[] k = Utf8(key, nameof(key)), v = Utf8(value!, nameof(value));
            fixed (byte* pk = k)
            fixed (byte* pv = v)
                Check(Core.InfoSet(h, pk, pv));
        }
    }

    /// <summary>True after <see cref="Dispose"/>.</summary>
    public bool IsDisposed => _handle == 0;

    /// <summary>Frees the MPI object (MPI_Info_free).  Objects created with it keep their hints.</summary>
    public void Dispose()
    {
        int h = _handle;
        _handle = 0;
        if (h != 0 && Mpi.IsInitialized)
            Core.InfoFree(h);
    }

    /// <summary>The core handle; throws <see cref="ObjectDisposedException"/> once disposed.</summary>
    internal int Handle => _handle != 0 ? _handle : throw new ObjectDisposedException(nameof(Info));

    /// <summary>The core handle of an optional info (MP_INFO_NULL for none).</summary>
    internal static int HandleOf(Info? info) => info?.Handle ?? 0;

    private static byte[] Utf8(string s, string paramName)
    {
        ArgumentNullException.ThrowIfNull(s, paramName);
        if (s.Contains('\0'))
            throw new ArgumentException(SR.InfoNul, paramName);
        return Encoding.UTF8.GetBytes(s + "\0");
    }

    private static void Check(int rc)
    {
        if (rc < 0)
            ThrowHelper.ThrowCore(rc);
    }
}
