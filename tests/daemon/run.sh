#!/usr/bin/env bash
# run.sh - ptaskd's user-mode tests (`make check-daemon`).
#
# Runs every program build/tests/daemon/* (the end-to-end tests start
# their own ptaskd on a private socket) and every tests/daemon/*_test.sh,
# each under a timeout, counts their "ok"/"not ok" lines and ends with
# "N passed, M failed, K skipped".  A program that dies or times out
# counts one failure more.  T=NAME[,NAME...] (make check-daemon T=...)
# runs only those (ptaskd_e2e, engine_test, twins_test, ...).
set -uo pipefail
cd "$(dirname "$0")/../.."

# Only a hang should meet it: ptaskctl_test's 77 checks, each a few
# processes, took over 300 s at nice 19 on two busy cores.
timeout_s=${DAEMON_TEST_TIMEOUT:-900}
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

selected() { # name: is it in $T (or is T empty)?
	[ -z "${T:-}" ] && return 0
	case ",$T," in *",$1,"*) return 0 ;; esac
	return 1
}

ran=0
for t in build/tests/daemon/*; do
	[ -f "$t" ] && [ -x "$t" ] || continue
	selected "$(basename "$t")" || continue
	run_one "$(basename "$t")" "$t"
	ran=$((ran + 1))
done
for t in tests/daemon/*_test.sh; do
	[ -f "$t" ] || continue
	selected "$(basename "$t" .sh)" || continue
	run_one "$(basename "$t" .sh)" bash "$t"
	ran=$((ran + 1))
done
if [ -n "${T:-}" ] && [ "$ran" = 0 ]; then
	echo "daemon: no test named '$T'"
	failed=$((failed + 1))
fi
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ]
