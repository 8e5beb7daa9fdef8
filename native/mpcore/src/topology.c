/* topology.c - Cartesian topologies (MPI-4.0 chapter 8). */
#include "comms.h"

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
    for (int i = 0; i < ndims; i++)
        if (dims[i] < 0)
            return mp_fail(MP_EINVAL, "dims[%d] = %d is negative", i, dims[i]);
    return MP_MPI_CHECK(pal_mpi.Dims_create(nnodes, ndims, dims), "MPI_Dims_create");
}
