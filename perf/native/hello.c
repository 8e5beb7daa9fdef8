/*
 * hello.c - the native floor for start-up: samples/Hello in C.  Every rank
 * reports itself; rank 0 receives the others' lines in rank order and prints
 * them with the MPI library's version (perf/compare-startup.sh times the
 * whole job against `motor Hello.dll`).
 *
 * usage: mpiexec -n N hello-c
 */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    char line[512], name[MPI_MAX_PROCESSOR_NAME], version[MPI_MAX_LIBRARY_VERSION_STRING];
    int rank, size, len;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Get_processor_name(name, &len);
    snprintf(line, sizeof line, "Hello from rank %d of %d on %s (C)", rank, size, name);
    if (rank == 0) {
        puts(line);
        for (int r = 1; r < size; r++) {
            MPI_Recv(line, (int)sizeof line, MPI_CHAR, r, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            puts(line);
        }
        MPI_Get_library_version(version, &len);
        version[strcspn(version, "\n")] = '\0';
        printf("MPI library: %s\n", version);
    } else {
        MPI_Send(line, (int)strlen(line) + 1, MPI_CHAR, 0, 0, MPI_COMM_WORLD);
    }
    MPI_Finalize();
    return 0;
}
