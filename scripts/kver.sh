#!/usr/bin/env bash
# kver.sh - print the version of the Debian kernel that ptask builds against
# and boots in the test VM.
#
# The version is the newest /lib/modules/<ver>/ that has a matching
# /boot/vmlinuz-<ver> (the running kernel does not matter: the host never
# loads ptask.ko, the QEMU guest boots /boot/vmlinuz-<ver>).  $KVER, when
# set and non-empty, wins.  Exits 1 (printing nothing on stdout) when no
# such kernel is installed: run `make deps`.
set -euo pipefail

if [ -n "${KVER:-}" ]; then
	printf '%s\n' "$KVER"
	exit 0
fi

best=""
for dir in /lib/modules/*/; do
	[ -d "$dir" ] || continue
	ver=$(basename "$dir")
	[ -f "/boot/vmlinuz-$ver" ] || continue
	best=$(printf '%s\n%s\n' "$best" "$ver" | sed '/^$/d' | sort -V | tail -n 1)
done

if [ -z "$best" ]; then
	echo "kver.sh: no kernel with both /lib/modules/<ver> and /boot/vmlinuz-<ver>; run 'make deps'" >&2
	exit 1
fi
printf '%s\n' "$best"
