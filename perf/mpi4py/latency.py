"""latency.py - mpi4py's ping-pong with NumPy buffers, osu_latency methodology.

Blocking comm.Send/comm.Recv (the buffer-protocol calls, no pickling) of a NumPy uint8
array between ranks 0 and 1; sizes 0 B..max; 100 warm-up + 10000 timed iterations up to
8 KiB, 10 + 1000 above; latency = total time / (2 x iterations).

usage: mpirun -n 2 python3 latency.py [max_bytes] [iteration_scale]
Prints "size latency_us" rows, the same format as perf/native/pingpong.c.
"""
import sys

from mpi4py import MPI

from osu import iterations, setup


def main():
    comm, rank, scale, sizes, sbuf, rbuf = setup("ping-pong", 0)
    for n in sizes:
        warm, iters = iterations(n, (100, 10000), (10, 1000), scale)
        s, r = sbuf[:n], rbuf[:n]
        t0 = 0.0
        comm.Barrier()
        for i in range(warm + iters):
            if i == warm:
                t0 = MPI.Wtime()
            if rank == 0:
                comm.Send(s, dest=1, tag=1)
                comm.Recv(r, source=1, tag=1)
            elif rank == 1:
                comm.Recv(r, source=0, tag=1)
                comm.Send(s, dest=0, tag=1)
        t1 = MPI.Wtime()
        if rank == 0:
            if n and (r[0] != ord("a") or r[-1] != ord("a")):
                sys.exit(f"ping-pong data corrupted at {n} bytes")
            print(f"{n:<12d} {(t1 - t0) * 1e6 / (2.0 * iters):12.3f}", flush=True)


main()
