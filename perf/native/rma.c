/*
 * rma.c - the native floor for one-sided communication, OSU methodology in C:
 *   put: osu_put_latency (MPI_Win_allocate, lock + MPI_Win_flush): rank 0
 *        locks rank 1's window once, then times MPI_Put + MPI_Win_flush;
 *        latency = time / iterations.  100 warm-up + 10000 timed up to
 *        8 KiB, 10 + 1000 above.
 *   get: osu_get_bw (MPI_Win_allocate, lock + MPI_Win_flush): a window of 64
 *        MPI_Get of the size, then one MPI_Win_flush; bandwidth = bytes /
 *        time in MB/s.  10 warm-up + 100 timed windows up to 8 KiB, 2 + 20 above.
 * Rank 1 only exposes its window (passive target).
 *
 * usage: mpiexec -n 2 rma-c put|get [max_bytes] [iteration_scale]
 * Prints "size_bytes value" rows (µs or MB/s), the same format as perf/Rma.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WINDOW 64
#define LARGE 8192

int main(int argc, char **argv)
{
    int rank, size, put = argc > 1 && strcmp(argv[1], "put") == 0;
    long max = argc > 2 ? atol(argv[2]) : 4L << 20;
    double scale = argc > 3 ? atof(argv[3]) : 1.0;
    char *buf, *mem;
    MPI_Win win;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2 || argc < 2 || (!put && strcmp(argv[1], "get") != 0)) {
        if (rank == 0)
            fprintf(stderr, "usage: mpiexec -n 2 rma-c put|get [max_bytes] [scale]\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    buf = malloc((size_t)max);
    memset(buf, 'a', (size_t)max);
    MPI_Win_allocate((MPI_Aint)max, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
    if (rank == 0)
        printf("# C MPI %s (osu_%s methodology, lock + flush)\n# %-10s %14s\n", put ? "Put latency" : "Get bandwidth",
               put ? "put_latency" : "get_bw", "size", put ? "us" : "MB/s");
    for (long n = 1; n <= max; n *= 2) {
        int large = n > LARGE;
        int warm = put ? (large ? 10 : 100) : (large ? 2 : 10);
        int iters = (int)((put ? (large ? 1000 : 10000) : (large ? 20 : 100)) * scale);
        double t0 = 0;
        if (iters < 1)
            iters = 1;
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0) {
            MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
            for (int i = 0; i < warm + iters; i++) {
                if (i == warm)
                    t0 = MPI_Wtime();
                if (put) {
                    MPI_Put(buf, (int)n, MPI_CHAR, 1, 0, (int)n, MPI_CHAR, win);
                } else {
                    for (int w = 0; w < WINDOW; w++)
                        MPI_Get(buf, (int)n, MPI_CHAR, 1, 0, (int)n, MPI_CHAR, win);
                }
                MPI_Win_flush(1, win);
            }
            double t = MPI_Wtime() - t0;
            MPI_Win_unlock(1, win);
            if (put)
                printf("%-12ld %14.2f\n", n, t * 1e6 / iters);
            else
                printf("%-12ld %14.6g\n", n, (double)n * WINDOW * iters / t / 1e6);
            fflush(stdout);
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_Win_free(&win);
    free(buf);
    MPI_Finalize();
    return 0;
}
