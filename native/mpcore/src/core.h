/* core.h - mpcore internals shared by its source files. */
#ifndef MPCORE_CORE_H
#define MPCORE_CORE_H

#include "mpcore.h"
#include "mpcore_gc.h"
#include "pal.h"
#include "pal_mpi.h"

#include <stdatomic.h>

#if defined(__GNUC__)
#define MP_LIKELY(x) __builtin_expect(!!(x), 1)
#define MP_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define MP_COLD __attribute__((cold, noinline))
#define MP_INLINE inline __attribute__((always_inline))
#define MP_FMT(a, b) __attribute__((format(printf, a, b)))
#else
#define MP_LIKELY(x) (x)
#define MP_UNLIKELY(x) (x)
#define MP_COLD
#define MP_INLINE inline
#define MP_FMT(a, b)
#endif

/* ---- errors (error.c): the one translation point ---- */
/* Records a message for mp_last_error and returns code. */
MP_COLD int mp_fail(int code, const char *fmt, ...) MP_FMT(2, 3);
/* Translates an MPI return code: MPI_SUCCESS -> 0, truncation -> MP_ETRUNCATE,
 * anything else -> MP_EMPI, recording the class and MPI's own string. */
MP_COLD int mp_mpi_fail(int rc, const char *call);
/* A function, not a macro over its argument: callers pass the MPI call itself
 * as rc, which must run exactly once (a macro naming rc twice ran every
 * failing MPI call a second time). */
static inline int mp_mpi_check(int rc, const char *call)
{
    return MP_LIKELY(rc == MPI_SUCCESS) ? 0 : mp_mpi_fail(rc, call);
}
#define MP_MPI_CHECK(rc, call) mp_mpi_check((rc), (call))

/* ---- state (core.c) ---- */
extern _Atomic int mp_g_state;  /* MP_STATE_* */
extern int mp_g_tag_ub;
extern int mp_g_thread_level;

#define MP_MAX_COMMS 4096
typedef struct comm_entry {
    MPI_Comm mpi;
    int size;      /* local group */
    int rank;
    int peer_size; /* ranks a peer argument refers to: the remote group of an
                      intercommunicator, else the local group */
    int is_inter;
} comm_entry_t;
extern comm_entry_t mp_g_comms[MP_MAX_COMMS];
extern _Atomic int mp_g_comm_used[MP_MAX_COMMS];

/* Looks up a live communicator or returns NULL after recording the error. */
static inline const comm_entry_t *mp_comm_get(mp_comm_t c)
{
    if (MP_LIKELY((unsigned)c < MP_MAX_COMMS && atomic_load_explicit(&mp_g_comm_used[c], memory_order_acquire)))
        return &mp_g_comms[c];
    return 0;
}
MP_COLD int mp_fail_comm(mp_comm_t c);
/* Adds a new MPI communicator to the table (core.c). */
int mp_comm_register(MPI_Comm mpi, mp_comm_t *out);
/* Registers a communicator just created by a collective call, or frees it
 * when it could not be registered; MPI_COMM_NULL gives MP_COMM_NULL. */
int mp_comm_adopt(int rc, MPI_Comm c, const char *call, mp_comm_t *out);
MP_COLD int mp_fail_state(void);

static inline int mp_ready(void)
{
    return MP_LIKELY(atomic_load_explicit(&mp_g_state, memory_order_relaxed) == MP_STATE_READY);
}

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
static inline void mp_status_from_mpi(const MPI_Status *st, mp_status_t *out)
{
    out->source = st->MPI_SOURCE == MPI_PROC_NULL ? MP_PROC_NULL
                : st->MPI_SOURCE == MPI_ANY_SOURCE ? MP_ANY_SOURCE : st->MPI_SOURCE;
    out->tag = st->MPI_TAG == MPI_ANY_TAG ? MP_ANY_TAG : st->MPI_TAG;
    out->error = MP_OK;
    out->cancelled = pal_status_cancelled(st);
    out->bytes = pal_status_bytes(st);
}
/* The status of an operation with a ProcNull peer (MPI-4.0 3.11). */
void mp_status_proc_null(mp_status_t *st);

/* Operation counters of one thread.  Only their thread writes them (a relaxed
 * load and store, no atomic read-modify-write on the posting path); mp_stats
 * sums every thread's under the slot lock, so counts from several threads
 * are neither lost nor a data race. */
typedef struct mp_counts {
    _Atomic uint64_t p2p_ops, p2p_bytes, coll_ops, blocking_ops, registered, mpi_errors;
} mp_counts_t;
static inline void mp_count(_Atomic uint64_t *counter, uint64_t n)
{
    atomic_store_explicit(counter, atomic_load_explicit(counter, memory_order_relaxed) + n,
                          memory_order_relaxed);
}
/* This thread's counters (listed for mp_stats on first use). */
mp_counts_t *mp_my_counts(void);

/* Gives a posted request (posted == 0) or a completed ProcNull one (1) a
 * slot of the request table (requests.c). */
int mp_track(int posted, MPI_Request r, void *obj0, void *obj1, int is_recv, mp_req_t *req);

/* Frees the MPI objects collectives created (collectives.c); before finalize. */
void mp_coll_cleanup(void);

/* ---- blocking-call bracket (requests.c): lets the GC extension call MPI
 * only while no thread is inside a blocking MPI call ---- */
void mp_blocking_enter(void);

/* Completes finished orphans when there are any (one relaxed load otherwise).
 * Blocking calls run it inside the blocking bracket, so a program that only
 * makes blocking calls still releases requests it dropped. */
extern _Atomic int mp_g_orphans;
MP_API int mp_req_sweep(void);
static inline void mp_sweep_orphans(void)
{
    if (MP_UNLIKELY(atomic_load_explicit(&mp_g_orphans, memory_order_relaxed)))
        mp_req_sweep();
}
void mp_blocking_leave(void);

/* A simple test-and-set spinlock for short critical sections. */
typedef struct { atomic_flag f; } mp_spin_t;
#define MP_SPIN_INIT { ATOMIC_FLAG_INIT }
static inline void mp_spin_lock(mp_spin_t *l)
{
    while (atomic_flag_test_and_set_explicit(&l->f, memory_order_acquire))
        pal_cpu_relax();
}
static inline void mp_spin_unlock(mp_spin_t *l)
{
    atomic_flag_clear_explicit(&l->f, memory_order_release);
}

#endif /* MPCORE_CORE_H */
