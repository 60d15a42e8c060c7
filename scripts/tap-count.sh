#!/usr/bin/env bash
# tap-count.sh - count the results of ONE test program from its output.
#
# Usage: tap-count.sh EXIT_STATUS < program-output
# Prints one line: "PASS FAIL SKIP REASON..." (REASON may be empty); it
# is what the runners (scripts/run-unit.sh, tests/vm/run.sh) sum.
#
# Rules (the program speaks KTAP/TAP as kselftest_harness.h prints it):
#   - "# Totals: pass:P fail:F xfail:XF xpass:XP skip:S error:E" lines, when
#     present, are authoritative (summed if several): passed P+XF, failed
#     F+XP+E, skipped S.
#   - otherwise unindented "ok N ...", "ok N ... # SKIP ...", "not ok N ..."
#     lines are counted (nested, indented or "# "-prefixed lines are not),
#     and the output must carry a plan "1..N" matching the count, or it
#     counts one extra failure (the program died half-way).
#   - an exit status other than 0 or 4 (KSFT_SKIP) with no failure counted
#     is one extra failure (a crash, a timeout, an assert after the totals).
#   - exit status 4 with nothing counted is one skip.
set -euo pipefail

rc=${1:?usage: tap-count.sh EXIT_STATUS < output}

tr -d '\r' | awk -v rc="$rc" '
function num(s, key,   m) {
	if (match(s, key ":[0-9]+")) {
		m = substr(s, RSTART + length(key) + 1, RLENGTH - length(key) - 1)
		return m + 0
	}
	return 0
}
/^# Totals: / {
	totals = 1
	tp += num($0, "pass") + num($0, "xfail")
	tf += num($0, "fail") + num($0, "xpass") + num($0, "error")
	ts += num($0, "skip")
	next
}
/^1\.\.[0-9]+/ { plan = substr($1, 4) + 0; haveplan = 1; next }
/^not ok [0-9]+/ { lf++; next }
/^ok [0-9]+/ {
	if (toupper($0) ~ /# *SKIP/) ls++
	else lp++
	next
}
END {
	reason = ""
	if (totals) {
		p = tp; f = tf; s = ts
	} else {
		p = lp; f = lf; s = ls
		if (rc == 4 && p + f + s == 0) {
			s = 1; reason = "skipped (exit status 4)"
		} else if (rc == 0 || rc == 4) {
			if (!haveplan) { f++; reason = "no \"# Totals\" line and no TAP plan" }
			else if (plan != p + f + s) {
				reason = sprintf("plan 1..%d but %d results", plan, p + f + s)
				f++
			}
		}
	}
	if (rc != 0 && rc != 4 && f == 0) {
		f = 1
		reason = sprintf("exit status %d", rc)
	}
	printf "%d %d %d %s\n", p, f, s, reason
}'
