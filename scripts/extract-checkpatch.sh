#!/usr/bin/env bash
# extract-checkpatch.sh - copy checkpatch.pl and the two files it reads beside
# itself (spelling.txt, const_structs.checkpatch) out of Debian's
# linux-source tarball (/usr/src/linux-source-<x.y>.tar.xz, package
# linux-source, installed by `make deps`) into build/checkpatch/, for
# `make checkpatch`.
#
# Does nothing when the files are already there.  Reading the tarball takes
# 10-20 s (one pass for all files).  $BUILD overrides the build folder.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$root/build}

# file under build/ -> tarball member (relative to the tree's top)
declare -A want=(
	[checkpatch/checkpatch.pl]=scripts/checkpatch.pl
	[checkpatch/spelling.txt]=scripts/spelling.txt
	[checkpatch/const_structs.checkpatch]=scripts/const_structs.checkpatch
)

missing=0
for dst in "${!want[@]}"; do
	[ -s "$build/$dst" ] || missing=1
done
if [ "$missing" = 0 ]; then
	echo "extract-checkpatch: $build/checkpatch/ is complete"
	exit 0
fi

tarball=$(printf '%s\n' /usr/src/linux-source-*.tar.xz | grep -v '\*' | sort -V | tail -n 1 || true)
if [ -z "$tarball" ]; then
	echo "extract-checkpatch: no /usr/src/linux-source-*.tar.xz; run 'make deps' (package linux-source)" >&2
	exit 1
fi
top=$(basename "$tarball" .tar.xz)	# linux-source-6.1

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
members=()
for dst in "${!want[@]}"; do
	members+=("$top/${want[$dst]}")
done
echo "extract-checkpatch: extracting checkpatch.pl from $tarball (10-20 s)"
tar -xJf "$tarball" -C "$tmp" "${members[@]}"

for dst in "${!want[@]}"; do
	mkdir -p "$(dirname "$build/$dst")"
	cp "$tmp/$top/${want[$dst]}" "$build/$dst"
done
chmod +x "$build/checkpatch/checkpatch.pl"
echo "extract-checkpatch: wrote $build/checkpatch/"
