/*
 * requests.c - point-to-point posting and completion, the request slot table
 * (which is also the in-flight table the GC extension scans), and orphans.
 *
 * Slots live in fixed-size chunks that never move, so the address of a slot's
 * `obj` field is a stable native root for the GC.  A handle is
 * (generation << 20) | index, so a stale handle is detected, not misused.
 *
 * The per-operation path takes no lock and makes no atomic read-modify-write:
 * each thread keeps a cache of free slots (allocating and freeing there),
 * refilled from and spilled to the locked global free list in batches.
 */
#include "core.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <threads.h>

#define SLOT_CHUNK_BITS 10
#define SLOT_CHUNK (1 << SLOT_CHUNK_BITS)
#define SLOT_MAX_CHUNKS 1024 /* 1M slots: index fits the 20 low handle bits */
#define HANDLE_INDEX_MASK 0xFFFFF
#define HANDLE_GEN_SHIFT 20
#define HANDLE_GEN_MASK 0x7FF

enum slot_state { SLOT_FREE = 0, SLOT_ACTIVE = 1, SLOT_DONE = 2 };
/* Written only by the request's owner (a Request is completed from one thread,
 * and its finalizer runs only once nothing else can reach it): no RMW needed. */
enum slot_flags {
    SLOT_ORPHANED = 1,
    SLOT_IN_BATCH = 2 /* in the set a testall/waitall is completing: a repeat is refused */
};

typedef struct slot {
    void *obj[2];         /* owner objects (GC roots while in flight) or NULL */
    MPI_Request mpi;
    _Atomic uint32_t state;
    _Atomic uint32_t flags;
    _Atomic uint32_t gen;
    int32_t next_free;
    int32_t is_recv;
    int32_t done_rc;      /* result recorded when the core saw completion */
    mp_status_t status;   /* status recorded when the core saw completion */
} slot_t;

static slot_t *g_chunks[SLOT_MAX_CHUNKS];
static _Atomic int g_nslots;      /* high-water mark of slots ever handed out */
static int g_free_head = -1;      /* global free list, under g_slot_lock */
_Atomic int mp_g_orphans;        /* ACTIVE slots whose owner is gone */
static mp_spin_t g_slot_lock = MP_SPIN_INIT;

/* A thread's free slots.  Refills take SLOT_BATCH slots from the global list
 * (or fresh ones), a full cache gives SLOT_BATCH back; at thread exit the
 * cache returns everything (a tss destructor). */
#define SLOT_CACHE 256
#define SLOT_BATCH 64
typedef struct slot_cache {
    int n;
    int registered; /* the exit destructor knows this cache */
    int listed;     /* LISTED: on g_listed, its counts summed by mp_stats */
    struct slot_cache *next, *prev;
    mp_counts_t counts;
    int idx[SLOT_CACHE];
} slot_cache_t;
enum { UNLISTED, LISTED, RETIRED /* the thread is exiting: counted in g_retired */ };
static _Thread_local slot_cache_t t_cache;
static tss_t g_cache_key;

/* This thread's cache, looked up once: compilers otherwise recompute a TLS
 * address at each use (a call into the dynamic linker for a dlopen'ed core). */
static inline slot_cache_t *my_cache(void)
{
    slot_cache_t *c = &t_cache;
#if defined(__GNUC__)
    __asm__("" : "+r"(c));
#endif
    return c;
}
static once_flag g_cache_once = ONCE_FLAG_INIT;
static int g_cache_key_ok;

/* Threads' counters: the live ones listed, those of exited threads summed,
 * both under g_slot_lock. */
static slot_cache_t *g_listed;
static mp_counts_t g_retired;

/* GC statistics and the mark snapshot reused by the relocate pass. */
static mp_gc_stats_t g_gc_stats;
static void ***g_snapshot;
static int g_snapshot_len, g_snapshot_cap;

/* ---- blocking-call bracket ----
 * The GC extension may call MPI_Test on in-flight requests at mark time
 * (managed threads are suspended, so no fast call can be running); it must
 * not overlap a blocking MPI call made by a thread in preemptive mode.  A
 * Dekker-style pair of flags decides: the GC side only ever skips, never waits. */
static _Atomic int g_in_blocking;
static _Atomic int g_gc_probe;
static _Atomic int g_gc_attached;  /* set by libmpgc at GC_Initialize */

void mp_blocking_enter(void)
{
    for (;;) {
        atomic_fetch_add(&g_in_blocking, 1);
        if (MP_LIKELY(!atomic_load(&g_gc_probe)))
            return;
        atomic_fetch_sub(&g_in_blocking, 1);
        while (atomic_load(&g_gc_probe))
            pal_cpu_relax();
    }
}

void mp_blocking_leave(void)
{
    atomic_fetch_sub(&g_in_blocking, 1);
}

/* ---- slots ---- */

static inline slot_t *slot_at(int idx)
{
    return &g_chunks[idx >> SLOT_CHUNK_BITS][idx & (SLOT_CHUNK - 1)];
}

/* Puts idx on the global free list (caller holds g_slot_lock). */
static inline void global_push(int idx)
{
    slot_at(idx)->next_free = g_free_head;
    g_free_head = idx;
}

/* Gives up to n cached slots back to the global list. */
static void cache_spill(slot_cache_t *c, int n)
{
    mp_spin_lock(&g_slot_lock);
    while (n-- > 0 && c->n > 0)
        global_push(c->idx[--c->n]);
    mp_spin_unlock(&g_slot_lock);
}

static void counts_add(mp_counts_t *to, const mp_counts_t *from)
{
    mp_count(&to->p2p_ops, atomic_load_explicit(&from->p2p_ops, memory_order_relaxed));
    mp_count(&to->p2p_bytes, atomic_load_explicit(&from->p2p_bytes, memory_order_relaxed));
    mp_count(&to->coll_ops, atomic_load_explicit(&from->coll_ops, memory_order_relaxed));
    mp_count(&to->blocking_ops, atomic_load_explicit(&from->blocking_ops, memory_order_relaxed));
    mp_count(&to->registered, atomic_load_explicit(&from->registered, memory_order_relaxed));
    mp_count(&to->mpi_errors, atomic_load_explicit(&from->mpi_errors, memory_order_relaxed));
}

/* Thread exit: slots back to the global list, counts into g_retired (the
 * thread's storage goes away after this). */
static void cache_release(void *p)
{
    slot_cache_t *c = p;
    cache_spill(c, c->n);
    c->registered = 0;
    if (c->listed == LISTED) {
        mp_spin_lock(&g_slot_lock);
        counts_add(&g_retired, &c->counts);
        if (c->prev)
            c->prev->next = c->next;
        else
            g_listed = c->next;
        if (c->next)
            c->next->prev = c->prev;
        mp_spin_unlock(&g_slot_lock);
    }
    c->listed = RETIRED; /* counts made during the rest of the exit are not kept */
}

static void cache_key_init(void)
{
    g_cache_key_ok = tss_create(&g_cache_key, cache_release) == thrd_success;
}

/* First use of a thread's cache: make sure it is emptied at thread exit. */
static MP_COLD void cache_register(slot_cache_t *c)
{
    call_once(&g_cache_once, cache_key_init);
    if (g_cache_key_ok && tss_set(g_cache_key, c) == thrd_success)
        c->registered = 1;
}

/* First count of a thread: list its counters (and arm the exit destructor). */
static MP_COLD void cache_list(slot_cache_t *c)
{
    if (c->listed != UNLISTED)
        return;
    if (!c->registered)
        cache_register(c);
    if (!c->registered)
        return; /* no destructor to unlist it at exit: keep it off the list */
    mp_spin_lock(&g_slot_lock);
    c->prev = NULL;
    c->next = g_listed;
    if (g_listed)
        g_listed->prev = c;
    g_listed = c;
    c->listed = LISTED;
    mp_spin_unlock(&g_slot_lock);
}

static inline mp_counts_t *counts_of(slot_cache_t *c)
{
    if (MP_UNLIKELY(c->listed != LISTED))
        cache_list(c);
    return &c->counts;
}

mp_counts_t *mp_my_counts(void)
{
    return counts_of(my_cache());
}

/* Refills an empty cache: freed slots from the global list first, else
 * fresh ones (allocating their chunk). */
static MP_COLD int cache_refill(slot_cache_t *c)
{
    int rc = 0;
    if (!c->registered)
        cache_register(c);
    mp_spin_lock(&g_slot_lock);
    while (c->n < SLOT_BATCH && g_free_head >= 0) {
        c->idx[c->n++] = g_free_head;
        g_free_head = slot_at(g_free_head)->next_free;
    }
    if (c->n == 0) {
        int first = atomic_load_explicit(&g_nslots, memory_order_relaxed), count = SLOT_BATCH;
        if (first + count > SLOT_CHUNK * SLOT_MAX_CHUNKS)
            count = SLOT_CHUNK * SLOT_MAX_CHUNKS - first;
        /* A batch never crosses a chunk: SLOT_CHUNK is a multiple of SLOT_BATCH. */
        if (count <= 0) {
            rc = mp_fail(MP_ENOMEM, "too many pending requests (at most %d)", SLOT_CHUNK * SLOT_MAX_CHUNKS);
        } else if (!g_chunks[first >> SLOT_CHUNK_BITS] &&
                   !(g_chunks[first >> SLOT_CHUNK_BITS] = calloc(SLOT_CHUNK, sizeof(slot_t)))) {
            rc = mp_fail(MP_ENOMEM, "out of memory for the request table");
        } else {
            for (int i = first + count - 1; i >= first; i--)
                c->idx[c->n++] = i;
            atomic_store_explicit(&g_nslots, first + count, memory_order_release);
        }
    }
    mp_spin_unlock(&g_slot_lock);
    return rc;
}

static inline int slot_alloc(slot_cache_t *c, slot_t **out, mp_req_t *handle)
{
    slot_t *s;
    uint32_t gen;
    int idx, n = c->n, rc;
    if (MP_UNLIKELY(n == 0)) {
        if ((rc = cache_refill(c)))
            return rc;
        n = c->n;
    }
    c->n = --n;
    idx = c->idx[n];
    s = slot_at(idx);
    gen = (atomic_load_explicit(&s->gen, memory_order_relaxed) + 1) & HANDLE_GEN_MASK;
    atomic_store_explicit(&s->gen, gen, memory_order_relaxed);
    s->next_free = -1;
    atomic_store_explicit(&s->flags, 0, memory_order_relaxed);
    *out = s;
    *handle = (mp_req_t)((gen << HANDLE_GEN_SHIFT) | (uint32_t)idx);
    return 0;
}

/* Forgets a slot's owner objects: the GC no longer reports them. */
static inline void slot_forget(slot_t *s)
{
    __atomic_store_n(&s->obj[0], NULL, __ATOMIC_RELEASE);
    __atomic_store_n(&s->obj[1], NULL, __ATOMIC_RELEASE);
}

/* Marks a slot free (its objects forgotten first, so the GC never sees a
 * free slot holding one). */
static inline void slot_clear(slot_t *s)
{
    slot_forget(s);
    atomic_store_explicit(&s->state, SLOT_FREE, memory_order_release);
}

/* Frees a slot on the owner's completion path: into this thread's cache c
 * (my_cache(), looked up once per call).  Slots freed by others - orphans, at a
 * sweep or a GC mark - go to the global list: orphan_free. */
static inline void slot_free(slot_cache_t *c, slot_t *s, int idx)
{
    slot_clear(s);
    if (MP_UNLIKELY(c->n == SLOT_CACHE || !c->registered)) {
        if (!c->registered)
            cache_register(c);
        if (c->n == SLOT_CACHE)
            cache_spill(c, SLOT_BATCH);
    }
    c->idx[c->n++] = idx;
}

static inline slot_t *slot_get(mp_req_t h, int *idx)
{
    int i = h & HANDLE_INDEX_MASK;
    slot_t *s;
    if (MP_UNLIKELY(h < 0 || i >= atomic_load_explicit(&g_nslots, memory_order_acquire)))
        return NULL;
    s = slot_at(i);
    if (MP_UNLIKELY((uint32_t)(h >> HANDLE_GEN_SHIFT) != atomic_load_explicit(&s->gen, memory_order_relaxed) ||
                    atomic_load_explicit(&s->state, memory_order_acquire) == SLOT_FREE))
        return NULL;
    *idx = i;
    return s;
}

static MP_COLD int fail_req(mp_req_t h)
{
    return mp_fail(MP_EHANDLE, "request handle %d is not valid (already completed or never posted)", h);
}

/* Records completion in the slot (the core has seen it: the buffer is no
 * longer touched by MPI, so the GC may move it from now on). */
/* The status of a completed operation, from MPI's (a send's carries only
 * cancellation). */
static inline void status_of(int is_recv, int rc, const MPI_Status *st, mp_status_t *out)
{
    if (is_recv) {
        mp_status_from_mpi(st, out);
    } else {
        memset(out, 0, sizeof *out);
        out->cancelled = pal_status_cancelled(st);
    }
    out->error = rc;
}

static void slot_complete(slot_t *s, int rc, const MPI_Status *st)
{
    status_of(s->is_recv, rc, st, &s->status);
    s->done_rc = rc;
    atomic_store_explicit(&s->state, SLOT_DONE, memory_order_release);
}

/* ---- posting ----
 * post_send/post_recv validate everything, then post; they return 0 when
 * posted (*r set), 1 when the peer is ProcNull (nothing posted: the
 * operation is complete), or a negative MP_E*. */

static inline int check_count(const void *buf, int64_t bytes)
{
    if (MP_UNLIKELY(bytes < 0))
        return mp_fail(MP_ECOUNT, "byte count %lld is negative", (long long)bytes);
    if (MP_UNLIKELY(!buf && bytes > 0))
        return mp_fail(MP_EINVAL, "buffer is NULL but byte count is %lld", (long long)bytes);
    return 0;
}

/* A point-to-point operation whose arguments were accepted. */
static inline void count_p2p(mp_counts_t *k, int64_t bytes)
{
    mp_count(&k->p2p_ops, 1);
    mp_count(&k->p2p_bytes, (uint64_t)bytes);
}

/* Posts a send or receive after checking its arguments: < 0 an error, 0
 * posted, 1 ProcNull (nothing posted).  Callers count what was accepted
 * (count_p2p).  Inlined into the posting calls: the send/recv path is measured
 * against C calling MPI directly. */
static MP_INLINE int post_send(const void *buf, int64_t bytes, int dest, int tag, mp_comm_t comm,
                               int mode, MPI_Request *r)
{
    const comm_entry_t *ce = mp_comm_get(comm);
    int d = 0, rc;
    if (MP_UNLIKELY(!ce || !mp_ready()))
        return mp_fail_comm(comm);
    if ((rc = mp_check_dest(ce, dest, &d)) || (rc = mp_check_send_tag(tag)) ||
        (rc = check_count(buf, bytes)))
        return rc;
    if (MP_UNLIKELY(mode != MP_SEND_STANDARD && mode != MP_SEND_SYNC))
        return mp_fail(MP_EINVAL, "send mode %d is not MP_SEND_STANDARD or MP_SEND_SYNC", mode);
    if (MP_UNLIKELY(d == MPI_PROC_NULL))
        return 1;
    if (MP_LIKELY(bytes <= INT_MAX)) {
        rc = (mode == MP_SEND_SYNC ? pal_mpi.Issend : pal_mpi.Isend)(
            buf, (int)bytes, MPI_BYTE, d, tag, ce->mpi, r);
        return MP_MPI_CHECK(rc, mode == MP_SEND_SYNC ? "MPI_Issend" : "MPI_Isend");
    }
    if (!pal_mpi.Isend_c || !pal_mpi.Issend_c)
        return mp_fail(MP_ECOUNT, "message of %lld bytes needs MPI-4 large-count functions, "
                       "which this MPI library lacks", (long long)bytes);
    rc = (mode == MP_SEND_SYNC ? pal_mpi.Issend_c : pal_mpi.Isend_c)(
        buf, (MPI_Count)bytes, MPI_BYTE, d, tag, ce->mpi, r);
    return MP_MPI_CHECK(rc, mode == MP_SEND_SYNC ? "MPI_Issend_c" : "MPI_Isend_c");
}

static MP_INLINE int post_recv(void *buf, int64_t bytes, int source, int tag, mp_comm_t comm,
                               MPI_Request *r)
{
    const comm_entry_t *ce = mp_comm_get(comm);
    int s = 0, t = 0, rc;
    if (MP_UNLIKELY(!ce || !mp_ready()))
        return mp_fail_comm(comm);
    if ((rc = mp_check_source(ce, source, &s)) || (rc = mp_check_recv_tag(tag, &t)) ||
        (rc = check_count(buf, bytes)))
        return rc;
    if (MP_UNLIKELY(s == MPI_PROC_NULL))
        return 1;
    if (MP_LIKELY(bytes <= INT_MAX))
        return MP_MPI_CHECK(pal_mpi.Irecv(buf, (int)bytes, MPI_BYTE, s, t, ce->mpi, r), "MPI_Irecv");
    if (!pal_mpi.Irecv_c)
        return mp_fail(MP_ECOUNT, "message of %lld bytes needs MPI-4 large-count functions, "
                       "which this MPI library lacks", (long long)bytes);
    return MP_MPI_CHECK(pal_mpi.Irecv_c(buf, (MPI_Count)bytes, MPI_BYTE, s, t, ce->mpi, r),
                        "MPI_Irecv_c");
}

/* The status of a receive from ProcNull (MPI-4.0 3.11): source ProcNull,
 * tag AnyTag, count 0.  Such operations never reach the MPI library. */
void mp_status_proc_null(mp_status_t *st)
{
    st->source = MP_PROC_NULL;
    st->tag = MP_ANY_TAG;
    st->error = MP_OK;
    st->cancelled = 0;
    st->bytes = 0;
}

/* ---- blocking operations in two steps ---- */

int mp_send_start(const void *buf, int64_t bytes, int dest, int tag, mp_comm_t comm, int mode,
                  mp_token_t *token)
{
    MPI_Request r;
    int rc;
    mp_counts_t *k = mp_my_counts();
    mp_count(&k->blocking_ops, 1);
    rc = post_send(buf, bytes, dest, tag, comm, mode, &r);
    if (rc >= 0)
        count_p2p(k, bytes);
    if (rc)
        return rc; /* an error, or 1 for ProcNull */
    *token = (mp_token_t)r;
    return mp_token_test(*token, NULL);
}

int mp_recv_start(void *buf, int64_t bytes, int source, int tag, mp_comm_t comm,
                  mp_status_t *status, mp_token_t *token)
{
    MPI_Request r;
    int rc;
    mp_counts_t *k = mp_my_counts();
    mp_count(&k->blocking_ops, 1);
    rc = post_recv(buf, bytes, source, tag, comm, &r);
    if (rc >= 0)
        count_p2p(k, bytes);
    if (MP_UNLIKELY(rc)) {
        if (rc == 1 && status)
            mp_status_proc_null(status);
        return rc;
    }
    *token = (mp_token_t)r;
    return mp_token_test(*token, status);
}

int mp_token_test(mp_token_t token, mp_status_t *status)
{
    MPI_Request r = (MPI_Request)token;
    MPI_Status st;
    int flag = 0, rc = pal_mpi.Test(&r, &flag, &st);
    if (MP_LIKELY(rc == MPI_SUCCESS) && !flag)
        return 0;
    if (status)
        mp_status_from_mpi(&st, status);
    return rc == MPI_SUCCESS ? 1 : mp_mpi_fail(rc, "MPI_Test");
}

int mp_token_wait(mp_token_t token, mp_status_t *status)
{
    MPI_Request r = (MPI_Request)token;
    MPI_Status st;
    int rc;
    mp_blocking_enter();
    rc = pal_mpi.Wait(&r, &st);
    mp_sweep_orphans();
    mp_blocking_leave();
    if (status)
        mp_status_from_mpi(&st, status);
    return MP_MPI_CHECK(rc, "MPI_Wait");
}

/* ---- nonblocking ---- */

/* Gives a posted operation (posted == 0) or a ProcNull one (posted == 1,
 * already complete) a slot, recording up to two owner objects. */
static inline int track(slot_cache_t *c, int posted, MPI_Request r, void *obj0, void *obj1,
                        int is_recv, mp_req_t *req)
{
    slot_t *s = NULL;
    int rc = slot_alloc(c, &s, req);
    if (MP_UNLIKELY(rc)) {
        /* Nothing can hold the operation now: let it complete on its own. */
        if (posted == 0)
            pal_mpi.Request_free(&r);
        return rc;
    }
    s->is_recv = is_recv;
    if (posted == 1) {
        s->obj[0] = s->obj[1] = NULL;
        mp_status_proc_null(&s->status);
        s->done_rc = 0;
        atomic_store_explicit(&s->state, SLOT_DONE, memory_order_release);
        return 0;
    }
    s->mpi = r;
    s->obj[0] = obj0;
    s->obj[1] = obj1;
    /* A registered buffer needs no pin object: that is a pin avoided. */
    if (obj0 || obj1) /* the caller listed c's counters when it counted the operation */
        mp_count(&c->counts.registered, (uint64_t)(obj0 != NULL) + (obj1 != NULL));
    atomic_store_explicit(&s->state, SLOT_ACTIVE, memory_order_release);
    return 0;
}

int mp_track(int posted, MPI_Request r, void *obj0, void *obj1, int is_recv, mp_req_t *req)
{
    return track(my_cache(), posted, r, obj0, obj1, is_recv, req);
}

int mp_isend(const void *buf, int64_t bytes, int dest, int tag, mp_comm_t comm, int mode,
             void *obj, mp_req_t *req)
{
    MPI_Request r = MPI_REQUEST_NULL;
    slot_cache_t *c = my_cache();
    int rc = post_send(buf, bytes, dest, tag, comm, mode, &r);
    if (rc < 0)
        return rc;
    count_p2p(counts_of(c), bytes);
    return track(c, rc, r, bytes > 0 ? obj : NULL, NULL, 0, req);
}

int mp_irecv(void *buf, int64_t bytes, int source, int tag, mp_comm_t comm, void *obj, mp_req_t *req)
{
    MPI_Request r = MPI_REQUEST_NULL;
    slot_cache_t *c = my_cache();
    int rc = post_recv(buf, bytes, source, tag, comm, &r);
    if (rc < 0)
        return rc;
    count_p2p(counts_of(c), bytes);
    return track(c, rc, r, bytes > 0 ? obj : NULL, NULL, 1, req);
}

/* Finishes a request the owner is completing: copies out the status and
 * frees the slot into c (this thread's cache).  Returns the operation's result. */
static inline int finish_to(slot_cache_t *c, slot_t *s, int idx, mp_status_t *status)
{
    int rc = s->done_rc;
    if (status)
        *status = s->status;
    slot_free(c, s, idx);
    return rc;
}

static int finish(slot_t *s, int idx, mp_status_t *status)
{
    return finish_to(my_cache(), s, idx, status);
}

/* Frees a completed orphan's slot unless another thread already did (the
 * orphaning thread and a sweep may both see it DONE).  Returns 1 if this call
 * freed it. */
static int orphan_free(slot_t *s, int idx)
{
    uint32_t done = SLOT_DONE;
    slot_forget(s);
    if (!atomic_compare_exchange_strong(&s->state, &done, SLOT_FREE))
        return 0;
    mp_spin_lock(&g_slot_lock);
    global_push(idx);
    mp_spin_unlock(&g_slot_lock);
    return 1;
}

/* Tests an ACTIVE slot once; records completion. Returns 1 if done. */
static int slot_poll(slot_t *s)
{
    MPI_Status st;
    int flag = 0, rc = pal_mpi.Test(&s->mpi, &flag, &st);
    if (rc != MPI_SUCCESS)
        rc = mp_mpi_fail(rc, "MPI_Test");
    else if (!flag)
        return 0;
    slot_complete(s, rc, &st);
    return 1;
}

int mp_req_test(mp_req_t req, mp_status_t *status)
{
    int idx = 0;
    slot_t *s = slot_get(req, &idx);
    if (MP_UNLIKELY(!s))
        return fail_req(req);
    if (atomic_load_explicit(&s->state, memory_order_acquire) == SLOT_ACTIVE && !slot_poll(s))
        return 0;
    {
        int rc = finish(s, idx, status);
        return rc ? rc : 1;
    }
}

/* Blocking completions read a slot's state only inside the blocking bracket:
 * before it, the GC may still test the slot at a mark (this thread is in
 * preemptive mode) and complete it; inside, the GC does not call MPI. */
int mp_req_wait(mp_req_t req, mp_status_t *status)
{
    int idx = 0, rc;
    slot_t *s = slot_get(req, &idx);
    if (MP_UNLIKELY(!s))
        return fail_req(req);
    mp_blocking_enter();
    if (atomic_load_explicit(&s->state, memory_order_acquire) == SLOT_ACTIVE) {
        MPI_Status st;
        rc = pal_mpi.Wait(&s->mpi, &st);
        slot_complete(s, MP_MPI_CHECK(rc, "MPI_Wait"), &st);
    }
    mp_sweep_orphans();
    mp_blocking_leave();
    return finish(s, idx, status);
}

int mp_req_cancel(mp_req_t req)
{
    int idx = 0;
    slot_t *s = slot_get(req, &idx);
    if (MP_UNLIKELY(!s))
        return fail_req(req);
    if (atomic_load_explicit(&s->state, memory_order_acquire) != SLOT_ACTIVE)
        return 0; /* already complete: nothing to cancel */
    return MP_MPI_CHECK(pal_mpi.Cancel(&s->mpi), "MPI_Cancel");
}

int mp_req_orphan(mp_req_t req)
{
    int idx = 0;
    uint32_t flags;
    slot_t *s = slot_get(req, &idx);
    if (!s)
        return fail_req(req);
    flags = atomic_load_explicit(&s->flags, memory_order_relaxed);
    if (flags & SLOT_ORPHANED)
        return fail_req(req);
    atomic_store_explicit(&s->flags, flags | SLOT_ORPHANED, memory_order_seq_cst);
    /* A completed slot can go at once; an active one is left to the sweep
     * (done by the core on the next wait, or by the GC extension at mark),
     * which counts it down once it frees it. */
    if (atomic_load_explicit(&s->state, memory_order_seq_cst) != SLOT_DONE || !orphan_free(s, idx))
        atomic_fetch_add(&mp_g_orphans, 1);
    return 0;
}

int mp_req_live(mp_req_t req)
{
    int idx;
    return slot_get(req, &idx) != NULL;
}

int mp_req_sweep(void)
{
    int n = atomic_load_explicit(&g_nslots, memory_order_acquire), left = 0;
    if (!atomic_load(&mp_g_orphans) || !mp_ready())
        return atomic_load(&mp_g_orphans);
    for (int i = 0; i < n; i++) {
        slot_t *s = slot_at(i);
        if (!(atomic_load(&s->flags) & SLOT_ORPHANED) || atomic_load(&s->state) != SLOT_ACTIVE)
            continue;
        if (!slot_poll(s))
            left++;
        else if (orphan_free(s, i))
            atomic_fetch_sub(&mp_g_orphans, 1);
    }
    return left;
}

/* ---- completing many ----
 * One MPI_Testall / MPI_Waitall over the active slots (one progress poll for
 * the whole set, as a C program makes), then every request is finished in
 * one more pass, its status written straight to the caller's array. */

enum { BATCH_STACK = 128 };
typedef struct batch {
    int n, k;             /* requests, active ones among them */
    slot_t **slot;        /* per request (NULL for MP_REQ_NULL) */
    int *idx;             /* per request */
    MPI_Request *mr;      /* per active one */
    MPI_Status *ms;       /* per active one */
    int *which;           /* per active one: its request index */
    slot_t *slot_stack[BATCH_STACK];
    int idx_stack[BATCH_STACK], which_stack[BATCH_STACK];
    MPI_Request mr_stack[BATCH_STACK];
    MPI_Status ms_stack[BATCH_STACK];
} batch_t;

static void batch_release(batch_t *b)
{
    if (b->slot != b->slot_stack) {
        free(b->slot);
        free(b->idx);
        free(b->mr);
        free(b->ms);
        free(b->which);
    }
}

/* Takes the set's marks off again (it was refused, or is not complete yet). */
static void batch_unmark(const batch_t *b)
{
    for (int i = 0; i < b->n; i++)
        if (b->slot[i])
            atomic_store_explicit(&b->slot[i]->flags,
                                  atomic_load_explicit(&b->slot[i]->flags, memory_order_relaxed) & ~(uint32_t)SLOT_IN_BATCH,
                                  memory_order_relaxed);
}

/* A request given twice: MPI would wait on one MPI request twice and the
 * core would free its slot twice, so the whole set is refused first. */
static MP_COLD int fail_repeated(const mp_req_t *reqs, int i)
{
    int first = 0;
    while (reqs[first] != reqs[i])
        first++;
    return mp_fail(MP_EINVAL, "request %d is in the set twice (entries %d and %d)", (int)reqs[i], first, i);
}

/* Checks every handle (nothing is touched when one is bad or repeated) and
 * collects the MPI requests of the slots still ACTIVE.  Blocking callers are
 * inside the blocking bracket already, so the GC cannot complete a slot
 * meanwhile.  Each slot of the set is marked SLOT_IN_BATCH until it is freed
 * (batch_finish) or the set given back (batch_unmark). */
static int batch_begin(batch_t *b, int n, const mp_req_t *reqs)
{
    b->n = n;
    b->k = 0;
    b->slot = b->slot_stack;
    b->idx = b->idx_stack;
    b->mr = b->mr_stack;
    b->ms = b->ms_stack;
    b->which = b->which_stack;
    if (n < 0 || (n > 0 && !reqs))
        return mp_fail(MP_EINVAL, "request array is NULL or its length %d is negative", n);
    if (n > BATCH_STACK) {
        b->slot = malloc((size_t)n * sizeof *b->slot);
        b->idx = malloc((size_t)n * sizeof *b->idx);
        b->mr = malloc((size_t)n * sizeof *b->mr);
        b->ms = malloc((size_t)n * sizeof *b->ms);
        b->which = malloc((size_t)n * sizeof *b->which);
        if (!b->slot || !b->idx || !b->mr || !b->ms || !b->which) {
            batch_release(b);
            return mp_fail(MP_ENOMEM, "out of memory completing %d requests", n);
        }
    }
    for (int i = 0; i < n; i++) {
        slot_t *s = NULL;
        if (reqs[i] != MP_REQ_NULL) {
            uint32_t flags = 0;
            int rc = 0;
            if (MP_UNLIKELY(!(s = slot_get(reqs[i], &b->idx[i]))))
                rc = fail_req(reqs[i]);
            else if (MP_UNLIKELY((flags = atomic_load_explicit(&s->flags, memory_order_relaxed)) & SLOT_IN_BATCH))
                rc = fail_repeated(reqs, i);
            if (MP_UNLIKELY(rc)) {
                b->n = i; /* the entries marked so far */
                batch_unmark(b);
                batch_release(b);
                return rc;
            }
            atomic_store_explicit(&s->flags, flags | SLOT_IN_BATCH, memory_order_relaxed);
            if (atomic_load_explicit(&s->state, memory_order_acquire) == SLOT_ACTIVE) {
                b->mr[b->k] = s->mpi;
                b->which[b->k++] = i;
            }
        }
        b->slot[i] = s;
    }
    return 0;
}

/* Finishes every request after Testall/Waitall (mrc: its result) completed
 * the collected ones; returns the first error. */
static int batch_finish(batch_t *b, int mrc, const char *call, mp_status_t *statuses)
{
    slot_cache_t *c = my_cache();
    int rc = 0;
    for (int i = 0, j = 0; i < b->n; i++) {
        slot_t *s = b->slot[i];
        mp_status_t scratch, *out = statuses ? &statuses[i] : &scratch;
        int r;
        if (!s) {
            memset(out, 0, sizeof *out);
            continue;
        }
        if (j < b->k && b->which[j] == i) {
            r = 0;
            if (MP_UNLIKELY(mrc != MPI_SUCCESS)) {
                if (mrc != MPI_ERR_IN_STATUS)
                    r = mp_mpi_fail(mrc, call);
                else if (b->ms[j].MPI_ERROR != MPI_SUCCESS)
                    r = mp_mpi_fail(b->ms[j].MPI_ERROR, call);
            }
            s->mpi = b->mr[j];
            status_of(s->is_recv, r, &b->ms[j], out);
            slot_free(c, s, b->idx[i]);
            j++;
        } else {
            r = finish_to(c, s, b->idx[i], out); /* completed earlier */
        }
        if (r && !rc)
            rc = r;
    }
    batch_release(b);
    return rc;
}

int mp_req_testall(int n, const mp_req_t *reqs, mp_status_t *statuses)
{
    batch_t b;
    int rc = batch_begin(&b, n, reqs), mrc = MPI_SUCCESS;
    if (rc)
        return rc;
    if (b.k) {
        int flag = 0;
        mrc = pal_mpi.Testall(b.k, b.mr, &flag, b.ms);
        if (mrc == MPI_SUCCESS && !flag) {
            batch_unmark(&b);
            batch_release(&b);
            return 0; /* no request was touched */
        }
    }
    rc = batch_finish(&b, mrc, "MPI_Testall", statuses);
    return rc ? rc : 1;
}

int mp_req_waitall(int n, const mp_req_t *reqs, mp_status_t *statuses)
{
    batch_t b;
    int rc, mrc = MPI_SUCCESS;
    mp_blocking_enter();
    if ((rc = batch_begin(&b, n, reqs))) {
        mp_blocking_leave();
        return rc;
    }
    if (b.k)
        mrc = pal_mpi.Waitall(b.k, b.mr, b.ms);
    rc = batch_finish(&b, mrc, "MPI_Waitall", statuses);
    mp_sweep_orphans();
    mp_blocking_leave();
    return rc;
}

int mp_req_waitany(int n, const mp_req_t *reqs, mp_status_t *status)
{
    int idx = 0, live = 0;
    if (n < 0 || (n > 0 && !reqs))
        return mp_fail(MP_EINVAL, "request array is NULL or its length %d is negative", n);
    for (int i = 0; i < n; i++) {
        if (reqs[i] == MP_REQ_NULL)
            continue;
        if (!slot_get(reqs[i], &idx))
            return fail_req(reqs[i]);
        live++;
    }
    if (!live) {
        if (status)
            memset(status, 0, sizeof *status);
        return MP_UNDEFINED;
    }
    /* Poll all in rounds, inside the bracket: this thread is in a blocking
     * call and calls MPI throughout. */
    mp_blocking_enter();
    for (;;) {
        for (int i = 0; i < n; i++) {
            slot_t *s;
            if (reqs[i] == MP_REQ_NULL)
                continue;
            s = slot_get(reqs[i], &idx);
            if (atomic_load(&s->state) == SLOT_DONE || slot_poll(s)) {
                mp_sweep_orphans();
                mp_blocking_leave();
                finish(s, idx, status); /* its result is in status->error */
                return i;
            }
        }
        pal_cpu_relax();
    }
}

/* Scans the table: a query, off the per-operation path. */
int mp_req_active(void)
{
    int n = atomic_load_explicit(&g_nslots, memory_order_acquire), active = 0;
    for (int i = 0; i < n; i++)
        active += atomic_load_explicit(&slot_at(i)->state, memory_order_acquire) != SLOT_FREE;
    return active;
}

/* ---- the GC extension's view ---- */

static int snapshot_push(void **slot)
{
    if (g_snapshot_len == g_snapshot_cap) {
        int cap = g_snapshot_cap ? g_snapshot_cap * 2 : 256;
        void ***p = realloc(g_snapshot, (size_t)cap * sizeof *p);
        if (!p)
            return -1;
        g_snapshot = p;
        g_snapshot_cap = cap;
    }
    g_snapshot[g_snapshot_len++] = slot;
    return 0;
}

/* Lets the GC thread call MPI (MPI_Test) at mark time.  Managed threads are
 * suspended, so no fast call is running; a thread in preemptive mode may be
 * inside a blocking MPI call, and then the GC skips the tests (it never
 * waits).  Threads entering a blocking call meanwhile spin in
 * mp_blocking_enter until mp_gc_mpi_end. */
static int gc_mpi_begin(void)
{
    atomic_store(&g_gc_probe, 1);
    if (atomic_load(&g_in_blocking) == 0 && mp_ready())
        return 1;
    atomic_store(&g_gc_probe, 0);
    return 0;
}

static void gc_mpi_end(void)
{
    atomic_store(&g_gc_probe, 0);
}

/* Mark: decides which slots are in flight, reports them and remembers them
 * for the relocate pass of the same GC. */
static int gc_mark(int pass, mp_gc_report_fn report, void *ctx)
{
    int n = atomic_load_explicit(&g_nslots, memory_order_acquire);
    int can_test = !(pass & MP_GC_CONCURRENT) && gc_mpi_begin();
    g_snapshot_len = 0;
    g_gc_stats.scans++;
    for (int i = 0; i < n; i++) {
        slot_t *s = slot_at(i);
        uint32_t state;
        if (!__atomic_load_n(&s->obj[0], __ATOMIC_ACQUIRE) && !__atomic_load_n(&s->obj[1], __ATOMIC_ACQUIRE))
            continue;
        state = atomic_load_explicit(&s->state, memory_order_acquire);
        /* can_test: no thread is inside a blocking call, so none is waiting
         * on this slot (waits read the state only inside the bracket). */
        if (state == SLOT_ACTIVE && can_test && slot_poll(s))
            state = SLOT_DONE;
        if (state != SLOT_ACTIVE) {
            /* Complete: MPI no longer touches the buffers.  Forget them (their
             * addresses go stale once this GC moves them); an orphan's slot
             * is freed outright. */
            g_gc_stats.released_at_mark += (s->obj[0] != NULL) + (s->obj[1] != NULL);
            slot_forget(s);
            /* Only when no thread is in a blocking call: such a thread may
             * be sweeping orphans itself. */
            if (can_test && state == SLOT_DONE && (atomic_load(&s->flags) & SLOT_ORPHANED) &&
                orphan_free(s, i))
                atomic_fetch_sub(&mp_g_orphans, 1);
            continue;
        }
        for (int k = 0; k < 2; k++) {
            if (!s->obj[k])
                continue;
            /* If the snapshot cannot grow, relocate misses this slot; the
             * object is pinned and does not move, so reporting it now is
             * what matters: when in doubt, pin. */
            (void)snapshot_push(&s->obj[k]);
            report(&s->obj[k], ctx);
        }
    }
    if (can_test)
        gc_mpi_end();
    g_gc_stats.pinned_last_mark = (uint64_t)g_snapshot_len;
    g_gc_stats.pinned_total += (uint64_t)g_snapshot_len;
    return g_snapshot_len;
}

int mp_gc_scan(int pass, mp_gc_report_fn report, void *ctx)
{
    if ((pass & 0xFF) == MP_GC_RELOCATE) {
        for (int i = 0; i < g_snapshot_len; i++)
            report(g_snapshot[i], ctx);
        return g_snapshot_len;
    }
    return gc_mark(pass, report, ctx);
}

void mp_gc_attach(void)
{
    atomic_store(&g_gc_attached, 1);
}

/* Every thread's counts: those that exited and the live ones. */
static void counts_sum(mp_counts_t *out)
{
    memset(out, 0, sizeof *out);
    mp_spin_lock(&g_slot_lock);
    counts_add(out, &g_retired);
    for (const slot_cache_t *c = g_listed; c; c = c->next)
        counts_add(out, &c->counts);
    mp_spin_unlock(&g_slot_lock);
}

void mp_gc_stats(mp_gc_stats_t *out)
{
    mp_counts_t k;
    counts_sum(&k);
    *out = g_gc_stats;
    out->registered = out->pins_avoided = atomic_load_explicit(&k.registered, memory_order_relaxed);
}

void mp_stats(mp_stats_t *out)
{
    mp_counts_t k;
    counts_sum(&k);
    memset(out, 0, sizeof *out);
    out->p2p_ops = atomic_load_explicit(&k.p2p_ops, memory_order_relaxed);
    out->p2p_bytes = atomic_load_explicit(&k.p2p_bytes, memory_order_relaxed);
    out->coll_ops = atomic_load_explicit(&k.coll_ops, memory_order_relaxed);
    out->blocking_ops = atomic_load_explicit(&k.blocking_ops, memory_order_relaxed);
    out->registered = atomic_load_explicit(&k.registered, memory_order_relaxed);
    out->mpi_errors = atomic_load_explicit(&k.mpi_errors, memory_order_relaxed);
    out->gc_scans = g_gc_stats.scans;
    out->pinned_last_mark = g_gc_stats.pinned_last_mark;
    out->pinned_total = g_gc_stats.pinned_total;
    out->released_at_mark = g_gc_stats.released_at_mark;
    out->active_requests = (uint64_t)mp_req_active();
    out->gc_extension = (uint64_t)atomic_load(&g_gc_attached);
}
