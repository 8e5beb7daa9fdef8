/* requests.c - mpcore tests: requests and completion: the in-flight table as the GC extension sees
 * it, persistent requests, sets of handles, the table under threads, orphans and their sweeps. */
#include "mpcore_tests.h"


void test_inflight_table(void)
{
    static char fake_object[64];
    int32_t in[4], out[4] = { 5, 6, 7, 8 };
    mp_req_t r, rs[2];
    mp_status_t sts[2];
    mp_gc_stats_t gs;
    mp_token_t t;

    /* An in-flight receive with an owner object is reported at mark and, the
     * same slot, at relocate; once complete it is no longer reported. */
    CHECK(mp_checked_irecv(in, 16, 0, 3, MP_COMM_SELF, fake_object, &r) == 0);
    g_reported = 0;
    CHECK(mp_gc_scan(MP_GC_MARK, count_report, NULL) == 1 && g_reported == 1);
    CHECK(g_last_slot && *g_last_slot == fake_object);
    g_reported = 0;
    CHECK(mp_gc_scan(MP_GC_RELOCATE, count_report, NULL) == 1 && g_reported == 1);
    mp_gc_stats(&gs);
    CHECK(gs.pinned_last_mark == 1 && gs.registered >= 1);
    CHECK(mp_send_start(out, 16, 0, 3, MP_COMM_SELF, MP_SEND_STANDARD, &t) == 1);
    CHECK(mp_req_wait(r, NULL) == 0 && in[3] == 8);
    g_reported = 0;
    CHECK(mp_gc_scan(MP_GC_MARK, count_report, NULL) == 0 && g_reported == 0);

    /* An orphaned receive is freed by the sweep once its message arrived;
     * the statistics count it as open and orphaned until then. */
    CHECK(mp_checked_irecv(in, 16, 0, 4, MP_COMM_SELF, fake_object, &r) == 0);
    CHECK(mp_req_orphan(r) == 0);
    CHECK(mp_req_orphan(r) == MP_EHANDLE); /* twice is an error */
    CHECK(mp_req_sweep() == 1);
    {
        mp_stats_t st;
        mp_stats(&st);
        CHECK(st.active_requests == 1 && st.open_mpi_requests == 1 && st.orphans == 1);
        CHECK(st.slots_high_water >= 1);
    }
    CHECK(mp_send_start(out, 16, 0, 4, MP_COMM_SELF, MP_SEND_STANDARD, &t) == 1);
    CHECK(mp_req_sweep() == 0);
    CHECK(mp_req_active() == 0);
    {
        mp_stats_t st;
        mp_stats(&st);
        CHECK(st.active_requests == 0 && st.open_mpi_requests == 0 && st.orphans == 0);
    }

    /* testall / waitall / waitany. */
    CHECK(mp_checked_irecv(in, 16, 0, 6, MP_COMM_SELF, NULL, &rs[0]) == 0);
    CHECK(mp_checked_isend(out, 16, 0, 6, MP_COMM_SELF, MP_SEND_STANDARD, NULL, &rs[1]) == 0);
    CHECK(mp_req_waitall(2, rs, sts) == 0 && sts[0].bytes == 16 && sts[0].tag == 6);
    /* The owner's entry (handles vouched for): the same completion. */
    CHECK(mp_checked_irecv(in, 16, 0, 8, MP_COMM_SELF, NULL, &rs[0]) == 0);
    CHECK(mp_checked_isend(out, 16, 0, 8, MP_COMM_SELF, MP_SEND_STANDARD, NULL, &rs[1]) == 0);
    CHECK(mp_req_waitall_owned(2, rs, sts) == 0 && sts[0].bytes == 16 && sts[0].tag == 8 && !mp_req_live(rs[1]));
    CHECK(mp_checked_irecv(in, 16, 0, 7, MP_COMM_SELF, NULL, &rs[0]) == 0);
    rs[1] = MP_REQ_NULL;
    CHECK(mp_req_testall(2, rs, sts) == 0);
    {
        /* A request twice in a set is refused before anything is waited on
         * or freed, active or already complete; the refused and the pending
         * sets leave no mark behind. */
        mp_req_t twice[3] = { rs[0], MP_REQ_NULL, rs[0] }, done[2];
        CHECK(mp_req_waitall(3, twice, sts) == MP_EINVAL);
        CHECK(last_error_mentions("twice (entries 0 and 2)"));
        CHECK(mp_req_testall(3, twice, sts) == MP_EINVAL);
        CHECK(mp_req_waitany(3, twice, sts) == MP_EINVAL); /* waitany too, before it waits */
        CHECK(last_error_mentions("twice (entries 0 and 2)"));
        CHECK(mp_req_testall(1, rs, sts) == 0 && mp_req_live(rs[0]));
        CHECK(mp_checked_isend(out, 4, MP_PROC_NULL, 0, MP_COMM_SELF, MP_SEND_STANDARD, NULL, &done[0]) == 0);
        done[1] = done[0];
        CHECK(mp_req_waitall(2, done, sts) == MP_EINVAL && mp_req_live(done[0]));
        /* The owner's entry checks no bounds or generation, but still finds a repeat, active
         * (its mark) or complete (the general path), and refuses the set unmarked. */
        twice[1] = rs[0];
        CHECK(mp_req_waitall_owned(2, twice, sts) == MP_EINVAL && last_error_mentions("twice (entries 0 and 1)"));
        CHECK(mp_req_testall(1, rs, sts) == 0 && mp_req_live(rs[0]));
        CHECK(mp_req_waitall_owned(2, done, sts) == MP_EINVAL && mp_req_live(done[0]));
        CHECK(last_error_mentions("twice (entries 0 and 1)"));
        CHECK(mp_req_waitall_owned(1, done, sts) == 0 && !mp_req_live(done[0]) && sts[0].source == MP_PROC_NULL);
    }
    CHECK(mp_send_start(out, 4, 0, 7, MP_COMM_SELF, MP_SEND_STANDARD, &t) == 1);
    CHECK(mp_req_waitany(2, rs, sts) == 0 && sts[0].bytes == 4);
    rs[0] = MP_REQ_NULL;
    CHECK(mp_req_waitany(2, rs, sts) == 2); /* n: no entry was pending */
    CHECK(mp_req_active() == 0);
}

/* Persistent requests (persistent.c): inactive between instances (empty status,
 * not reported to the GC), reported while active, made again when the buffer
 * moved, refused when misused, freed by req_free or, orphaned, by the sweep. */
void test_persistent(void)
{
    static char fake_object[64];
    int32_t in[4] = { 0 }, in2[4] = { 0 }, out[4] = { 1, 2, 3, 4 };
    mp_req_t r, s, nb, set[2], twice[2];
    mp_status_t st, sts[2];
    mp_stats_t k0, k1;
    mp_token_t t;
    int started = -1, active = mp_req_active();
    mp_stats(&k0);
    CHECK(mp_recv_init(in, 16, 0, 9, MP_COMM_SELF, &r) == 0);
    CHECK(mp_send_init(out, 16, 0, 9, MP_COMM_SELF, MP_SEND_STANDARD, &s) == 0);
    CHECK(mp_send_init(out, 16, 5, 9, MP_COMM_SELF, MP_SEND_STANDARD, &nb) == MP_ERANK);
    mp_stats(&k1);
    CHECK(k1.persistent_open == k0.persistent_open + 2);
    CHECK(mp_req_wait(r, &st) == 0 && st.source == MP_ANY_SOURCE && st.tag == MP_ANY_TAG && st.bytes == 0);
    CHECK(mp_req_test(r, &st) == 1 && mp_req_live(r));
    g_reported = 0;
    CHECK(mp_gc_scan(MP_GC_MARK, count_report, NULL) == 0);
    for (int i = 0; i < 2; i++) {
        int32_t *buf = i ? in2 : in; /* the second instance's buffer "moved" */
        out[0] = 10 + i;
        CHECK(mp_req_start(r, buf, fake_object) == 0);
        CHECK(mp_req_start(r, buf, fake_object) == MP_EBUSY && last_error_mentions("active"));
        g_reported = 0;
        CHECK(mp_gc_scan(MP_GC_MARK, count_report, NULL) == 1 && g_last_slot && *g_last_slot == fake_object);
        CHECK(mp_req_start(s, out, NULL) == 0);
        set[0] = r;
        set[1] = s;
        CHECK(mp_req_waitall(2, set, sts) == 0 && sts[0].bytes == 16 && sts[0].tag == 9);
        CHECK(buf[0] == 10 + i && buf[3] == 4 && mp_req_live(r) && mp_req_live(s));
        g_reported = 0;
        CHECK(mp_gc_scan(MP_GC_MARK, count_report, NULL) == 0);
    }
    mp_stats(&k1);
    CHECK(k1.persistent_recreated == k0.persistent_recreated + 1);
    CHECK(k1.persistent_starts == k0.persistent_starts + 4);
    /* startall: a repeat or an active request refuses the whole set. */
    twice[0] = twice[1] = r;
    CHECK(mp_req_startall(2, twice, (void *const[]){ in2, in2 }, NULL, &started) == MP_EINVAL && started == 0);
    CHECK(last_error_mentions("twice"));
    CHECK(mp_req_startall(2, set, (void *const[]){ in2, out }, NULL, &started) == 0 && started == 2);
    CHECK(mp_req_startall(1, set, (void *const[]){ in2 }, NULL, &started) == MP_EBUSY && started == 0);
    for (int i = 0; i < 1000000 && mp_req_testall(2, set, sts) == 0; i++)
        ;
    CHECK(mp_req_test(r, &st) == 1 && st.tag == MP_ANY_TAG); /* inactive again */
    CHECK(mp_req_free(r) == 0 && !mp_req_live(r) && mp_req_free(r) == MP_EHANDLE);
    /* Other requests are neither started nor freed this way. */
    CHECK(mp_checked_irecv(in, 16, 0, 12, MP_COMM_SELF, NULL, &nb) == 0);
    CHECK(mp_req_start(nb, in, NULL) == MP_EINVAL && mp_req_free(nb) == MP_EINVAL);
    CHECK(mp_req_cancel(nb) == 0 && mp_req_wait(nb, &st) == 0 && st.cancelled);
    /* Orphans: an inactive one goes at the next sweep, an active one once complete. */
    CHECK(mp_recv_init(in, 16, 0, 13, MP_COMM_SELF, &r) == 0);
    CHECK(mp_req_start(r, in, fake_object) == 0);
    CHECK(mp_req_orphan(r) == 0 && mp_req_orphan(s) == 0);
    CHECK(mp_req_sweep() == 1 && mp_req_live(r) && !mp_req_live(s));
    CHECK(mp_send_start(out, 16, 0, 13, MP_COMM_SELF, MP_SEND_STANDARD, &t) == 1);
    CHECK(mp_req_sweep() == 0 && !mp_req_live(r));
    /* Persistent collectives: staged, or refused where the library lacks them. */
    {
        int64_t stage_bytes[2] = { 16, 16 };
        void *stages[2] = { NULL, NULL };
        mp_coll_t c = { .kind = MP_COLL_ALLREDUCE, .dtype = MP_DT_INT32, .elem_size = 4, .op = MP_OP_SUM, .count = 4 };
        int rc = mp_coll_init(MP_COMM_SELF, &c, stage_bytes, stages, &r);
        if (!pal_mpi.Allreduce_init) {
            CHECK(rc == MP_ENOTSUP && last_error_mentions("MPI_Allreduce_init"));
        } else {
            CHECK(rc == 0 && stages[0] && stages[1]);
            for (int i = 0; i < 3; i++) {
                memcpy(stages[0], out, 16);
                CHECK(mp_req_start(r, NULL, NULL) == 0 && mp_req_wait(r, NULL) == 0);
                CHECK(memcmp(stages[1], out, 16) == 0);
            }
            CHECK(mp_req_free(r) == 0);
        }
    }
    mp_stats(&k1);
    CHECK(k1.persistent_open == k0.persistent_open && mp_req_active() == active);
}

/* The checks of a set (batch_begin): a stale handle (its slot freed, or freed
 * and handed out again), an index past the table and a negative handle are
 * refused before anything is waited for, the rest of the set untouched; a set
 * with null and already complete entries takes the general finishing loop, a
 * set of active ones the short one, with the same statuses. */
void test_set_handles(void)
{
    int32_t out[2] = { 5, 6 }, in[2] = { 0, 0 };
    mp_req_t set[3], stale, reused;
    mp_status_t sts[3];
    int base = mp_req_active();
    CHECK(mp_checked_isend(out, 4, 0, 61, MP_COMM_SELF, MP_SEND_STANDARD, NULL, &stale) == 0);
    CHECK(mp_checked_irecv(in, 4, 0, 61, MP_COMM_SELF, NULL, &set[0]) == 0);
    CHECK(mp_req_waitall(1, &stale, sts) == 0 && mp_req_waitall(1, set, sts) == 0 && in[0] == 5);
    /* The freed slot is handed out again (this thread's cache is a stack): the
     * old handle names it with the previous generation. */
    CHECK(mp_checked_irecv(&in[1], 4, 0, 62, MP_COMM_SELF, NULL, &reused) == 0);
    CHECK((reused & 0xFFFFF) == (set[0] & 0xFFFFF) && reused != set[0]);
    {
        mp_req_t bad[] = { set[0] /* completed */, (mp_req_t)0xFFFFE /* past the table */, -7 };
        for (int i = 0; i < 3; i++) {
            mp_req_t with_bad[2] = { reused, bad[i] };
            CHECK(mp_req_waitall(2, with_bad, sts) == MP_EHANDLE);
            CHECK(last_error_mentions("not valid"));
            CHECK(mp_req_testall(2, with_bad, sts) == MP_EHANDLE);
            CHECK(mp_req_live(reused)); /* untouched, and not marked: it can be waited for */
        }
    }
    /* General loop: a null entry, one completed before (ProcNull), one active. */
    CHECK(mp_checked_isend(out, 4, MP_PROC_NULL, 0, MP_COMM_SELF, MP_SEND_STANDARD, NULL, &set[0]) == 0);
    set[1] = MP_REQ_NULL;
    CHECK(mp_checked_isend(&out[1], 4, 0, 62, MP_COMM_SELF, MP_SEND_STANDARD, NULL, &set[2]) == 0);
    CHECK(mp_req_waitall(3, set, sts) == 0 && sts[0].source == MP_PROC_NULL && sts[1].tag == 0 &&
          sts[2].error == 0 && !sts[2].cancelled);
    /* Short loop: every entry active, completed by this call. */
    set[0] = reused;
    CHECK(mp_req_waitall(1, set, sts) == 0 && sts[0].tag == 62 && sts[0].bytes == 4 && in[1] == 6);
    CHECK(!mp_req_live(reused) && mp_req_active() == base);
}

/* Waitall over a batch whose slots are not the first ones: every request is
 * completed with its own data and status, and every slot goes back to the
 * free list (a later batch gets distinct live handles). */
void test_waitall_batches(void)
{
    enum { N = 12 };
    int32_t out[N], in[N];
    mp_req_t reqs[2 * N], first;
    mp_status_t st[2 * N];
    int base = mp_req_active();
    /* Occupy slot(s) first so the batch does not start at index 0. */
    CHECK(mp_checked_irecv(in, 4, 0, 999, MP_COMM_SELF, NULL, &first) == 0);
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < N; i++) {
            out[i] = round * 100 + i;
            in[i] = -1;
            CHECK(mp_checked_irecv(&in[i], 4, 0, 40 + i, MP_COMM_SELF, NULL, &reqs[i]) == 0);
        }
        for (int i = 0; i < N; i++)
            CHECK(mp_checked_isend(&out[i], 4, 0, 40 + i, MP_COMM_SELF, MP_SEND_STANDARD, NULL, &reqs[N + i]) == 0);
        for (int i = 0; i < 2 * N; i++)
            for (int j = 0; j < i; j++)
                CHECK(reqs[i] != reqs[j]);
        CHECK(mp_req_active() == base + 1 + 2 * N);
        CHECK(mp_req_waitall(2 * N, reqs, st) == 0);
        CHECK(mp_req_active() == base + 1);
        for (int i = 0; i < N; i++) {
            CHECK(in[i] == round * 100 + i);
            CHECK(st[i].tag == 40 + i && st[i].bytes == 4);
            CHECK(!mp_req_live(reqs[i]) && !mp_req_live(reqs[N + i]));
        }
    }
    CHECK(mp_req_live(first));
    CHECK(mp_req_cancel(first) == 0);
    CHECK(mp_req_wait(first, st) == 0 && st[0].cancelled);
    CHECK(mp_req_active() == base);

    /* The usual set's statuses, each kind: a cancelled receive (cancelled, no bytes), a receive
     * with AnySource that got its message (the sender's rank), a send (all zero). */
    CHECK(mp_checked_irecv(&in[0], 4, 0, 60, MP_COMM_SELF, NULL, &reqs[0]) == 0 && mp_req_cancel(reqs[0]) == 0);
    CHECK(mp_checked_irecv(&in[1], 4, MP_ANY_SOURCE, 61, MP_COMM_SELF, NULL, &reqs[1]) == 0);
    CHECK(mp_checked_isend(&out[1], 4, 0, 61, MP_COMM_SELF, MP_SEND_STANDARD, NULL, &reqs[2]) == 0);
    memset(st, 0x5e, 3 * sizeof st[0]);
    CHECK(mp_req_waitall(3, reqs, st) == 0 && mp_req_active() == base);
    CHECK(st[0].cancelled == 1 && st[0].bytes == 0 && st[0].error == 0);
    CHECK(st[1].source == 0 && st[1].tag == 61 && st[1].bytes == 4 && !st[1].cancelled && st[1].error == 0);
    CHECK(st[2].source == 0 && st[2].tag == 0 && st[2].bytes == 0 && !st[2].cancelled && st[2].error == 0);
}

/* The request table from several threads at once: every live handle names
 * its own slot, requests are completed by other threads than posted them, and
 * all slots come back after the threads (and their slot caches) are gone.
 * ProcNull operations reach no MPI call, so the thread level does not matter. */
enum { T_THREADS = 4, T_ROUNDS = 2000, T_BATCH = 150 };
static _Atomic int g_slot_owner[1 << 20]; /* by slot index: who holds it */
static _Atomic int g_table_errors;
static mp_req_t g_handoff[T_THREADS][T_BATCH];

static void table_error(void)
{
    atomic_fetch_add(&g_table_errors, 1);
}

static int table_worker(void *arg)
{
    int who = (int)(intptr_t)arg + 1;
    mp_req_t reqs[T_BATCH];
    mp_status_t st[T_BATCH];
    char byte = 0;
    for (int round = 0; round < T_ROUNDS; round++) {
        int n = 1 + (round * 37 + who * 11) % T_BATCH;
        for (int i = 0; i < n; i++) {
            int free_owner = 0;
            if (mp_checked_isend(&byte, 1, MP_PROC_NULL, 0, MP_COMM_SELF, MP_SEND_STANDARD, NULL, &reqs[i]) != 0 ||
                !atomic_compare_exchange_strong(&g_slot_owner[reqs[i] & 0xFFFFF], &free_owner, who))
                table_error();
        }
        /* Give the slots up before freeing them: another thread may get them next. */
        for (int i = 0; i < n; i++)
            atomic_store(&g_slot_owner[reqs[i] & 0xFFFFF], 0);
        if (round % 2) {
            if (mp_req_testall(n, reqs, st) != 1)
                table_error();
        } else {
            for (int i = 0; i < n; i++)
                if (mp_req_test(reqs[i], &st[0]) != 1 || st[0].source != MP_PROC_NULL)
                    table_error();
        }
    }
    /* Left for the main thread to complete after this one has exited. */
    for (int i = 0; i < T_BATCH; i++)
        if (mp_checked_isend(&byte, 1, MP_PROC_NULL, 0, MP_COMM_SELF, MP_SEND_STANDARD, NULL, &g_handoff[who - 1][i]) != 0)
            table_error();
    return 0;
}

/* The sends table_worker `who` posts (all of 1 byte). */
static uint64_t table_sends(int who)
{
    uint64_t n = T_BATCH;
    for (int round = 0; round < T_ROUNDS; round++)
        n += 1 + (uint64_t)((round * 37 + who * 11) % T_BATCH);
    return n;
}

void test_table_threads(void)
{
    thrd_t t[T_THREADS];
    int base = mp_req_active();
    for (int k = 0; k < 2; k++) { /* twice: the first threads' slots are reused */
        mp_stats_t before, after;
        uint64_t sends = 0;
        mp_stats(&before);
        for (int i = 0; i < T_THREADS; i++)
            CHECK(thrd_create(&t[i], table_worker, (void *)(intptr_t)i) == thrd_success);
        for (int i = 0; i < T_THREADS; i++) {
            CHECK(thrd_join(t[i], NULL) == thrd_success);
            sends += table_sends(i + 1);
        }
        CHECK(atomic_load(&g_table_errors) == 0);
        /* Every thread's counts survive it, none lost to another thread's. */
        mp_stats(&after);
        CHECK(after.p2p_ops - before.p2p_ops == sends);
        CHECK(after.p2p_bytes - before.p2p_bytes == sends);
        CHECK(after.blocking_ops == before.blocking_ops);
        CHECK(mp_req_active() == base + T_THREADS * T_BATCH);
        for (int i = 0; i < T_THREADS; i++)
            CHECK(mp_req_testall(T_BATCH, g_handoff[i], NULL) == 1);
        CHECK(mp_req_active() == base);
        CHECK(!mp_req_live(g_handoff[0][0]));
    }
}

/* Sweeps look at the orphans alone (their registry), not at the whole table, which keeps its
 * largest size: after a burst of requests, every completion call would otherwise scan it while
 * any orphan is left.  The fallback after a registration that found no memory scans the table
 * and still frees every orphan; orphans registered by another thread while a sweep runs are
 * kept and freed too. */
enum { ORPHAN_BURST = 20000, ORPHAN_FEW = 3, ORPHAN_MANY = 2000 };
static mp_req_t g_orphan_many[ORPHAN_MANY];
static atomic_int g_orphaning_done;

static int orphan_worker(void *arg)
{
    (void)arg;
    for (int i = 0; i < ORPHAN_MANY; i++)
        if (mp_req_orphan(g_orphan_many[i]) != 0)
            atomic_fetch_add(&g_table_errors, 1);
    atomic_store(&g_orphaning_done, 1);
    return 0;
}

void test_orphan_registry(void)
{
    static int32_t in[ORPHAN_MANY][4];
    const int32_t out[4] = { 1, 2, 3, 4 };
    mp_req_t *burst = malloc(ORPHAN_BURST * sizeof *burst), few[ORPHAN_FEW];
    int active = mp_req_active(), left = -1;
    mp_stats_t st;
    uint64_t v0;
    thrd_t t;
    CHECK(burst != NULL);
    for (int i = 0; i < ORPHAN_BURST; i++)
        CHECK(mp_checked_irecv(in[0], 16, 0, 500, MP_COMM_SELF, NULL, &burst[i]) == 0);
    for (int i = 0; i < ORPHAN_BURST; i++)
        CHECK(mp_req_cancel(burst[i]) == 0);
    CHECK(mp_req_waitall(ORPHAN_BURST, burst, NULL) == 0);
    free(burst);
    CHECK(mp_req_active() == active && atomic_load(&mp_g_nslots) >= ORPHAN_BURST);

    for (int i = 0; i < ORPHAN_FEW; i++)
        CHECK(mp_checked_irecv(in[i], 16, 0, 510 + i, MP_COMM_SELF, NULL, &few[i]) == 0 && mp_req_orphan(few[i]) == 0);
    v0 = atomic_load(&mp_g_sweep_visits);
    for (int k = 0; k < 100; k++)
        CHECK(mp_req_sweep() == ORPHAN_FEW);
    CHECK(atomic_load(&mp_g_sweep_visits) - v0 == 100 * ORPHAN_FEW);
    CHECK(mp_checked_send(out, 16, 0, 510, MP_COMM_SELF, MP_SEND_STANDARD) == 0);
    CHECK(mp_req_sweep() == ORPHAN_FEW - 1 && !mp_req_live(few[0]) && mp_req_live(few[1]) && in[0][3] == 4);

    /* The fallback: the whole table, every orphan still freed once its message came. */
    atomic_store(&mp_g_orphan_lost, 1);
    v0 = atomic_load(&mp_g_sweep_visits);
    CHECK(mp_checked_send(out, 16, 0, 511, MP_COMM_SELF, MP_SEND_STANDARD) == 0);
    CHECK(mp_req_sweep() == 1 && !mp_req_live(few[1]) && in[1][3] == 4);
    CHECK(atomic_load(&mp_g_sweep_visits) - v0 >= ORPHAN_BURST);
    CHECK(mp_checked_send(out, 16, 0, 512, MP_COMM_SELF, MP_SEND_STANDARD) == 0);
    CHECK(mp_req_sweep() == 0 && !mp_req_live(few[2]) && in[2][3] == 4);
    mp_stats(&st);
    CHECK(st.orphans == 0 && mp_req_active() == active);
    atomic_store(&mp_g_orphan_lost, 0);

    /* Registered by another thread while this one sweeps. */
    for (int i = 0; i < ORPHAN_MANY; i++)
        CHECK(mp_checked_irecv(in[i], 16, 0, 520, MP_COMM_SELF, NULL, &g_orphan_many[i]) == 0);
    atomic_store(&g_orphaning_done, 0);
    CHECK(thrd_create(&t, orphan_worker, NULL) == thrd_success);
    while (!atomic_load(&g_orphaning_done))
        (void)mp_req_sweep();
    CHECK(thrd_join(t, NULL) == thrd_success && atomic_load(&g_table_errors) == 0);
    CHECK(mp_req_sweep() == ORPHAN_MANY);
    /* A sweep stops once 64 of those it tested are still pending (each test polls MPI's
     * progress; an orphan that never completes would otherwise cost every completion call a
     * test), and goes on from there the next time; finished ones do not count.  Half of them get
     * their message (the first half posted): all of those are freed within the sweeps that go
     * round once, and no sweep looks at more than 64 plus those it frees. */
    v0 = atomic_load(&mp_g_sweep_visits);
    CHECK(mp_req_sweep() == ORPHAN_MANY && atomic_load(&mp_g_sweep_visits) - v0 == 64);
    for (int i = 0; i < ORPHAN_MANY; i += 2)
        CHECK(mp_checked_send(out, 16, 0, 520, MP_COMM_SELF, MP_SEND_STANDARD) == 0);
    for (int k = 0; k < ORPHAN_MANY / 64 + 1; k++) {
        int before = left < 0 ? ORPHAN_MANY : left;
        v0 = atomic_load(&mp_g_sweep_visits);
        left = mp_req_sweep();
        CHECK(atomic_load(&mp_g_sweep_visits) - v0 <= (uint64_t)(64 + before - left));
    }
    CHECK(left == ORPHAN_MANY / 2);
    mp_stats(&st);
    CHECK(st.orphans == ORPHAN_MANY / 2 && mp_req_active() == active + ORPHAN_MANY / 2);
    for (int i = 0; i < ORPHAN_MANY / 2; i++)
        CHECK(mp_checked_send(out, 16, 0, 520, MP_COMM_SELF, MP_SEND_STANDARD) == 0);
    CHECK(mp_req_sweep() == 0); /* a burst of finished ones: all freed by one sweep */
    mp_stats(&st);
    CHECK(st.orphans == 0 && mp_req_active() == active && in[ORPHAN_MANY - 1][3] == 4);
}

/* realloc, wrapped for the test programs (-Wl,--wrap=realloc, tests/native/CMakeLists.txt): while
 * g_realloc_refusals is above 0, each call fails as without memory and counts it down. */
void *__real_realloc(void *p, size_t n);
void *__wrap_realloc(void *p, size_t n);
static atomic_int g_realloc_refusals;

void *__wrap_realloc(void *p, size_t n)
{
    int k = atomic_load(&g_realloc_refusals);
    while (k > 0)
        if (atomic_compare_exchange_weak(&g_realloc_refusals, &k, k - 1))
            return NULL;
    return __real_realloc(p, n);
}

/* A registration that finds no memory to grow the registry: the request is still given up (no
 * error for its owner), later sweeps scan the table, and every orphan is freed once its message
 * comes, those registered before the failure and after it alike. */
void test_orphan_registry_no_memory(void)
{
    enum { MOST = 10000 };
    const int32_t out[4] = { 1, 2, 3, 4 };
    int32_t(*in)[4] = calloc(MOST + 3, sizeof *in);
    mp_req_t *r = malloc((MOST + 3) * sizeof *r);
    int active = mp_req_active(), n = 0;
    mp_stats_t st;
    CHECK(in != NULL && r != NULL && !atomic_load(&mp_g_orphan_lost));
    for (; n < 5; n++) /* before */
        CHECK(mp_checked_irecv(in[n], 16, 0, 540, MP_COMM_SELF, NULL, &r[n]) == 0 && mp_req_orphan(r[n]) == 0);
    atomic_store(&g_realloc_refusals, 1);
    /* Until the registry has to grow: that growth fails. */
    while (n < MOST && !atomic_load(&mp_g_orphan_lost)) {
        CHECK(mp_checked_irecv(in[n], 16, 0, 540, MP_COMM_SELF, NULL, &r[n]) == 0 && mp_req_orphan(r[n]) == 0);
        n++;
    }
    CHECK(atomic_load(&mp_g_orphan_lost) == 1 && atomic_load(&g_realloc_refusals) == 0 && n < MOST);
    for (int i = 0; i < 3; i++, n++) /* after the failure */
        CHECK(mp_checked_irecv(in[n], 16, 0, 540, MP_COMM_SELF, NULL, &r[n]) == 0 && mp_req_orphan(r[n]) == 0);
    mp_stats(&st);
    CHECK(st.orphans == (uint64_t)n && mp_req_sweep() == n);
    for (int i = 0; i < n; i++)
        CHECK(mp_checked_send(out, 16, 0, 540, MP_COMM_SELF, MP_SEND_STANDARD) == 0);
    CHECK(mp_req_sweep() == 0);
    mp_stats(&st);
    CHECK(st.orphans == 0 && mp_req_active() == active && in[0][3] == 4 && in[n - 1][3] == 4);
    for (int i = 0; i < n; i++)
        CHECK(!mp_req_live(r[i]));
    atomic_store(&mp_g_orphan_lost, 0);
    free(in);
    free(r);
}

/* One thread sweeps at a time (the core's sweep lock, taken or skipped): two threads that sweep
 * in a loop, inside mp_req_sweep together, never test orphans at once, so no orphan is tested by
 * two threads at once, in the table scan after a lost registration as over the registry.  A
 * stand-in MPI_Test counts the tests under way (each lasts 20 us, long enough for the other
 * thread to come in) and passes the call to the library one at a time (the test initializes
 * MPI at FUNNELED). */
enum { SWEEPERS_ORPHANS = 4 };
static atomic_int g_tests_inside, g_tests_most, g_sweeps_inside, g_sweeps_most, g_sweepers_stop;
static mtx_t g_test_mutex;

static void note_most(atomic_int *most, int n)
{
    int m = atomic_load(most);
    while (n > m && !atomic_compare_exchange_weak(most, &m, n))
        ;
}

static int test_one_at_a_time(MPI_Request *r, int *flag, MPI_Status *st)
{
    int rc;
    double until = mp_wtime() + 20e-6;
    note_most(&g_tests_most, atomic_fetch_add(&g_tests_inside, 1) + 1);
    while (mp_wtime() < until)
        ;
    mtx_lock(&g_test_mutex);
    rc = g_real_test(r, flag, st);
    mtx_unlock(&g_test_mutex);
    atomic_fetch_sub(&g_tests_inside, 1);
    return rc;
}

static int sweeper(void *arg)
{
    (void)arg;
    while (!atomic_load(&g_sweepers_stop)) {
        note_most(&g_sweeps_most, atomic_fetch_add(&g_sweeps_inside, 1) + 1);
        if (mp_req_sweep() != SWEEPERS_ORPHANS)
            atomic_fetch_add(&g_table_errors, 1);
        atomic_fetch_sub(&g_sweeps_inside, 1);
    }
    return 0;
}

void test_sweep_threads(void)
{
    static int32_t in[SWEEPERS_ORPHANS][4];
    const int32_t out[4] = { 1, 2, 3, 4 };
    mp_req_t r[SWEEPERS_ORPHANS];
    int active = mp_req_active();
    mp_stats_t st;
    CHECK(mtx_init(&g_test_mutex, mtx_plain) == thrd_success);
    for (int i = 0; i < SWEEPERS_ORPHANS; i++)
        CHECK(mp_checked_irecv(in[i], 16, 0, 530, MP_COMM_SELF, NULL, &r[i]) == 0 && mp_req_orphan(r[i]) == 0);
    g_real_test = pal_mpi.Test;
    pal_mpi.Test = test_one_at_a_time;
    for (int lost = 0; lost <= 1; lost++) { /* the registry, then the table scan (a lost registration is for good) */
        thrd_t t[2];
        double until = mp_wtime() + 0.3;
        atomic_store(&mp_g_orphan_lost, lost);
        atomic_store(&g_tests_most, 0), atomic_store(&g_sweeps_most, 0), atomic_store(&g_sweepers_stop, 0);
        for (int i = 0; i < 2; i++)
            CHECK(thrd_create(&t[i], sweeper, NULL) == thrd_success);
        while (mp_wtime() < until && atomic_load(&g_sweeps_most) < 2)
            thrd_yield();
        while (mp_wtime() < until)
            thrd_yield();
        atomic_store(&g_sweepers_stop, 1);
        for (int i = 0; i < 2; i++)
            CHECK(thrd_join(t[i], NULL) == thrd_success);
        CHECK(atomic_load(&g_table_errors) == 0);
        CHECK(atomic_load(&g_sweeps_most) == 2); /* both threads were inside a sweep together */
        CHECK(atomic_load(&g_tests_most) == 1);  /* and never tested at once */
    }
    pal_mpi.Test = g_real_test;
    mtx_destroy(&g_test_mutex);
    for (int i = 0; i < SWEEPERS_ORPHANS; i++)
        CHECK(mp_checked_send(out, 16, 0, 530, MP_COMM_SELF, MP_SEND_STANDARD) == 0);
    CHECK(mp_req_sweep() == 0);
    atomic_store(&mp_g_orphan_lost, 0);
    mp_stats(&st);
    CHECK(st.orphans == 0 && mp_req_active() == active && in[SWEEPERS_ORPHANS - 1][3] == 4);
}

/* The record of nonblocking receives posted with AnyTag (wildcard.h) holds only those still
 * pending: each completion drops its own (a wait, a set without statuses, a cancel, a list's
 * completion), a persistent receive's goes when it is freed, so that once none is pending the
 * sets' look for taken pieces costs nothing again. */
void test_wild_records(void)
{
    int32_t in[4] = { 0 }, out[4] = { 1, 2, 3, 4 };
    mp_req_t r, rs[2];
    mp_list_t l;
    mp_token_t t;
    int base = atomic_load(&mp_g_wild_count);

    CHECK(mp_checked_irecv(in, 16, 0, MP_ANY_TAG, MP_COMM_SELF, NULL, &r) == 0);
    CHECK(atomic_load(&mp_g_wild_count) == base + 1);
    CHECK(mp_send_start(out, 16, 0, 5, MP_COMM_SELF, MP_SEND_STANDARD, &t) == 1);
    CHECK(mp_req_wait(r, NULL) == 0 && in[3] == 4);
    CHECK(atomic_load(&mp_g_wild_count) == base);

    /* In a set completed without statuses. */
    CHECK(mp_checked_irecv(in, 16, 0, MP_ANY_TAG, MP_COMM_SELF, NULL, &rs[0]) == 0);
    CHECK(mp_checked_isend(out, 16, 0, 6, MP_COMM_SELF, MP_SEND_STANDARD, NULL, &rs[1]) == 0);
    CHECK(atomic_load(&mp_g_wild_count) == base + 1);
    CHECK(mp_req_waitall(2, rs, NULL) == 0);
    CHECK(atomic_load(&mp_g_wild_count) == base);

    /* Cancelled. */
    CHECK(mp_checked_irecv(in, 16, 0, MP_ANY_TAG, MP_COMM_SELF, NULL, &r) == 0);
    CHECK(mp_req_cancel(r) == 0);
    {
        mp_status_t st;
        CHECK(mp_req_wait(r, &st) == 0 && st.cancelled);
    }
    CHECK(atomic_load(&mp_g_wild_count) == base);

    /* A list's, at its completion; and at its free when it still held them. */
    CHECK(mp_list_create(4, &l) == 0);
    CHECK(mp_checked_list_irecv(l, in, 16, 0, MP_ANY_TAG, MP_COMM_SELF, NULL) == 0);
    CHECK(atomic_load(&mp_g_wild_count) == base + 1);
    CHECK(mp_checked_list_isend(l, out, 16, 0, 7, MP_COMM_SELF, MP_SEND_STANDARD, NULL) == 1);
    CHECK(mp_list_waitall(l, NULL) == 0);
    CHECK(atomic_load(&mp_g_wild_count) == base);
    CHECK(mp_checked_list_irecv(l, in, 16, 0, MP_ANY_TAG, MP_COMM_SELF, NULL) == 0);
    CHECK(mp_list_free(l, rs) == 0 && rs[0] != MP_REQ_NULL);
    CHECK(atomic_load(&mp_g_wild_count) == base);
    CHECK(mp_req_cancel(rs[0]) == 0 && mp_req_wait(rs[0], NULL) == 0);

    /* A persistent receive keeps its record between starts, until it is freed. */
    CHECK(mp_recv_init(in, 16, 0, MP_ANY_TAG, MP_COMM_SELF, &r) == 0);
    CHECK(atomic_load(&mp_g_wild_count) == base + 1);
    CHECK(mp_req_start(r, in, NULL) == 0);
    CHECK(mp_send_start(out, 16, 0, 8, MP_COMM_SELF, MP_SEND_STANDARD, &t) == 1);
    CHECK(mp_req_wait(r, NULL) == 0);
    CHECK(atomic_load(&mp_g_wild_count) == base + 1);
    CHECK(mp_req_free(r) == 0);
    CHECK(atomic_load(&mp_g_wild_count) == base);
}

/* Many pending records: each completion, in any order, drops exactly its own (the others'
 * receives still match and complete, and drop theirs); past MP_WILD_MAX the oldest goes. */
#define WILD_MANY 300
void test_wild_records_many(void)
{
    static int32_t in[WILD_MANY];
    static mp_req_t rs[MP_WILD_MAX + 8];
    int32_t out = 0;
    mp_token_t t;
    int base = atomic_load(&mp_g_wild_count);

    for (int i = 0; i < WILD_MANY; i++)
        CHECK(mp_checked_irecv(&in[i], 4, 0, MP_ANY_TAG, MP_COMM_SELF, NULL, &rs[i]) == 0);
    CHECK(atomic_load(&mp_g_wild_count) == base + WILD_MANY);
    /* Every other receive cancelled, in a scattered order. */
    int cancelled = 0;
    for (int k = 0; k < WILD_MANY; k++) {
        int i = (k * 127) % WILD_MANY;
        if (i % 2)
            continue;
        mp_status_t st;
        CHECK(mp_req_cancel(rs[i]) == 0 && mp_req_wait(rs[i], &st) == 0 && st.cancelled);
        cancelled++;
        CHECK(atomic_load(&mp_g_wild_count) == base + WILD_MANY - cancelled);
    }
    /* The rest receive, in the order they were posted. */
    for (int i = 1; i < WILD_MANY; i += 2) {
        out = 1000 + i;
        CHECK(mp_send_start(&out, 4, 0, i, MP_COMM_SELF, MP_SEND_STANDARD, &t) == 1);
    }
    for (int i = WILD_MANY - 1; i > 0; i -= 2) {
        mp_status_t st;
        CHECK(mp_req_wait(rs[i], &st) == 0 && st.tag == i && in[i] == 1000 + i);
    }
    CHECK(atomic_load(&mp_g_wild_count) == base);

    /* Full: every record live, so each receive past the bound pushes out the oldest. */
    CHECK(base == 0);
    int n = MP_WILD_MAX + 8;
    for (int i = 0; i < n; i++)
        CHECK(mp_checked_irecv(in, 4, 0, MP_ANY_TAG, MP_COMM_SELF, NULL, &rs[i]) == 0);
    CHECK(atomic_load(&mp_g_wild_count) == MP_WILD_MAX);
    /* Cancelled in a scattered order: each of the newest MP_WILD_MAX drops its own record; the 8
     * oldest were pushed out and drop nothing. */
    int kept = MP_WILD_MAX;
    for (int k = 0; k < n; k++) {
        int i = (k * 127) % n;
        mp_status_t st;
        CHECK(mp_req_cancel(rs[i]) == 0 && mp_req_wait(rs[i], &st) == 0 && st.cancelled);
        kept -= i >= 8;
        CHECK(atomic_load(&mp_g_wild_count) == kept);
    }
    CHECK(atomic_load(&mp_g_wild_count) == base);
}
