/* lifecycle.c - mpcore tests: the error table, the interface table, the states before init, a
 * failing init, the environment, and every call after finalize. */
#include "mpcore_tests.h"

void test_error_table(void)
{
    CHECK(strcmp(mp_err_name(MP_ETRUNCATE), "MP_ETRUNCATE") == 0);
    CHECK(strcmp(mp_err_name(MP_OK), "MP_OK") == 0);
    CHECK(strstr(mp_err_message(MP_ERANK), "rank") != NULL);
    CHECK(strcmp(mp_err_name(-999), "MP_E?") == 0);
    /* Codes are distinct and negative (except OK). */
    {
        int codes[] = {
#define C(name, code, csname, msg) code,
            MP_ERROR_MAP(C)
#undef C
        };
        int n = (int)(sizeof codes / sizeof *codes);
        for (int i = 0; i < n; i++) {
            CHECK(i == 0 ? codes[i] == 0 : codes[i] < 0);
            for (int j = i + 1; j < n; j++)
                CHECK(codes[i] != codes[j]);
        }
    }
}

/* A failing MPI call passed to MP_MPI_CHECK runs once (a macro naming its
 * argument twice once re-issued every failing MPI call). */
static int g_fake_calls;
static int fake_mpi_call(int rc)
{
    g_fake_calls++;
    return rc;
}

void test_mpi_check_evaluates_once(void)
{
    g_fake_calls = 0;
    CHECK(MP_MPI_CHECK(fake_mpi_call(MPI_SUCCESS), "MPI_Fake") == 0 && g_fake_calls == 1);
    g_fake_calls = 0;
    CHECK(MP_MPI_CHECK(fake_mpi_call(MPI_ERR_TRUNCATE), "MPI_Fake") == MP_ETRUNCATE && g_fake_calls == 1);
    g_fake_calls = 0;
    CHECK(MP_MPI_CHECK(fake_mpi_call(MPI_ERR_OTHER), "MPI_Fake") == MP_EMPI && g_fake_calls == 1);
}

/* MPI_Comm_set_errhandler failing at its g_errh_fail_at-th call (0: never); MPI_Comm_dup and
 * MPI_Comm_free counted. */
static __typeof__(MPI_Comm_set_errhandler) *g_real_set_errhandler;
static __typeof__(MPI_Comm_dup) *g_real_comm_dup;
static __typeof__(MPI_Comm_free) *g_real_comm_free;
static int g_errhs, g_errh_fail_at, g_dups, g_comm_frees;

static int failing_set_errhandler(MPI_Comm c, MPI_Errhandler e)
{
    return ++g_errhs == g_errh_fail_at ? MPI_ERR_OTHER : g_real_set_errhandler(c, e);
}

static int counting_comm_dup(MPI_Comm c, MPI_Comm *out)
{
    g_dups++;
    return g_real_comm_dup(c, out);
}

static int counting_comm_free(MPI_Comm *c)
{
    g_comm_frees++;
    return g_real_comm_free(c);
}

/* An init that fails part way (self's registration refused, after world's succeeded): what it
 * registered leaves the table, and the next init succeeds.  Neither makes a communicator
 * (MPI_Comm_dup, a collective the other programs of an MPMD job never call) nor frees one. */
void test_init_fails(void)
{
    char err[1024], b[4] = { 1, 2, 3, 4 }, got[4] = { 0 };
    int provided = -1;
    CHECK(pal_mpi_load(err, (int)sizeof err) == 0);
    g_real_set_errhandler = pal_mpi.Comm_set_errhandler;
    g_real_comm_dup = pal_mpi.Comm_dup, g_real_comm_free = pal_mpi.Comm_free;
    pal_mpi.Comm_set_errhandler = failing_set_errhandler;
    pal_mpi.Comm_dup = counting_comm_dup, pal_mpi.Comm_free = counting_comm_free;
    g_errh_fail_at = 4; /* world's and self's in MPI, then world's and self's registration */
    CHECK(mp_init(MP_THREAD_FUNNELED, &provided) == MP_EMPI && last_error_mentions("MPI_Comm_set_errhandler"));
    CHECK(mp_state() != MP_STATE_READY && mp_comm_count() == 0);
    g_errh_fail_at = 0;
    CHECK(mp_init(MP_THREAD_FUNNELED, &provided) == 0 && mp_comm_count() == 2);
    CHECK(g_dups == 0 && g_comm_frees == 0);
    CHECK(mp_sendrecv(b, 4, 0, 5, got, 4, 0, 5, MP_COMM_SELF, NULL) == 0 && memcmp(b, got, 4) == 0);
    pal_mpi.Comm_set_errhandler = g_real_set_errhandler;
    pal_mpi.Comm_dup = g_real_comm_dup, pal_mpi.Comm_free = g_real_comm_free;
    CHECK(mp_finalize(0) == 0);
}

void test_before_init(void)
{
    int v;
    char b[8];
    mp_token_t t;
    CHECK(mp_state() == MP_STATE_UNINIT);
    CHECK(mp_comm_rank(MP_COMM_WORLD, &v) == MP_ESTATE);
    CHECK(last_error_mentions("not initialized"));
    CHECK(mp_send_start(b, 1, 0, 0, MP_COMM_WORLD, MP_SEND_STANDARD, &t) == MP_ESTATE);
    {
        mp_req_t r = MP_REQ_NULL;
        CHECK(mp_isend(b, 1, 0, 0, MP_COMM_WORLD, MP_SEND_STANDARD, NULL, &r) == MP_ESTATE);
        CHECK(mp_irecv(b, 1, 0, 0, MP_COMM_WORLD, NULL, &r) == MP_ESTATE && r == MP_REQ_NULL);
        CHECK(mp_send(b, 1, 0, 0, MP_COMM_WORLD, MP_SEND_STANDARD) == MP_ESTATE);
        CHECK(mp_recv(b, 1, 0, 0, MP_COMM_WORLD, NULL) == MP_ESTATE);
    }
    {
        mp_list_t l = NULL;
        CHECK(mp_list_create(2, &l) == 0); /* touches no MPI state */
        CHECK(mp_checked_list_isend(l, b, 1, 0, 0, MP_COMM_WORLD, MP_SEND_STANDARD, NULL) == MP_ESTATE);
        CHECK(mp_list_irecv(l, b, 1, 0, 0, MP_COMM_WORLD, NULL) == MP_ESTATE && mp_list_count(l) == 0);
        CHECK(mp_list_waitall(l, NULL) == MP_ESTATE);
        CHECK(mp_list_waitall_range(l, 0, 0, NULL) == MP_ESTATE && mp_list_testall_range(l, 0, 0, NULL) == MP_ESTATE);
        CHECK(mp_list_free(l, NULL) == 0);
    }
    CHECK(mp_init(7, &v) == MP_EINVAL);
}


void test_table(void)
{
    const mp_table_t *tab = mp_core_table();
    CHECK(tab->abi_version == MP_ABI_VERSION && tab->size == sizeof(mp_table_t));
    CHECK(tab->send_start == mp_send_start && tab->probe == mp_probe && tab->gc_attach == mp_gc_attach);
    CHECK(strstr(tab->manifest, "FAST int isend(const void *buf, int64_t bytes,") != NULL);
    CHECK(strstr(tab->manifest, "BLOCKING int req_wait(mp_req_t req, mp_status_t *status)\n") != NULL);
}

void test_environment(void)
{
    int provided = -1, n;
    char text[256];
    CHECK(mp_init(MP_THREAD_SINGLE, &provided) == 0); /* idempotent */
    CHECK(mp_thread_level(&n) == 0 && n == provided);
    CHECK(mp_state() == MP_STATE_READY);
    CHECK(strlen(mp_library_path()) > 0);
    n = mp_library_version(text, (int)sizeof text);
    CHECK(n > 0 && strlen(text) > 0);
    CHECK(mp_processor_name(text, (int)sizeof text) > 0);
    /* MPI-4's optional parts: all in MPICH 4, none in Open MPI 4.1; a feature that is none refused. */
    for (int f = 0; f < MP_FEATURE_COUNT; f++)
        CHECK(mp_mpi_has(f) == (mp_mpi_abi() == MP_MPI_ABI_OPENMPI ? 0 : 1));
    CHECK(mp_mpi_has(MP_FEATURE_COUNT) == MP_EINVAL && mp_mpi_has(-1) == MP_EINVAL);
    {
        /* Wtime counts from an arbitrary origin (Open MPI's starts at 0 at
         * init): check only that it is finite, advances and never goes back. */
        double t0 = mp_wtime(), t1 = t0;
        for (long i = 0; i < 100000000 && t1 <= t0; i++)
            t1 = mp_wtime();
        CHECK(t0 >= 0 && t1 > t0 && mp_wtick() > 0);
    }
}

static mp_list_t g_after_list;
void test_after_finalize(void)
{
    int n, provided;
    CHECK(mp_finalize(0) == 0);
    CHECK(mp_state() == MP_STATE_FINALIZED);
    CHECK(mp_comm_rank(MP_COMM_WORLD, &n) == MP_ESTATE);
    CHECK(last_error_mentions("finalized"));
    {
        char b[4];
        mp_req_t r = MP_REQ_NULL;
        CHECK(mp_isend(b, 4, 0, 0, MP_COMM_WORLD, MP_SEND_STANDARD, NULL, &r) == MP_ESTATE);
        CHECK(mp_irecv(b, 4, 0, 0, MP_COMM_SELF, NULL, &r) == MP_ESTATE && r == MP_REQ_NULL);
        CHECK(mp_list_create(1, &g_after_list) == 0);
        CHECK(mp_list_isend(g_after_list, b, 4, 0, 0, MP_COMM_SELF, MP_SEND_STANDARD, NULL) == MP_ESTATE);
        CHECK(mp_list_testall(g_after_list, NULL) == MP_ESTATE && mp_list_testall_range(g_after_list, 0, 0, NULL) == MP_ESTATE);
        CHECK(mp_list_free(g_after_list, NULL) == 0);
    }
    CHECK(mp_init(MP_THREAD_SINGLE, &provided) == MP_ESTATE);
}
