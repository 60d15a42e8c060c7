#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# bench/tenants-run.sh - issue 13's first benchmark: one uid and two uids
# with 2, 4 and 8 client processes each doing small invocations (fastpath's
# P1c: push 4 B -> GPU ptask -> pull -> check, the clock around it all),
# aggregate rate per ptaskd setting, against the same number of raw
# processes doing launch + synchronize; everything in one call.
#
# Settings (TENANTS_SETTINGS, run in this order):
#   shared    ptaskd --mode user --isolation shared (one process, one context
#             per GPU, for everyone: the fastest, isolates nothing)
#   uid       ptaskd --mode user --executors uid (an executor process per uid,
#             running as that uid; MPS bypassed)
#   uid-mps   the same with --mps under a control daemon of our own (the
#             executors keep root's uid, to share one MPS server)
#   raw       fastpath's raw P1c: N processes doing launch + synchronize
#   raw-mps   the same under MPS (one uid only: MPS serves one uid at a time)
# Each setting runs --uids 1 and --uids 2 (raw-mps: 1), --procs TENANTS_PROCS
# (2,4,8), TENANTS_SECONDS (2) a window.  Needs root for the second uid
# (65534) and for MPS; with --backend cpu (no GPU) the ptask settings run
# alone, on the cpu backend's twins.
#
# Nothing is built here: build on the development machine with
#   make all gpu-progs bench-gpu-progs
# and carry build/bin build/gpu build/lib build/gpulibs.
# Output under $OUT (default build/bench/tenants-<backend>): tenants.csv
# (setting,uids,procs,per_s,client_cpu_us,daemon_cpu_us), summary.txt (the
# machine, every result line, the table), tenants-logs.tar.gz.  Exit 0 when
# every run passed.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 1
BACKEND=cuda
[ "${1:-}" = "--backend" ] && BACKEND=${2:-cuda}
case "$BACKEND" in cuda|cpu) ;; *) echo "tenants-run.sh: --backend cuda|cpu" >&2; exit 2 ;; esac
PTASKD=build/bin/ptaskd
FASTPATH=build/bin/fastpath
PTX=build/gpu/bench_kernels.ptx
for f in "$PTASKD" "$FASTPATH" "$PTX"; do
	[ -e "$f" ] || { echo "tenants-run.sh: $f missing (make bench-gpu-progs)" >&2; exit 1; }
done
OUTDIR=${OUT:-$ROOT/build/bench/tenants-$BACKEND}
mkdir -p "$OUTDIR"
# 0755: uid 65534 reaches the socket in it
W=$(mktemp -d /tmp/tenants.XXXXXX) && chmod 755 "$W"
S=$OUTDIR/summary.txt
CSV=$OUTDIR/tenants.csv
export LD_LIBRARY_PATH="$ROOT/build/gpulibs:$ROOT/build/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
PROCS=${TENANTS_PROCS:-2,4,8}
SECS=${TENANTS_SECONDS:-2}
if [ "$BACKEND" = cuda ]; then
	SETTINGS=${TENANTS_SETTINGS:-"shared uid uid-mps raw raw-mps"}
	BASE=cuda
else
	SETTINGS=${TENANTS_SETTINGS:-"shared uid"}
	BASE=socket
fi
UIDS="1 2"
[ "$(id -u)" = 0 ] || UIDS=1
rc=0
say() { echo "$*" | tee -a "$S"; }
: >"$S"
echo "setting,uids,procs,per_s,client_cpu_us_per_inv,daemon_cpu_us_per_inv" >"$CSV"
{
	echo "date=$(date -u +%Y-%m-%dT%H:%M:%SZ) host=$(hostname) cpus=$(nproc) backend=$BACKEND"
	grep -m1 'model name' /proc/cpuinfo
	[ "$BACKEND" = cuda ] && nvidia-smi --query-gpu=name,driver_version,compute_mode --format=csv,noheader 2>&1
	echo "ptaskd_built_from=$(cat "$PTASKD.commit" 2>/dev/null || echo unknown) procs=$PROCS seconds=$SECS"
} | tee -a "$S"

# shellcheck source=bench/tenants-lib.sh
. "$ROOT/bench/tenants-lib.sh"
start_daemon() {	# ARGS...
	local twins=()
	[ "$BACKEND" = cpu ] && twins=(--host-kernels "$ROOT/build/twins")
	tl_start_daemon --backend "$BACKEND" "${twins[@]}" "$@"
}

# fp SETTING UIDS SIDES: one fastpath P1c run, its lines into the CSV
fp() {
	local setting=$1 uids=$2 sides=$3 log=$W/fp-$1-$2.txt st mps=()
	[ "$setting" = raw-mps ] && mps=(--mps)
	PTASK_MODE=user PTASK_SOCKET="$W/sock" timeout 300 "$FASTPATH" --ptx "$PTX" \
		--baseline "$BASE" --parts p1c --sides "$sides" --procs "$PROCS" \
		--seconds "$SECS" --uids "$uids" --tag "setting=$setting" \
		${DPID:+--ptaskd-pid "$DPID"} "${mps[@]}" \
		>"$log" 2>"$log.err"
	st=$?
	[ "$st" = 0 ] || { rc=1; say "$setting uids=$uids: fastpath exit $st: $(tail -n 3 "$log.err")"; }
	grep '^P1C ' "$log" | tee -a "$S" | awk -v s="$setting" '
		{ for (i = 1; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
		  r = f["ptask_per_s"] != "" ? f["ptask_per_s"] : f["raw_per_s"]
		  c = f["ptask_per_s"] != "" ? f["ptask_client_cpu_us_per_inv"] : f["raw_cpu_us_per_inv"]
		  printf "%s,%s,%s,%s,%s,%s\n", s, f["uids"], f["procs"], r, c,
			 f["ptask_daemon_cpu_us_per_inv"]; delete f }' >>"$CSV"
}

for setting in $SETTINGS; do
	say "== $setting"
	case "$setting" in
	shared) start_daemon --isolation shared || { rc=1; continue; } ;;
	uid) start_daemon --isolation shared --executors uid || { rc=1; continue; } ;;
	uid-mps) tl_mps_start || { say "no MPS"; rc=1; continue; }
		 start_daemon --isolation shared --executors uid --mps || { rc=1; tl_mps_stop; continue; } ;;
	raw) ;;
	raw-mps) tl_mps_start || { say "no MPS"; rc=1; continue; } ;;
	*) say "unknown setting $setting"; rc=1; continue ;;
	esac
	# one client's round trip too (P1: median and p99), where ptaskd runs
	if [ -n "$DPID" ]; then
		PTASK_MODE=user PTASK_SOCKET="$W/sock" timeout 120 "$FASTPATH" --ptx "$PTX" \
			--baseline none --parts p1 --sides ptask --quick --tag "setting=$setting" \
			>"$W/p1-$setting.txt" 2>"$W/p1-$setting.txt.err" || rc=1
		grep '^P1 ' "$W/p1-$setting.txt" | tee -a "$S" >/dev/null
	fi
	for u in $UIDS; do
		[ "$setting" = raw-mps ] && [ "$u" != 1 ] && continue
		case "$setting" in raw*) fp "$setting" "$u" raw ;; *) fp "$setting" "$u" ptask ;; esac
	done
	if [ -n "$DPID" ]; then
		grep -c "executor for uid .* started" "$W/ptaskd.log" | sed 's/^/executors started so far: /' | tee -a "$S"
		tl_stop_daemon
	fi
	case "$setting" in *mps) tl_mps_stop ;; esac
done

say "== table: aggregate invocations/s (P1c rounds), by setting, uids and processes"
awk -F, -v procs="$PROCS" 'BEGIN { n = split(procs, ps, ",") }
	NR > 1 { k = $1 " uids=" $2; v[k, $3] = $4; keys[k] = 1 }
	END { printf "%-22s", "setting"
	      for (i = 1; i <= n; i++) printf " %10s", "procs=" ps[i]; print ""
	      for (k in keys) { printf "%-22s", k
		for (i = 1; i <= n; i++) printf " %10s", v[k, ps[i]]; print "" } }' "$CSV" | sort | tee -a "$S"
(cd "$W" && tar --exclude=sock -czf "$OUTDIR/tenants-logs.tar.gz" -- *) 2>/dev/null
rm -rf "$W"
exit $rc
