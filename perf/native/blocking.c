/*
 * blocking.c - a blocking receive alone, for instruction counts (perf/callgrind.sh,
 * CALLGRIND_CASE=blocking).  One rank sends to itself with MPI_Isend, receives the
 * message with a blocking MPI_Recv and completes the send with MPI_Wait: the work a
 * blocking Recv does for a message that has arrived, plus a send's post and
 * completion, without a second process, so an instruction count repeats from run to
 * run.  (MPICH completes a blocking send to self only once its receive is posted:
 * hence the nonblocking send.)
 *
 * usage: blocking-c iterations [bytes]      (one process; no mpiexec needed)
 */
#include <mpi.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    long iterations = argc > 1 ? atol(argv[1]) : 1000;
    int bytes = argc > 2 ? atoi(argv[2]) : 8;
    char *sbuf = calloc(1, (size_t)bytes + 1), *rbuf = calloc(1, (size_t)bytes + 1);
    MPI_Request r;
    MPI_Status st;

    MPI_Init(&argc, &argv);
    for (long i = 0; i < iterations; i++) {
        MPI_Isend(sbuf, bytes, MPI_CHAR, 0, 100, MPI_COMM_SELF, &r);
        MPI_Recv(rbuf, bytes, MPI_CHAR, 0, 100, MPI_COMM_SELF, &st);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
    }
    MPI_Finalize();
    free(sbuf);
    free(rbuf);
    return 0;
}
