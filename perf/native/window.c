/*
 * window.c - the request path alone, for instruction counts (perf/callgrind.sh).
 * One rank posts a window of 64 MPI_Irecv from itself and 64 MPI_Isend to
 * itself, then completes each half with one MPI_Waitall: the per-operation
 * work of osu_bw's window (post + complete) without a second process, so an
 * instruction count is the same from run to run.
 *
 * usage: window-c windows [bytes]      (one process; no mpiexec needed)
 */
#include <mpi.h>
#include <stdlib.h>

#define WINDOW 64

int main(int argc, char **argv)
{
    long windows = argc > 1 ? atol(argv[1]) : 1000;
    int bytes = argc > 2 ? atoi(argv[2]) : 8;
    char *sbuf = calloc(1, (size_t)bytes + 1), *rbuf = calloc(1, (size_t)bytes + 1);
    MPI_Request rreq[WINDOW], sreq[WINDOW];
    MPI_Status st[WINDOW];

    MPI_Init(&argc, &argv);
    for (long i = 0; i < windows; i++) {
        for (int w = 0; w < WINDOW; w++)
            MPI_Irecv(rbuf, bytes, MPI_CHAR, 0, 100, MPI_COMM_SELF, &rreq[w]);
        for (int w = 0; w < WINDOW; w++)
            MPI_Isend(sbuf, bytes, MPI_CHAR, 0, 100, MPI_COMM_SELF, &sreq[w]);
        MPI_Waitall(WINDOW, rreq, st);
        MPI_Waitall(WINDOW, sreq, st);
    }
    MPI_Finalize();
    free(sbuf);
    free(rbuf);
    return 0;
}
