/* lists.c - mpcore tests: request lists: posting order, statuses, the errors before anything is
 * posted, and a full request table. */
#include "mpcore_tests.h"

static int g_list_reported;
static void list_count_report(void **slot, void *ctx)
{
    (void)ctx;
    g_list_reported += *slot != NULL;
}

/* Request lists (list_*): posting order, statuses, the specific errors before
 * anything is posted, a full and a freed list, truncation with the pending
 * entries kept, testall, and a list freed with operations in flight. */
static void posts_refused_by_mpi(mp_list_t l, int32_t *in, const int32_t *out);

void test_request_lists(void)
{
    static char fake_object[64];
    int32_t out[8] = { 1, 2, 3, 4, 5, 6, 7, 8 }, in[8] = { 0 }, small[1];
    mp_list_t l = NULL, freed = NULL;
    mp_status_t st[4];
    mp_req_t pend[4];
    mp_stats_t k0, k1;
    int ub = 0;
    CHECK(mp_tag_ub(&ub) == 0);
    CHECK(mp_list_create(0, &l) == MP_EINVAL && l == NULL);
    CHECK(mp_list_create(4, NULL) == MP_EINVAL);
    CHECK(mp_list_create(4, &l) == 0 && l != NULL && mp_list_count(l) == 0);
    mp_stats(&k0);
    /* Indices in posting order; statuses by index. */
    CHECK(mp_checked_list_irecv(l, in, 16, MP_ANY_SOURCE, 7, MP_COMM_SELF, NULL) == 0);
    CHECK(mp_checked_list_irecv(l, in + 4, 16, 0, 9, MP_COMM_SELF, NULL) == 1);
    CHECK(mp_checked_list_isend(l, out + 4, 16, 0, 9, MP_COMM_SELF, MP_SEND_STANDARD, NULL) == 2);
    CHECK(mp_checked_list_isend(l, out, 16, 0, 7, MP_COMM_SELF, MP_SEND_SYNC, NULL) == 3);
    CHECK(mp_list_count(l) == 4);
    /* What the list counted against the request pool: its four entries (less than a step of
     * MPICH's budget; the capacity where there is none); no index outside the capacity. */
    CHECK(mp_list_reserve(l, 3) == 4 && mp_list_reserve(l, 0) == 4);
    CHECK(mp_list_reserve(l, 4) == MP_EINVAL && mp_list_reserve(l, -1) == MP_EINVAL);
    CHECK(mp_list_reserve(NULL, 0) == MP_EHANDLE);
    /* Full: refused before anything is posted. */
    CHECK(mp_checked_list_isend(l, out, 4, 0, 7, MP_COMM_SELF, MP_SEND_STANDARD, NULL) == MP_EINVAL);
    CHECK(last_error_mentions("full"));
    CHECK(mp_list_waitall(l, st) == 0 && mp_list_count(l) == 0);
    CHECK(st[0].source == 0 && st[0].tag == 7 && st[0].bytes == 16 && st[0].error == 0 && in[0] == 1 && in[3] == 4);
    CHECK(st[1].tag == 9 && in[4] == 5 && in[7] == 8);
    CHECK(st[2].bytes == 0 && st[2].cancelled == 0 && st[3].source == 0);
    mp_stats(&k1);
    CHECK(k1.p2p_ops - k0.p2p_ops == 4 && k1.p2p_bytes - k0.p2p_bytes == 64);
    /* Bad arguments: the specific error, nothing posted. */
    CHECK(mp_checked_list_isend(l, out, 4, 1, 0, MP_COMM_SELF, MP_SEND_STANDARD, NULL) == MP_ERANK);
    CHECK(mp_checked_list_isend(l, out, 4, 0, -5, MP_COMM_SELF, MP_SEND_STANDARD, NULL) == MP_ETAG);
    if (ub < INT_MAX)
        CHECK(mp_checked_list_isend(l, out, 4, 0, ub + 1, MP_COMM_SELF, MP_SEND_STANDARD, NULL) == MP_ETAG);
    CHECK(mp_checked_list_isend(l, out, -4, 0, 0, MP_COMM_SELF, MP_SEND_STANDARD, NULL) == MP_ECOUNT);
    CHECK(mp_checked_list_isend(NULL, out, 4, 0, 0, MP_COMM_SELF, MP_SEND_STANDARD, NULL) == MP_EHANDLE);
    CHECK(mp_checked_list_isend(l, NULL, 4, 0, 0, MP_COMM_SELF, MP_SEND_STANDARD, NULL) == MP_EINVAL);
    CHECK(mp_checked_list_isend(l, out, 4, 0, 0, MP_COMM_SELF, 5, NULL) == MP_EINVAL);
    CHECK(mp_checked_list_isend(l, out, 4, 0, 0, 77, MP_SEND_STANDARD, NULL) == MP_EHANDLE);
    CHECK(mp_checked_list_irecv(l, in, 4, 2, 0, MP_COMM_SELF, NULL) == MP_ERANK);
    CHECK(mp_checked_list_irecv(l, in, 4, 0, -3, MP_COMM_SELF, NULL) == MP_ETAG);
    CHECK(mp_list_count(l) == 0 && mp_iprobe(MP_ANY_SOURCE, MP_ANY_TAG, MP_COMM_SELF, NULL) == 0);
    /* ProcNull: complete at once, ProcNull's status. */
    CHECK(mp_checked_list_irecv(l, in, 16, MP_PROC_NULL, 0, MP_COMM_SELF, NULL) == 0);
    CHECK(mp_checked_list_isend(l, out, 16, MP_PROC_NULL, 0, MP_COMM_SELF, MP_SEND_STANDARD, NULL) == 1);
    CHECK(mp_list_testall(l, st) == 1 && st[0].source == MP_PROC_NULL && st[0].tag == MP_ANY_TAG && st[0].bytes == 0);
    CHECK(mp_list_testall(l, st) == 1); /* empty */
    /* testall: 0 with nothing touched until the message is there. */
    CHECK(mp_checked_list_irecv(l, in, 16, 0, 11, MP_COMM_SELF, NULL) == 0);
    CHECK(mp_list_testall(l, st) == 0 && mp_list_count(l) == 1);
    CHECK(mp_checked_list_isend(l, out, 16, 0, 11, MP_COMM_SELF, MP_SEND_STANDARD, NULL) == 1);
    CHECK(mp_list_waitall(l, NULL) == 0 && mp_list_count(l) == 0);
    /* Truncation: the error; what MPI completed is released, what it left
     * pending (MPICH stops at the error; Open MPI completes the rest) stays at
     * its index for the next call. */
    CHECK(mp_checked_list_irecv(l, small, 4, 0, 12, MP_COMM_SELF, NULL) == 0);
    CHECK(mp_checked_list_isend(l, out, 8, 0, 12, MP_COMM_SELF, MP_SEND_STANDARD, NULL) == 1);
    CHECK(mp_checked_list_irecv(l, in, 16, 0, 13, MP_COMM_SELF, NULL) == 2);
    CHECK(mp_checked_list_isend(l, out + 4, 16, 0, 13, MP_COMM_SELF, MP_SEND_STANDARD, NULL) == 3);
    if (mp_mpi_abi() == MP_MPI_ABI_OPENMPI) {
        /* Open MPI 4.1 does not report the truncation of a message to self (nor
         * through isend/irecv): it is tested between two ranks (RequestList). */
        CHECK(mp_list_waitall(l, st) == 0 && st[0].bytes == 4);
    } else {
        CHECK(mp_list_waitall(l, st) == MP_ETRUNCATE);
        CHECK(st[0].error == MP_ETRUNCATE && last_error_mentions("trunc"));
    }
    if (mp_list_count(l) == 4) {
        int pending = 0;
        for (int i = 0; i < 4; i++) {
            pending += st[i].error == MP_EPENDING;
            CHECK(mp_list_pending(l, i) == (st[i].error == MP_EPENDING));
        }
        CHECK(pending > 0 && mp_list_pending(l, 0) == 0);
        CHECK(mp_list_pending(l, 4) == MP_EINVAL && mp_list_pending(l, -1) == MP_EINVAL);
        CHECK(mp_list_waitall(l, st) == 0 && mp_list_count(l) == 0);
        CHECK(st[0].bytes == 0 && st[0].error == 0); /* completed by the first call: empty */
    } else {
        CHECK(mp_list_count(l) == 0);
    }
    CHECK(in[0] == 5 && in[3] == 8);
    /* ProcNull operations in a set MPI fails: complete at their post, without an error. */
    if (mp_mpi_abi() != MP_MPI_ABI_OPENMPI) {
        CHECK(mp_checked_list_irecv(l, small, 4, 0, 20, MP_COMM_SELF, NULL) == 0);
        CHECK(mp_checked_list_isend(l, out, 8, 0, 20, MP_COMM_SELF, MP_SEND_STANDARD, NULL) == 1);
        CHECK(mp_checked_list_isend(l, out, 8, MP_PROC_NULL, 20, MP_COMM_SELF, MP_SEND_STANDARD, NULL) == 2);
        CHECK(mp_checked_list_irecv(l, in, 16, MP_PROC_NULL, 20, MP_COMM_SELF, NULL) == 3);
        CHECK(mp_list_waitall(l, st) == MP_ETRUNCATE && st[0].error == MP_ETRUNCATE);
        CHECK(st[2].error == 0 && st[2].bytes == 0 && st[2].cancelled == 0);
        CHECK(st[3].error == 0 && st[3].source == MP_PROC_NULL && st[3].tag == MP_ANY_TAG && st[3].bytes == 0);
        CHECK(mp_list_pending(l, 2) == 0 && mp_list_pending(l, 3) == 0);
        if (mp_list_count(l) > 0)
            CHECK(mp_list_waitall(l, NULL) == 0);
        CHECK(mp_list_count(l) == 0);
    }
    /* An owner object is reported while in flight, and no longer once complete. */
    CHECK(mp_checked_list_irecv(l, in, 16, 0, 14, MP_COMM_SELF, fake_object) == 0);
    g_list_reported = 0;
    CHECK(mp_gc_scan(MP_GC_MARK, list_count_report, NULL) == 1 && g_list_reported == 1);
    CHECK(mp_checked_list_isend(l, out, 16, 0, 14, MP_COMM_SELF, MP_SEND_STANDARD, NULL) == 1);
    CHECK(mp_list_waitall(l, NULL) == 0);
    g_list_reported = 0;
    CHECK(mp_gc_scan(MP_GC_MARK, list_count_report, NULL) == 0 && g_list_reported == 0);
    /* Freed with operations in flight: they become ordinary requests. */
    CHECK(mp_checked_list_irecv(l, in, 16, 0, 15, MP_COMM_SELF, fake_object) == 0);
    CHECK(mp_checked_list_irecv(l, in + 4, 16, 0, 16, MP_COMM_SELF, NULL) == 1);
    freed = l;
    CHECK(mp_list_free(l, pend) == 0 && pend[0] != MP_REQ_NULL && pend[1] != MP_REQ_NULL);
    CHECK(mp_list_count(freed) == MP_EHANDLE && last_error_mentions("freed"));
    CHECK(mp_checked_list_isend(freed, out, 4, 0, 0, MP_COMM_SELF, MP_SEND_STANDARD, NULL) == MP_EHANDLE);
    CHECK(mp_list_waitall(freed, NULL) == MP_EHANDLE && mp_list_free(freed, NULL) == MP_EHANDLE);
    g_list_reported = 0;
    CHECK(mp_gc_scan(MP_GC_MARK, list_count_report, NULL) == 1); /* the adopted request holds the object */
    CHECK(mp_send_start(out, 16, 0, 15, MP_COMM_SELF, MP_SEND_STANDARD, &(mp_token_t){ 0 }) >= 0);
    CHECK(mp_send_start(out + 4, 16, 0, 16, MP_COMM_SELF, MP_SEND_STANDARD, &(mp_token_t){ 0 }) >= 0);
    CHECK(mp_req_waitall(2, pend, st) == 0 && st[0].tag == 15 && st[1].tag == 16 && in[7] == 8);
    /* Freed without a place for the handles: the core orphans them, the sweep frees them. */
    CHECK(mp_list_create(2, &l) == 0);
    CHECK(mp_checked_list_irecv(l, in, 16, 0, 17, MP_COMM_SELF, fake_object) == 0);
    CHECK(mp_list_free(l, NULL) == 0);
    CHECK(mp_send_start(out, 16, 0, 17, MP_COMM_SELF, MP_SEND_STANDARD, &(mp_token_t){ 0 }) >= 0);
    CHECK(mp_req_sweep() == 0 && mp_req_active() == 0);
    /* The checked entries post the same way, without the checks: 0 when posted (the common post
     * by the tail call into MPI, a wildcard one by the general path). */
    CHECK(mp_list_create(4, &l) == 0);
    CHECK(mp_list_irecv(l, in, 16, MP_ANY_SOURCE, MP_ANY_TAG, MP_COMM_SELF, NULL) == 0);
    CHECK(mp_list_isend(l, out, 16, 0, 18, MP_COMM_SELF, MP_SEND_STANDARD, NULL) == 0 && mp_list_count(l) == 2);
    CHECK(mp_list_waitall(l, st) == 0 && st[0].tag == 18 && st[0].source == 0);
    CHECK(mp_list_isend(l, out, 4, 0, 0, -4, MP_SEND_STANDARD, NULL) == MP_EHANDLE && mp_list_count(l) == 0);
    posts_refused_by_mpi(l, in, out);
    CHECK(mp_list_free(l, NULL) == 0);
    CHECK(mp_req_active() == 0);
}

/* The functions refusing_send and refusing_recv stand in for. */
static __typeof__(MPI_Isend) *g_real_isend, *g_real_issend;
static __typeof__(MPI_Irecv) *g_real_irecv;

/* A post MPI refuses: its common path ends in a tail call into MPI, so MPI's own code
 * comes back (> 0) with the entry still counted, and list_refused gives the entry back and
 * records the error under the call's name; the list then posts into that entry again.  The
 * general path (a wildcard) translates the refusal itself, nothing counted; a C caller's checked
 * post gives the entry back itself and returns MP_EMPI. */
static void posts_refused_by_mpi(mp_list_t l, int32_t *in, const int32_t *out)
{
    mp_status_t st[2];
    mp_stats_t k0, k1;
    int rc;
    g_real_isend = pal_mpi.Isend, g_real_issend = pal_mpi.Issend, g_real_irecv = pal_mpi.Irecv;
    pal_mpi.Isend = refusing_send, pal_mpi.Issend = refusing_send, pal_mpi.Irecv = refusing_recv;
    mp_stats(&k0);
    rc = mp_list_irecv(l, in, 16, 0, 19, MP_COMM_SELF, NULL);
    CHECK(rc > 0 && mp_list_count(l) == 1);
    CHECK(mp_list_refused(l, 1, rc) == MP_EINVAL && mp_list_refused(l, 0, 0) == MP_EINVAL && mp_list_count(l) == 1);
    CHECK(mp_list_refused(l, 0, rc) == MP_EMPI && last_error_mentions("MPI_Irecv") && mp_list_count(l) == 0);
    rc = mp_list_isend(l, out, 16, 0, 19, MP_COMM_SELF, MP_SEND_STANDARD, NULL);
    CHECK(rc > 0 && mp_list_refused(l, 0, rc) == MP_EMPI && last_error_mentions("MPI_Isend") && mp_list_count(l) == 0);
    rc = mp_list_isend(l, out, 16, 0, 19, MP_COMM_SELF, MP_SEND_SYNC, NULL);
    CHECK(rc > 0 && mp_list_refused(l, 0, rc) == MP_EMPI && last_error_mentions("MPI_Issend") && mp_list_count(l) == 0);
    CHECK(mp_list_irecv(l, in, 16, MP_ANY_SOURCE, 19, MP_COMM_SELF, NULL) == MP_EMPI &&
          last_error_mentions("MPI_Irecv") && mp_list_count(l) == 0);
    CHECK(mp_checked_list_isend(l, out, 16, 0, 19, MP_COMM_SELF, MP_SEND_SYNC, NULL) == MP_EMPI &&
          last_error_mentions("MPI_Issend") && mp_list_count(l) == 0);
    mp_stats(&k1);
    CHECK(k1.mpi_errors == k0.mpi_errors + 5);
    pal_mpi.Isend = g_real_isend, pal_mpi.Issend = g_real_issend, pal_mpi.Irecv = g_real_irecv;
    /* The entry given back is posted again, and completes. */
    CHECK(mp_list_irecv(l, in, 16, 0, 19, MP_COMM_SELF, NULL) == 0);
    CHECK(mp_list_isend(l, out, 16, 0, 19, MP_COMM_SELF, MP_SEND_STANDARD, NULL) == 0);
    CHECK(mp_list_waitall(l, st) == 0 && st[0].tag == 19 && in[3] == out[3] && mp_list_count(l) == 0);
}

/* A list freed while the request table is full: what the core cannot hand over stays in
 * the list (list_pending 1, its object still reported, the list not freed, MP_REQ_NULL as
 * its handle), what it can is handed over; once slots are free again the rest follows.
 * The table is filled with adopted null requests (a slot each, nothing posted). */
/* Completes n requests without a status, in sets of at most 4096. */
static void waitall_in_sets(mp_req_t *reqs, int n)
{
    for (int i = 0; i < n; i += 4096)
        CHECK(mp_req_waitall(n - i < 4096 ? n - i : 4096, reqs + i, NULL) == 0);
}

static void full_table_list_kept(mp_list_t l, mp_req_t *fill, int *count, mp_req_t pend[2]);
static void list_budget_across_lists(void);

void test_full_table(void)
{
    static char fake_object[64];
    enum { MAX = MP_SLOT_LIMIT };
    mp_req_t *fill = malloc(sizeof(mp_req_t) * (MAX + 1)), pend[2];
    int32_t out[4] = { 1, 2, 3, 4 }, in[8] = { 0 };
    mp_status_t st[2];
    mp_list_t l = NULL;
    mp_msg_t msg = 0;
    mp_token_t sent = 0;
    mp_comm_t ring = MP_COMM_NULL;
    int32_t win = -1;
    static int32_t exposed[4];
    int n = 0, rc = 0, have_win, held;
    CHECK(fill != NULL);
    if (!fill)
        return;
    CHECK(mp_list_create(2, &l) == 0);
    CHECK(mp_checked_list_irecv(l, in, 16, 0, 31, MP_COMM_SELF, fake_object) == 0);
    CHECK(mp_checked_list_irecv(l, in + 4, 16, 0, 32, MP_COMM_SELF, fake_object) == 1);
    CHECK(mp_send_start(out, 16, 0, 33, MP_COMM_SELF, MP_SEND_STANDARD, &sent) >= 0);
    CHECK(mp_mprobe(0, 33, MP_COMM_SELF, &msg, st) == 0);
    /* A ring of one (its two neighbours: itself) and a window over 4 ints, locked, made before the
     * table fills: their requests are refused below too. */
    CHECK(mp_cart_create(MP_COMM_SELF, 1, (int32_t[]){ 1 }, (int32_t[]){ 1 }, 0, &ring) == 0);
    /* Open MPI 4.1 makes no window in a singleton (MPI_ERR_WIN: no one-sided component). */
    have_win = mp_win_create(MP_COMM_SELF, exposed, sizeof exposed, 4, MP_INFO_NULL, &win) == 0;
    CHECK(have_win || PAL_MPI_BUILD_ABI == PAL_ABI_OPENMPI);
    CHECK(!have_win || mp_win_sync(win, MP_WIN_LOCK_EXCLUSIVE, 0, 0) == 0);
    /* A send to itself pending (MPICH matches it only when received) holds an entry as a token. */
    held = sent != 0;
    CHECK(mp_req_active() == held);
    while (n <= MAX && (rc = mp_adopt_request(MPI_REQUEST_NULL, NULL, 0, &fill[n])) == 0)
        n++;
    CHECK(rc == MP_ENOMEM && last_error_mentions("too many pending requests"));
    CHECK(n > 0 && n <= MAX && mp_req_active() == n + held);
    /* The blocking operations in two steps are refused alike, nothing posted: a bad argument
     * first, then the table (the matched message stays the caller's, received below). */
    {
        mp_token_t none = 5;
        CHECK(mp_send_start(out, -1, 0, 36, MP_COMM_SELF, MP_SEND_STANDARD, &none) == MP_ECOUNT);
        CHECK(mp_send_start(out, 16, 0, 36, MP_COMM_SELF, MP_SEND_STANDARD, &none) == MP_ENOMEM &&
              last_error_mentions("too many pending requests"));
        CHECK(mp_recv_start(in, 16, 0, 36, MP_COMM_SELF, st, &none) == MP_ENOMEM);
        CHECK(mp_mrecv_start(in, 16, msg, st, &none) == MP_ENOMEM);
        CHECK(none == 5 && in[0] == 0 && mp_req_active() == n + held);
        /* ProcNull's complete at once and take no entry. */
        CHECK(mp_send_start(out, 16, MP_PROC_NULL, 36, MP_COMM_SELF, MP_SEND_STANDARD, &none) == 1);
        CHECK(mp_iprobe(0, 36, MP_COMM_SELF, st) == 0); /* nothing was sent */
    }
    /* Requests made outside the point-to-point path (collectives, neighbourhood collectives,
     * matched receives, RMA) are refused before MPI sees them: nothing left in flight that no
     * slot holds (the buffers stay untouched through later progress and a flush, and the
     * matched message stays the caller's). */
    {
        int32_t sum[4] = { 0 };
        mp_coll_t c = { .kind = MP_COLL_ALLREDUCE, .dtype = MP_DT_INT32, .elem_size = 4, .op = MP_OP_SUM,
                        .count = 4, .sendbuf = out, .recvbuf = sum };
        mp_req_t none = 77;
        int32_t around[2] = { 0 }, got[4] = { 0 };
        mp_coll_t nb = { .kind = MP_NEIGHBOR_ALLGATHER, .dtype = MP_DT_INT32, .elem_size = 4, .count = 1,
                         .sendbuf = out, .recvbuf = around };
        mp_coll_t bad = c;
        bad.dtype = 999; /* a bad argument is named before the table's refusal */
        CHECK(mp_coll_post(MP_COMM_SELF, &bad, NULL, fake_object, &none) == MP_EINVAL);
        CHECK(mp_imrecv(in, -1, msg, fake_object, &none) == MP_ECOUNT);
        CHECK(mp_coll_post(MP_COMM_SELF, &c, NULL, fake_object, &none) == MP_ENOMEM);
        CHECK(mp_imrecv(in, 16, msg, fake_object, &none) == MP_ENOMEM);
        CHECK(mp_neighbor_post(ring, &nb, NULL, NULL, NULL, NULL, fake_object, &none) == MP_ENOMEM);
        if (have_win) {
            CHECK(mp_win_put(win, out, 4, MP_DT_INT32, 4, 0, 0, fake_object, &none) == MP_ENOMEM);
            CHECK(mp_win_get(win, got, 4, MP_DT_INT32, 4, 0, 0, fake_object, &none) == MP_ENOMEM);
            CHECK(mp_win_sync(win, MP_WIN_FLUSH, 0, 0) == 0);
        }
        CHECK(around[0] == 0 && around[1] == 0 && exposed[0] == 0 && exposed[3] == 0 && got[0] == 0 && got[3] == 0);
        CHECK(none == 77); /* no request handed out by any refusal */
        CHECK(mp_list_testall(l, st) == 0); /* MPI makes progress; the list's two still wait */
        CHECK(sum[0] == 0 && sum[3] == 0 && in[0] == 0 && in[3] == 0 && mp_req_active() == n + held);
        CHECK(mp_mrecv(in, 16, msg, st) == 0 && st[0].tag == 33 && in[3] == 4);
        CHECK(sent == 0 || mp_token_wait(sent, NULL) == 0);
        CHECK(mp_req_active() == n); /* the token's entry given back */
        CHECK(!have_win || (mp_win_sync(win, MP_WIN_UNLOCK, 0, 0) == 0 && mp_win_free(win) == 0));
        CHECK(mp_comm_free(ring) == 0);
        in[0] = in[3] = 0;
    }
    if (MP_REQUEST_BUDGET) {
        /* MPICH: the list's two receives count against the request pool with the table, which
         * therefore took two fewer; another list's post is refused, nothing posted; and freeing
         * the list hands both over, since their budget goes with them. */
        mp_list_t other = NULL;
        CHECK(n == MAX - 2 - held);
        CHECK(mp_list_create(4, &other) == 0);
        CHECK(mp_checked_list_irecv(other, in, 16, 0, 34, MP_COMM_SELF, fake_object) == MP_ENOMEM &&
              last_error_mentions("reserved by request lists"));
        CHECK(mp_checked_list_irecv(other, in, -1, 0, 34, MP_COMM_SELF, fake_object) == MP_ECOUNT); /* named first */
        CHECK(mp_list_count(other) == 0 && mp_list_free(other, NULL) == 0);
        pend[0] = pend[1] = 12345;
        CHECK(mp_list_free(l, pend) == 0 && pend[0] != MP_REQ_NULL && pend[1] != MP_REQ_NULL);
        CHECK(mp_req_active() == n + 2);
        waitall_in_sets(fill, n);
        n = 0;
        list_budget_across_lists();
    } else {
        full_table_list_kept(l, fill, &n, pend);
    }
    CHECK(mp_send_start(out, 16, 0, 31, MP_COMM_SELF, MP_SEND_STANDARD, &(mp_token_t){ 0 }) >= 0);
    CHECK(mp_send_start(out, 16, 0, 32, MP_COMM_SELF, MP_SEND_STANDARD, &(mp_token_t){ 0 }) >= 0);
    CHECK(mp_req_waitall(2, pend, st) == 0 && st[0].tag == 31 && st[1].tag == 32 && in[3] == 4 && in[7] == 4);
    CHECK(mp_req_active() == 0);
    free(fill);
}

/* Open MPI (no pool budget): a list whose operations find no slot when it is freed keeps them. */
static void full_table_list_kept(mp_list_t l, mp_req_t *fill, int *count, mp_req_t pend[2])
{
    mp_req_t later[2];
    int n = *count;
    /* Nothing can be handed over: the list keeps both, and stays usable. */
    pend[0] = pend[1] = 12345;
    CHECK(mp_list_free(l, pend) == MP_ENOMEM && pend[0] == MP_REQ_NULL && pend[1] == MP_REQ_NULL);
    CHECK(mp_list_count(l) == 2 && mp_list_pending(l, 0) == 1 && mp_list_pending(l, 1) == 1);
    g_list_reported = 0;
    CHECK(mp_gc_scan(MP_GC_MARK, list_count_report, NULL) == 2 && g_list_reported == 2);
    /* One slot free: the first is handed over, the second stays. */
    CHECK(mp_req_wait(fill[--n], NULL) == 0);
    CHECK(mp_list_free(l, pend) == MP_ENOMEM && pend[0] != MP_REQ_NULL && pend[1] == MP_REQ_NULL);
    CHECK(mp_list_pending(l, 0) == 0 && mp_list_pending(l, 1) == 1 && mp_req_live(pend[0]));
    /* Every slot free again: the second follows, the list is freed. */
    waitall_in_sets(fill, n);
    n = 0;
    CHECK(mp_list_free(l, later) == 0 && later[0] == MP_REQ_NULL && later[1] != MP_REQ_NULL);
    CHECK(mp_list_count(l) == MP_EHANDLE);
    pend[1] = later[1];
    *count = n;
}

/* MPICH: a list larger than the request pool is refused at the post that would pass the
 * budget (nothing posted, instead of MPICH aborting the process), another list then gets no
 * entry, and freeing the list hands its receives over as requests, which are cancelled. */
static void list_budget_across_lists(void)
{
    enum { MAX = MP_SLOT_LIMIT, CACHED = SLOT_CACHE + 2 }; /* this thread's cache, and the two requests held over */
    mp_list_t big = NULL, other = NULL;
    mp_req_t *pend = malloc(sizeof(mp_req_t) * (MAX + 16));
    int n = 0, rc = 0;
    CHECK(pend != NULL);
    if (!pend)
        return;
    CHECK(mp_list_create(MAX + 16, &big) == 0);
    CHECK(mp_list_reserve(big, 0) == 1024); /* one step */
    while (n < MAX + 16 && (rc = mp_checked_list_irecv(big, NULL, 0, 0, 35, MP_COMM_SELF, NULL)) == n)
        n++;
    /* What the thread cached (counted as held) is all the list could not have. */
    CHECK(rc == MP_ENOMEM && last_error_mentions("reserved by request lists"));
    CHECK(n <= MAX && n >= MAX - CACHED && mp_list_count(big) == n);
    /* The reservation a checked caller asks for is refused alike, and nothing changed. */
    CHECK(mp_list_reserve(big, n) == MP_ENOMEM && mp_list_reserve(big, n - 1) == n);
    CHECK(mp_list_create(1, &other) == 0);
    CHECK(mp_checked_list_irecv(other, NULL, 0, 0, 35, MP_COMM_SELF, NULL) == MP_ENOMEM && mp_list_count(other) == 0);
    CHECK(mp_list_free(other, NULL) == 0);
    CHECK(mp_list_free(big, pend) == 0);
    for (int i = 0; i < n; i++)
        CHECK(mp_req_cancel(pend[i]) == 0);
    waitall_in_sets(pend, n);
    CHECK(mp_req_active() == 2); /* the two held over */
    free(pend);
}

/* ---- ranges of a list (list_waitall_range, list_testall_range) ---- */

static const mp_status_t k_mark = { .source = 0x5e, .tag = 0x5e, .error = 0x5e, .cancelled = 0x5e, .bytes = 0x5e };

/* 1 when none of the n statuses was written (each still k_mark). */
static int untouched(const mp_status_t *st, int n)
{
    for (int i = 0; i < n; i++)
        if (memcmp(&st[i], &k_mark, sizeof k_mark) != 0)
            return 0;
    return 1;
}

/* 1 when st is the empty status of a send (or of an operation an earlier call completed). */
static int empty_status(const mp_status_t *st)
{
    return st->source == 0 && st->tag == 0 && st->error == 0 && st->cancelled == 0 && st->bytes == 0;
}

static void ranges_refused(mp_list_t l, mp_status_t *st);
static void range_tests(mp_list_t l, int32_t (*in)[4], int32_t (*out)[4]);
static void ranges_then_free(int32_t (*in)[4], int32_t (*out)[4]);
static void range_pieces(int32_t (*in)[4], int32_t (*out)[4]);
static void mark_forgets_finished(int32_t (*in)[4], int32_t (*out)[4]);

/* Ranges of a list: completed in any order, each with its statuses (statuses[j] for entry
 * first + j: sources, tags, byte counts, ProcNull's); an entry once and only once; the list
 * emptied (its counts folded, the next post at index 0) with its last open entry and not
 * before; the objects of open entries alone reported to the GC; a whole-list wait after ranges
 * completes what is left; bad ranges refused with nothing touched. */
void test_list_ranges(void)
{
    static char objs[8][16];
    int32_t out[8][4], in[8][4] = { { 0 } };
    mp_status_t st[8];
    mp_stats_t k0, k1;
    mp_list_t l = NULL;
    int active = mp_req_active();
    for (int i = 0; i < 8; i++)
        for (int j = 0; j < 4; j++)
            out[i][j] = 100 * i + j;
    CHECK(mp_list_create(8, &l) == 0);
    mp_stats(&k0);
    CHECK(mp_checked_list_irecv(l, in[0], 16, 0, 40, MP_COMM_SELF, objs[0]) == 0);
    CHECK(mp_checked_list_irecv(l, in[1], 16, MP_ANY_SOURCE, 41, MP_COMM_SELF, objs[1]) == 1);
    CHECK(mp_checked_list_isend(l, out[0], 16, 0, 40, MP_COMM_SELF, MP_SEND_STANDARD, objs[2]) == 2);
    CHECK(mp_checked_list_isend(l, out[1], 8, 0, 41, MP_COMM_SELF, MP_SEND_SYNC, objs[3]) == 3);
    CHECK(mp_checked_list_irecv(l, in[2], 16, MP_PROC_NULL, 42, MP_COMM_SELF, objs[4]) == 4);
    CHECK(mp_checked_list_isend(l, out[2], 16, MP_PROC_NULL, 42, MP_COMM_SELF, MP_SEND_STANDARD, objs[5]) == 5);
    CHECK(gc_objects_reported() == 4); /* a ProcNull operation holds no object: complete at its post */

    /* The second half first: the sends and the ProcNull entries. */
    for (int i = 0; i < 8; i++)
        st[i] = k_mark;
    CHECK(mp_list_waitall_range(l, 2, 4, st) == 0);
    CHECK(empty_status(&st[0]) && empty_status(&st[1]) && empty_status(&st[3]));
    CHECK(st[2].source == MP_PROC_NULL && st[2].tag == MP_ANY_TAG && st[2].bytes == 0 && st[2].error == 0);
    CHECK(untouched(&st[4], 4));
    CHECK(mp_list_count(l) == 6 && mp_list_pending(l, 2) == 0 && mp_list_pending(l, 5) == 0);
    CHECK(gc_objects_reported() == 2); /* the receives' */
    mp_stats(&k1);
    CHECK(k1.p2p_ops == k0.p2p_ops); /* counted when the list is emptied */

    ranges_refused(l, st);

    /* Posts go on after the last entry while any is open. */
    CHECK(mp_checked_list_irecv(l, in[3], 16, 0, 43, MP_COMM_SELF, objs[6]) == 6);
    CHECK(mp_checked_list_isend(l, out[3], 12, 0, 43, MP_COMM_SELF, MP_SEND_STANDARD, NULL) == 7);
    /* Then the first half: its receives' statuses, and the list still holds the last two. */
    for (int i = 0; i < 8; i++)
        st[i] = k_mark;
    CHECK(mp_list_waitall_range(l, 0, 2, st) == 0);
    CHECK(st[0].source == 0 && st[0].tag == 40 && st[0].bytes == 16 && st[0].error == 0 && st[0].cancelled == 0);
    CHECK(st[1].source == 0 && st[1].tag == 41 && st[1].bytes == 8 && st[1].error == 0);
    CHECK(in[0][0] == 0 && in[0][3] == 3 && in[1][0] == 100 && in[1][1] == 101 && in[1][2] == 0);
    CHECK(untouched(&st[2], 6) && mp_list_count(l) == 8);
    CHECK(gc_objects_reported() == 1);
    CHECK(mp_list_waitall_range(l, 0, 1, st) == MP_EINVAL && last_error_mentions("operation 0 was completed"));
    /* The whole list after ranges: what is left, the rest with empty statuses; emptied. */
    for (int i = 0; i < 8; i++)
        st[i] = k_mark;
    CHECK(mp_list_waitall(l, st) == 0 && mp_list_count(l) == 0);
    for (int i = 0; i < 6; i++)
        CHECK(empty_status(&st[i]));
    CHECK(st[6].source == 0 && st[6].tag == 43 && st[6].bytes == 12 && empty_status(&st[7]) && in[3][2] == 302);
    CHECK(gc_objects_reported() == 0);
    mp_stats(&k1);
    CHECK(k1.p2p_ops - k0.p2p_ops == 8 && k1.p2p_bytes - k0.p2p_bytes == 16 * 5 + 8 + 12 + 16);

    range_tests(l, in, out);
    mark_forgets_finished(in, out);
    CHECK(mp_list_free(l, NULL) == 0);
    ranges_then_free(in, out);
    range_pieces(in, out);
    CHECK(mp_req_active() == active);
}

/* Ranges refused with nothing touched: the statuses, the entries (still pending), the count. */
static void ranges_refused(mp_list_t l, mp_status_t *st)
{
    static const struct {
        int first, count;
        const char *says;
    } bad[] = {
        { -1, 1, "must not be negative" },   { 0, -1, "must not be negative" },
        { 0, 7, "[0, 7) is not within the list's 6" }, { 5, 2, "[5, 7) is not within" },
        { 7, 0, "[7, 7) is not within" },   { INT_MAX, INT_MAX, "is not within" },
        { 1, 2, "operation 2 was completed by an earlier call" }, /* 2 is a completed send */
        { 2, 1, "operation 2 was completed" }, { 5, 1, "operation 5 was completed" },
    };
    for (size_t b = 0; b < sizeof bad / sizeof *bad; b++) {
        for (int i = 0; i < 8; i++)
            st[i] = k_mark;
        CHECK(mp_list_waitall_range(l, bad[b].first, bad[b].count, st) == MP_EINVAL && last_error_mentions(bad[b].says));
        CHECK(mp_list_testall_range(l, bad[b].first, bad[b].count, st) == MP_EINVAL && last_error_mentions(bad[b].says));
        CHECK(untouched(st, 8) && mp_list_count(l) == 6);
        CHECK(mp_list_pending(l, 0) == 1 && mp_list_pending(l, 1) == 1 && gc_objects_reported() == 2);
    }
    /* An empty range, also at the end: nothing to do. */
    CHECK(mp_list_waitall_range(l, 6, 0, st) == 0 && mp_list_testall_range(l, 0, 0, st) == 1 && untouched(st, 8));
    CHECK(mp_list_waitall_range(NULL, 0, 0, st) == MP_EHANDLE && mp_list_testall_range(NULL, 0, 1, st) == MP_EHANDLE);
}

/* testall_range: 0 with nothing touched while an operation is incomplete, then as the wait;
 * the completed entries keep their indices until the last one completes. */
static void range_tests(mp_list_t l, int32_t (*in)[4], int32_t (*out)[4])
{
    mp_status_t st[4];
    int rc;
    CHECK(mp_checked_list_irecv(l, in[4], 16, 0, 44, MP_COMM_SELF, NULL) == 0); /* its message comes last */
    CHECK(mp_checked_list_irecv(l, in[5], 16, 0, 45, MP_COMM_SELF, NULL) == 1);
    CHECK(mp_checked_list_isend(l, out[5], 16, 0, 45, MP_COMM_SELF, MP_SEND_STANDARD, NULL) == 2);
    for (int i = 0; i < 4; i++)
        st[i] = k_mark;
    CHECK(mp_list_testall_range(l, 0, 2, st) == 0 && untouched(st, 4));
    CHECK(mp_list_pending(l, 0) == 1 && mp_list_count(l) == 3);
    while ((rc = mp_list_testall_range(l, 1, 2, st)) == 0)
        ;
    CHECK(rc == 1 && st[0].tag == 45 && st[0].bytes == 16 && empty_status(&st[1]) && in[5][3] == 503);
    CHECK(untouched(&st[2], 2) && mp_list_count(l) == 3 && mp_list_testall_range(l, 0, 1, st) == 0);
    CHECK(mp_checked_send(out[4], 16, 0, 44, MP_COMM_SELF, MP_SEND_STANDARD) == 0);
    while ((rc = mp_list_testall_range(l, 0, 1, st)) == 0)
        ;
    CHECK(rc == 1 && st[0].tag == 44 && in[4][1] == 401 && mp_list_count(l) == 0);
    CHECK(mp_checked_list_isend(l, out[4], 0, MP_PROC_NULL, 44, MP_COMM_SELF, MP_SEND_STANDARD, NULL) == 0);
    CHECK(mp_list_testall_range(l, 0, 1, NULL) == 1 && mp_list_count(l) == 0);
}

/* A list freed after ranges: exactly its open entries become requests (with their objects),
 * the completed ones give MP_REQ_NULL. */
static void ranges_then_free(int32_t (*in)[4], int32_t (*out)[4])
{
    static char obj[3][8];
    mp_list_t l = NULL;
    mp_req_t pend[4] = { 7, 7, 7, 7 };
    mp_status_t st[2];
    int active = mp_req_active();
    CHECK(mp_list_create(4, &l) == 0);
    CHECK(mp_checked_list_irecv(l, in[6], 16, 0, 46, MP_COMM_SELF, obj[0]) == 0);
    CHECK(mp_checked_list_irecv(l, in[7], 16, 0, 47, MP_COMM_SELF, obj[1]) == 1);
    CHECK(mp_checked_list_isend(l, out[7], 16, 0, 47, MP_COMM_SELF, MP_SEND_STANDARD, obj[2]) == 2);
    CHECK(mp_checked_list_irecv(l, in[5], 16, 0, 48, MP_COMM_SELF, NULL) == 3);
    CHECK(mp_list_waitall_range(l, 1, 2, NULL) == 0 && gc_objects_reported() == 1);
    CHECK(mp_list_free(l, pend) == 0);
    CHECK(pend[0] != MP_REQ_NULL && pend[1] == MP_REQ_NULL && pend[2] == MP_REQ_NULL && pend[3] != MP_REQ_NULL);
    CHECK(mp_req_active() == active + 2 && gc_objects_reported() == 1); /* the adopted request holds its object */
    CHECK(mp_checked_send(out[6], 16, 0, 46, MP_COMM_SELF, MP_SEND_STANDARD) == 0);
    CHECK(mp_checked_send(out[5], 16, 0, 48, MP_COMM_SELF, MP_SEND_STANDARD) == 0);
    pend[1] = pend[3];
    CHECK(mp_req_waitall(2, pend, st) == 0 && st[0].tag == 46 && st[1].tag == 48 && in[6][2] == 602);
    CHECK(mp_list_waitall_range(l, 0, 0, NULL) == MP_EHANDLE && last_error_mentions("freed"));
    CHECK(mp_list_testall_range(l, 0, 0, NULL) == MP_EHANDLE);
}

/* A range's receive posted with AnyTag: its record goes when the range completes it, although
 * the list still holds others; one that took a piece of an object payload fails with
 * MP_EPIECE and the piece is recorded for its object receive. */
static void range_pieces(int32_t (*in)[4], int32_t (*out)[4])
{
    mp_list_t l = NULL;
    mp_status_t st[2];
    mp_token_t t;
    int base = atomic_load(&mp_g_wild_count), reserved = mp_g_reserved_above;
    CHECK(mp_list_create(4, &l) == 0 && mp_reserve_tags(1000) == 0);
    CHECK(mp_checked_list_irecv(l, in[0], 16, 0, MP_ANY_TAG, MP_COMM_SELF, NULL) == 0);
    CHECK(mp_checked_list_isend(l, out[0], 16, 0, 49, MP_COMM_SELF, MP_SEND_STANDARD, NULL) == 1);
    CHECK(mp_checked_list_irecv(l, in[1], 16, 0, MP_ANY_TAG, MP_COMM_SELF, NULL) == 2);
    CHECK(mp_checked_list_irecv(l, in[2], 16, 0, 50, MP_COMM_SELF, NULL) == 3);
    CHECK(atomic_load(&mp_g_wild_count) == base + 2);
    CHECK(mp_list_waitall_range(l, 0, 2, st) == 0 && st[0].tag == 49 && st[0].error == 0);
    CHECK(atomic_load(&mp_g_wild_count) == base + 1 && mp_list_count(l) == 4);
    /* A piece (a tag above the bound) taken by the second. */
    CHECK(mp_send_start(out[1], 16, 0, 1001, MP_COMM_SELF, MP_SEND_STANDARD, &t) == 1);
    CHECK(mp_list_waitall_range(l, 2, 1, st) == MP_EPIECE && last_error_mentions("piece of an object payload"));
    CHECK(st[0].error == MP_EPIECE && st[0].tag == 1001 && st[0].bytes == 16);
    CHECK(atomic_load(&mp_g_wild_count) == base && mp_list_count(l) == 4);
    CHECK(mp_piece_taken(MP_COMM_SELF, 0, 1001, NULL) == MP_EPIECE);
    CHECK(mp_list_waitall_range(l, 2, 1, st) == MP_EINVAL);
    CHECK(mp_checked_send(out[2], 16, 0, 50, MP_COMM_SELF, MP_SEND_STANDARD) == 0);
    CHECK(mp_list_waitall_range(l, 3, 1, st) == 0 && st[0].tag == 50 && mp_list_count(l) == 0);
    mp_g_reserved_above = reserved;
    CHECK(mp_list_free(l, NULL) == 0);
}

/* A mark that may call MPI (no thread in a blocking call) forgets the object of a list entry MPI
 * has finished, as it does a slot's: the buffer is no longer pinned, the entry stays open, and
 * its completion still gets MPI's status (MPI_Request_get_status freed nothing). */
static void mark_forgets_finished(int32_t (*in)[4], int32_t (*out)[4])
{
    static char objs[3][8];
    mp_list_t l = NULL;
    mp_status_t st[3];
    mp_gc_stats_t g0, g1;
    CHECK(mp_list_create(4, &l) == 0);
    CHECK(mp_checked_list_isend(l, out[0], 16, 0, 60, MP_COMM_SELF, MP_SEND_STANDARD, objs[0]) == 0);
    CHECK(mp_checked_list_irecv(l, in[0], 16, 0, 61, MP_COMM_SELF, objs[1]) == 1);
    CHECK(mp_checked_list_isend(l, out[1], 12, 0, 62, MP_COMM_SELF, MP_SEND_STANDARD, objs[2]) == 2);
    CHECK(mp_checked_recv(in[1], 16, 0, 60, MP_COMM_SELF, NULL) == 0 && in[1][1] == out[0][1]); /* entry 0 delivered */
    CHECK(gc_objects_reported() == 3); /* a mark without MPI: every open entry's object */
    mp_gc_stats(&g0);
    g_reported = 0;
    (void)mp_gc_scan(MP_GC_MARK, count_report, NULL);
    mp_gc_stats(&g1);
    /* Entry 0's send finished; entry 1 waits for a message not sent yet.  Entry 2 (to self,
     * unreceived) may have gone out eagerly: pinned or forgotten, it is counted once. */
    CHECK(g1.released_at_mark - g0.released_at_mark >= 1 && g_reported + (int)(g1.released_at_mark - g0.released_at_mark) == 3);
    CHECK(gc_objects_reported() == g_reported);
    CHECK(mp_checked_send(out[2], 16, 0, 61, MP_COMM_SELF, MP_SEND_STANDARD) == 0);
    CHECK(mp_checked_recv(in[2], 12, 0, 62, MP_COMM_SELF, NULL) == 0);
    CHECK(mp_list_waitall(l, st) == 0 && mp_list_count(l) == 0 && gc_objects_reported() == 0);
    CHECK(st[0].bytes == 0 && st[0].error == 0 && st[1].source == 0 && st[1].tag == 61 && st[1].bytes == 16);
    CHECK(in[0][3] == out[2][3] && in[2][2] == out[1][2]);
    CHECK(mp_list_free(l, NULL) == 0);
}
