using System.MP.Interop;
using System.Collections.Generic;
using System.Text;

namespace System.MP;

/// <summary>A communicator whose ranks form a Cartesian grid (MPI-4.0 §8.5): coordinates, neighbours, sub-grids.</summary>
public sealed unsafe class CartesianCommunicator : TopologyCommunicator
{
    internal CartesianCommunicator(CommHandle handle) : base(handle)
    {
        int n = 0;
        ThrowHelper.Check(Core.CartNdims(handle, &n));
        _dims = new int[n];
        _periodic = new bool[n];
        _coords = new int[n];
        var flags = new int[Math.Max(n, 1)]; // never empty: the core is given a pointer
        fixed (int* d = _dims)
        fixed (int* c = _coords)
        fixed (int* per = flags)
            ThrowHelper.Check(Core.CartGet(handle, n, d, per, c));
        for (int i = 0; i < n; i++)
            _periodic[i] = flags[i] != 0;
        Dimensions = Array.AsReadOnly(_dims);
        Periodic = Array.AsReadOnly(_periodic);
        Coordinates = Array.AsReadOnly(_coords);
        // MPI-4.0 §8.6: for each dimension, the neighbour at -1 then the one at +1.
        var around = new int[2 * n];
        for (int i = 0; i < n; i++)
            (around[2 * i], around[2 * i + 1]) = Shift(i, 1);
        Sources = ReadOnly(around);
        Neighbors = ReadOnly(Array.FindAll(around, r => r != Mpi.ProcNull));
        long edges = 0, cells = 1;
        foreach (int d in _dims)
            cells *= d;
        for (int i = 0; i < n; i++)
            edges += _periodic[i] ? 2 * cells : 2 * (cells / _dims[i]) * (_dims[i] - 1);
        NumEdges = checked((int)edges);
    }

    /// <inheritdoc/>
    public override IReadOnlyList<int> Sources { get; }

    /// <inheritdoc/>
    public override IReadOnlyList<int> Destinations => Sources;

    /// <summary>
    /// This rank's neighbours: the ranks one step away along each dimension, in the order of
    /// <see cref="TopologyCommunicator.Sources"/> with the <see cref="Mpi.ProcNull"/> entries left out
    /// (a rank appears twice when it is the neighbour on both sides, as on a periodic extent of 2).
    /// </summary>
    public IReadOnlyList<int> Neighbors { get; }

    /// <summary>
    /// Number of edge entries of the whole grid seen as a graph: the sum over all ranks of their
    /// <see cref="Neighbors"/> counts (what MPI_Graphdims_get reports for the same graph).
    /// </summary>
    public int NumEdges { get; }

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
        CommHandle h = Handle;
        if ((uint)rank >= (uint)Size)
            ThrowHelper.ThrowRank(rank, Size, "a member", nameof(rank));
        var coords = new int[_dims.Length];
        fixed (int* c = coords)
            ThrowHelper.Check(Core.CartCoords(h, rank, coords.Length, c));
        return coords;
    }

    /// <summary>Rank at <paramref name="coordinates"/>; periodic dimensions wrap (MPI_Cart_rank).</summary>
    public int GetRank(params int[] coordinates)
    {
        ArgumentNullException.ThrowIfNull(coordinates);
        CommHandle h = Handle;
        int r = 0;
        if (coordinates.Length != _dims.Length)
            throw new ArgumentException(SR.Format(SR.PeriodsLength, coordinates.Length, _dims.Length), nameof(coordinates));
        for (int i = 0; i < coordinates.Length; i++)
            if (!_periodic[i] && (uint)coordinates[i] >= (uint)_dims[i])
                throw new ArgumentOutOfRangeException(nameof(coordinates), coordinates[i], SR.Format(SR.CoordinateOutOfRange, i, _dims[i]));
        fixed (int* c = coordinates)
            ThrowHelper.Check(Core.CartRank(h, c, &r));
        return r;
    }

    /// <summary>
    /// The ranks <paramref name="displacement"/> steps before and after this one
    /// along <paramref name="dimension"/> (MPI_Cart_shift); <see cref="Mpi.ProcNull"/>
    /// past the edge of a non-periodic dimension, so halo exchanges need no special cases.
    /// </summary>
    public (int Source, int Dest) Shift(int dimension, int displacement)
    {
        CommHandle h = Handle;
        int s = 0, d = 0;
        if ((uint)dimension >= (uint)_dims.Length)
            throw new ArgumentOutOfRangeException(nameof(dimension), dimension, SR.Format(SR.CoordinateOutOfRange, dimension, _dims.Length));
        ThrowHelper.Check(Core.CartShift(h, dimension, displacement, &s, &d));
        return (s, d);
    }

    /// <summary>The sub-grid keeping the dimensions marked true (MPI_Cart_sub). Collective.</summary>
    public CartesianCommunicator Sub(params bool[] keep)
    {
        ArgumentNullException.ThrowIfNull(keep);
        if (keep.Length != _dims.Length)
            throw new ArgumentException(SR.Format(SR.PeriodsLength, keep.Length, _dims.Length), nameof(keep));
        CommHandle h = Handle, c = CommHandle.Null;
        fixed (int* k = Flags(keep))
            ThrowHelper.Check(Core.CartSub(h, k, &c));
        return new CartesianCommunicator(c);
    }
}
