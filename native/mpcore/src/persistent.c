/*
 * persistent.c - persistent requests (MPI-4.0 3.9; collectives 6.12): made
 * once, started many times.  A persistent request holds its slot and its MPI
 * request from init to req_free; completion makes it inactive (requests.c).
 *
 * The GC policy: MPI touches the buffer only while an instance is active, so
 * the buffer is registered (motor) or pinned (System.MP in library mode) only
 * then, and may move between instances.  Each start therefore gets the
 * buffer's address, and when it differs from the one the MPI request was made
 * with, the request is made again on it first (counted in
 * mp_stats.persistent_recreated).  Collective requests cannot be made again by
 * one rank (their init is collective), so a side that may move is staged
 * instead (collectives.c, mp_coll_init).
 */
#include "comms.h"
#include "persistent.h"
#include "requests.h"
#include "wildcard.h"

#include <limits.h>

_Atomic uint64_t mp_g_persist_open, mp_g_persist_recreated;

/* Makes the MPI request of a point-to-point persistent request on buf.  The
 * communicator is looked up again each time: one freed since init is refused. */
static int p2p_make(const persist_t *p, void *buf, MPI_Request *r)
{
    const comm_entry_t *ce;
    int peer = 0, tag = p->tag, rc;
    if ((rc = mp_comm_lookup(p->comm, &ce)))
        return rc;
    if (p->kind == PERSIST_RECV ? (rc = mp_check_source(ce, p->peer, &peer)) || (rc = mp_check_recv_tag(p->tag, &tag))
                                : (rc = mp_check_dest(ce, p->peer, &peer)) || (rc = mp_check_send_tag(p->tag)))
        return rc;
    if (p->bytes > INT_MAX && (!pal_mpi.Send_init_c || !pal_mpi.Ssend_init_c || !pal_mpi.Recv_init_c))
        return mp_fail(MP_ECOUNT, "message of %lld bytes needs MPI-4 large-count functions, "
                       "which this MPI library lacks", (long long)p->bytes);
    /* MPI_<F>, or its large-count form MPI_<F>_c. */
#define MAKE(F)                                                                                          \
    (p->bytes <= INT_MAX                                                                                 \
         ? MP_MPI_CHECK(pal_mpi.F(buf, (int)p->bytes, MPI_BYTE, peer, tag, ce->mpi, r), "MPI_" #F)       \
         : MP_MPI_CHECK(pal_mpi.F##_c(buf, (MPI_Count)p->bytes, MPI_BYTE, peer, tag, ce->mpi, r), "MPI_" #F "_c"))
    switch (p->kind) {
    case PERSIST_RECV:
        return MAKE(Recv_init);
    case PERSIST_SSEND:
        return MAKE(Ssend_init);
    default:
        return MAKE(Send_init);
    }
#undef MAKE
}

int mp_persist_new(int kind, int peer, int tag, mp_comm_t comm, persist_t **out)
{
    static const char *const what[] = { "persistent send", "persistent synchronous send", "persistent receive",
                                        "persistent collective", "partitioned send", "partitioned receive" };
    persist_t *p = calloc(1, sizeof *p);
    if (!p)
        return mp_fail(MP_ENOMEM, "out of memory for a %s request",
                       (unsigned)kind < sizeof what / sizeof *what ? what[kind] : "persistent");
    p->kind = kind;
    p->peer = peer;
    p->tag = tag;
    p->comm = comm;
    *out = p;
    return 0;
}

int mp_persist_made(persist_t *p, int rc, MPI_Request r, mp_req_t *req, void *send_stage, void *recv_stage,
                    void **stages)
{
    if (rc) {
        mp_persist_discard(p);
        return rc;
    }
    if ((rc = mp_persist_track(p, r, req))) /* p freed */
        return rc;
    stages[0] = send_stage;
    stages[1] = recv_stage;
    return 0;
}

int mp_persist_track(persist_t *p, MPI_Request r, mp_req_t *req)
{
    slot_t *s = NULL;
    int rc = slot_alloc(my_cache(), &s, req);
    if (MP_UNLIKELY(rc)) {
        if (r != MPI_REQUEST_NULL) /* none yet for a form posted at each start */
            pal_mpi.Request_free(&r);
        mp_persist_discard(p);
        return rc;
    }
    s->is_recv = p->kind == PERSIST_RECV || p->kind == PERSIST_PRECV;
    s->mpi = r;
    s->obj[0] = s->obj[1] = NULL;
    s->persist = p;
    /* MPICH 4.0.2's MPI_Testall misreports these in a set (requests.c: testall_one_by_one).
     * Partitioned: two started MPI_Psend_init requests tested with MPI_Testall until flag gave
     * MPI_ERR_IN_STATUS with one status MPI_ERR_PENDING, or with both statuses 0; MPI_Waitall
     * and MPI_Test alone are right. */
    if ((p->kind == PERSIST_COLL && !p->restart) || p->kind == PERSIST_PSEND || p->kind == PERSIST_PRECV)
        atomic_store_explicit(&s->flags, SLOT_TEST_ALONE, memory_order_relaxed);
    atomic_fetch_add(&mp_g_persist_open, 1);
    atomic_store_explicit(&s->state, SLOT_INACTIVE, memory_order_release);
    return 0;
}

static int p2p_init(int kind, void *buf, int64_t bytes, int peer, int tag, mp_comm_t comm, mp_req_t *req)
{
    MPI_Request r = MPI_REQUEST_NULL;
    persist_t *p = NULL;
    int rc;
    if (bytes < 0)
        return mp_fail(MP_ECOUNT, "byte count %lld is negative", (long long)bytes);
    if (!buf && bytes > 0)
        return mp_fail(MP_EINVAL, "buffer is NULL but byte count is %lld", (long long)bytes);
    if (!req)
        return mp_fail_null_output("request");
    if ((rc = mp_persist_new(kind, peer, tag, comm, &p)))
        return rc;
    p->bytes = bytes;
    p->buf = buf;
    if ((rc = p2p_make(p, buf, &r))) {
        free(p);
        return rc;
    }
    if ((rc = mp_persist_track(p, r, req)) == 0 && kind == PERSIST_RECV && tag == MP_ANY_TAG) {
        int idx;
        slot_t *s = slot_lookup(*req, &idx);
        if (s) {
            s->is_recv = SLOT_RECV_WILD; /* its record goes with it (persist_release) */
            mp_wild_record(&s->mpi, *req, NULL, 0, comm, peer);
        }
    }
    return rc;
}

int mp_send_init(const void *buf, int64_t bytes, int dest, int tag, mp_comm_t comm, int mode, mp_req_t *req)
{
    if (mode != MP_SEND_STANDARD && mode != MP_SEND_SYNC)
        return mp_fail(MP_EINVAL, "send mode %d is not MP_SEND_STANDARD or MP_SEND_SYNC", mode);
    return p2p_init(mode == MP_SEND_SYNC ? PERSIST_SSEND : PERSIST_SEND, (void *)buf, bytes, dest, tag, comm, req);
}

int mp_recv_init(void *buf, int64_t bytes, int source, int tag, mp_comm_t comm, mp_req_t *req)
{
    return p2p_init(PERSIST_RECV, buf, bytes, source, tag, comm, req);
}

/* ---- starting ---- */

/* The persistent request behind a handle, inactive: what a start needs. */
static int startable(mp_req_t req, slot_t **out, int *idx)
{
    slot_t *s = slot_get(req, idx);
    if (MP_UNLIKELY(!s))
        return mp_fail_req(req);
    if (MP_UNLIKELY(!s->persist))
        return mp_fail(MP_EINVAL, "request %d is not persistent: only persistent requests are started", req);
    if (MP_UNLIKELY(atomic_load_explicit(&s->state, memory_order_acquire) != SLOT_INACTIVE))
        return mp_fail(MP_EBUSY, "persistent request %d is active: complete it (wait or test) before starting it again", req);
    *out = s;
    return 0;
}

/* Moves a point-to-point request to buf when its buffer moved since the MPI
 * request was made (the old request is kept if making the new one fails). */
static int follow_buffer(slot_t *s, void *buf)
{
    persist_t *p = s->persist;
    MPI_Request r = MPI_REQUEST_NULL;
    int rc, moved;
    if (p->kind >= PERSIST_COLL) /* collective or partitioned: made once, on a buffer that does not move */
        return 0;
    moved = p->bytes > 0 && buf != p->buf;
    /* Open MPI 4.1 frees a persistent receive that completed with an error
     * (truncation) and nulls its handle: it is made again as well. */
    if (MP_LIKELY(!moved && s->mpi != MPI_REQUEST_NULL))
        return 0;
    if (moved && !buf)
        return mp_fail(MP_EINVAL, "buffer is NULL but byte count is %lld", (long long)p->bytes);
    if ((rc = p2p_make(p, moved ? buf : p->buf, &r)))
        return rc;
    if (s->mpi != MPI_REQUEST_NULL)
        pal_mpi.Request_free(&s->mpi);
    s->mpi = r;
    if (moved) {
        p->buf = buf;
        atomic_fetch_add(&mp_g_persist_recreated, 1);
    }
    return 0;
}

/* The instance is started: counted, its object recorded, then ACTIVE (the
 * GC extension reports the object from here until completion). */
static inline void activate(mp_counts_t *k, slot_t *s, void *obj)
{
    const persist_t *p = s->persist;
    if (p->kind == PERSIST_COLL) {
        mp_count(&k->coll_ops, p->restart == NULL); /* a restart counted its nonblocking post */
    } else {
        mp_count(&k->p2p_ops, 1);
        mp_count(&k->p2p_bytes, (uint64_t)p->bytes);
    }
    mp_count(&k->persistent_starts, 1);
    if (obj && p->bytes > 0) {
        s->obj[0] = obj;
        mp_count(&k->registered, 1);
    }
    atomic_store_explicit(&s->state, SLOT_ACTIVE, memory_order_release);
}

int mp_req_start(mp_req_t req, void *buf, void *obj)
{
    slot_t *s = NULL;
    int idx = 0, rc;
    if ((rc = startable(req, &s, &idx)) || (rc = follow_buffer(s, buf)))
        return rc;
    if ((rc = s->persist->restart ? s->persist->restart(s->persist, &s->mpi)
                                  : MP_MPI_CHECK(pal_mpi.Start(&s->mpi), "MPI_Start")))
        return rc;
    activate(mp_my_counts(), s, obj);
    return 0;
}

enum { START_STACK = 64 };

static MP_COLD int fail_repeated_start(const mp_req_t *reqs, int i)
{
    int first = 0;
    while (reqs[first] != reqs[i])
        first++;
    return mp_fail(MP_EINVAL, "request %d is in the set twice (entries %d and %d)", (int)reqs[i], first, i);
}

/* Takes the marks of the first n slots of a set off again. */
static void unmark(slot_t *const *slots, int n)
{
    for (int i = 0; i < n; i++)
        atomic_store_explicit(&slots[i]->flags,
                              atomic_load_explicit(&slots[i]->flags, memory_order_relaxed) & ~(uint32_t)SLOT_IN_BATCH,
                              memory_order_relaxed);
}

int mp_req_startall(int n, const mp_req_t *reqs, void *const *bufs, void *const *objs, int *started)
{
    slot_t *slot_stack[START_STACK], **slots = slot_stack;
    MPI_Request mr_stack[START_STACK], *mr = mr_stack;
    mp_counts_t *k;
    int idx = 0, rc = 0, marked = 0, dummy;
    if (!started)
        started = &dummy;
    *started = 0;
    if (n < 0 || (n > 0 && (!reqs || !bufs)))
        return mp_fail(MP_EINVAL, "request or buffer array is NULL or its length %d is negative", n);
    if (n == 0)
        return 0;
    if (n > START_STACK) {
        slots = malloc((size_t)n * sizeof *slots);
        mr = malloc((size_t)n * sizeof *mr);
        if (!slots || !mr) {
            free(slots);
            free(mr);
            return mp_fail(MP_ENOMEM, "out of memory starting %d requests", n);
        }
    }
    /* Every request checked (and marked, so a repeat is seen) before any starts. */
    for (; marked < n; marked++) {
        slot_t *s = NULL;
        uint32_t flags;
        if ((rc = startable(reqs[marked], &s, &idx)))
            break;
        if ((flags = atomic_load_explicit(&s->flags, memory_order_relaxed)) & SLOT_IN_BATCH) {
            rc = fail_repeated_start(reqs, marked);
            break;
        }
        atomic_store_explicit(&s->flags, flags | SLOT_IN_BATCH, memory_order_relaxed);
        slots[marked] = s;
    }
    for (int i = 0; !rc && i < n; i++)
        rc = follow_buffer(slots[i], bufs[i]);
    unmark(slots, marked);
    if (!rc) {
        int m = 0;
        for (int i = 0; i < n; i++) {
            persist_t *p = slots[i]->persist;
            int r1 = p->restart ? p->restart(p, &slots[i]->mpi) : 0;
            if (!p->restart)
                mr[m++] = slots[i]->mpi; /* MPI_Startall leaves persistent handles as they are */
            if (r1 && !rc)
                rc = r1;
        }
        if (m) {
            int r2 = MP_MPI_CHECK(pal_mpi.Startall(m, mr), "MPI_Startall");
            if (r2 && !rc)
                rc = r2;
        }
        /* Even when it failed: when in doubt, treat the buffers as in use. */
        k = mp_my_counts();
        for (int i = 0; i < n; i++)
            activate(k, slots[i], objs ? objs[i] : NULL);
        *started = n;
    }
    if (slots != slot_stack) {
        free(slots);
        free(mr);
    }
    return rc;
}

int mp_req_free(mp_req_t req)
{
    int idx = 0;
    slot_t *s = slot_get(req, &idx);
    uint32_t state;
    if (!s)
        return mp_fail_req(req);
    if (!s->persist)
        return mp_fail(MP_EINVAL, "request %d is not persistent: complete it, or orphan it", req);
    state = atomic_load_explicit(&s->state, memory_order_acquire);
    if (state != SLOT_INACTIVE)
        return mp_fail(MP_EBUSY, "persistent request %d is active: complete it before freeing it", req);
    persist_release(s);
    slot_free(my_cache(), s, idx);
    return 0;
}

void mp_persist_cleanup(void)
{
    int n = atomic_load_explicit(&mp_g_nslots, memory_order_acquire);
    for (int i = 0; i < n; i++) {
        slot_t *s = slot_at(i);
        if (s->persist && atomic_load(&s->state) == SLOT_INACTIVE && s->mpi != MPI_REQUEST_NULL)
            pal_mpi.Request_free(&s->mpi);
    }
}
