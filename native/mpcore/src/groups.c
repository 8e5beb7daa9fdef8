/* groups.c - process groups, communicator construction and comparison,
 * names, and Cartesian topologies (MPI-4.0 chapters 7 and 8). */
#include "core.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

#define MAX_GROUPS 4096
static MPI_Group g_groups[MAX_GROUPS]; /* slot 0 stands for MPI_GROUP_EMPTY */
static int g_group_used[MAX_GROUPS];
static mp_spin_t g_group_lock = MP_SPIN_INIT;

static int group_get(mp_group_t g, MPI_Group *out)
{
    if (!mp_ready())
        return mp_fail_state();
    if (g == MP_GROUP_EMPTY) {
        *out = MPI_GROUP_EMPTY;
        return 0;
    }
    if (g <= 0 || g >= MAX_GROUPS || !g_group_used[g])
        return mp_fail(MP_EHANDLE, "group handle %d is not valid (freed or never created)", g);
    *out = g_groups[g];
    return 0;
}

/* Takes ownership of a new MPI group. */
static int group_add(MPI_Group mg, mp_group_t *out)
{
    if (mg == MPI_GROUP_EMPTY) {
        *out = MP_GROUP_EMPTY;
        return 0;
    }
    mp_spin_lock(&g_group_lock);
    for (int i = 1; i < MAX_GROUPS; i++) {
        if (!g_group_used[i]) {
            g_group_used[i] = 1;
            g_groups[i] = mg;
            mp_spin_unlock(&g_group_lock);
            *out = i;
            return 0;
        }
    }
    mp_spin_unlock(&g_group_lock);
    pal_mpi.Group_free(&mg);
    return mp_fail(MP_ENOMEM, "too many groups at once (at most %d)", MAX_GROUPS - 1);
}

static int compare_result(int r)
{
    return r == MPI_IDENT ? MP_IDENT : r == MPI_CONGRUENT ? MP_CONGRUENT
         : r == MPI_SIMILAR ? MP_SIMILAR : MP_UNEQUAL;
}

int mp_comm_group(mp_comm_t comm, mp_group_t *group)
{
    const comm_entry_t *ce = mp_comm_get(comm);
    MPI_Group g = MPI_GROUP_NULL;
    int rc;
    if (!ce || !mp_ready())
        return mp_fail_comm(comm);
    if ((rc = MP_MPI_CHECK(pal_mpi.Comm_group(ce->mpi, &g), "MPI_Comm_group")))
        return rc;
    return group_add(g, group);
}

int mp_group_size(mp_group_t group, int *size)
{
    MPI_Group g = MPI_GROUP_NULL;
    int rc = group_get(group, &g);
    return rc ? rc : MP_MPI_CHECK(pal_mpi.Group_size(g, size), "MPI_Group_size");
}

int mp_group_rank(mp_group_t group, int *rank)
{
    MPI_Group g = MPI_GROUP_NULL;
    int rc = group_get(group, &g);
    if (rc || (rc = MP_MPI_CHECK(pal_mpi.Group_rank(g, rank), "MPI_Group_rank")))
        return rc;
    if (*rank == MPI_UNDEFINED)
        *rank = MP_UNDEFINED;
    return 0;
}

int mp_group_setop(int op, mp_group_t a, mp_group_t b, mp_group_t *out)
{
    MPI_Group ga = MPI_GROUP_NULL, gb = MPI_GROUP_NULL, r;
    int rc;
    if ((rc = group_get(a, &ga)) || (rc = group_get(b, &gb)))
        return rc;
    switch (op) {
    case MP_GROUP_UNION: rc = MP_MPI_CHECK(pal_mpi.Group_union(ga, gb, &r), "MPI_Group_union"); break;
    case MP_GROUP_INTERSECTION:
        rc = MP_MPI_CHECK(pal_mpi.Group_intersection(ga, gb, &r), "MPI_Group_intersection");
        break;
    case MP_GROUP_DIFFERENCE:
        rc = MP_MPI_CHECK(pal_mpi.Group_difference(ga, gb, &r), "MPI_Group_difference");
        break;
    default: return mp_fail(MP_EINVAL, "group operation %d is not an MP_GROUP_* value", op);
    }
    return rc ? rc : group_add(r, out);
}

int mp_group_select(mp_group_t group, int exclude, int n, const int32_t *ranks, mp_group_t *out)
{
    MPI_Group g = MPI_GROUP_NULL, r;
    int rc, size;
    if ((rc = group_get(group, &g)) || (rc = MP_MPI_CHECK(pal_mpi.Group_size(g, &size), "MPI_Group_size")))
        return rc;
    if (n < 0 || n > size || (n > 0 && !ranks))
        return mp_fail(MP_EINVAL, "rank list of length %d does not fit a group of %d", n, size);
    for (int i = 0; i < n; i++) {
        if (ranks[i] < 0 || ranks[i] >= size)
            return mp_fail(MP_ERANK, "rank %d (entry %d) is outside [0, %d) of the group", ranks[i], i, size);
        for (int j = 0; j < i; j++)
            if (ranks[j] == ranks[i])
                return mp_fail(MP_EINVAL, "rank %d is listed twice", ranks[i]);
    }
    rc = exclude ? MP_MPI_CHECK(pal_mpi.Group_excl(g, n, ranks, &r), "MPI_Group_excl")
                 : MP_MPI_CHECK(pal_mpi.Group_incl(g, n, ranks, &r), "MPI_Group_incl");
    return rc ? rc : group_add(r, out);
}

int mp_group_translate(mp_group_t a, int n, const int32_t *ranks_a, mp_group_t b, int32_t *ranks_b)
{
    MPI_Group ga = MPI_GROUP_NULL, gb = MPI_GROUP_NULL;
    int rc, size;
    if ((rc = group_get(a, &ga)) || (rc = group_get(b, &gb)) ||
        (rc = MP_MPI_CHECK(pal_mpi.Group_size(ga, &size), "MPI_Group_size")))
        return rc;
    if (n < 0 || (n > 0 && (!ranks_a || !ranks_b)))
        return mp_fail(MP_EINVAL, "rank arrays are NULL or their length %d is negative", n);
    for (int i = 0; i < n; i++)
        if (ranks_a[i] < 0 || ranks_a[i] >= size)
            return mp_fail(MP_ERANK, "rank %d (entry %d) is outside [0, %d) of the group", ranks_a[i], i, size);
    if ((rc = MP_MPI_CHECK(pal_mpi.Group_translate_ranks(ga, n, ranks_a, gb, ranks_b),
                           "MPI_Group_translate_ranks")))
        return rc;
    for (int i = 0; i < n; i++)
        if (ranks_b[i] == MPI_UNDEFINED)
            ranks_b[i] = MP_UNDEFINED;
    return 0;
}

int mp_group_compare(mp_group_t a, mp_group_t b, int *result)
{
    MPI_Group ga = MPI_GROUP_NULL, gb = MPI_GROUP_NULL;
    int rc, r = MPI_UNEQUAL;
    if ((rc = group_get(a, &ga)) || (rc = group_get(b, &gb)) ||
        (rc = MP_MPI_CHECK(pal_mpi.Group_compare(ga, gb, &r), "MPI_Group_compare")))
        return rc;
    *result = compare_result(r);
    return 0;
}

int mp_group_free(mp_group_t group)
{
    MPI_Group g = MPI_GROUP_NULL;
    int rc;
    if (group == MP_GROUP_EMPTY)
        return 0;
    if ((rc = group_get(group, &g)))
        return rc;
    mp_spin_lock(&g_group_lock);
    g_group_used[group] = 0;
    mp_spin_unlock(&g_group_lock);
    return MP_MPI_CHECK(pal_mpi.Group_free(&g), "MPI_Group_free");
}

int mp_comm_adopt(int rc, MPI_Comm c, const char *call, mp_comm_t *out)
{
    if ((rc = MP_MPI_CHECK(rc, call)))
        return rc;
    if (c == MPI_COMM_NULL) {
        *out = MP_COMM_NULL;
        return 0;
    }
    if ((rc = mp_comm_register(c, out)))
        pal_mpi.Comm_free(&c);
    return rc;
}

int mp_comm_create(mp_comm_t comm, mp_group_t group, mp_comm_t *newcomm)
{
    const comm_entry_t *ce = mp_comm_get(comm);
    MPI_Group g = MPI_GROUP_NULL;
    MPI_Comm out = MPI_COMM_NULL;
    int rc;
    if (!ce || !mp_ready())
        return mp_fail_comm(comm);
    if ((rc = group_get(group, &g)))
        return rc;
    mp_blocking_enter();
    rc = pal_mpi.Comm_create(ce->mpi, g, &out);
    mp_blocking_leave();
    return mp_comm_adopt(rc, out, "MPI_Comm_create", newcomm);
}

int mp_comm_compare(mp_comm_t a, mp_comm_t b, int *result)
{
    const comm_entry_t *ca = mp_comm_get(a), *cb = mp_comm_get(b);
    int rc, r = MPI_UNEQUAL;
    if (!ca || !mp_ready())
        return mp_fail_comm(a);
    if (!cb)
        return mp_fail_comm(b);
    if ((rc = MP_MPI_CHECK(pal_mpi.Comm_compare(ca->mpi, cb->mpi, &r), "MPI_Comm_compare")))
        return rc;
    *result = compare_result(r);
    return 0;
}

int mp_comm_split_type(mp_comm_t comm, int split_type, int key, mp_comm_t *newcomm)
{
    const comm_entry_t *ce = mp_comm_get(comm);
    MPI_Comm out = MPI_COMM_NULL;
    int rc;
    if (!ce || !mp_ready())
        return mp_fail_comm(comm);
    if (split_type != MP_SPLIT_SHARED)
        return mp_fail(MP_EINVAL, "split type %d is not MP_SPLIT_SHARED", split_type);
    mp_blocking_enter();
    rc = pal_mpi.Comm_split_type(ce->mpi, MPI_COMM_TYPE_SHARED, key, MPI_INFO_NULL, &out);
    mp_blocking_leave();
    return mp_comm_adopt(rc, out, "MPI_Comm_split_type", newcomm);
}

int mp_comm_set_name(mp_comm_t comm, const char *name)
{
    const comm_entry_t *ce = mp_comm_get(comm);
    if (!ce || !mp_ready())
        return mp_fail_comm(comm);
    if (!name || strlen(name) >= MPI_MAX_OBJECT_NAME)
        return mp_fail(MP_EINVAL, "communicator name is NULL or longer than %d bytes", MPI_MAX_OBJECT_NAME - 1);
    return MP_MPI_CHECK(pal_mpi.Comm_set_name(ce->mpi, name), "MPI_Comm_set_name");
}

int mp_comm_get_name(mp_comm_t comm, char *buf, int cap)
{
    const comm_entry_t *ce = mp_comm_get(comm);
    char name[MPI_MAX_OBJECT_NAME + 1];
    int len = 0, rc;
    if (!ce || !mp_ready())
        return mp_fail_comm(comm);
    if ((rc = MP_MPI_CHECK(pal_mpi.Comm_get_name(ce->mpi, name, &len), "MPI_Comm_get_name")))
        return rc;
    name[len < 0 ? 0 : len > MPI_MAX_OBJECT_NAME ? MPI_MAX_OBJECT_NAME : len] = '\0';
    if (buf && cap > 0)
        snprintf(buf, (size_t)cap, "%s", name);
    return (int)strlen(name);
}

/* ---- Cartesian topologies ---- */

static int cart_comm(mp_comm_t comm, const comm_entry_t **ce, int *ndims)
{
    int rc, topo = MPI_UNDEFINED;
    *ce = mp_comm_get(comm);
    if (!*ce || !mp_ready())
        return mp_fail_comm(comm);
    if ((rc = MP_MPI_CHECK(pal_mpi.Topo_test((*ce)->mpi, &topo), "MPI_Topo_test")))
        return rc;
    if (topo != MPI_CART)
        return mp_fail(MP_EINVAL, "communicator %d has no Cartesian topology", comm);
    return MP_MPI_CHECK(pal_mpi.Cartdim_get((*ce)->mpi, ndims), "MPI_Cartdim_get");
}

int mp_cart_create(mp_comm_t comm, int ndims, const int32_t *dims, const int32_t *periods, int reorder,
                   mp_comm_t *newcomm)
{
    const comm_entry_t *ce = mp_comm_get(comm);
    MPI_Comm out = MPI_COMM_NULL;
    long long cells = 1;
    int rc;
    if (!ce || !mp_ready())
        return mp_fail_comm(comm);
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
    const comm_entry_t *ce = mp_comm_get(comm);
    int rc, topo = MPI_UNDEFINED;
    if (!ce || !mp_ready())
        return mp_fail_comm(comm);
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
