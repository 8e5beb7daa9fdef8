#!/usr/bin/python3
"""Python client of the Service sample, with Debian's python3-grpcio and python3-grpc-tools.

The stubs are generated when the client starts, from solver.proto beside this file
(or the one named by $SOLVER_PROTO), into a temporary folder.

usage: client.py PORT pi INTERVALS [CALLS [CONCURRENT [DEADLINE_SECONDS]]]
       client.py PORT heat PLATES STEPS [BAD_PLATE [WIDTH]]
       client.py PORT fault RANK
       client.py PORT status
       client.py PORT shutdown

WIDTH: the width of every plate (absurd ones are refused, the limits are in solver.proto).
"""
import os
import shutil
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor


def load_stubs():
    proto = os.environ.get("SOLVER_PROTO") or os.path.join(os.path.dirname(os.path.abspath(__file__)), "solver.proto")
    out = tempfile.mkdtemp(prefix="solver-stubs-")
    from grpc_tools import protoc
    rc = protoc.main(["protoc", "-I" + os.path.dirname(proto), "--python_out=" + out,
                      "--grpc_python_out=" + out, os.path.basename(proto)])
    if rc != 0:
        sys.exit("protoc failed on %s" % proto)
    sys.path.insert(0, out)
    import solver_pb2
    import solver_pb2_grpc
    shutil.rmtree(out)
    return solver_pb2, solver_pb2_grpc


def plates(pb, count, bad, width=None):
    """The same plates as the C# client: plate `bad` has no interior cell (a worker rejects it)."""
    return [pb.Plate(id=i, width=0 if i == bad else width or 8 + i, height=6 + i % 3,
                     top=100, bottom=i, left=50, right=25) for i in range(count)]


def call_list(numbers):
    return ", ".join(str(n) for n in numbers) or "none"


def main(argv):
    import grpc
    pb, rpc = load_stubs()
    port, command, rest = argv[1], argv[2], [int(a) for a in argv[3:]]
    with grpc.insecure_channel("127.0.0.1:%s" % port) as channel:
        solver = rpc.SolverStub(channel)
        try:
            if command == "pi":
                intervals = rest[0]
                calls = rest[1] if len(rest) > 1 else 1
                concurrent = rest[2] if len(rest) > 2 else 1
                deadline = rest[3] if len(rest) > 3 else None
                with ThreadPoolExecutor(concurrent) as pool:
                    replies = list(pool.map(lambda _: solver.Pi(pb.PiRequest(intervals=intervals), timeout=deadline),
                                            range(calls)))
                for r in replies:
                    print("pi = %r from %d intervals on %d ranks (call %d)" % (r.pi, intervals, r.ranks, r.call))
            elif command == "heat":
                bad = rest[2] if len(rest) > 2 else -1
                width = rest[3] if len(rest) > 3 else None
                reply = solver.Heat(pb.HeatRequest(plates=plates(pb, rest[0], bad, width), steps=rest[1]))
                for p in reply.plates:
                    print("plate %d: mean %r, last change %.2E (rank %d)" % (p.id, p.mean, p.change, p.rank))
            elif command == "fault":
                solver.Pi(pb.PiRequest(intervals=1000, fault=pb.Fault(inject=True, rank=rest[0])))
                print("the fault was not reported")
                return 1
            elif command == "status":
                s = solver.Status(pb.StatusRequest())
                print("%d ranks; %d calls taken, %d ended, %d stopped by their callers; running: %s"
                      % (s.ranks, s.calls, s.answered, s.stopped, call_list(s.running)))
            elif command == "shutdown":
                done = solver.Shutdown(pb.ShutdownRequest())
                print("the job took %d calls and is shutting down; abandoned: %s" % (done.calls, call_list(done.abandoned)))
            else:
                print(__doc__, file=sys.stderr)
                return 2
        except grpc.RpcError as e:
            print("gRPC error %s: %s" % (e.code().name, e.details()))
            return 3
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
