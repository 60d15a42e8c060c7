#!/usr/bin/env bash
# twins_test.sh - ptaskd loads twin libraries (uapi/ptask_twin.h) only
# from a directory and files that no other user can write:
#
#   $T/lib/      root 0755   good.so (tests.so), nobody.so (another
#                            owner), open.so (0666), link.so (a symlink),
#                            notable.so (no ptask_twin_table), junk.so
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
logged "refusing $T/lib/open.so: writable by group or others" "a 0666 file is refused"
logged "refusing $T/lib/link.so: not a regular file" "a symlink is refused"
logged "refusing $T/lib/notable.so: it exports no ptask_twin_table" "a library without a table is refused"
logged "refusing $T/lib/junk.so:" "a file that is no library is refused"
if [ "$(id -u)" = 0 ]; then
	logged "refusing $T/lib/nobody.so: owned by another user" "a file owned by nobody is refused"
else
	skip "a file owned by another user" "needs root to chown"
fi
if grep -q "twins: .*\(open\|link\|notable\|junk\|nobody\)\.so: [0-9]* twin" "$T/log"; then
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
