/*
 * collectives.c - the native floor for collectives, OSU methodology
 * (osu_allreduce / osu_bcast / osu_alltoall): barrier, time one collective,
 * barrier; 100 warm-up + 1000 timed iterations (10 + 100 above 8 KiB);
 * the reported latency is the average over ranks of each rank's mean time.
 *
 * usage: mpiexec -n 2 collectives-c
 * Prints "name bytes latency_us" rows, the same format as perf/Collectives.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { ALLREDUCE, BCAST, ALLTOALL };

static double run(int op, long bytes, int rank, int size)
{
    int large = bytes > 8192, warm = large ? 10 : 100, iters = large ? 100 : 1000;
    long n = bytes / (op == ALLREDUCE ? (long)sizeof(float) : 1);
    char *a = malloc((size_t)bytes * (size_t)size + 1), *b = malloc((size_t)bytes * (size_t)size + 1);
    double total = 0, avg = 0;
    memset(a, 1, (size_t)bytes * (size_t)size + 1);
    for (int i = 0; i < warm + iters; i++) {
        double t0;
        MPI_Barrier(MPI_COMM_WORLD);
        t0 = MPI_Wtime();
        if (op == ALLREDUCE)
            MPI_Allreduce(a, b, (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        else if (op == BCAST)
            MPI_Bcast(a, (int)bytes, MPI_BYTE, 0, MPI_COMM_WORLD);
        else
            MPI_Alltoall(a, (int)bytes, MPI_BYTE, b, (int)bytes, MPI_BYTE, MPI_COMM_WORLD);
        if (i >= warm)
            total += MPI_Wtime() - t0;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    total /= iters;
    MPI_Reduce(&total, &avg, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    free(a);
    free(b);
    (void)rank;
    return avg / size * 1e6;
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    double r1 = run(ALLREDUCE, 8, rank, size);
    double r2 = run(BCAST, 1 << 20, rank, size);
    double r3 = run(ALLTOALL, 4096, rank, size);
    if (rank == 0)
        printf("allreduce 8 %.3f\nbcast %d %.3f\nalltoall 4096 %.3f\n", r1, 1 << 20, r2, r3);
    MPI_Finalize();
    return 0;
}
