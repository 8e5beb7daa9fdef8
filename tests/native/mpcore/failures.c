/* failures.c - mpcore tests: failures inside MPI: error paths a C caller reaches, and the outputs
 * a failed call leaves untouched. */
#include "mpcore_tests.h"

/* Fills the stack below the caller's frame, where the frames of its next call will lie, with
 * non-NUL bytes, as a caller's earlier calls may have left it. */
static __attribute__((noinline)) void dirty_stack_below(void)
{
    char junk[65536];
    memset(junk, 'A', sizeof junk);
    __asm__ volatile("" : : "r"(junk) : "memory"); /* the stores happen */
}

/* MPI_Error_string as the core calls it, checking what the core promises the library: a
 * buffer of 2 * MPI_MAX_ERROR_STRING bytes whose part past MPI's bound holds only NULs, so
 * a library that reads past the bound (MPICH 4.0) finds a string end there. */
/* MPI_Close_port, counted. */
static __typeof__(MPI_Close_port) *g_real_close_port;
static int g_ports_closed;

static int counting_close_port(const char *port)
{
    g_ports_closed++;
    return g_real_close_port(port);
}

static __typeof__(MPI_Error_string) *g_real_error_string;
static int g_error_string_calls, g_error_string_dirty_tails;
static int error_string_checking_tail(int code, char *text, int *len)
{
    g_error_string_calls++;
    for (int i = MPI_MAX_ERROR_STRING; i < 2 * MPI_MAX_ERROR_STRING; i++)
        if (text[i] != '\0') {
            g_error_string_dirty_tails++;
            break;
        }
    return g_real_error_string(code, text, len);
}

/* Error paths a C caller reaches (found by review; each was wrong before): owner calls on an
 * orphaned handle, NULL outputs refused before anything is posted, waitany without a status,
 * a sendrecv whose one half the library cannot post, persistent collectives checked at init
 * (on MPICH 4.0 too) and their unused count arrays never read, counters of refused calls, and
 * a set with two failures recorded once. */
void test_error_paths(void)
{
    int32_t out[4] = { 1, 2, 3, 4 }, in[4] = { 0 };
    mp_req_t r = MP_REQ_NULL, rs[2];
    mp_status_t st, sts[2];
    mp_stats_t k0, k1;
    mp_token_t t;
    int active = mp_req_active(), rc;

    /* An orphaned request belongs to the core: its owner's calls are refused, and the sweep
     * frees it (the orphan count back to where it was) once its message came. */
    mp_stats(&k0);
    CHECK(mp_checked_irecv(in, 16, 0, 20, MP_COMM_SELF, NULL, &r) == 0 && mp_req_orphan(r) == 0);
    CHECK(mp_req_test(r, &st) == MP_EHANDLE && last_error_mentions("given up"));
    CHECK(mp_req_wait(r, &st) == MP_EHANDLE && mp_req_cancel(r) == MP_EHANDLE && mp_req_free(r) == MP_EHANDLE);
    CHECK(mp_req_waitall(1, &r, &st) == MP_EHANDLE && mp_req_testall(1, &r, &st) == MP_EHANDLE);
    CHECK(mp_req_waitany(1, &r, &st) == MP_EHANDLE && mp_req_orphan(r) == MP_EHANDLE);
    CHECK(mp_req_live(r)); /* still the core's, until it completes */
    CHECK(mp_checked_send(out, 16, 0, 20, MP_COMM_SELF, MP_SEND_STANDARD) == 0);
    CHECK(mp_req_sweep() == 0 && !mp_req_live(r) && in[3] == 4);
    mp_stats(&k1);
    CHECK(k1.orphans == k0.orphans && mp_req_active() == active);

    /* NULL outputs: refused before anything is posted (no message left, no request made). */
    CHECK(mp_checked_isend(out, 16, 0, 21, MP_COMM_SELF, MP_SEND_STANDARD, NULL, NULL) == MP_EINVAL && last_error_mentions("request output"));
    CHECK(mp_checked_irecv(in, 16, 0, 21, MP_COMM_SELF, NULL, NULL) == MP_EINVAL);
    CHECK(mp_send_start(out, 16, 0, 21, MP_COMM_SELF, MP_SEND_STANDARD, NULL) == MP_EINVAL && last_error_mentions("token output"));
    CHECK(mp_recv_start(in, 16, 0, 21, MP_COMM_SELF, &st, NULL) == MP_EINVAL);
    {
        mp_coll_t c = { .kind = MP_COLL_BARRIER };
        CHECK(mp_coll_post(MP_COMM_SELF, &c, NULL, NULL, NULL) == MP_EINVAL);
    }
    CHECK(mp_iprobe(0, 21, MP_COMM_SELF, &st) == 0 && mp_req_active() == active);

    /* Open MPI's MPI_Waitall is avoided above MPI_THREAD_SINGLE (this group runs at Funneled). */
    CHECK(pal_mpi.waitall_hangs_on_failed == (PAL_MPI_BUILD_ABI == PAL_ABI_OPENMPI));

    /* waitany reports the completed operation's own result in its status: none, no wait (the
     * truncated receive stays for the next call).  Messages to itself are sent before their
     * receives here: Open MPI 4.1 reports no truncation of one whose receive came first. */
    CHECK(mp_checked_isend(out, 16, 0, 22, MP_COMM_SELF, MP_SEND_STANDARD, NULL, &rs[1]) == 0);
    CHECK(mp_checked_irecv(in, 8, 0, 22, MP_COMM_SELF, NULL, &rs[0]) == 0);
    CHECK(mp_req_waitany(1, rs, NULL) == MP_EINVAL && last_error_mentions("status output"));
    CHECK(mp_req_waitany(1, rs, &st) == 0 && st.error == MP_ETRUNCATE);
    CHECK(mp_req_wait(rs[1], NULL) == 0);

    /* A sendrecv whose receive the library cannot post (above INT_MAX bytes without MPI-4's
     * large-count functions: Open MPI 4.1) posts neither half: its message to itself is not left
     * behind.  Where the library has them (MPICH 4), the 16 bytes arrive in the large buffer,
     * of which MPI touches only those. */
    {
        const int64_t huge = (int64_t)3 << 30;
        char *big = mmap(NULL, (size_t)huge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        CHECK(big != MAP_FAILED); /* address space only */
        rc = mp_sendrecv(out, 16, 0, 23, big, huge, 0, 23, MP_COMM_SELF, &st);
        if (!pal_mpi.Irecv_c) {
            CHECK(rc == MP_ECOUNT && last_error_mentions("large-count"));
            CHECK(mp_iprobe(0, 23, MP_COMM_SELF, &st) == 0); /* no message left behind */
        } else {
            CHECK(rc == 0 && st.bytes == 16 && memcmp(big, out, 16) == 0);
        }
        munmap(big, (size_t)huge);
    }

    /* Persistent collectives: every argument checked at init, also where each start posts the
     * nonblocking form (MPICH 4.0's gather, scatter, allgather), and the count arrays a kind does
     * not read are never read (here pointers to nothing). */
    {
        int64_t stage_bytes[2] = { 16, 16 };
        void *stages[2] = { NULL, NULL };
        const int32_t *nowhere = (const int32_t *)(uintptr_t)8;
        mp_coll_t g = { .kind = MP_COLL_GATHER, .root = 99, .dtype = MP_DT_INT32, .elem_size = 4, .count = 4 };
        mp_coll_t b = { .kind = MP_COLL_BCAST, .root = 0, .dtype = MP_DT_INT32, .elem_size = 4, .count = 4,
                        .sendcounts = nowhere, .sdispls = nowhere, .recvcounts = nowhere, .rdispls = nowhere };
        rc = mp_coll_init(MP_COMM_SELF, &g, stage_bytes, stages, &r);
        CHECK(pal_mpi.Gather_init ? rc == MP_EROOT && last_error_mentions("root 99") : rc == MP_ENOTSUP);
        g.root = 0;
        g.elem_size = 3; /* not an int32's */
        CHECK(mp_coll_init(MP_COMM_SELF, &g, stage_bytes, stages, &r) == (pal_mpi.Gather_init ? MP_EINVAL : MP_ENOTSUP));
        rc = mp_coll_init(MP_COMM_SELF, &b, stage_bytes, stages, &r);
        if (!pal_mpi.Bcast_init) {
            CHECK(rc == MP_ENOTSUP);
        } else {
            CHECK(rc == 0);
            memcpy(stages[1], out, 16);
            CHECK(mp_req_start(r, NULL, NULL) == 0 && mp_req_wait(r, NULL) == 0 && mp_req_free(r) == 0);
        }
    }

    /* Counters count accepted operations only. */
    mp_stats(&k0);
    CHECK(mp_checked_send(out, 16, 1, 24, MP_COMM_SELF, MP_SEND_STANDARD) == MP_ERANK);
    CHECK(mp_checked_recv(in, 16, 0, -7, MP_COMM_SELF, &st) == MP_ETAG);
    CHECK(mp_send_start(out, -1, 0, 24, MP_COMM_SELF, MP_SEND_STANDARD, &t) == MP_ECOUNT);
    CHECK(mp_sendrecv(out, 16, 1, 24, in, 16, 0, 24, MP_COMM_SELF, &st) == MP_ERANK);
    mp_stats(&k1);
    CHECK(k1.blocking_ops == k0.blocking_ops && k1.p2p_ops == k0.p2p_ops);

    /* A truncated persistent receive completed by testall: reported (Open MPI 4.1.4's
     * MPI_Testall returned MPI_SUCCESS there, the error only in the status). */
    {
        mp_req_t sreq;
        void *buf = in;
        int started = 0;
        CHECK(mp_recv_init(in, 8, 0, 27, MP_COMM_SELF, &r) == 0);
        CHECK(mp_checked_isend(out, 16, 0, 27, MP_COMM_SELF, MP_SEND_STANDARD, NULL, &sreq) == 0);
        CHECK(mp_req_startall(1, &r, &buf, NULL, &started) == 0 && started == 1);
        while ((rc = mp_req_testall(1, &r, &st)) == 0) {
        }
        CHECK(rc == MP_ETRUNCATE && st.error == MP_ETRUNCATE);
        CHECK(mp_req_wait(sreq, NULL) == 0 && mp_req_free(r) == 0);
    }

    /* Two failed operations in one set: the call returns the first, its text is the last error,
     * and the failing call counts once. */
    {
        mp_req_t ss[2];
        CHECK(mp_checked_isend(out, 8, 0, 25, MP_COMM_SELF, MP_SEND_STANDARD, NULL, &ss[0]) == 0);
        CHECK(mp_checked_isend(out, 12, 0, 26, MP_COMM_SELF, MP_SEND_STANDARD, NULL, &ss[1]) == 0);
        CHECK(mp_checked_irecv(in, 4, 0, 25, MP_COMM_SELF, NULL, &rs[0]) == 0 && mp_checked_irecv(in + 2, 4, 0, 26, MP_COMM_SELF, NULL, &rs[1]) == 0);
        CHECK(mp_req_waitall(2, ss, NULL) == 0);
    }
    mp_stats(&k0);
    CHECK(mp_req_waitall(2, rs, sts) == MP_ETRUNCATE && sts[0].error == MP_ETRUNCATE);
    mp_stats(&k1);
    CHECK(k1.mpi_errors == k0.mpi_errors + 1);
    /* MPICH's MPI_Waitall stops at the first failure: the other is left pending (MP_EPENDING),
     * active, for a later wait; Open MPI completes both. */
    CHECK(sts[1].error == MP_ETRUNCATE || (sts[1].error == MP_EPENDING && mp_req_wait(rs[1], &st) == MP_ETRUNCATE));
    CHECK(mp_req_active() == active);

    /* A failure whose MPI error text is longer than MPI_MAX_ERROR_STRING: MPICH 4.0's
     * MPI_Error_string then reads past that bound and writes on wherever the bytes there lead
     * (an Alltoallv truncated on MPI_COMM_SELF: 178 bytes past, in plain C).  The stack the
     * core's frames will use is filled with non-NUL bytes first, as a caller's garbage may be;
     * the core must still record the text without writing outside its buffer.  Before the fix
     * the read past the bound met that garbage and the write reached mp_mpi_fail's saved
     * registers; under tests/checkers.sh asan the call fails deterministically, and here the
     * library's view of the buffer is checked on every call. */
    g_real_error_string = pal_mpi.Error_string;
    pal_mpi.Error_string = error_string_checking_tail;
    for (int round = 0; round < 4; round++) {
        int32_t sc[1] = { 8 }, rcnt[1] = { 4 }, zero[1] = { 0 };
        int32_t big[8] = { 0 }, small[4] = { 0 };
        mp_coll_t c = { .kind = MP_COLL_ALLTOALLV, .dtype = MP_DT_INT32, .elem_size = 4, .sendbuf = big,
                        .recvbuf = small, .sendcounts = sc, .sdispls = zero, .recvcounts = rcnt, .rdispls = zero };
        char m[4096];
        dirty_stack_below();
        rc = mp_coll_run(MP_COMM_SELF, &c);
        CHECK(rc == MP_ETRUNCATE || rc == MP_EMPI);
        mp_last_error(NULL, m, (int)sizeof m);
        CHECK(strstr(m, "MPI_Alltoallv: ") == m && strstr(m, "runcat") != NULL); /* the library's text kept */
    }
    pal_mpi.Error_string = g_real_error_string;
    CHECK(g_error_string_calls == 4 && g_error_string_dirty_tails == 0);

    /* A port whose name does not fit the caller's buffer is closed again (before, it stayed
     * open with its name lost, and System.MP asked again, opening a second one). */
    {
        char small[4], name[MPI_MAX_PORT_NAME + 1];
        int n;
        g_real_close_port = pal_mpi.Close_port;
        pal_mpi.Close_port = counting_close_port;
        n = mp_open_port(name, (int)sizeof name);
        if (n == MP_EMPI) { /* MPICH over UCX has no ports ("not supported with ucx netmod") */
            CHECK(g_ports_closed == 0);
        } else {
            CHECK(n > 0 && (size_t)n == strlen(name) && g_ports_closed == 0);
            CHECK(mp_close_port(name) == 0 && g_ports_closed == 1);
            CHECK(mp_open_port(small, (int)sizeof small) == MP_EINVAL && g_ports_closed == 2);
            CHECK(mp_open_port(NULL, 0) == MP_EINVAL && g_ports_closed == 3);
        }
        pal_mpi.Close_port = g_real_close_port;
    }

    /* Every error class is named in the message, with the class recorded, whether MPI's own
     * string names it or not (MPICH's do not: "Invalid MPI_Win"); so is a failure the library
     * did not report, counted as MPI's. */
    {
        static const struct { int cls; const char *name; } k_classes[] = {
            { MPI_ERR_WIN, "MPI_ERR_WIN" }, { MPI_ERR_RMA_SYNC, "MPI_ERR_RMA_SYNC" },
            { MPI_ERR_RMA_SHARED, "MPI_ERR_RMA_SHARED" }, { MPI_ERR_NAME, "MPI_ERR_NAME" },
            { MPI_ERR_PORT, "MPI_ERR_PORT" }, { MPI_ERR_SPAWN, "MPI_ERR_SPAWN" }, { MPI_ERR_GROUP, "MPI_ERR_GROUP" },
            { MPI_ERR_NO_MEM, "MPI_ERR_NO_MEM" }, { MPI_ERR_KEYVAL, "MPI_ERR_KEYVAL" }, { MPI_ERR_IO, "MPI_ERR_IO" },
        };
        int cls = 0;
        for (size_t i = 0; i < sizeof k_classes / sizeof *k_classes; i++) {
            CHECK(MP_MPI_CHECK(k_classes[i].cls, "MPI_Fake") == MP_EMPI && last_error_mentions(k_classes[i].name));
            CHECK(mp_last_error(&cls, NULL, 0) > 0 && cls == k_classes[i].cls);
        }
        mp_stats(&k0);
        CHECK(mp_mpi_fail_unreported(MPI_ERR_IO, "MPI_Fake: MPI_ERR_IO: wrote %d of %d bytes", 0, 8) == MP_EMPI);
        CHECK(last_error_mentions("wrote 0 of 8 bytes") && mp_last_error(&cls, NULL, 0) > 0 && cls == MPI_ERR_IO);
        mp_stats(&k1);
        CHECK(k1.mpi_errors == k0.mpi_errors + 1);
    }
}

/* Stand-ins for MPI calls that do the real work, then report MPI_ERR_OTHER with every output
 * overwritten (0x5e bytes, as the fault library does): what the core gives its caller after a
 * failure must not come from them. */
static __typeof__(MPI_Wait) *g_real_wait;
static __typeof__(MPI_Win_shared_query) *g_real_shared_query;
static __typeof__(MPI_Dist_graph_neighbors_count) *g_real_dg_count;
static __typeof__(MPI_File_get_position) *g_real_get_position;

static int wait_then_fail(MPI_Request *r, MPI_Status *st)
{
    (void)g_real_wait(r, st);
    memset(st, 0x5e, sizeof *st);
    return MPI_ERR_OTHER;
}

static int test_then_fail(MPI_Request *r, int *flag, MPI_Status *st)
{
    int rc = g_real_test(r, flag, st);
    if (rc == MPI_SUCCESS && !*flag)
        return rc; /* pending: fails once it completes */
    memset(st, 0x5e, sizeof *st);
    return MPI_ERR_OTHER;
}

/* Stand-ins that fail the next g_fail_untouched calls without doing anything: the request
 * stays MPI's, its operation pending (what a library that did not end a failed operation would
 * leave), then pass to the library. */
static int g_fail_untouched;

static int wait_fails_untouched(MPI_Request *r, MPI_Status *st)
{
    if (g_fail_untouched > 0 && g_fail_untouched--)
        return MPI_ERR_OTHER;
    return g_real_wait(r, st);
}

static int test_fails_untouched(MPI_Request *r, int *flag, MPI_Status *st)
{
    if (g_fail_untouched > 0 && g_fail_untouched--) {
        *flag = 0;
        return MPI_ERR_OTHER;
    }
    return g_real_test(r, flag, st);
}

/* Stand-ins that count the calls a GC mark must not make, then pass to the library. */
static __typeof__(MPI_Cancel) *g_real_cancel;
static int g_cancels, g_waits;

static int cancel_counted(MPI_Request *r)
{
    g_cancels++;
    return g_real_cancel(r);
}

static int wait_counted(MPI_Request *r, MPI_Status *st)
{
    g_waits++;
    return g_real_wait(r, st);
}

/* An operation MPI can no longer cancel: the cancel is counted and does nothing. */
static int cancel_ignored(MPI_Request *r)
{
    (void)r;
    g_cancels++;
    return MPI_SUCCESS;
}

/* A wait where none may come: counted, and failing at once instead of waiting for good. */
static int wait_refused(MPI_Request *r, MPI_Status *st)
{
    (void)r, (void)st;
    g_waits++;
    return MPI_ERR_OTHER;
}

/* After a failed completion, no receive of tag is left posted in MPI: a message sent on it
 * now waits unmatched (a stale receive would have taken it into its old buffer). */
static int no_receive_left(int32_t *out, int tag)
{
    mp_status_t st;
    mp_req_t r;
    int32_t got[4] = { 0 };
    int unmatched;
    if (mp_checked_isend(out, 16, 0, tag, MP_COMM_SELF, MP_SEND_STANDARD, NULL, &r) != 0)
        return 0;
    unmatched = mp_iprobe(0, tag, MP_COMM_SELF, &st) == 1;
    if (unmatched && (mp_checked_recv(got, 16, 0, tag, MP_COMM_SELF, &st) != 0 || got[3] != out[3]))
        unmatched = 0;
    if (!unmatched) /* a stale receive took it, or will: take the send back */
        (void)mp_req_cancel(r);
    return mp_req_wait(r, NULL) == 0 && unmatched;
}

static __typeof__(MPI_Waitall) *g_real_waitall;
static int waitall_then_fail(int n, MPI_Request *r, MPI_Status *sts)
{
    (void)g_real_waitall(n, r, sts);
    memset(sts, 0x5e, (size_t)n * sizeof *sts);
    return MPI_ERR_OTHER; /* the call as a whole: no status is MPI's */
}

static int shared_query_then_fail(MPI_Win w, int rank, MPI_Aint *size, int *unit, void *base)
{
    (void)g_real_shared_query(w, rank, size, unit, base);
    memset(size, 0x5e, sizeof *size), memset(unit, 0x5e, sizeof *unit), memset(base, 0x5e, sizeof(void *));
    return MPI_ERR_OTHER;
}

static int dg_count_then_fail(MPI_Comm c, int *in, int *out, int *weighted)
{
    (void)g_real_dg_count(c, in, out, weighted);
    memset(in, 0x5e, sizeof *in), memset(out, 0x5e, sizeof *out), memset(weighted, 0x5e, sizeof *weighted);
    return MPI_ERR_OTHER;
}

static int get_position_then_fail(MPI_File f, MPI_Offset *o)
{
    (void)g_real_get_position(f, o);
    memset(o, 0x5e, sizeof *o);
    return MPI_ERR_OTHER;
}

/* MPI refusing a post, having written garbage over its request output (as MPI may: it is
 * undefined after a failure). */
static int isend_refuses(const void *b, int n, MPI_Datatype t, int dest, int tag, MPI_Comm c, MPI_Request *r)
{
    (void)b, (void)n, (void)t, (void)dest, (void)tag, (void)c;
    memset(r, 0x5e, sizeof *r);
    return MPI_ERR_OTHER;
}

static int irecv_refuses(void *b, int n, MPI_Datatype t, int src, int tag, MPI_Comm c, MPI_Request *r)
{
    return isend_refuses(b, n, t, src, tag, c, r);
}

/* A send, a synchronous send and a receive MPI refuses, each the common post (a rank, a tag, a
 * registered owner object): the error under MPI's call, no handle, no slot kept (the one given
 * back is the next post's), the counters as they were; the next post completes. */
void test_refused_posts(void)
{
    int32_t out[4] = { 1, 2, 3, 4 }, in[4] = { 0 };
    int owner = 0, active = mp_req_active(), top;
    __typeof__(pal_mpi.Isend) real_isend = pal_mpi.Isend, real_issend = pal_mpi.Issend;
    __typeof__(pal_mpi.Irecv) real_irecv = pal_mpi.Irecv;
    mp_stats_t k0, k1;
    mp_req_t r[2];

    /* The slot this thread's next post takes: the one just freed. */
    CHECK(mp_isend(out, 16, MP_PROC_NULL, 80, MP_COMM_SELF, MP_SEND_STANDARD, NULL, &r[0]) == 0);
    top = r[0] & 0xFFFFF;
    CHECK(mp_req_wait(r[0], NULL) == 0);
    mp_stats(&k0);
    pal_mpi.Isend = isend_refuses, pal_mpi.Issend = isend_refuses, pal_mpi.Irecv = irecv_refuses;
    r[0] = 12345;
    CHECK(mp_isend(out, 16, 0, 80, MP_COMM_SELF, MP_SEND_STANDARD, &owner, &r[0]) == MP_EMPI &&
          last_error_mentions("MPI_Isend") && r[0] == MP_REQ_NULL);
    r[0] = 12345;
    CHECK(mp_isend(out, 16, 0, 80, MP_COMM_SELF, MP_SEND_SYNC, &owner, &r[0]) == MP_EMPI &&
          last_error_mentions("MPI_Issend") && r[0] == MP_REQ_NULL);
    r[0] = 12345;
    CHECK(mp_irecv(in, 16, 0, 80, MP_COMM_SELF, &owner, &r[0]) == MP_EMPI && last_error_mentions("MPI_Irecv") &&
          r[0] == MP_REQ_NULL);
    pal_mpi.Isend = real_isend, pal_mpi.Issend = real_issend, pal_mpi.Irecv = real_irecv;
    mp_stats(&k1);
    CHECK(mp_req_active() == active);
    CHECK(k1.p2p_ops == k0.p2p_ops && k1.p2p_bytes == k0.p2p_bytes && k1.registered == k0.registered);

    CHECK(mp_irecv(in, 16, 0, 81, MP_COMM_SELF, &owner, &r[0]) == 0 && (r[0] & 0xFFFFF) == top &&
          mp_isend(out, 16, 0, 81, MP_COMM_SELF, MP_SEND_STANDARD, &owner, &r[1]) == 0);
    CHECK(mp_req_waitall(2, r, NULL) == 0 && memcmp(in, out, sizeof in) == 0 && mp_req_active() == active);
    mp_stats(&k1);
    CHECK(k1.p2p_ops == k0.p2p_ops + 2 && k1.p2p_bytes == k0.p2p_bytes + 32 && k1.registered == k0.registered + 2);
}

/* A call MPI failed leaves its caller's outputs as they were: a token's status (its wait and
 * its test, as a failed blocking call's status), a shared window's size, unit and base, a
 * distributed graph's degrees, a file's position.  Each failure is reported under its call. */
void test_failed_outputs(void)
{
    const mp_status_t mark = { .source = -77, .tag = -77, .error = -77, .cancelled = -77, .bytes = -77 };
    int32_t out[4] = { 1, 2, 3, 4 }, in[4] = { 0 }, self = 0, unit = -7, indeg = -7, outdeg = -7, weighted = -7;
    int64_t bytes = -7, offset = -7;
    char path[] = "/tmp/motor-test-outputs-XXXXXX";
    void *base = &unit, *mem = NULL;
    int32_t win = -1;
    mp_comm_t g = -1;
    mp_file_t f = -1;
    mp_status_t st;
    mp_token_t t = 0;
    mp_req_t r;
    int rc, active = mp_req_active(), fd;
    g_real_wait = pal_mpi.Wait, g_real_test = pal_mpi.Test;

    /* A token's wait: the receive completes, MPI reports a failure; its slot is given back. */
    CHECK(mp_recv_start(in, 16, 0, 70, MP_COMM_SELF, &st, &t) == 0);
    CHECK(mp_checked_isend(out, 16, 0, 70, MP_COMM_SELF, MP_SEND_STANDARD, NULL, &r) == 0);
    st = mark;
    pal_mpi.Wait = wait_then_fail;
    rc = mp_token_wait(t, &st);
    pal_mpi.Wait = g_real_wait;
    CHECK(rc == MP_EMPI && last_error_mentions("MPI_Wait") && memcmp(&st, &mark, sizeof st) == 0);
    CHECK(mp_req_wait(r, NULL) == 0 && mp_req_active() == active);

    /* A token's test. */
    CHECK(mp_recv_start(in, 16, 0, 71, MP_COMM_SELF, &st, &t) == 0);
    CHECK(mp_checked_isend(out, 16, 0, 71, MP_COMM_SELF, MP_SEND_STANDARD, NULL, &r) == 0);
    st = mark;
    pal_mpi.Test = test_then_fail;
    while ((rc = mp_token_test(t, &st)) == 0)
        ;
    pal_mpi.Test = g_real_test;
    CHECK(rc == MP_EMPI && last_error_mentions("MPI_Test") && memcmp(&st, &mark, sizeof st) == 0);
    CHECK(mp_req_wait(r, NULL) == 0 && mp_req_active() == active);

    /* A completion that fails without ending its operation (the request still MPI's): the
     * operation is cancelled and waited for before the failure is reported, so no buffer the
     * caller gets back is still MPI's.  A token's wait and test, a request's wait and test. */
    CHECK(mp_recv_start(in, 16, 0, 76, MP_COMM_SELF, &st, &t) == 0);
    pal_mpi.Wait = wait_fails_untouched, g_fail_untouched = 1;
    rc = mp_token_wait(t, &st);
    pal_mpi.Wait = g_real_wait;
    CHECK(rc == MP_EMPI && last_error_mentions("MPI_Wait") && mp_req_active() == active && no_receive_left(out, 76));
    CHECK(mp_recv_start(in, 16, 0, 77, MP_COMM_SELF, &st, &t) == 0);
    pal_mpi.Test = test_fails_untouched, g_fail_untouched = 1;
    rc = mp_token_test(t, &st);
    pal_mpi.Test = g_real_test;
    CHECK(rc == MP_EMPI && last_error_mentions("MPI_Test") && mp_req_active() == active && no_receive_left(out, 77));
    CHECK(mp_checked_irecv(in, 16, 0, 78, MP_COMM_SELF, NULL, &r) == 0);
    pal_mpi.Wait = wait_fails_untouched, g_fail_untouched = 1;
    rc = mp_req_wait(r, &st);
    pal_mpi.Wait = g_real_wait;
    CHECK(rc == MP_EMPI && last_error_mentions("MPI_Wait") && mp_req_active() == active && no_receive_left(out, 78));
    CHECK(mp_checked_irecv(in, 16, 0, 79, MP_COMM_SELF, NULL, &r) == 0);
    pal_mpi.Test = test_fails_untouched, g_fail_untouched = 1;
    rc = mp_req_test(r, &st);
    pal_mpi.Test = g_real_test;
    CHECK(rc == MP_EMPI && last_error_mentions("MPI_Test") && mp_req_active() == active && no_receive_left(out, 79));

    /* The same failure met by a GC mark's test: the mark neither cancels nor waits (every
     * managed thread is stopped, and an operation MPI can no longer cancel could be waiting for
     * one of them); the request stays in flight, its buffer's object reported, and is not tested
     * again at the next mark.  The owner's next completion ends it with the failure: a test, a
     * wait, a set's wait (with a second receive that completes normally). */
    for (int how = 0; how < 3; how++) {
        static char mark_object[64];
        int32_t in2[4] = { 0 };
        mp_status_t sts[2] = { mark, mark };
        mp_req_t rs[2];
        int tag = 90 + how;
        g_real_cancel = pal_mpi.Cancel;
        CHECK(mp_checked_irecv(in, 16, 0, tag, MP_COMM_SELF, mark_object, &r) == 0);
        pal_mpi.Test = test_fails_untouched, g_fail_untouched = 1;
        pal_mpi.Cancel = cancel_counted, pal_mpi.Wait = wait_counted, g_cancels = g_waits = 0;
        g_reported = 0;
        CHECK(mp_gc_scan(MP_GC_MARK, count_report, NULL) == 1 && g_reported == 1 && g_last_slot &&
              *g_last_slot == mark_object);
        CHECK(g_cancels == 0 && g_waits == 0 && g_fail_untouched == 0 && mp_req_live(r));
        pal_mpi.Test = test_fails_untouched, g_fail_untouched = 1; /* a second test would fail again: none comes */
        g_reported = 0;
        CHECK(mp_gc_scan(MP_GC_MARK, count_report, NULL) == 1 && g_reported == 1 && g_fail_untouched == 1);
        g_fail_untouched = 0;
        pal_mpi.Test = g_real_test;
        if (how == 0) {
            st = mark;
            rc = mp_req_test(r, &st);
            CHECK(rc == MP_EMPI && st.error == MP_EMPI && st.source == MP_ANY_SOURCE);
        } else if (how == 1) {
            rc = mp_req_wait(r, &st);
            CHECK(rc == MP_EMPI && st.error == MP_EMPI);
        } else {
            rs[0] = r;
            CHECK(mp_checked_irecv(in2, 16, 0, 95, MP_COMM_SELF, NULL, &rs[1]) == 0 &&
                  mp_checked_send(out, 16, 0, 95, MP_COMM_SELF, MP_SEND_STANDARD) == 0);
            rc = mp_req_waitall(2, rs, sts);
            CHECK(rc == MP_EMPI && sts[0].error == MP_EMPI && sts[1].error == 0 && sts[1].bytes == 16 && in2[3] == 4);
        }
        /* one cancel, on its owner's thread, and a wait only where the owner waits (plus, where
         * the core waits for a set one request at a time, Open MPI, the second receive's wait):
         * the test ends the cancelled receive by testing it */
        CHECK(last_error_mentions("MPI_Test") && g_cancels == 1 &&
              g_waits == (how != 0) + (how == 2 && pal_mpi.waitall_hangs_on_failed));
        pal_mpi.Cancel = g_real_cancel, pal_mpi.Wait = g_real_wait;
        g_reported = 0;
        CHECK(mp_gc_scan(MP_GC_MARK, count_report, NULL) == 0 && g_reported == 0);
        CHECK(mp_req_active() == active && no_receive_left(out, tag));
    }

    /* A test that fails and leaves its operation with MPI, which can no longer cancel it (a
     * stand-in MPI_Cancel that does nothing): the test cancels it once and never waits; the
     * request stays in flight, its object reported at a GC mark, and tests (alone, a set, the
     * progress engine's testsome) find it incomplete until MPI lets go of it (here: a message
     * arrives); then it completes with the failure first seen.  Or a wait ends it (how 3). */
    for (int how = 0; how < 4; how++) {
        static char held_object[64];
        mp_status_t sts[1] = { mark };
        int tag = 100 + how, indices[1] = { -1 }, rounds;
        g_real_cancel = pal_mpi.Cancel;
        CHECK(mp_checked_irecv(in, 16, 0, tag, MP_COMM_SELF, held_object, &r) == 0);
        pal_mpi.Test = test_fails_untouched, g_fail_untouched = 1;
        pal_mpi.Cancel = cancel_ignored, pal_mpi.Wait = wait_refused, g_cancels = g_waits = 0;
        st = mark;
        for (rounds = 0; rounds < 3; rounds++) {
            CHECK(mp_req_test(r, &st) == 0 && memcmp(&st, &mark, sizeof st) == 0);
            CHECK(mp_req_testall(1, &r, sts) == 0 && memcmp(&sts[0], &mark, sizeof st) == 0);
            CHECK(mp_req_testsome(1, &r, indices, sts) == 0 && indices[0] == -1);
        }
        CHECK(g_cancels == 1 && g_waits == 0 && g_fail_untouched == 0 && mp_req_live(r));
        pal_mpi.Test = test_fails_untouched, g_fail_untouched = 1; /* a mark does not test it again */
        g_reported = 0;
        CHECK(mp_gc_scan(MP_GC_MARK, count_report, NULL) == 1 && g_reported == 1 && g_last_slot &&
              *g_last_slot == held_object && g_fail_untouched == 1);
        g_fail_untouched = 0;
        pal_mpi.Test = g_real_test, pal_mpi.Wait = wait_counted;
        in[3] = 0;
        CHECK(mp_checked_send(out, 16, 0, tag, MP_COMM_SELF, MP_SEND_STANDARD) == 0); /* MPI lets go */
        if (how == 0) {
            rc = mp_req_test(r, &st);
            CHECK(rc == MP_EMPI && st.error == MP_EMPI);
        } else if (how == 1) {
            rc = mp_req_testall(1, &r, sts);
            CHECK(rc == MP_EMPI && sts[0].error == MP_EMPI);
        } else if (how == 2) {
            CHECK(mp_req_testsome(1, &r, indices, sts) == 1 && indices[0] == 0 && sts[0].error == MP_EMPI);
        } else {
            rc = mp_req_wait(r, &st);
            CHECK(rc == MP_EMPI && st.error == MP_EMPI);
        }
        CHECK(last_error_mentions("MPI_Test") && g_cancels == 1 && g_waits == (how == 3) && in[3] == 4);
        pal_mpi.Cancel = g_real_cancel, pal_mpi.Wait = g_real_wait;
        g_reported = 0;
        CHECK(mp_gc_scan(MP_GC_MARK, count_report, NULL) == 0 && g_reported == 0);
        CHECK(mp_req_active() == active && no_receive_left(out, tag));
    }

    /* A set MPI completed and then failed as a whole (not MPI_ERR_IN_STATUS): every entry has the
     * call's error, source and tag unknown, and nothing is left; as a request set and as a list.
     * (Where the core waits for a set one request at a time, Open MPI, Waitall is not called.) */
    if (!pal_mpi.waitall_hangs_on_failed) {
        const mp_status_t unknown = { .source = MP_ANY_SOURCE, .tag = MP_ANY_TAG, .error = MP_EMPI };
        mp_status_t sts[2] = { mark, mark };
        mp_req_t rs[2];
        mp_list_t l = NULL;
        g_real_waitall = pal_mpi.Waitall;
        CHECK(mp_checked_irecv(in, 16, 0, 72, MP_COMM_SELF, NULL, &rs[0]) == 0 &&
              mp_checked_irecv(in, 16, 0, 73, MP_COMM_SELF, NULL, &rs[1]) == 0);
        CHECK(mp_checked_send(out, 16, 0, 72, MP_COMM_SELF, MP_SEND_STANDARD) == 0 &&
              mp_checked_send(out, 16, 0, 73, MP_COMM_SELF, MP_SEND_STANDARD) == 0);
        pal_mpi.Waitall = waitall_then_fail;
        rc = mp_req_waitall(2, rs, sts);
        pal_mpi.Waitall = g_real_waitall;
        CHECK(rc == MP_EMPI && last_error_mentions("MPI_Waitall"));
        CHECK(memcmp(&sts[0], &unknown, sizeof unknown) == 0 && memcmp(&sts[1], &unknown, sizeof unknown) == 0);
        CHECK(mp_req_active() == active && mp_req_live(rs[0]) == 0 && mp_req_live(rs[1]) == 0);

        sts[0] = sts[1] = mark;
        CHECK(mp_list_create(2, &l) == 0);
        CHECK(mp_checked_list_irecv(l, in, 16, 0, 74, MP_COMM_SELF, NULL) == 0 &&
              mp_checked_list_irecv(l, in, 16, 0, 75, MP_COMM_SELF, NULL) == 1);
        CHECK(mp_checked_send(out, 16, 0, 74, MP_COMM_SELF, MP_SEND_STANDARD) == 0 &&
              mp_checked_send(out, 16, 0, 75, MP_COMM_SELF, MP_SEND_STANDARD) == 0);
        pal_mpi.Waitall = waitall_then_fail;
        rc = mp_list_waitall(l, sts);
        pal_mpi.Waitall = g_real_waitall;
        CHECK(rc == MP_EMPI && last_error_mentions("MPI_Waitall"));
        CHECK(memcmp(&sts[0], &unknown, sizeof unknown) == 0 && memcmp(&sts[1], &unknown, sizeof unknown) == 0);
        CHECK(mp_list_count(l) == 0 && mp_list_free(l, NULL) == 0);
    }

    /* A shared window's query. */
    CHECK(mp_win_allocate(MP_COMM_SELF, 64, 8, MP_WIN_ALLOCATE_SHARED, MP_INFO_NULL, &mem, &win) == 0 && mem);
    g_real_shared_query = pal_mpi.Win_shared_query, pal_mpi.Win_shared_query = shared_query_then_fail;
    rc = mp_win_shared_query(win, 0, &bytes, &unit, &base);
    pal_mpi.Win_shared_query = g_real_shared_query;
    CHECK(rc == MP_EMPI && last_error_mentions("MPI_Win_shared_query") && bytes == -7 && unit == -7 && base == &unit);
    CHECK(mp_win_shared_query(win, 0, &bytes, &unit, &base) == 0 && bytes == 64 && unit == 8 && base == mem);
    CHECK(mp_win_free(win) == 0);

    /* A distributed graph's degrees. */
    CHECK(mp_comm_rank(MP_COMM_SELF, &self) == 0);
    CHECK(mp_dist_graph_create_adjacent(MP_COMM_SELF, 1, &self, NULL, 1, &self, NULL, 0, 0, &g) == 0);
    g_real_dg_count = pal_mpi.Dist_graph_neighbors_count, pal_mpi.Dist_graph_neighbors_count = dg_count_then_fail;
    rc = mp_topo_degrees(g, &indeg, &outdeg, &weighted);
    pal_mpi.Dist_graph_neighbors_count = g_real_dg_count;
    CHECK(rc == MP_EMPI && last_error_mentions("MPI_Dist_graph_neighbors_count") && indeg == -7 && outdeg == -7 &&
          weighted == -7);
    CHECK(mp_topo_degrees(g, &indeg, &outdeg, &weighted) == 0 && indeg == 1 && outdeg == 1 && weighted == 0);
    CHECK(mp_comm_free(g) == 0);

    /* A file's position. */
    CHECK((fd = mkstemp(path)) >= 0);
    close(fd);
    CHECK(mp_file_open(MP_COMM_SELF, path, MP_MODE_RDWR, MP_INFO_NULL, &f) == 0);
    g_real_get_position = pal_mpi.File_get_position, pal_mpi.File_get_position = get_position_then_fail;
    rc = mp_file_position(f, 0, &offset);
    pal_mpi.File_get_position = g_real_get_position;
    CHECK(rc == MP_EMPI && last_error_mentions("MPI_File_get_position") && offset == -7);
    CHECK(mp_file_position(f, 0, &offset) == 0 && offset == 0);
    CHECK(mp_file_close(f) == 0 && mp_file_delete(path, MP_INFO_NULL) == 0);
}

/* ---- sets of sends completed without statuses ---- */

static int g_ignored_calls, g_status_calls;

/* Counts whether the core asked MPI for statuses, then waits. */
static int waitall_watched(int n, MPI_Request *r, MPI_Status *sts)
{
    if (sts == MPI_STATUSES_IGNORE)
        g_ignored_calls++;
    else
        g_status_calls++;
    return g_real_waitall(n, r, sts);
}

static __typeof__(MPI_Testall) *g_real_testall;
static int g_ignored_tests, g_status_tests;
static int waitall_ignored_fails(int n, MPI_Request *r, MPI_Status *sts);

/* Counts whether the core asked MPI for statuses, then tests. */
static int testall_watched(int n, MPI_Request *r, int *flag, MPI_Status *sts)
{
    if (sts == MPI_STATUSES_IGNORE)
        g_ignored_tests++;
    else
        g_status_tests++;
    return g_real_testall(n, r, flag, sts);
}

/* A test of a set failed without statuses, as waitall_ignored_fails. */
static int testall_ignored_fails(int n, MPI_Request *r, int *flag, MPI_Status *sts)
{
    *flag = 1;
    return waitall_ignored_fails(n, r, sts);
}

/* A set failed without statuses, as MPICH 4.0 fails one: the first two requests complete
 * (freed), the rest stay pending, and the call says MPI_ERR_IN_STATUS and not which failed. */
static int waitall_ignored_fails(int n, MPI_Request *r, MPI_Status *sts)
{
    if (sts != MPI_STATUSES_IGNORE)
        return MPI_ERR_INTERN; /* a set of sends only: the test expects no statuses asked for */
    for (int i = 0; i < n && i < 2; i++)
        (void)g_real_wait(&r[i], MPI_STATUS_IGNORE);
    return MPI_ERR_IN_STATUS;
}

/* A set of sends asks MPI for no statuses and writes each send's itself (all zero, also when the
 * caller wants them); a set with a receive, and one with a send asked to be cancelled, asks for
 * MPI's.  When such a set fails, MPI names no operation: each it completed carries the call's
 * error, each it left pending stays in flight (MP_EPENDING) for a later wait, and the failure
 * is reported under MPI_Waitall; as a request set and as a list. */
void test_sends_without_statuses(void)
{
    int32_t out[4] = { 5, 6, 7, 8 }, in[3][4];
    const mp_status_t mark = { .source = 0x5e, .tag = 0x5e, .error = 0x5e, .cancelled = 0x5e, .bytes = 0x5e };
    const mp_status_t sent = { 0 };
    mp_status_t sts[3];
    mp_req_t rs[3], sends[3];
    mp_list_t l = NULL;
    int active = mp_req_active(), rc;
    /* Where the core waits for a set one request at a time (Open MPI), MPI_Waitall is not called:
     * the statuses written and the data are checked, not what MPI was asked. */
    const int watched = !pal_mpi.waitall_hangs_on_failed;
    g_real_waitall = pal_mpi.Waitall;
    g_real_wait = pal_mpi.Wait;
    g_ignored_calls = g_status_calls = 0;
    if (watched)
        pal_mpi.Waitall = waitall_watched;

    /* A set of sends, its statuses asked for: none from MPI, each written as a send's. */
    for (int i = 0; i < 3; i++)
        CHECK(mp_checked_irecv(in[i], 16, 0, 90 + i, MP_COMM_SELF, NULL, &rs[i]) == 0);
    for (int i = 0; i < 3; i++)
        CHECK(mp_checked_isend(out, 16, 0, 90 + i, MP_COMM_SELF, MP_SEND_STANDARD, NULL, &sends[i]) == 0);
    sts[0] = sts[1] = sts[2] = mark;
    CHECK(mp_req_waitall_owned(3, sends, sts) == 0 && (!watched || (g_ignored_calls == 1 && g_status_calls == 0)));
    for (int i = 0; i < 3; i++)
        CHECK(memcmp(&sts[i], &sent, sizeof sent) == 0);
    /* The receives' set asks for statuses: a receive's says who sent what. */
    CHECK(mp_req_waitall(3, rs, sts) == 0 && (!watched || (g_ignored_calls == 1 && g_status_calls == 1)));
    CHECK(sts[2].tag == 92 && sts[2].bytes == 16 && in[2][3] == 8 && mp_req_active() == active);

    /* A send asked to be cancelled: only MPI's status says whether it was (here its receive is
     * posted, so MPI has most likely matched it; the set must ask either way). */
    CHECK(mp_checked_irecv(in[0], 16, 0, 95, MP_COMM_SELF, NULL, &rs[0]) == 0 &&
          mp_checked_irecv(in[1], 16, 0, 96, MP_COMM_SELF, NULL, &rs[1]) == 0);
    CHECK(mp_checked_isend(out, 16, 0, 95, MP_COMM_SELF, MP_SEND_STANDARD, NULL, &sends[0]) == 0 &&
          mp_checked_isend(out, 16, 0, 96, MP_COMM_SELF, MP_SEND_STANDARD, NULL, &sends[1]) == 0);
    CHECK(mp_req_cancel(sends[0]) == 0);
    sts[0] = sts[1] = mark;
    CHECK(mp_req_waitall(2, sends, sts) == 0 && (!watched || (g_status_calls == 2 && g_ignored_calls == 1)));
    CHECK(sts[1].error == 0 && !sts[1].cancelled && (sts[0].cancelled == 0 || sts[0].cancelled == 1));
    if (sts[0].cancelled) /* its receive gets nothing: take it back too */
        CHECK(mp_req_cancel(rs[0]) == 0);
    CHECK(mp_req_waitall(2, rs, NULL) == 0 && mp_req_active() == active);

    /* A list of sends: the same, with and without statuses. */
    CHECK(mp_list_create(3, &l) == 0);
    for (int round = 0; round < 2; round++) {
        for (int i = 0; i < 3; i++)
            CHECK(mp_checked_irecv(in[i], 16, 0, 100 + i, MP_COMM_SELF, NULL, &rs[i]) == 0);
        for (int i = 0; i < 3; i++)
            CHECK(mp_checked_list_isend(l, out, 16, 0, 100 + i, MP_COMM_SELF, MP_SEND_STANDARD, NULL) == i);
        sts[0] = sts[1] = sts[2] = mark;
        CHECK(mp_list_waitall(l, round ? sts : NULL) == 0 && (!watched || g_ignored_calls == 2 + round));
        for (int i = 0; round && i < 3; i++)
            CHECK(memcmp(&sts[i], &sent, sizeof sent) == 0);
        CHECK(mp_req_waitall(3, rs, NULL) == 0 && in[2][0] == 5);
    }

    pal_mpi.Waitall = g_real_waitall;

    /* The polls before a wait test a set of sends without statuses too. */
    g_real_testall = pal_mpi.Testall;
    g_ignored_tests = g_status_tests = 0;
    pal_mpi.Testall = testall_watched;
    for (int i = 0; i < 3; i++)
        CHECK(mp_checked_irecv(in[i], 16, 0, 104 + i, MP_COMM_SELF, NULL, &rs[i]) == 0);
    for (int i = 0; i < 3; i++)
        CHECK(mp_checked_list_isend(l, out, 16, 0, 104 + i, MP_COMM_SELF, MP_SEND_STANDARD, NULL) == i);
    while ((rc = mp_list_testall(l, NULL)) == 0)
        ;
    CHECK(rc == 1 && mp_list_count(l) == 0 && g_ignored_tests >= 1 && g_status_tests == 0);
    CHECK(mp_req_testall(3, rs, NULL) == 1 && g_status_tests == 1 && in[2][1] == 6); /* receives: statuses */
    for (int i = 0; i < 3; i++)
        CHECK(mp_checked_isend(out, 16, 0, 107 + i, MP_COMM_SELF, MP_SEND_STANDARD, NULL, &sends[i]) == 0);
    for (int i = 0; i < 3; i++) /* the sends' messages taken, so that they complete */
        CHECK(mp_checked_recv(in[i], 16, 0, 107 + i, MP_COMM_SELF, NULL) == 0 && in[i][1] == 6);
    sts[0] = sts[1] = sts[2] = mark;
    while ((rc = mp_req_testall(3, sends, sts)) == 0)
        ;
    CHECK(rc == 1 && g_status_tests == 1 && memcmp(&sts[2], &sent, sizeof sent) == 0);
    pal_mpi.Testall = g_real_testall;
    if (!watched) {
        CHECK(mp_list_free(l, NULL) == 0 && mp_req_active() == active);
        return;
    }

    /* A test that fails without statuses: the same as a wait's failure, under MPI_Testall. */
    for (int i = 0; i < 3; i++)
        CHECK(mp_checked_irecv(in[i], 16, 0, 114 + i, MP_COMM_SELF, NULL, &rs[i]) == 0);
    for (int i = 0; i < 3; i++)
        CHECK(mp_checked_isend(out, 16, 0, 114 + i, MP_COMM_SELF, MP_SEND_STANDARD, NULL, &sends[i]) == 0);
    pal_mpi.Testall = testall_ignored_fails;
    sts[0] = sts[1] = sts[2] = mark;
    rc = mp_req_testall(3, sends, sts);
    pal_mpi.Testall = g_real_testall;
    CHECK(rc == MP_EMPI && last_error_mentions("MPI_Testall (a set with no receive"));
    CHECK(sts[0].error == MP_EMPI && sts[1].error == MP_EMPI && sts[2].error == MP_EPENDING && mp_req_live(sends[2]));
    CHECK(mp_req_wait(sends[2], NULL) == 0 && mp_req_waitall(3, rs, NULL) == 0 && mp_req_active() == active);

    /* Failed without statuses: a request set. */
    for (int i = 0; i < 3; i++)
        CHECK(mp_checked_irecv(in[i], 16, 0, 110 + i, MP_COMM_SELF, NULL, &rs[i]) == 0);
    pal_mpi.Waitall = waitall_ignored_fails;
    for (int i = 0; i < 3; i++)
        CHECK(mp_checked_isend(out, 16, 0, 110 + i, MP_COMM_SELF, MP_SEND_STANDARD, NULL, &sends[i]) == 0);
    sts[0] = sts[1] = sts[2] = mark;
    rc = mp_req_waitall_owned(3, sends, sts);
    CHECK(rc == MP_EMPI && last_error_mentions("MPI_Waitall (a set with no receive"));
    CHECK(sts[0].error == MP_EMPI && sts[1].error == MP_EMPI && sts[2].error == MP_EPENDING);
    CHECK(!mp_req_live(sends[0]) && !mp_req_live(sends[1]) && mp_req_live(sends[2]));
    pal_mpi.Waitall = g_real_waitall;
    CHECK(mp_req_wait(sends[2], NULL) == 0);
    CHECK(mp_req_waitall(3, rs, NULL) == 0 && mp_req_active() == active);

    /* And a list: the pending entry stays in it, for the next WaitAll. */
    for (int i = 0; i < 3; i++)
        CHECK(mp_checked_irecv(in[i], 16, 0, 120 + i, MP_COMM_SELF, NULL, &rs[i]) == 0);
    pal_mpi.Waitall = waitall_ignored_fails;
    for (int i = 0; i < 3; i++)
        CHECK(mp_checked_list_isend(l, out, 16, 0, 120 + i, MP_COMM_SELF, MP_SEND_STANDARD, NULL) == i);
    sts[0] = sts[1] = sts[2] = mark;
    rc = mp_list_waitall(l, sts);
    pal_mpi.Waitall = g_real_waitall;
    CHECK(rc == MP_EMPI && last_error_mentions("MPI_Waitall (a set with no receive"));
    CHECK(sts[0].error == MP_EMPI && sts[1].error == MP_EMPI && sts[2].error == MP_EPENDING);
    CHECK(mp_list_count(l) == 3 && mp_list_pending(l, 2) == 1 && mp_list_pending(l, 0) == 0);
    CHECK(mp_list_waitall(l, NULL) == 0 && mp_list_count(l) == 0 && mp_list_free(l, NULL) == 0);
    CHECK(mp_req_waitall(3, rs, NULL) == 0);
    CHECK(mp_req_active() == active);
}

/* ---- ranges of a list: what MPI is asked for, and failures inside a range ---- */

/* A set that MPI fails as MPICH fails one with statuses: the first request completes (its
 * status written), the second completes with an error in its status, the rest stay pending. */
static int set_fails_second(int n, MPI_Request *r, MPI_Status *sts)
{
    for (int i = 0; i < n; i++) {
        if (i < 2) {
            MPI_Status s;
            (void)g_real_wait(&r[i], &s);
            if (sts != MPI_STATUSES_IGNORE) {
                sts[i] = s;
                sts[i].MPI_ERROR = i == 1 ? MPI_ERR_OTHER : MPI_SUCCESS;
            }
        } else if (sts != MPI_STATUSES_IGNORE) {
            sts[i].MPI_ERROR = MPI_ERR_PENDING;
        }
    }
    return MPI_ERR_IN_STATUS;
}

static int testall_fails_second(int n, MPI_Request *r, int *flag, MPI_Status *sts)
{
    *flag = 1;
    return set_fails_second(n, r, sts);
}

/* How a failure is injected: into MPI_Waitall (where the core calls it: not on Open MPI, whose
 * sets it waits for one request at a time) or MPI_Testall, each with or without statuses. */
static void inject(int by_test, int with_statuses)
{
    if (by_test)
        pal_mpi.Testall = with_statuses ? testall_fails_second : testall_ignored_fails;
    else
        pal_mpi.Waitall = with_statuses ? set_fails_second : waitall_ignored_fails;
}

static int complete_range(mp_list_t l, int by_test, int first, int count, mp_status_t *st)
{
    int rc;
    if (!by_test)
        return mp_list_waitall_range(l, first, count, st);
    while ((rc = mp_list_testall_range(l, first, count, st)) == 0)
        ;
    return rc == 1 ? 0 : rc;
}

/* A range asks MPI for statuses only when it holds a receive; a range's completed receives
 * leave the list's count of open ones, so that a later set of sends alone asks for none. */
static void range_statuses_asked(mp_list_t l, int watched)
{
    int32_t out[4] = { 5, 6, 7, 8 }, in[3][4];
    const mp_status_t sent = { 0 };
    mp_status_t sts[4];
    mp_req_t rs[3];
    for (int by_test = 0; by_test < 2; by_test++) {
        int *ignored = by_test ? &g_ignored_tests : &g_ignored_calls;
        int *asked = by_test ? &g_status_tests : &g_status_calls;
        const int seen = by_test || watched;
        *ignored = *asked = 0;
        for (int i = 0; i < 2; i++)
            CHECK(mp_checked_irecv(in[i], 16, 0, 130 + i, MP_COMM_SELF, NULL, &rs[i]) == 0);
        CHECK(mp_checked_list_isend(l, out, 16, 0, 130, MP_COMM_SELF, MP_SEND_STANDARD, NULL) == 0);
        CHECK(mp_checked_list_isend(l, out, 16, 0, 131, MP_COMM_SELF, MP_SEND_SYNC, NULL) == 1);
        CHECK(mp_checked_list_irecv(l, in[2], 16, 0, 132, MP_COMM_SELF, NULL) == 2);
        CHECK(mp_checked_list_isend(l, out, 12, 0, 132, MP_COMM_SELF, MP_SEND_STANDARD, NULL) == 3);
        /* The sends: no statuses from MPI, each written as a send's. */
        sts[0] = sts[1] = (mp_status_t){ .tag = 0x5e, .bytes = 0x5e };
        CHECK(complete_range(l, by_test, 0, 2, sts) == 0 && (!seen || (*ignored >= 1 && *asked == 0)));
        CHECK(memcmp(&sts[0], &sent, sizeof sent) == 0 && memcmp(&sts[1], &sent, sizeof sent) == 0);
        CHECK(mp_req_waitall(2, rs, NULL) == 0 && in[1][3] == 8);
        /* The receive and its send: MPI's statuses. */
        CHECK(complete_range(l, by_test, 2, 2, sts) == 0 && (!seen || *asked >= 1));
        CHECK(sts[0].source == 0 && sts[0].tag == 132 && sts[0].bytes == 12 && memcmp(&sts[1], &sent, sizeof sent) == 0);
        CHECK(mp_list_count(l) == 0);
    }
    /* A receive completed by a range: a whole-list wait or test for the sends left asks for no
     * statuses. */
    for (int by_test = 0; by_test < 2; by_test++) {
        int *ignored = by_test ? &g_ignored_tests : &g_ignored_calls;
        int *asked = by_test ? &g_status_tests : &g_status_calls;
        const int seen = by_test || watched;
        int rc, asked_by_range;
        *ignored = *asked = 0;
        CHECK(mp_checked_irecv(in[0], 16, 0, 134, MP_COMM_SELF, NULL, &rs[0]) == 0);
        CHECK(mp_checked_list_irecv(l, in[1], 16, 0, 133, MP_COMM_SELF, NULL) == 0);
        CHECK(mp_checked_list_isend(l, out, 16, 0, 133, MP_COMM_SELF, MP_SEND_STANDARD, NULL) == 1);
        CHECK(mp_checked_list_isend(l, out, 16, 0, 134, MP_COMM_SELF, MP_SEND_STANDARD, NULL) == 2);
        CHECK(complete_range(l, by_test, 0, 1, sts) == 0 && sts[0].tag == 133 && (!seen || *asked >= 1));
        asked_by_range = *asked;
        for (int i = 0; i < 3; i++)
            sts[i] = (mp_status_t){ .tag = 0x5e };
        if (by_test)
            while ((rc = mp_list_testall(l, sts)) == 0)
                ;
        else
            rc = mp_list_waitall(l, sts) == 0;
        CHECK(rc == 1 && (!seen || (*asked == asked_by_range && *ignored >= 1)));
        for (int i = 0; i < 3; i++)
            CHECK(memcmp(&sts[i], &sent, sizeof sent) == 0);
        CHECK(mp_list_count(l) == 0 && mp_req_wait(rs[0], NULL) == 0);
    }
}

/* MPI fails a range (MPI-4.0 3.7.5), through a wait and a test, with and without statuses:
 * the entries MPI completed carry their status and the error and cannot be completed again, those
 * it left pending stay open (MP_EPENDING) and complete in a later range, the entries outside
 * the range are untouched, the objects of open entries alone are reported, and the list is
 * emptied when nothing open is left, also by a failed range. */
static void range_fails(mp_list_t l, int by_test)
{
    static char objs[5][8];
    int32_t out[4] = { 1, 2, 3, 4 }, in[2][4] = { { 0 } };
    mp_status_t sts[5];
    mp_req_t rs[3];
    int rc;
    /* With a receive: entry 1 completes, 2 fails, 3 stays pending; 0 and 4 are outside. */
    CHECK(mp_checked_irecv(in[1], 16, 0, 142, MP_COMM_SELF, NULL, &rs[0]) == 0);
    CHECK(mp_checked_list_irecv(l, in[0], 16, 0, 140, MP_COMM_SELF, objs[0]) == 0);
    CHECK(mp_checked_list_irecv(l, in[1], 16, 0, 141, MP_COMM_SELF, objs[1]) == 1);
    CHECK(mp_checked_list_isend(l, out, 16, 0, 141, MP_COMM_SELF, MP_SEND_STANDARD, objs[2]) == 2);
    CHECK(mp_checked_list_isend(l, out, 16, 0, 142, MP_COMM_SELF, MP_SEND_STANDARD, objs[3]) == 3);
    CHECK(mp_checked_list_isend(l, out, 8, 0, 140, MP_COMM_SELF, MP_SEND_STANDARD, objs[4]) == 4);
    CHECK(gc_objects_reported() == 5);
    inject(by_test, 1);
    rc = by_test ? mp_list_testall_range(l, 1, 3, sts) : mp_list_waitall_range(l, 1, 3, sts);
    pal_mpi.Waitall = g_real_waitall, pal_mpi.Testall = g_real_testall;
    CHECK(rc == MP_EMPI && last_error_mentions(by_test ? "MPI_Testall" : "MPI_Waitall") &&
          !last_error_mentions("no receive"));
    CHECK(sts[0].error == 0 && sts[0].source == 0 && sts[0].tag == 141 && sts[0].bytes == 16);
    CHECK(sts[1].error == MP_EMPI && sts[2].error == MP_EPENDING);
    CHECK(mp_list_count(l) == 5 && mp_list_pending(l, 1) == 0 && mp_list_pending(l, 2) == 0);
    CHECK(mp_list_pending(l, 3) == 1 && mp_list_pending(l, 0) == 1 && gc_objects_reported() == 3);
    CHECK(mp_list_waitall_range(l, 2, 2, sts) == MP_EINVAL && last_error_mentions("operation 2 was completed"));
    CHECK(mp_list_waitall_range(l, 1, 1, sts) == MP_EINVAL && mp_list_pending(l, 3) == 1);
    /* The pending one, in a range of its own; then the rest by the whole list. */
    CHECK(complete_range(l, by_test, 3, 1, sts) == 0 && sts[0].error == 0 && mp_list_count(l) == 5);
    CHECK(mp_req_wait(rs[0], NULL) == 0 && in[1][3] == 4 && gc_objects_reported() == 2);
    CHECK(mp_list_waitall(l, sts) == 0 && mp_list_count(l) == 0 && gc_objects_reported() == 0);
    CHECK(sts[0].tag == 140 && sts[0].bytes == 8 && sts[1].bytes == 0 && sts[1].tag == 0 && sts[2].error == 0);

    /* Sends alone, without statuses: each completed carries the call's error, under its
     * status-less name; the failure of the range's last open entry empties the list. */
    for (int i = 0; i < 3; i++)
        CHECK(mp_checked_irecv(in[0], 16, 0, 143 + i, MP_COMM_SELF, NULL, &rs[i]) == 0);
    CHECK(mp_checked_list_irecv(l, in[1], 16, 0, 146, MP_COMM_SELF, NULL) == 0);
    for (int i = 0; i < 3; i++)
        CHECK(mp_checked_list_isend(l, out, 16, 0, 143 + i, MP_COMM_SELF, MP_SEND_STANDARD, NULL) == 1 + i);
    for (int i = 0; i < 5; i++)
        sts[i] = (mp_status_t){ .tag = 0x5e };
    inject(by_test, 0);
    rc = by_test ? mp_list_testall_range(l, 1, 3, sts) : mp_list_waitall_range(l, 1, 3, sts);
    pal_mpi.Waitall = g_real_waitall, pal_mpi.Testall = g_real_testall;
    CHECK(rc == MP_EMPI && last_error_mentions(by_test ? "MPI_Testall (a set with no receive" :
                                                         "MPI_Waitall (a set with no receive"));
    CHECK(sts[0].error == MP_EMPI && sts[1].error == MP_EMPI && sts[2].error == MP_EPENDING && sts[3].tag == 0x5e);
    CHECK(mp_list_count(l) == 4 && mp_list_pending(l, 3) == 1 && mp_list_pending(l, 0) == 1);
    CHECK(mp_checked_send(out, 16, 0, 146, MP_COMM_SELF, MP_SEND_STANDARD) == 0);
    CHECK(complete_range(l, by_test, 0, 1, sts) == 0 && sts[0].tag == 146 && mp_list_count(l) == 4);
    CHECK(mp_req_waitall(3, rs, NULL) == 0);
    inject(by_test, 0);
    rc = by_test ? mp_list_testall_range(l, 3, 1, sts) : mp_list_waitall_range(l, 3, 1, sts);
    pal_mpi.Waitall = g_real_waitall, pal_mpi.Testall = g_real_testall;
    CHECK(rc == MP_EMPI && sts[0].error == MP_EMPI && mp_list_count(l) == 0);
}

/* A set MPI failed in which a receive posted with AnyTag took a piece of an object payload: that
 * receive fails with MP_EPIECE and the piece is recorded for its object receive, as when the set
 * succeeds (range_pieces); the entry MPI failed keeps its error, the pending one stays open; the
 * receive's record goes with its completion. */
static void range_fails_with_piece(int by_test)
{
    int32_t out[2][4] = { { 1, 2, 3, 4 }, { 5, 6, 7, 8 } }, in[3][4] = { { 0 } };
    mp_status_t sts[3];
    mp_list_t l = NULL;
    mp_token_t t;
    mp_req_t r;
    int base = atomic_load(&mp_g_wild_count), reserved = mp_g_reserved_above, rc;
    CHECK(mp_list_create(3, &l) == 0 && mp_reserve_tags(1000) == 0);
    CHECK(mp_checked_irecv(in[1], 16, 0, 160, MP_COMM_SELF, NULL, &r) == 0);
    CHECK(mp_checked_list_irecv(l, in[0], 16, 0, MP_ANY_TAG, MP_COMM_SELF, NULL) == 0);
    CHECK(mp_send_start(out[1], 16, 0, 1001, MP_COMM_SELF, MP_SEND_STANDARD, &t) == 1); /* a piece: entry 0's */
    CHECK(mp_checked_list_isend(l, out[0], 16, 0, 160, MP_COMM_SELF, MP_SEND_STANDARD, NULL) == 1);
    CHECK(mp_checked_list_irecv(l, in[2], 16, 0, 161, MP_COMM_SELF, NULL) == 2);
    CHECK(atomic_load(&mp_g_wild_count) == base + 1);
    inject(by_test, 1); /* entries 0 and 1 complete, 1 with an error; 2 stays pending */
    rc = by_test ? mp_list_testall_range(l, 0, 3, sts) : mp_list_waitall_range(l, 0, 3, sts);
    pal_mpi.Waitall = g_real_waitall, pal_mpi.Testall = g_real_testall;
    CHECK(rc == MP_EPIECE && last_error_mentions("piece of an object payload"));
    CHECK(sts[0].error == MP_EPIECE && sts[0].tag == 1001 && sts[0].bytes == 16);
    CHECK(sts[1].error == MP_EMPI && sts[2].error == MP_EPENDING);
    CHECK(atomic_load(&mp_g_wild_count) == base && mp_list_pending(l, 2) == 1);
    CHECK(mp_piece_taken(MP_COMM_SELF, 0, 1001, NULL) == MP_EPIECE);
    CHECK(mp_checked_send(out[0], 16, 0, 161, MP_COMM_SELF, MP_SEND_STANDARD) == 0);
    CHECK(complete_range(l, by_test, 2, 1, sts) == 0 && sts[0].tag == 161 && mp_list_count(l) == 0);
    CHECK(mp_req_wait(r, NULL) == 0 && in[1][3] == 4);
    mp_g_reserved_above = reserved;
    CHECK(mp_list_free(l, NULL) == 0);
}

/* Where the core waits for a set one request at a time (Open MPI), a wait MPI fails that leaves
 * its request pending: that entry stays open (MP_EPENDING), the range's others complete. */
static void range_fails_one_by_one(mp_list_t l)
{
    int32_t out[4] = { 1, 2, 3, 4 }, in[2][4] = { { 0 } };
    mp_status_t sts[3];
    mp_req_t r;
    int rc;
    CHECK(mp_checked_irecv(in[1], 16, 0, 151, MP_COMM_SELF, NULL, &r) == 0);
    CHECK(mp_checked_list_irecv(l, in[0], 16, 0, 150, MP_COMM_SELF, NULL) == 0);
    CHECK(mp_checked_list_isend(l, out, 16, 0, 150, MP_COMM_SELF, MP_SEND_STANDARD, NULL) == 1);
    CHECK(mp_checked_list_isend(l, out, 16, 0, 151, MP_COMM_SELF, MP_SEND_STANDARD, NULL) == 2);
    pal_mpi.Wait = wait_fails_untouched;
    g_fail_untouched = 1;
    rc = mp_list_waitall_range(l, 0, 3, sts);
    pal_mpi.Wait = g_real_wait;
    CHECK(rc == MP_EMPI && last_error_mentions("MPI_Waitall") && g_fail_untouched == 0);
    CHECK(sts[0].error == MP_EPENDING && sts[1].error == 0 && sts[2].error == 0);
    CHECK(mp_list_count(l) == 3 && mp_list_pending(l, 0) == 1 && mp_list_pending(l, 2) == 0);
    CHECK(mp_list_waitall_range(l, 0, 1, sts) == 0 && sts[0].tag == 150 && in[0][3] == 4 && mp_list_count(l) == 0);
    CHECK(mp_req_wait(r, NULL) == 0 && in[1][3] == 4);
}

void test_failed_ranges(void)
{
    mp_list_t l = NULL;
    int active = mp_req_active();
    const int watched = !pal_mpi.waitall_hangs_on_failed; /* as in sends_without_statuses */
    g_real_waitall = pal_mpi.Waitall;
    g_real_testall = pal_mpi.Testall;
    g_real_wait = pal_mpi.Wait;
    CHECK(mp_list_create(5, &l) == 0);
    if (watched)
        pal_mpi.Waitall = waitall_watched;
    pal_mpi.Testall = testall_watched;
    range_statuses_asked(l, watched);
    pal_mpi.Waitall = g_real_waitall;
    pal_mpi.Testall = g_real_testall;
    for (int by_test = watched ? 0 : 1; by_test < 2; by_test++) {
        range_fails(l, by_test);
        range_fails_with_piece(by_test);
    }
    if (!watched)
        range_fails_one_by_one(l);
    CHECK(mp_list_free(l, NULL) == 0 && mp_req_active() == active);
}
