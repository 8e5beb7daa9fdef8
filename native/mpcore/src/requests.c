/* requests.c - completing nonblocking operations: test, wait, cancel, the
 * orphans of dropped requests, and sets (testall, waitall, waitany). */
#include "persistent.h"
#include "requests.h"
#include "wildcard.h"

#include <stdlib.h>
#include <string.h>

int mp_fail_req(mp_req_t h)
{
    int idx;
    slot_t *s = slot_lookup(h, &idx);
    if (s && (atomic_load_explicit(&s->flags, memory_order_relaxed) & SLOT_ORPHANED))
        return mp_fail(MP_EHANDLE, "request handle %d was given up (mp_req_orphan): the core completes and "
                       "frees it, its owner may not use it again", h);
    return mp_fail(MP_EHANDLE, "request handle %d is not valid (completed and freed, or never made)", h);
}

/* The rare end of status_of: a receive that took a piece of an object payload (piece), or one
 * whose post was recorded (SLOT_RECV_WILD), which drops its record here unless it is persistent:
 * that one may start again, and its record goes when it is freed. */
static MP_COLD int status_wild(slot_t *s, int rc, int piece, mp_status_t *out)
{
    int drop = s->is_recv == SLOT_RECV_WILD && !s->persist;
    if (piece)
        return mp_wild_took(&s->mpi, out, drop);
    if (drop)
        mp_wild_forget(&s->mpi);
    return rc;
}

/* The status of a completed operation, from MPI's (a send's carries only cancellation), and
 * its result: rc, or MP_EPIECE when a receive with AnyTag took a piece of an object payload
 * (wildcard.h; its message still to be recorded). */
static MP_INLINE int status_of(slot_t *s, int rc, const MPI_Status *st, mp_status_t *out)
{
    if (s->is_recv) {
        int piece = mp_recv_status(st, rc, 0, out);
        if (MP_UNLIKELY(piece || s->is_recv == SLOT_RECV_WILD))
            return status_wild(s, rc, piece, out);
        return rc;
    }
    memset(out, 0, sizeof *out);
    out->cancelled = pal_status_cancelled(st);
    out->error = rc;
    return rc;
}

static void slot_complete(slot_t *s, int rc, const MPI_Status *st)
{
    s->done_rc = status_of(s, rc, st, &s->status) == MP_EPIECE ? MP_WILD_DEFERRED : rc;
    atomic_store_explicit(&s->state, SLOT_DONE, memory_order_release);
}

int mp_claim(mp_claim_t *k)
{
    k->cache = my_cache();
    return slot_alloc(k->cache, &k->slot, &k->handle);
}

int mp_claim_posted(mp_claim_t *k, int rc, MPI_Request r, void *obj0, void *obj1, int is_recv, mp_req_t *req)
{
    if (rc) {
        slot_unclaim(k->cache, k->handle);
        return rc;
    }
    /* A registered buffer needs no pin object: that is a pin avoided. */
    if (obj0 || obj1)
        mp_count(&k->cache->counts.registered, (uint64_t)(obj0 != NULL) + (obj1 != NULL));
    slot_activate(k->slot, r, obj0, obj1, is_recv);
    *req = k->handle;
    return 0;
}

/* The result of a completed slot for its owner.  A GC mark's test that failed left MPI's own
 * code (positive; every other result is 0 or a negative MP_E*) for the owner to record on its
 * own thread, where its mp_last_error reads MPI's class and message. */
static inline int owner_result(slot_t *s)
{
    if (MP_UNLIKELY(s->done_rc > 0))
        s->done_rc = s->done_rc == MP_WILD_DEFERRED ? mp_wild_fail(&s->status) : mp_mpi_fail(s->done_rc, "MPI_Test");
    return s->done_rc;
}

/* Finishes an instance of a persistent request for its owner: inactive, not
 * free; an inactive one completes at once with an empty status. */
static MP_COLD int persist_finish(slot_t *s, mp_status_t *status)
{
    if (atomic_load_explicit(&s->state, memory_order_acquire) == SLOT_INACTIVE) {
        if (status)
            status_empty(status);
        persist_deactivate(s); /* takes a set's mark off */
        return 0;
    }
    int rc = owner_result(s);
    if (status)
        *status = s->status;
    persist_deactivate(s);
    return rc;
}

/* Finishes a request that is not persistent for its owner: copies out the
 * status and frees the slot into c (this thread's cache).  Returns the
 * operation's result. */
static inline int finish_plain(slot_cache_t *c, slot_t *s, int idx, mp_status_t *status)
{
    int rc = owner_result(s);
    if (status)
        *status = s->status;
    slot_free(c, s, idx);
    return rc;
}

/* Finishes any request the owner is completing (a persistent one becomes inactive). */
static inline int finish_to(slot_cache_t *c, slot_t *s, int idx, mp_status_t *status)
{
    if (MP_UNLIKELY(s->persist != NULL))
        return persist_finish(s, status);
    return finish_plain(c, s, idx, status);
}

static int finish(slot_t *s, int idx, mp_status_t *status)
{
    return finish_to(my_cache(), s, idx, status);
}

/* Frees a completed orphan's slot unless another thread already did (the
 * orphaning thread and a sweep may both see it DONE).  Returns 1 if this call
 * freed it.  A persistent orphan (DONE or INACTIVE) releases its MPI request
 * too: callers may call MPI (a sweep, or a GC mark that may test). */
int mp_orphan_free(slot_t *s, int idx)
{
    uint32_t done = SLOT_DONE, inactive = SLOT_INACTIVE;
    slot_forget(s);
    if (!atomic_compare_exchange_strong(&s->state, &done, SLOT_FREE) &&
        !(s->persist && atomic_compare_exchange_strong(&s->state, &inactive, SLOT_FREE)))
        return 0;
    persist_release(s);
    mp_slot_push_global(idx);
    return 1;
}

MP_COLD void mp_mpi_abandon(MPI_Request *r)
{
    if (*r == MPI_REQUEST_NULL)
        return;
    (void)pal_mpi.Cancel(r);
    (void)pal_mpi.Wait(r, MPI_STATUS_IGNORE);
}

/* 1 when a test of the slot failed and left its request with MPI (SLOT_FAILED). */
static MP_INLINE int slot_failed(const slot_t *s)
{
    return MP_UNLIKELY((atomic_load_explicit(&s->flags, memory_order_relaxed) & SLOT_FAILED) != 0);
}

/* Ends, on its owner's thread, a slot whose test failed and left its request with MPI
 * (SLOT_FAILED): MPI is asked once to cancel the operation (SLOT_CANCEL_ASKED); then a wait
 * (wait) waits for MPI to let go of it, and a test tests once and leaves it for a later call
 * while MPI still holds it (an operation under way that MPI can no longer cancel), its
 * buffers held meanwhile.  Once ended, the slot completes with the failure first seen,
 * reported under MPI_Test.  Returns 1 when ended. */
static MP_COLD int slot_settle(slot_t *s, int wait)
{
    uint32_t flags = atomic_load_explicit(&s->flags, memory_order_relaxed);
    int mrc = s->done_rc;
    if (!(flags & SLOT_CANCEL_ASKED)) {
        (void)pal_mpi.Cancel(&s->mpi);
        flags |= SLOT_CANCEL_ASKED;
        atomic_store_explicit(&s->flags, flags, memory_order_relaxed);
    }
    if (wait) {
        (void)pal_mpi.Wait(&s->mpi, MPI_STATUS_IGNORE);
    } else {
        MPI_Status st;
        int flag = 0;
        if (mp_mpi_test(&s->mpi, &flag, &st) == MPI_SUCCESS ? !flag : s->mpi != MPI_REQUEST_NULL)
            return 0; /* still MPI's: a later test or a wait ends it */
    }
    atomic_store_explicit(&s->flags, flags & ~(uint32_t)(SLOT_FAILED | SLOT_CANCEL_ASKED), memory_order_relaxed);
    if (s->is_recv == SLOT_RECV_WILD && !s->persist)
        mp_wild_forget(&s->mpi);
    s->done_rc = mp_mpi_fail(mrc, "MPI_Test");
    status_set_failed(&s->status, s->done_rc);
    atomic_store_explicit(&s->state, SLOT_DONE, memory_order_release);
    return 1;
}

/* Tests an ACTIVE slot once; records completion. Returns 1 if done.  A send is
 * usually complete when first tested (mp_mpi_test_done_first); a receive is
 * tested with MPI_Test, whose poll of the network is what completes it.  A test
 * that fails and leaves the request with MPI records the failure (SLOT_FAILED,
 * MPI's code in done_rc) and keeps the slot ACTIVE, its buffers held: at a GC
 * mark (at_mark) nothing more, the owner ends it; on the owner's thread the
 * operation is cancelled and ended once MPI lets go of it (slot_settle), so a
 * test never waits.  Any other failure ends the operation at once. */
static MP_INLINE int slot_test(slot_t *s, int at_mark)
{
    MPI_Status st;
    int flag = 0;
    int rc = s->is_recv ? mp_mpi_test(&s->mpi, &flag, &st) : mp_mpi_test_done_first(&s->mpi, &flag, &st);
    if (MP_UNLIKELY(rc != MPI_SUCCESS)) {
        if (!s->persist && s->mpi != MPI_REQUEST_NULL) {
            s->done_rc = rc;
            atomic_store_explicit(&s->flags, atomic_load_explicit(&s->flags, memory_order_relaxed) | SLOT_FAILED,
                                  memory_order_relaxed);
            return at_mark ? 0 : slot_settle(s, 0);
        }
        if (at_mark) { /* the collecting thread's last error is no one's: the owner records it */
            /* MPI's code (or the taken piece's): owner_result records it */
            s->done_rc = status_of(s, mp_mpi_code(rc), &st, &s->status) == MP_EPIECE ? MP_WILD_DEFERRED : rc;
            atomic_store_explicit(&s->state, SLOT_DONE, memory_order_release);
            return 1;
        }
        rc = mp_mpi_fail(rc, "MPI_Test");
    } else if (!flag) {
        return 0;
    }
    slot_complete(s, rc, &st);
    return 1;
}

int mp_slot_poll(slot_t *s)
{
    if (slot_failed(s))
        return slot_settle(s, 0);
    return slot_test(s, 0);
}

int mp_slot_poll_at_mark(slot_t *s)
{
    if (slot_failed(s))
        return 0; /* the owner ends it */
    return slot_test(s, 1);
}

int mp_req_test(mp_req_t req, mp_status_t *status)
{
    int idx = 0;
    slot_t *s = slot_get(req, &idx);
    if (MP_UNLIKELY(!s))
        return mp_fail_req(req);
    if (atomic_load_explicit(&s->state, memory_order_acquire) == SLOT_ACTIVE && !mp_slot_poll(s))
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
        return mp_fail_req(req);
    mp_blocking_enter();
    if (slot_failed(s))
        (void)slot_settle(s, 1);
    if (atomic_load_explicit(&s->state, memory_order_acquire) == SLOT_ACTIVE) {
        MPI_Status st;
        rc = mp_mpi_ended(pal_mpi.Wait(&s->mpi, &st), s->persist ? NULL : &s->mpi);
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
        return mp_fail_req(req);
    if (atomic_load_explicit(&s->state, memory_order_acquire) != SLOT_ACTIVE)
        return 0; /* already complete: nothing to cancel */
    if (!s->is_recv) /* a send's status must be MPI's from now on: it leaves the usual set (batch_statuses) */
        atomic_store_explicit(&s->flags, atomic_load_explicit(&s->flags, memory_order_relaxed) | SLOT_CANCEL_CALLED,
                              memory_order_relaxed);
    return MP_MPI_CHECK(pal_mpi.Cancel(&s->mpi), "MPI_Cancel");
}

/* ---- orphans ----
 * The registry of orphans: the handles given up (mp_req_orphan) whose slots the core has not
 * freed yet, so that a sweep looks at them alone, not at the whole table (which keeps its
 * largest size: tens of thousands of slots after a burst of dropped requests in library
 * mode, where every completion call sweeps while any is left).  Any thread registers, the
 * finalizer's too (no MPI: g_orphan_lock guards the array alone); one thread at a time
 * sweeps (g_sweep_lock, taken or skipped), so no orphan is tested by two at once. */
static mp_spin_t g_orphan_lock = MP_SPIN_INIT, g_sweep_lock = MP_SPIN_INIT;
static mp_req_t *g_orphan_list;
static int g_orphan_n, g_orphan_cap;
_Atomic int mp_g_orphan_lost;         /* a registration found no memory: sweeps scan the table */
_Atomic uint64_t mp_g_sweep_visits;   /* slots the sweeps have looked at */

/* Appends n handles to the registry; 0, or -1 without memory (nothing appended). */
static int orphans_append(const mp_req_t *h, int n)
{
    int rc = 0;
    mp_spin_lock(&g_orphan_lock);
    if (g_orphan_n > g_orphan_cap - n) {
        int cap = g_orphan_cap ? g_orphan_cap : 64;
        mp_req_t *p;
        while (cap < g_orphan_n + n)
            cap *= 2;
        if ((p = realloc(g_orphan_list, (size_t)cap * sizeof *p))) {
            g_orphan_list = p;
            g_orphan_cap = cap;
        } else {
            rc = -1;
        }
    }
    if (rc == 0) {
        memcpy(g_orphan_list + g_orphan_n, h, (size_t)n * sizeof *h);
        g_orphan_n += n;
    }
    mp_spin_unlock(&g_orphan_lock);
    return rc;
}

int mp_req_orphan(mp_req_t req)
{
    int idx = 0;
    uint32_t flags;
    slot_t *s = slot_lookup(req, &idx);
    if (!s)
        return mp_fail_req(req);
    flags = atomic_load_explicit(&s->flags, memory_order_relaxed);
    if (flags & SLOT_ORPHANED)
        return mp_fail_req(req);
    atomic_store_explicit(&s->flags, flags | SLOT_ORPHANED, memory_order_seq_cst);
    /* A completed slot can go at once; an active one is left to the sweep
     * (done by the core on the next wait, or by the GC extension at mark),
     * which counts it down once it frees it.  So is every persistent one:
     * freeing its MPI request calls MPI, which this thread may not. */
    if (s->persist || atomic_load_explicit(&s->state, memory_order_seq_cst) != SLOT_DONE ||
        !mp_orphan_free(s, idx)) {
        if (orphans_append(&req, 1))
            atomic_store(&mp_g_orphan_lost, 1);
        atomic_fetch_add(&mp_g_orphans, 1);
    }
    return 0;
}

int mp_adopt_request(MPI_Request r, void *obj, int is_recv, mp_req_t *req)
{
    slot_t *s;
    int rc;
    *req = MP_REQ_NULL;
    if ((rc = slot_alloc(my_cache(), &s, req)))
        return rc;
    slot_activate(s, r, obj, NULL, is_recv); /* counted when the list posted it */
    return 0;
}

int mp_req_live(mp_req_t req)
{
    int idx;
    return slot_lookup(req, &idx) != NULL; /* an orphan too, until the core frees it */
}

/* Takes the whole registry out (for one sweep): its array (the caller frees it or gives it back), its count and capacity. */
static mp_req_t *orphans_take(int *n, int *cap)
{
    mp_req_t *list;
    mp_spin_lock(&g_orphan_lock);
    list = g_orphan_list, *n = g_orphan_n, *cap = g_orphan_cap;
    g_orphan_list = NULL, g_orphan_n = g_orphan_cap = 0;
    mp_spin_unlock(&g_orphan_lock);
    return list;
}

/* Sweeps the orphan in slot s (index idx): completes and frees it when MPI has finished it.
 * Returns 1 while it is still pending. */
static int sweep_one(slot_t *s, int idx)
{
    uint32_t state = atomic_load(&s->state);
    /* Other requests that are no longer active were freed by whoever saw
     * them complete; persistent ones wait here for MPI_Request_free. */
    if (state == SLOT_ACTIVE ? !mp_slot_poll(s) : state == SLOT_FREE || !s->persist)
        return state == SLOT_ACTIVE;
    if (mp_orphan_free(s, idx))
        atomic_fetch_sub(&mp_g_orphans, 1);
    return 0;
}

/* The registry's orphans, taken out of it for one sweep.  The sweep stops once SWEEP_BUDGET of
 * those it tested are still pending: each test polls MPI's progress, and orphans that never
 * complete (receives whose message never comes) would otherwise cost every completion call a
 * test each, while a burst of finished ones is still freed in one sweep.  Those not reached go
 * back first, then those still pending, so the next sweep goes on where this one stopped.
 * Returns how many are left in the registry. */
enum { SWEEP_BUDGET = 64 };
static int sweep_registered(void)
{
    mp_req_t kept[SWEEP_BUDGET];
    int n, cap, m = 0, left = 0;
    mp_req_t *list = orphans_take(&n, &cap);
    for (; m < n && left < SWEEP_BUDGET; m++) {
        int idx;
        slot_t *s = slot_lookup(list[m], &idx); /* NULL: freed meanwhile (at a mark) */
        if (s && (atomic_load(&s->flags) & SLOT_ORPHANED) && sweep_one(s, idx))
            kept[left++] = list[m];
    }
    atomic_fetch_add_explicit(&mp_g_sweep_visits, (uint64_t)m, memory_order_relaxed);
    if (m < n) /* those not reached first */
        memmove(list, list + m, (size_t)(n - m) * sizeof *list);
    if (left)
        memcpy(list + (n - m), kept, (size_t)left * sizeof *list);
    left += n - m;
    mp_spin_lock(&g_orphan_lock);
    if (!g_orphan_list) { /* none registered meanwhile: the array goes back as it is */
        g_orphan_list = list, g_orphan_n = left, g_orphan_cap = cap;
        list = NULL;
    }
    mp_spin_unlock(&g_orphan_lock);
    if (list) { /* behind those registered meanwhile */
        if (left && orphans_append(list, left))
            atomic_store(&mp_g_orphan_lost, 1);
        free(list);
    }
    return left;
}

int mp_req_sweep(void)
{
    int left = 0;
    if (!atomic_load(&mp_g_orphans) || !mp_ready())
        return atomic_load(&mp_g_orphans);
    if (!mp_spin_trylock(&g_sweep_lock))
        return atomic_load(&mp_g_orphans); /* another thread is sweeping */
    if (MP_UNLIKELY(atomic_load(&mp_g_orphan_lost))) { /* the registry is incomplete: the whole table */
        int n, cap;
        free(orphans_take(&n, &cap)); /* stale: the table is read instead */
        n = atomic_load_explicit(&mp_g_nslots, memory_order_acquire);
        atomic_fetch_add_explicit(&mp_g_sweep_visits, (uint64_t)n, memory_order_relaxed);
        for (int i = 0; i < n; i++) {
            slot_t *s = slot_at(i);
            if (atomic_load(&s->flags) & SLOT_ORPHANED)
                left += sweep_one(s, i);
        }
    } else {
        left = sweep_registered();
    }
    mp_spin_unlock(&g_sweep_lock);
    return left;
}

/* ---- completing many ----
 * One MPI_Testall / MPI_Waitall over the active slots (one progress poll for
 * the whole set, as a C program makes), then every request is finished in
 * one more pass, its status written straight to the caller's array. */

enum { BATCH_STACK = 128 };

typedef struct batch {
    int n, k;             /* requests, active ones among them */
    int recvs;            /* batch_begin_plain: nonzero when a request of the usual set is a receive (or a file access) */
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

/* The stack arrays, for a set of n requests (no more than BATCH_STACK). */
static inline void batch_on_stack(batch_t *b, int n)
{
    b->n = n;
    b->k = 0;
    b->recvs = 1; /* statuses asked for, unless batch_begin_plain finds a set with no receive */
    b->slot = b->slot_stack;
    b->idx = b->idx_stack;
    b->mr = b->mr_stack;
    b->ms = b->ms_stack;
    b->which = b->which_stack;
}

/* The usual set, begun in one pass: at most BATCH_STACK requests, each valid,
 * ACTIVE, with no flag set (not in a set, orphaned, failed or tested alone) and
 * given once, while no persistent request exists.  Collects each one's MPI
 * request and slot (then which[j] == j and idx[i] is the handle's index:
 * batch_as_general fills them when needed) and marks it.  Returns 0 with nothing
 * marked for any other set: batch_begin checks it and says what is wrong with it.
 * vouched (req_waitall_owned): the caller vouches that each non-negative handle names
 * a slot it still owns, so its bounds and generation are not read; its state and flags
 * are (MPI or a GC mark may have completed it, a repeat is found by its mark). */
static MP_INLINE int batch_begin_plain(batch_t *b, int n, const mp_req_t *reqs, int vouched)
{
    slot_t **slot = b->slot_stack;
    MPI_Request *mr = b->mr_stack;
    uint32_t nslots;
    int i, recvs = 0;
    if (n <= 0 || n > BATCH_STACK || !reqs ||
        atomic_load_explicit(&mp_g_persist_open, memory_order_acquire) != 0)
        return 0;
    /* Every handle of the set was made before this call: one load of the
     * table's size serves the whole set (it only grows). */
    nslots = vouched ? 0 : (uint32_t)atomic_load_explicit(&mp_g_nslots, memory_order_acquire);
    for (i = 0; i < n; i++) {
        uint32_t h = (uint32_t)reqs[i];
        slot_t *s;
        /* A negative handle (MP_REQ_NULL too) keeps its sign bit here, so it fails the same bound;
         * a vouched one is only tested for that sign. */
        if (MP_UNLIKELY(vouched ? (int32_t)h < 0 : (h & (0x80000000u | HANDLE_INDEX_MASK)) >= nslots))
            break;
        s = slot_at((int)(h & HANDLE_INDEX_MASK));
        if (MP_UNLIKELY(atomic_load_explicit(&s->state, memory_order_acquire) != SLOT_ACTIVE ||
                        (!vouched && h >> HANDLE_GEN_SHIFT != atomic_load_explicit(&s->gen, memory_order_relaxed)) ||
                        atomic_load_explicit(&s->flags, memory_order_relaxed) != 0)) /* the general path says which, or settles */
            break;
        MP_HAPPENS_AFTER(s);
        atomic_store_explicit(&s->flags, SLOT_IN_BATCH, memory_order_relaxed);
        mr[i] = s->mpi;
        slot[i] = s;
        recvs |= s->is_recv;
    }
    batch_on_stack(b, i);
    b->recvs = recvs;
    if (MP_UNLIKELY(i < n)) {
        batch_unmark(b);
        return 0;
    }
    b->k = n;
    return 1;
}

/* What a usual set's completion asks MPI for: its statuses, or none for a set with no receive
 * (sends, collectives, one-sided operations, whose statuses the core writes empty; a send asked
 * to be cancelled is not in a usual set: SLOT_CANCEL_CALLED), whose statuses batch_finish_plain
 * writes itself (core.h, mp_mpi_waitall). */
static MP_INLINE MPI_Status *batch_statuses(batch_t *b)
{
    return b->recvs ? b->ms : MPI_STATUSES_IGNORE;
}

/* A set begun by batch_begin_plain, completed otherwise than all at once (an
 * error): with the arrays the general finish reads. */
static MP_COLD void batch_as_general(batch_t *b, const mp_req_t *reqs)
{
    for (int i = 0; i < b->n; i++) {
        b->idx[i] = reqs[i] & HANDLE_INDEX_MASK;
        b->which[i] = i;
    }
}

/* The statuses of a set that completed without error, when no one asked for them: only
 * looked at while receives with AnyTag are recorded (one of them may have taken a piece).
 * Returns MP_EPIECE, its message recorded, or 0. */
static MP_COLD int batch_pieces(slot_t *const *slot, const MPI_Status *ms, int n)
{
    int rc = 0;
    for (int i = 0; i < n; i++) {
        mp_status_t st;
        if (status_of(slot[i], 0, &ms[i], &st) == MP_EPIECE && !rc)
            rc = mp_wild_fail(&st);
    }
    return rc;
}

/* The status of a request of the usual set that MPI completed without error, as status_of
 * writes it, in the common cases: a send, and a receive (not recorded: SLOT_RECV_WILD) that got
 * a message under a tag that is not reserved.  0 when written; 1 for any other, which status_of
 * writes instead.  A receive that got a message has a rank and a tag of its own. */
static MP_INLINE int status_plain(const slot_t *s, const MPI_Status *st, int reserved_above, mp_status_t *out)
{
    int cancelled = st ? pal_status_cancelled(st) : 0; /* no status: a send not asked to be cancelled */
    if (s->is_recv == 0) {
        out->source = 0;
        out->tag = 0;
        out->error = 0;
        out->cancelled = cancelled;
        out->bytes = 0;
        return 0;
    }
    if (MP_UNLIKELY(s->is_recv != 1 || cancelled || st->MPI_TAG > reserved_above))
        return 1;
    out->source = st->MPI_SOURCE;
    out->tag = st->MPI_TAG;
    out->error = 0;
    out->cancelled = 0;
    out->bytes = pal_status_bytes(st);
    return 0;
}

/* The usual set completed at once by MPI: the statuses written out (when
 * asked for), then every slot freed into this thread's cache, in one push
 * when it has room (slot_free one by one otherwise); with room, both in one pass.  A set of
 * sends (no receive) has no status of MPI's to read (batch_statuses): each is written as a
 * send's, which is all a send not asked to be cancelled has. */
static MP_INLINE int batch_finish_plain(const batch_t *b, const mp_req_t *reqs, mp_status_t *statuses)
{
    slot_t *const *slot = b->slot;
    const MPI_Status *ms = b->recvs ? b->ms : NULL;
    const int n = b->n;
    slot_cache_t *c = my_cache();
    int top = c->n, rc = 0;
    if (MP_LIKELY(statuses && c->listed == LISTED && top <= SLOT_CACHE - n)) {
        const int above = mp_g_reserved_above;
        int *idx = c->idx + top;
        for (int i = 0; i < n; i++) {
            slot_t *s = slot[i];
            if (MP_UNLIKELY(status_plain(s, ms ? &ms[i] : NULL, above, &statuses[i])) &&
                status_of(s, 0, &ms[i], &statuses[i]) == MP_EPIECE && !rc)
                rc = mp_wild_fail(&statuses[i]);
            slot_clear(s);
            idx[i] = reqs[i] & HANDLE_INDEX_MASK;
        }
        c->n = top + n;
        return rc;
    }
    if (statuses) {
        for (int i = 0; i < n; i++)
            if (!ms)
                (void)status_plain(slot[i], NULL, 0, &statuses[i]);
            else if (MP_UNLIKELY(status_of(slot[i], 0, &ms[i], &statuses[i]) == MP_EPIECE) && !rc)
                rc = mp_wild_fail(&statuses[i]);
    } else if (ms && MP_UNLIKELY(atomic_load_explicit(&mp_g_wild_count, memory_order_relaxed) != 0)) {
        rc = batch_pieces(slot, ms, n);
    }
    if (MP_UNLIKELY(c->listed != LISTED || top > SLOT_CACHE - n)) {
        for (int i = 0; i < n; i++)
            slot_free(c, slot[i], reqs[i] & HANDLE_INDEX_MASK);
        return rc;
    }
    for (int i = 0; i < n; i++) {
        slot_clear(slot[i]);
        c->idx[top + i] = reqs[i] & HANDLE_INDEX_MASK;
    }
    c->n = top + n;
    return rc;
}

/* Checks every handle (nothing is touched when one is bad or repeated) and
 * collects the MPI requests of the slots still ACTIVE.  Blocking callers are
 * inside the blocking bracket already, so the GC cannot complete a slot
 * meanwhile.  Each slot of the set is marked SLOT_IN_BATCH until it is freed
 * (batch_finish) or the set given back (batch_unmark).  Returns 0, an error,
 * or for a test (wait 0) the number of requests whose failed test MPI still
 * holds (SLOT_FAILED, slot_settle): the set is not complete while there are some. */
static int batch_begin(batch_t *b, int n, const mp_req_t *reqs, int wait)
{
    slot_t **slot;
    MPI_Request *mr;
    int *idx, *which, k = 0, nslots, failed = 0, left = 0;
    batch_on_stack(b, n);
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
    /* Locals, not b's fields: stores through the arrays would make the
     * compiler reload every field per request.  The table only grows, and
     * every handle of the set was made before this call: one load of its
     * size serves the whole set. */
    slot = b->slot, idx = b->idx, mr = b->mr, which = b->which;
    nslots = atomic_load_explicit(&mp_g_nslots, memory_order_acquire);
    for (int i = 0; i < n; i++) {
        mp_req_t h = reqs[i];
        slot_t *s = NULL;
        if (h != MP_REQ_NULL) {
            int x = h & HANDLE_INDEX_MASK, rc = 0;
            uint32_t flags = 0, state = SLOT_FREE;
            if (MP_LIKELY(h >= 0 && x < nslots)) {
                s = slot_at(x);
                state = atomic_load_explicit(&s->state, memory_order_acquire);
                MP_HAPPENS_AFTER(s);
                if ((uint32_t)(h >> HANDLE_GEN_SHIFT) != atomic_load_explicit(&s->gen, memory_order_relaxed))
                    state = SLOT_FREE;
            }
            if (MP_UNLIKELY(state == SLOT_FREE ||
                            ((flags = atomic_load_explicit(&s->flags, memory_order_relaxed)) & SLOT_ORPHANED)))
                rc = mp_fail_req(h);
            else if (MP_UNLIKELY(flags & SLOT_IN_BATCH))
                rc = fail_repeated(reqs, i);
            if (MP_UNLIKELY(rc)) {
                b->n = i; /* the entries marked so far */
                batch_unmark(b);
                batch_release(b);
                return rc;
            }
            atomic_store_explicit(&s->flags, flags | SLOT_IN_BATCH, memory_order_relaxed);
            idx[i] = x;
            if (MP_UNLIKELY(flags & SLOT_FAILED))
                failed++;
            else if (state == SLOT_ACTIVE) {
                mr[k] = s->mpi;
                which[k++] = i;
            }
        }
        slot[i] = s;
    }
    b->k = k;
    /* Every handle checked: a request whose test failed (at a GC mark, or a test that left it
     * with MPI) is ended now if it can be, and the set finishes it as completed earlier, with
     * that failure; a test leaves the others for a later call. */
    for (int i = 0; failed && i < n; i++) {
        if (slot[i] && slot_failed(slot[i])) {
            left += !slot_settle(slot[i], wait);
            failed--;
        }
    }
    return left;
}

/* Finishes every request after Testall/Waitall (mrc: its result) completed
 * the collected ones; returns the first error. */
static MP_INLINE int batch_finish_as(batch_t *b, int mrc, const char *call, mp_status_t *statuses,
                                     int persistent)
{
    slot_cache_t *c = my_cache();
    slot_t **slot = b->slot;
    const int *idx = b->idx, *which = b->which;
    int rc = 0, n = b->n, k = b->k;
    if (!persistent && MP_LIKELY(mrc == MPI_SUCCESS && k == n)) {
        /* The usual set: every request was active, and this call completed
         * them all (then which[i] == i and no entry is null). */
        for (int i = 0; i < n; i++) {
            slot_t *s = slot[i];
            mp_status_t scratch, *out = statuses ? &statuses[i] : &scratch;
            if (MP_UNLIKELY(status_of(s, 0, &b->ms[i], out) == MP_EPIECE) && !rc)
                rc = mp_wild_fail(out);
            slot_free(c, s, idx[i]);
        }
        batch_release(b);
        return rc;
    }
    for (int i = 0, j = 0; i < n; i++) {
        slot_t *s = slot[i];
        mp_status_t scratch, *out = statuses ? &statuses[i] : &scratch;
        int r;
        if (!s) {
            memset(out, 0, sizeof *out);
            continue;
        }
        if (j < k && which[j] == i) {
            r = 0;
            if (MP_UNLIKELY(mrc != MPI_SUCCESS)) {
                /* Left pending by the failed call (MPI-4.0 3.7.5): marked so in its status
                 * (MPI_ERR_IN_STATUS), or, when the call failed as a whole, not freed by MPI
                 * (a persistent request's handle stays either way: then it is kept too, and
                 * a later completion finds it active or done). */
                int pending = mrc == MPI_ERR_IN_STATUS ? b->ms[j].MPI_ERROR == MPI_ERR_PENDING
                                                       : b->mr[j] != MPI_REQUEST_NULL;
                if (pending) {
                    /* Neither failed nor completed: it stays active, out of the set, and
                     * its status is not MPI's to read; MP_EPENDING says so to the caller
                     * (as list_failed does). */
                    s->mpi = b->mr[j];
                    atomic_store_explicit(&s->flags, atomic_load_explicit(&s->flags, memory_order_relaxed) & ~(uint32_t)SLOT_IN_BATCH,
                                          memory_order_relaxed);
                    memset(out, 0, sizeof *out);
                    out->error = MP_EPENDING;
                    j++;
                    continue;
                }
                if (mrc != MPI_ERR_IN_STATUS) { /* one failed call: recorded once */
                    r = mp_mpi_fail_set(rc, mrc, call);
                    status_set_failed(out, r);
                } else if (b->ms[j].MPI_ERROR != MPI_SUCCESS) { /* the first recorded: the one returned */
                    r = mp_mpi_fail_set(rc, b->ms[j].MPI_ERROR, call);
                }
            }
            if ((mrc == MPI_SUCCESS || mrc == MPI_ERR_IN_STATUS) && status_of(s, r, &b->ms[j], out) == MP_EPIECE)
                r = mp_wild_fail(out);
            if (persistent && s->persist) {
                s->mpi = b->mr[j]; /* a persistent request keeps its handle */
                persist_deactivate(s);
            } else {
                slot_free(c, s, idx[i]);
            }
            j++;
        } else { /* completed earlier */
            r = persistent ? finish_to(c, s, idx[i], out) : finish_plain(c, s, idx[i], out);
        }
        if (r && !rc)
            rc = r;
    }
    batch_release(b);
    /* A call that failed as a whole with every operation left pending is still an error. */
    return rc || mrc == MPI_SUCCESS ? rc : mp_mpi_fail(mrc, call);
}

/* The loop compiled twice: while no persistent request exists (its handle
 * is returned after the count went up, and it is freed only after it left
 * every set), no slot is looked at for one. */
static int batch_finish(batch_t *b, int mrc, const char *call, mp_status_t *statuses)
{
    if (MP_UNLIKELY(atomic_load_explicit(&mp_g_persist_open, memory_order_acquire) != 0))
        return batch_finish_as(b, mrc, call, statuses, 1);
    return batch_finish_as(b, mrc, call, statuses, 0);
}

/* MPICH 4.0's MPI_Testall misreports persistent collectives and partitioned requests (MPI_ERR_IN_STATUS
 * with MPI_ERR_PENDING, or done too early; MPI_Test and MPI_Waitall are
 * right): such a set is tested one request at a time.  Those found complete
 * are recorded (DONE); the set is finished only when all are.  Returns 1 when
 * all are complete, 0 when not, -1 for a set without such a request. */
static int testall_one_by_one(batch_t *b)
{
    int all = 1, persistent_coll = 0;
    for (int j = 0; j < b->k; j++)
        persistent_coll |= atomic_load_explicit(&b->slot[b->which[j]]->flags, memory_order_relaxed) & SLOT_TEST_ALONE;
    if (!persistent_coll)
        return -1; /* MPI_Testall is right for this set */
    for (int j = 0; j < b->k; j++)
        if (atomic_load_explicit(&b->slot[b->which[j]]->state, memory_order_acquire) == SLOT_ACTIVE &&
            !mp_slot_poll(b->slot[b->which[j]]))
            all = 0;
    b->k = 0; /* every one is finished as completed earlier */
    return all;
}

/* The usual set's call (call) failed (mrc): finished as the general path finishes.  A set with no
 * receive, completed without statuses (batch_statuses), has no error of MPI's per operation: one
 * MPI left pending (its request not freed) stays so, each it completed gets the call's error,
 * since any of them may be the one that failed, reported under MP_STATUSLESS(call). */
static MP_COLD int batch_plain_failed(batch_t *b, const mp_req_t *reqs, int mrc, const char *call, const char *statusless_call,
                              mp_status_t *statuses)
{
    if (!b->recvs) {
        for (int j = 0; j < b->k; j++) {
            memset(&b->ms[j], 0, sizeof b->ms[j]);
            b->ms[j].MPI_ERROR = b->mr[j] != MPI_REQUEST_NULL ? MPI_ERR_PENDING : MPI_ERR_IN_STATUS;
        }
        call = statusless_call;
    }
    batch_as_general(b, reqs);
    return batch_finish(b, mrc, call, statuses);
}

int mp_req_testall(int n, const mp_req_t *reqs, mp_status_t *statuses)
{
    batch_t b;
    int rc, mrc = MPI_SUCCESS;
    if (MP_LIKELY(batch_begin_plain(&b, n, reqs, 0))) {
        int flag = 0;
        mrc = mp_mpi_testall_plain(n, b.mr, &flag, batch_statuses(&b));
        if (MP_LIKELY(mrc == MPI_SUCCESS)) {
            if (!flag) {
                batch_unmark(&b); /* no request was touched */
                return 0;
            }
            rc = batch_finish_plain(&b, reqs, statuses);
            return rc ? rc : 1;
        }
        rc = batch_plain_failed(&b, reqs, mrc, "MPI_Testall", MP_STATUSLESS("MPI_Testall"), statuses);
        return rc ? rc : 1;
    }
    if ((rc = batch_begin(&b, n, reqs, 0)) < 0)
        return rc;
    if (rc > 0 || /* a failed test MPI still holds: not complete */
        (MP_UNLIKELY(atomic_load_explicit(&mp_g_persist_open, memory_order_acquire) != 0) && !testall_one_by_one(&b))) {
        batch_unmark(&b);
        batch_release(&b);
        return 0;
    }
    if (b.k) {
        int flag = 0;
        mrc = mp_mpi_testall(b.k, b.mr, &flag, b.ms);
        if (mrc == MPI_SUCCESS && !flag) {
            batch_unmark(&b);
            batch_release(&b);
            return 0; /* no request was touched */
        }
    }
    rc = batch_finish(&b, mrc, "MPI_Testall", statuses);
    return rc ? rc : 1;
}

/* req_waitall, compiled twice: vouched for req_waitall_owned (batch_begin_plain). */
static MP_INLINE int waitall_as(int n, const mp_req_t *reqs, mp_status_t *statuses, int vouched)
{
    batch_t b;
    int rc, mrc = MPI_SUCCESS;
    mp_blocking_enter();
    if (MP_LIKELY(batch_begin_plain(&b, n, reqs, vouched))) {
        mrc = mp_mpi_waitall(n, b.mr, batch_statuses(&b));
        if (MP_LIKELY(mrc == MPI_SUCCESS)) {
            rc = batch_finish_plain(&b, reqs, statuses);
        } else {
            rc = batch_plain_failed(&b, reqs, mrc, "MPI_Waitall", MP_STATUSLESS("MPI_Waitall"), statuses);
        }
    } else if ((rc = batch_begin(&b, n, reqs, 1))) {
        mp_blocking_leave();
        return rc;
    } else {
        if (b.k)
            mrc = mp_mpi_waitall(b.k, b.mr, b.ms);
        rc = batch_finish(&b, mrc, "MPI_Waitall", statuses);
    }
    mp_sweep_orphans();
    mp_blocking_leave();
    return rc;
}

int mp_req_waitall(int n, const mp_req_t *reqs, mp_status_t *statuses)
{
    return waitall_as(n, reqs, statuses, 0);
}

int mp_req_waitall_owned(int n, const mp_req_t *reqs, mp_status_t *statuses)
{
    return waitall_as(n, reqs, statuses, 1);
}

/* Takes the SLOT_IN_BATCH marks off the first n entries of a set. */
static void unmark_set(const mp_req_t *reqs, int n)
{
    int idx;
    for (int i = 0; i < n; i++) {
        slot_t *s = reqs[i] == MP_REQ_NULL ? NULL : slot_get(reqs[i], &idx);
        if (s)
            atomic_store_explicit(&s->flags, atomic_load_explicit(&s->flags, memory_order_relaxed) & ~(uint32_t)SLOT_IN_BATCH,
                                  memory_order_relaxed);
    }
}

int mp_req_waitany(int n, const mp_req_t *reqs, mp_status_t *status)
{
    int idx = 0, live = 0;
    if (n < 0 || (n > 0 && !reqs))
        return mp_fail(MP_EINVAL, "request array is NULL or its length %d is negative", n);
    if (!status) /* the completed operation's own result (a truncation) is reported there alone */
        return mp_fail_null_output("status");
    /* Every handle checked, and none given twice (MPI would see one request
     * twice), before anything is waited for: the set's slots are marked while
     * it is checked, the marks taken off again either way. */
    for (int i = 0; i < n; i++) {
        slot_t *s;
        uint32_t flags;
        int rc = 0;
        if (reqs[i] == MP_REQ_NULL)
            continue;
        if (!(s = slot_get(reqs[i], &idx)))
            rc = mp_fail_req(reqs[i]);
        else if ((flags = atomic_load_explicit(&s->flags, memory_order_relaxed)) & SLOT_IN_BATCH)
            rc = fail_repeated(reqs, i);
        else
            atomic_store_explicit(&s->flags, flags | SLOT_IN_BATCH, memory_order_relaxed);
        if (rc) {
            unmark_set(reqs, i);
            return rc;
        }
        live += atomic_load_explicit(&s->state, memory_order_acquire) != SLOT_INACTIVE;
    }
    unmark_set(reqs, n);
    if (!live) {
        if (status)
            memset(status, 0, sizeof *status);
        return n; /* not MP_UNDEFINED: that value is also an error code (MP_EHANDLE) */
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
            if (atomic_load(&s->state) == SLOT_INACTIVE) /* like a null handle (MPI-4.0 3.7.5) */
                continue;
            if (atomic_load(&s->state) == SLOT_DONE || mp_slot_poll(s)) {
                mp_sweep_orphans();
                mp_blocking_leave();
                finish(s, idx, status); /* its result is in status->error */
                return i;
            }
        }
        pal_cpu_relax();
    }
}

/* Scans the table: a query, off the per-operation path.  *used: slots not
 * free; *open: those whose MPI request the core has not seen complete. */
void mp_slot_census(uint64_t *used, uint64_t *open)
{
    int n = atomic_load_explicit(&mp_g_nslots, memory_order_acquire);
    *used = *open = 0;
    for (int i = 0; i < n; i++) {
        uint32_t state = atomic_load_explicit(&slot_at(i)->state, memory_order_acquire);
        *used += state != SLOT_FREE && state != SLOT_HELD; /* holds are no requests */
        *open += state == SLOT_ACTIVE || state == SLOT_TOKEN;
    }
}

int mp_req_active(void)
{
    uint64_t used, open;
    mp_slot_census(&used, &open);
    return (int)used;
}

/* ---- the progress engine's batch (System.MP's awaitable requests) ----
 * One MPI_Testsome over every active request of the set; each request found
 * complete (by it, earlier by a GC mark, or a persistent collective polled
 * alone) is finished as req_test would and reported, the others stay as they
 * were.  MPICH 4.0 misreports persistent collectives in a set (see
 * testall_one_by_one), so those are polled one at a time. */
int mp_req_testsome(int n, const mp_req_t *reqs, int *indices, mp_status_t *statuses)
{
    batch_t b;
    slot_cache_t *c;
    int rc = batch_begin(&b, n, reqs, 0), mrc = MPI_SUCCESS, outcount = 0, out = 0, k = 0;
    int done_stack[BATCH_STACK], *done = done_stack;
    if (rc < 0)
        return rc; /* (failed tests MPI still holds stay ACTIVE, out of the MPI set: not reported) */
    if (!indices || !statuses) {
        batch_unmark(&b);
        batch_release(&b);
        return mp_fail(MP_EINVAL, "testsome needs index and status arrays");
    }
    if (b.k > BATCH_STACK && !(done = malloc((size_t)b.k * sizeof *done))) {
        batch_unmark(&b);
        batch_release(&b);
        return mp_fail(MP_ENOMEM, "out of memory testing %d requests", b.k);
    }
    /* Persistent collectives leave the MPI set: polled alone, they turn DONE. */
    for (int j = 0; j < b.k; j++) {
        slot_t *s = b.slot[b.which[j]];
        if (atomic_load_explicit(&s->flags, memory_order_relaxed) & SLOT_TEST_ALONE) {
            (void)mp_slot_poll(s);
            continue;
        }
        b.mr[k] = b.mr[j];
        b.which[k++] = b.which[j];
    }
    if (k) {
        mp_clean_upper();
        mrc = pal_mpi.Testsome(k, b.mr, &outcount, done, b.ms);
        if (mrc != MPI_SUCCESS && mrc != MPI_ERR_IN_STATUS) {
            batch_unmark(&b);
            batch_release(&b);
            if (done != done_stack)
                free(done);
            return mp_mpi_fail(mrc, "MPI_Testsome");
        }
        if (outcount == MPI_UNDEFINED)
            outcount = 0;
    }
    c = my_cache();
    for (int j = 0; j < outcount; j++) {
        int i = b.which[done[j]], r = 0;
        slot_t *s = b.slot[i];
        if (mrc == MPI_ERR_IN_STATUS && b.ms[j].MPI_ERROR != MPI_SUCCESS)
            r = mp_mpi_fail(b.ms[j].MPI_ERROR, "MPI_Testsome");
        if (status_of(s, r, &b.ms[j], &statuses[out]) == MP_EPIECE)
            (void)mp_wild_fail(&statuses[out]);
        if (s->persist) {
            s->mpi = b.mr[done[j]]; /* a persistent request keeps its handle */
            persist_deactivate(s);
        } else {
            slot_free(c, s, b.idx[i]);
        }
        indices[out++] = i;
        b.slot[i] = NULL;
    }
    /* Completed before this call or polled alone just now. */
    for (int i = 0; i < n; i++) {
        slot_t *s = b.slot[i];
        uint32_t state;
        if (!s)
            continue;
        state = atomic_load_explicit(&s->state, memory_order_acquire);
        if (state != SLOT_DONE && state != SLOT_INACTIVE)
            continue;
        statuses[out].error = finish_to(c, s, b.idx[i], &statuses[out]);
        indices[out++] = i;
        b.slot[i] = NULL;
    }
    batch_unmark(&b);
    batch_release(&b);
    if (done != done_stack)
        free(done);
    return out;
}

int mp_req_is_recv(mp_req_t req)
{
    int idx = 0;
    slot_t *s = slot_get(req, &idx);
    if (!s)
        return mp_fail_req(req);
    return s->is_recv != 0;
}
