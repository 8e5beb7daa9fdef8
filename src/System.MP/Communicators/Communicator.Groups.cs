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
            GroupHandle g = GroupHandle.Null;
            ThrowHelper.Check(Core.CommGroup(Handle, &g));
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
            ThrowHelper.Check(n);
            return Encoding.UTF8.GetString(buf, Math.Min(n, 255));
        }
        set
        {
            ArgumentNullException.ThrowIfNull(value);
            CommHandle h = Handle;
            byte[] bytes = Encoding.UTF8.GetBytes(value + "\0");
            if (bytes.Length > 128)
                throw new ArgumentException(SR.NameTooLong, nameof(value));
            fixed (byte* p = bytes)
                ThrowHelper.Check(Core.CommSetName(h, p));
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
        CommHandle c = CommHandle.Null;
        ThrowHelper.Check(Core.CommCreate(Handle, group.Handle, &c));
        return Wrap(c);
    }

    /// <summary>
    /// A communicator of exactly the members of <paramref name="group"/>
    /// (MPI_Comm_create_from_group, MPI-4.0 §7.4.2): the sessions way to make one,
    /// with no parent communicator.  Collective over the group's members only; they
    /// all pass the same <paramref name="tag"/>, which tells concurrent creations
    /// apart (e.g. "org.example.solver").  Errors are returned as exceptions.
    /// </summary>
    /// <param name="group">The members, typically from <see cref="Session.GroupFromProcessSet"/>; this process must be one.</param>
    /// <param name="tag">A string of 1 to 256 UTF-8 bytes, without NUL.</param>
    /// <exception cref="ArgumentException">The tag is empty, too long or contains NUL.</exception>
    /// <exception cref="NotSupportedException">The MPI library lacks it (Open MPI 4.1).</exception>
    /// <exception cref="ObjectDisposedException">The group was disposed.</exception>
    public static Communicator CreateFromGroup(Group group, string tag)
    {
        ArgumentNullException.ThrowIfNull(group);
        ArgumentNullException.ThrowIfNull(tag);
        byte[] t = Encoding.UTF8.GetBytes(tag + "\0");
        if (tag.Length == 0 || t.Length - 1 > 256 || tag.Contains('\0'))
            throw new ArgumentException(SR.StringTag, nameof(tag));
        GroupHandle g = group.Handle;
        CommHandle c = CommHandle.Null;
        fixed (byte* p = t)
            ThrowHelper.Check(Core.CommCreateFromGroup(g, p, &c));
        return Wrap(c)!;
    }

    /// <summary>
    /// Splits the ranks into communicators of ranks that can share memory (one
    /// per node; MPI_Comm_split_type with MPI_COMM_TYPE_SHARED). Collective.
    /// </summary>
    /// <param name="key">Orders the ranks within each part (ties by old rank).</param>
    public Communicator SplitShared(int key = 0)
    {
        CommHandle c = CommHandle.Null;
        ThrowHelper.Check(Core.CommSplitType(Handle, 0, key, &c));
        return Wrap(c)!;
    }

    /// <summary>Compares two communicators (MPI_Comm_compare).</summary>
    public static Comparison Compare(Communicator a, Communicator b)
    {
        ArgumentNullException.ThrowIfNull(a);
        ArgumentNullException.ThrowIfNull(b);
        int r = 0;
        ThrowHelper.Check(Core.CommCompare(a.Handle, b.Handle, &r));
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
    /// <exception cref="ArgumentOutOfRangeException">An extent is not positive.</exception>
    /// <exception cref="ArgumentException"><paramref name="periods"/> has another length than <paramref name="dims"/>,
    /// or the product of <paramref name="dims"/> exceeds <see cref="Size"/> (however large: it cannot wrap).</exception>
    /// <exception cref="NotSupportedException">More than 16 dimensions under an MPICH-family library, whose
    /// MPI_Cart_shift and neighbourhood collectives hold at most 16 (they would overwrite the stack).</exception>
    public CartesianCommunicator? CreateCartesian(int[] dims, bool[] periods, bool reorder = false)
    {
        ArgumentNullException.ThrowIfNull(dims);
        ArgumentNullException.ThrowIfNull(periods);
        if (periods.Length != dims.Length)
            throw new ArgumentException(SR.Format(SR.PeriodsLength, periods.Length, dims.Length), nameof(periods));
        foreach (int d in dims)
            if (d <= 0)
                throw new ArgumentOutOfRangeException(nameof(dims), d, SR.DimsPositive);
        // Multiplied only while at most Size (an int): each step then stays below 2^62, so the
        // product never wraps (a plain product of four extents of 65536 is 2^64, 0 in a long).
        long cells = 1;
        for (int i = 0; i < dims.Length; i++)
            if ((cells *= dims[i]) > _size)
                throw new ArgumentException(SR.Format(SR.GridTooLarge, _size, i + 1, dims.Length, cells), nameof(dims));
        CommHandle h = Handle, c = CommHandle.Null;
        int[] flags = Flags(periods); // on the heap: a grid may have any number of dimensions
        fixed (int* d = dims)
        fixed (int* per = flags)
            ThrowHelper.Check(Core.CartCreate(h, dims.Length, d, per, reorder ? 1 : 0, &c));
        return c == CommHandle.Null
 ? null : new CartesianCommunicator(c);
    }

    /// <summary>
    /// MPI's int flags of a grid's dimensions (1 for true), on the heap: a grid may have any
    /// number of dimensions, too many for the stack; never empty, as the core is given a pointer.
    /// </summary>
    private protected static int[] Flags(bool[] values)
    {
        var flags = new int[Math.Max(values.Length, 1)];
        for (int i = 0; i < values.Length; i++)
            flags[i] = values[i] ? 1 : 0;
        return flags;
    }

    /// <summary>The topology attached to this communicator (MPI_Topo_test); a Dup keeps it.</summary>
    public Topology Topology
    {
        get
        {
            int t = 0;
            ThrowHelper.Check(Core.TopoTest(Handle, &t));
            return (Topology)t;
        }
    }

    /// <summary>
    /// A communicator with a graph topology over the first index.Length ranks, the whole graph
    /// given on every rank (MPI_Graph_create). Collective.
    /// </summary>
    /// <param name="index">Cumulative degrees: node i's neighbours are edges[index[i-1]..index[i]) (index[-1] = 0).</param>
    /// <param name="edges">The neighbour lists of all nodes, one after the other (ranks below index.Length).</param>
    /// <param name="reorder">Whether MPI may renumber ranks to fit the machine.</param>
    /// <returns>The graph communicator, or null on ranks outside the graph.</returns>
    public GraphCommunicator? CreateGraph(int[] index, int[] edges, bool reorder = false)
    {
        ArgumentNullException.ThrowIfNull(index);
        ArgumentNullException.ThrowIfNull(edges);
        int nodes = index.Length;
        if (nodes > _size)
            throw new ArgumentException(SR.Format(SR.GraphTooLarge, nodes, _size), nameof(index));
        for (int i = 0; i < nodes; i++)
            if (index[i] < (i == 0 ? 0 : index[i - 1]))
                throw new ArgumentException(SR.Format(SR.GraphIndexDecreasing, i, index[i], i - 1, i == 0 ? 0 : index[i - 1]), nameof(index));
        if ((nodes == 0 ? 0 : index[^1]) != edges.Length)
            throw new ArgumentException(SR.Format(SR.GraphEdgesLength, edges.Length, nodes == 0 ? 0 : index[^1]), nameof(edges));
        CheckNodes(edges, nameof(edges), nodes);
        CommHandle h = Handle, c = CommHandle.Null;
        fixed (int* ip = index)
        fixed (int* ep = edges)
            ThrowHelper.Check(Core.GraphCreate(h, nodes, ip, ep, reorder ? 1 : 0, &c));
        return c == CommHandle.Null
 ? null : new GraphCommunicator(c);
    }

    /// <summary>
    /// A communicator with a distributed graph topology in which each rank gives its own incoming
    /// and outgoing edges (MPI_Dist_graph_create_adjacent). Collective; unweighted on every rank.
    /// </summary>
    /// <param name="sources">Ranks this rank receives from, in the order of its receive blocks.</param>
    /// <param name="destinations">Ranks this rank sends to, in the order of its send blocks.</param>
    /// <param name="reorder">Whether MPI may renumber ranks to fit the machine.</param>
    public DistributedGraphCommunicator CreateDistributedGraphAdjacent(int[] sources, int[] destinations, bool reorder = false) =>
        DistGraphAdjacent(sources, null, destinations, null, reorder);

    /// <summary>
    /// A distributed graph with weighted edges, each rank giving its own (MPI_Dist_graph_create_adjacent).
    /// Collective; weighted on every rank (a rank without edges passes empty arrays).
    /// </summary>
    /// <param name="sources">Ranks this rank receives from.</param>
    /// <param name="sourceWeights">The weight of each incoming edge (non-negative).</param>
    /// <param name="destinations">Ranks this rank sends to.</param>
    /// <param name="destinationWeights">The weight of each outgoing edge (non-negative).</param>
    /// <param name="reorder">Whether MPI may renumber ranks, e.g. to keep heavy edges within a node.</param>
    public DistributedGraphCommunicator CreateDistributedGraphAdjacent(int[] sources, int[] sourceWeights, int[] destinations,
                                                                       int[] destinationWeights, bool reorder = false)
    {
        ArgumentNullException.ThrowIfNull(sourceWeights);
        ArgumentNullException.ThrowIfNull(destinationWeights);
        return DistGraphAdjacent(sources, sourceWeights, destinations, destinationWeights, reorder);
    }

    private DistributedGraphCommunicator DistGraphAdjacent(int[] sources, int[]? sourceWeights, int[] destinations,
                                                           int[]? destinationWeights, bool reorder)
    {
        ArgumentNullException.ThrowIfNull(sources);
        ArgumentNullException.ThrowIfNull(destinations);
        CheckNodes(sources, nameof(sources), _size);
        CheckNodes(destinations, nameof(destinations), _size);
        CheckWeights(sourceWeights, nameof(sourceWeights), sources.Length);
        CheckWeights(destinationWeights, nameof(destinationWeights), destinations.Length);
        CommHandle h = Handle, c = CommHandle.Null;
        fixed (int* s = sources)
        fixed (int* sw = sourceWeights)
        fixed (int* d = destinations)
        fixed (int* dw = destinationWeights)
            ThrowHelper.Check(Core.DistGraphCreateAdjacent(h, sources.Length, s, sw, destinations.Length, d, dw,
                                               sourceWeights is null ? 0 : 1, reorder ? 1 : 0, &c));
        return new DistributedGraphCommunicator(c);
    }

    /// <summary>
    /// A communicator with a distributed graph topology from any edges each rank knows
    /// (MPI_Dist_graph_create): sources[i] has degrees[i] outgoing edges, listed in order in
    /// <paramref name="destinations"/>.  MPI gathers every rank's edges. Collective.
    /// </summary>
    /// <param name="sources">Ranks whose outgoing edges this rank gives.</param>
    /// <param name="degrees">How many edges each of them has here.</param>
    /// <param name="destinations">The edges' targets, sum(degrees) entries.</param>
    /// <param name="weights">Each edge's weight, or null for an unweighted graph (null on every rank, or on none).</param>
    /// <param name="reorder">Whether MPI may renumber ranks to fit the machine.</param>
    public DistributedGraphCommunicator CreateDistributedGraph(int[] sources, int[] degrees, int[] destinations,
                                                               int[]? weights = null, bool reorder = false)
    {
        ArgumentNullException.ThrowIfNull(sources);
        ArgumentNullException.ThrowIfNull(degrees);
        ArgumentNullException.ThrowIfNull(destinations);
        if (degrees.Length != sources.Length)
            throw new ArgumentException(SR.Format(SR.DegreesLength, degrees.Length, sources.Length), nameof(degrees));
        CheckNodes(sources, nameof(sources), _size);
        long total = 0;
        for (int i = 0; i < degrees.Length; i++)
        {
            if (degrees[i] < 0)
                throw new ArgumentException(SR.Format(SR.NegativeEntry, nameof(degrees), i, degrees[i]), nameof(degrees));
            total += degrees[i];
        }
        if (total != destinations.Length)
            throw new ArgumentException(SR.Format(SR.DegreesMismatch, total, destinations.Length), nameof(destinations));
        CheckNodes(destinations, nameof(destinations), _size);
        CheckWeights(weights, nameof(weights), destinations.Length);
        CommHandle h = Handle, c = CommHandle.Null;
        fixed (int* s = sources)
        fixed (int* dg = degrees)
        fixed (int* d = destinations)
        fixed (int* w = weights)
            ThrowHelper.Check(Core.DistGraphCreate(h, sources.Length, s, dg, d, w, weights is null ? 0 : 1, reorder ? 1 : 0, &c));
        return new DistributedGraphCommunicator(c);
    }

    private static void CheckNodes(int[] ranks, string name, int nodes)
    {
        for (int i = 0; i < ranks.Length; i++)
            if ((uint)ranks[i] >= (uint)nodes)
                throw new ArgumentOutOfRangeException(name, ranks[i], SR.Format(SR.EdgeOutOfRange, name, i, ranks[i], nodes));
    }

    private static void CheckWeights(int[]? weights, string name, int edges)
    {
        if (weights is null)
            return;
        if (weights.Length != edges)
            throw new ArgumentException(SR.Format(SR.WeightsLength, name, weights.Length, edges), name);
        for (int i = 0; i < weights.Length; i++)
            if (weights[i] < 0)
                throw new ArgumentException(SR.Format(SR.NegativeWeight, name, i, weights[i]), name);
    }
}
