#!/usr/bin/env bash
# perfkit.sh - make a folder holding Debian's perf and the libraries it
# needs beyond glibc, to carry to the GPU machine (which has no perf and
# no package access) and profile ptaskd there.
#
# Usage: scripts/perfkit.sh [DIR]   (default build/perfkit, about 30 MB)
# Needs perf here (Debian: apt-get install linux-perf).  On the GPU
# machine run it as  LD_LIBRARY_PATH=DIR DIR/perf ...  or through
# scripts/perf-profile.sh, which finds DIR itself.  glibc's own libraries
# are left out: the GPU machine's are newer, and a binary built against
# older ones runs with them.
set -euo pipefail

dir=${1:-build/perfkit}
perf=$(command -v perf || true)
if [ -z "$perf" ]; then
	echo "perfkit.sh: no perf here: apt-get install linux-perf" >&2
	exit 1
fi
perf=$(readlink -f "$perf")
mkdir -p "$dir"
cp "$perf" "$dir/perf"
ldd "$perf" | awk '$3 ~ /^\// { print $3 }' | while read -r lib; do
	case $(basename "$lib") in
	libc.so.*|libm.so.*|libpthread.so.*|libdl.so.*|librt.so.*|ld-linux*) ;;
	*) cp -L "$lib" "$dir/" ;;
	esac
done
echo "perfkit.sh: $dir: $(du -sh "$dir" | cut -f1) ($("$dir/perf" --version 2>/dev/null || LD_LIBRARY_PATH=$dir "$dir/perf" --version))"
