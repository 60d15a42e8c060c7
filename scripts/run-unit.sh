#!/usr/bin/env bash
# run-unit.sh - build and run the user-space unit tests and fuzz smoke runs
# (`make check-unit`).
#
# Discovery (every run, nothing to register):
#   tests/unit/*_test.c   one test program each: built with clang under
#                         ASan+UBSan (-fno-sanitize-recover=all) and linked
#                         with every core/*.c and every tests/unit/*.c that
#                         is not a *_test.c (the user-space OS shim
#                         os_user.c, shared helpers); run under
#                         `timeout $UNIT_TIMEOUT` (300 s); counted from its
#                         TAP output and exit status by scripts/tap-count.sh
#                         (non-zero exit = failure); stdout is line-buffered
#                         (stdbuf) so TAP lines survive a sanitizer abort.
#   tests/fuzz/*_fuzz.c   one libFuzzer target each: built with
#                         -fsanitize=fuzzer,address,undefined, linked with
#                         every core/*.c, tests/unit/os_user.c (if present)
#                         and every tests/fuzz/*.c that is not a *_fuzz.c;
#                         run for $FUZZ_SECONDS (20) s, seeded from
#                         tests/fuzz/corpus/<name>/ (name with or without
#                         the _fuzz suffix) when present, new inputs kept in
#                         build/fuzz/corpus/<name>/, crashes saved as
#                         build/fuzz/<name>-crash-*; with the dictionary
#                         tests/fuzz/<name>.dict when present.  One test
#                         each: passes when libFuzzer exits 0.
# Outputs: build/unit/, build/fuzz/ (binaries, logs).  Build failures count
# as failures.  Ends with "N passed, M failed, K skipped"; exits 1 on any
# failure.  Empty folders are fine (0 tests, said so).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
CC_SAN=${CC_SAN:-clang}
unit_timeout=${UNIT_TIMEOUT:-300}
fuzz_seconds=${FUZZ_SECONDS:-20}

say() { printf 'unit: %s\n' "$*"; }

cflags=(-std=gnu11 -O1 -g -Wall -Wextra -Werror -I. -fno-omit-frame-pointer)
# shellcheck disable=SC2054 # commas belong to the flag
san=(-fsanitize=address,undefined -fno-sanitize-recover=all)
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:strict_string_checks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

shopt -s nullglob
core_srcs=(core/*.c)
unit_tests=(tests/unit/*_test.c)
unit_helpers=()
for f in tests/unit/*.c; do
	case "$f" in *_test.c) ;; *) unit_helpers+=("$f") ;; esac
done
# encfs_*_fuzz.c are encfs-gpu's: tests/encfs/run.sh (make check-encfs) runs them.
fuzz_targets=()
for f in tests/fuzz/*_fuzz.c; do
	case "$f" in tests/fuzz/encfs_*) ;; *) fuzz_targets+=("$f") ;; esac
done
fuzz_helpers=()
[ -f tests/unit/os_user.c ] && fuzz_helpers+=(tests/unit/os_user.c)
for f in tests/fuzz/*.c; do
	case "$f" in *_fuzz.c) ;; *) fuzz_helpers+=("$f") ;; esac
done
shopt -u nullglob

passed=0
failed=0
skipped=0
failures=()
count() { # name pass fail skip [reason]
	passed=$((passed + $2)); failed=$((failed + $3)); skipped=$((skipped + $4))
	say "$1: $2 passed, $3 failed, $4 skipped${5:+ ($5)}"
	[ "$3" = 0 ] || failures+=("$1${5:+: $5}")
}

# compile_objs DIR FLAGS... -- SRC... : one object per source into DIR,
# their names on stdout; fails on the first source that does not build.
compile_objs() {
	local dir=$1; shift
	local flags=()
	while [ "$1" != -- ]; do flags+=("$1"); shift; done
	shift
	mkdir -p "$dir"
	local s o
	for s in "$@"; do
		o=$dir/$(printf '%s' "$s" | tr / _).o
		"$CC_SAN" "${flags[@]}" -c -o "$o" "$s" >&2 || return 1
		printf '%s\n' "$o"
	done
}

# ---------------------------------------------------------------- unit tests
say "${#unit_tests[@]} unit test(s) in tests/unit/, ${#core_srcs[@]} core source(s), helpers: ${unit_helpers[*]:-none}"
if [ "${#unit_tests[@]}" -gt 0 ]; then
	out=build/unit
	rm -rf "$out/obj"
	mkdir -p "$out"
	say "compiling core + helpers with ASan/UBSan"
	if objlist=$(compile_objs "$out/obj" "${cflags[@]}" "${san[@]}" -- \
		${core_srcs[@]+"${core_srcs[@]}"} ${unit_helpers[@]+"${unit_helpers[@]}"}); then
		objs=()
		[ -z "$objlist" ] || mapfile -t objs <<<"$objlist"
		for t in "${unit_tests[@]}"; do
			name=$(basename "$t" .c)
			bin=$out/$name
			if ! "$CC_SAN" "${cflags[@]}" "${san[@]}" -o "$bin" "$t" \
				${objs[@]+"${objs[@]}"} -lpthread -lm; then
				count "$name" 0 1 0 "does not build"
				continue
			fi
			say "running $name (timeout ${unit_timeout}s)"
			set +e
			timeout -k 10 "$unit_timeout" stdbuf -oL -eL "$bin" 2>&1 | tee "$out/$name.log"
			rc=${PIPESTATUS[0]}
			set -e
			read -r p f s reason < <(scripts/tap-count.sh "$rc" <"$out/$name.log")
			[ "$rc" = 124 ] && reason="timed out after ${unit_timeout}s"
			count "$name" "$p" "$f" "$s" "$reason"
		done
	else
		count "core+helpers" 0 "${#unit_tests[@]}" 0 "core or tests/unit helpers do not build"
	fi
fi

# ---------------------------------------------------------------- fuzzers
say "${#fuzz_targets[@]} fuzz target(s) in tests/fuzz/ (${fuzz_seconds}s each)"
if [ "${#fuzz_targets[@]}" -gt 0 ]; then
	out=build/fuzz
	rm -rf "$out/obj"
	mkdir -p "$out"
	say "compiling core + helpers for libFuzzer"
	if objlist=$(compile_objs "$out/obj" "${cflags[@]}" "${san[@]}" -fsanitize=fuzzer-no-link -- \
		${core_srcs[@]+"${core_srcs[@]}"} ${fuzz_helpers[@]+"${fuzz_helpers[@]}"}); then
		objs=()
		[ -z "$objlist" ] || mapfile -t objs <<<"$objlist"
		for t in "${fuzz_targets[@]}"; do
			name=$(basename "$t" .c)
			bin=$out/$name
			if ! "$CC_SAN" "${cflags[@]}" "${san[@]}" -fsanitize=fuzzer -o "$bin" "$t" \
				${objs[@]+"${objs[@]}"} -lpthread -lm; then
				count "$name" 0 1 0 "does not build"
				continue
			fi
			corpus=$out/corpus/$name
			mkdir -p "$corpus"
			dirs=("$corpus")
			for seeds in "tests/fuzz/corpus/$name" "tests/fuzz/corpus/${name%_fuzz}"; do
				[ -d "$seeds" ] && dirs+=("$seeds")
			done
			extra=()
			for dict in "tests/fuzz/$name.dict" "tests/fuzz/${name%_fuzz}.dict"; do
				[ -f "$dict" ] && { extra+=("-dict=$dict"); break; }
			done
			say "fuzzing $name for ${fuzz_seconds}s (corpus: ${dirs[*]})"
			set +e
			timeout -k 10 $((fuzz_seconds + 120)) "$bin" -max_total_time="$fuzz_seconds" \
				-runs=2000000000 -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
				-artifact_prefix="$out/$name-" ${extra[@]+"${extra[@]}"} "${dirs[@]}" \
				>"$out/$name.log" 2>&1
			rc=$?
			set -e
			runs=$(grep -oE 'stat::number_of_executed_units: *[0-9]+' "$out/$name.log" |
				grep -oE '[0-9]+$' || echo "?")
			if [ "$rc" = 0 ]; then
				count "$name" 1 0 0 "$runs inputs"
			else
				tail -n 40 "$out/$name.log"
				count "$name" 0 1 0 "libFuzzer exit status $rc after $runs inputs; log $out/$name.log"
			fi
		done
	else
		count "fuzz core+helpers" 0 "${#fuzz_targets[@]}" 0 "core or fuzz helpers do not build"
	fi
fi

total=$((passed + failed + skipped))
if [ "$total" = 0 ]; then
	say "no tests: tests/unit/*_test.c and tests/fuzz/*_fuzz.c are both empty"
fi
for f in ${failures[@]+"${failures[@]}"}; do
	say "FAIL: $f"
done
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ]
