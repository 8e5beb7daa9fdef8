/*
 * rate_core.c - osu_mbw_mr's message rate between two ranks through mpcore's call table, in
 * paired blocks against MPI called directly from the same process: what the core alone (no
 * managed code) costs a window of 64 nonblocking operations.  perf/Paired rate measures the
 * same windows through System.MP; this program is their floor.
 *
 * Paths, each a block of windows after a barrier (100 up to 8 KiB, 20 above, times iteration_scale:
 * perf/Paired's counts), each path first, middle and last in turn:
 *   direct     MPI_Isend / MPI_Irecv / MPI_Waitall
 *   core       isend / irecv / req_waitall_owned (as System.MP's Request objects), each buffer
 *              registered as an owner object (as under motor)
 *   core-list  list_isend / list_irecv / list_waitall (as a RequestList), buffers registered
 * Rank 0 sends, rank 1 receives and acknowledges each window with 4 bytes, as perf/Paired.
 * Prints perf/Paired's table (bench.sh's message-rate-core group reads it): per size, messages/s of
 * core, core-list and direct (medians over the sets), then each core path's median quotient to
 * direct with its quartiles.
 *
 * usage: mpiexec.mpich -n 2 rate-core [max_bytes=4096] [sets=31] [iteration_scale=1]
 */
#include "core_check.h"
#include "mpcore.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WINDOW 64
#define PATHS 3

static const mp_table_t *mp;

static void check(int rc, const char *what)
{
    core_check(mp, "rate-core", rc, what);
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Sorts v (n values) and returns its median. */
static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, compare_doubles);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

struct bufs {
    char *send, *recv;
    int rank, bytes;
    mp_list_t list;
};

/* MPI_STATUSES_IGNORE, as perf/Paired's direct path passes it, through a variable: gcc reads the
 * constant as an array of no size that MPI_Waitall's attributes say is written (volatile: not folded back). */
static MPI_Status *volatile statuses_ignore = MPI_STATUSES_IGNORE;

/* Each path's window: rank 0 posts WINDOW sends, rank 1 WINDOW receives, and both wait for all. */
static void window_direct(const struct bufs *b)
{
    MPI_Request reqs[WINDOW];
    for (int w = 0; w < WINDOW; w++)
        if (b->rank == 0)
            MPI_Isend(b->send, b->bytes, MPI_BYTE, 1, 100, MPI_COMM_WORLD, &reqs[w]);
        else
            MPI_Irecv(b->recv, b->bytes, MPI_BYTE, 0, 100, MPI_COMM_WORLD, &reqs[w]);
    MPI_Waitall(WINDOW, reqs, statuses_ignore);
}

static void window_core(const struct bufs *b)
{
    mp_req_t reqs[WINDOW];
    mp_status_t st[WINDOW];
    for (int w = 0; w < WINDOW; w++)
        if (b->rank == 0)
            check(mp->isend(b->send, b->bytes, 1, 100, MP_COMM_WORLD, MP_SEND_STANDARD, b->send, &reqs[w]), "isend");
        else
            check(mp->irecv(b->recv, b->bytes, 0, 100, MP_COMM_WORLD, b->recv, &reqs[w]), "irecv");
    check(mp->req_waitall_owned(WINDOW, reqs, st), "req_waitall_owned");
}

static void window_list(const struct bufs *b)
{
    for (int w = 0; w < WINDOW; w++)
        if (b->rank == 0)
            check(mp->list_isend(b->list, b->send, b->bytes, 1, 100, MP_COMM_WORLD, MP_SEND_STANDARD, b->send), "list_isend");
        else
            check(mp->list_irecv(b->list, b->recv, b->bytes, 0, 100, MP_COMM_WORLD, b->recv), "list_irecv");
    check(mp->list_waitall(b->list, NULL), "list_waitall");
}

/* The end of every path's window: rank 1 tells rank 0 it has received it (4 bytes). */
static void acknowledge(const struct bufs *b)
{
    int ack = 0;
    if (b->rank == 0)
        MPI_Recv(&ack, 1, MPI_INT, 1, 101, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    else
        MPI_Send(&ack, 1, MPI_INT, 0, 101, MPI_COMM_WORLD);
}

/* One block of path p: messages per second. */
static double block(int p, const struct bufs *b, int windows)
{
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int i = 0; i < windows; i++) {
        if (p == 0)
            window_direct(b);
        else if (p == 1)
            window_core(b);
        else
            window_list(b);
        acknowledge(b);
    }
    return (double)WINDOW * windows / (MPI_Wtime() - t0);
}

int main(int argc, char **argv)
{
    int max_bytes = argc > 1 ? atoi(argv[1]) : 4096, sets = argc > 2 ? atoi(argv[2]) : 31;
    double scale = argc > 3 ? atof(argv[3]) : 1.0;
    int provided = 0, size = 0;
    struct bufs b = { 0 };

    mp = mp_core_table();
    check(mp->init(MP_THREAD_SINGLE, &provided), "init");
    MPI_Comm_rank(MPI_COMM_WORLD, &b.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2 || sets < 1 || scale <= 0 || max_bytes < 1) {
        if (b.rank == 0)
            fprintf(stderr, "rate-core: run on 2 ranks, with max_bytes and sets at least 1 and iteration_scale above 0\n");
        mp->finalize(1);
        return 1;
    }
    b.send = malloc((size_t)max_bytes);
    b.recv = calloc(1, (size_t)max_bytes);
    memset(b.send, 'a', (size_t)max_bytes);
    double *values = calloc((size_t)PATHS * sets, sizeof *values), *ratio = calloc((size_t)sets, sizeof *ratio);
    check(mp->list_create(WINDOW, &b.list), "list_create");
    /* The posts trust their caller: every entry counted against MPI's request pool first. */
    core_reserve(mp, "rate-core", b.list, WINDOW);
    if (b.rank == 0)
        printf("# paired blocks in one process: rate through mpcore's call table, %d sets per size; messages/s\n"
               "# size            core  core-list     direct     core/direct      q1      q3 core-list/direct      q1      q3\n",
               sets);
    for (int bytes = 1; bytes <= max_bytes; bytes *= 2) {
        int windows = (int)((bytes <= 8192 ? 100 : 20) * scale);
        if (windows < 1)
            windows = 1;
        b.bytes = bytes;
        for (int p = 0; p < PATHS; p++)
            block(p, &b, windows / 10 + 1); /* the size's first touch of its pages, every path */
        for (int s = 0; s < sets; s++)
            for (int k = 0; k < PATHS; k++) {
                int p = (s + k) % PATHS;
                values[p * sets + s] = block(p, &b, windows);
            }
        if (b.rank == 1 && (b.recv[0] != 'a' || b.recv[bytes - 1] != 'a')) {
            fprintf(stderr, "rate-core: data corrupted at %d bytes\n", bytes);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        if (b.rank != 0)
            continue;
        printf("%-12d", bytes);
        double med[PATHS], q[PATHS][2];
        for (int p = 1; p < PATHS; p++) { /* before the medians below sort each path's values */
            for (int s = 0; s < sets; s++)
                ratio[s] = values[p * sets + s] / values[s];
            med[p] = median(ratio, sets);
            q[p][0] = ratio[sets / 4];
            q[p][1] = ratio[sets - 1 - sets / 4];
        }
        for (int p = 1; p <= PATHS; p++) /* core, core-list, then direct */
            printf(" %10.6g", median(&values[(p % PATHS) * sets], sets));
        for (int p = 1; p < PATHS; p++)
            printf(" %14.4f %7.4f %7.4f", med[p], q[p][0], q[p][1]);
        printf("\n");
        fflush(stdout);
    }
    check(mp->list_free(b.list, NULL), "list_free");
    free(values);
    free(ratio);
    free(b.send);
    free(b.recv);
    return mp->finalize(0) < 0;
}
