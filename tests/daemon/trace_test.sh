#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# trace_test.sh - PTASKD_TRACE (daemon/trace.h): ptaskd on the cpu
# backend with the trace on logs, at exit, where a ring client's
# invocations spent their time, point to point along the fast path
# (Documentation/ptaskd.md "Tracing the fast path"); with it off or 0,
# nothing.  The client is the fast-path benchmark (build/bin/fastpath),
# P1 (one invocation at a time) and a three-ptask chain.
#
# TAP lines, then the summary line.
set -u
cd "$(dirname "$0")/../.."
T=$(mktemp -d)
n=0 pass=0 fail=0
ok() { n=$((n + 1)); pass=$((pass + 1)); echo "ok $n - $1"; }
nok() { n=$((n + 1)); fail=$((fail + 1)); echo "not ok $n - $1"; }
DPID=
cleanup() { [ -n "$DPID" ] && kill "$DPID" 2>/dev/null; wait 2>/dev/null; rm -rf "$T"; }
trap cleanup EXIT
D=build/bin/ptaskd
FP=build/bin/fastpath
ROUNDS=200

# run_with TRACE-VALUE NAME: ptaskd with PTASKD_TRACE=value ("unset": not
# set), the client's P1 and P11 k=3, then SIGINT; the log in $T/NAME.log
run_with() {
	local env=(env -u PTASKD_TRACE)
	[ "$1" != unset ] && env=(env "PTASKD_TRACE=$1")
	rm -f "$T/s"
	"${env[@]}" "$D" --mode user --backend cpu --socket "$T/s" \
		--host-kernels "$PWD/build/twins" >"$T/$2.log" 2>&1 &
	DPID=$!
	for _ in $(seq 300); do [ -S "$T/s" ] && break; sleep 0.1; done
	if ! [ -S "$T/s" ]; then
		nok "$2: ptaskd did not start within 30 s: $(tail -n 3 "$T/$2.log")"
		return 1
	fi
	if PTASK_MODE=user PTASK_SOCKET="$T/s" timeout 120 "$FP" \
		--parts p1,p11 --sides ptask --baseline none --chain 3 \
		--big-max-k 0 --rounds "$ROUNDS" --warmup 10 \
		>"$T/$2.fp" 2>&1; then
		ok "$2: the client's invocations ran"
	else
		nok "$2: fastpath failed: $(tail -n 3 "$T/$2.fp")"
	fi
	kill -INT "$DPID"
	wait "$DPID"
	local rc=$?
	DPID=
	[ "$rc" = 0 ] && ok "$2: ptaskd stopped cleanly" ||
		nok "$2: ptaskd exit $rc: $(tail -n 3 "$T/$2.log")"
}

# count FROM TO LOG: the count logged for the pair (0 if none)
count() {
	awk -v f="$1" -v t="$2" '$3 == "trace:" && $4 == f && $5 == "->" &&
		$6 == t { print $7; found = 1 } END { if (!found) print 0 }' "$3"
}

run_with 1 on
L=$T/on.log
grep -q "trace: on (PTASKD_TRACE)" "$L" && ok "on: says the trace is on" ||
	nok "on: no 'trace: on' line"
# Every invocation is launched and fenced once: P1's rounds (two
# variants), P11's 3-deep chain one segment a round (PTASK_TAKE_FUSE:
# one launch -> fenced for its three kernels), the warm-ups.
want=$((2 * ROUNDS + ROUNDS))
c=$(count launched fenced "$L")
[ "$c" -ge "$want" ] && ok "on: launched -> fenced counted $c times (>= $want)" ||
	nok "on: launched -> fenced counted $c times, want >= $want"
c=$(count sqe call "$L")
[ "$c" -ge "$want" ] && ok "on: the ring thread's sqe -> call counted $c times" ||
	nok "on: sqe -> call counted $c times, want >= $want"
for pair in "prepared launched" "fenced queued" "fence-seen finished"; do
	# shellcheck disable=SC2086
	c=$(count $pair "$L")
	[ "$c" -gt 0 ] && ok "on: '${pair/ / -> }' is in the table" ||
		nok "on: '${pair/ / -> }' missing from the table"
done
# Each row: count, then mean <= p99 (the quantiles are bucket edges).
bad=$(awk '$3 == "trace:" && $5 == "->" && NF == 11 &&
	($7 < 1 || $9 > $11 + 0.1 || $10 > $11 || $11 < 0) { print }' "$L")
[ -z "$bad" ] && ok "on: every row's numbers are consistent" ||
	nok "on: inconsistent rows: $bad"

run_with unset off
grep -q "trace:" "$T/off.log" && nok "off: trace lines without PTASKD_TRACE" ||
	ok "off: no trace lines without PTASKD_TRACE"
run_with 0 zero
grep -q "trace:" "$T/zero.log" && nok "zero: trace lines with PTASKD_TRACE=0" ||
	ok "zero: no trace lines with PTASKD_TRACE=0"

echo "1..$n"
echo "$pass passed, $fail failed, 0 skipped"
[ "$fail" = 0 ]
