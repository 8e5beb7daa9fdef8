/*
 * rma_ops.c - Put + Flush (or Get + Flush) of a few bytes towards this rank's
 * own window, over and over, on one rank: the per-operation path of MPI alone,
 * for instruction counts (perf/callgrind.sh, CALLGRIND_CASE=rma-put|rma-get).
 * rma_ops_core.c does the same through mpcore, perf/Rma ("ops") through System.MP.
 *
 * usage: rma-ops-c operations [bytes] [put|get]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    long ops = argc > 1 ? atol(argv[1]) : 1000;
    int bytes = argc > 2 ? atoi(argv[2]) : 8, put = argc <= 3 || strcmp(argv[3], "get") != 0;
    char *buf = calloc(1, (size_t)bytes + 1);
    void *mem = NULL;
    MPI_Win win;
    MPI_Init(&argc, &argv);
    MPI_Win_allocate(bytes, 1, MPI_INFO_NULL, MPI_COMM_SELF, &mem, &win);
    MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
    for (long i = 0; i < ops; i++) {
        if (put)
            MPI_Put(buf, bytes, MPI_UINT8_T, 0, 0, bytes, MPI_UINT8_T, win);
        else
            MPI_Get(buf, bytes, MPI_UINT8_T, 0, 0, bytes, MPI_UINT8_T, win);
        MPI_Win_flush(0, win);
    }
    MPI_Win_unlock(0, win);
    MPI_Win_free(&win);
    MPI_Finalize();
    free(buf);
    return 0;
}
