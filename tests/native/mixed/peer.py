"""The Python rank of the mixed-language MPMD jobs (MixedJobTests): world rank 0, application 0,
beside Motor ranks running the scenario mixed-world (tests/Scenarios/Interop/MixedJobs.cs), which makes
the same calls in the same order.  Debian's mpi4py (Open MPI) with NumPy buffers.  Prints PASS
or FAIL; exits 1 when a check failed."""
import sys

import numpy as np
from mpi4py import MPI

failures = 0


def check(cond, what):
    global failures
    if not cond:
        print(f"FAIL mixed-peer python: {what}", flush=True)
        failures += 1


world = MPI.COMM_WORLD
me, n = world.Get_rank(), world.Get_size()
appnum = world.Get_attr(MPI.APPNUM)
check(me == 0 and appnum == 0 and n >= 2, "world rank 0, application 0, Motor ranks after it")

apps = np.empty(n, dtype=np.int32)
world.Allgather(np.array([appnum], dtype=np.int32), apps)
check(all(a > 0 for a in apps[1:]), "every other rank is of another application")

# Arrays both ways.
for m in range(1, n):
    world.Send(m + np.arange(1000, dtype=np.float64) * 0.25, dest=m, tag=1)
for m in range(1, n):
    s = np.empty(1, dtype=np.float64)
    world.Recv(s, source=m, tag=2)
    check(s[0] == 1000.0 * m + 124875.0, "the sum a Motor rank sent back")
    back = np.empty(1000, dtype=np.int32)
    world.Recv(back, source=m, tag=3)
    check(np.array_equal(back, m * 1000 + np.arange(1000, dtype=np.int32)), "every int a Motor rank sent, exactly")

# Collectives.
b = np.array([(3 << i) + i for i in range(16)], dtype=np.int64)
world.Bcast(b, root=0)
total = np.empty(1, dtype=np.float64)
world.Allreduce(np.array([me + 1.0]), total, op=MPI.SUM)
check(total[0] == n * (n + 1) / 2.0, "Allreduce (sum of doubles)")
most = np.empty(1, dtype=np.int32)
world.Allreduce(np.array([me * 7], dtype=np.int32), most, op=MPI.MAX)
check(most[0] == (n - 1) * 7, "Allreduce (max of ints)")
gathered = np.empty(n, dtype=np.int32)
world.Gather(np.array([me * 10 + 1], dtype=np.int32), gathered, root=0)
check(np.array_equal(gathered, np.arange(n, dtype=np.int32) * 10 + 1), "Gather at the Python rank")
world.Gather(np.array([me, me * me], dtype=np.int32), None, root=n - 1)

# This program's own communicator.
own = world.Split(appnum, me)
rsum = np.empty(1, dtype=np.int32)
own.Allreduce(np.array([own.Get_rank()], dtype=np.int32), rsum, op=MPI.SUM)
check(own.Get_size() == 1 and rsum[0] == 0, "the split by application number holds the Python rank alone")
own.Free()

# Too much for the Motor ranks' receive of 5 ints; then a message that fits.
for m in range(1, n):
    world.Send(np.arange(10, dtype=np.int32), dest=m, tag=5)
    world.Send(np.array([4242 + m], dtype=np.int32), dest=m, tag=6)
world.Barrier()
print(f"{'FAIL' if failures else 'PASS'} mixed-peer python rank {me} ({n} ranks)", flush=True)
sys.exit(1 if failures else 0)
