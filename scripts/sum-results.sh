#!/usr/bin/env bash
# sum-results.sh - add up the summaries of the parts of `make check`.
#
# Usage: sum-results.sh NAME=OUTPUT_FILE:EXIT_STATUS...
#
# Each part (make check-unit, make check-vm, ...) ends its output with a line
# "N passed, M failed[, K skipped]" (a "word: " before it is allowed).  This
# takes the last such line of each OUTPUT_FILE, prints one line per part and
# then the total "N passed, M failed, K skipped" as its very last line.  A
# part with no summary line, or one that exited non-zero while its summary
# shows no failure (it broke after counting, or its build failed), counts
# one extra failure.  A part that names the kernel it ran on (a line
# "vm: kernel: ...", as tests/vm/run.sh prints) gets it on its line.  Exits
# 1 when the total has failures.
set -euo pipefail

tp=0 tf=0 ts=0
lines=()
for arg in "$@"; do
	name=${arg%%=*}
	rest=${arg#*=}
	file=${rest%:*}
	rc=${rest##*:}
	summary=$(grep -E '^([A-Za-z_-]+: )?[0-9]+ passed, [0-9]+ failed(, [0-9]+ skipped)?$' "$file" 2>/dev/null |
		tail -n 1 || true)
	p=0 f=0 s=0 note=
	if [ -z "$summary" ]; then
		f=1 note=" (no summary line; exit status $rc; see $file)"
	else
		summary=${summary#*: }
		p=$(sed -E 's/^([0-9]+) passed.*/\1/' <<<"$summary")
		f=$(sed -E 's/^[0-9]+ passed, ([0-9]+) failed.*/\1/' <<<"$summary")
		if [[ $summary == *skipped ]]; then
			s=$(sed -E 's/.*failed, ([0-9]+) skipped$/\1/' <<<"$summary")
		fi
		if [ "$rc" != 0 ] && [ "$f" = 0 ]; then
			f=1 note=" (exit status $rc)"
		fi
	fi
	kernel=$(grep -m 1 '^vm: kernel: ' "$file" 2>/dev/null | sed 's/^vm: kernel: //' || true)
	[ -z "$kernel" ] || note+=" [kernel: $kernel]"
	tp=$((tp + p)) tf=$((tf + f)) ts=$((ts + s))
	lines+=("check: $name: $p passed, $f failed, $s skipped$note")
done
printf '%s\n' ${lines[@]+"${lines[@]}"}
echo "$tp passed, $tf failed, $ts skipped"
[ "$tf" = 0 ]
