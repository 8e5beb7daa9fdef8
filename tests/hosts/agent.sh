#!/usr/bin/env bash
# agent.sh [OPTIONS] HOST COMMAND... - what a launcher runs instead of ssh to start its
# daemon on another host of tests/hosts/hosts.sh: enters HOST's namespaces and runs COMMAND
# there the way sshd would, joined into one line for the shell.  Options (hydra passes -x, as
# to ssh) are ignored.
#   mpiexec.mpich -launcher ssh -launcher-exec tests/hosts/agent.sh ...
#   mpirun.openmpi --mca plm_rsh_agent tests/hosts/agent.sh ...
set -euo pipefail
while [ $# -gt 0 ] && [ "${1#-}" != "$1" ]; do shift; done
[ $# -ge 2 ] || { echo "usage: agent.sh [OPTIONS] HOST COMMAND..." >&2; exit 2; }
host="$1"
shift
exec "$(dirname "${BASH_SOURCE[0]}")/hosts.sh" exec "$host" sh -c "$*"
