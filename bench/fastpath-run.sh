#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# bench/fastpath-run.sh - the fast-path benchmark of issue 12 (build/bin/
# fastpath: P1, P1b, P1c, P11, idle) against ptaskd --mode user, every
# configuration in one call, for the lent GPU machine; with --backend cpu,
# the no-GPU variant for a development machine (`make bench-fastpath-cpu`).
#
#   this script --starts--> ptaskd --mode user --backend B --isolation I
#        |                        ^  (per configuration, stopped after)
#        +--> fastpath -----------+  ptask side, through libptask
#                  \--> forked children: raw CUDA baselines (libcuda.so.1)
#                       or the UNIX-socket ping-pong (--backend cpu)
#   "mps" (GPU and root only): nvidia-cuda-mps-control -d, fastpath's raw
#   P1c under MPS, `echo quit | nvidia-cuda-mps-control`.
#
# Configurations (FASTPATH_CONFIGS, words ISO:TRANSPORT:PARTS or "mps",
# run in order, the most wanted first in case the budget runs out):
#   cuda default  client:default:all mps shared:default:all
#                 client:socket:p1,p1b,p11 shared:socket:p1,p1b,p11
#   cpu           client:default:p1,p1b,p11,p1c,idle client:socket:p1,p1b,p11
# ISO is ptaskd's --isolation (dropped when ptaskd has no such option);
# TRANSPORT "socket" sets PTASK_TRANSPORT=socket for the client (libptask's
# old path, for comparison; harmless where the library has one path only),
# "default" leaves it unset.
#
# Nothing is built on the GPU machine: build here with
#   make all gpu-progs bench-gpu-progs
# and carry build/bin build/gpu build/lib build/gpulibs (libnl-genl-3.so.200,
# which that machine lacks), e.g.
#   run(command="bash bench/fastpath-run.sh",
#       carry=["build/bin", "build/gpu", "build/lib", "build/gpulibs"])
# At the default counts the whole set takes about 4-6 minutes on an H100
# (P1 today ~40 us a round); FASTPATH_ARGS="--quick" cuts it to ~1.5.
#
# Environment: FASTPATH_ARGS (more fastpath options, every run),
# FASTPATH_CONFIGS (above), FASTPATH_MPS=0 (skip the MPS phase),
# FASTPATH_PTASKD_ARGS (more ptaskd options, each --NAME or --NAME=VALUE,
# e.g. "--lanes=1": through bench/fastpath-ab.sh's NAME=PTASKD:VAR=VAL, one
# binary measured under two settings),
# FASTPATH_BUDGET (seconds for the whole script, default 540: a device call
# may last 600; a run gets what is left, and one that cannot start with
# 30 s left is skipped, saying so), OUT (where the results go; default
# build/bench/fastpath-<backend>).
# Results, rewritten after every run (so a call cut short still brings
# back what ran): $OUT/summary.txt (the machine, every result line, every
# table), $OUT/fastpath-results.txt (result lines only),
# $OUT/fastpath-run.tar.gz (every log), and at the end $OUT/headline.txt
# (the goals' fields, also printed last) and, where matplotlib is,
# $OUT/fastpath.png (bench/fastpath_plot.py: P11 and P1b against their
# baselines and goals).  Exit 0 when every run passed.
set -u

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 1
BACKEND=cuda
while [ $# -gt 0 ]; do
	case "$1" in
	--backend) BACKEND=${2:-}; shift 2 || shift ;;
	-h|--help) sed -n '3,51p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "fastpath-run.sh: unknown argument '$1'" >&2; exit 2 ;;
	esac
done
case "$BACKEND" in
cuda|cpu) ;;
*) echo "fastpath-run.sh: --backend '$BACKEND': cuda or cpu" >&2; exit 2 ;;
esac

# FASTPATH_PTASKD_ARGS: options only, checked before anything is run or
# written (ptaskd checks the rest); split on blanks, never globbed
read -r -a PTASKD_EXTRA <<<"${FASTPATH_PTASKD_ARGS:-}"
for a in "${PTASKD_EXTRA[@]}"; do
	case "$a" in
	--[a-z]*) ;;
	*) echo "fastpath-run.sh: FASTPATH_PTASKD_ARGS: '$a' is not a --NAME or --NAME=VALUE option" >&2
	   exit 2 ;;
	esac
done

PTASKD=build/bin/ptaskd
FASTPATH=build/bin/fastpath
PTX=build/gpu/bench_kernels.ptx
for f in "$PTASKD" "$FASTPATH" "$PTX"; do
	if [ ! -e "$f" ]; then
		echo "fastpath-run.sh: $f missing (make bench-gpu-progs, or make bench-fastpath-progs)" >&2
		exit 1
	fi
done
if [ "$BACKEND" = cpu ] && [ ! -e build/twins/bench.so ]; then
	echo "fastpath-run.sh: build/twins/bench.so missing (make twins)" >&2
	exit 1
fi

# The commit ptaskd was built from, as its build recorded it: the GPU
# machine's copy of .git may be older than the tree it was sent.
built_from() {
	cat "$PTASKD.commit" 2>/dev/null || echo unknown
}

OUTDIR=${OUT:-$ROOT/build/bench/fastpath-$BACKEND}
mkdir -p "$OUTDIR"
W=$(mktemp -d /tmp/fastpath-run.XXXXXX)
S=$OUTDIR/summary.txt
R=$OUTDIR/fastpath-results.txt
: >"$R"
export LD_LIBRARY_PATH="$ROOT/build/gpulibs:$ROOT/build/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
BUDGET=${FASTPATH_BUDGET:-540}
T_START=$(date +%s)
DPID=""
rc=0
say() { echo "$*" | tee -a "$S"; }
# Its entries by name, not ".": a "./" entry carries the mktemp
# directory's mode 0700 to any directory it is extracted into with -C.
pack() { tar -C "$W" -czf "$OUTDIR/fastpath-run.tar.gz" $(cd "$W" && ls -A) 2>/dev/null; }

# budget_left: seconds left of FASTPATH_BUDGET, into TMO
budget_left() {
	TMO=$((BUDGET - ($(date +%s) - T_START) - 10))
	[ "$TMO" -ge 30 ]
}

# shellcheck disable=SC2317 # called by the EXIT trap
cleanup() {
	stop_daemon >/dev/null 2>&1
	pack
	rm -rf "$W"
}
trap cleanup EXIT

if [ "$BACKEND" = cuda ]; then
	CONFIGS=${FASTPATH_CONFIGS:-"client:default:all mps shared:default:all client:socket:p1,p1b,p11 shared:socket:p1,p1b,p11"}
	BASELINE=cuda
else
	CONFIGS=${FASTPATH_CONFIGS:-"client:default:p1,p1b,p11,p1c,idle client:socket:p1,p1b,p11"}
	BASELINE=socket
fi
CPU_ARGS=()
[ "$BACKEND" = cpu ] && CPU_ARGS=(--procs "1,2,4" --seconds 1)

{
	echo "date=$(date -u +%Y-%m-%dT%H:%M:%SZ) host=$(hostname) kernel=$(uname -r) cpus=$(nproc)"
	echo "backend=$BACKEND configs=\"$CONFIGS\" args=\"${FASTPATH_ARGS:-}\" ptaskd_args=\"${FASTPATH_PTASKD_ARGS:-}\""
	grep -m1 'model name' /proc/cpuinfo
	if [ "$BACKEND" = cuda ]; then
		nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem,compute_mode \
			--format=csv,noheader 2>&1
	fi
	echo "git=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown) ptaskd_built_from=$(built_from)"
} | tee "$S"
[ "$BACKEND" = cuda ] && nvidia-smi >"$W/nvidia-smi.txt" 2>&1

HAS_ISO=0
"$PTASKD" --help 2>&1 | grep -q -- '--isolation' && HAS_ISO=1

# start_daemon ISO: ptaskd on $W/sock; sets DPID
start_daemon() {
	local args=(--mode user --backend "$BACKEND" --socket "$W/sock")

	[ "$HAS_ISO" = 1 ] && args+=(--isolation "$1")
	args+=("${PTASKD_EXTRA[@]}")
	[ "$BACKEND" = cpu ] && args+=(--host-kernels "$ROOT/build/twins")
	rm -f "$W/sock"
	echo "== ptaskd ${args[*]}" >>"$W/ptaskd.log"
	"$PTASKD" "${args[@]}" >>"$W/ptaskd.log" 2>&1 &
	DPID=$!
	for _ in $(seq 300); do
		[ -S "$W/sock" ] && return 0
		kill -0 "$DPID" 2>/dev/null || break
		sleep 0.1
	done
	say "ptaskd did not start (isolation $1); its log:"
	tail -n 20 "$W/ptaskd.log" | tee -a "$S"
	DPID=""
	return 1
}

stop_daemon() {
	[ -n "$DPID" ] || return 0
	kill -TERM "$DPID" 2>/dev/null
	for _ in $(seq 100); do
		kill -0 "$DPID" 2>/dev/null || break
		sleep 0.1
	done
	kill -0 "$DPID" 2>/dev/null && kill -KILL "$DPID"
	wait "$DPID"
	say "ptaskd exit status: $?"
	DPID=""
}

# run_config ISO:TRANSPORT:PARTS
run_config() {
	local iso=${1%%:*} rest=${1#*:} transport parts log t0
	transport=${rest%%:*}
	parts=${rest#*:}
	log=$W/fastpath-$iso-$transport.txt
	if ! budget_left; then
		say "== isolation=$iso transport=$transport parts=$parts: SKIPPED (FASTPATH_BUDGET spent)"
		rc=1
		return
	fi
	start_daemon "$iso" || { rc=1; return; }
	say "== isolation=$iso transport=$transport parts=$parts"
	t0=$(date +%s)
	# shellcheck disable=SC2086 # FASTPATH_ARGS is a list of words
	if [ "$transport" = default ]; then
		env -u PTASK_TRANSPORT PTASK_MODE=user PTASK_SOCKET="$W/sock" \
			timeout "$TMO" "$FASTPATH" --ptx "$PTX" --baseline "$BASELINE" \
			--parts "$parts" --ptaskd-pid "$DPID" --tag "iso=$iso" \
			"${CPU_ARGS[@]}" ${FASTPATH_ARGS:-} >"$log" 2>"$log.err"
	else
		PTASK_TRANSPORT=$transport PTASK_MODE=user PTASK_SOCKET="$W/sock" \
			timeout "$TMO" "$FASTPATH" --ptx "$PTX" --baseline "$BASELINE" \
			--parts "$parts" --ptaskd-pid "$DPID" --tag "iso=$iso" \
			"${CPU_ARGS[@]}" ${FASTPATH_ARGS:-} >"$log" 2>"$log.err"
	fi
	local st=$?
	say "fastpath exit status: $st ($(($(date +%s) - t0)) s)"
	[ "$st" = 0 ] || { rc=1; tail -n 5 "$log.err" | tee -a "$S"; }
	grep -E '^(P1|P1B|P1C|P11|IDLE) ' "$log" >>"$R"
	grep -E '^# gpu=' "$log" | head -n 1 | tee -a "$S"
	sed -n '/^# fastpath: mode=/,$p' "$log" >>"$S"
	kill -0 "$DPID" 2>/dev/null || { say "ptaskd died during the run"; rc=1; }
	stop_daemon
	pack
}

# NVIDIA MPS: what an administrator would pick instead of ptaskd for many
# processes; only the raw P1c runs under it, then it is stopped.  Its pipe
# directory is our own, so nothing else (ptaskd included) goes through it.
run_mps() {
	local st

	if [ "$BACKEND" != cuda ] || [ "${FASTPATH_MPS:-1}" != 1 ]; then
		return
	fi
	if [ "$(id -u)" != 0 ] || ! command -v nvidia-cuda-mps-control >/dev/null; then
		say "MPS phase skipped (needs root and nvidia-cuda-mps-control)"
		return
	fi
	if ! budget_left; then
		say "MPS phase SKIPPED (FASTPATH_BUDGET spent)"
		rc=1
		return
	fi
	export CUDA_MPS_PIPE_DIRECTORY=$W/mps-pipe CUDA_MPS_LOG_DIRECTORY=$W/mps-log
	mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
	if nvidia-cuda-mps-control -d; then
		say "== MPS: raw P1c"
		# shellcheck disable=SC2086 # FASTPATH_ARGS is a list of words
		timeout "$TMO" "$FASTPATH" --ptx "$PTX" --baseline cuda --parts p1c \
			--sides raw --mps --tag "iso=none" ${FASTPATH_ARGS:-} \
			>"$W/fastpath-mps.txt" 2>"$W/fastpath-mps.txt.err"
		st=$?
		say "fastpath (MPS) exit status: $st"
		[ "$st" = 0 ] || { rc=1; tail -n 5 "$W/fastpath-mps.txt.err" | tee -a "$S"; }
		grep -E '^P1C ' "$W/fastpath-mps.txt" >>"$R"
		sed -n '/^# fastpath: mode=/,$p' "$W/fastpath-mps.txt" >>"$S"
		echo quit | nvidia-cuda-mps-control
		say "MPS quit: $?"
		for _ in $(seq 100); do
			[ -e "$CUDA_MPS_PIPE_DIRECTORY/control" ] || break
			sleep 0.1
		done
		[ -e "$CUDA_MPS_PIPE_DIRECTORY/control" ] && say "MPS control still running after 10 s"
		pack
	else
		say "nvidia-cuda-mps-control -d failed"
		rc=1
	fi
	unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
}

for c in $CONFIGS; do
	if [ "$c" = mps ]; then
		run_mps
	else
		run_config "$c"
	fi
done

# The headline: the goals' fields of every configuration, one line each.
digest() {
	awk '
	function f(k,   i, n, kv) {
		for (i = 1; i <= NF; i++) {
			n = index($i, "=")
			if (substr($i, 1, n - 1) == k) return k "=" substr($i, n + 1)
		}
		return ""
	}
	function pick(keys,   n, a, i, out, v) {
		n = split(keys, a, " ")
		out = ""
		for (i = 1; i <= n; i++) if ((v = f(a[i])) != "") out = out " " v
		return out
	}
	{ id = f("iso") " " f("transport") }
	/^P1 variant=reuse/ { print "P1 reuse " id pick("ptask_med_us ptask_p99_us launch_med_us ratio_launch_med ratio_launch_p99 ratio_copy_med ratio_pingpong_med") }
	/^P1 variant=fresh/ { print "P1 fresh " id pick("ptask_med_us ratio_launch_med ratio_launch_p99 ratio_pingpong_med") }
	/^P1B variant=(batch|async|threads)/ { print "P1B " f("variant") " " id pick("ptask_per_s ratio_b2b ratio_pipe ratio_pingpong") }
	/^P1C procs=(1|16) / { print "P1C " f("procs") " " id pick("mps ptask_per_s raw_per_s ratio_rate raw_threads_per_s ratio_rate_threads ptask_cpu_us_per_inv raw_cpu_us_per_inv ratio_cpu") }
	/^P11 k=(3|100) bytes=4 / { print "P11 " f("k") " " id pick("ptask_hop_us ptask_per_ptask_us launch_hop_us kgraph_per_node_us pingpong_med_us") }
	/^P11 k=3 bytes=[0-9][0-9]+ / { print "P11 " f("k") " " f("bytes") " " id pick("ptask_hop_us stream_hop_us") }
	/^IDLE/ { print "IDLE " id pick("client_cpu_pct daemon_cpu_pct ok") }
	' "$R"
}

echo
echo "== headline (every line: $R)"
digest | tee "$OUTDIR/headline.txt"
# The plot, where matplotlib is (the GPU machine has it; else draw it
# here: python3 bench/fastpath_plot.py fastpath-results.txt fastpath.png).
if python3 -c 'import matplotlib' 2>/dev/null; then
	python3 "$ROOT/bench/fastpath_plot.py" "$R" "$OUTDIR/fastpath.png" \
		"fastpath: $(date -u '+%Y-%m-%d %H:%M UTC') ptaskd $(built_from)" ||
		echo "fastpath-run.sh: no plot (bench/fastpath_plot.py failed)" >&2
fi
echo "== fastpath-run.sh: exit $rc; results in $OUTDIR"
exit "$rc"
