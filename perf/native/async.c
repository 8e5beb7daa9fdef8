/*
 * async.c - the native floor of the async group (perf/Async): MPI in C at
 * MPI_THREAD_MULTIPLE, the level awaiting needs.
 *
 *   mpiexec -n 2 async-c latency [iteration_scale]
 *       ping-pong of 8 B and 64 KiB with blocking MPI_Send/MPI_Recv; 100 warm-up + 10000 timed
 *       iterations at 8 B, 10 + 1000 at 64 KiB; prints "size_bytes latency_us" (half round trip).
 *       With $BENCH_BLOCK=B (> 0) the timed iterations run in blocks of B and the figure is the
 *       median block's (a loaded machine's preemptions fall into a few blocks, not the median).
 *   mpiexec -n 2 async-c idle N [seconds]
 *       rank 0 posts N receives that match nothing yet and waits for them in MPI_Waitall, as a
 *       C program would; prints "N cpu_percent": rank 0's processor time (getrusage) over the
 *       wait, as a share of one core.  Rank 1 sleeps, then sends the N messages.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

static double cpu_seconds(void)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return (double)u.ru_utime.tv_sec + u.ru_utime.tv_usec * 1e-6 + (double)u.ru_stime.tv_sec + u.ru_stime.tv_usec * 1e-6;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void latency(int rank, double scale)
{
    const char *b = getenv("BENCH_BLOCK");
    int block = b ? atoi(b) : 0;
    static const long sizes[] = {8, 65536};
    char *sbuf = calloc(65536, 1), *rbuf = calloc(65536, 1);
    if (rank == 0)
        printf("# C MPI ping-pong, blocking Send/Recv at MPI_THREAD_MULTIPLE\n# %-10s %12s\n", "size", "latency_us");
    for (int k = 0; k < 2; k++) {
        long n = sizes[k];
        int warm = n > 8192 ? 10 : 100, iters = (int)((n > 8192 ? 1000 : 10000) * scale);
        double t0 = 0, tb = 0, *blocks;
        int nb = 0;
        if (iters < 1)
            iters = 1;
        blocks = calloc((size_t)iters + 1, sizeof *blocks);
        MPI_Barrier(MPI_COMM_WORLD);
        for (int i = 0; i < warm + iters; i++) {
            if (i == warm)
                t0 = tb = MPI_Wtime();
            else if (block > 0 && i > warm && (i - warm) % block == 0) {
                double t = MPI_Wtime();
                blocks[nb++] = t - tb;
                tb = t;
            }
            if (rank == 0) {
                MPI_Send(sbuf, (int)n, MPI_CHAR, 1, 1, MPI_COMM_WORLD);
                MPI_Recv(rbuf, (int)n, MPI_CHAR, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else {
                MPI_Recv(rbuf, (int)n, MPI_CHAR, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(sbuf, (int)n, MPI_CHAR, 0, 1, MPI_COMM_WORLD);
            }
        }
        if (rank == 0 && block > 0 && nb > 0) {
            qsort(blocks, (size_t)nb, sizeof *blocks, cmp_double);
            printf("%-12ld %12.3f\n", n, blocks[nb / 2] * 1e6 / (2.0 * block));
        } else if (rank == 0)
            printf("%-12ld %12.3f\n", n, (MPI_Wtime() - t0) * 1e6 / (2.0 * iters));
        fflush(stdout);
        free(blocks);
    }
    free(sbuf);
    free(rbuf);
}

static void idle(int rank, int n, double seconds)
{
    int *bufs = calloc((size_t)n, sizeof *bufs);
    MPI_Request *reqs = calloc((size_t)n, sizeof *reqs);
    MPI_Status *sts = calloc((size_t)n, sizeof *sts);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        double c0, w0;
        for (int i = 0; i < n; i++)
            MPI_Irecv(&bufs[i], 1, MPI_INT, 1, i, MPI_COMM_WORLD, &reqs[i]);
        c0 = cpu_seconds();
        w0 = MPI_Wtime();
        MPI_Waitall(n, reqs, sts);
        printf("# C: %d receives pending in MPI_Waitall; rank 0's processor time over the wait\n# %-10s %12s\n", n, "pending", "cpu_percent");
        printf("%-12d %12.2f\n", n, 100.0 * (cpu_seconds() - c0) / (MPI_Wtime() - w0));
    } else {
        struct timespec ts = {(time_t)seconds, (long)((seconds - (double)(time_t)seconds) * 1e9)};
        nanosleep(&ts, NULL);
        for (int i = 0; i < n; i++)
            MPI_Send(&i, 1, MPI_INT, 0, i, MPI_COMM_WORLD);
    }
    free(bufs);
    free(reqs);
    free(sts);
}

int main(int argc, char **argv)
{
    int rank, size, provided;
    const char *mode = argc > 1 ? argv[1] : "latency";
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) {
        if (rank == 0)
            fprintf(stderr, "async-c needs 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (strcmp(mode, "idle") == 0)
        idle(rank, argc > 2 ? atoi(argv[2]) : 1, argc > 3 ? atof(argv[3]) : 2.0);
    else
        latency(rank, argc > 2 ? atof(argv[2]) : 1.0);
    MPI_Finalize();
    return 0;
}
