#!/usr/bin/env bash
# perf-profile.sh - profile a running process (ptaskd) while a command
# runs, and keep only the folded stacks: what comes back from the GPU
# machine (at most 8 files) and scripts/perf-stacks.py reads.
#
# Usage: scripts/perf-profile.sh PREFIX PID COMMAND [ARG...]
# Writes PREFIX.fold.gz (every distinct stack with its samples) and
# PREFIX-threads.txt (samples per thread), and PREFIX.perf-log (perf's
# messages).  perf records PID at
# PERF_HZ (default 8000) with DWARF call graphs (our binaries and
# libcuda have no frame pointers) from 0.3 s before COMMAND to its end;
# the raw data (about 40 MB a busy CPU-second) is deleted.  perf is
# build/perfkit's (scripts/perfkit.sh) when there is one, else perf
# from PATH.  Exits with COMMAND's status.
set -uo pipefail

if [ $# -lt 3 ]; then
	echo "usage: perf-profile.sh PREFIX PID COMMAND [ARG...]" >&2
	exit 2
fi
root=$(cd "$(dirname "$0")/.." && pwd)
prefix=$1 pid=$2
shift 2
kit=$root/build/perfkit
if [ -x "$kit/perf" ]; then
	perf=(env "LD_LIBRARY_PATH=$kit" "$kit/perf")
else
	perf=(perf)
fi
data=$prefix.data
"${perf[@]}" record -e cpu-clock -F "${PERF_HZ:-8000}" -g \
	--call-graph dwarf,4096 -p "$pid" -o "$data" 2>"$prefix.perf-log" &
rec=$!
sleep 0.3
"$@"
rc=$?
kill -INT "$rec"
wait "$rec"
"${perf[@]}" script -i "$data" -F comm,ip,sym 2>/dev/null |
	awk -f "$root/scripts/perf-fold.awk" | gzip >"$prefix.fold.gz"
python3 "$root/scripts/perf-stacks.py" "$prefix.fold.gz" >"$prefix-threads.txt" 2>&1 ||
	true
rm -f "$data"
exit "$rc"
