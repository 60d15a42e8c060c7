#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# tests/deb/deb_test.sh - the Debian packages, built, read, installed on this
# machine, used, removed (`make check-deb`).
#
#   make deb-build         build/deb/{ptask-dkms,ptaskd,libptask1,
#                          libptask-dev,encfs-gpu}_*.deb (timed)
#   dpkg-deb -c / -f / -x  each package holds what it should; no file in
#                          two packages; every file `make install` puts
#                          under /usr is in some package
#   dpkg -i (root only, and only when none of them is installed already:
#   the test never replaces packages it did not install)
#     ptask-dkms   DKMS builds and installs ptask.ko for every kernel
#                  with headers (modinfo: its vermagic)
#     ptaskd       /usr/sbin/ptaskd --mode user --backend cpu on a private
#                  socket; ptaskctl info against it
#     libptask-dev a program built with the system's pkg-config runs a
#                  CPU ptask through it (libptask.so.1 from ldconfig)
#     encfs-gpu    mount -t fuse.encfs-gpu (mount.fuse3 finds /usr/bin/
#                  encfs-gpu), a file written and read back, umount: in a
#                  private mount namespace
#   dpkg --purge           every file gone, DKMS's module and tree gone
#
# TAP, then "N passed, M failed, K skipped"; exits 1 on any failure.
set -uo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 1
CC=${CC:-cc}
DEB_DIR=build/deb
PACKAGES=(ptask-dkms ptaskd libptask1 libptask-dev encfs-gpu)

# shellcheck source=tests/tap.sh
. "$root/tests/tap.sh"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/ptask-deb.XXXXXX")
installed_by_us=
daemon_pid=
# shellcheck disable=SC2317 # called by the trap
cleanup() {
	if [ -n "$daemon_pid" ]; then
		kill -KILL "$daemon_pid" 2>/dev/null
		wait "$daemon_pid" 2>/dev/null
	fi
	# a test that stops half-way must not leave its packages installed
	[ -z "$installed_by_us" ] || dpkg_locked --purge "${PACKAGES[@]}" >/dev/null 2>&1
	rm -rf "$tmp"
}
trap cleanup EXIT

# dpkg_locked ARGS...: dpkg, waiting (up to 5 min) while another apt or
# dpkg holds the lock: `make deps` may be running beside the test
dpkg_locked() {
	local rc
	for _ in $(seq 60); do
		dpkg "$@" 2>"$tmp/dpkg.err"
		rc=$?
		if [ "$rc" = 0 ] || ! grep -qi 'lock' "$tmp/dpkg.err"; then
			break
		fi
		sleep 5
	done
	cat "$tmp/dpkg.err" >&2
	return "$rc"
}

# --- 1. build ------------------------------------------------------------------------
t0=$(date +%s.%N)
if ! make --no-print-directory deb-build >"$tmp/build.log" 2>&1; then
	sed 's/^/    /' "$tmp/build.log" | tail -30
	notok "make deb-build (dpkg-buildpackage -us -uc -b)"
	finish
fi
t1=$(date +%s.%N)
version=$(dpkg-parsechangelog -l debian/changelog -S Version)
upstream=${version%-*}
arch=$(dpkg --print-architecture)
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
declare -A deb
for p in "${PACKAGES[@]}"; do
	a=$arch
	[ "$p" = ptask-dkms ] && a=all
	deb[$p]=$DEB_DIR/${p}_${version}_$a.deb
done
missing=()
for p in "${PACKAGES[@]}"; do [ -f "${deb[$p]}" ] || missing+=("${deb[$p]}"); done
[ "${#missing[@]}" = 0 ] || echo "    missing: ${missing[*]}"
check "make deb-build: ${#PACKAGES[@]} packages in $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.0f", b - a }') s" \
	[ "${#missing[@]}" = 0 ]
[ "${#missing[@]}" = 0 ] || finish

# --- 2. contents -----------------------------------------------------------------------
for p in "${PACKAGES[@]}"; do
	# the files and links, "./" stripped, links without their target
	dpkg-deb -c "${deb[$p]}" | awk '$1 !~ /^d/ { print substr($6, 2) }' | sort >"$tmp/$p.files"
	mkdir -p "$tmp/x/$p" && dpkg-deb -x "${deb[$p]}" "$tmp/x/$p"
done
# shellcheck disable=SC2317 # called through check
has_all() { # PACKAGE FILE...: the package holds every FILE
	local p=$1 f miss=()
	shift
	for f in "$@"; do grep -qxF -- "$f" "$tmp/$p.files" || miss+=("$f"); done
	[ "${#miss[@]}" = 0 ] || echo "    $p lacks: ${miss[*]}"
	[ "${#miss[@]}" = 0 ]
}
field() { dpkg-deb -f "${deb[$1]}" "$2"; }

lib=/usr/lib/$multiarch
check "ptaskd: ptaskd in /usr/sbin, ptaskctl, the unit, their man pages" has_all ptaskd \
	/usr/sbin/ptaskd /usr/bin/ptaskctl /lib/systemd/system/ptaskd.service \
	/usr/share/man/man8/ptaskd.8.gz /usr/share/man/man8/ptaskctl.8.gz
check "ptaskd: the unit starts /usr/sbin/ptaskd" grep -qx 'ExecStart=/usr/sbin/ptaskd --mode auto' \
	"$tmp/x/ptaskd/lib/systemd/system/ptaskd.service"
check "ptaskd: dh_installsystemd enables the unit (postinst)" \
	grep -q 'deb-systemd-helper.*ptaskd.service' <(dpkg-deb -I "${deb[ptaskd]}" postinst)
check "libptask1: libptask.so.1 -> libptask.so.1.0, and nothing else" \
	[ "$(cat "$tmp/libptask1.files")" = "$lib/libptask.so.1
$lib/libptask.so.1.0
/usr/share/doc/libptask1/changelog.gz
/usr/share/doc/libptask1/copyright" ]
check "libptask1: soname libptask.so.1, a symbols file" bash -c "
	readelf -d '$tmp/x/libptask1$lib/libptask.so.1.0' | grep -q 'SONAME.*\[libptask\.so\.1\]' &&
	dpkg-deb -I '${deb[libptask1]}' symbols | grep -q '^libptask.so.1 libptask1'"
map_syms=$(sed -n '/global:/,/local:/p' libptask/libptask.map |
	grep -oE '^[[:space:]]*[a-z_0-9]+;' | tr -d ' \t;' | sort)
pages=()
for s in $map_syms; do pages+=("/usr/share/man/man3/$s.3.gz"); done
headers=(/usr/include/ptask/libptask.h)
for h in uapi/*.h; do headers+=("/usr/include/ptask/${h#uapi/}"); done
check "libptask-dev: headers, libptask.so, .a, libptask.pc, ptask(7), a page per function" \
	has_all libptask-dev "${headers[@]}" "$lib/libptask.so" "$lib/libptask.a" \
	"$lib/pkgconfig/libptask.pc" /usr/share/man/man7/ptask.7.gz "${pages[@]}"
check "libptask-dev: libptask.pc's libdir is the multiarch one" \
	grep -qx "libdir=\${prefix}/lib/$multiarch" "$tmp/x/libptask-dev$lib/pkgconfig/libptask.pc"
check "libptask-dev: depends on libptask1 (= $version)" \
	grep -qF "libptask1 (= $version)" <(field libptask-dev Depends)
check "encfs-gpu: encfs-gpu, its man page; depends on fuse3 (mount.fuse3)" bash -c "
	grep -qxF /usr/bin/encfs-gpu '$tmp/encfs-gpu.files' &&
	grep -qxF /usr/share/man/man1/encfs-gpu.1.gz '$tmp/encfs-gpu.files' &&
	grep -qE '(^|, )fuse3(,|$)' <<<'$(field encfs-gpu Depends)'"
src=/usr/src/ptask-$upstream
check "ptask-dkms: kmod/dkms.conf for ptask $upstream, Kbuild, kmod/core/ (a copy), uapi" \
	bash -c "grep -qx 'PACKAGE_VERSION=\"$upstream\"' '$tmp/x/ptask-dkms$src/dkms.conf' &&
	cmp -s kmod/dkms.conf '$tmp/x/ptask-dkms$src/dkms.conf' &&
	[ ! -L '$tmp/x/ptask-dkms$src/kmod/core' ] && [ -f '$tmp/x/ptask-dkms$src/kmod/core/ns.c' ] &&
	[ -f '$tmp/x/ptask-dkms$src/kmod/Kbuild' ] && [ -f '$tmp/x/ptask-dkms$src/uapi/ptask.h' ]"
# every object Kbuild names has its source, and no build output came along
kbuild_srcs=$(grep -oE '[a-z_/]+\.o' kmod/Kbuild | grep -v '^ptask\.o$' | sed 's/\.o$/.c/' | sort -u)
miss=()
for s in $kbuild_srcs; do [ -f "$tmp/x/ptask-dkms$src/kmod/$s" ] || miss+=("$s"); done
[ "${#miss[@]}" = 0 ] || echo "    missing sources: ${miss[*]}"
check "ptask-dkms: a source for each of Kbuild's $(wc -w <<<"$kbuild_srcs") objects" [ "${#miss[@]}" = 0 ]
check "ptask-dkms: no objects, .ko or .mod.c" bash -c \
	"! grep -E '\\.(o|ko|mod|mod\\.c|cmd)$' '$tmp/ptask-dkms.files'"
check "ptask-dkms: depends on dkms" grep -q dkms <(field ptask-dkms Depends)
dups=$(cat "$tmp"/*.files | grep -v '^/usr/share/doc/' | sort | uniq -d)
[ -z "$dups" ] || echo "    in two packages: $dups"
check "no file in two packages" [ -z "$dups" ]
# what `make install` installs with the packages' settings, all packaged
if make --no-print-directory install DESTDIR="$tmp/inst" PREFIX=/usr SBINDIR=/usr/sbin \
	LIBDIR="$lib" SYSTEMDUNITDIR=/lib/systemd/system INSTALL_EXAMPLES= \
	>"$tmp/install.log" 2>&1; then
	unpackaged=()
	while read -r f; do
		case "$f" in /usr/share/man/*) f=$f.gz ;; esac
		grep -qxF -- "$f" <(cat "$tmp"/*.files) || unpackaged+=("$f")
	done < <(cd "$tmp/inst" && find . ! -type d | sed 's|^\.||' | sort)
	[ "${#unpackaged[@]}" = 0 ] || echo "    not in any package: ${unpackaged[*]}"
	check "every file make install installs is in a package" [ "${#unpackaged[@]}" = 0 ]
else
	sed 's/^/    /' "$tmp/install.log" | tail -10
	notok "every file make install installs is in a package"
fi

# --- 3. installed ------------------------------------------------------------------------
why_not=
if [ "$(id -u)" != 0 ]; then
	why_not="not root"
else
	for p in "${PACKAGES[@]}"; do
		if dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null | grep -qx installed; then
			why_not="$p is installed already (not replaced by a test)"
			break
		fi
	done
fi
if [ -n "$why_not" ]; then
	skip "dpkg -i, use, dpkg --purge" "$why_not"
	finish
fi

debs=()
for p in "${PACKAGES[@]}"; do debs+=("${deb[$p]}"); done
installed_by_us=1
t0=$(date +%s)
if ! dpkg_locked -i "${debs[@]}" >"$tmp/dpkg-i.log" 2>&1; then
	sed 's/^/    /' "$tmp/dpkg-i.log" | tail -30
	notok "dpkg -i the ${#PACKAGES[@]} packages"
	finish
fi
ok "dpkg -i the ${#PACKAGES[@]} packages ($(($(date +%s) - t0)) s, the DKMS build included)"
check "dpkg: all ${#PACKAGES[@]} installed" bash -c "
	[ \$(dpkg-query -W -f='\${db:Status-Status}\n' ${PACKAGES[*]} | grep -cx installed) = ${#PACKAGES[@]} ]"

# DKMS: a module for each kernel that has its headers
kernels=()
for k in /lib/modules/*/; do
	k=$(basename "$k")
	[ -f "/lib/modules/$k/build/Makefile" ] && kernels+=("$k")
done
if [ "${#kernels[@]}" = 0 ]; then
	skip "DKMS built ptask.ko" "no kernel has its headers installed"
else
	for k in "${kernels[@]}"; do
		ko=$(find "/lib/modules/$k/updates" -name 'ptask.ko*' 2>/dev/null | head -1)
		check "DKMS built and installed ptask.ko for $k" bash -c "
			dkms status -m ptask -v '$upstream' -k '$k' | grep -q ': installed' &&
			[ -n '$ko' ] && modinfo -F vermagic '$ko' | grep -q '^$k '"
	done
fi

# (/lib is /usr/lib on a merged-/usr system: the cache may name either)
check "ldconfig knows libptask.so.1" bash -c "ldconfig -p | grep -q 'libptask.so.1 .*/lib/$multiarch/libptask.so.1\$'"
cat >"$tmp/hello.c" <<'PROG'
#include <stdio.h>
#include <string.h>
#include <libptask.h>

/* one CPU ptask: out[i] = in[i] + 1 */
static int inc(struct ptask_cpu_call *call, void *arg)
{
	const int *in = call->ports[0].data;
	int *out = call->ports[1].data;

	(void)arg;
	for (int i = 0; i < 4; i++)
		out[i] = in[i] + 1;
	return 0;
}

int main(int argc, char *argv[])
{
	uint32_t dims[3] = { 4, 1, 1 }, g, t, p, pin, pout, cin, cout;
	struct ptask_ctx *ctx;
	struct ptask_db *db;
	int *v, err;

	if (argc != 2)
		return 2;
	if ((err = ptask_ctx_open(PTASK_MODE_USER, argv[1], &ctx)) ||
	    (err = ptask_graph_open(ctx, "", PTASK_GRAPH_CREATE, 0600, &g)) ||
	    (err = ptask_template_open(ctx, g, "ints", PTASK_TEMPLATE_ARRAY,
				       PTASK_BIND_GLOBAL, sizeof(int), dims, &t)) ||
	    (err = ptask_cpu_ptask_open(ctx, g, "inc", 2, inc, NULL, &p)) ||
	    (err = ptask_port_open(ctx, p, "in", PTASK_PORT_INPUT, 0, t, 0, 0, &pin)) ||
	    (err = ptask_port_open(ctx, p, "out", PTASK_PORT_OUTPUT, 0, t, 1, 0, &pout)) ||
	    (err = ptask_channel_open(ctx, g, "in", 0, pin, 4, t, &cin)) ||
	    (err = ptask_channel_open(ctx, g, "out", pout, 0, 4, t, &cout)) ||
	    (err = ptask_graph_run(ctx, g)) ||
	    (err = ptask_datablock_create(ctx, t, 0, 0, &db)) ||
	    (err = ptask_datablock_map(ctx, db, (void **)&v)))
		goto fail;
	for (int i = 0; i < 4; i++)
		v[i] = 10 * i;
	if ((err = ptask_push(ctx, cin, db, -1, PTASK_FOREVER)) ||
	    (err = ptask_datablock_release(ctx, db)) ||
	    (err = ptask_pull(ctx, cout, 10000000000LL, &db)) ||
	    (err = ptask_datablock_map(ctx, db, (void **)&v)))
		goto fail;
	printf("%d %d %d %d (%s mode)\n", v[0], v[1], v[2], v[3],
	       ptask_mode_name(ptask_ctx_mode(ctx)));
	ptask_datablock_release(ctx, db);
	ptask_ctx_close(ctx);
	return 0;
fail:
	fprintf(stderr, "hello: %s\n", strerror(-err));
	return 1;
}
PROG
# the system's pkg-config, the system's headers and library: nothing of the tree
# shellcheck disable=SC2046 # the flags are words
check "cc hello.c \$(pkg-config --cflags --libs libptask) against the installed package" \
	env -u PKG_CONFIG_PATH "$CC" -std=gnu11 -Wall -Wextra -Werror -o "$tmp/hello" "$tmp/hello.c" \
	$(env -u PKG_CONFIG_PATH pkg-config --cflags --libs libptask)
sock=$tmp/ptaskd.sock
/usr/sbin/ptaskd --mode user --backend cpu --socket "$sock" >"$tmp/ptaskd.log" 2>&1 &
daemon_pid=$!
for _ in $(seq 100); do
	[ -S "$sock" ] && break
	kill -0 "$daemon_pid" 2>/dev/null || break
	sleep 0.1
done
if [ -S "$sock" ]; then
	ok "/usr/sbin/ptaskd --mode user --backend cpu listens"
	check "hello: a CPU ptask through the packaged ptaskd and libptask.so.1" grep -qx \
		'1 11 21 31 (user mode)' <(timeout 30 "$tmp/hello" "$sock" 2>&1)
	check "hello ran on the packaged libptask.so.1" \
		grep -q "libptask.so.1 => .*/lib/$multiarch/libptask.so.1 " <(ldd "$tmp/hello")
	check "/usr/bin/ptaskctl info: user mode, backend cpu" grep -qx 'backend: cpu' \
		<(timeout 10 /usr/bin/ptaskctl --mode user --socket "$sock" info 2>&1)
	kill -TERM "$daemon_pid"
	wait "$daemon_pid"
	rc=$?
	daemon_pid=
	check "ptaskd exits 0 on SIGTERM" [ "$rc" = 0 ]
else
	sed 's/^/    ptaskd: /' "$tmp/ptaskd.log" | tail -10
	notok "/usr/sbin/ptaskd --mode user --backend cpu listens"
fi
if command -v systemd-analyze >/dev/null; then
	check "systemd-analyze verify the installed ptaskd.service" \
		systemd-analyze verify --man=no /lib/systemd/system/ptaskd.service
else
	skip "systemd-analyze verify the installed ptaskd.service" "no systemd-analyze"
fi
if command -v man >/dev/null; then
	check "man finds encfs-gpu(1), ptaskd(8), ptask(7), ptask_push(3)" bash -c \
		"{ man -w encfs-gpu && man -w 8 ptaskd && man -w 7 ptask && man -w 3 ptask_push; } >/dev/null"
else
	skip "man finds the pages" "no man-db"
fi

# encfs-gpu as an administrator mounts it (a private mount namespace, so
# nothing is seen outside; /dev/fuse and mount.fuse3 as in tests/encfs)
if [ -c /dev/fuse ] && command -v unshare >/dev/null; then
	mkdir -p "$tmp/c" "$tmp/m"
	echo "deb test password" >"$tmp/pw"
	# shellcheck disable=SC2016 # the script's own variables
	unshare --mount --propagation private bash -c '
		set -e
		c=$1 m=$2 pw=$3
		encfs-gpu init --scrypt-logn 10 --passfile "$pw" "$c" >/dev/null 2>&1
		mount -t fuse.encfs-gpu "$c" "$m" -o "passfile=$pw,backend=cpu"
		echo "through the package" >"$m/f"
		umount "$m"
		mount -t fuse.encfs-gpu "$c" "$m" -o "passfile=$pw"
		trap "umount $m" EXIT
		[ "$(cat "$m/f")" = "through the package" ]
		[ "$(findmnt -rn -o SOURCE,FSTYPE --mountpoint "$m")" = "$c fuse.encfs-gpu" ]
	' mount-test "$tmp/c" "$tmp/m" "$tmp/pw" >"$tmp/encfs.log" 2>&1
	rc=$?
	[ "$rc" = 0 ] || sed 's/^/    /' "$tmp/encfs.log" | tail -10
	check "mount -t fuse.encfs-gpu with the packaged /usr/bin/encfs-gpu: write, remount, read" \
		[ "$rc" = 0 ]
else
	skip "mount -t fuse.encfs-gpu with the packaged encfs-gpu" "no /dev/fuse or unshare"
fi

# --- 4. removed ------------------------------------------------------------------------
if dpkg_locked --purge "${PACKAGES[@]}" >"$tmp/dpkg-r.log" 2>&1; then
	installed_by_us=
	ok "dpkg --purge the ${#PACKAGES[@]} packages"
else
	sed 's/^/    /' "$tmp/dpkg-r.log" | tail -20
	notok "dpkg --purge the ${#PACKAGES[@]} packages"
fi
left=()
while read -r f; do
	[ -e "$f" ] || [ -L "$f" ] && left+=("$f")
done < <(cat "$tmp"/*.files)
for k in ${kernels[@]+"${kernels[@]}"}; do
	ko=$(find "/lib/modules/$k/updates" -name 'ptask.ko*' 2>/dev/null | head -1)
	[ -z "$ko" ] || left+=("$ko")
done
[ ! -e "/var/lib/dkms/ptask" ] || left+=(/var/lib/dkms/ptask)
[ "${#left[@]}" = 0 ] || printf '    left: %s\n' "${left[@]}"
check "after the purge: no packaged file, no DKMS module or tree left" [ "${#left[@]}" = 0 ]

finish
