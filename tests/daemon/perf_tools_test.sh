#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# perf_tools_test.sh - the profiling scripts of ptaskd.md "Profiling on
# the GPU machine": scripts/perf-fold.awk folds `perf script -F
# comm,ip,sym` output (here a fixed sample of it, no perf needed) into
# one line per stack, and scripts/perf-stacks.py counts per thread,
# callees and callers from it, and refuses bad arguments.
#
# TAP lines, then the summary line.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/tap.sh"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

# Three samples of pd-dev0 (two in pd_job_run -> cuLaunchKernel, one in
# pd_job_run -> pd_job_prepare), one of pd-ring with an unresolved frame;
# innermost frame first, as perf script prints them.
cat >"$T/script.txt" <<'PERF'
pd-dev0 
	    7f0000001000 cuLaunchKernel+0x10
	    55000000a000 pd_job_run+0x2a
	    55000000b000 pd_worker_main+0x40

pd-dev0 
	    7f0000001000 cuLaunchKernel+0x14
	    55000000a000 pd_job_run+0x2a
	    55000000b000 pd_worker_main+0x40

pd-dev0 
	    55000000c000 pd_job_prepare+0x8
	    55000000a000 pd_job_run+0x30
	    55000000b000 pd_worker_main+0x40

pd-ring 
	    7f0000009000 [unknown]
	    55000000d000 pd_ring_serve+0x11
PERF
awk -f "$root/scripts/perf-fold.awk" "$T/script.txt" | sort >"$T/fold.txt"
cat >"$T/want.txt" <<'EOF2'
pd-dev0;pd_worker_main;pd_job_run;cuLaunchKernel 2
pd-dev0;pd_worker_main;pd_job_run;pd_job_prepare 1
pd-ring;pd_ring_serve;? 1
EOF2
check "perf-fold.awk: one line per stack, outermost first, offsets and [unknown] folded" \
	cmp -s "$T/fold.txt" "$T/want.txt"
gzip -c "$T/fold.txt" >"$T/fold.gz"

out=$(python3 "$root/scripts/perf-stacks.py" "$T/fold.gz")
check "perf-stacks.py: samples per thread (gzipped input)" \
	grep -q "3  75.0%  pd-dev0" <<<"$out"
out=$(python3 "$root/scripts/perf-stacks.py" "$T/fold.txt" pd-dev0 pd_job_run callees 1)
if grep -q "^pd-dev0: 3 samples, 3 with pd_job_run" <<<"$out" &&
   grep -q "2  66.7%  cuLaunchKernel" <<<"$out" &&
   grep -q "1  33.3%  pd_job_prepare" <<<"$out"; then
	ok "perf-stacks.py: a function's callees, in percent of its thread"
else
	notok "perf-stacks.py: a function's callees, in percent of its thread: $out"
fi
out=$(python3 "$root/scripts/perf-stacks.py" "$T/fold.txt" '*' cuLaunchKernel callers 2)
check "perf-stacks.py: callers, two deep, every thread" \
	grep -q "2  50.0%  pd_worker_main;pd_job_run" <<<"$out"
python3 "$root/scripts/perf-stacks.py" "$T/fold.txt" pd-dev0 pd_job_run sideways >/dev/null 2>&1
check "perf-stacks.py: a bad mode is refused (exit 2)" test $? = 2
python3 "$root/scripts/perf-stacks.py" >/dev/null 2>&1
check "perf-stacks.py: no file is refused (exit 2)" test $? = 2
printf 'not a folded line\n' >"$T/bad.txt"
python3 "$root/scripts/perf-stacks.py" "$T/bad.txt" >"$T/bad.out" 2>&1
rc=$?
check "perf-stacks.py: a line without a count fails with a message, not a traceback" \
	test "$rc" = 1 -a -s "$T/bad.out" -a "$(grep -c Traceback "$T/bad.out")" = 0
bash "$root/scripts/perf-profile.sh" "$T/p" 1 >"$T/usage.out" 2>&1
rc=$?
check "perf-profile.sh: too few arguments are refused with its usage (exit 2)" \
	test "$rc" = 2 -a "$(grep -c '^usage: perf-profile.sh' "$T/usage.out")" = 1
finish
