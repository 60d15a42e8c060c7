# SPDX-License-Identifier: GPL-2.0
# tests/tap.sh - TAP results for the shell tests, sourced (not run):
#
#   . "$root/tests/tap.sh"
#   ok NAME | notok NAME | skip NAME REASON
#   check NAME CMD...   one test from CMD's exit status
#   finish              the plan "1..N" (trailing: scripts/tap-count.sh
#                       checks it), then "N passed, M failed, K skipped";
#                       exits 0 when nothing failed
# shellcheck shell=bash

passed=0 failed=0 skipped=0 n=0
ok() { n=$((n + 1)) passed=$((passed + 1)); echo "ok $n - $1"; }
notok() { n=$((n + 1)) failed=$((failed + 1)); echo "not ok $n - $1"; }
skip() { n=$((n + 1)) skipped=$((skipped + 1)); echo "ok $n - $1 # SKIP $2"; }
check() { # NAME CMD...: one test from CMD's exit status
	local name=$1
	shift
	if "$@"; then ok "$name"; else notok "$name"; fi
}
finish() {
	echo "1..$n"
	echo "$passed passed, $failed failed, $skipped skipped"
	[ "$failed" = 0 ]
	exit
}
