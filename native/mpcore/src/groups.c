/* groups.c - groups (MPI-4.0 7.3) and communicators built from them. */
#include "comms.h"

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

/* The MPI group behind a handle (rma.c: the groups of Post and Start). */
int mp_group_lookup(mp_group_t g, MPI_Group *out)
{
    return group_get(g, out);
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

int mp_group_adopt(MPI_Group mg, mp_group_t *out)
{
    return group_add(mg, out);
}

int mp_comm_group(mp_comm_t comm, mp_group_t *group)
{
    const comm_entry_t *ce;
    MPI_Group g = MPI_GROUP_NULL;
    int rc;
    if ((rc = mp_comm_lookup(comm, &ce)))
        return rc;
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
    *result = mp_compare_result(r);
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

int mp_comm_create(mp_comm_t comm, mp_group_t group, mp_comm_t *newcomm)
{
    const comm_entry_t *ce;
    MPI_Group g = MPI_GROUP_NULL;
    MPI_Comm out = MPI_COMM_NULL;
    int rc;
    if ((rc = mp_comm_lookup(comm, &ce)))
        return rc;
    if ((rc = group_get(group, &g)))
        return rc;
    mp_blocking_enter();
    rc = pal_mpi.Comm_create(ce->mpi, g, &out);
    mp_blocking_leave();
    return mp_comm_adopt(rc, out, "MPI_Comm_create", newcomm);
}
