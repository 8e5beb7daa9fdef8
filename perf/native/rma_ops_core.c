/*
 * rma_ops_core.c - rma_ops.c through mpcore's call table (win_put or win_get,
 * win_sync): the core's own cost per operation, without managed code.  With
 * "obj", each operation hands the window an owner object to hold, as motor
 * does (never scanned: no GC extension here).
 *
 * usage: rma-ops-core operations [bytes] [put|get] [obj]
 */
#include "mpcore.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const mp_table_t *mp;

static void check(int rc, const char *what)
{
    if (rc < 0) {
        char msg[256];
        mp->last_error(NULL, msg, sizeof msg);
        fprintf(stderr, "rma-ops-core: %s failed: %s\n", what, msg);
        exit(1);
    }
}

int main(int argc, char **argv)
{
    long ops = argc > 1 ? atol(argv[1]) : 1000;
    int bytes = argc > 2 ? atoi(argv[2]) : 8, provided = 0, put = argc <= 3 || strcmp(argv[3], "get") != 0;
    char *buf = calloc(1, (size_t)bytes + 1);
    void *obj = argc > 4 && !strcmp(argv[4], "obj") ? buf : NULL, *mem = NULL;
    int32_t win = 0;

    mp = mp_core_table();
    check(mp->init(MP_THREAD_SINGLE, &provided), "init");
    check(mp->win_allocate(MP_COMM_SELF, bytes, 1, MP_WIN_ALLOCATE, MP_INFO_NULL, &mem, &win), "win_allocate");
    check(mp->win_sync(win, MP_WIN_LOCK_SHARED, 0, 0), "lock");
    for (long i = 0; i < ops; i++) {
        check(put ? mp->win_put(win, buf, bytes, MP_DT_UINT8, 1, 0, 0, obj, NULL)
                  : mp->win_get(win, buf, bytes, MP_DT_UINT8, 1, 0, 0, obj, NULL),
              "put/get");
        check(mp->win_sync(win, MP_WIN_FLUSH, 0, 0), "flush");
    }
    check(mp->win_sync(win, MP_WIN_UNLOCK, 0, 0), "unlock");
    check(mp->win_free(win), "win_free");
    check(mp->finalize(0), "finalize");
    free(buf);
    return 0;
}
