"""osu.py - what perf/mpi4py's OSU-style programs share: arguments, buffers, the size sweep."""
import sys

import numpy as np
from mpi4py import MPI

LARGE = 8192  # above it, osu_latency and osu_bw run fewer iterations


def setup(what, first):
    """Reads [max_bytes] [iteration_scale]; returns (comm, rank, scale, sizes, send, receive):
    sizes from first (0 or 1) doubling to max_bytes, send and receive NumPy uint8 buffers."""
    max_bytes = int(sys.argv[1]) if len(sys.argv) > 1 else 4 << 20
    scale = float(sys.argv[2]) if len(sys.argv) > 2 else 1.0
    comm = MPI.COMM_WORLD
    if comm.Get_size() < 2:
        sys.exit(f"{sys.argv[0]} needs at least 2 ranks")
    if comm.Get_rank() == 0:
        print(f"# mpi4py {MPI.Get_library_version().splitlines()[0].strip()} {what}, NumPy buffers")
    sizes = []
    n = first
    while n <= max_bytes:
        sizes.append(n)
        n = n * 2 if n else 1
    send = np.full(max(max_bytes, 1), ord("a"), dtype=np.uint8)
    receive = np.zeros(max(max_bytes, 1), dtype=np.uint8)
    return comm, comm.Get_rank(), scale, sizes, send, receive


def iterations(n, small, large, scale):
    """(warm-up, timed) iterations at n bytes: osu's counts, the timed ones times scale."""
    return (small[0], max(1, int(small[1] * scale))) if n <= LARGE else (large[0], max(1, int(large[1] * scale)))
