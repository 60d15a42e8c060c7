#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# tests/daemon/install_test.sh - `make install` into a staging tree, and a
# program built from that tree with pkg-config runs against the installed
# daemon.
#
#   make install DESTDIR=$tmp/root PREFIX=/usr
#     $tmp/root/usr/bin/{ptaskd,ptaskctl,encfs-gpu}  usr/lib/libptask.so*  .a
#     usr/include/ptask/ (libptask.h, uapi/*.h)  usr/lib/pkgconfig/libptask.pc
#     usr/share/man/man{1,3,7,8}  usr/lib/systemd/system/ptaskd.service
#
#   $tmp/root/usr/bin/ptaskd --mode user --backend cpu --socket $tmp/s
#        ^  SOCK_SEQPACKET, memfd datablocks
#        |
#   $tmp/hello $tmp/s      cc $(pkg-config --cflags --libs libptask),
#                          LD_LIBRARY_PATH=$tmp/root/usr/lib
#       [in] -> twice (a CPU ptask hello runs itself) -> [out]
#       pushes 0..15, pulls 2i+1
#
# Then: the same program linked with libptask.a, each installed header
# compiled alone, ptaskctl info against the daemon, SIGTERM stops the
# daemon, `make uninstall` leaves nothing.  (encfs-gpu's mounts through
# mount(8) and fstab: tests/encfs/mount_test.sh.)
# Prints TAP ("ok"/"not ok" lines, the plan last), then "N passed, M
# failed, K skipped"; exits 1 on any failure.  Needs cc, make and
# pkg-config; man-db and systemd-analyze only for the checks that say so
# (skipped without them).
set -uo pipefail
# the project's warning flags (make exports them), for programs built here
# shellcheck disable=SC2206 # a list of flags
warn=(${PTASK_WARN_FLAGS:--Wall -Wextra -Werror})

root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 1
CC=${CC:-cc}

# shellcheck source=tests/tap.sh
. "$root/tests/tap.sh"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/ptask-install.XXXXXX")
dest=$tmp/root
usr=$dest/usr
daemon_pid=
# shellcheck disable=SC2317 # called by the trap
cleanup() {
	if [ -n "$daemon_pid" ] && kill -0 "$daemon_pid" 2>/dev/null; then
		kill -KILL "$daemon_pid" 2>/dev/null
		wait "$daemon_pid" 2>/dev/null
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT

# The top Makefile includes install.mk; until it does, name it here.
mk=(make --no-print-directory)
grep -qE '^[[:space:]]*-?include[[:space:]]+install\.mk' Makefile ||
	mk+=(-f Makefile -f install.mk)

# --- 1. install ---------------------------------------------------------------
if ! "${mk[@]}" install DESTDIR="$dest" PREFIX=/usr >"$tmp/install.log" 2>&1; then
	sed 's/^/    /' "$tmp/install.log" | tail -20
	notok "make install DESTDIR=... PREFIX=/usr"
	finish
fi
ok "make install DESTDIR=... PREFIX=/usr"

missing=()
uapi_headers=()
for h in uapi/*.h; do uapi_headers+=("include/ptask/${h#uapi/}"); done
for f in bin/ptaskd bin/ptaskctl bin/encfs-gpu lib/libptask.so.1.0 lib/libptask.a \
	include/ptask/libptask.h "${uapi_headers[@]}" lib/pkgconfig/libptask.pc \
	share/man/man1/encfs-gpu.1 share/man/man3/ptask_ctx_open.3 share/man/man7/ptask.7 \
	share/man/man8/ptaskd.8 share/man/man8/ptaskctl.8 \
	lib/systemd/system/ptaskd.service 'lib/systemd/system/ptaskd-exec@.service'; do
	[ -f "$usr/$f" ] || missing+=("$f")
done
[ "${#missing[@]}" = 0 ] || echo "    missing: ${missing[*]}"
check "the installed file list" [ "${#missing[@]}" = 0 ]
links="$(readlink "$usr/lib/libptask.so.1") $(readlink "$usr/lib/libptask.so")"
check "libptask.so.1 -> libptask.so.1.0, libptask.so -> libptask.so.1 ($links)" \
	[ "$links" = "libptask.so.1.0 libptask.so.1" ]
check "soname libptask.so.1" \
	grep -q 'SONAME.*\[libptask\.so\.1\]' <(readelf -d "$usr/lib/libptask.so.1.0")

# Exported symbols are exactly libptask.map's, and each has a man page.
map_syms=$(sed -n '/global:/,/local:/p' libptask/libptask.map |
	grep -oE '^[[:space:]]*[a-z_0-9]+;' | tr -d ' \t;' | sort)
so_syms=$(nm -D --defined-only "$usr/lib/libptask.so.1.0" |
	awk '$2 ~ /^[TWDBR]$/ { sub(/@.*/, "", $3); print $3 }' | sort -u)
check "exported symbols = libptask.map" [ "$map_syms" = "$so_syms" ]
nopage=()
for s in $map_syms; do
	[ -f "$usr/share/man/man3/$s.3" ] || nopage+=("$s")
done
[ "${#nopage[@]}" = 0 ] || echo "    no page: ${nopage[*]}"
check "a man(3) page for every exported function" [ "${#nopage[@]}" = 0 ]

# shellcheck disable=SC2317 # called through check
no_destdir() { ! grep -qF -- "$dest" "$usr/lib/pkgconfig/libptask.pc" \
	"$usr/lib/systemd/system/ptaskd.service"; }
check "no DESTDIR in libptask.pc or ptaskd.service" no_destdir
check "ptaskd.service: ExecStart=/usr/bin/ptaskd" \
	grep -qx 'ExecStart=/usr/bin/ptaskd --mode auto' "$usr/lib/systemd/system/ptaskd.service"
check "ptaskd-exec@.service: ExecStart=/usr/bin/ptaskd --exec-uid %i" \
	grep -qx 'ExecStart=/usr/bin/ptaskd --mode kernel --exec-uid %i' \
	"$usr/lib/systemd/system/ptaskd-exec@.service"

# --- 2. man pages and the unit, with the tools that check them ------------------
if command -v man >/dev/null && command -v lexgrog >/dev/null; then
	bad=()
	for p in "$usr"/share/man/man[1378]/*.[1378]; do
		rel=${p#"$usr/share/man/"}
		if ! grep -q '^\.so ' "$p"; then
			w=$(LC_ALL=C.UTF-8 MANROFFSEQ='' MANWIDTH=80 \
				man --warnings -E UTF-8 -l "$p" 2>&1 >/dev/null)
			[ -z "$w" ] || bad+=("$rel: $w")
		fi
		(cd "$usr/share/man" && lexgrog "$rel" >/dev/null 2>&1) ||
			bad+=("$rel: lexgrog")
	done
	[ "${#bad[@]}" = 0 ] || printf '    %s\n' "${bad[@]}"
	check "man pages: no groff warnings, lexgrog parses each" [ "${#bad[@]}" = 0 ]
else
	skip "man pages: no groff warnings, lexgrog parses each" "no man-db"
fi
if command -v systemd-analyze >/dev/null; then
	# The installed unit, with ExecStart= at the staged ptaskd (verify wants
	# it to exist) and no man lookups (the pages are staged, not installed).
	mkdir -p "$tmp/unit"
	sed "s|^ExecStart=/usr/bin/|ExecStart=$usr/bin/|" \
		"$usr/lib/systemd/system/ptaskd.service" >"$tmp/unit/ptaskd.service"
	if systemd-analyze verify --man=no "$tmp/unit/ptaskd.service" \
		>"$tmp/verify.log" 2>&1; then
		ok "systemd-analyze verify ptaskd.service"
	else
		sed 's/^/    /' "$tmp/verify.log" | head -10
		notok "systemd-analyze verify ptaskd.service"
	fi
	# the template, as the instance for uid 1000
	sed "s|^ExecStart=/usr/bin/|ExecStart=$usr/bin/|" \
		"$usr/lib/systemd/system/ptaskd-exec@.service" \
		>"$tmp/unit/ptaskd-exec@.service"
	if systemd-analyze verify --man=no "$tmp/unit/ptaskd-exec@1000.service" \
		>"$tmp/verify.log" 2>&1; then
		ok "systemd-analyze verify ptaskd-exec@1000.service"
	else
		sed 's/^/    /' "$tmp/verify.log" | head -10
		notok "systemd-analyze verify ptaskd-exec@1000.service"
	fi
else
	skip "systemd-analyze verify ptaskd.service" "no systemd-analyze"
	skip "systemd-analyze verify ptaskd-exec@1000.service" "no systemd-analyze"
fi

# --- 3. a program built against the installed tree ------------------------------
cat >"$tmp/hello.c" <<'PROG'
#include <stdio.h>
#include <string.h>
#include <libptask.h>

#define N 16
#define TRY(call) do {							\
	int err_ = (call);						\
	if (err_ < 0) {							\
		fprintf(stderr, "hello: %s: %s\n", #call, strerror(-err_)); \
		return 1;						\
	}								\
} while (0)

static int twice(struct ptask_cpu_call *call, void *arg)
{
	const int *in = call->ports[0].data;
	int *out = call->ports[1].data;

	(void)arg;
	for (int i = 0; i < N; i++)
		out[i] = 2 * in[i] + 1;
	return 0;
}

int main(int argc, char *argv[])
{
	uint32_t dims[3] = { N, 1, 1 }, g, t, p, pin, pout, cin, cout;
	struct ptask_ctx *ctx;
	struct ptask_db *db, *res;
	int *v;

	if (argc != 2)
		return 2;
	TRY(ptask_ctx_open(PTASK_MODE_USER, argv[1], &ctx));
	TRY(ptask_graph_open(ctx, "", PTASK_GRAPH_CREATE, 0600, &g));
	TRY(ptask_template_open(ctx, g, "ints", PTASK_TEMPLATE_ARRAY,
				PTASK_BIND_GLOBAL, sizeof(int), dims, &t));
	TRY(ptask_cpu_ptask_open(ctx, g, "twice", 2, twice, NULL, &p));
	TRY(ptask_port_open(ctx, p, "in", PTASK_PORT_INPUT, 0, t, 0, 0, &pin));
	TRY(ptask_port_open(ctx, p, "out", PTASK_PORT_OUTPUT, 0, t, 1, 0, &pout));
	TRY(ptask_channel_open(ctx, g, "in", 0, pin, 4, t, &cin));
	TRY(ptask_channel_open(ctx, g, "out", pout, 0, 4, t, &cout));
	TRY(ptask_graph_run(ctx, g));

	TRY(ptask_datablock_create(ctx, t, 0, 0, &db));
	TRY(ptask_datablock_map(ctx, db, (void **)&v));
	for (int i = 0; i < N; i++)
		v[i] = i;
	TRY(ptask_push(ctx, cin, db, -1, PTASK_FOREVER));
	TRY(ptask_datablock_release(ctx, db));
	TRY(ptask_pull(ctx, cout, 10000000000LL, &res));
	TRY(ptask_datablock_map(ctx, res, (void **)&v));
	if (ptask_db_bytes(res) != N * sizeof(int)) {
		fprintf(stderr, "hello: %llu bytes back\n",
			(unsigned long long)ptask_db_bytes(res));
		return 1;
	}
	for (int i = 0; i < N; i++) {
		if (v[i] != 2 * i + 1) {
			fprintf(stderr, "hello: v[%d] = %d\n", i, v[i]);
			return 1;
		}
	}
	TRY(ptask_datablock_release(ctx, res));
	TRY(ptask_graph_close(ctx, g));
	printf("hello: %s mode, %d values through a CPU ptask\n",
	       ptask_mode_name(ptask_ctx_mode(ctx)), N);
	ptask_ctx_close(ctx);
	return 0;
}
PROG

export PKG_CONFIG_PATH=$usr/lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=$dest
export PKG_CONFIG_LIBDIR=$usr/lib/pkgconfig	# nothing from the host
pc_flags=$(pkg-config --cflags --libs libptask 2>"$tmp/pc.err")
pc_version=$(pkg-config --modversion libptask 2>>"$tmp/pc.err")
sed 's/^/    /' "$tmp/pc.err"
check "pkg-config libptask $pc_version: ${pc_flags% }" \
	[ "${pc_flags:+set}:$pc_version" = set:1.0 ]
# shellcheck disable=SC2086 # the flags are words
check "cc hello.c \$(pkg-config --cflags --libs libptask)" \
	"$CC" -std=gnu11 "${warn[@]}" -o "$tmp/hello" "$tmp/hello.c" $pc_flags
# The example program of ptask(7), as the installed page has it.
awk '/^\.EX/ { n++; on = (n == 1); next } /^\.EE/ { on = 0 } on' \
	"$usr/share/man/man7/ptask.7" | sed -e 's/\\e/\\/g' -e 's/\\-/-/g' >"$tmp/twice.c"
# shellcheck disable=SC2086
check "cc ptask(7)'s example \$(pkg-config ...)" \
	"$CC" -std=gnu11 "${warn[@]}" -o "$tmp/twice" "$tmp/twice.c" $pc_flags
# Every installed header compiles on its own with pkg-config's flags, as
# the first include of a program (it includes what it needs, by the names
# it has once installed).
# shellcheck disable=SC2317 # called through check
headers_alone() {
	local h bad=0 flags
	flags=$(pkg-config --cflags libptask) || return 1
	for h in "$usr"/include/ptask/*.h; do
		# shellcheck disable=SC2086 # the flags are words
		if ! printf '#include <%s>\nint main(void) { return 0; }\n' "${h##*/}" |
			"$CC" -std=gnu11 "${warn[@]}" $flags -x c -o /dev/null - \
			2>"$tmp/header.err"; then
			sed "s/^/    ${h##*/}: /" "$tmp/header.err" | head -5
			bad=1
		fi
	done
	[ "$bad" = 0 ]
}
check "each installed header compiles alone (cc -I\$(pkg-config --cflags))" headers_alone
# shellcheck disable=SC2046
check "cc hello.c libptask.a \$(pkg-config --static --libs) (static libptask)" \
	"$CC" -std=gnu11 "${warn[@]}" -o "$tmp/hello-static" "$tmp/hello.c" \
	$(pkg-config --cflags libptask) "$usr/lib/libptask.a" \
	$(pkg-config --static --libs-only-l libptask | sed 's/-lptask//')

# --- 4. against the installed daemon ---------------------------------------------
run_hello() { # NAME PROGRAM
	if [ ! -x "$2" ]; then
		skip "$1" "not built"
	elif LD_LIBRARY_PATH=$usr/lib timeout 30 "$2" "$sock" >"$tmp/hello.out" 2>&1; then
		ok "$1"
	else
		sed 's/^/    /' "$tmp/hello.out"
		notok "$1"
	fi
}
# The checks that need the daemon running.
daemon_checks() {
	run_hello "hello (libptask.so): push 0..15 through a CPU ptask, pull 2i+1" "$tmp/hello"
	check "hello ran on the installed libptask.so.1" \
		grep -q "$usr/lib/libptask.so.1" \
		<(LD_LIBRARY_PATH=$usr/lib ldd "$tmp/hello" 2>/dev/null)
	run_hello "hello (libptask.a): the same" "$tmp/hello-static"
	check "ptask(7)'s example prints what the page says" grep -qx \
		'1 3 5 7 9 11 13 15 17 19 21 23 25 27 29 31 (user mode)' \
		<(PTASK_SOCKET=$sock PTASK_MODE=user LD_LIBRARY_PATH=$usr/lib \
			timeout 30 "$tmp/twice" 2>&1)

	check "ptaskctl info: user mode, backend cpu" \
		grep -qxE 'backend: cpu' <(timeout 30 "$usr/bin/ptaskctl" --mode user --socket "$sock" info 2>&1)
	if command -v python3 >/dev/null; then
		check "ptaskctl --json info parses" python3 -c 'import json, sys
d = json.load(sys.stdin)
assert d["mode"] == "user" and d["backend"] == "cpu", d' < <(PTASK_SOCKET=$sock timeout 30 "$usr/bin/ptaskctl" --json --mode user info 2>&1)
	else
		skip "ptaskctl --json info parses" "no python3"
	fi

	kill -TERM "$daemon_pid"
	stopped=
	for _ in $(seq 300); do
		kill -0 "$daemon_pid" 2>/dev/null || { stopped=1; break; }
		sleep 0.1
	done
	if [ -n "$stopped" ]; then
		wait "$daemon_pid"
		rc=$?
		daemon_pid=
		check "SIGTERM: ptaskd exits 0 (status $rc)" [ "$rc" = 0 ]
	else
		notok "SIGTERM: ptaskd exits within 30 s"
	fi
}

sock=$tmp/s
"$usr/bin/ptaskd" --mode user --backend cpu --socket "$sock" >"$tmp/ptaskd.log" 2>&1 &
daemon_pid=$!
for _ in $(seq 300); do
	[ -S "$sock" ] && break
	kill -0 "$daemon_pid" 2>/dev/null || break
	sleep 0.1
done
if [ -S "$sock" ]; then
	ok "ptaskd --mode user --backend cpu --socket \$tmp/s listens"
	daemon_checks
else
	sed 's/^/    ptaskd: /' "$tmp/ptaskd.log" | tail -10
	notok "ptaskd --mode user --backend cpu --socket \$tmp/s listens"
	skip "programs and ptaskctl against the installed daemon" "no daemon"
fi

# --- 5. uninstall -------------------------------------------------------------------
if "${mk[@]}" uninstall DESTDIR="$dest" PREFIX=/usr >"$tmp/uninstall.log" 2>&1; then
	left=$(find "$dest" ! -type d | sed "s|^$dest||")
	[ -z "$left" ] || while read -r l; do echo "    left: $l"; done <<<"$left"
	check "make uninstall removes every file" [ -z "$left" ]
else
	sed 's/^/    /' "$tmp/uninstall.log" | tail -10
	notok "make uninstall removes every file"
fi

finish
