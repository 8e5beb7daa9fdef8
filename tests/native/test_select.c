/*
 * test_select.c - which core libmpcore.so hands out (select.c).
 *
 * usage: test_select <libmpcore.so> <mpich|openmpi> <ok | fail:<text>>
 * Loads the given libmpcore.so, asks mp_core_table() for the core of this
 * process (the environment, set by CTest, decides), checks its MPI ABI, then
 * either runs a self message through the table on MPI_COMM_SELF or checks that
 * init fails with an error that mentions <text>.
 */
#include "mpcore.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "check.h"

static const mp_table_t *g_core;

int g_failed, g_passed;

void check_detail(char *buf, int cap)
{
    buf[0] = '\0';
    if (g_core)
        g_core->last_error(NULL, buf, cap);
}

static void self_message(const mp_table_t *t)
{
    int sent[4] = { 1, 2, 3, 4 }, got[4] = { 0 }, rank = -1;
    mp_req_t rr = MP_REQ_NULL, sr = MP_REQ_NULL;
    mp_status_t st;
    CHECK(t->comm_rank(MP_COMM_SELF, &rank) == 0 && rank == 0);
    CHECK(t->irecv(got, sizeof got, 0, 7, MP_COMM_SELF, NULL, &rr) >= 0);
    CHECK(t->isend(sent, sizeof sent, 0, 7, MP_COMM_SELF, MP_SEND_STANDARD, NULL, &sr) >= 0);
    CHECK(t->req_wait(sr, &st) >= 0);
    CHECK(t->req_wait(rr, &st) >= 0);
    CHECK(st.source == 0 && st.tag == 7 && st.bytes == (int64_t)sizeof got);
    CHECK(memcmp(sent, got, sizeof got) == 0);
}

int main(int argc, char **argv)
{
    void *lib;
    const mp_table_t *(*get)(void);
    const mp_table_t *t;
    int provided = -1, want, rc;
    char msg[2048];
    if (argc != 4) {
        fprintf(stderr, "usage: test_select <libmpcore.so> <mpich|openmpi> <ok|fail:text>\n");
        return 2;
    }
    if (!(lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL))) {
        fprintf(stderr, "cannot load %s: %s\n", argv[1], dlerror());
        return 2;
    }
    get = (const mp_table_t *(*)(void))dlsym(lib, "mp_core_table");
    CHECK(get != NULL);
    if (!get)
        return 1;
    t = g_core = get();
    CHECK(t != NULL && t == get()); /* decided once */
    CHECK(t->abi_version == MP_ABI_VERSION && t->size >= sizeof(mp_table_t));
    want = strcmp(argv[2], "openmpi") == 0 ? MP_MPI_ABI_OPENMPI : MP_MPI_ABI_MPICH;
    CHECK(t->mpi_abi() == want);
    rc = t->init(MP_THREAD_SINGLE, &provided);
    if (strcmp(argv[3], "ok") == 0) {
        CHECK(rc == 0);
        if (rc == 0) {
            self_message(t);
            CHECK(t->finalize(0) == 0);
        }
    } else {
        const char *text = argv[3] + strlen("fail:");
        CHECK(rc == MP_ENOLIB);
        t->last_error(NULL, msg, (int)sizeof msg);
        CHECK(strstr(msg, text) != NULL);
        printf("init failed as expected: %s\n", msg);
    }
    printf("test_select: %d passed, %d failed\n", g_passed, g_failed);
    return g_failed ? 1 : 0;
}
