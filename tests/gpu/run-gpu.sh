#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tests/gpu/run-gpu.sh - run the CUDA backend test and the raw GPU
# baseline on a machine with a GPU.  Builds nothing: `make gpu-progs`
# builds build/gpu/ elsewhere, and the GPU machine gets it carried.
#
#   build/gpu/kernels.ptx --> cuda_backend_test (TAP)  --> $LOG/cuda_backend_test.log
#                         `-> gpu_raw (key=value)      --> $LOG/gpu_raw.log
#   build/bin/ptaskd      --> ptaskd_start.sh (if carried, with build/gpulibs)
#                                                      --> $LOG/ptaskd_start.log
#
# Logs go to $OUT when it is set (the device tool), else build/gpu/logs.
# Each program runs under `timeout`; exit 77 counts as skipped (no GPU).
# Last line: "N passed, M failed, K skipped"; exit 1 on any failure.
set -u
cd "$(dirname "$0")/../.."

B=build/gpu
LOG=${OUT:-$B/logs}
TMO=${GPU_TEST_TIMEOUT:-150}
pass=0 fail=0 skip=0
mkdir -p "$LOG"

for f in "$B/cuda_backend_test" "$B/gpu_raw" "$B/kernels.ptx"; do
	if [ ! -e "$f" ]; then
		echo "run-gpu.sh: $f missing; run 'make gpu-progs' first" >&2
		echo "0 passed, 1 failed, 0 skipped"
		exit 1
	fi
done

{
	echo "date=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
	echo "host=$(hostname) kernel=$(uname -r)"
	command -v nvidia-smi >/dev/null &&
		nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem \
			--format=csv,noheader 2>&1
} | tee "$LOG/machine.log"

# run NAME ARGS...: one program, its output to the screen and its log
run() {
	local name=$1 rc
	shift
	echo "=== $name"
	timeout -k 10 "$TMO" "$@" >"$LOG/$name.log" 2>&1
	rc=$?
	cat "$LOG/$name.log"
	case $rc in
	0) pass=$((pass + 1)); echo "=== $name: passed" ;;
	77) skip=$((skip + 1)); echo "=== $name: skipped (no GPU)" ;;
	124 | 137) fail=$((fail + 1)); echo "=== $name: FAILED (timed out after ${TMO}s)" ;;
	*) fail=$((fail + 1)); echo "=== $name: FAILED (rc=$rc)" ;;
	esac
}

run cuda_backend_test "$B/cuda_backend_test" "$B/kernels.ptx"
run gpu_raw "$B/gpu_raw" "$B/kernels.ptx"
# what init adds to ptaskd's start, where ptaskd was carried and links
if [ -x build/bin/ptaskd ] &&
	! LD_LIBRARY_PATH="$PWD/build/gpulibs" ldd build/bin/ptaskd | grep -q "not found"; then
	run ptaskd_start bash tests/gpu/ptaskd_start.sh
else
	echo "=== ptaskd_start: not run (carry build/bin and build/gpulibs)"
fi

# the numbers, together, last
grep -hE '^[a-z0-9_]+=' "$LOG/gpu_raw.log" "$LOG/cuda_backend_test.log" \
	"$LOG/ptaskd_start.log" 2>/dev/null |
	tee "$LOG/results.txt"
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
