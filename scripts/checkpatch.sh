#!/usr/bin/env bash
# checkpatch.sh - run the kernel's checkpatch.pl --strict on the kernel-side
# C sources (`make checkpatch`).
#
# Usage: checkpatch.sh [FILE...]   (default: kmod/*.[ch] core/*.[ch], less
# Kbuild's generated *.mod.c)
# checkpatch.pl comes from Debian's linux-source (scripts/extract-checkpatch.sh
# puts it in build/checkpatch/).  Each file is one test: it passes when
# checkpatch reports no error, warning or check.  Ends with "N passed, M
# failed"; exits 1 when a file fails.  $CHECKPATCH_FLAGS adds options (e.g.
# --ignore TYPE,...).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
"$root/scripts/extract-checkpatch.sh" >/dev/null
cp=build/checkpatch/checkpatch.pl

if [ $# -eq 0 ]; then
	shopt -s nullglob
	files=()
	for f in kmod/*.c kmod/*.h core/*.c core/*.h; do
		case "$f" in *.mod.c) ;; *) files+=("$f") ;; esac	# Kbuild's
	done
	shopt -u nullglob
	set -- ${files[@]+"${files[@]}"}
fi
echo "checkpatch: $# file(s)"

# Per-file exceptions, each with its reason.  kmod/compat.h is where the
# module's LINUX_VERSION_CODE checks live, on purpose (checkpatch assumes
# in-tree code, built for one version), and "LINUX_VERSION_CODE >=
# KERNEL_VERSION(...)" reads as a constant on the left to it.
file_flags() {
	case "$1" in
	kmod/compat.h) echo "--ignore LINUX_VERSION_CODE,CONSTANT_COMPARISON" ;;
	esac
}

passed=0 failed=0
for f in "$@"; do
	# shellcheck disable=SC2086,SC2046
	if out=$("$cp" --strict --no-tree --quiet --show-types ${CHECKPATCH_FLAGS:-} $(file_flags "$f") -f "$f" 2>&1); then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
		printf '%s\n' "$out"
		echo "checkpatch: FAIL: $f"
	fi
done
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
