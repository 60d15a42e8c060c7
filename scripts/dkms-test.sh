#!/usr/bin/env bash
# dkms-test.sh - `make dkms-install` and `make dkms-uninstall` end to end,
# in scratch trees (`make check-dkms`).
#
#   build/dkms-test/src      DKMS_SOURCETREE (instead of /usr/src)
#   build/dkms-test/tree     DKMS_TREE       (instead of /var/lib/dkms)
#   build/dkms-test/install  DKMS_INSTALLTREE (instead of /lib/modules)
#
# so nothing of the system's DKMS state changes (dkms still runs depmod on
# the kernel's own /lib/modules/<kver>, which rewrites the same files, and
# signs with the system's DKMS key, making one on first use, as any dkms
# build does).  The kernel is $(KVER) of the Makefile: the one whose
# headers are installed, which need not be the running one (there may be
# no module support here at all; nothing is loaded).
#
# Checks, one test each: the source tree has dkms.conf, kmod/ and a real
# kmod/core/ (not the repository's link); dkms builds it (status "built");
# installs it (status "installed", ptask.ko under
# <install>/<kver>/updates/dkms/ with that kernel's vermagic); the build
# used core/ (its objects are in DKMS's build tree before the install
# cleans it: checked through the module's own symbols); uninstall leaves
# neither the source tree nor a status line.  Ends with "N passed, M
# failed".
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
scratch=$root/build/dkms-test
kver=${KVER:-$(scripts/kver.sh)}
version=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' kmod/dkms.conf)
vars=(DKMS_SOURCETREE="$scratch/src" DKMS_TREE="$scratch/tree"
      DKMS_INSTALLTREE="$scratch/install" DKMS_KVER="$kver")
dkms_args=(-m ptask -v "$version" --sourcetree "$scratch/src"
	   --dkmstree "$scratch/tree" --installtree "$scratch/install")
passed=0 failed=0

ok() { echo "ok - $1"; passed=$((passed + 1)); }
fail() { echo "not ok - $1"; failed=$((failed + 1)); }
check() {	# check NAME COMMAND...
	local name=$1
	shift
	if "$@"; then ok "$name"; else fail "$name"; fi
}

command -v dkms >/dev/null || { echo "dkms-test: dkms not installed; run 'make deps'"; echo "0 passed, 1 failed"; exit 1; }
rm -rf "$scratch"
mkdir -p "$scratch/src" "$scratch/tree" "$scratch/install/$kver"
echo "dkms-test: ptask/$version for $kver in $scratch"

make --no-print-directory dkms-install "${vars[@]}" >"$scratch/install.log" 2>&1
rc=$?
src=$scratch/src/ptask-$version
check "source tree has dkms.conf, kmod/Kbuild, uapi/ptask.h" \
	test -f "$src/dkms.conf" -a -f "$src/kmod/Kbuild" -a -f "$src/uapi/ptask.h"
check "source tree has core/ as files in kmod/core/" \
	test -d "$src/kmod/core" -a ! -L "$src/kmod/core" -a -f "$src/kmod/core/budget.c"
check "make dkms-install exits 0" test "$rc" = 0
status=$(dkms status "${dkms_args[@]}" 2>/dev/null)
check "dkms status says installed for $kver" \
	grep -q "ptask/$version, $kver, .*: installed" <<<"$status"
ko=$scratch/install/$kver/updates/dkms/ptask.ko
[ -f "$ko" ] || ko=$ko.xz
check "ptask.ko installed under updates/dkms" test -f "$ko"
check "its vermagic is $kver's" \
	grep -q "^$kver " <<<"$(modinfo -F vermagic "$ko" 2>/dev/null)"
check "it holds the core (ptask_sched_tick, ptask_graph_open)" \
	bash -c "nm '$ko' 2>/dev/null | grep -q ' ptask_sched_tick\$' && nm '$ko' | grep -q ' ptask_graph_open\$'"
if [ "$rc" != 0 ]; then
	tail -n 30 "$scratch/install.log"
fi

make --no-print-directory dkms-uninstall "${vars[@]}" >"$scratch/uninstall.log" 2>&1
check "make dkms-uninstall exits 0" test $? = 0
check "no status line left" test -z "$(dkms status "${dkms_args[@]}" 2>/dev/null)"
check "source tree removed" test ! -e "$src"
check "module removed" test ! -e "$ko"

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
