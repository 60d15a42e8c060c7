#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# bench/encfs-gpu-carry.sh - fill build/encfscarry/ with everything
# bench/encfs-gpu-run.sh needs on the lent GPU machine, which has no
# package access, no libfuse3, no fusermount3 and no clang (make
# encfs-gpu-carry).  Run here, as root, with package access:
#
#   bin/      encfs-gpu, ptaskd, ptaskctl (this checkout's build)
#   tests/    the sanitized daemon and test programs tests/encfs/ptask.sh
#             runs (built by tests/encfs/run.sh, ENCFS_TESTS=build)
#   gpu/      xts_gpu_test, the kernel's PTX, the CAVP XTS vectors
#   root/     Debian's libfuse3-3, fuse3, libfuse2, libtinyxml2-9, gocryptfs
#             and encfs, `apt-get download`ed (into build/encfsdebs/) and
#             unpacked with dpkg -x: what those programs need beyond libc,
#             libstdc++ and OpenSSL 3, which the GPU machine has.  fuse3
#             for its fusermount3: gocryptfs 2.3 always mounts through it
#             (root needs no setuid bit); libfuse3 and libfuse2 mount with
#             mount(2) as root and need none.  libnl-3-200 and
#             libnl-genl-3-200 for ptaskd and ptaskctl (the GPU machine
#             lacks libnl-genl-3.so.200)
#   src.tar.xz  a slice of Debian's linux-source tarball for the untar,
#             md5sum, ls -lR and rm -rf workloads, as big as the carry
#             allows (ENCFS_CARRY_SRC_DIRS, default "fs include kernel mm net lib
#             arch/x86 crypto block security": the whole tarball is 138 MB,
#             the carry 64 MiB with the working tree)
#
# It refuses to finish when build/encfscarry is over ENCFS_CARRY_MAX_MB
# (default 56: the tree travels too).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
C=build/encfscarry
DEBS=build/encfsdebs
SRC_DIRS=${ENCFS_CARRY_SRC_DIRS:-fs include kernel mm net lib arch/x86 crypto block security}
MAX_MB=${ENCFS_CARRY_MAX_MB:-56}
PKGS="libfuse3-3 fuse3 libfuse2 libtinyxml2-9 gocryptfs encfs libnl-3-200 libnl-genl-3-200"
TARBALL=$(ls /usr/src/linux-source-*.tar.xz | tail -n 1)
CAVP=/usr/lib/python3/dist-packages/cryptography_vectors/ciphers/AES/XTS
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT

say() { echo "encfs-gpu-carry: $*" >&2; }

say "building encfs-gpu, ptaskd, ptaskctl, xts_gpu_test"
make encfs-gpu ptaskd ptaskctl encfs-gpu-gputest >/dev/null
say "building the sanitized test programs (tests/encfs/run.sh, ENCFS_TESTS=build)"
ENCFS_TESTS=build tests/encfs/run.sh | tail -n 1

# the slice takes minutes to make: keep it when it is the same slice
if [ -f "$C/src.tar.xz" ] && grep -qF ": $SRC_DIRS (" "$C/src.txt" 2>/dev/null; then
	mv "$C/src.tar.xz" "$C/src.txt" "$W/"
fi
rm -rf "$C"
mkdir -p "$C/bin" "$C/tests" "$C/gpu" "$C/root" "$DEBS"
cp build/encfs-gpu/encfs-gpu build/bin/ptaskd build/bin/ptaskctl "$C/bin/"
cp build/encfs-gpu/tests/encfs-gpu-san build/encfs-gpu/tests/vectors_test \
	build/encfs-gpu/tests/fsops_test build/encfs-gpu/tests/fsx "$C/tests/"
cp build/encfs-gpu/xts_gpu_test build/encfs-gpu/aes_xts.ptx "$C/gpu/"
[ -d "$CAVP" ] && cp -r "$CAVP" "$C/gpu/XTS"

say "apt-get download $PKGS"
(cd "$DEBS" && rm -f ./*.deb && apt-get download $PKGS >/dev/null 2>&1)
for d in "$DEBS"/*.deb; do
	dpkg -x "$d" "$C/root"
done
rm -rf "$C/root/usr/share/doc" "$C/root/usr/share/man" "$C/root/usr/share/lintian"
ls "$DEBS" >"$C/root/PACKAGES"

if [ -f "$W/src.tar.xz" ]; then
	say "keeping the slice: $(cat "$W/src.txt")"
	mv "$W/src.tar.xz" "$W/src.txt" "$C/"
else
	say "slicing $TARBALL: $SRC_DIRS"
	top=$(basename "$TARBALL" .tar.xz)	# Debian's: linux-source-6.1/...
	# shellcheck disable=SC2046
	tar -C "$W" -xJf "$TARBALL" $(for d in $SRC_DIRS; do echo "$top/$d"; done)
	tar -C "$W" -cf - "$top" | xz -6 -T2 >"$C/src.tar.xz"
	echo "$(basename "$TARBALL"): $SRC_DIRS ($(find "$W/$top" -type f | wc -l) files, $(du -sm "$W/$top" | cut -f1) MB)" \
		>"$C/src.txt"
fi

mb=$(du -sm "$C" | cut -f1)
say "$C: $mb MB ($(cat "$C/src.txt"))"
du -sh "$C"/* >&2
if [ "$mb" -gt "$MAX_MB" ]; then
	say "over $MAX_MB MB: slice less (ENCFS_CARRY_SRC_DIRS)"
	exit 1
fi
