/* comms.c - the communicator table (Motor handles for MPI communicators) and
 * the calls on communicators as such: rank, size, dup, split, free, compare,
 * names, intercommunicator queries; the failing ends of the argument checks. */
#include "comms.h"

#include <stdio.h>
#include <string.h>

comm_entry_t mp_g_comms[MP_MAX_COMMS];

_Atomic int mp_g_comm_used[MP_MAX_COMMS];

static mp_spin_t g_comm_lock = MP_SPIN_INIT;

int mp_comm_register(MPI_Comm mpi, mp_comm_t *out)
{
    return mp_comm_register_as(mpi, 0, out);
}

int mp_comm_register_as(MPI_Comm mpi, int borrowed, mp_comm_t *out)
{
    comm_entry_t e;
    int rc;
    e.mpi = mpi;
    e.borrowed = borrowed;
    if ((rc = MP_MPI_CHECK(pal_mpi.Comm_size(mpi, &e.size), "MPI_Comm_size")) ||
        (rc = MP_MPI_CHECK(pal_mpi.Comm_rank(mpi, &e.rank), "MPI_Comm_rank")) ||
        (rc = MP_MPI_CHECK(pal_mpi.Comm_test_inter(mpi, &e.is_inter), "MPI_Comm_test_inter")))
        return rc;
    /* Errors are returned, never fatal, on every communicator we hand out
     * (spawned and connected ones do not inherit it). */
    if ((rc = MP_MPI_CHECK(pal_mpi.Comm_set_errhandler(mpi, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler")))
        return rc;
    e.peer_size = e.size;
    if (e.is_inter && (rc = MP_MPI_CHECK(pal_mpi.Comm_remote_size(mpi, &e.peer_size), "MPI_Comm_remote_size")))
        return rc;
    /* Local calls only: the other members may be programs in any language (an MPMD job, a
     * communicator a native library made), which make no call beyond the one that created
     * the communicator.  So nothing here is collective. */
    mp_spin_lock(&g_comm_lock);
    /* Handles 0 and 1 stay world's and self's, also when a session made communicators first. */
    for (int i = mpi == MPI_COMM_WORLD ? 0 : mpi == MPI_COMM_SELF ? 1 : 2; i < MP_MAX_COMMS; i++) {
        if (!atomic_load_explicit(&mp_g_comm_used[i], memory_order_relaxed)) {
            mp_g_comms[i] = e;
            atomic_store_explicit(&mp_g_comm_used[i], 1, memory_order_release);
            mp_spin_unlock(&g_comm_lock);
            *out = i;
            return 0;
        }
    }
    mp_spin_unlock(&g_comm_lock);
    return mp_fail(MP_ENOMEM, "too many communicators (at most %d at once)", MP_MAX_COMMS);
}

int mp_comm_count(void)
{
    int n = 0;
    for (int i = 0; i < MP_MAX_COMMS; i++)
        n += atomic_load_explicit(&mp_g_comm_used[i], memory_order_relaxed) != 0;
    return n;
}

/* Takes comm out of the table; *mpi gets what to free or disconnect. */
void mp_comm_unregister(mp_comm_t comm, MPI_Comm *mpi)
{
    mp_spin_lock(&g_comm_lock);
    *mpi = mp_g_comms[comm].mpi;
    atomic_store_explicit(&mp_g_comm_used[comm], 0, memory_order_release);
    mp_spin_unlock(&g_comm_lock);
}

void mp_comm_forget(mp_comm_t c)
{
    MPI_Comm mpi;
    if (c != MP_COMM_NULL)
        mp_comm_unregister(c, &mpi);
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

int mp_fail_comm(mp_comm_t c)
{
    if (!mp_ready())
        return mp_fail_state();
    return mp_fail(MP_EHANDLE, "communicator handle %d is not valid (freed or never created)", c);
}

int mp_comm_rank(mp_comm_t comm, int *rank)
{
    const comm_entry_t *ce;
    int rc;
    if ((rc = mp_comm_lookup(comm, &ce)))
        return rc;
    *rank = ce->rank;
    return 0;
}

int mp_comm_size(mp_comm_t comm, int *size)
{
    const comm_entry_t *ce;
    int rc;
    if ((rc = mp_comm_lookup(comm, &ce)))
        return rc;
    *size = ce->size;
    return 0;
}

int mp_comm_remote_size(mp_comm_t comm, int *size)
{
    const comm_entry_t *ce;
    int rc;
    if ((rc = mp_comm_lookup(comm, &ce)))
        return rc;
    *size = ce->peer_size;
    return 0;
}

int mp_comm_is_inter(mp_comm_t comm, int *flag)
{
    const comm_entry_t *ce;
    int rc;
    if ((rc = mp_comm_lookup(comm, &ce)))
        return rc;
    *flag = ce->is_inter;
    return 0;
}

int mp_comm_dup(mp_comm_t comm, mp_comm_t *newcomm)
{
    const comm_entry_t *ce;
    MPI_Comm out = MPI_COMM_NULL;
    int rc;
    if ((rc = mp_comm_lookup(comm, &ce)))
        return rc;
    mp_blocking_enter();
    rc = pal_mpi.Comm_dup(ce->mpi, &out);
    mp_blocking_leave();
    return mp_comm_adopt(rc, out, "MPI_Comm_dup", newcomm);
}

int mp_comm_split(mp_comm_t comm, int color, int key, mp_comm_t *newcomm)
{
    const comm_entry_t *ce;
    MPI_Comm out = MPI_COMM_NULL;
    int rc;
    if ((rc = mp_comm_lookup(comm, &ce)))
        return rc;
    if (color < 0 && color != MP_UNDEFINED)
        return mp_fail(MP_EINVAL, "split color %d must be non-negative or MP_UNDEFINED", color);
    mp_blocking_enter();
    rc = pal_mpi.Comm_split(ce->mpi, color == MP_UNDEFINED ? MPI_UNDEFINED : color, key, &out);
    mp_blocking_leave();
    return mp_comm_adopt(rc, out, "MPI_Comm_split", newcomm);
}

int mp_comm_split_type(mp_comm_t comm, int split_type, int key, mp_comm_t *newcomm)
{
    const comm_entry_t *ce;
    MPI_Comm out = MPI_COMM_NULL;
    int rc;
    if ((rc = mp_comm_lookup(comm, &ce)))
        return rc;
    if (split_type != MP_SPLIT_SHARED)
        return mp_fail(MP_EINVAL, "split type %d is not MP_SPLIT_SHARED", split_type);
    mp_blocking_enter();
    rc = pal_mpi.Comm_split_type(ce->mpi, MPI_COMM_TYPE_SHARED, key, MPI_INFO_NULL, &out);
    mp_blocking_leave();
    return mp_comm_adopt(rc, out, "MPI_Comm_split_type", newcomm);
}

int mp_comm_release(mp_comm_t comm, int (*release)(MPI_Comm *), const char *call)
{
    const comm_entry_t *ce;
    MPI_Comm c;
    int rc, borrowed;
    if ((rc = mp_comm_lookup(comm, &ce)))
        return rc;
    if (comm == MP_COMM_WORLD || comm == MP_COMM_SELF)
        return mp_fail(MP_EHANDLE, "the world and self communicators cannot be released (%s)", call);
    borrowed = ce->borrowed;
    mp_comm_unregister(comm, &c);
    if (borrowed) /* the native code that lent it frees it */
        return 0;
    mp_blocking_enter();
    rc = release(&c);
    mp_blocking_leave();
    return MP_MPI_CHECK(rc, call);
}

int mp_comm_free(mp_comm_t comm)
{
    return mp_comm_release(comm, pal_mpi.Comm_free, "MPI_Comm_free");
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
    *result = mp_compare_result(r);
    return 0;
}

int mp_comm_set_name(mp_comm_t comm, const char *name)
{
    const comm_entry_t *ce;
    int rc;
    if ((rc = mp_comm_lookup(comm, &ce)))
        return rc;
    if (!name || strlen(name) >= MPI_MAX_OBJECT_NAME)
        return mp_fail(MP_EINVAL, "communicator name is NULL or longer than %d bytes", MPI_MAX_OBJECT_NAME - 1);
    return MP_MPI_CHECK(pal_mpi.Comm_set_name(ce->mpi, name), "MPI_Comm_set_name");
}

int mp_comm_get_name(mp_comm_t comm, char *buf, int cap)
{
    const comm_entry_t *ce;
    char name[MPI_MAX_OBJECT_NAME + 1];
    int len = 0, rc;
    if ((rc = mp_comm_lookup(comm, &ce)))
        return rc;
    if ((rc = MP_MPI_CHECK(pal_mpi.Comm_get_name(ce->mpi, name, &len), "MPI_Comm_get_name")))
        return rc;
    name[len < 0 ? 0 : len > MPI_MAX_OBJECT_NAME ? MPI_MAX_OBJECT_NAME : len] = '\0';
    if (buf && cap > 0)
        snprintf(buf, (size_t)cap, "%s", name);
    return (int)strlen(name);
}

/* The failing ends of the inline checks in comms.h. */

/* The failing ends of the inline checks in core.h. */
int mp_fail_dest(const comm_entry_t *ce, int dest)
{
    return mp_fail(MP_ERANK, "destination rank %d is outside [0, %d) and not ProcNull", dest, ce->peer_size);
}

int mp_fail_source(const comm_entry_t *ce, int source)
{
    return mp_fail(MP_ERANK, "source rank %d is outside [0, %d) and not AnySource or ProcNull",
                   source, ce->peer_size);
}

int mp_fail_send_tag(int tag)
{
    return mp_fail(MP_ETAG, "send tag %d is outside [0, %d]", tag, mp_g_tag_ub);
}

int mp_fail_recv_tag(int tag)
{
    return mp_fail(MP_ETAG, "receive tag %d is outside [0, %d] and not AnyTag", tag, mp_g_tag_ub);
}
