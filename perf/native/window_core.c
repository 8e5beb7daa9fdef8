/*
 * window_core.c - window.c through mpcore's call table (irecv, isend,
 * req_waitall), as any C caller reaches the core: its own cost per operation,
 * without managed code.  Its arguments are valid, so it calls the table's entries, which
 * trust their caller, as System.MP does.
 * With "obj", each operation registers an owner object as it does under motor.
 * With "list", the window is posted into two request lists (list_irecv,
 * list_isend, list_waitall): no handle, no slot per operation.
 *
 * usage: window-core windows [bytes] [obj|list]
 */
#include "core_check.h"
#include "mpcore.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WINDOW 64

static const mp_table_t *mp;

static void check(int rc, const char *what)
{
    core_check(mp, "window-core", rc, what);
}

int main(int argc, char **argv)
{
    long windows = argc > 1 ? atol(argv[1]) : 1000;
    int bytes = argc > 2 ? atoi(argv[2]) : 8, provided = 0;
    char *sbuf = calloc(1, (size_t)bytes + 1), *rbuf = calloc(1, (size_t)bytes + 1);
    /* Stand-ins for the owner objects: never scanned (no GC extension here). */
    void *sobj = argc > 3 && !strcmp(argv[3], "obj") ? sbuf : NULL;
    int list = argc > 3 && !strcmp(argv[3], "list");
    mp_list_t rlist = NULL, slist = NULL;
    void *robj = sobj ? rbuf : NULL;
    mp_req_t rreq[WINDOW], sreq[WINDOW];
    mp_status_t st[WINDOW];

    mp = mp_core_table();
    check(mp->init(MP_THREAD_SINGLE, &provided), "init");
    if (list) {
        check(mp->list_create(WINDOW, &rlist), "list_create");
        check(mp->list_create(WINDOW, &slist), "list_create");
        /* The posts trust their caller: every entry counted against MPI's request pool first. */
        core_reserve(mp, "window-core", rlist, WINDOW);
        core_reserve(mp, "window-core", slist, WINDOW);
    }
    for (long i = 0; list && i < windows; i++) {
        for (int w = 0; w < WINDOW; w++)
            check(mp->list_irecv(rlist, rbuf, bytes, 0, 100, MP_COMM_SELF, NULL), "list_irecv");
        for (int w = 0; w < WINDOW; w++)
            check(mp->list_isend(slist, sbuf, bytes, 0, 100, MP_COMM_SELF, MP_SEND_STANDARD, NULL), "list_isend");
        check(mp->list_waitall(rlist, st), "list_waitall");
        check(mp->list_waitall(slist, st), "list_waitall");
    }
    if (list) {
        check(mp->list_free(rlist, NULL), "list_free");
        check(mp->list_free(slist, NULL), "list_free");
    }
    for (long i = 0; !list && i < windows; i++) {
        for (int w = 0; w < WINDOW; w++)
            check(mp->irecv(rbuf, bytes, 0, 100, MP_COMM_SELF, robj, &rreq[w]), "irecv");
        for (int w = 0; w < WINDOW; w++)
            check(mp->isend(sbuf, bytes, 0, 100, MP_COMM_SELF, MP_SEND_STANDARD, sobj, &sreq[w]), "isend");
        check(mp->req_waitall(WINDOW, rreq, st), "req_waitall");
        check(mp->req_waitall(WINDOW, sreq, st), "req_waitall");
    }
    check(mp->finalize(0), "finalize");
    free(sbuf);
    free(rbuf);
    return 0;
}
