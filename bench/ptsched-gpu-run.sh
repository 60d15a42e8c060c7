#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# bench/ptsched-gpu-run.sh - PTSched's experiments (bench/ptsched.sh all:
# PTask Table 3, Figure 13, the budgets' dispatch overhead) on a real GPU,
# for the lent GPU machine in one call.  Nothing is built there: carry
#   build/bin   ptaskd, ptsched_client, ptask_gpu (make bench-sim-progs)
#   build/gpu   bench_kernels.ptx (make build/gpu/bench_kernels.ptx: the
#               ptask_busy kernel spins on %globaltimer)
#   build/gpulibs  libnl-genl-3.so.200 (that machine lacks it)
# e.g.  run(command="bash bench/ptsched-gpu-run.sh",
#           carry=["build/bin", "build/gpu", "build/gpulibs"])
# Results: $OUT/ptsched-summary.txt, the CSVs, and the log tarball; the
# PNGs are drawn here afterwards (OUT=DIR bench/ptsched.sh plot), as that
# machine has no gnuplot.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
W=$(mktemp -d)
OUTDIR=${OUT:-$ROOT/build/ptsched-gpu}
mkdir -p "$OUTDIR"
export LD_LIBRARY_PATH="$ROOT/build/gpulibs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
S="$W/ptsched-summary.txt"
{
	echo "date=$(date -u +%Y-%m-%dT%H:%M:%SZ) host=$(hostname)"
	nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1
} | tee "$S"
BACKEND=cuda PTX=build/gpu/bench_kernels.ptx SECONDS_PER_RUN=${SECONDS_PER_RUN:-4} \
	FIG13_SECONDS=${FIG13_SECONDS:-8} OUT=$W/ptsched \
	timeout 500 bash bench/ptsched.sh all >"$W/ptsched.out" 2>"$W/ptsched.err"
echo "ptsched.sh exit status: $?" | tee -a "$S"
cat "$W/ptsched.out" | tee -a "$S"
tail -n 5 "$W/ptsched.err" | tee -a "$S"
cp "$S" "$W"/ptsched/*.csv "$OUTDIR/" 2>/dev/null
# Its entries by name, not ".": a "./" entry carries the mktemp
# directory's mode 0700 to any directory it is extracted into with -C.
tar -C "$W" -czf "$OUTDIR/ptsched-gpu.tar.gz" $(cd "$W" && ls -A)
echo "ptsched-gpu-run.sh: results in $OUTDIR"
