#!/usr/bin/env bash
# sparse.sh - build ptask.ko with sparse on every source (`make sparse`).
#
# Usage: sparse.sh KDIR
# Runs `make -C KDIR M=<repo>/kmod C=2 modules` (C=2: check every file, not
# only the ones rebuilt), keeps the output in build/sparse.log and fails on
# any "warning:" or "error:" line (sparse's or the compiler's).  Ends with
# "1 passed, 0 failed" or "0 passed, 1 failed".
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
kdir=${1:?usage: sparse.sh KDIR}
command -v sparse >/dev/null || { echo "sparse: not installed; run 'make deps'" >&2; exit 1; }
[ -f "$root/kmod/Kbuild" ] || { echo "sparse: no kmod/Kbuild"; echo "0 passed, 1 failed"; exit 1; }
mkdir -p "$root/build"
log=$root/build/sparse.log

echo "sparse: checking kmod/ (and core/ through it) against $kdir"
set +e
make -C "$kdir" M="$root/kmod" C=2 modules 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
set -e
n=$(grep -cE '(warning|error):' "$log" || true)
if [ "$rc" != 0 ] || [ "$n" != 0 ]; then
	grep -E '(warning|error):' "$log" | head -n 100 || true
	echo "sparse: $n warning/error line(s), make exit status $rc; log $log"
	echo "0 passed, 1 failed"
	exit 1
fi
echo "sparse: clean"
echo "1 passed, 0 failed"
