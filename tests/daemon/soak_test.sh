#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# soak_test.sh - a short run of the soak benchmark (bench/soak.py) in
# `make check-daemon`: six clients with random graph shapes for 12 s
# against a user-mode ptaskd on each backend, every result checked
# against its CPU reference, no stall, nothing left behind; and its
# options refused clearly.  The benchmark itself (64 clients, 10 min) is
# `make bench-soak`.  Its first short runs found a real bug (a join
# taken ahead placed before one of its producers: wrong results).
set -uo pipefail
cd "$(dirname "$0")/../.."

out=build/tests/daemon/soak
n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"; }

echo "TAP version 13"
echo "1..7"
for backend in cpu sim; do
	rm -rf "$out-$backend"
	if python3 bench/soak.py --clients 6 --seconds 12 --interval 4 \
		--backend "$backend" --out "$out-$backend" >"$out-$backend.log" 2>&1 &&
		tail -1 "$out-$backend.log" | grep -q "^soak: PASS "; then
		ok "soak on $backend: $(tail -1 "$out-$backend.log" | cut -c7-)"
	else
		sed 's/^/# /' "$out-$backend.log"
		tail -20 "$out-$backend"/clients.log 2>/dev/null | sed 's/^/# client: /'
		not_ok "soak on $backend"
	fi
done

# Bad options: exit status 2 and a message naming the option.
msg=$(python3 bench/soak.py --clients 0 2>&1); rc=$?
if [ "$rc" = 2 ] && grep -q -- "--clients" <<<"$msg"; then
	ok "--clients 0 is refused: $(tail -1 <<<"$msg")"
else
	not_ok "--clients 0: status $rc, '$msg'"
fi
msg=$(python3 bench/soak.py --seconds 5 --interval 10 2>&1); rc=$?
if [ "$rc" = 2 ] && grep -q -- "--interval" <<<"$msg"; then
	ok "an interval longer than the run is refused: $(tail -1 <<<"$msg")"
else
	not_ok "--interval 10 --seconds 5: status $rc, '$msg'"
fi
# The benchmark programs' own bad options: exit status 2 and the usage.
for args in "soak_client --slot 0" "soak_client --slots x --abandon-permille 1001" \
	"shared_cost --floats 0"; do
	# shellcheck disable=SC2086 # the words are the arguments
	msg=$(build/bin/$args 2>&1); rc=$?
	if [ "$rc" = 2 ] && grep -q "^usage:" <<<"$msg"; then
		ok "$args is refused with the usage"
	else
		not_ok "$args: status $rc, '$msg'"
	fi
done
[ "$failed" = 0 ]
