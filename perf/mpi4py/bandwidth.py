"""bandwidth.py - mpi4py's streaming with NumPy buffers, osu_bw methodology.

Rank 0 posts a window of 64 comm.Isend, rank 1 a window of 64 comm.Irecv, both wait for
all (MPI.Request.Waitall), then rank 1 acknowledges with a 4-byte message.  Sizes 1 B..max;
10 warm-up + 100 timed windows up to 8 KiB, 2 + 20 above.  Bandwidth = bytes sent / time,
in MB/s (10^6 bytes per second).

usage: mpirun -n 2 python3 bandwidth.py [max_bytes] [iteration_scale]
Prints "size MB/s" rows, the same format as perf/native/bandwidth.c.
"""
import numpy as np
from mpi4py import MPI

from osu import iterations, setup

WINDOW = 64


def main():
    comm, rank, scale, sizes, sbuf, rbuf = setup(f"bandwidth, window {WINDOW}", 1)
    ack = np.zeros(1, dtype=np.int32)
    for n in sizes:
        warm, iters = iterations(n, (10, 100), (2, 20), scale)
        s, r = sbuf[:n], rbuf[:n]
        t0 = 0.0
        comm.Barrier()
        for i in range(warm + iters):
            if i == warm:
                t0 = MPI.Wtime()
            if rank == 0:
                MPI.Request.Waitall([comm.Isend(s, dest=1, tag=100) for _ in range(WINDOW)])
                comm.Recv(ack, source=1, tag=101)
            elif rank == 1:
                MPI.Request.Waitall([comm.Irecv(r, source=0, tag=100) for _ in range(WINDOW)])
                comm.Send(ack, dest=0, tag=101)
        if rank == 0:  # %g: never 0.00 on a slow round
            print(f"{n:<12d} {n * WINDOW * iters / (MPI.Wtime() - t0) / 1e6:14.6g}", flush=True)


main()
