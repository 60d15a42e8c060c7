#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# bench/gpu-run.sh - everything GPU-side of ptaskd in one run, for the lent
# GPU machine (nothing is built there: carry build/ from `make all
# gpu-progs bench-gpu-progs`, and build/gpulibs with libnl-genl-3.so.200,
# which that machine lacks).
#
#   1. tests/gpu/run-gpu.sh        the CUDA backend alone + raw baselines
#      xts_gpu_test                encfs-gpu's XTS kernel (build/gpucarry)
#   2. gemm --check                ptask (ptaskd cuda) vs modular vs handcoded
#                                  against the CPU reference, several sizes
#   3. ptask_gpu                   dispatch and 64 MiB transfer through
#                                  ptaskd, isolation client and shared
#   4. bench/gemm_chain.sh         the gemm chain benchmark, 256..4096
#
# Everything lands in one work directory, packed as $OUT/gpu-run.tar.gz,
# with the key lines in $OUT/summary.txt (the device tool brings back at
# most 8 files).
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
W=$(mktemp -d)
OUTDIR=${OUT:-$ROOT/build/gpu-run}
mkdir -p "$OUTDIR"
export LD_LIBRARY_PATH="$ROOT/build/gpulibs:$ROOT/build/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
S="$W/summary.txt"
say() { echo "$*" | tee -a "$S"; }

say "date=$(date -u +%Y-%m-%dT%H:%M:%SZ) host=$(hostname)"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | tee -a "$S"

# 1. backend test and raw baselines
OUT=$W/backend bash tests/gpu/run-gpu.sh >"$W/run-gpu.out" 2>&1
say "backend: $(tail -n 1 "$W/run-gpu.out")"
grep -hE '^[a-z_]+=' "$W"/backend/*.log 2>/dev/null | tee -a "$S"

# 1b. encfs-gpu's XTS kernel against the IEEE 1619 and CAVP vectors and
# OpenSSL (carried in build/gpucarry by `make encfs-gpu-gputest`)
if [ -x build/gpucarry/xts_gpu_test ]; then
	XTS_CAVP_DIR=build/gpucarry/XTS timeout 200 build/gpucarry/xts_gpu_test \
		build/gpucarry/aes_xts.ptx >"$W/xts_gpu_test.txt" 2>&1
	say "xts_gpu_test exit status: $? ($(grep -c '^ok' "$W/xts_gpu_test.txt") ok, $(grep -c '^not ok' "$W/xts_gpu_test.txt") not ok)"
fi

# start_daemon ARGS...: ptaskd --mode user on $W/sock; sets DPID
start_daemon() {
	rm -f "$W/sock"
	build/bin/ptaskd --mode user --backend cuda --socket "$W/sock" "$@" \
		>>"$W/ptaskd.log" 2>&1 &
	DPID=$!
	for _ in $(seq 100); do [ -S "$W/sock" ] && return 0; sleep 0.1; done
	say "ptaskd did not start ($*)"; return 1
}
stop_daemon() { kill -TERM "$DPID" 2>/dev/null; wait "$DPID"; say "ptaskd exit status: $?"; }
export PTASK_MODE=user PTASK_SOCKET=$W/sock

# 2. correctness of the ptask way against the CPU reference
if start_daemon; then
	timeout 300 build/bin/gemm --check --sizes 1,33,256,1000,2048 --iters 3 \
		--ways ptask,modular,handcoded >"$W/gemm-check.txt" 2>&1
	say "gemm --check exit status: $?"
	tail -n 20 "$W/gemm-check.txt" | tee -a "$S"
	# 3a. dispatch and transfer, per-client contexts
	timeout 200 build/bin/ptask_gpu --ptx build/gpu/bench_kernels.ptx \
		--iters 3000 >"$W/ptask_gpu-client.txt" 2>&1
	say "ptask_gpu (isolation client) exit status: $?"
	sed 's/^/client: /' "$W/ptask_gpu-client.txt" | tee -a "$S"
	build/bin/ptaskctl info >"$W/info-after.txt" 2>&1
	stop_daemon
fi
# 3b. shared contexts
if start_daemon --isolation shared; then
	timeout 200 build/bin/ptask_gpu --ptx build/gpu/bench_kernels.ptx \
		--iters 3000 >"$W/ptask_gpu-shared.txt" 2>&1
	say "ptask_gpu (isolation shared) exit status: $?"
	sed 's/^/shared: /' "$W/ptask_gpu-shared.txt" | tee -a "$S"
	stop_daemon
fi
# 4. the gemm chain benchmark (starts its own daemon)
timeout 330 bash bench/gemm_chain.sh --no-check --out "$W/gemm" >"$W/gemm_chain.out" 2>&1
say "gemm_chain exit status: $?"
tail -n 30 "$W/gemm_chain.out" | tee -a "$S"

cp "$S" "$OUTDIR/summary.txt"
cp "$W/gemm/gemm_chain.png" "$OUTDIR/" 2>/dev/null
cp "$W/gemm/gemm_chain.csv" "$OUTDIR/" 2>/dev/null
# Its entries by name, not ".": a "./" entry carries the mktemp
# directory's mode 0700 to any directory it is extracted into with -C.
tar -C "$W" -czf "$OUTDIR/gpu-run.tar.gz" $(cd "$W" && ls -A)
echo "gpu-run.sh: results in $OUTDIR"
