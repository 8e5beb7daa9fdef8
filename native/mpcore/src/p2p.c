/* p2p.c - point-to-point (MPI-4.0 chapter 3): posting sends and receives,
 * blocking operations in two steps, nonblocking ones, probe and matched probe.
 * post_send/post_recv and the slot helpers are inlined into every posting call:
 * this path is measured against C calling MPI directly. */
#include "p2p.h"
#include "wildcard.h"

#include <stdlib.h>

/* ---- blocking operations in two steps ----
 * The pending part of a blocking operation is a token: a slot of the request
 * table in state SLOT_TOKEN that holds the MPI request, named by the slot's
 * handle with TOKEN_MARK set (so no request handle is a token, and a token cast
 * to a request handle is negative, which no request call accepts).  The slot is
 * taken after the arguments are checked and before MPI sees the operation: a
 * full table, or under MPICH the request pool's budget (slots.h), refuses
 * the operation with nothing posted, as it refuses every other request.  A
 * token that completed already, is in use by another thread, or was never
 * given is refused before MPI sees it (MPI's request would be freed, or
 * another's).  An operation complete at its first test gives its slot back at
 * once and hands out no token. */

#define TOKEN_MARK (((mp_token_t)1 << 32) | 0x80000000)

static MP_COLD int fail_token(mp_token_t token)
{
    return mp_fail(MP_EHANDLE, "token %lld is not a pending operation's (completed already, being tested or waited "
                   "for by another thread, or never given by send_start, recv_start or mrecv_start)",
                   (long long)token);
}

/* An accepted blocking operation (ProcNull's too) is counted. */
static MP_INLINE void count_blocking(mp_counts_t *k, int64_t bytes)
{
    mp_count(&k->blocking_ops, 1);
    count_p2p(k, bytes);
}

/* The outcome of a blocking operation's test (MPI's rc and flag): 0 pending, 1 done, or an
 * error.  A failed operation's status is not written, as a failed blocking call's is not
 * (blocking_done): what MPI left in st is not read. */
static MP_INLINE int token_outcome(int rc, int flag, const MPI_Status *st, mp_status_t *status)
{
    if (MP_LIKELY(rc == MPI_SUCCESS) && !flag)
        return 0;
    if (rc != MPI_SUCCESS)
        return mp_mpi_fail(rc, "MPI_Test");
    if (status)
        mp_status_from_mpi(st, status);
    return 1;
}

/* After the post into slot s (rc from MPI: 0 posted, else refused): the test right after
 * it, often complete already (mp_mpi_test_done_first).  Still pending, the slot becomes the
 * caller's token; otherwise it is given back and the outcome returned. */
static int token_started(slot_cache_t *c, slot_t *s, mp_req_t h, int rc, mp_status_t *status, mp_token_t *token)
{
    MPI_Status st;
    int flag = 0;
    if (MP_LIKELY(rc == 0)) {
        rc = mp_mpi_test_done_first(&s->mpi, &flag, &st);
        if (MP_LIKELY(rc == MPI_SUCCESS) && !flag) {
            atomic_store_explicit(&s->state, SLOT_TOKEN, memory_order_release);
            *token = TOKEN_MARK | (mp_token_t)(uint32_t)h;
            return 0;
        }
        rc = token_outcome(mp_mpi_ended(rc, &s->mpi), flag, &st, status);
    }
    slot_free(c, s, h & HANDLE_INDEX_MASK);
    return rc;
}

/* The slot of a pending token, claimed for one test or wait (SLOT_IN_BATCH in its
 * flags: a second claimant is refused); NULL when the token names none. */
static slot_t *token_claim(mp_token_t token, int *idx)
{
    mp_req_t h = (mp_req_t)(token & 0x7FFFFFFF);
    int i = h & HANDLE_INDEX_MASK;
    uint32_t unclaimed = 0, gen = (uint32_t)h >> HANDLE_GEN_SHIFT;
    slot_t *s;
    if ((token & ~(mp_token_t)0x7FFFFFFF) != TOKEN_MARK || i >= atomic_load_explicit(&mp_g_nslots, memory_order_acquire))
        return NULL;
    s = slot_at(i);
    if (atomic_load_explicit(&s->state, memory_order_acquire) != SLOT_TOKEN ||
        atomic_load_explicit(&s->gen, memory_order_relaxed) != gen ||
        !atomic_compare_exchange_strong(&s->flags, &unclaimed, SLOT_IN_BATCH))
        return NULL;
    /* Claimed; but between the look and the claim another thread may have completed the token
     * and the slot become another's: the claim holds only for the slot the token named. */
    if (atomic_load_explicit(&s->state, memory_order_acquire) != SLOT_TOKEN ||
        atomic_load_explicit(&s->gen, memory_order_relaxed) != gen) {
        atomic_store_explicit(&s->flags, 0, memory_order_release);
        return NULL;
    }
    *idx = i;
    return s;
}

/* The end of a blocking call: leaves the blocking bracket (orphans swept first); 0 with the
 * receive's status translated (when st and status are given), or MPI's error for call. */
static int blocking_done(int rc, const char *call, const MPI_Status *st, mp_status_t *status)
{
    mp_sweep_orphans();
    mp_blocking_leave();
    if (MP_UNLIKELY(rc != MPI_SUCCESS))
        return mp_mpi_fail(rc, call);
    if (st && status)
        mp_status_from_mpi(st, status);
    return 0;
}

/* MPI_Wait on a request the core holds, in the blocking bracket; status may be NULL, and is
 * written only when the operation succeeded. */
static int wait_request(MPI_Request *r, mp_status_t *status)
{
    MPI_Status st;
    mp_blocking_enter();
    return blocking_done(mp_mpi_ended(pal_mpi.Wait(r, &st), r), "MPI_Wait", &st, status);
}

int mp_send_start(const void *buf, int64_t bytes, int dest, int tag, mp_comm_t comm, int mode,
                  mp_token_t *token)
{
    slot_cache_t *c = my_cache();
    const comm_entry_t *ce;
    slot_t *s;
    mp_req_t h;
    int d = 0, rc;
    if (!token)
        return mp_fail_null_output("token");
    if ((rc = send_args(buf, bytes, dest, tag, comm, mode, &ce, &d)))
        return rc;
    if (MP_UNLIKELY(d == MPI_PROC_NULL)) {
        count_blocking(counts_of(c), bytes);
        return 1;
    }
    if ((rc = slot_alloc(c, &s, &h)))
        return rc;
    if ((rc = issue_send(buf, bytes, d, tag, ce, mode, &s->mpi)) == 0)
        count_blocking(counts_of(c), bytes);
    return token_started(c, s, h, rc, NULL, token);
}

int mp_recv_start(void *buf, int64_t bytes, int source, int tag, mp_comm_t comm,
                  mp_status_t *status, mp_token_t *token)
{
    slot_cache_t *c = my_cache();
    const comm_entry_t *ce;
    slot_t *s;
    mp_req_t h;
    int src = 0, t = 0, rc;
    if (!token)
        return mp_fail_null_output("token");
    if ((rc = recv_args(buf, bytes, source, tag, comm, &ce, &src, &t)))
        return rc;
    if (MP_UNLIKELY(src == MPI_PROC_NULL)) {
        count_blocking(counts_of(c), bytes);
        if (status)
            mp_status_proc_null(status);
        return 1;
    }
    if ((rc = slot_alloc(c, &s, &h)))
        return rc;
    if ((rc = issue_recv(buf, bytes, src, t, ce, &s->mpi)) == 0)
        count_blocking(counts_of(c), bytes);
    return token_started(c, s, h, rc, status, token);
}

/* The later tests (System.MP's polls of a pending operation). */
int mp_token_test(mp_token_t token, mp_status_t *status)
{
    MPI_Status st;
    int idx, flag = 0, rc;
    slot_t *s = token_claim(token, &idx);
    if (!s)
        return fail_token(token);
    rc = mp_mpi_test(&s->mpi, &flag, &st);
    if (MP_LIKELY(rc == MPI_SUCCESS) && !flag) {
        atomic_store_explicit(&s->flags, 0, memory_order_release); /* still the caller's */
        return 0;
    }
    rc = mp_mpi_ended(rc, &s->mpi);
    slot_free(my_cache(), s, idx);
    return token_outcome(rc, flag, &st, status);
}

int mp_token_wait(mp_token_t token, mp_status_t *status)
{
    int idx, rc;
    slot_t *s = token_claim(token, &idx);
    if (!s)
        return fail_token(token);
    rc = wait_request(&s->mpi, status);
    slot_free(my_cache(), s, idx);
    return rc;
}

/* ---- nonblocking ---- */

/* A nonblocking post in two halves around the call into MPI, so that few
 * values live across it: before, the claimed slot s (handle h, from c) gets
 * its kind and owner object and the caller its handle; after, rc (what MPI
 * said) decides: an accepted operation is counted - straight into c's
 * counters, listed since c handed out its first slot - and its slot made
 * ACTIVE, a refused one gives the slot back and *req becomes MP_REQ_NULL.
 * This is the general post (p2p_common says which posts take the common one). */
static MP_INLINE void slot_prepare(slot_t *s, mp_req_t h, void *obj, int is_recv, mp_req_t *req)
{
    s->is_recv = is_recv;
    s->obj[0] = obj;
    s->obj[1] = NULL;
    *req = h;
}

static MP_COLD int slot_refused(slot_cache_t *c, slot_t *s, int rc, mp_req_t *req)
{
    if (s->is_recv == SLOT_RECV_WILD)
        mp_wild_forget(&s->mpi);
    s->obj[0] = NULL;
    slot_unclaim(c, *req);
    *req = MP_REQ_NULL;
    return rc;
}

static MP_INLINE int slot_posted(slot_cache_t *c, slot_t *s, int rc, int64_t bytes, mp_req_t *req)
{
    if (MP_UNLIKELY(rc))
        return slot_refused(c, s, rc, req);
    count_p2p(&c->counts, bytes);
    /* A registered buffer needs no pin object: that is a pin avoided. */
    mp_count(&c->counts.registered, s->obj[0] != NULL);
    MP_HAPPENS_BEFORE(s);
    atomic_store_explicit(&s->state, SLOT_ACTIVE, memory_order_release);
    return 0;
}

static __attribute__((noinline)) int isend_general(const void *buf, int64_t bytes, int dest, int tag, mp_comm_t comm,
                                                   int mode, void *obj, mp_req_t *req)
{
    const comm_entry_t *ce;
    slot_cache_t *c = my_cache();
    slot_t *s;
    mp_req_t h;
    int d = 0, rc;
    if ((rc = trusted_send_args(dest, comm, &ce, &d)))
        return rc;
    if (MP_UNLIKELY(d == MPI_PROC_NULL)) {
        count_p2p(counts_of(c), bytes);
        return track_proc_null(c, 0, req);
    }
    if (MP_UNLIKELY(rc = slot_alloc(c, &s, &h)))
        return rc;
    slot_prepare(s, h, bytes > 0 ? obj : NULL, 0, req);
    return slot_posted(c, s, issue_send(buf, bytes, d, tag, ce, mode, &s->mpi), bytes, req);
}

static __attribute__((noinline)) int irecv_general(void *buf, int64_t bytes, int source, int tag, mp_comm_t comm,
                                                   void *obj, mp_req_t *req)
{
    const comm_entry_t *ce;
    slot_cache_t *c = my_cache();
    slot_t *slot;
    mp_req_t h;
    int s = 0, t = 0, rc;
    if ((rc = trusted_recv_args(source, tag, comm, &ce, &s, &t)))
        return rc;
    if (MP_UNLIKELY(s == MPI_PROC_NULL)) {
        count_p2p(counts_of(c), bytes);
        return track_proc_null(c, 1, req);
    }
    if (MP_UNLIKELY(rc = slot_alloc(c, &slot, &h)))
        return rc;
    slot_prepare(slot, h, bytes > 0 ? obj : NULL, 1, req);
    if (MP_UNLIKELY(t == MPI_ANY_TAG)) {
        slot->is_recv = SLOT_RECV_WILD;
        mp_wild_record(&slot->mpi, h, NULL, 0, comm, source);
    }
    return slot_posted(c, slot, issue_recv(buf, bytes, s, t, ce, &slot->mpi), bytes, req);
}

/* ---- the common post ----
 * A post whose rank and tag are no wildcard or ProcNull, whose communicator is a place of the
 * table, of at most INT_MAX bytes, while MPI is ready and this thread's cache holds a free slot
 * (as the request lists' common post, lists.c): its slot is claimed and the operation counted
 * before MPI is called, so that only the slot lives across the call, and after it the slot
 * becomes ACTIVE.  MPI's refusal takes both back (post_refused).  Every other post takes the
 * general path above.  A free slot holds no objects (slot_clear, slot_forget), so only obj[0]
 * is written. */

static MP_INLINE int p2p_common(slot_cache_t *c, int64_t bytes, int peer, int tag, mp_comm_t comm)
{
    return MP_LIKELY((unsigned)comm < MP_MAX_COMMS && (peer | tag) >= 0 && (uint64_t)bytes <= INT_MAX && c->n > 0 &&
                     mp_ready());
}

/* The claimed, counted slot of a common post: its handle in *req.  Until the slot is ACTIVE its
 * status is not used: the post's byte count waits there for post_refused, so that only the slot
 * and req live across the call into MPI. */
static MP_INLINE slot_t *slot_counted(slot_cache_t *c, int64_t bytes, void *obj, int is_recv, mp_req_t *req)
{
    slot_t *s = slot_take(c, req);
    s->is_recv = is_recv;
    s->obj[0] = obj;
    s->status.bytes = bytes;
    count_p2p(&c->counts, bytes);
    mp_count(&c->counts.registered, obj != NULL); /* a registered buffer needs no pin object: a pin avoided */
    return s;
}

/* MPI refused a common post (rc, MPI's code, from call): its count and slot are taken back,
 * *req becomes MP_REQ_NULL, and the error is recorded. */
static MP_COLD int post_refused(slot_t *s, int rc, mp_req_t *req, const char *call)
{
    slot_cache_t *c = my_cache();
    mp_count(&c->counts.p2p_ops, (uint64_t)-1);
    mp_count(&c->counts.p2p_bytes, (uint64_t)-s->status.bytes);
    mp_count(&c->counts.registered, (uint64_t)-(int64_t)(s->obj[0] != NULL));
    s->obj[0] = NULL;
    slot_unclaim(c, *req);
    *req = MP_REQ_NULL;
    return mp_mpi_fail(rc, call);
}

static MP_INLINE int slot_active(slot_t *s)
{
    MP_HAPPENS_BEFORE(s);
    atomic_store_explicit(&s->state, SLOT_ACTIVE, memory_order_release);
    return 0;
}

/* The arguments were checked by the caller (p2p.h, the trusted path); MPI writes its
 * request straight into the slot.  One call site per MPI call, so that the mode does not live
 * across it. */
int mp_isend(const void *buf, int64_t bytes, int dest, int tag, mp_comm_t comm, int mode, void *obj, mp_req_t *req)
{
    slot_cache_t *c = my_cache();
    slot_t *s;
    int rc;
    if (!p2p_common(c, bytes, dest, tag, comm))
        return isend_general(buf, bytes, dest, tag, comm, mode, obj, req);
    s = slot_counted(c, bytes, bytes > 0 ? obj : NULL, 0, req);
    if (MP_UNLIKELY(mode == MP_SEND_SYNC)) {
        rc = pal_mpi.Issend(buf, (int)bytes, MPI_BYTE, dest, tag, mp_g_comms[comm].mpi, &s->mpi);
        if (MP_UNLIKELY(rc != MPI_SUCCESS))
            return post_refused(s, rc, req, "MPI_Issend");
        return slot_active(s);
    }
    rc = pal_mpi.Isend(buf, (int)bytes, MPI_BYTE, dest, tag, mp_g_comms[comm].mpi, &s->mpi);
    if (MP_UNLIKELY(rc != MPI_SUCCESS))
        return post_refused(s, rc, req, "MPI_Isend");
    return slot_active(s);
}

int mp_irecv(void *buf, int64_t bytes, int source, int tag, mp_comm_t comm, void *obj, mp_req_t *req)
{
    slot_cache_t *c = my_cache();
    slot_t *s;
    int rc;
    if (!p2p_common(c, bytes, source, tag, comm))
        return irecv_general(buf, bytes, source, tag, comm, obj, req);
    s = slot_counted(c, bytes, bytes > 0 ? obj : NULL, 1, req);
    rc = pal_mpi.Irecv(buf, (int)bytes, MPI_BYTE, source, tag, mp_g_comms[comm].mpi, &s->mpi);
    if (MP_UNLIKELY(rc != MPI_SUCCESS))
        return post_refused(s, rc, req, "MPI_Irecv");
    return slot_active(s);
}

/* ---- probe and matched probe ---- */

static int probe_args(int source, int tag, mp_comm_t comm, const comm_entry_t **ce, int *s, int *t)
{
    int rc;
    if ((rc = mp_comm_lookup(comm, ce)))
        return rc;
    if ((rc = mp_check_source(*ce, source, s)) || (rc = mp_check_recv_tag(tag, t)))
        return rc;
    return 0;
}

int mp_iprobe(int source, int tag, mp_comm_t comm, mp_status_t *status)
{
    const comm_entry_t *ce;
    MPI_Status st;
    int s = 0, t = 0, flag = 0, rc;
    if ((rc = probe_args(source, tag, comm, &ce, &s, &t)))
        return rc;
    mp_clean_upper();
    if ((rc = MP_MPI_CHECK(pal_mpi.Iprobe(s, t, ce->mpi, &flag, &st), "MPI_Iprobe")))
        return rc;
    if (flag && status)
        mp_status_from_mpi(&st, status);
    return flag ? 1 : 0;
}

int mp_probe(int source, int tag, mp_comm_t comm, mp_status_t *status)
{
    const comm_entry_t *ce;
    MPI_Status st;
    int s = 0, t = 0, rc;
    if ((rc = probe_args(source, tag, comm, &ce, &s, &t)))
        return rc;
    mp_blocking_enter();
    rc = pal_mpi.Probe(s, t, ce->mpi, &st);
    mp_blocking_leave();
    if ((rc = MP_MPI_CHECK(rc, "MPI_Probe")))
        return rc;
    if (status)
        mp_status_from_mpi(&st, status);
    return 0;
}

int mp_improbe(int source, int tag, mp_comm_t comm, mp_msg_t *msg, mp_status_t *status)
{
    const comm_entry_t *ce;
    MPI_Status st;
    MPI_Message m = MPI_MESSAGE_NULL;
    int s = 0, t = 0, flag = 0, rc;
    if ((rc = probe_args(source, tag, comm, &ce, &s, &t)))
        return rc;
    if (s == MPI_PROC_NULL) {
        *msg = (mp_msg_t)MPI_MESSAGE_NO_PROC;
        if (status)
            mp_status_proc_null(status);
        return 1;
    }
    mp_clean_upper();
    if ((rc = MP_MPI_CHECK(pal_mpi.Improbe(s, t, ce->mpi, &flag, &m, &st), "MPI_Improbe")))
        return rc;
    if (!flag)
        return 0;
    *msg = (mp_msg_t)m;
    if (status)
        mp_status_from_mpi(&st, status);
    return 1;
}

int mp_mprobe(int source, int tag, mp_comm_t comm, mp_msg_t *msg, mp_status_t *status)
{
    const comm_entry_t *ce;
    MPI_Status st;
    MPI_Message m = MPI_MESSAGE_NULL;
    int s = 0, t = 0, rc;
    if ((rc = probe_args(source, tag, comm, &ce, &s, &t)))
        return rc;
    if (s == MPI_PROC_NULL)
        return mp_improbe(source, tag, comm, msg, status) == 1 ? 0 : MP_EINVAL;
    mp_blocking_enter();
    rc = pal_mpi.Mprobe(s, t, ce->mpi, &m, &st);
    mp_blocking_leave();
    if ((rc = MP_MPI_CHECK(rc, "MPI_Mprobe")))
        return rc;
    *msg = (mp_msg_t)m;
    if (status)
        mp_status_from_mpi(&st, status);
    return 0;
}

/* Posts the receive of a matched message (consumes *m): < 0 an error, 0
 * posted, 1 a message from MPI_PROC_NULL (nothing posted). */
/* The checks of a matched receive: 0, 1 for ProcNull's message (nothing to receive: status,
 * if given, is ProcNull's), or the error. */
static int mrecv_args(const void *buf, int64_t bytes, MPI_Message m, mp_status_t *status)
{
    if (!mp_ready())
        return mp_fail_state();
    if (bytes < 0 || (!buf && bytes > 0))
        return mp_fail(MP_ECOUNT, "byte count %lld is negative or the buffer is NULL", (long long)bytes);
    if (m == MPI_MESSAGE_NULL)
        return mp_fail(MP_EHANDLE, "the matched message was already received");
    if (m != MPI_MESSAGE_NO_PROC)
        return 0;
    if (status)
        mp_status_proc_null(status);
    return 1;
}

/* MPI_Imrecv (or its large-count form) of arguments mrecv_args accepted. */
static int issue_mrecv(void *buf, int64_t bytes, MPI_Message *m, MPI_Request *r)
{
    if (bytes <= INT_MAX)
        return MP_MPI_CHECK(pal_mpi.Imrecv(buf, (int)bytes, MPI_BYTE, m, r), "MPI_Imrecv");
    if (pal_mpi.Imrecv_c)
        return MP_MPI_CHECK(pal_mpi.Imrecv_c(buf, (MPI_Count)bytes, MPI_BYTE, m, r), "MPI_Imrecv_c");
    return mp_fail(MP_ECOUNT, "message of %lld bytes needs MPI-4 large-count functions", (long long)bytes);
}

/* ---- blocking operations in one call ---- */

/* A blocking send of checked arguments (the trusted path): MPI_Send or MPI_Ssend in the
 * blocking bracket. */
int mp_send(const void *buf, int64_t bytes, int dest, int tag, mp_comm_t comm, int mode)
{
    const comm_entry_t *ce;
    mp_counts_t *k = mp_my_counts();
    int d = 0, rc;
    if ((rc = trusted_send_args(dest, comm, &ce, &d)) ||
        (d != MPI_PROC_NULL && (rc = check_send_count(bytes, mode))))
        return rc;
    count_blocking(k, bytes); /* counted once accepted */
    if (MP_UNLIKELY(d == MPI_PROC_NULL))
        return 0;
    if (MP_UNLIKELY(bytes > INT_MAX)) { /* MPI-4's large-count form, posted and waited for */
        MPI_Request r;
        if ((rc = issue_send(buf, bytes, d, tag, ce, mode, &r)))
            return rc;
        return wait_request(&r, NULL);
    }
    mp_blocking_enter();
    rc = mode == MP_SEND_SYNC ? pal_mpi.Ssend(buf, (int)bytes, MPI_BYTE, d, tag, ce->mpi)
                              : pal_mpi.Send(buf, (int)bytes, MPI_BYTE, d, tag, ce->mpi);
    return blocking_done(rc, mode == MP_SEND_SYNC ? "MPI_Ssend" : "MPI_Send", NULL, NULL);
}

/* A blocking receive of checked arguments, as mp_send: MPI_Recv in the blocking bracket. */
int mp_recv(void *buf, int64_t bytes, int source, int tag, mp_comm_t comm, mp_status_t *status)
{
    const comm_entry_t *ce;
    mp_counts_t *k = mp_my_counts();
    MPI_Status st;
    int s = 0, t = 0, rc;
    if ((rc = trusted_recv_args(source, tag, comm, &ce, &s, &t)) ||
        (s != MPI_PROC_NULL && (rc = check_recv_count(bytes))))
        return rc;
    count_blocking(k, bytes); /* counted once accepted */
    if (MP_UNLIKELY(s == MPI_PROC_NULL)) {
        if (status)
            mp_status_proc_null(status);
        return 0;
    }
    if (MP_UNLIKELY(bytes > INT_MAX)) {
        MPI_Request r;
        if ((rc = issue_recv(buf, bytes, s, t, ce, &r)))
            return rc;
        return wait_request(&r, status);
    }
    mp_blocking_enter();
    rc = pal_mpi.Recv(buf, (int)bytes, MPI_BYTE, s, t, ce->mpi, &st);
    return blocking_done(rc, "MPI_Recv", &st, status); /* truncation: MP_ETRUNCATE, the status unread */
}

/* Takes back a message this rank posted to itself (request q, to d = its own rank, on tag) whose
 * receive MPI then refused, when no earlier message from itself on that tag was pending: by
 * MPI's non-overtaking rule the first such message is this one.  MPICH cancels the send; Open MPI
 * 4.1 cancels no send: a small message is delivered into its own unexpected queue, the send
 * complete, and a large one waits for a receive, its send never complete.  Either is received here
 * by a matched receive into scratch memory (no other thread receives from itself on that tag,
 * below MPI_THREAD_MULTIPLE).  Nothing is recorded: the refused receive's error stays the call's.
 * 0 when nothing stays pending; 1 when the message could not be taken back (no memory, or MPI
 * refused a call here).  A send still waiting for its receive holds the caller's buffer: it is
 * not given up on, its message looked for until found. */
static MP_COLD int take_back_self_send(MPI_Request *q, int64_t bytes, int d, int tag, const comm_entry_t *ce)
{
    MPI_Status st;
    MPI_Message m = MPI_MESSAGE_NULL;
    MPI_Request r = MPI_REQUEST_NULL;
    void *scratch;
    int done = 0, found = 0, cancelled = 0, left = 0;
    (void)pal_mpi.Cancel(q);
    mp_blocking_enter();
    for (;;) { /* until the cancel is known, or the message found */
        if (mp_mpi_ended(pal_mpi.Test(q, &done, &st), q) != MPI_SUCCESS) {
            mp_blocking_leave();
            return 1;
        }
        if (done && (pal_mpi.Test_cancelled(&st, &cancelled) != MPI_SUCCESS || cancelled)) {
            mp_blocking_leave();
            return 0; /* cancelled: nothing was delivered */
        }
        if (pal_mpi.Improbe(d, tag, ce->mpi, &found, &m, &st) != MPI_SUCCESS) {
            found = 0; /* what a failed call wrote is not read */
            if (done) { /* delivered, and not found: it stays */
                left = 1;
                break;
            } /* else the send still holds the caller's buffer: asked again */
        }
        if (found || done) /* done, not cancelled, and not found: another receive took it */
            break;
        pal_yield();
    }
    mp_blocking_leave();
    if (found) {
        scratch = malloc(bytes > 0 ? (size_t)bytes : 1);
        left = !scratch || issue_mrecv(scratch, bytes, &m, &r) != 0 || wait_request(&r, NULL) != 0;
        free(scratch); /* a failed receive is complete (wait_request), or was never posted */
    }
    if (!done)
        (void)wait_request(q, NULL); /* the send completes once its message is received */
    return left;
}

/* Sendrecv as two requests, each waited for; the send completes even when the receive
 * failed.  For messages above INT_MAX bytes (MPI-4's large-count forms), and under Open MPI:
 * Open MPI 4.1 reports no truncation of a message a rank sends to itself when the receive was
 * posted before it (its MPI_Sendrecv posts the receive first), so a message to the calling
 * rank itself is posted before its receive; otherwise the receive goes first.  A receive refused
 * after a message to itself takes that message back (take_back_self_send), which needs it to be
 * the only message from itself pending on its tag: with an earlier one pending, the receive goes
 * first (it matches a message pending already, never the one posted after it, so the truncation
 * is reported). */
static int sendrecv_by_requests(const void *sendbuf, int64_t sendbytes, int d, int sendtag, void *recvbuf,
                                int64_t recvbytes, int s, int t, const comm_entry_t *ce, mp_status_t *status)
{
    MPI_Request r = MPI_REQUEST_NULL, q = MPI_REQUEST_NULL;
    MPI_Status pst;
    int to_self = !ce->is_inter && d == ce->rank, send_first = to_self, rrc = 1, src = 1, pending = 0, cls = 0;
    char text[2048];
    if (to_self) {
        if ((src = MP_MPI_CHECK(pal_mpi.Iprobe(d, sendtag, ce->mpi, &pending, &pst), "MPI_Iprobe")))
            return src; /* nothing posted */
        send_first = !pending;
    }
    if (send_first && (src = issue_send(sendbuf, sendbytes, d, sendtag, ce, MP_SEND_STANDARD, &q)) < 0)
        return src; /* nothing posted: no receive left waiting for a message that will not come */
    if (s != MPI_PROC_NULL)
        rrc = issue_recv(recvbuf, recvbytes, s, t, ce, &r);
    if (!send_first && d != MPI_PROC_NULL && !(to_self && rrc < 0)) /* a peer waits for it even so */
        src = issue_send(sendbuf, sendbytes, d, sendtag, ce, MP_SEND_STANDARD, &q);
    if (to_self && rrc < 0) { /* the message to itself would wait for a receive that was refused */
        if (!send_first || !take_back_self_send(&q, sendbytes, d, sendtag, ce))
            return rrc;
        mp_last_error(&cls, text, (int)sizeof text);
        return mp_fail_class(rrc, cls, "%s; the message this rank sent itself on tag %d could not be taken back "
                             "and stays pending", text, sendtag);
    }
    if (!send_first && src < 0 && rrc == 0) { /* MPI refused the send: the receive is taken back, not left waiting */
        (void)pal_mpi.Cancel(&r);
        (void)wait_request(&r, NULL);
        return src;
    }
    if (src == 0)
        src = wait_request(&q, NULL);
    if (rrc == 0)
        rrc = wait_request(&r, status);
    else if (rrc == 1 && status)
        mp_status_proc_null(status);
    return src < 0 ? src : rrc < 0 ? rrc : 0;
}

int mp_sendrecv(const void *sendbuf, int64_t sendbytes, int dest, int sendtag, void *recvbuf, int64_t recvbytes,
                int source, int recvtag, mp_comm_t comm, mp_status_t *status)
{
    const comm_entry_t *ce;
    mp_counts_t *k = mp_my_counts();
    MPI_Status st;
    int d = 0, s = 0, t = 0, rc;
    if ((rc = send_args(sendbuf, sendbytes, dest, sendtag, comm, MP_SEND_STANDARD, &ce, &d)) ||
        (rc = recv_args(recvbuf, recvbytes, source, recvtag, comm, &ce, &s, &t)))
        return rc;
    if (MP_UNLIKELY(sendbytes > 0 && recvbytes > 0 && (const char *)sendbuf < (const char *)recvbuf + recvbytes &&
                    (const char *)recvbuf < (const char *)sendbuf + sendbytes)) /* MPICH aborts on these */
        return mp_fail(MP_EINVAL, "the send and receive buffers of a sendrecv overlap; MPI forbids it "
                       "(receive into the send buffer with a separate copy, as sendrecv_replace does)");
    /* Both halves accepted before either is posted: a receive posted while its send is refused
     * would wait for the peer's message, which waits for this one (or keep it, unreported). */
    if ((d != MPI_PROC_NULL && (rc = check_send_count(sendbytes, MP_SEND_STANDARD))) ||
        (s != MPI_PROC_NULL && (rc = check_recv_count(recvbytes))))
        return rc;
    mp_count(&k->blocking_ops, 2); /* counted once accepted */
    count_p2p(k, sendbytes);
    count_p2p(k, recvbytes);
    if (PAL_MPI_BUILD_ABI == PAL_ABI_OPENMPI || MP_UNLIKELY(sendbytes > INT_MAX || recvbytes > INT_MAX))
        return sendrecv_by_requests(sendbuf, sendbytes, d, sendtag, recvbuf, recvbytes, s, t, ce, status);
    mp_blocking_enter();
    rc = pal_mpi.Sendrecv(sendbuf, (int)sendbytes, MPI_BYTE, d, sendtag, recvbuf, (int)recvbytes, MPI_BYTE, s, t,
                          ce->mpi, &st);
    return blocking_done(rc, "MPI_Sendrecv", &st, status);
}

int mp_mrecv_start(void *buf, int64_t bytes, mp_msg_t msg, mp_status_t *status, mp_token_t *token)
{
    slot_cache_t *c = my_cache();
    MPI_Message m = (MPI_Message)msg;
    slot_t *s;
    mp_req_t h;
    int rc;
    if (!token)
        return mp_fail_null_output("token");
    if ((rc = mrecv_args(buf, bytes, m, status)))
        return rc; /* an error, or 1: ProcNull's message, complete */
    if ((rc = slot_alloc(c, &s, &h)))
        return rc; /* the message stays the caller's */
    return token_started(c, s, h, issue_mrecv(buf, bytes, &m, &s->mpi), status, token);
}

int mp_mrecv(void *buf, int64_t bytes, mp_msg_t msg, mp_status_t *status)
{
    MPI_Message m = (MPI_Message)msg;
    MPI_Status st;
    int rc = mrecv_args(buf, bytes, m, status);
    if (rc)
        return rc < 0 ? rc : 0;
    if (MP_UNLIKELY(bytes > INT_MAX)) { /* MPI-4's large-count form, posted and waited for */
        MPI_Request r;
        if ((rc = issue_mrecv(buf, bytes, &m, &r)))
            return rc;
        return wait_request(&r, status);
    }
    mp_blocking_enter();
    rc = pal_mpi.Mrecv(buf, (int)bytes, MPI_BYTE, &m, &st);
    return blocking_done(rc, "MPI_Mrecv", &st, status);
}

int mp_imrecv(void *buf, int64_t bytes, mp_msg_t msg, void *obj, mp_req_t *req)
{
    MPI_Message m = (MPI_Message)msg;
    MPI_Request r = MPI_REQUEST_NULL;
    mp_claim_t k;
    int rc, proc_null;
    if (!req)
        return mp_fail_null_output("request");
    /* The arguments first (named even when the table is full), then the slot before MPI takes
     * the message: a full table leaves it the caller's. */
    if ((proc_null = mrecv_args(buf, bytes, m, NULL)) < 0)
        return proc_null;
    if ((rc = mp_claim(&k)))
        return rc;
    if (proc_null) { /* the message of MP_PROC_NULL: complete */
        count_p2p(counts_of(k.cache), bytes);
        slot_proc_null(k.slot, 1);
        *req = k.handle;
        return 0;
    }
    if ((rc = issue_mrecv(buf, bytes, &m, &r)))
        return mp_claim_posted(&k, rc, r, NULL, NULL, 1, req);
    count_p2p(counts_of(k.cache), bytes);
    return mp_claim_posted(&k, 0, r, bytes > 0 ? obj : NULL, NULL, 1, req);
}
