/*
 * core_check.h - the error check of the perf programs that call mpcore's call table
 * (window_core.c, rate_core.c): every call they make returns 0 when it succeeded, a negative
 * MP_E* (its message from last_error), or from a list post MPI's own error code (> 0, which
 * list_refused would record).  A failure ends the program (under mpiexec, the job).
 */
#ifndef PERF_CORE_CHECK_H
#define PERF_CORE_CHECK_H

#include "mpcore.h"

#include <stdio.h>
#include <stdlib.h>

static void core_check(const mp_table_t *mp, const char *program, int rc, const char *what)
{
    if (rc != 0) {
        char msg[256] = "MPI refused the post";
        if (rc < 0)
            mp->last_error(NULL, msg, sizeof msg);
        fprintf(stderr, "%s: %s failed (%d): %s\n", program, what, rc, msg);
        exit(1);
    }
}

/* A list's entries counted against MPI's request pool (list_reserve returns how many, or an error),
 * as the trusted posts require of their caller. */
static void core_reserve(const mp_table_t *mp, const char *program, mp_list_t list, int entries)
{
    int rc = mp->list_reserve(list, entries - 1);
    core_check(mp, program, rc < 0 ? rc : 0, "list_reserve");
}

#endif
