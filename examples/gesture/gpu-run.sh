#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# examples/gesture/gpu-run.sh - the gesture pipeline on the lent GPU
# machine, everything in one run.  Nothing is built there; carry:
#
#   build/bin      build/bin/gesture and build/bin/ptaskd (`make gesture ptaskd`)
#   build/gpulibs  libnl-genl-3.so.200, which that machine lacks (ptaskd links it)
#
# e.g. run(command="bash examples/gesture/gpu-run.sh", carry=["build/bin",
# "build/gpulibs"]).  Steps:
#
#   1. tests/gpu/gesture_gpu_test.sh  GPU xform/filter vs the CPU reference
#                                     (tolerance 0.01 mm) and equal events
#   2. tests/gesture/run.sh           check-gesture there (its host-twin and
#                                     fuzz programs are not carried: skipped): the golden event
#                                     stream from every path, the GPU ones
#                                     included (handcode, modular, pipes,
#                                     ptask on ptaskd --backend cuda)
#   3. examples/gesture/demo.sh       the five implementations, realtime and
#                                     unconstrained (1000 frames), per-client
#                                     isolation (ptaskd's default)
#   4. the ptask implementation again with ptaskd --isolation shared
#
# $OUT gets summary.txt (the key lines), gesture.csv and gesture-table.txt
# (step 3), gesture-shared.csv (step 4), gesture.png when matplotlib is
# there (else draw it here: python3 examples/gesture/plot.py gesture.csv
# gesture.png), and gpu-run.tar.gz with every log.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
W=$(mktemp -d)
OUTDIR=${OUT:-$ROOT/build/gesture-gpu-run}
mkdir -p "$OUTDIR"
export LD_LIBRARY_PATH="$ROOT/build/gpulibs:$ROOT/build/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
S="$W/summary.txt"
say() { echo "$*" | tee -a "$S"; }

say "date=$(date -u +%Y-%m-%dT%H:%M:%SZ) host=$(hostname) cpus=$(nproc)"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | tee -a "$S"
for f in build/bin/gesture build/bin/ptaskd; do
	[ -x "$f" ] || say "missing $f: carry build/bin (make gesture ptaskd)"
done

PY=$( [ -x /usr/bin/python3 ] && echo /usr/bin/python3 || echo python3)
# no matplotlib there (likely): no PNG in the tests' small demo either
"$PY" -c 'import matplotlib' 2>/dev/null || export GESTURE_NO_PLOT=1

# 1. the GPU stages against the CPU
timeout 90 bash tests/gpu/gesture_gpu_test.sh >"$W/gpucheck.txt" 2>&1
say "gesture_gpu_test exit status: $? ($(tail -n 1 "$W/gpucheck.txt"))"
grep -E '^(not )?ok|^#' "$W/gpucheck.txt" | tee -a "$S"

# 2. the golden event stream on every path
timeout 150 bash tests/gesture/run.sh >"$W/check-gesture.txt" 2>&1
say "check-gesture exit status: $? ($(tail -n 1 "$W/check-gesture.txt"))"
grep -E '^not ok|^ok [0-9]+ - [a-z-]+: (the event|cannot)|SKIP|gpucheck' \
	"$W/check-gesture.txt" | tee -a "$S"

# 3. the demo: five implementations, both modes
GESTURE_OUT=$W/demo GESTURE_NO_PLOT=1 GESTURE_BACKEND=cuda timeout 240 \
	bash examples/gesture/demo.sh >"$W/demo.txt" 2>&1
say "demo exit status: $?"
tr '\r' '\n' <"$W/demo.txt" | grep -v '^\s*$' | tail -n 40 | tee -a "$S"

# 4. ptask with one CUDA context for every client
GESTURE_OUT=$W/demo-shared GESTURE_NO_PLOT=1 GESTURE_BACKEND=cuda \
	GESTURE_IMPLS=ptask GESTURE_PTASKD_ARGS="--isolation shared" timeout 90 \
	bash examples/gesture/demo.sh >"$W/demo-shared.txt" 2>&1
say "demo (ptask, --isolation shared) exit status: $?"
tr '\r' '\n' <"$W/demo-shared.txt" | grep -E '^(ptask|impl) ' | tee -a "$S"

cp "$W/demo/gesture.csv" "$W/demo/gesture-table.txt" "$OUTDIR/" 2>/dev/null
cp "$W/demo-shared/gesture.csv" "$OUTDIR/gesture-shared.csv" 2>/dev/null
if "$PY" examples/gesture/plot.py "$W/demo/gesture.csv" "$OUTDIR/gesture.png" \
	"gesture pipeline, cuda backend, $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1), $(date -u +%Y-%m-%d)" \
	>"$W/plot.txt" 2>&1; then
	say "plot: gesture.png"
else
	say "no plot here ($(tail -n 1 "$W/plot.txt")): python3 examples/gesture/plot.py gesture.csv gesture.png"
fi
cp "$S" "$OUTDIR/summary.txt"
# Its entries by name, not ".": a "./" entry carries the mktemp
# directory's mode 0700 to any directory it is extracted into with -C.
tar -C "$W" -czf "$OUTDIR/gpu-run.tar.gz" $(cd "$W" && ls -A)
echo "gpu-run.sh: results in $OUTDIR"
