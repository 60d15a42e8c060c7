#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# bench/gemm_chain.sh - the gemm chain benchmark (PTask, SOSP 2011, 3.2):
# D = (A x B) x C for n = 256 .. 4096, four ways, on a GPU machine.
#
#   this script --starts--> ptaskd --mode user --backend cuda --socket $TMP/s
#        |                        ^
#        +--> build/bin/gemm -----+ (ptask, ptask_pipe ways, PTASK_MODE=user)
#                    \--> libcuda.so.1 directly (modular, handcoded ways)
#
#   ptask       one chain at a time: push A, B, C, pull D (latency: median)
#   ptask_pipe  up to --depth chains in flight, as a streaming client runs
#               them (throughput: wall time of the timed chains / chains)
#   modular     gemm(gemm(A, B), C), T copied out and back in (latency)
#   handcoded   synchronous copies and launches on one stream, T kept on
#               the GPU: what the paper compared against (latency)
#   handstream  (with --handstream) handcoded as an expert streams it:
#               --depth chains on as many CUDA streams (throughput); not
#               the paper's baseline, so the goal's ratios stay against
#               handcoded
#
# Writes into OUT (default: a new mktemp -d directory, printed):
#   gemm_chain.csv   build/bin/gemm --csv: size, way, ms per chain, ...,
#                    and since ptask_pipe, two last columns: timing
#                    (latency or throughput) and in_flight
#   gemm_chain.txt   its table
#   gemm_chain.png   ms per chain against n for the four ways (log-log);
#                    skipped, saying so, without python3 + matplotlib
#   ptaskd.log       the daemon's log
# and prints the geometric means over the sizes of the per-size ratios
# ms(way) / ms(other):
#   gemm_ptask_vs_handcoded=<x>       (1.0 = as fast as keeping T on the
#                                      GPU by hand; above 1 = ptask slower)
#   gemm_ptask_vs_modular=<x>         (below 1 = ptask faster than copying
#                                      T out and back in)
#   gemm_ptask_pipe_vs_handcoded=<x>  (issue 12's P3 figure: at most 0.909
#                                      is 1.10x faster)
#   gemm_ptask_pipe_vs_handcoded_max=<x>  (the worst size's ratio: at most
#                                      1 is no slower at any size)
# and with --handstream also gemm_handstream_vs_handcoded=<x> and
# gemm_ptask_pipe_vs_handstream=<x>.
#
# Usage: bench/gemm_chain.sh [--out DIR] [--sizes 256,512,...] [--iters N]
#                            [--depth N] [--handstream]
#                            [--backend cuda|sim|cpu] [--no-check]
#        bench/gemm_chain.sh --plot DIR/gemm_chain.csv
#   (--plot: only the ratios and the plot, from an earlier run's CSV: for a
#   GPU machine without matplotlib, plot afterwards where it is installed)
# --depth: ptask_pipe's (and handstream's) chains in flight (gemm's
# default, 3, without it).
# Environment: GEMM, PTASKD (the programs; default build/bin/...),
# GEMM_ARGS (more gemm options, e.g. --pageable or --ways).
# Exit: gemm's status (0 all ran and matched), or 1 if the daemon failed.

set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
GEMM=${GEMM:-$ROOT/build/bin/gemm}
PTASKD=${PTASKD:-$ROOT/build/bin/ptaskd}
OUT=""
SIZES=256,512,1024,2048,4096
ITERS=10
BACKEND=cuda
CHECK=--check
DEPTH=()
WAYS=()
PLOT_CSV=""

while [ $# -gt 0 ]; do
	case "$1" in
	--out) OUT=$2; shift 2 ;;
	--sizes) SIZES=$2; shift 2 ;;
	--iters) ITERS=$2; shift 2 ;;
	--depth) DEPTH=(--depth "$2"); shift 2 ;;
	--handstream) WAYS=(--ways "ptask,ptask_pipe,modular,handcoded,handstream"); shift ;;
	--backend) BACKEND=$2; shift 2 ;;
	--no-check) CHECK=""; shift ;;
	--plot) PLOT_CSV=$2; shift 2 ;;
	-h|--help) sed -n '3,54p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "gemm_chain.sh: unknown argument '$1'" >&2; exit 2 ;;
	esac
done

# ratios CSV WAY OTHER MODE: ms(WAY) / ms(OTHER) per size, over the sizes
# both ran: MODE geomean gives their geometric mean, max the largest.
# CSV: size,way,ms_median,ms_min,gflops,ratio_vs_handcoded,match,...
ratios() {
	awk -F, -v way="$2" -v other="$3" -v mode="$4" '
		NR > 1 && $3 != "" { ms[$1 "," $2] = $3; sizes[$1] = 1 }
		END {
			n = 0; s = 0; worst = 0
			for (sz in sizes) {
				p = ms[sz "," way]; o = ms[sz "," other]
				if (p > 0 && o > 0) {
					s += log(p / o); n++
					if (p / o > worst) worst = p / o
				}
			}
			if (!n) print "nan"
			else if (mode == "max") printf "%.4f\n", worst
			else printf "%.4f\n", exp(s / n)
		}' "$1"
}

# report CSV: print the ratios; plot ms per chain against n next to the
# CSV (a Python with matplotlib: the one on PATH, else Debian's).
report() {
	local csv=$1 png=${1%.csv}.png py=""

	echo "gemm_ptask_vs_handcoded=$(ratios "$csv" ptask handcoded geomean)"
	echo "gemm_ptask_vs_modular=$(ratios "$csv" ptask modular geomean)"
	echo "gemm_ptask_pipe_vs_handcoded=$(ratios "$csv" ptask_pipe handcoded geomean)"
	echo "gemm_ptask_pipe_vs_handcoded_max=$(ratios "$csv" ptask_pipe handcoded max)"
	if grep -q '^[0-9]*,handstream,' "$csv"; then
		echo "gemm_handstream_vs_handcoded=$(ratios "$csv" handstream handcoded geomean)"
		echo "gemm_ptask_pipe_vs_handstream=$(ratios "$csv" ptask_pipe handstream geomean)"
	fi
	for cand in python3 /usr/bin/python3; do
		if "$cand" -c 'import matplotlib' 2>/dev/null; then
			py=$cand
			break
		fi
	done
	if [ -z "$py" ]; then
		echo "gemm_chain.sh: no plot (no python3 with matplotlib; apt-get install python3-matplotlib, then $0 --plot $csv)"
		return 0
	fi
	"$py" - "$csv" "$png" <<'PY'
import csv, sys
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["ms_median"]]
fig, ax = plt.subplots(figsize=(6.4, 4.4))
for way, style, color in (("ptask", "o-", "C0"),
                          ("ptask_pipe", "D-", "C3"),
                          ("modular", "s--", "C1"),
                          ("handcoded", "^:", "C2"),
                          ("handstream", "v-.", "C4")):
    pts = sorted((int(r["size"]), float(r["ms_median"]))
                 for r in rows if r["way"] == way)
    if pts:
        ax.plot([p[0] for p in pts], [p[1] for p in pts], style,
                color=color, label=way)
ax.set_xscale("log", base=2)
sizes = sorted({int(r["size"]) for r in rows})
ax.set_xticks(sizes)
ax.set_xticklabels([str(n) for n in sizes])
ax.minorticks_off()
ax.set_yscale("log")
ax.set_xlabel("n (n x n float matrices)")
ax.set_ylabel("ms per chain D = (A x B) x C")
ax.set_title("gemm chain (ptask_pipe, handstream: throughput; "
             "others: median latency)",
             fontsize="medium")
ax.grid(True, which="both", alpha=0.3)
ax.legend()
fig.tight_layout()
fig.savefig(sys.argv[2], dpi=120)
PY
	echo "gemm_chain.sh: plot $png"
}

if [ -n "$PLOT_CSV" ]; then
	[ -f "$PLOT_CSV" ] || { echo "gemm_chain.sh: no $PLOT_CSV" >&2; exit 1; }
	report "$PLOT_CSV"
	exit 0
fi

for prog in "$GEMM" "$PTASKD"; do
	if [ ! -x "$prog" ]; then
		echo "gemm_chain.sh: no $prog (make gemm ptaskd)" >&2
		exit 1
	fi
done
[ -n "$OUT" ] || OUT=$(mktemp -d /tmp/gemm_chain.XXXXXX)
mkdir -p "$OUT"
TMP=$(mktemp -d)
SOCK=$TMP/ptaskd.sock
PD_PID=""

# shellcheck disable=SC2317 # called by the EXIT trap
cleanup() {
	if [ -n "$PD_PID" ] && kill -0 "$PD_PID" 2>/dev/null; then
		# SIGTERM: ptaskd finishes what it took and exits
		kill -TERM "$PD_PID"
		for _ in $(seq 50); do
			kill -0 "$PD_PID" 2>/dev/null || break
			sleep 0.1
		done
		kill -0 "$PD_PID" 2>/dev/null && kill -KILL "$PD_PID"
		wait "$PD_PID" 2>/dev/null || true
	fi
	rm -rf "$TMP"
}
trap cleanup EXIT

echo "gemm_chain.sh: results in $OUT"
echo "gemm_chain.sh: starting ptaskd --mode user --backend $BACKEND"
"$PTASKD" --mode user --backend "$BACKEND" --socket "$SOCK" \
	--host-kernels "$ROOT/build/twins" >"$OUT/ptaskd.log" 2>&1 &
PD_PID=$!
for _ in $(seq 300); do
	[ -S "$SOCK" ] && break
	if ! kill -0 "$PD_PID" 2>/dev/null; then
		echo "gemm_chain.sh: ptaskd exited; its log:" >&2
		cat "$OUT/ptaskd.log" >&2
		PD_PID=""
		exit 1
	fi
	sleep 0.1
done
if [ ! -S "$SOCK" ]; then
	echo "gemm_chain.sh: ptaskd did not create $SOCK in 30 s" >&2
	exit 1
fi

rc=0
# shellcheck disable=SC2086 # CHECK and GEMM_ARGS are lists of words
PTASK_MODE=user PTASK_SOCKET=$SOCK "$GEMM" --sizes "$SIZES" \
	--iters "$ITERS" ${DEPTH[@]+"${DEPTH[@]}"} ${WAYS[@]+"${WAYS[@]}"} \
	$CHECK --csv "$OUT/gemm_chain.csv" ${GEMM_ARGS:-} |
	tee "$OUT/gemm_chain.txt" || rc=$?
if ! kill -0 "$PD_PID" 2>/dev/null; then
	echo "gemm_chain.sh: ptaskd died during the run; see $OUT/ptaskd.log" >&2
	rc=1
fi

report "$OUT/gemm_chain.csv"
exit "$rc"
