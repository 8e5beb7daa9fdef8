"""objects.py - Motor's Figure 11 under mpi4py.

A linked list whose nodes each hold a NumPy int32 array (4096 data bytes in total, spread
evenly over N nodes, as perf/ObjectPingPong builds it) goes from rank 0 to rank 1 and
back with mpi4py's pickle-based comm.send/comm.recv; the round trip includes pickling at
both ends.  Beside it, in interleaved rounds of the same run, the 4096 bytes as one NumPy
array with comm.Send/comm.Recv (raw, the floor).  Calibrated like ObjectPingPong: one round
trip sets each case's iteration count to fill budget_ms.

usage: mpirun -n 2 python3 objects.py [max_nodes=4096] [rounds=1] [budget_ms=40]
Prints "N pickle_us raw_us" rows (round trip in microseconds, median of the rounds).
"""
import gc
import statistics
import sys
import threading

import numpy as np
from mpi4py import MPI

TAG = 11


class Node:
    __slots__ = ("data", "next")

    def __init__(self, data, nxt):
        self.data = data
        self.next = nxt


def make(n):
    head = None
    for i in range(n - 1, -1, -1):
        length = 1024 // n + (1 if i < 1024 % n else 0)
        head = Node(np.arange(i * 1000, i * 1000 + length, dtype=np.int32), head)
    return head


def same(a, b):
    while a is not None and b is not None:
        if not np.array_equal(a.data, b.data):
            return False
        a, b = a.next, b.next
    return a is None and b is None


def exchange(comm, method, lst, iters):
    """Runs iters round trips; returns (seconds, rank 0's check of the last list back)."""
    rank, peer = comm.Get_rank(), 1 - comm.Get_rank()
    raw = np.zeros(1024, dtype=np.int32)
    back = None
    gc.collect()
    comm.Barrier()
    t0 = MPI.Wtime()
    for _ in range(iters):
        if method == "pickle":
            if rank == 0:
                comm.send(lst, dest=peer, tag=TAG)
                back = comm.recv(source=peer, tag=TAG)
            elif rank == 1:
                comm.send(comm.recv(source=peer, tag=TAG), dest=peer, tag=TAG)
        elif rank == 0:
            comm.Send(raw, dest=peer, tag=TAG)
            comm.Recv(raw, source=peer, tag=TAG)
        elif rank == 1:
            comm.Recv(raw, source=peer, tag=TAG)
            comm.Send(raw, dest=peer, tag=TAG)
    seconds = MPI.Wtime() - t0
    return seconds, rank != 0 or method == "raw" or same(lst, back)


def run(comm, max_nodes, rounds, budget, out):
    methods = ["pickle", "raw"]
    sizes = []
    n = 1
    while n <= max_nodes:
        sizes.append(n)
        n *= 2
    ok = True
    for m in methods:  # warm-up
        ok &= exchange(comm, m, make(8), 20)[1]
    iterations, results = {}, {}
    for n in sizes:
        for m in methods:
            once, good = exchange(comm, m, make(n), 1)
            ok &= good
            iterations[(m, n)] = comm.bcast(min(5000, max(1, int(budget / max(once, 1e-9)))), root=0)
            results[(m, n)] = []
    for _ in range(rounds):
        for n in sizes:
            lst = make(n)
            for m in methods:
                seconds, good = exchange(comm, m, lst, iterations[(m, n)])
                ok &= good
                results[(m, n)].append(seconds / iterations[(m, n)])
    if comm.Get_rank() == 0:
        print(f"# Figure 11 under mpi4py {MPI.Get_library_version().splitlines()[0].strip()}: "
              f"round trip in microseconds, median of {rounds} rounds")
        print(f"# {'N':>6} {'pickle':>10} {'raw':>8}")
        for n in sizes:
            p = statistics.median(results[("pickle", n)]) * 1e6
            r = statistics.median(results[("raw", n)]) * 1e6
            print(f"{n:8d} {p:10.2f} {r:8.2f}", flush=True)
        print("data checked: every list came back as sent" if ok else "DATA MISMATCH")
    out.append(0 if ok else 1)


def main():
    max_nodes = int(sys.argv[1]) if len(sys.argv) > 1 else 4096
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    budget = (float(sys.argv[3]) if len(sys.argv) > 3 else 40) / 1000
    comm = MPI.COMM_WORLD
    if comm.Get_size() < 2:
        sys.exit("objects.py needs at least 2 ranks")
    # pickle recurses down the list: room for 16384 nodes, as ObjectPingPong's 512 MiB thread.
    sys.setrecursionlimit(1 << 20)
    threading.stack_size(1 << 29)
    out = []
    t = threading.Thread(target=run, args=(comm, max_nodes, rounds, budget, out))
    t.start()
    t.join()
    sys.exit(out[0] if out else 1)


main()
