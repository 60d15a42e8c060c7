#!/usr/bin/env bash
# run.sh - ptaskd's user-mode tests (`make check-daemon`).
#
# Runs every program build/tests/daemon/* (the end-to-end tests start
# their own ptaskd on a private socket) and every tests/daemon/*_test.sh,
# each under a timeout, counts their "ok"/"not ok" lines and ends with
# "N passed, M failed, K skipped".  A program that dies or times out
# counts one failure more.
set -uo pipefail
cd "$(dirname "$0")/../.."

timeout_s=${DAEMON_TEST_TIMEOUT:-300}
# Every ptaskd these tests start runs the build's twin libraries.
export PTASKD_HOST_KERNELS=$PWD/build/twins
passed=0 failed=0 skipped=0
mkdir -p build/tests/daemon/logs

run_one() { # name command...
	local name=$1; shift
	local log=build/tests/daemon/logs/$name.log
	echo "daemon: running $name"
	timeout -k 10 "$timeout_s" "$@" 2>&1 | tee "$log"
	local rc=${PIPESTATUS[0]}
	local p f s reason
	read -r p f s reason < <(scripts/tap-count.sh "$rc" <"$log")
	[ "$rc" = 124 ] && reason="timed out after ${timeout_s}s"
	echo "daemon: $name: $p passed, $f failed, $s skipped${reason:+ ($reason)}"
	passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
}

for t in build/tests/daemon/*; do
	[ -f "$t" ] && [ -x "$t" ] || continue
	run_one "$(basename "$t")" "$t"
done
for t in tests/daemon/*_test.sh; do
	[ -f "$t" ] || continue
	run_one "$(basename "$t" .sh)" bash "$t"
done
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ]
