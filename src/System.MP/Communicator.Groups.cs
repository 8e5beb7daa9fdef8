using System.MP.Interop;
using System.Collections.Generic;
using System.Text;

namespace System.MP;

// Groups, communicator construction, names and topologies (MPI-4.0 chapters 7 and 8).
public unsafe partial class Communicator
{
    /// <summary>The group of this communicator's ranks (a new Group: dispose it).</summary>
    public Group Group
    {
        get
        {
            int g = 0;
            Check(Core.CommGroup(Handle, &g));
            return new Group(g);
        }
    }

    /// <summary>The communicator's name (MPI_Comm_get_name / MPI_Comm_set_name); at most 127 bytes.</summary>
    public string Name
    {
        get
        {
            byte* buf = stackalloc byte[256];
            int n = Core.CommGetName(Handle, buf, 256);
            Check(n);
            return Encoding.UTF8.GetString(buf, Math.Min(n, 255));
        }
        set
        {
            ArgumentNullException.ThrowIfNull(value);
            int h = Handle;
            byte[] bytes = Encoding.UTF8.GetBytes(value + "\0");
            if (bytes.Length > 128)
                throw new ArgumentException(SR.NameTooLong, nameof(value));
            fixed (byte* p = bytes)
                Check(Core.CommSetName(h, p));
        }
    }

    /// <summary>
    /// A communicator of the members of <paramref name="group"/>, which must be
    /// a subset of this communicator's group (MPI_Comm_create). Collective.
    /// </summary>
    /// <returns>The new communicator, or null on ranks outside the group.</returns>
    public Communicator? Create(Group group)
    {
        ArgumentNullException.ThrowIfNull(group);
        int c = 0;
        Check(Core.CommCreate(Handle, group.Handle, &c));
        return Wrap(c);
    }

    /// <summary>
    /// Splits the ranks into communicators of ranks that can share memory (one
    /// per node; MPI_Comm_split_type with MPI_COMM_TYPE_SHARED). Collective.
    /// </summary>
    /// <param name="key">Orders the ranks within each part (ties by old rank).</param>
    public Communicator SplitShared(int key = 0)
    {
        int c = 0;
        Check(Core.CommSplitType(Handle, 0, key, &c));
        return Wrap(c)!;
    }

    /// <summary>Compares two communicators (MPI_Comm_compare).</summary>
    public static Comparison Compare(Communicator a, Communicator b)
    {
        ArgumentNullException.ThrowIfNull(a);
        ArgumentNullException.ThrowIfNull(b);
        int r = 0;
        Check(Core.CommCompare(a.Handle, b.Handle, &r));
        return (Comparison)r;
    }

    /// <summary>
    /// A communicator with a Cartesian grid topology over the first
    /// dims[0]·dims[1]·… ranks (MPI_Cart_create). Collective.
    /// </summary>
    /// <param name="dims">Extent of each dimension (positive).</param>
    /// <param name="periods">Whether each dimension wraps around.</param>
    /// <param name="reorder">Whether MPI may renumber ranks to fit the machine.</param>
    /// <returns>The grid communicator, or null on ranks outside the grid.</returns>
    public CartesianCommunicator? CreateCartesian(int[] dims, bool[] periods, bool reorder = false)
    {
        ArgumentNullException.ThrowIfNull(dims);
        ArgumentNullException.ThrowIfNull(periods);
        if (periods.Length != dims.Length)
            throw new ArgumentException(SR.Format(SR.PeriodsLength, periods.Length, dims.Length), nameof(periods));
        long cells = 1;
        foreach (int d in dims)
        {
            if (d <= 0)
                throw new ArgumentOutOfRangeException(nameof(dims), d, SR.DimsPositive);
            cells *= d;
        }
        if (cells > _size)
            throw new ArgumentException(SR.Format(SR.GridTooLarge, cells, _size), nameof(dims));
        int h = Handle, c = 0;
        int* per = stackalloc int[dims.Length];
        for (int i = 0; i < dims.Length; i++)
            per[i] = periods[i] ? 1 : 0;
        fixed (int* d = dims)
            Check(Core.CartCreate(h, dims.Length, d, per, reorder ? 1 : 0, &c));
        return c == CoreConst.CommNull ? null : new CartesianCommunicator(c);
    }

    private protected static void Check(int rc)
    {
        if (rc < 0)
            ThrowHelper.ThrowCore(rc);
    }
}

/// <summary>A communicator whose ranks form a Cartesian grid (MPI-4.0 §8.5): coordinates, neighbours, sub-grids.</summary>
public sealed unsafe class CartesianCommunicator : Communicator
{
    internal CartesianCommunicator(int handle) : base(handle, predefined: false)
    {
        int n = 0;
        Check(Core.CartNdims(handle, &n));
        _dims = new int[n];
        _periodic = new bool[n];
        _coords = new int[n];
        int* per = stackalloc int[Math.Max(n, 1)];
        fixed (int* d = _dims)
        fixed (int* c = _coords)
            Check(Core.CartGet(handle, n, d, per, c));
        for (int i = 0; i < n; i++)
            _periodic[i] = per[i] != 0;
        Dimensions = Array.AsReadOnly(_dims);
        Periodic = Array.AsReadOnly(_periodic);
        Coordinates = Array.AsReadOnly(_coords);
    }

    // The grid as MPI reported it at creation; callers see read-only views, so
    // nothing outside can change what GetRank and Shift validate against.
    private readonly int[] _dims;
    private readonly bool[] _periodic;
    private readonly int[] _coords;

    /// <summary>Extent of each dimension (a read-only view).</summary>
    public IReadOnlyList<int> Dimensions { get; }

    /// <summary>Whether each dimension wraps around (a read-only view).</summary>
    public IReadOnlyList<bool> Periodic { get; }

    /// <summary>This rank's coordinates (a read-only view).</summary>
    public IReadOnlyList<int> Coordinates { get; }

    /// <summary>Coordinates of <paramref name="rank"/> (MPI_Cart_coords).</summary>
    public int[] GetCoordinates(int rank)
    {
        int h = Handle;
        if ((uint)rank >= (uint)Size)
            ThrowHelper.ThrowRank(rank, Size, "a member", nameof(rank));
        var coords = new int[_dims.Length];
        fixed (int* c = coords)
            Check(Core.CartCoords(h, rank, coords.Length, c));
        return coords;
    }

    /// <summary>Rank at <paramref name="coordinates"/>; periodic dimensions wrap (MPI_Cart_rank).</summary>
    public int GetRank(params int[] coordinates)
    {
        ArgumentNullException.ThrowIfNull(coordinates);
        int h = Handle, r = 0;
        if (coordinates.Length != _dims.Length)
            throw new ArgumentException(SR.Format(SR.PeriodsLength, coordinates.Length, _dims.Length), nameof(coordinates));
        for (int i = 0; i < coordinates.Length; i++)
            if (!_periodic[i] && (uint)coordinates[i] >= (uint)_dims[i])
                throw new ArgumentOutOfRangeException(nameof(coordinates), coordinates[i], SR.Format(SR.CoordinateOutOfRange, i, _dims[i]));
        fixed (int* c = coordinates)
            Check(Core.CartRank(h, c, &r));
        return r;
    }

    /// <summary>
    /// The ranks <paramref name="displacement"/> steps before and after this one
    /// along <paramref name="dimension"/> (MPI_Cart_shift); <see cref="Mpi.ProcNull"/>
    /// past the edge of a non-periodic dimension, so halo exchanges need no special cases.
    /// </summary>
    public (int Source, int Dest) Shift(int dimension, int displacement)
    {
        int h = Handle, s = 0, d = 0;
        if ((uint)dimension >= (uint)_dims.Length)
            throw new ArgumentOutOfRangeException(nameof(dimension), dimension, SR.Format(SR.CoordinateOutOfRange, dimension, _dims.Length));
        Check(Core.CartShift(h, dimension, displacement, &s, &d));
        return (s, d);
    }

    /// <summary>The sub-grid keeping the dimensions marked true (MPI_Cart_sub). Collective.</summary>
    public CartesianCommunicator Sub(params bool[] keep)
    {
        ArgumentNullException.ThrowIfNull(keep);
        if (keep.Length != _dims.Length)
            throw new ArgumentException(SR.Format(SR.PeriodsLength, keep.Length, _dims.Length), nameof(keep));
        int h = Handle, c = 0;
        int* k = stackalloc int[Math.Max(keep.Length, 1)];
        for (int i = 0; i < keep.Length; i++)
            k[i] = keep[i] ? 1 : 0;
        Check(Core.CartSub(h, k, &c));
        return new CartesianCommunicator(c);
    }
}
