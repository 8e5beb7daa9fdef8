/*
 * pingpong.c - the native floor: osu_latency methodology over MPI in C.
 * Blocking MPI_Send/MPI_Recv ping-pong between ranks 0 and 1; sizes 0 B..max;
 * 100 warm-up + 10000 timed iterations up to 8 KiB, 10 + 1000 above;
 * latency = total time / (2 * iterations).
 *
 * usage: mpiexec -n 2 pingpong [max_bytes] [iteration_scale]
 * Prints "size_bytes latency_us" rows, the same format as samples/PingPong.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "placement.h"

#define LARGE 8192

int main(int argc, char **argv)
{
    int rank, size;
    long max = argc > 1 ? atol(argv[1]) : 4L << 20;
    double scale = argc > 2 ? atof(argv[2]) : 1.0;
    char *sbuf, *rbuf;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2) {
        if (rank == 0)
            fprintf(stderr, "pingpong needs at least 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    sbuf = bench_buffer((size_t)(max > 0 ? max : 1), 0);
    rbuf = bench_buffer((size_t)(max > 0 ? max : 1), 1);
    memset(sbuf, 'a', (size_t)(max > 0 ? max : 1));
    memset(rbuf, 'b', (size_t)(max > 0 ? max : 1));
    if (rank == 0)
        printf("# C MPI ping-pong (osu_latency methodology)\n# %-10s %12s\n", "size", "latency_us");
    for (long n = 0; n <= max; n = n ? n * 2 : 1) {
        int warm = n > LARGE ? 10 : 100;
        int iters = (int)((n > LARGE ? 1000 : 10000) * scale);
        double t0 = 0;
        if (iters < 1)
            iters = 1;
        MPI_Barrier(MPI_COMM_WORLD);
        for (int i = 0; i < warm + iters; i++) {
            if (i == warm)
                t0 = MPI_Wtime();
            if (rank == 0) {
                MPI_Send(sbuf, (int)n, MPI_CHAR, 1, 1, MPI_COMM_WORLD);
                MPI_Recv(rbuf, (int)n, MPI_CHAR, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else if (rank == 1) {
                MPI_Recv(rbuf, (int)n, MPI_CHAR, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(sbuf, (int)n, MPI_CHAR, 0, 1, MPI_COMM_WORLD);
            }
        }
        if (rank == 0)
            printf("%-12ld %12.3f\n", n, (MPI_Wtime() - t0) * 1e6 / (2.0 * iters));
        fflush(stdout);
    }
    bench_buffer_free(sbuf);
    bench_buffer_free(rbuf);
    MPI_Finalize();
    return 0;
}
