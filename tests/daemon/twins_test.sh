#!/usr/bin/env bash
# twins_test.sh - ptaskd loads twin libraries (uapi/ptask_twin.h) only
# from a directory and files that no other user can write:
#
#   $T/lib/      root 0755   good.so (tests.so), nobody.so (another
#                            owner), open.so (0666), link.so (a symlink),
#                            notable.so (no ptask_twin_table), junk.so,
#                            v1.so (an ABI 1 table, built here as an old
#                            library was: loaded), v3.so (ABI 3: refused),
#                            gemm.so (ABI 2 with block ranges: loaded)
#   $T/open/     0775        -> ptaskd --host-kernels refuses, exits 1
#   $T/none                  -> missing: exits 1
#
#   ptaskd --mode user --backend cpu --host-kernels $T/lib: loads good.so
#   only, logs each refusal with its reason, and serves.
#
# TAP lines, then the summary line.
set -u
cd "$(dirname "$0")/../.."
T=$(mktemp -d)
# shellcheck source=tests/tap.sh
. tests/tap.sh	# (the current directory is the top now)
cleanup() { [ -n "${DPID:-}" ] && kill "$DPID" 2>/dev/null; wait 2>/dev/null; rm -rf "$T"; }
trap cleanup EXIT
D=build/bin/ptaskd
GOOD=build/twins/tests.so
unset PTASKD_HOST_KERNELS

if [ ! -f "$GOOD" ]; then
	notok "no $GOOD: run 'make twins'"
	finish
fi
chmod 0755 "$T"

# exits DIR TEXT: ptaskd --host-kernels DIR exits 1 and logs TEXT
exits() {
	"$D" --mode user --backend cpu --socket "$T/s1" --host-kernels "$1" >/dev/null 2>"$T/err"
	local rc=$?
	if [ "$rc" = 1 ] && grep -qF -- "$2" "$T/err"; then
		ok "--host-kernels ${1#"$T"/}: exit 1, '$2'"
	else
		notok "--host-kernels ${1#"$T"/}: exit $rc, stderr: $(head -c 300 "$T/err")"
	fi
}
mkdir -m 0775 "$T/open"
chmod 0775 "$T/open"
exits "$T/open" "refusing the directory $T/open: writable by group or others (mode 0775"
exits "$T/none" "$T/none: No such file or directory"

mkdir -m 0755 "$T/lib"
install -m 0644 "$GOOD" "$T/lib/good.so"
install -m 0666 "$GOOD" "$T/lib/open.so"
chmod 0666 "$T/lib/open.so"
ln -s good.so "$T/lib/link.so"
install -m 0644 build/lib/libptask.so.1.0 "$T/lib/notable.so"
echo "not an ELF file" >"$T/lib/junk.so"
if [ "$(id -u)" = 0 ]; then
	install -m 0644 -o nobody "$GOOD" "$T/lib/nobody.so"
fi
# Twin libraries of other ABI versions, as their sources defined them:
# ABI 1's table ended after its twins (no run_blocks), ABI 3 is unknown.
for abi in 1 3; do
	cat >"$T/v$abi.c" <<EOC
#include "uapi/ptask_twin.h"
static const char code[] = "an ABI $abi twin's code";
static int run(const struct ptask_twin_call *call) { (void)call; return 0; }
static int cost(const struct ptask_twin_call *call, struct ptask_twin_cost *c)
{ (void)call; c->flops = c->bytes = 0; return 0; }
static const struct ptask_twin twins[] = {
	{ "abi${abi}_kernel", code, code + sizeof(code), run, cost },
};
__attribute__((visibility("default")))
const struct { uint32_t abi, count; const struct ptask_twin *twins; }
ptask_twin_table = { $abi, 1, twins };
EOC
	if ! ${CC:-cc} -std=gnu11 -Wall -Wextra -Werror -I. -fPIC -shared \
		-o "$T/lib/v$abi.so" "$T/v$abi.c" 2>"$T/cc.err"; then
		notok "cannot build an ABI $abi library: $(head -c 300 "$T/cc.err")"
	fi
	chmod 0644 "$T/lib/v$abi.so"
done
install -m 0644 build/twins/gemm.so "$T/lib/gemm.so"

"$D" --mode user --backend cpu --socket "$T/s" --host-kernels "$T/lib" 2>"$T/log" &
DPID=$!
# Up to 30 s: a busy machine starts it later, not never.
for _ in $(seq 300); do [ -S "$T/s" ] && break; sleep 0.1; done
if [ -S "$T/s" ]; then
	ok "ptaskd starts with refused files beside a good one"
else
	notok "ptaskd did not start: $(tail -n 3 "$T/log")"
fi
# logged TEXT WHAT: the log holds TEXT
logged() {
	if grep -qF -- "$1" "$T/log"; then ok "$2"; else notok "$2: no '$1' in: $(cat "$T/log")"; fi
}
logged "twins: $T/lib/good.so: 3 twin(s)" "good.so (root or ours, 0644) is loaded"
logged "twins: $T/lib/v1.so: 1 twin(s), the first 'abi1_kernel' (ABI 1)" \
	"an ABI 1 library (no block ranges) is loaded"
logged "twins: $T/lib/gemm.so: 1 twin(s), the first 'sgemm' (ABI 2)" \
	"an ABI 2 library with block ranges is loaded"
logged "refusing $T/lib/v3.so: its table is not twin ABI 1 or 2" \
	"an ABI 3 library is refused"
logged "refusing $T/lib/open.so: writable by group or others" "a 0666 file is refused"
logged "refusing $T/lib/link.so: not a regular file" "a symlink is refused"
logged "refusing $T/lib/notable.so: it exports no ptask_twin_table" "a library without a table is refused"
logged "refusing $T/lib/junk.so:" "a file that is no library is refused"
if [ "$(id -u)" = 0 ]; then
	logged "refusing $T/lib/nobody.so: owned by another user" "a file owned by nobody is refused"
else
	skip "a file owned by another user" "needs root to chown"
fi
if grep -q "twins: .*\(open\|link\|notable\|junk\|nobody\|v3\)\.so: [0-9]* twin" "$T/log"; then
	notok "a refused file was loaded anyway: $(grep 'twin(s)' "$T/log")"
else
	ok "no refused file was loaded"
fi
kill -TERM "$DPID"
wait "$DPID"
rc=$?
DPID=
[ "$rc" = 0 ] && ok "SIGTERM: exit 0" || notok "SIGTERM: exit $rc"

finish
