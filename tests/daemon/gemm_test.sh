#!/usr/bin/env bash
# gemm_test.sh - the gemm example (build/bin/gemm) through ptaskd in user
# mode, without a GPU: the cpu and sim backends run sgemm's host twin
# (examples/gemm/twin.c), so every D is a real product, checked with
# --check against the CPU reference.
#
#   ptaskd --mode user --backend cpu|sim --socket $T/s
#     gemm --ways ptask,ptask_pipe --check --depth 1|3|4 ...
#       ptask       one chain at a time;
#       ptask_pipe  up to --depth chains in flight, every pulled D checked
#                   against the reference scaled for its slot: a wrong,
#                   stale or misordered D exits 1 and fails here.
#   Sizes 1 and 33 are not multiples of the 32-wide tile; --iters 7 is
#   more than every depth, so slots are pushed again while others are in
#   flight.  --timeout turns a pipeline that stalls into an error.
#   Bad --depth values: exit 2 with "bad value".
#
# TAP lines, then the summary line.
set -u
cd "$(dirname "$0")/../.." || exit 1
T=$(mktemp -d)
# shellcheck source=tests/tap.sh
. tests/tap.sh	# (the current directory is the top now)
DPID=
# shellcheck disable=SC2317 # called by the EXIT trap
cleanup() {
	[ -n "$DPID" ] && kill "$DPID" 2>/dev/null
	wait 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
D=build/bin/ptaskd
G=build/bin/gemm

for f in "$D" "$G" build/twins/gemm.so; do
	if [ ! -e "$f" ]; then
		notok "no $f: run 'make ptaskd gemm twins'"
		finish
	fi
done

# bad usage: exit 2 and the value named
for bad in 0 17 -1 3x ""; do
	out=$("$G" --ways ptask_pipe --depth "$bad" 2>&1)
	rc=$?
	if [ "$rc" = 2 ] && grep -qF "gemm: bad value '$bad'" <<<"$out"; then
		ok "--depth '$bad': exit 2, 'bad value'"
	else
		notok "--depth '$bad': exit $rc: $(head -c 300 <<<"$out")"
	fi
done
out=$("$G" --ways ptask,ptask_piped 2>&1)
rc=$?
if [ "$rc" = 2 ] && grep -qF "gemm: bad value 'ptask,ptask_piped'" <<<"$out"; then
	ok "--ways with an unknown way: exit 2"
else
	notok "--ways with an unknown way: exit $rc: $(head -c 300 <<<"$out")"
fi

# start BACKEND: ptaskd on $T/s, its log in $T/BACKEND.log
start() {
	rm -f "$T/s"
	"$D" --mode user --backend "$1" --socket "$T/s" \
		--host-kernels build/twins 2>"$T/$1.log" &
	DPID=$!
	# Up to 30 s: a busy machine starts it later, not never.
	for _ in $(seq 300); do [ -S "$T/s" ] && break; sleep 0.1; done
	[ -S "$T/s" ]
}

stop() {
	kill -TERM "$DPID"
	wait "$DPID"
	local rc=$?
	DPID=
	return "$rc"
}

# run NAME ARGS...: gemm ARGS exits 0 and every row it prints matched
run() {
	local name=$1
	shift
	PTASK_MODE=user PTASK_SOCKET=$T/s timeout 300 "$G" -q --check \
		--timeout 60 --csv "$T/out.csv" "$@" >"$T/out" 2>"$T/err"
	local rc=$?
	if [ "$rc" != 0 ]; then
		notok "$name: exit $rc: $(tail -n 5 "$T/err" "$T/out")"
		return 1
	fi
	# every data row ran and matched (a row says error or no otherwise)
	if awk -F, 'NR > 1 && $7 != "yes" { bad = 1 } END { exit bad }' \
		"$T/out.csv"; then
		ok "$name"
	else
		notok "$name: a row did not match: $(cat "$T/out.csv")"
	fi
}

for be in cpu sim; do
	if ! start "$be"; then
		notok "$be: ptaskd did not start: $(tail -n 3 "$T/$be.log")"
		continue
	fi
	run "$be: ptask and ptask_pipe (depth 3), n = 1, 33, 64: all match" \
		--ways ptask,ptask_pipe --sizes 1,33,64 --iters 7
	rows=$(awk -F, 'NR > 1 { print $2 "," $10 "," $11 }' "$T/out.csv" | sort -u | tr '\n' ' ')
	if [ "$rows" = "ptask,latency,1 ptask_pipe,throughput,3 " ]; then
		ok "$be: CSV says how each way was timed and how many were in flight"
	else
		notok "$be: CSV way,timing,in_flight: '$rows'"
	fi
	for depth in 1 4; do
		run "$be: ptask_pipe depth $depth, n = 33, 7 chains: all match" \
			--ways ptask_pipe --depth "$depth" --sizes 33 --iters 7
	done
	if stop; then
		ok "$be: ptaskd exits 0 on SIGTERM"
	else
		notok "$be: ptaskd exit status on SIGTERM: $?"
	fi
done

finish
