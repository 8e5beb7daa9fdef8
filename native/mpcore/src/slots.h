/* slots.h - the request slot table (slots.c): a request's slot, each thread's slot cache
 * and counters, and the inline helpers the posting path needs so that a send or receive
 * is posted without a call into another unit.  Above core.h; completion (requests.h) and
 * persistent requests (persistent.h) sit on it. */
#ifndef MPCORE_SLOTS_H
#define MPCORE_SLOTS_H

#include "core.h"

#include <string.h>
#include <threads.h>

/* Hidden like core.h's declarations: the slot table and the caches are reached
 * without a load from the GOT on every operation. */
#pragma GCC visibility push(hidden)

#define SLOT_MAX (1 << 20) /* 1M slots: index fits the 20 low handle bits */
/* Slots the table hands out.  MPICH 4.0's request pool holds 2^18 requests and past that
 * aborts the process ("Assertion failed ... req != NULL" from MPI_Irecv; plain C), so the MPICH
 * core stops 2^14 short of it (room for MPICH's own requests, request lists and tokens) and
 * refuses with MP_ENOMEM instead; Open MPI took 1.1 M receives.  MPICH's pool is REQUEST_NUM_BLOCKS
 * (256) x REQUEST_NUM_INDICES (1024) in its src/include/mpir_request.h, unchanged up to 4.3. */
#define MP_MPICH_REQUEST_POOL (1 << 18)
#define MP_SLOT_LIMIT (PAL_MPI_BUILD_ABI == PAL_ABI_MPICH ? MP_MPICH_REQUEST_POOL - (1 << 14) : SLOT_MAX)
/* Whether the core keeps the MPI requests it holds within MP_SLOT_LIMIT (the request pool
 * budget): the slots outside the global free list (in use, or cached by a thread) and the
 * entries request lists have reserved (lists.c) together.  Only the MPICH core: Open MPI's
 * requests are bounded by memory alone. */
#define MP_REQUEST_BUDGET (PAL_MPI_BUILD_ABI == PAL_ABI_MPICH)
#define HANDLE_INDEX_MASK 0xFFFFF
#define HANDLE_GEN_SHIFT 20
#define HANDLE_GEN_MASK 0x7FF

/* INACTIVE: a persistent request between instances (persistent.c).  HELD: a
 * window's hold on the arrays of its operations (rma.c): no MPI request and
 * no handle given out; the GC reports its objects, while set, without
 * testing anything (the window's synchronization calls clear them).  TOKEN: the
 * pending part of a blocking operation in two steps (p2p.c): its MPI request,
 * no objects, named by a token instead of a request handle; SLOT_IN_BATCH in
 * its flags while one test or wait has it. */
enum slot_state { SLOT_FREE = 0, SLOT_ACTIVE = 1, SLOT_DONE = 2, SLOT_INACTIVE = 3, SLOT_HELD = 4, SLOT_TOKEN = 5 };
/* Written only by the request's owner (a Request is completed from one thread,
 * and its finalizer runs only once nothing else can reach it): no RMW needed. */
enum slot_flags {
    SLOT_ORPHANED = 1,
    SLOT_IN_BATCH = 2, /* in the set a testall/waitall is completing: a repeat is refused */
    SLOT_TEST_ALONE = 4, /* tested alone, never in a set: MPICH 4.0's MPI_Testall misreports persistent
                          * collectives that MPI runs (not restarted ones) and partitioned requests */
    SLOT_FAILED = 8, /* a test failed and left the request with MPI (done_rc: MPI's code): the
                      * owner's completion calls end it once MPI lets go of it (requests.c,
                      * slot_settle).  Written by another thread too: a GC mark's test, while
                      * the owner is suspended */
    SLOT_CANCEL_ASKED = 16, /* with SLOT_FAILED: MPI_Cancel was called on it (once) */
    SLOT_CANCEL_CALLED = 32 /* a send the owner asked MPI to cancel (mp_req_cancel): only MPI's status
                             * says whether it was, so it is completed with one (not in a usual set) */
};

struct persist;

typedef struct slot {
    void *obj[2];         /* owner objects (GC roots while in flight) or NULL */
    MPI_Request mpi;
    _Atomic uint32_t state;
    _Atomic uint32_t flags;
    _Atomic uint32_t gen;
    int32_t next_free;
    int32_t is_recv;
    int32_t done_rc;      /* result recorded when the core saw completion: 0, a negative MP_E*, or MPI's own code (positive) while SLOT_FAILED or left by a GC mark for the owner to record */
    mp_status_t status;   /* status recorded when the core saw completion */
    struct persist *persist; /* persistent requests only (persistent.h); NULL whenever the slot is free */
} slot_t;

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

/* ---- the table and the caches (slots.c) ---- */
/* The table: MP_SLOT_LIMIT slots in one zeroed block that never moves, allocated at the first
 * refill (its pages untouched, so not resident, until slots are handed out), so that a slot's
 * address is one multiplication away from its index.  Read only below mp_g_nslots, whose
 * release store follows its allocation. */
extern slot_t *mp_g_slots;
extern _Atomic int mp_g_nslots;      /* high-water mark of slots ever handed out */
extern mp_spin_t mp_g_slot_lock;     /* the global free list and the counters' list */
/* The request pool budget (MP_REQUEST_BUDGET), under mp_g_slot_lock: what the slot table
 * holds outside its global free list, and what request lists have reserved. */
int mp_budget_slots_held(void);
extern int mp_g_list_reserved;
MP_COLD int mp_fail_budget(int asked);
extern _Thread_local slot_cache_t mp_t_cache;

/* The cold ends of the inline helpers below. */
MP_COLD int mp_cache_refill(slot_cache_t *c);
MP_COLD void mp_cache_register(slot_cache_t *c);
MP_COLD void mp_cache_list(slot_cache_t *c);
void mp_cache_spill(slot_cache_t *c, int n);
/* Frees a slot into the global free list (slots freed by a thread that does
 * not own them: orphans, at a sweep or a GC mark). */
void mp_slot_push_global(int idx);
/* Every thread's counts: those that exited and the live ones. */
void mp_counts_sum(mp_counts_t *out);

/* This thread's cache, looked up once: compilers otherwise recompute a TLS
 * address at each use (a call into the dynamic linker for a dlopen'ed core). */
static inline slot_cache_t *my_cache(void)
{
    slot_cache_t *c = &mp_t_cache;
#if defined(__GNUC__)
    __asm__("" : "+r"(c));
#endif
    return c;
}

/* ---- slots ---- */

static inline slot_t *slot_at(int idx)
{
    return &mp_g_slots[idx];
}

static inline mp_counts_t *counts_of(slot_cache_t *c)
{
    if (MP_UNLIKELY(c->listed != LISTED))
        mp_cache_list(c);
    return &c->counts;
}

/* Claims the last slot of c's cache (c->n > 0): a new generation, no flags; its handle in
 * *handle. */
static inline slot_t *slot_take(slot_cache_t *c, mp_req_t *handle)
{
    int n = c->n - 1, idx = c->idx[n];
    slot_t *s = slot_at(idx);
    uint32_t gen = (atomic_load_explicit(&s->gen, memory_order_relaxed) + 1) & HANDLE_GEN_MASK;
    c->n = n;
    atomic_store_explicit(&s->gen, gen, memory_order_relaxed);
    atomic_store_explicit(&s->flags, 0, memory_order_relaxed);
    *handle = (mp_req_t)((gen << HANDLE_GEN_SHIFT) | (uint32_t)idx);
    return s;
}

static inline int slot_alloc(slot_cache_t *c, slot_t **out, mp_req_t *handle)
{
    int rc;
    if (MP_UNLIKELY(c->n == 0) && (rc = mp_cache_refill(c)))
        return rc;
    *out = slot_take(c, handle);
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
    /* Listed (so registered) before it holds a slot, as at a refill: the
     * posting path counts into a cache that gave it a slot without looking. */
    if (MP_UNLIKELY(c->n == SLOT_CACHE || c->listed != LISTED)) {
        if (c->listed == UNLISTED)
            mp_cache_list(c);
        if (!c->registered) /* also while the thread exits: its slots go back then */
            mp_cache_register(c);
        if (c->n == SLOT_CACHE)
            mp_cache_spill(c, SLOT_BATCH);
    }
    c->idx[c->n++] = idx;
}

/* The slot of handle h while it is not free, orphaned or not (mp_req_live, mp_req_orphan); NULL otherwise. */
static inline slot_t *slot_lookup(mp_req_t h, int *idx)
{
    int i = h & HANDLE_INDEX_MASK;
    slot_t *s;
    if (MP_UNLIKELY(h < 0 || i >= atomic_load_explicit(&mp_g_nslots, memory_order_acquire)))
        return NULL;
    s = slot_at(i);
    if (MP_UNLIKELY((uint32_t)(h >> HANDLE_GEN_SHIFT) != atomic_load_explicit(&s->gen, memory_order_relaxed) ||
                    atomic_load_explicit(&s->state, memory_order_acquire) == SLOT_FREE))
        return NULL;
    *idx = i;
    return s;
}

/* The slot of handle h for its owner's calls (test, wait, free, start, cancel): NULL also once the
 * owner gave it up (mp_req_orphan), since from then on the sweep completes and frees it. */
static inline slot_t *slot_get(mp_req_t h, int *idx)
{
    slot_t *s = slot_lookup(h, idx);
    if (MP_UNLIKELY(s && (atomic_load_explicit(&s->flags, memory_order_relaxed) & SLOT_ORPHANED)))
        return NULL;
    return s;
}



/* The status of an inactive persistent request (MPI-4.0 3.7.3). */
static inline void status_empty(mp_status_t *st)
{
    memset(st, 0, sizeof *st);
    st->source = MP_ANY_SOURCE;
    st->tag = MP_ANY_TAG;
}

/* The status of an operation a set's call completed and then failed as a whole (not
 * MPI_ERR_IN_STATUS): MPI wrote none, so source and tag are unknown (AnySource, AnyTag, as an
 * empty status), the error the call's. */
static inline void status_set_failed(mp_status_t *out, int rc)
{
    status_empty(out);
    out->error = rc;
}


/* ---- nonblocking ---- */

/* Gives a claimed slot back unused (MPI refused the operation): it is still
 * FREE, and goes back where slot_alloc took it from. */
static inline void slot_unclaim(slot_cache_t *c, mp_req_t h)
{
    c->idx[c->n++] = h & HANDLE_INDEX_MASK;
}

/* A claimed slot whose operation completed at its post, without an MPI request: its status
 * is st, it holds no objects. */
static inline void slot_done_at_post(slot_t *s, int is_recv, const mp_status_t *st)
{
    s->is_recv = is_recv;
    s->obj[0] = s->obj[1] = NULL;
    s->status = *st;
    s->done_rc = 0;
    MP_HAPPENS_BEFORE(s);
    atomic_store_explicit(&s->state, SLOT_DONE, memory_order_release);
}

/* Makes a claimed slot an operation with MP_PROC_NULL, complete at once (DONE, its status ProcNull's). */
static inline void slot_proc_null(slot_t *s, int is_recv)
{
    mp_status_t st;
    mp_status_proc_null(&st);
    slot_done_at_post(s, is_recv, &st);
}

/* Gives an operation with MP_PROC_NULL a slot of its own, complete at once. */
static inline int track_proc_null(slot_cache_t *c, int is_recv, mp_req_t *req)
{
    slot_t *s = NULL;
    int rc = slot_alloc(c, &s, req);
    if (MP_UNLIKELY(rc))
        return rc;
    slot_proc_null(s, is_recv);
    return 0;
}

/* Makes a claimed slot the operation MPI posted as r (ACTIVE), holding up to two owner objects. */
static inline void slot_activate(slot_t *s, MPI_Request r, void *obj0, void *obj1, int is_recv)
{
    s->is_recv = is_recv;
    s->mpi = r;
    s->obj[0] = obj0;
    s->obj[1] = obj1;
    MP_HAPPENS_BEFORE(s);
    atomic_store_explicit(&s->state, SLOT_ACTIVE, memory_order_release);
}

#pragma GCC visibility pop

#endif /* MPCORE_SLOTS_H */
