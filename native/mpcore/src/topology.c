/* topology.c - Cartesian, graph and distributed-graph topologies (MPI-4.0 chapter 8). */
#include "comms.h"

#include <stddef.h>

static int cart_comm(mp_comm_t comm, const comm_entry_t **ce, int *ndims)
{
    int rc, topo = MPI_UNDEFINED;
    if ((rc = mp_comm_lookup(comm, ce)))
        return rc;
    if ((rc = MP_MPI_CHECK(pal_mpi.Topo_test((*ce)->mpi, &topo), "MPI_Topo_test")))
        return rc;
    if (topo != MPI_CART)
        return mp_fail(MP_EINVAL, "communicator %d has no Cartesian topology", comm);
    return MP_MPI_CHECK(pal_mpi.Cartdim_get((*ce)->mpi, ndims), "MPI_Cartdim_get");
}

#define MP_MPICH_MAX_CART_DIMS 16

int mp_cart_create(mp_comm_t comm, int ndims, const int32_t *dims, const int32_t *periods, int reorder,
                   mp_comm_t *newcomm)
{
    const comm_entry_t *ce;
    MPI_Comm out = MPI_COMM_NULL;
    long long cells = 1;
    int rc;
    if ((rc = mp_comm_lookup(comm, &ce)))
        return rc;
    if (ndims < 0 || (ndims > 0 && (!dims || !periods)))
        return mp_fail(MP_EINVAL, "dimension count %d is negative or dims/periods are NULL", ndims);
    for (int i = 0; i < ndims; i++) {
        if (dims[i] <= 0)
            return mp_fail(MP_EINVAL, "dimension %d has extent %d; extents must be positive", i, dims[i]);
        cells *= dims[i];
        if (cells > ce->size)
            return mp_fail(MP_EINVAL, "the grid has more cells than the %d ranks of the communicator", ce->size);
    }
    /* MPICH's MPI_Cart_shift and its Cartesian neighbourhood code copy a grid's position into
     * an array of MAX_CART_DIM (16) ints on the stack: with more dimensions they overwrite the
     * stack (in plain C, MPICH 4.0.2: "stack smashing detected" from 19 dimensions on, SIGSEGV
     * from 10,000).  Open MPI has no such bound. */
    if (PAL_MPI_BUILD_ABI == PAL_ABI_MPICH && ndims > MP_MPICH_MAX_CART_DIMS)
        return mp_fail(MP_ENOTSUP, "a Cartesian grid of %d dimensions: MPICH-family libraries hold at most %d "
                       "(MAX_CART_DIM; beyond it their MPI_Cart_shift and neighbourhood collectives overwrite "
                       "the stack)", ndims, MP_MPICH_MAX_CART_DIMS);
    mp_blocking_enter();
    rc = pal_mpi.Cart_create(ce->mpi, ndims, dims, periods, reorder ? 1 : 0, &out);
    mp_blocking_leave();
    return mp_comm_adopt(rc, out, "MPI_Cart_create", newcomm);
}

int mp_cart_ndims(mp_comm_t comm, int *ndims)
{
    const comm_entry_t *ce;
    int rc, topo = MPI_UNDEFINED;
    if ((rc = mp_comm_lookup(comm, &ce)))
        return rc;
    if ((rc = MP_MPI_CHECK(pal_mpi.Topo_test(ce->mpi, &topo), "MPI_Topo_test")))
        return rc;
    *ndims = 0;
    return topo == MPI_CART ? MP_MPI_CHECK(pal_mpi.Cartdim_get(ce->mpi, ndims), "MPI_Cartdim_get") : 0;
}

int mp_cart_get(mp_comm_t comm, int ndims, int32_t *dims, int32_t *periods, int32_t *coords)
{
    const comm_entry_t *ce;
    int rc, n = 0;
    if ((rc = cart_comm(comm, &ce, &n)))
        return rc;
    if (ndims != n)
        return mp_fail(MP_EINVAL, "the topology has %d dimensions, not %d", n, ndims);
    return MP_MPI_CHECK(pal_mpi.Cart_get(ce->mpi, n, dims, periods, coords), "MPI_Cart_get");
}

int mp_cart_rank(mp_comm_t comm, const int32_t *coords, int *rank)
{
    const comm_entry_t *ce;
    int rc, n = 0;
    if ((rc = cart_comm(comm, &ce, &n)))
        return rc;
    return MP_MPI_CHECK(pal_mpi.Cart_rank(ce->mpi, coords, rank), "MPI_Cart_rank");
}

int mp_cart_coords(mp_comm_t comm, int rank, int ndims, int32_t *coords)
{
    const comm_entry_t *ce;
    int rc, n = 0;
    if ((rc = cart_comm(comm, &ce, &n)))
        return rc;
    if (ndims != n)
        return mp_fail(MP_EINVAL, "the topology has %d dimensions, not %d", n, ndims);
    if (rank < 0 || rank >= ce->size)
        return mp_fail(MP_ERANK, "rank %d is outside [0, %d)", rank, ce->size);
    return MP_MPI_CHECK(pal_mpi.Cart_coords(ce->mpi, rank, n, coords), "MPI_Cart_coords");
}

int mp_cart_shift(mp_comm_t comm, int direction, int disp, int *source, int *dest)
{
    const comm_entry_t *ce;
    int rc, n = 0;
    if ((rc = cart_comm(comm, &ce, &n)))
        return rc;
    if (direction < 0 || direction >= n)
        return mp_fail(MP_EINVAL, "direction %d is outside [0, %d)", direction, n);
    if ((rc = MP_MPI_CHECK(pal_mpi.Cart_shift(ce->mpi, direction, disp, source, dest), "MPI_Cart_shift")))
        return rc;
    if (*source == MPI_PROC_NULL)
        *source = MP_PROC_NULL;
    if (*dest == MPI_PROC_NULL)
        *dest = MP_PROC_NULL;
    return 0;
}

int mp_cart_sub(mp_comm_t comm, const int32_t *remain, mp_comm_t *newcomm)
{
    const comm_entry_t *ce;
    MPI_Comm out = MPI_COMM_NULL;
    int rc, n = 0;
    if ((rc = cart_comm(comm, &ce, &n)))
        return rc;
    if (!remain)
        return mp_fail(MP_EINVAL, "remain_dims is NULL");
    mp_blocking_enter();
    rc = pal_mpi.Cart_sub(ce->mpi, remain, &out);
    mp_blocking_leave();
    return mp_comm_adopt(rc, out, "MPI_Cart_sub", newcomm);
}

int mp_dims_create(int nnodes, int ndims, int32_t *dims)
{
    if (!pal_mpi.Dims_create)
        return mp_fail_state();
    if (nnodes <= 0 || ndims < 0 || (ndims > 0 && !dims))
        return mp_fail(MP_EINVAL, "node count %d must be positive and dims non-NULL", nnodes);
    long long kept = 1;
    for (int i = 0; i < ndims; i++)
        if (dims[i] < 0)
            return mp_fail(MP_EINVAL, "dims[%d] = %d is negative", i, dims[i]);
    /* The kept extents (non-zero) must divide the node count (MPI-4.0 8.5.2); multiplied only
     * while at most nnodes, so the product cannot wrap (MPICH's own product wraps to 0 and
     * divides by it: SIGFPE). */
    for (int i = 0; i < ndims; i++)
        if (dims[i] > 0 && (kept *= dims[i]) > nnodes)
            return mp_fail(MP_EINVAL, "the kept extents multiply past the %d nodes by dims[%d]", nnodes, i);
    if (nnodes % kept != 0)
        return mp_fail(MP_EINVAL, "the kept extents multiply to %lld, which does not divide the %d nodes", kept, nnodes);
    return MP_MPI_CHECK(pal_mpi.Dims_create(nnodes, ndims, dims), "MPI_Dims_create");
}

/* ---- graph and distributed-graph topologies (MPI-4.0 8.5.3, 8.5.4) ---- */

static int topo_of(const comm_entry_t *ce, int *topo)
{
    int t = MPI_UNDEFINED, rc;
    if ((rc = MP_MPI_CHECK(pal_mpi.Topo_test(ce->mpi, &t), "MPI_Topo_test")))
        return rc;
    *topo = t == MPI_CART ? MP_TOPO_CART : t == MPI_GRAPH ? MP_TOPO_GRAPH
          : t == MPI_DIST_GRAPH ? MP_TOPO_DIST_GRAPH : MP_TOPO_NONE;
    return 0;
}

int mp_topo_test(mp_comm_t comm, int *topo)
{
    const comm_entry_t *ce;
    int rc;
    if ((rc = mp_comm_lookup(comm, &ce)))
        return rc;
    return topo_of(ce, topo);
}

static int topo_comm(mp_comm_t comm, int want, const comm_entry_t **ce)
{
    static const char *const names[] = { "no", "a Cartesian", "a graph", "a distributed-graph" };
    int rc, topo = MP_TOPO_NONE;
    if ((rc = mp_comm_lookup(comm, ce)) || (rc = topo_of(*ce, &topo)))
        return rc;
    if (topo != want)
        return mp_fail(MP_EINVAL, "communicator %d has %s topology, not %s one", comm, names[topo], names[want]);
    return 0;
}

/* Ranks of a neighbour list: each in [0, size). */
static int check_ranks(const char *what, const int32_t *ranks, int n, int size)
{
    if (n > 0 && !ranks)
        return mp_fail(MP_EINVAL, "%s is NULL", what);
    for (int i = 0; i < n; i++)
        if ((unsigned)ranks[i] >= (unsigned)size)
            return mp_fail(MP_ERANK, "%s[%d] = %d is outside [0, %d)", what, i, ranks[i], size);
    return 0;
}

static int check_weights(const char *what, const int32_t *weights, int n)
{
    for (int i = 0; weights && i < n; i++)
        if (weights[i] < 0)
            return mp_fail(MP_EINVAL, "%s[%d] = %d is negative", what, i, weights[i]);
    return 0;
}

/* An intercommunicator is left to MPI, which reports MPI_ERR_COMM (as for
 * MPI_Cart_create): the graph constructors take intracommunicators (8.5). */
int mp_graph_create(mp_comm_t comm, int nnodes, const int32_t *index, const int32_t *edges, int reorder,
                    mp_comm_t *newcomm)
{
    const comm_entry_t *ce;
    MPI_Comm out = MPI_COMM_NULL;
    int rc, prev = 0;
    if ((rc = mp_comm_lookup(comm, &ce)))
        return rc;
    if (nnodes < 0 || nnodes > ce->size)
        return mp_fail(MP_EINVAL, "node count %d is outside [0, %d]", nnodes, ce->size);
    if (nnodes > 0 && !index)
        return mp_fail(MP_EINVAL, "index is NULL");
    for (int i = 0; i < nnodes; i++) {
        if (index[i] < prev)
            return mp_fail(MP_EINVAL, "index[%d] = %d is less than %d: index holds cumulative degrees", i,
                           index[i], prev);
        prev = index[i];
    }
    if ((rc = check_ranks("edges", edges, prev, nnodes)))
        return rc;
    mp_blocking_enter();
    rc = pal_mpi.Graph_create(ce->mpi, nnodes, index, edges, reorder ? 1 : 0, &out);
    mp_blocking_leave();
    return mp_comm_adopt(rc, out, "MPI_Graph_create", newcomm);
}

int mp_graph_dims(mp_comm_t comm, int *nnodes, int *nedges)
{
    const comm_entry_t *ce;
    int rc;
    if ((rc = topo_comm(comm, MP_TOPO_GRAPH, &ce)))
        return rc;
    return MP_MPI_CHECK(pal_mpi.Graphdims_get(ce->mpi, nnodes, nedges), "MPI_Graphdims_get");
}

int mp_graph_get(mp_comm_t comm, int nnodes, int nedges, int32_t *index, int32_t *edges)
{
    const comm_entry_t *ce;
    int rc, n = 0, e = 0;
    if ((rc = topo_comm(comm, MP_TOPO_GRAPH, &ce)) ||
        (rc = MP_MPI_CHECK(pal_mpi.Graphdims_get(ce->mpi, &n, &e), "MPI_Graphdims_get")))
        return rc;
    if (nnodes < n || nedges < e || (n > 0 && !index) || (e > 0 && !edges))
        return mp_fail(MP_ECOUNT, "the graph has %d nodes and %d edge entries; room for %d and %d given", n, e,
                       nnodes, nedges);
    return MP_MPI_CHECK(pal_mpi.Graph_get(ce->mpi, n, e, index, edges), "MPI_Graph_get");
}

int mp_graph_neighbors_count(mp_comm_t comm, int rank, int *count)
{
    const comm_entry_t *ce;
    int rc;
    if ((rc = topo_comm(comm, MP_TOPO_GRAPH, &ce)))
        return rc;
    if ((unsigned)rank >= (unsigned)ce->size)
        return mp_fail(MP_ERANK, "rank %d is outside [0, %d)", rank, ce->size);
    return MP_MPI_CHECK(pal_mpi.Graph_neighbors_count(ce->mpi, rank, count), "MPI_Graph_neighbors_count");
}

int mp_graph_neighbors(mp_comm_t comm, int rank, int max, int32_t *neighbors)
{
    const comm_entry_t *ce;
    int rc, n = 0;
    if ((rc = mp_graph_neighbors_count(comm, rank, &n)))
        return rc;
    (void)mp_comm_lookup(comm, &ce);
    if (max < n || (n > 0 && !neighbors))
        return mp_fail(MP_ECOUNT, "rank %d has %d neighbours; room for %d given", rank, n, max);
    return MP_MPI_CHECK(pal_mpi.Graph_neighbors(ce->mpi, rank, n, neighbors), "MPI_Graph_neighbors");
}

int mp_dist_graph_create_adjacent(mp_comm_t comm, int indegree, const int32_t *sources, const int32_t *sourceweights,
                                  int outdegree, const int32_t *destinations, const int32_t *destweights,
                                  int weighted, int reorder, mp_comm_t *newcomm)
{
    const comm_entry_t *ce;
    MPI_Comm out = MPI_COMM_NULL;
    int rc, empty = 0;
    if ((rc = mp_comm_lookup(comm, &ce)))
        return rc;
    if (indegree < 0 || outdegree < 0)
        return mp_fail(MP_EINVAL, "degrees %d (in) and %d (out) must not be negative", indegree, outdegree);
    if (weighted && ((indegree > 0 && !sourceweights) || (outdegree > 0 && !destweights)))
        return mp_fail(MP_EINVAL, "a weighted graph needs a weight for every edge: weights are NULL");
    if (!weighted)
        sourceweights = destweights = NULL;
    if ((rc = check_ranks("sources", sources, indegree, ce->size)) ||
        (rc = check_ranks("destinations", destinations, outdegree, ce->size)) ||
        (rc = check_weights("source weights", sourceweights, indegree)) ||
        (rc = check_weights("destination weights", destweights, outdegree)))
        return rc;
    /* A weighted rank without edges on a side passes a valid address, not
     * NULL, which MPI may take for MPI_UNWEIGHTED (MPICH's value). */
    mp_blocking_enter();
    rc = pal_mpi.Dist_graph_create_adjacent(ce->mpi, indegree, sources ? sources : &empty,
                                            !weighted ? pal_mpi.unweighted : sourceweights ? sourceweights : &empty,
                                            outdegree, destinations ? destinations : &empty,
                                            !weighted ? pal_mpi.unweighted : destweights ? destweights : &empty,
                                            MPI_INFO_NULL, reorder ? 1 : 0, &out);
    mp_blocking_leave();
    return mp_comm_adopt(rc, out, "MPI_Dist_graph_create_adjacent", newcomm);
}

int mp_dist_graph_create(mp_comm_t comm, int n, const int32_t *sources, const int32_t *degrees,
                         const int32_t *destinations, const int32_t *weights, int weighted, int reorder,
                         mp_comm_t *newcomm)
{
    const comm_entry_t *ce;
    MPI_Comm out = MPI_COMM_NULL;
    long long edges = 0;
    int rc, empty = 0;
    if ((rc = mp_comm_lookup(comm, &ce)))
        return rc;
    if (n < 0 || (n > 0 && !degrees))
        return mp_fail(MP_EINVAL, "source count %d is negative or degrees is NULL", n);
    if ((rc = check_ranks("sources", sources, n, ce->size)))
        return rc;
    for (int i = 0; i < n; i++) {
        if (degrees[i] < 0)
            return mp_fail(MP_EINVAL, "degrees[%d] = %d is negative", i, degrees[i]);
        edges += degrees[i];
    }
    if (edges > INT32_MAX)
        return mp_fail(MP_ECOUNT, "%lld edges are more than MPI can take", edges);
    if (weighted && edges > 0 && !weights)
        return mp_fail(MP_EINVAL, "a weighted graph needs a weight for every edge: weights are NULL");
    if ((rc = check_ranks("destinations", destinations, (int)edges, ce->size)) ||
        (rc = check_weights("weights", weighted ? weights : NULL, (int)edges)))
        return rc;
    mp_blocking_enter();
    rc = pal_mpi.Dist_graph_create(ce->mpi, n, sources ? sources : &empty, degrees ? degrees : &empty,
                                   destinations ? destinations : &empty,
                                   !weighted ? pal_mpi.unweighted : weights ? weights : &empty,
                                   MPI_INFO_NULL, reorder ? 1 : 0, &out);
    mp_blocking_leave();
    return mp_comm_adopt(rc, out, "MPI_Dist_graph_create", newcomm);
}

int mp_topo_degrees(mp_comm_t comm, int *indegree, int *outdegree, int *weighted)
{
    const comm_entry_t *ce;
    int rc, topo = MP_TOPO_NONE, n = 0, in = 0, out = 0, w = 0;
    if ((rc = mp_comm_lookup(comm, &ce)) || (rc = topo_of(ce, &topo)))
        return rc;
    switch (topo) {
    case MP_TOPO_CART:
        rc = MP_MPI_CHECK(pal_mpi.Cartdim_get(ce->mpi, &n), "MPI_Cartdim_get");
        in = out = 2 * n;
        break;
    case MP_TOPO_GRAPH:
        rc = MP_MPI_CHECK(pal_mpi.Graph_neighbors_count(ce->mpi, ce->rank, &n), "MPI_Graph_neighbors_count");
        in = out = n;
        break;
    case MP_TOPO_DIST_GRAPH:
        rc = MP_MPI_CHECK(pal_mpi.Dist_graph_neighbors_count(ce->mpi, &in, &out, &w),
                          "MPI_Dist_graph_neighbors_count");
        break;
    default:
        return mp_fail(MP_EINVAL, "communicator %d has no topology: neighbourhoods need a Cartesian, graph or "
                       "distributed-graph communicator", comm);
    }
    if (rc)
        return rc; /* the outputs untouched */
    *indegree = in, *outdegree = out, *weighted = w;
    return 0;
}

int mp_dist_graph_neighbors(mp_comm_t comm, int maxin, int32_t *sources, int32_t *sourceweights, int maxout,
                            int32_t *destinations, int32_t *destweights)
{
    const comm_entry_t *ce;
    int rc, in = 0, out = 0, weighted = 0, dummy = 0;
    if ((rc = topo_comm(comm, MP_TOPO_DIST_GRAPH, &ce)) ||
        (rc = MP_MPI_CHECK(pal_mpi.Dist_graph_neighbors_count(ce->mpi, &in, &out, &weighted),
                           "MPI_Dist_graph_neighbors_count")))
        return rc;
    if (maxin < in || maxout < out || (in > 0 && !sources) || (out > 0 && !destinations))
        return mp_fail(MP_ECOUNT, "the rank has %d sources and %d destinations; room for %d and %d given", in,
                       out, maxin, maxout);
    /* Weights are asked for only when the graph has them and the caller wants them. */
    return MP_MPI_CHECK(pal_mpi.Dist_graph_neighbors(ce->mpi, in, sources ? sources : &dummy,
                                                     weighted && sourceweights ? sourceweights : pal_mpi.unweighted,
                                                     out, destinations ? destinations : &dummy,
                                                     weighted && destweights ? destweights : pal_mpi.unweighted),
                        "MPI_Dist_graph_neighbors");
}
