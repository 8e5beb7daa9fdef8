/*
 * io.c - the native floor for parallel I/O: a collective write of one file
 * (MPI_File_write_at_all, each rank one contiguous block, then MPI_File_sync)
 * and a collective read of it back (MPI_File_read_at_all), timed between
 * barriers; bandwidth = whole file / time, best of reps.  The read comes from
 * the page cache when the file fits in memory: this measures the I/O path, the
 * same for C and Motor, not the disk.
 *
 * usage: mpiexec -n 2 io-c [total_bytes=67108864] [dir=/tmp] [reps=3]
 * Prints "name bytes MB/s" rows, the same format as perf/Io.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    int rank, size, reps;
    long long total;
    const char *dir;
    char path[4096];
    double best_w = 0, best_r = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    total = argc > 1 ? atoll(argv[1]) : 64LL << 20;
    dir = argc > 2 ? argv[2] : "/tmp";
    reps = argc > 3 ? atoi(argv[3]) : 3;
    long long block = total / size;
    int pid = (int)getpid();
    MPI_Bcast(&pid, 1, MPI_INT, 0, MPI_COMM_WORLD);
    snprintf(path, sizeof path, "%s/motor-io-c-%d.bin", dir, pid);
    char *buf = malloc((size_t)block);
    memset(buf, rank + 1, (size_t)block);
    for (int i = 0; i < reps; i++) {
        MPI_File fh;
        MPI_Status st;
        double t0, tw, tr;
        MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR | MPI_MODE_CREATE, MPI_INFO_NULL, &fh);
        MPI_Barrier(MPI_COMM_WORLD);
        t0 = MPI_Wtime();
        MPI_File_write_at_all(fh, (MPI_Offset)rank * block, buf, (int)block, MPI_BYTE, &st);
        MPI_File_sync(fh);
        MPI_Barrier(MPI_COMM_WORLD);
        tw = MPI_Wtime() - t0;
        t0 = MPI_Wtime();
        MPI_File_read_at_all(fh, (MPI_Offset)rank * block, buf, (int)block, MPI_BYTE, &st);
        MPI_Barrier(MPI_COMM_WORLD);
        tr = MPI_Wtime() - t0;
        MPI_File_close(&fh);
        if (rank == 0)
            MPI_File_delete(path, MPI_INFO_NULL);
        if (buf[0] != rank + 1 || buf[block - 1] != rank + 1) {
            fprintf(stderr, "io-c: rank %d read back the wrong bytes\n", rank);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        double bytes = (double)block * size / 1e6;
        if (bytes / tw > best_w)
            best_w = bytes / tw;
        if (bytes / tr > best_r)
            best_r = bytes / tr;
    }
    if (rank == 0)
        printf("write_at_all %lld %.1f\nread_at_all %lld %.1f\n", block * size, best_w, block * size, best_r);
    free(buf);
    MPI_Finalize();
    return 0;
}
