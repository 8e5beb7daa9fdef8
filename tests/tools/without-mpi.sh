#!/usr/bin/env bash
# without-mpi.sh all|mpich|openmpi COMMAND [ARGS...]
#
# Runs COMMAND as if the named MPI libraries were not installed: in a private mount
# namespace (unshare; a user namespace too when not root), every shared-library file of
# that MPI is covered by an empty file, so dlopen fails on it as on a machine without it.
# Nothing outside the namespace changes, and nothing is left behind when COMMAND ends.
# The test suite uses it to provoke "no MPI", "only Open MPI" and "only MPICH" from motor and
# from System.MP in library mode.
set -euo pipefail
which="${1:-}"; shift || true
[ $# -gt 0 ] || { echo "usage: $0 all|mpich|openmpi COMMAND [ARGS...]" >&2; exit 2; }
case "$which" in
  all) pattern='libmpi(ch)?(cxx|_cxx|_mpifh|fort)?\.so' ;;
  mpich) pattern='libmpich|libmpi\.so\.12' ;;
  openmpi) pattern='libmpi\.so\.40|openmpi' ;;
  *) echo "$0: first argument must be all, mpich or openmpi" >&2; exit 2 ;;
esac
# Every library file the dynamic loader knows under those names, with the files their links name
# (ldconfig is in /sbin, which is not on a user's PATH on Debian).
ldconfig="$(command -v ldconfig || echo /sbin/ldconfig)"
mapfile -t files < <("$ldconfig" -p | sed -n 's/.* => //p' | grep -E "$pattern" | while read -r f; do
  readlink -f "$f"; done | sort -u)
if [ "$which" = all ] || [ "$which" = openmpi ]; then
  mapfile -t -O "${#files[@]}" files < <("$ldconfig" -p | sed -n 's/.* => //p' | grep -E 'libmpi\.so(\.|$)' |
    while read -r f; do readlink -f "$f"; done | sort -u)
fi
# A mount namespace needs root: be root, map ourselves to root in a user namespace, or (where
# user namespaces are not allowed, e.g. in a chroot) use sudo and come back to our own user.
back=()
if [ "$(id -u)" = 0 ]; then ns=(unshare --mount --propagation private)
elif unshare --user --map-root-user true 2>/dev/null; then
  ns=(unshare --user --map-root-user --mount --propagation private)
elif sudo -n true 2>/dev/null; then
  ns=(sudo -n -E env "PATH=$PATH" unshare --mount --propagation private)
  back=(setpriv --reuid "$(id -u)" --regid "$(id -g)" --init-groups --)
else
  echo "$0: needs root, user namespaces or sudo without a password to hide libraries" >&2; exit 3
fi
empty="$(mktemp)"; chmod 644 "$empty"
trap 'rm -f "$empty"' EXIT
# shellcheck disable=SC2016
"${ns[@]}" bash -c 'empty="$1"; n="$2"; nb="$3"; shift 3
  for ((i = 0; i < n; i++)); do mount --bind "$empty" "$1"; shift; done
  back=("${@:1:nb}"); shift "$nb"
  exec "${back[@]}" "$@"' bash "$empty" "${#files[@]}" "${#back[@]}" "${files[@]}" "${back[@]}" "$@"
