/* comms.h - communicators: the table mapping Motor handles to MPI
 * communicators (comms.c), and the inline argument checks every operation on
 * a communicator makes.  Above core.h, beside slots.h (the request slot table). */
#ifndef MPCORE_COMMS_H
#define MPCORE_COMMS_H

#include "core.h"

#pragma GCC visibility push(hidden)

#define MP_MAX_COMMS 4096
typedef struct comm_entry {
    MPI_Comm mpi;
    int size;      /* local group */
    int rank;
    int peer_size; /* ranks a peer argument refers to: the remote group of an
                      intercommunicator, else the local group */
    int is_inter;
    int borrowed;  /* adopted from native code that keeps it: released, never freed (handles.c) */
} comm_entry_t;
extern comm_entry_t mp_g_comms[MP_MAX_COMMS];
extern _Atomic int mp_g_comm_used[MP_MAX_COMMS];

/* A live communicator, or NULL (nothing recorded: mp_abort accepts any). */
static inline const comm_entry_t *mp_comm_get(mp_comm_t c)
{
    if (MP_LIKELY((unsigned)c < MP_MAX_COMMS && atomic_load_explicit(&mp_g_comm_used[c], memory_order_acquire)))
        return &mp_g_comms[c];
    return 0;
}
/* Records why c cannot be used (not initialized, finalized, or not a live handle). */
MP_COLD int mp_fail_comm(mp_comm_t c);

/* The one lookup every operation on a communicator starts with: 0 and *ce,
 * or the error (MPI not ready, or c not a live handle). */
static inline int mp_comm_lookup(mp_comm_t c, const comm_entry_t **ce)
{
    *ce = mp_comm_get(c);
    return MP_LIKELY(*ce && mp_ready()) ? 0 : mp_fail_comm(c);
}

/* The intercommunicator to the parent job, or MP_COMM_NULL (set by mp_init). */
extern mp_comm_t mp_g_parent;

/* MPI_IDENT... as mp_compare (groups and communicators alike). */
static inline int mp_compare_result(int r)
{
    return r == MPI_IDENT ? MP_IDENT : r == MPI_CONGRUENT ? MP_CONGRUENT
         : r == MPI_SIMILAR ? MP_SIMILAR : MP_UNEQUAL;
}

/* Communicators in the table (a scan, for statistics). */
int mp_comm_count(void);
/* Takes comm out of the table; *mpi gets what to free or disconnect. */
void mp_comm_unregister(mp_comm_t comm, MPI_Comm *mpi);
/* Takes an entry out of the table without freeing the communicator (MPI's own:
 * what an init that failed part way had registered of world, self and the parent, so that
 * another init can succeed).  MP_COMM_NULL: nothing. */
void mp_comm_forget(mp_comm_t comm);
/* Frees (MPI_Comm_free) or disconnects (MPI_Comm_disconnect) a communicator. */
int mp_comm_release(mp_comm_t comm, int (*release)(MPI_Comm *), const char *call);
/* Adds an MPI communicator to the table (comms.c): local calls only, never a
 * collective, so that members running other programs need make no call of their own. */
int mp_comm_register(MPI_Comm mpi, mp_comm_t *out);
/* The same for a communicator native code keeps (borrowed = 1): releasing it leaves it to them. */
int mp_comm_register_as(MPI_Comm mpi, int borrowed, mp_comm_t *out);
/* Registers a communicator just created by a collective call, or frees it
 * when it could not be registered; MPI_COMM_NULL gives MP_COMM_NULL. */
int mp_comm_adopt(int rc, MPI_Comm c, const char *call, mp_comm_t *out);
/* Peer/tag translation (Motor constants -> MPI). Return 0 or MP_E*.
 * Inline: they run on every operation; only the failing ends are calls. */
MP_COLD int mp_fail_dest(const comm_entry_t *ce, int dest);
MP_COLD int mp_fail_source(const comm_entry_t *ce, int source);
MP_COLD int mp_fail_send_tag(int tag);
MP_COLD int mp_fail_recv_tag(int tag);

static inline int mp_check_dest(const comm_entry_t *ce, int dest, int *mpi_dest)
{
    if (MP_LIKELY((unsigned)dest < (unsigned)ce->peer_size)) {
        *mpi_dest = dest;
        return 0;
    }
    if (dest == MP_PROC_NULL) {
        *mpi_dest = MPI_PROC_NULL;
        return 0;
    }
    return mp_fail_dest(ce, dest);
}

static inline int mp_check_source(const comm_entry_t *ce, int source, int *mpi_source)
{
    if (MP_LIKELY((unsigned)source < (unsigned)ce->peer_size)) {
        *mpi_source = source;
        return 0;
    }
    if (source == MP_ANY_SOURCE || source == MP_PROC_NULL) {
        *mpi_source = source == MP_ANY_SOURCE ? MPI_ANY_SOURCE : MPI_PROC_NULL;
        return 0;
    }
    return mp_fail_source(ce, source);
}

static inline int mp_check_send_tag(int tag)
{
    return MP_LIKELY(tag >= 0 && tag <= mp_g_tag_ub) ? 0 : mp_fail_send_tag(tag);
}

static inline int mp_check_recv_tag(int tag, int *mpi_tag)
{
    if (MP_LIKELY(tag >= 0 && tag <= mp_g_tag_ub)) {
        *mpi_tag = tag;
        return 0;
    }
    if (tag == MP_ANY_TAG) {
        *mpi_tag = MPI_ANY_TAG;
        return 0;
    }
    return mp_fail_recv_tag(tag);
}

#pragma GCC visibility pop

#endif /* MPCORE_COMMS_H */
