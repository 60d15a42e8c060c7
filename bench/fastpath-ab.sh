#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# bench/fastpath-ab.sh - two or more ptaskd builds alternated through
# bench/fastpath-run.sh in one lease, so that a change is measured against
# its parent side by side (the spread between leases is larger than most
# changes: Documentation/benchmarks.md, "The fast path").
#
#   bench/fastpath-ab.sh [-n ROUNDS] [-b cuda|cpu] NAME=PTASKD NAME=PTASKD ...
#
# Each round runs every build once, in the order given, each with the
# same FASTPATH_CONFIGS (default "client:default:p1,p1b
# shared:default:p1,p1b") and FASTPATH_ARGS; a build given as
# NAME=PTASKD:VAR=VAL runs with VAR=VAL in ptaskd's environment (e.g. the same binary with
# PTASKD_NO_LONE_GRAPH=1; or with FASTPATH_PTASKD_ARGS=--lanes=1, an
# option of ptaskd's, which bench/fastpath-run.sh passes on).
# build/bin/ptaskd is swapped for each run and
# put back at the end.  Prints one line per run and result (the fields
# the goals name) and, last, each build's medians over the rounds;
# $OUT/ab-results.txt has every result line, tagged build=NAME round=N,
# $OUT/ab-logs.tar.gz every run's logs.
#
# Build here (e.g. a worktree of the parent commit: make build/bin/ptaskd),
# copy the binaries (and each one's .commit beside it, which the build
# writes) into a folder that .git/info/exclude ignores, carry it
# with build/bin build/gpu build/lib build/gpulibs, and run there:
#   bash bench/fastpath-ab.sh -n 3 base=build-ab/ptaskd.base new=build-ab/ptaskd.new
set -u

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 1
ROUNDS=3 BACKEND=cuda
while [ $# -gt 0 ]; do
	case "$1" in
	-n) ROUNDS=${2:-}; shift 2 || shift ;;
	-b) BACKEND=${2:-}; shift 2 || shift ;;
	*) break ;;
	esac
done
case "$ROUNDS" in
''|*[!0-9]*|0) echo "fastpath-ab.sh: -n ROUNDS: a whole number from 1, not '$ROUNDS'" >&2; exit 2 ;;
esac
case "$BACKEND" in
cuda|cpu) ;;
*) echo "fastpath-ab.sh: -b cuda|cpu, not '$BACKEND'" >&2; exit 2 ;;
esac
if [ $# -lt 1 ]; then
	echo "usage: fastpath-ab.sh [-n ROUNDS] NAME=PTASKD[:VAR=VAL] ..." >&2
	exit 2
fi
names=() bins=() envs=()
for a in "$@"; do
	name=${a%%=*} rest=${a#*=}
	bin=${rest%%:*} env=
	[ "$bin" != "$rest" ] && env=${rest#*:}
	case "$name" in
	''|*[!A-Za-z0-9_-]*) echo "fastpath-ab.sh: '$a': NAME=PTASKD, NAME of letters, digits, _ and -" >&2; exit 2 ;;
	esac
	if [ ! -x "$bin" ]; then
		echo "fastpath-ab.sh: '$a': $bin is not an executable" >&2
		exit 2
	fi
	if [ -n "$env" ] && ! [[ "$env" =~ ^[A-Z_][A-Z0-9_]*=[^[:space:]]*$ ]]; then
		echo "fastpath-ab.sh: '$a': the environment must be VAR=VALUE" >&2
		exit 2
	fi
	for o in "${names[@]}"; do
		if [ "$o" = "$name" ]; then
			echo "fastpath-ab.sh: build '$name' named twice" >&2
			exit 2
		fi
	done
	names+=("$name") bins+=("$bin") envs+=("$env")
done

OUTDIR=${OUT:-$ROOT/build/bench/fastpath-ab}
mkdir -p "$OUTDIR" || exit 1
WORK=$(mktemp -d /tmp/fastpath-ab.XXXXXX) || exit 1
cp build/bin/ptaskd "$WORK/ptaskd.orig" || exit 1
cp build/bin/ptaskd.commit "$WORK/ptaskd.orig.commit" 2>/dev/null
restore() {
	cp "$WORK/ptaskd.orig" build/bin/ptaskd
	if [ -e "$WORK/ptaskd.orig.commit" ]; then
		cp "$WORK/ptaskd.orig.commit" build/bin/ptaskd.commit
	else
		rm -f build/bin/ptaskd.commit
	fi
}
trap restore EXIT
: >"$OUTDIR/ab-results.txt"
export FASTPATH_MPS=0
export FASTPATH_CONFIGS=${FASTPATH_CONFIGS:-client:default:p1,p1b shared:default:p1,p1b}
export FASTPATH_BUDGET=${FASTPATH_BUDGET:-120}
status=0
for r in $(seq 1 "$ROUNDS"); do
	for i in "${!names[@]}"; do
		n=${names[$i]}
		cp "${bins[$i]}" build/bin/ptaskd || exit 1
		# what fastpath-run.sh records as the build (scripts/build-commit.sh)
		cat "${bins[$i]}.commit" 2>/dev/null >build/bin/ptaskd.commit ||
			echo "$n" >build/bin/ptaskd.commit
		dir=$WORK/$n-$r
		if [ -n "${envs[$i]}" ]; then
			env "${envs[$i]}" OUT="$dir" bash bench/fastpath-run.sh \
				--backend "$BACKEND" >"$dir.log" 2>&1
		else
			OUT="$dir" bash bench/fastpath-run.sh --backend "$BACKEND" \
				>"$dir.log" 2>&1
		fi || status=1
		echo "== build=$n round=$r: $(tail -1 "$dir.log")"
		sed "s/\$/ build=$n round=$r/" "$dir/fastpath-results.txt" \
			>>"$OUTDIR/ab-results.txt" 2>/dev/null
	done
done
tar czf "$OUTDIR/ab-logs.tar.gz" -C "$WORK" . 2>/dev/null
# every build's median over the rounds, per result and field
awk -v order="${names[*]}" '
function field(k,   i, kv) {
	for (i = 1; i <= NF; i++) {
		split($i, kv, "=")
		if (kv[1] == k)
			return kv[2]
	}
	return ""
}
{
	key = $1 " " field("variant") " iso=" field("iso") " k=" field("k") " bytes=" field("bytes")
	b = field("build")
	n = split("ptask_med_us ptask_p99_us ratio_launch_med ratio_launch_p99 ptask_per_s ratio_b2b ratio_pipe ptask_hop_us ptask_per_ptask_us", want, " ")
	for (j = 1; j <= n; j++) {
		v = field(want[j])
		if (v == "")
			continue
		id = key " " want[j]
		if (!(id in seen)) {
			seen[id] = 1
			ids[++nid] = id
		}
		vals[id, b] = vals[id, b] " " v
	}
}
function median(s,   a, m, i, j, t) {
	m = split(s, a, " ")
	for (i = 2; i <= m; i++)
		for (j = i; j > 1 && a[j - 1] + 0 > a[j] + 0; j--) {
			t = a[j]; a[j] = a[j - 1]; a[j - 1] = t
		}
	return m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
}
END {
	nb = split(order, bs, " ")	# the builds in the order given
	for (i = 1; i <= nid; i++) {
		line = ids[i]
		for (j = 1; j <= nb; j++)
			if ((ids[i], bs[j]) in vals)
				line = line "  " bs[j] "=" median(vals[ids[i], bs[j]]) " [" substr(vals[ids[i], bs[j]], 2) "]"
		print line
	}
}' "$OUTDIR/ab-results.txt" | tee "$OUTDIR/ab-summary.txt"
exit $status
