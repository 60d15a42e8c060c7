#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tests/gpu/ptaskd_fatal.sh - a client's faulting kernel (a sticky CUDA
# error, which poisons every context of the process) makes ptaskd drain
# and exit with status 70, so systemd's Restart=on-failure gives everyone
# a working daemon again; a fresh ptaskd then serves a correct client.
# GPU machine only; carry build/bin, build/gpu, build/gpulibs.
# Last line "N passed, M failed, K skipped".
set -u
cd "$(dirname "$0")/../.."
export LD_LIBRARY_PATH="$PWD/build/gpulibs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
W=$(mktemp -d)
export PTASK_MODE=user PTASK_SOCKET=$W/sock
pass=0 fail=0
ok() { echo "ok - $*"; pass=$((pass + 1)); }
nok() { echo "not ok - $*"; fail=$((fail + 1)); }

start() {
	rm -f "$W/sock"
	build/bin/ptaskd --mode user --backend cuda --socket "$W/sock" >>"$W/ptaskd.log" 2>&1 &
	DPID=$!
	for _ in $(seq 100); do [ -S "$W/sock" ] && return 0; sleep 0.1; done
	return 1
}

if ! start; then
	nok "ptaskd --backend cuda starts"; cat "$W/ptaskd.log"
	echo "$pass passed, $fail failed, 0 skipped"; exit 1
fi
timeout 60 build/gpu/fault_client build/gpu/bench_kernels.ptx
rc=$?
[ $rc = 0 ] && ok "the faulting client's pull fails" || nok "the faulting client's pull fails (exit $rc)"
for _ in $(seq 150); do kill -0 "$DPID" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$DPID" 2>/dev/null; then
	nok "ptaskd exits within 15 s of the fault"; kill -KILL "$DPID"
	wait "$DPID"
else
	wait "$DPID"; st=$?
	[ $st = 70 ] && ok "ptaskd exits with status 70" || nok "ptaskd exits with status 70 (got $st)"
fi
grep -q "fatal: cuda" "$W/ptaskd.log" && ok "the log says why" || nok "the log says why"
if start; then
	timeout 120 build/bin/ptask_gpu --ptx build/gpu/bench_kernels.ptx --iters 50 \
		--transfer-mib 1 >"$W/after.txt" 2>&1
	rc=$?
	[ $rc = 0 ] && ok "a fresh ptaskd serves a correct client" ||
		nok "a fresh ptaskd serves a correct client (exit $rc: $(tail -1 "$W/after.txt"))"
	kill -TERM "$DPID"; wait "$DPID"
else
	nok "a fresh ptaskd starts"
fi
sed 's/^/# /' "$W/ptaskd.log" | tail -20
echo "$pass passed, $fail failed, 0 skipped"
[ $fail = 0 ]
