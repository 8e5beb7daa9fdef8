/*
 * bandwidth.c - the native floor for streaming: osu_bw methodology in C.
 * Rank 0 posts a window of 64 MPI_Isend, rank 1 a window of 64 MPI_Irecv,
 * both wait for all, then rank 1 acknowledges with a 4-byte message.
 * Sizes 1 B..max; 10 warm-up + 100 timed windows up to 8 KiB, 2 + 20 above.
 * Bandwidth = bytes sent / time, in MB/s (10^6 bytes per second).
 *
 * usage: mpiexec -n 2 bandwidth-c [max_bytes] [iteration_scale]
 * Prints "size_bytes bandwidth_MBps" rows, the same format as perf/Bandwidth.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "placement.h"

#define WINDOW 64
#define LARGE 8192

int main(int argc, char **argv)
{
    int rank, size, ack = 0;
    long max = argc > 1 ? atol(argv[1]) : 4L << 20;
    double scale = argc > 2 ? atof(argv[2]) : 1.0;
    char *sbuf, *rbuf;
    MPI_Request reqs[WINDOW];
    MPI_Status stats[WINDOW]; /* not MPI_STATUSES_IGNORE: gcc 12 misreads its size */

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2) {
        if (rank == 0)
            fprintf(stderr, "bandwidth needs at least 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    sbuf = bench_buffer((size_t)max, 0);
    rbuf = bench_buffer((size_t)max, 1);
    memset(sbuf, 'a', (size_t)max);
    memset(rbuf, 'b', (size_t)max);
    if (rank == 0)
        printf("# C MPI bandwidth (osu_bw methodology, window %d)\n# %-10s %14s\n", WINDOW, "size", "MB/s");
    for (long n = 1; n <= max; n *= 2) {
        int warm = n > LARGE ? 2 : 10;
        int iters = (int)((n > LARGE ? 20 : 100) * scale);
        double t0 = 0;
        if (iters < 1)
            iters = 1;
        MPI_Barrier(MPI_COMM_WORLD);
        for (int i = 0; i < warm + iters; i++) {
            if (i == warm)
                t0 = MPI_Wtime();
            if (rank == 0) {
                for (int w = 0; w < WINDOW; w++)
                    MPI_Isend(sbuf, (int)n, MPI_CHAR, 1, 100, MPI_COMM_WORLD, &reqs[w]);
                MPI_Waitall(WINDOW, reqs, stats);
                MPI_Recv(&ack, 1, MPI_INT, 1, 101, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else if (rank == 1) {
                for (int w = 0; w < WINDOW; w++)
                    MPI_Irecv(rbuf, (int)n, MPI_CHAR, 0, 100, MPI_COMM_WORLD, &reqs[w]);
                MPI_Waitall(WINDOW, reqs, stats);
                MPI_Send(&ack, 1, MPI_INT, 0, 101, MPI_COMM_WORLD);
            }
        }
        if (rank == 0)
            printf("%-12ld %14.6g\n", n, (double)n * WINDOW * iters / (MPI_Wtime() - t0) / 1e6); /* %g: never 0.00 on a slow round */
        fflush(stdout);
    }
    bench_buffer_free(sbuf);
    bench_buffer_free(rbuf);
    MPI_Finalize();
    return 0;
}
