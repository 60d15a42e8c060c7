#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# tests/encfs/mount_test.sh - encfs-gpu installed, then mounted the way an
# administrator does it: `mount -t fuse.encfs-gpu` and /etc/fstab lines.
#
#   make install PREFIX=$tmp/prefix            (a real prefix, no DESTDIR)
#   unshare --mount (a private mount namespace: nothing here is seen
#   outside, and nothing outside is changed):
#     $tmp/prefix/bin bound over /usr/local/bin, because mount(8) clears
#     PATH and mount.fuse3's /bin/sh then looks in its default PATH
#     (/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin)
#
#   mount -t fuse.encfs-gpu $tmp/c $tmp/m -o passfile=$tmp/pw,backend=cpu
#     -> /sbin/mount.fuse.encfs-gpu? no -> /sbin/mount.fuse (= mount.fuse3)
#     -> /bin/sh -c "encfs-gpu $tmp/c $tmp/m -o rw,passfile=...,dev,suid"
#   fstab line "$tmp/c $tmp/m fuse.encfs-gpu passfile=...,nofail,_netdev,
#     noauto,x-systemd.after=ptaskd.service 0 0": mount -T FILE $tmp/m,
#     then without noauto `mount --fstab FILE -a` twice (mounts once)
#   type fuse, source $tmp/prefix/bin/encfs-gpu#$tmp/c: any prefix
#
# Each mount: a file written, read back, still there after a remount with
# `encfs-gpu mount`; `umount` unmounts.  Then the errors an fstab line
# can make (wrong password, no passfile value, an unknown backend) fail the
# mount with encfs-gpu's message and mount nothing, and `make uninstall
# PREFIX=$tmp/prefix` leaves nothing.  TAP, then "N passed, M failed, K
# skipped"; exits 1 on any failure.  Needs root, /dev/fuse, mount.fuse3
# (Debian's fuse3) and unshare; skips without them.
set -uo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 1

# shellcheck source=tests/tap.sh
. "$root/tests/tap.sh"

why_not=
if [ "$(id -u)" != 0 ]; then
	why_not="not root (mount(8) and unshare need it)"
elif [ ! -c /dev/fuse ]; then
	why_not="no /dev/fuse"
elif [ ! -x /sbin/mount.fuse3 ] && [ ! -x /usr/sbin/mount.fuse3 ]; then
	why_not="no mount.fuse3 (Debian package fuse3)"
elif ! command -v unshare >/dev/null; then
	why_not="no unshare (util-linux)"
fi
if [ -n "$why_not" ]; then
	skip "mount -t fuse.encfs-gpu and fstab lines" "$why_not"
	finish
fi

# Everything below runs in a mount namespace of its own: the bind mount
# over /usr/local/bin and the FUSE mounts vanish with it.
if [ -z "${ENCFS_MOUNT_TEST_NS:-}" ]; then
	ENCFS_MOUNT_TEST_NS=1 exec unshare --mount --propagation private -- bash "$0" "$@"
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/encfs-mount.XXXXXX")
prefix=$tmp/prefix
C=$tmp/c M=$tmp/m PW=$tmp/pw
mkdir -p "$C" "$M"
echo "correct horse battery staple" >"$PW"
# shellcheck disable=SC2317 # called by the trap
cleanup() {
	for _ in 1 2 3; do
		mountpoint -q "$M" 2>/dev/null || break
		umount "$M" 2>/dev/null || umount -l "$M"
	done
	rm -rf "$tmp"
}
trap cleanup EXIT

# --- 1. install into a plain prefix ---------------------------------------------
if ! make --no-print-directory install PREFIX="$prefix" >"$tmp/install.log" 2>&1; then
	sed 's/^/    /' "$tmp/install.log" | tail -20
	notok "make install PREFIX=\$tmp/prefix"
	finish
fi
ok "make install PREFIX=\$tmp/prefix"
bin=$prefix/bin/encfs-gpu
check "encfs-gpu and its man page installed" \
	test -x "$bin" -a -f "$prefix/share/man/man1/encfs-gpu.1"
if ! "$bin" init --scrypt-logn 10 --passfile "$PW" "$C" >"$tmp/init.log" 2>&1; then
	sed 's/^/    /' "$tmp/init.log"
	notok "the installed encfs-gpu creates a volume"
	finish
fi
ok "the installed encfs-gpu creates a volume"
mount --bind "$prefix/bin" /usr/local/bin ||
	{ notok "bind \$tmp/prefix/bin over /usr/local/bin"; finish; }

# mounted_once: exactly one encfs-gpu mount on $M, with the cipher directory
# as its source (what `mount -a` and systemd compare with fstab's)
# shellcheck disable=SC2317 # called through check
mounted_once() {
	local lines
	lines=$(findmnt -rn -o SOURCE,FSTYPE --mountpoint "$M")
	[ "$lines" = "$C fuse.encfs-gpu" ] || { echo "    findmnt: ${lines:-nothing}"; return 1; }
}
# round_trip NAME: write a file through the mount, read it back, unmount,
# and read it with `encfs-gpu mount` (the same volume, the same bytes)
# shellcheck disable=SC2317 # called through check
round_trip() {
	local name=$1 want
	want="$name: $(date +%s.%N)"
	printf '%s\n' "$want" >"$M/$name" && [ "$(cat "$M/$name")" = "$want" ] || return 1
	umount "$M" || return 1
	! mountpoint -q "$M" || return 1
	"$bin" mount --passfile "$PW" "$C" "$M" 2>/dev/null || return 1
	[ "$(cat "$M/$name")" = "$want" ] || { umount "$M"; return 1; }
	umount "$M"
}
# mount_then NAME CMD...: CMD mounts the volume; it is checked, used, unmounted
mount_then() {
	local name=$1
	shift
	if ! "$@" >"$tmp/mount.log" 2>&1; then
		sed 's/^/    /' "$tmp/mount.log"
		notok "$name"
		return
	fi
	check "$name" mounted_once
	check "$name: write, read back, umount, the same bytes after a remount" \
		round_trip "$(echo "$name" | tr -c 'a-z0-9\n' _ | cut -c1-40)"
}

# --- 2. mount -t fuse.encfs-gpu ----------------------------------------------------
mount_then "mount -t fuse.encfs-gpu CIPHERDIR MNT -o passfile=F,backend=cpu" \
	mount -t fuse.encfs-gpu "$C" "$M" -o "passfile=$PW,backend=cpu"

# --- 3. fstab lines ----------------------------------------------------------------
# the options a boot-time line carries: mount(8) drops x-*, mount.fuse3
# drops nofail, _netdev and noauto, encfs-gpu takes passfile= and backend=
fstab_opts="passfile=$PW,backend=cpu,nofail,_netdev,x-systemd.after=ptaskd.service"
printf '# a temporary fstab\n%s %s fuse.encfs-gpu %s,noauto 0 0\n' "$C" "$M" "$fstab_opts" \
	>"$tmp/fstab"
mount_then "fstab line, noauto: mount -T FILE MNT" mount -T "$tmp/fstab" "$M"
printf '%s %s fuse.encfs-gpu %s 0 0\n' "$C" "$M" "$fstab_opts" >"$tmp/fstab.auto"
if mount --fstab "$tmp/fstab.auto" -a >"$tmp/mount.log" 2>&1 &&
	mount --fstab "$tmp/fstab.auto" -a >>"$tmp/mount.log" 2>&1; then
	check "fstab line: mount --fstab FILE -a twice mounts once" mounted_once
	check "fstab line: write, read back, umount, the same after a remount" round_trip fstab_a
else
	sed 's/^/    /' "$tmp/mount.log"
	notok "fstab line: mount --fstab FILE -a"
fi
# A prefix outside mount.fuse3's PATH: the type#source form names the program.
printf '%s#%s %s fuse passfile=%s,nofail 0 0\n' "$bin" "$C" "$M" "$PW" >"$tmp/fstab.any"
mount_then "fstab line, type fuse, source BINDIR/encfs-gpu#CIPHERDIR" \
	mount -T "$tmp/fstab.any" "$M"
# an option value holding a comma, escaped as libfuse escapes them
mkdir -p "$tmp/a,b" && cp "$PW" "$tmp/a,b/pw"
mount_then "mount -o passfile=DIR\\,WITH\\,COMMA/pw" \
	mount -t fuse.encfs-gpu "$C" "$M" -o "passfile=$tmp/a\\,b/pw"

# --- 4. the errors an fstab line can make ----------------------------------------------
# expect_refused NAME REGEX MOUNT-ARGS...: mount fails, says REGEX, mounts nothing
expect_refused() {
	local name=$1 re=$2 rc
	shift 2
	mount "$@" >"$tmp/refused.log" 2>&1
	rc=$?
	if [ "$rc" != 0 ] && grep -qE -- "$re" "$tmp/refused.log" && ! mountpoint -q "$M"; then
		ok "$name (mount exits $rc)"
	else
		sed 's/^/    /' "$tmp/refused.log"
		notok "$name (mount exits $rc)"
		mountpoint -q "$M" && umount "$M"
	fi
}
echo "wrong password" >"$tmp/wrong"
expect_refused "a wrong password in the passfile: refused, says so" 'wrong password' \
	-t fuse.encfs-gpu "$C" "$M" -o "passfile=$tmp/wrong"
expect_refused "passfile= with no value: a usage error" 'passfile= needs a value' \
	-t fuse.encfs-gpu "$C" "$M" -o passfile=
expect_refused "backend=tpu: unknown backend" 'unknown backend' \
	-t fuse.encfs-gpu "$C" "$M" -o "passfile=$PW,backend=tpu"
expect_refused "a cipher directory that is none: points at init" 'encfs-gpu init' \
	-t fuse.encfs-gpu "$tmp" "$M" -o "passfile=$PW"

# --- 5. uninstall ------------------------------------------------------------------------
umount /usr/local/bin
if make --no-print-directory uninstall PREFIX="$prefix" >"$tmp/uninstall.log" 2>&1; then
	left=$(find "$prefix" ! -type d | sed "s|^$prefix/||")
	[ -z "$left" ] || while read -r l; do echo "    left: $l"; done <<<"$left"
	check "make uninstall PREFIX=\$tmp/prefix removes every file" [ -z "$left" ]
else
	sed 's/^/    /' "$tmp/uninstall.log" | tail -10
	notok "make uninstall PREFIX=\$tmp/prefix removes every file"
fi

finish
