#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# bench/tunnel-run.sh - encfs-gpu's gpu backend under N concurrent 4 KiB
# requesters: a ptask tunnel (one kernel launch for many requests,
# EG_GPU_TUNNEL=always) against one invocation per request (the lanes,
# EG_GPU_TUNNEL=never), side by side in one run (make bench-tunnel).
#
# Starts its own ptaskd --mode user on a private socket: --backend
# $TUNNEL_BACKEND (cpu by default: the kernel's host twin; cuda on a GPU
# machine), and for each thread count and mode runs build/encfs-gpu/
# tunnel_bench, then prints its line with the invocations ptaskd ran per
# request (ptaskctl) and ptaskd's CPU time per request.
#
#   TUNNEL_BACKEND   cpu (default) or cuda
#   TUNNEL_THREADS   thread counts (default "1 4 16 64")
#   TUNNEL_REQUESTS  requests per thread (default 2000; 500 at 64 threads)
#   TUNNEL_UNITS     4 KiB units per request (default 1)
#   TUNNEL_BYTES, TUNNEL_US   the tunnel's threshold and timeout (default:
#                    ptaskd's, EG_TUNNEL_BYTES / EG_TUNNEL_US)
#   TUNNEL_BENCH_BIN, TUNNEL_PTASKD, TUNNEL_PTASKCTL   the programs (default:
#                    this build's; bench/tunnel-gpu-run.sh names the carry's)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
BENCH=${TUNNEL_BENCH_BIN:-build/encfs-gpu/tunnel_bench}
PTASKD=${TUNNEL_PTASKD:-build/bin/ptaskd}
PTASKCTL=${TUNNEL_PTASKCTL:-build/bin/ptaskctl}
TWINS=${TUNNEL_TWINS:-$root/build/twins}
BACKEND=${TUNNEL_BACKEND:-cpu}
THREADS=${TUNNEL_THREADS:-"1 4 16 64"}
UNITS=${TUNNEL_UNITS:-1}
W=$(mktemp -d)
S=$W/ptaskd.sock
PD=

cleanup() {
	if [ -n "$PD" ]; then
		kill "$PD" 2>/dev/null || true
		wait "$PD" 2>/dev/null || true
	fi
	rm -rf "$W"
}
trap cleanup EXIT

for f in "$BENCH" "$PTASKD" "$PTASKCTL"; do
	[ -x "$f" ] || { echo "tunnel-run: $f missing (make bench-tunnel builds it)" >&2; exit 1; }
done
# host twins only where ptaskd runs them (cpu, sim)
twin_args=()
[ "$BACKEND" = cuda ] || twin_args=(--host-kernels "$TWINS")
"$PTASKD" --mode user --backend "$BACKEND" --socket "$S" "${twin_args[@]}" \
	2>"$W/ptaskd.log" &
PD=$!
for _ in $(seq 600); do
	[ -S "$S" ] && break
	kill -0 "$PD" 2>/dev/null || { cat "$W/ptaskd.log" >&2; exit 1; }
	sleep 0.05
done
export PTASK_MODE=user PTASK_SOCKET=$S
[ -n "${TUNNEL_BYTES:-}" ] && export EG_TUNNEL_BYTES=$TUNNEL_BYTES
[ -n "${TUNNEL_US:-}" ] && export EG_TUNNEL_US=$TUNNEL_US

invocations() {
	"$PTASKCTL" --json info | grep -oE '"engine":\{"invocations":[0-9]+' | grep -oE '[0-9]+$'
}
# ptaskd's CPU time so far, in clock ticks
pd_ticks() {
	awk '{ print $14 + $15 }' "/proc/$PD/stat"
}
hz=$(getconf CLK_TCK)

echo "# tunnel-run: $(date -u +%FT%TZ), ptaskd --backend $BACKEND, $(nproc) CPUs, $(uname -r)"
echo "# $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
[ "$BACKEND" = cuda ] && command -v nvidia-smi >/dev/null &&
	echo "# $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)"
for t in $THREADS; do
	n=${TUNNEL_REQUESTS:-$([ "$t" -ge 64 ] && echo 500 || echo 2000)}
	for mode in lanes tunnel; do
		i0=$(invocations)
		c0=$(pd_ticks)
		line=$("$BENCH" -m "$mode" -t "$t" -n "$n" -u "$UNITS")
		i1=$(invocations)
		c1=$(pd_ticks)
		reqs=$((t * n))
		# the backend's self test at start: 4 requests each way per path
		awk -v l="$line" -v i=$((i1 - i0)) -v r=$reqs -v c=$((c1 - c0)) -v hz="$hz" \
			'BEGIN { printf "%s invocations_per_req=%.3f ptaskd_cpu_us_per_req=%.1f\n",
				 l, i / r, c / hz / r * 1e6 }'
	done
done
