/* core.h - the bottom layer of mpcore, included by every unit: the interface's
 * prototypes, errors, process state, status translation, counters, the
 * blocking-call bracket and a spinlock.  Above it: comms.h (communicators),
 * slots.h (the slot table), requests.h (completion), persistent.h, then the feature units
 * (p2p, collectives, groups, topology, dynamic, gcscan, stats) and lifecycle.c
 * and table.c on top.  Nothing calls upward. */
#ifndef MPCORE_CORE_H
#define MPCORE_CORE_H

#include "mpcore.h"
#include "mpcore_gc.h"
#include "pal.h"
#include "pal_mpi.h"

#include <stdatomic.h>

/* Everything the core declares is internal; only mp_core_table is exported. */
#pragma GCC visibility push(hidden)

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

/* Every function of the interface (mpcore_calls.def), hidden: callers outside
 * the core reach them only through the table of the core they chose. */
#define MP_CALL(kind, ret, name, params) ret mp_##name params;
#include "mpcore_calls.def"
#undef MP_CALL
/* The table of this core (table.c); mp_core_table() may choose another (select.c). */
const mp_table_t *mp_core_own_table(void);
/* GC statistics for white-box tests (requests.c). */
void mp_gc_stats(mp_gc_stats_t *out);

/* ---- errors (error.c): the one translation point ---- */
/* Records a message for mp_last_error and returns code. */
MP_COLD int mp_fail(int code, const char *fmt, ...) MP_FMT(2, 3);
/* As mp_fail, with the MPI error class the library would have given (not counted as an MPI
 * error: MPI never saw the call).  For calls refused before an MPI library that treats the
 * error as fatal whatever the error handler says. */
MP_COLD int mp_fail_class(int code, int cls, const char *fmt, ...) MP_FMT(3, 4);
/* MP_EINVAL for a NULL output pointer: "<what> output is NULL". */
MP_COLD int mp_fail_null_output(const char *what);
/* Translates an MPI return code: MPI_SUCCESS -> 0, truncation -> MP_ETRUNCATE,
 * anything else -> MP_EMPI, recording the class and MPI's own string. */
MP_COLD int mp_mpi_fail(int rc, const char *call);
/* An MPI failure the library did not report (it returned MPI_SUCCESS): MP_EMPI of class cls
 * with the core's own message, counted as mp_mpi_fail counts. */
MP_COLD int mp_mpi_fail_unreported(int cls, const char *fmt, ...) MP_FMT(2, 3);
/* The code mp_mpi_fail returns for MPI's rc, recording nothing: the later failures of a set whose
 * first one mp_mpi_fail recorded (the call returns that one, and its text is the last error). */
MP_COLD int mp_mpi_code(int rc);
/* One of a set's failures: recorded (mp_mpi_fail) if it is the first (recorded == 0), else only
 * translated (mp_mpi_code), so that the call's text is its first failure's, counted once. */
static inline int mp_mpi_fail_set(int recorded, int rc, const char *call)
{
    return recorded ? mp_mpi_code(rc) : mp_mpi_fail(rc, call);
}
/* A function, not a macro over its argument: callers pass the MPI call itself
 * as rc, which must run exactly once (a macro naming rc twice ran every
 * failing MPI call a second time). */
static inline int mp_mpi_check(int rc, const char *call)
{
    return MP_LIKELY(rc == MPI_SUCCESS) ? 0 : mp_mpi_fail(rc, call);
}
#define MP_MPI_CHECK(rc, call) mp_mpi_check((rc), (call))

/* ---- state (environment.c) ---- */
extern _Atomic int mp_g_state;  /* MP_STATE_* */
extern int mp_g_tag_ub;
extern int mp_g_reserved_above; /* tags above it are the caller's own (reserve_tags); INT_MAX: none */
extern int mp_g_thread_level;
extern _Atomic uint64_t mp_g_mpi_errors; /* failing MPI calls (error.c) */
MP_COLD int mp_fail_state(void);

static inline int mp_ready(void)
{
    return MP_LIKELY(atomic_load_explicit(&mp_g_state, memory_order_relaxed) == MP_STATE_READY);
}

/* ---- the vector registers' upper halves ----
 * A thread can come back from managed code with the upper halves of the AVX registers dirty
 * (seen with .NET 10 on an AVX-512 Xeon: after System.MP's first collective of an element type,
 * whose compiled code has no 256-bit instruction, so the runtime's own work for it; and then for
 * the rest of the process, since nothing in the message path clears them).  Legacy-SSE
 * instructions, which MPICH and UCX (built for baseline x86-64) use for small copies and status
 * fields, then run with a false dependency on those halves: a managed receiver's 16-31 byte messages arrived at half the
 * rate of 8 or 32 byte ones (perf/README.md, "The 16 B list anomaly").  The core clears them
 * (VZEROUPPER, on processors that have AVX) where it enters MPI's progress: the blocking
 * bracket and every test or probe. */
extern int mp_g_avx;

static MP_INLINE void mp_clean_upper(void)
{
#if defined(__x86_64__)
    if (MP_LIKELY(mp_g_avx))
        __asm__ volatile("vzeroupper"); /* the core itself keeps nothing above 128 bits */
#endif
}

/* ---- testing one request ---- */
/* MPI_Test, with the registers' upper halves clean for MPI's progress. */
static MP_INLINE int mp_mpi_test(MPI_Request *r, int *flag, MPI_Status *st)
{
    mp_clean_upper();
    return pal_mpi.Test(r, flag, st);
}

/* MPI_Test of one request where it is likely complete already: the test right
 * after a blocking send or receive is posted (an eager send, a receive whose
 * message had arrived) and the tests of nonblocking sends.  Where the library's
 * MPI_Test polls the network even for an operation that is complete
 * (pal_mpi.test_polls_when_done: MPICH before 4.2), that poll is paid for nothing
 * (perf/README.md, "Testing a finished operation"); there MPI_Request_get_status
 * looks first and polls only while the operation is pending, and MPI_Wait
 * completes a finished one without polling (and reports its error, as MPI_Test
 * would).  A pending operation's later tests keep MPI_Test: they need the poll,
 * and MPI_Test completes what it finds in the same call.  Same contract as
 * MPI_Test: *flag set, *r freed when complete. */
static MP_INLINE int mp_mpi_test_done_first(MPI_Request *r, int *flag, MPI_Status *st)
{
    int rc;
    if (!pal_mpi.test_polls_when_done)
        return mp_mpi_test(r, flag, st);
    mp_clean_upper();
    *flag = 0;
    rc = pal_mpi.Request_get_status(*r, flag, st);
    return *flag ? pal_mpi.Wait(r, st) : rc;
}

/* MPI_Waitall, or where the library's can wait forever for a set with a request that had
 * already failed (pal_mpi_waitall_hangs_on_failed: Open MPI) MPI_Wait for each request in
 * turn, with MPI_Waitall's contract: every request completed and freed (persistent ones made
 * inactive), MPI_ERR_IN_STATUS with each status's MPI_ERROR when one failed.
 * sts may be MPI_STATUSES_IGNORE: a set with no receive, whose statuses no one needs from MPI
 * (a send's says nothing but whether it was cancelled, and a send asked to be is never in such a
 * set; a collective's or a one-sided operation's is empty), is completed without them, and MPI
 * skips their processing (MPICH 4.0: about 50 instructions per send, a twelfth of its own cost
 * per operation in perf/callgrind.sh's window).  What is lost is which operation failed when one
 * does: MPI then says MPI_ERR_IN_STATUS alone, and the set fails as a whole, reported under
 * MP_STATUSLESS(call) (MPI_Waitall, or MPI_Testall: the waits' polls). */
#define MP_STATUSLESS(call) \
    call " (a set with no receive, without statuses: MPI does not say which operation failed)"
static MP_INLINE int mp_mpi_waitall(int n, MPI_Request *reqs, MPI_Status *sts)
{
    int failed = 0;
    if (MP_LIKELY(!pal_mpi.waitall_hangs_on_failed))
        return pal_mpi.Waitall(n, reqs, sts);
    for (int i = 0; i < n; i++) {
        int rc = pal_mpi.Wait(&reqs[i], sts == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &sts[i]);
        if (sts != MPI_STATUSES_IGNORE)
            sts[i].MPI_ERROR = rc;
        failed |= rc != MPI_SUCCESS;
    }
    return failed ? MPI_ERR_IN_STATUS : MPI_SUCCESS;
}

/* MPI_Testall, with the registers' upper halves clean for MPI's progress (as mp_mpi_test). */
static MP_INLINE int mp_mpi_testall_plain(int n, MPI_Request *reqs, int *flag, MPI_Status *sts)
{
    mp_clean_upper();
    return pal_mpi.Testall(n, reqs, flag, sts);
}

/* MPI_Testall for a set that may hold persistent requests: Open MPI 4.1.4 returns
 * MPI_SUCCESS for a set whose persistent receive was truncated, with MPI_ERR_TRUNCATE only in
 * that status's MPI_ERROR (its MPI_Wait and MPI_Waitall report it).  Each MPI_ERROR is set to
 * MPI_SUCCESS first, which a library that succeeded leaves or writes, so an error found there
 * afterwards is the set's: MPI_ERR_IN_STATUS, as MPI-4.0 3.7.5 asks. */
static MP_INLINE int mp_mpi_testall(int n, MPI_Request *reqs, int *flag, MPI_Status *sts)
{
    int rc;
    for (int i = 0; i < n; i++)
        sts[i].MPI_ERROR = MPI_SUCCESS;
    rc = mp_mpi_testall_plain(n, reqs, flag, sts);
    if (rc == MPI_SUCCESS && *flag)
        for (int i = 0; i < n; i++)
            if (sts[i].MPI_ERROR != MPI_SUCCESS)
                return MPI_ERR_IN_STATUS;
    return rc;
}

/* ---- statuses ---- */
static inline void mp_status_from_mpi(const MPI_Status *st, mp_status_t *out)
{
    out->source = st->MPI_SOURCE == MPI_PROC_NULL ? MP_PROC_NULL
                : st->MPI_SOURCE == MPI_ANY_SOURCE ? MP_ANY_SOURCE : st->MPI_SOURCE;
    out->tag = st->MPI_TAG == MPI_ANY_TAG ? MP_ANY_TAG : st->MPI_TAG;
    out->error = MP_OK;
    out->cancelled = pal_status_cancelled(st);
    out->bytes = pal_status_bytes(st);
}
/* The status of a receive from ProcNull (MPI-4.0 3.11): source ProcNull,
 * tag AnyTag, count 0.  Such operations never reach the MPI library. */
static inline void mp_status_proc_null(mp_status_t *st)
{
    st->source = MP_PROC_NULL;
    st->tag = MP_ANY_TAG;
    st->error = MP_OK;
    st->cancelled = 0;
    st->bytes = 0;
}

/* Operation counters of one thread.  Only their thread writes them (a relaxed
 * load and store, no atomic read-modify-write on the posting path); mp_stats
 * sums every thread's under the slot lock, so counts from several threads
 * are neither lost nor a data race. */
typedef struct mp_counts {
    _Atomic uint64_t p2p_ops, p2p_bytes, coll_ops, blocking_ops, registered, persistent_starts;
} mp_counts_t;
static inline void mp_count(_Atomic uint64_t *counter, uint64_t n)
{
    atomic_store_explicit(counter, atomic_load_explicit(counter, memory_order_relaxed) + n,
                          memory_order_relaxed);
}
/* This thread's counters (listed for mp_stats on first use; slots.c). */
mp_counts_t *mp_my_counts(void);

/* ---- the blocking-call bracket (blocking.c): the GC extension calls MPI at
 * a mark only while no thread is inside a blocking MPI call ---- */
void mp_blocking_enter(void);
void mp_blocking_leave(void);
/* The GC side: 1 when it may call MPI now (then mp_gc_mpi_end), 0 to skip. */
int mp_gc_mpi_begin(void);
void mp_gc_mpi_end(void);

/* Frees the MPI objects collectives created (collectives.c); before finalize. */
void mp_coll_cleanup(void);
/* Frees the MPI requests of inactive persistent requests (persistent.c); before finalize. */
void mp_persist_cleanup(void);
/* Frees the object-payload pieces kept for object receives and forgets the receives posted
 * with AnyTag (wildcard.c). */
void mp_wild_clear(void);

/* One-sided communication (rma.c) uses: the element type and accumulate op
 * (collectives.c) and the MPI group behind a handle (groups.c); info objects
 * come from info.h. */
int mp_rma_types(int dtype, int elem_size, int op, MPI_Datatype *dt, MPI_Op *mop);
int mp_group_lookup(mp_group_t g, MPI_Group *out);

/* Sessions (sessions.c): a new MPI group's handle (groups.c; takes mg);
 * 1 while the core is ready through sessions alone; finalizes the sessions
 * still open (before finalize). */
int mp_group_adopt(MPI_Group mg, mp_group_t *out);
extern int mp_g_sessions_only;
void mp_session_cleanup(void);
/* MP_ENOTSUP: the library lacks MPI-4 function name (what it is; the feature
 * that needs it, plural), naming the library (collectives.c). */
int mp_fail_mpi4_missing(const char *name, const char *what, const char *feature);
/* Happens-before edges made with atomics, which helgrind does not see: this
 * spinlock, and a slot handed from the thread that posts it to another that
 * completes it (state's release store, acquire load).  Only the core that
 * tests/checkers.sh helgrind builds (MP_HELGRIND) has them; no code otherwise. */
#ifdef MP_HELGRIND
#include <valgrind/helgrind.h>
#define MP_HAPPENS_BEFORE(p) ANNOTATE_HAPPENS_BEFORE(p)
#define MP_HAPPENS_AFTER(p) ANNOTATE_HAPPENS_AFTER(p)
#define MP_ATOMIC_WORD(p) ANNOTATE_BENIGN_RACE_SIZED(p, sizeof *(p), "an atomic word")
#else
#define MP_HAPPENS_BEFORE(p) ((void)0)
#define MP_HAPPENS_AFTER(p) ((void)0)
#define MP_ATOMIC_WORD(p) ((void)0)
#endif

/* A simple test-and-set spinlock for short critical sections. */
typedef struct { atomic_flag f; } mp_spin_t;
#define MP_SPIN_INIT { ATOMIC_FLAG_INIT }
static inline void mp_spin_lock(mp_spin_t *l)
{
    MP_ATOMIC_WORD(&l->f);
    while (atomic_flag_test_and_set_explicit(&l->f, memory_order_acquire))
        pal_cpu_relax();
    MP_HAPPENS_AFTER(l);
}
/* 1 when the lock was free and is now taken, 0 when another thread holds it. */
static inline int mp_spin_trylock(mp_spin_t *l)
{
    MP_ATOMIC_WORD(&l->f);
    if (atomic_flag_test_and_set_explicit(&l->f, memory_order_acquire))
        return 0;
    MP_HAPPENS_AFTER(l);
    return 1;
}
static inline void mp_spin_unlock(mp_spin_t *l)
{
    MP_HAPPENS_BEFORE(l);
    atomic_flag_clear_explicit(&l->f, memory_order_release);
}

#pragma GCC visibility pop

#endif /* MPCORE_CORE_H */
