#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# bench/faults-run.sh - issue 13's fault-containment benchmark: uid B
# (65534) runs a steady load of small invocations (fastpath P1c, B_PROCS
# processes, FAULTS_SECONDS a window, then P1's FAULTS_ROUNDS round trips
# for the p99) while uid A (root) runs a client
# whose kernel faults (build/gpu/fault_client: an illegal address) once a
# second; B's rate and round-trip p99 against B alone, same daemon
# setting, alternated.  Settings (FAULTS_SETTINGS):
#   uid      ptaskd --mode user --executors uid: A's executor dies with its
#            fault and is restarted (back-off); B's executor is another
#            process, untouched.  Goal: B within 10% of B alone.
#   uid-mps  the same with --mps under an MPS control daemon of our own:
#            A's fault resets B's executor too; B's lost invocations are
#            queued again (PTASK_EXEC_COMPLETE_REQUEUE), B loses none.
#   shared   one ptaskd for everyone (for contrast: A's fault stops it,
#            and B's rounds fail until it is restarted; run last).
# Needs root and the GPU machine; builds nothing (make all gpu-progs
# bench-gpu-progs here, carry build/bin build/gpu build/lib build/gpulibs).
# Output under $OUT (default build/bench/faults): faults.csv (setting,
# phase, per_s, p99_us, failed rounds, A's faults), summary.txt, logs.
# Exit 0 when every run went through (the goals are read off the table).
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 1
PTASKD=build/bin/ptaskd FASTPATH=build/bin/fastpath FAULT=build/gpu/fault_client
PTX=build/gpu/bench_kernels.ptx
for f in "$PTASKD" "$FASTPATH" "$FAULT" "$PTX"; do
	[ -e "$f" ] || { echo "faults-run.sh: $f missing (make gpu-progs bench-gpu-progs)" >&2; exit 1; }
done
[ "$(id -u)" = 0 ] || { echo "faults-run.sh: needs root (uid B is 65534)" >&2; exit 1; }
OUTDIR=${OUT:-$ROOT/build/bench/faults}
mkdir -p "$OUTDIR"
W=$(mktemp -d /tmp/faults.XXXXXX) && chmod 755 "$W"
S=$OUTDIR/summary.txt CSV=$OUTDIR/faults.csv
export LD_LIBRARY_PATH="$ROOT/build/gpulibs:$ROOT/build/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# uid B runs fastpath from a copy it can reach (the checkout may be 0700)
mkdir -p "$W/b"
cp "$FASTPATH" "$PTX" "$W/b/" && cp -a build/lib/libptask.so* build/gpulibs/. "$W/b/" &&
	chmod -R a+rX "$W/b" || { echo "faults-run.sh: cannot copy B's programs" >&2; exit 1; }
BFAST=$W/b/fastpath BPTX=$W/b/$(basename "$PTX")
SECS=${FAULTS_SECONDS:-10}
BPROCS=${B_PROCS:-2}
SETTINGS=${FAULTS_SETTINGS:-"uid uid-mps shared"}
rc=0
say() { echo "$*" | tee -a "$S"; }
: >"$S"
echo "setting,phase,per_s,p99_us,b_failed,a_faults" >"$CSV"
{
	echo "date=$(date -u +%Y-%m-%dT%H:%M:%SZ) host=$(hostname) cpus=$(nproc)"
	nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1
	echo "ptaskd_built_from=$(cat "$PTASKD.commit" 2>/dev/null || echo unknown) seconds=$SECS b_procs=$BPROCS"
} | tee -a "$S"

# shellcheck source=bench/tenants-lib.sh
. "$ROOT/bench/tenants-lib.sh"
start_daemon() {	# ARGS...
	PTASKD_SUP_BACKOFF_MS=${PTASKD_SUP_BACKOFF_MS:-1000} \
		tl_start_daemon --backend cuda "$@"
}

# B's load, every process uid 65534's
b_load() {	# LOG: P1c's rate, then P1's round trips (median, p99)
	setpriv --reuid 65534 --regid 65534 --clear-groups env PTASK_MODE=user \
		PTASK_SOCKET="$W/sock" LD_LIBRARY_PATH="$W/b" \
		timeout $((SECS + 60)) "$BFAST" --ptx "$BPTX" \
		--baseline none --parts p1c --sides ptask --procs "$BPROCS" \
		--seconds "$SECS" >"$1" 2>"$1.err" &&
	setpriv --reuid 65534 --regid 65534 --clear-groups env PTASK_MODE=user \
		PTASK_SOCKET="$W/sock" LD_LIBRARY_PATH="$W/b" \
		timeout 120 "$BFAST" --ptx "$BPTX" \
		--baseline none --parts p1 --sides ptask \
		--rounds "${FAULTS_ROUNDS:-20000}" >>"$1" 2>>"$1.err"
}
# A: a faulting client once a second until told to stop
a_faults() {	# COUNTFILE STOPFILE
	local n=0
	while [ ! -e "$2" ]; do
		PTASK_MODE=user PTASK_SOCKET="$W/sock" timeout 30 "$FAULT" "$PTX" \
			>>"$W/fault.log" 2>&1
		n=$((n + 1)); echo "$n" >"$1"
		sleep 1
	done
}
row() {	# SETTING PHASE LOG FAULTS
	local rate p99 failed
	rate=$(grep -o 'ptask_per_s=[0-9.]*' "$3" | head -1 | cut -d= -f2)
	p99=$(grep '^P1 variant=reuse' "$3" | grep -o 'ptask_p99_us=[0-9.]*' | cut -d= -f2)
	failed=$(grep -c 'failed\|Input/output' "$3.err" 2>/dev/null)
	echo "$1,$2,${rate:-},${p99:-},${failed:-0},$4" | tee -a "$CSV" >>"$S"
}

for setting in $SETTINGS; do
	say "== $setting"
	args=(--isolation shared)
	case "$setting" in
	uid) args+=(--executors uid) ;;
	uid-mps) tl_mps_start || { say "no MPS"; rc=1; continue; }
		 args+=(--executors uid --mps) ;;
	shared) ;;
	esac
	start_daemon "${args[@]}" || { rc=1; continue; }
	for phase in alone faulted alone2; do
		rm -f "$W/stop" "$W/count"
		[ "$phase" = faulted ] && { a_faults "$W/count" "$W/stop" & APID=$!; }
		b_load "$W/b-$setting-$phase.txt" || rc=1
		if [ "$phase" = faulted ]; then
			touch "$W/stop"; wait "$APID"
		fi
		row "$setting" "$phase" "$W/b-$setting-$phase.txt" "$(cat "$W/count" 2>/dev/null || echo 0)"
	done
	grep -c "requeue\|lost to a reset" "$W/ptaskd.log" | sed 's/^/re-runs logged so far: /' | tee -a "$S"
	tl_stop_daemon
	[ "$setting" = uid-mps ] && tl_mps_stop
done
say "== B's rate and p99: alone, with A faulting once a second, alone again"
column -s, -t "$CSV" | tee -a "$S"
(cd "$W" && tar --exclude=sock -czf "$OUTDIR/faults-logs.tar.gz" -- *) 2>/dev/null
rm -rf "$W"
exit $rc
