#!/usr/bin/env bash
# run-unit.sh - run the user-space unit tests and fuzz smoke runs that
# tests/unit/unit.mk built (`make check-unit [T=name,...]`).
#
#   scripts/run-unit.sh [build/unit/NAME | build/fuzz/NAME]...
#
# With no argument, every program tests/unit/*_test.c and tests/fuzz/*_fuzz.c
# (but encfs-gpu's) would give.  A program that is not there did not build:
# it counts as a failure.
#   build/unit/NAME   one TAP program (clang, ASan + UBSan), run under
#                     `timeout $UNIT_TIMEOUT` (300 s), counted from its
#                     TAP output and exit status by scripts/tap-count.sh
#                     (non-zero exit = failure); stdout is line-buffered
#                     (stdbuf) so TAP lines survive a sanitizer abort.
#   build/fuzz/NAME   one libFuzzer target, run for $FUZZ_SECONDS (20) s,
#                     seeded from tests/fuzz/corpus/<name>/ (name with or
#                     without the _fuzz suffix) when present, new inputs
#                     kept in build/fuzz/corpus/<name>/, crashes saved as
#                     build/fuzz/<name>-crash-*; with the dictionary
#                     tests/fuzz/<name>.dict when present.  One test each:
#                     passes when libFuzzer exits 0.
# Ends with "N passed, M failed, K skipped"; exits 1 on any failure.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
unit_timeout=${UNIT_TIMEOUT:-300}
fuzz_seconds=${FUZZ_SECONDS:-20}

say() { printf 'unit: %s\n' "$*"; }

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:strict_string_checks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

progs=("$@")
if [ "${#progs[@]}" = 0 ]; then
	shopt -s nullglob
	for f in tests/unit/*_test.c; do progs+=("build/unit/$(basename "$f" .c)"); done
	for f in tests/fuzz/*_fuzz.c; do
		case "$f" in tests/fuzz/encfs_*) ;; *) progs+=("build/fuzz/$(basename "$f" .c)") ;; esac
	done
	shopt -u nullglob
fi

passed=0
failed=0
skipped=0
failures=()
count() { # name pass fail skip [reason]
	passed=$((passed + $2)); failed=$((failed + $3)); skipped=$((skipped + $4))
	say "$1: $2 passed, $3 failed, $4 skipped${5:+ ($5)}"
	[ "$3" = 0 ] || failures+=("$1${5:+: $5}")
}

run_unit() { # bin
	local bin=$1 name rc p f s reason
	name=$(basename "$bin")
	say "running $name (timeout ${unit_timeout}s)"
	set +e
	timeout -k 10 "$unit_timeout" stdbuf -oL -eL "$bin" 2>&1 | tee "$bin.log"
	rc=${PIPESTATUS[0]}
	set -e
	read -r p f s reason < <(scripts/tap-count.sh "$rc" <"$bin.log")
	[ "$rc" = 124 ] && reason="timed out after ${unit_timeout}s"
	count "$name" "$p" "$f" "$s" "$reason"
}

run_fuzz() { # bin
	local bin=$1 name out corpus seeds dict rc runs
	local -a dirs extra=()
	name=$(basename "$bin")
	out=$(dirname "$bin")
	corpus=$out/corpus/$name
	mkdir -p "$corpus"
	dirs=("$corpus")
	for seeds in "tests/fuzz/corpus/$name" "tests/fuzz/corpus/${name%_fuzz}"; do
		[ -d "$seeds" ] && dirs+=("$seeds")
	done
	for dict in "tests/fuzz/$name.dict" "tests/fuzz/${name%_fuzz}.dict"; do
		[ -f "$dict" ] && { extra+=("-dict=$dict"); break; }
	done
	say "fuzzing $name for ${fuzz_seconds}s (corpus: ${dirs[*]})"
	set +e
	timeout -k 10 $((fuzz_seconds + 120)) "$bin" -max_total_time="$fuzz_seconds" \
		-runs=2000000000 -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
		-artifact_prefix="$out/$name-" ${extra[@]+"${extra[@]}"} "${dirs[@]}" \
		>"$bin.log" 2>&1
	rc=$?
	set -e
	runs=$(grep -oE 'stat::number_of_executed_units: *[0-9]+' "$bin.log" |
		grep -oE '[0-9]+$' || echo "?")
	if [ "$rc" = 0 ]; then
		count "$name" 1 0 0 "$runs inputs"
	else
		tail -n 40 "$bin.log"
		count "$name" 0 1 0 "libFuzzer exit status $rc after $runs inputs; log $bin.log"
	fi
}

say "${#progs[@]} program(s); fuzz targets run ${fuzz_seconds}s each"
for bin in ${progs[@]+"${progs[@]}"}; do
	if [ ! -x "$bin" ]; then
		count "$(basename "$bin")" 0 1 0 "does not build (make $bin)"
		continue
	fi
	case "$bin" in
	*_fuzz) run_fuzz "$bin" ;;
	*) run_unit "$bin" ;;
	esac
done

total=$((passed + failed + skipped))
if [ "$total" = 0 ]; then
	say "no tests: tests/unit/*_test.c and tests/fuzz/*_fuzz.c are both empty"
fi
for f in ${failures[@]+"${failures[@]}"}; do
	say "FAIL: $f"
done
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ]
