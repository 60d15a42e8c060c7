#!/usr/bin/env bash
# ptaskd_args_test.sh - ptaskd refuses bad options and bad first messages:
#
#   ptaskd --bad-option ...            -> exit 2, a line saying what is wrong
#   ptaskd --mode user --socket $T/s   <-- HELLO with a wrong version, a
#                                          bad magic, a request before HELLO
#
# TAP lines, then the summary line.
set -u
cd "$(dirname "$0")/../.."
T=$(mktemp -d)
n=0 pass=0 fail=0
ok() { n=$((n + 1)); pass=$((pass + 1)); echo "ok $n - $1"; }
nok() { n=$((n + 1)); fail=$((fail + 1)); echo "not ok $n - $1"; }
cleanup() { [ -n "${DPID:-}" ] && kill "$DPID" 2>/dev/null; wait 2>/dev/null; rm -rf "$T"; }
trap cleanup EXIT
D=build/bin/ptaskd

# refused ARGS... EXPECTED-TEXT: exit 2 and the text on stderr
refused() {
	local want=${!#}
	local args=("${@:1:$#-1}")
	"$D" "${args[@]}" >/dev/null 2>"$T/err"
	local rc=$?
	if [ "$rc" = 2 ] && grep -q -- "$want" "$T/err"; then
		ok "ptaskd ${args[*]}: exit 2, '$want'"
	else
		nok "ptaskd ${args[*]}: exit $rc, stderr: $(head -c 200 "$T/err")"
	fi
}
refused --mode sideways "--mode is kernel, user or auto"
refused --policy lottery "unknown --policy"
refused --isolation none "--isolation is client or shared"
refused --socket-mode 0999 "bad --socket-mode"
refused --socket-mode 01777 "bad --socket-mode"
refused --no-such-option "usage:"
refused --mode user extra "unexpected argument"
refused --inflight 0 "--inflight is 1..4096"
refused --inflight 4097 "--inflight is 1..4096"
refused --inflight 8x "--inflight is 1..4096"
refused --lanes 0 "--lanes is 1..16"
refused --lanes 17 "--lanes is 1..16"
refused --inplace-max -1 "--inplace-max is 0.."
refused --inplace-max "" "--inplace-max is 0.."
refused --uid-bytes -1 "--uid-bytes is 0.."
refused --uid-bytes 1k "--uid-bytes is 0.."
refused --exec-uid no-such-user-here "--exec-uid: 'no-such-user-here' is neither a user nor a uid"
refused --exec-uid -5 "is neither a user nor a uid"
refused --exec-uid 4294967295 "is neither a user nor a uid"
refused --mode user --exec-uid 0 "--exec-uid in user mode needs the --exec-fd its supervisor gives"
refused --executors many "--executors is shared, uid or process"
refused --mode kernel --executors process "--executors process is user mode's for now"
refused --executors uid --exec-uid 0 "starts the --exec-uid executors itself"
refused --executors uid --exec-fd 3 "starts the --exec-uid executors itself"
refused --mode user --exec-fd 3 "--exec-fd goes with --mode user and --exec-uid"
refused --mode kernel --exec-uid 0 --exec-fd 3 "--exec-fd goes with --mode user and --exec-uid"
refused --exec-fd 2 "--exec-fd is 3..1023"
refused --mps "--mps is for --executors uid"
refused --exec-fd x "--exec-fd is 3..1023"
refused --executor-idle-s 0 "--executor-idle-s is 1..86400"
refused --backend sim --lanes 2 "the sim's lanes are its configuration's lanes key"
"$D" --mode user --backend nope --socket "$T/x" 2>"$T/err"
rc=$?
if [ "$rc" != 0 ] && grep -q "unknown --backend 'nope'" "$T/err"; then
	ok "an unknown --backend is refused by name"
else
	nok "unknown --backend: exit $rc, $(head -c 200 "$T/err")"
fi

# an --exec-fd that is no executor connection: a clear refusal, exit 1
"$D" --mode user --backend cpu --exec-uid 0 --exec-fd 3 3</dev/null 2>"$T/err"
rc=$?
if [ "$rc" = 1 ] && grep -q "ptaskd refused the executor connection" "$T/err"; then
	ok "an --exec-fd that is no executor connection is refused"
else
	nok "--exec-fd 3</dev/null: exit $rc, $(head -c 200 "$T/err")"
fi

# read before the driver is loaded: refused on a machine without a GPU too
for name in PTASKD_GRAPH_VARIANTS PTASKD_LONE_VARIANTS; do
	for v in 0 5 2x ""; do
		env "$name=$v" "$D" --mode user --backend cuda --socket "$T/x" 2>"$T/err"
		rc=$?
		if [ "$rc" != 0 ] && grep -q "$name must be 1..4, not \"$v\"" "$T/err"; then
			ok "$name='$v' is refused with a message"
		else
			nok "$name='$v': exit $rc, $(head -c 200 "$T/err")"
		fi
	done
done

"$D" --mode user --backend cpu --socket "$T/s" 2>"$T/log" &
DPID=$!
# Up to 30 s: a busy machine starts it later, not never.
for _ in $(seq 300); do [ -S "$T/s" ] && break; sleep 0.1; done
[ -S "$T/s" ] && ok "ptaskd --mode user starts" || nok "ptaskd did not start within 30 s: $(tail -n 3 "$T/log")"
# first MESSAGE-HEX: the reply's err field (a number) or "closed"
first() {
	python3 - "$T/s" "$1" <<'PY'
import socket, struct, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(sys.argv[1])
s.sendall(bytes.fromhex(sys.argv[2]))
s.settimeout(30)	# the daemon answers at once; a busy machine is slower
h = b""
while len(h) < 16:
    c = s.recv(16 - len(h))
    if not c:
        print("closed"); sys.exit(0)
    h += c
print(struct.unpack("<IIiI", h)[2])
PY
}
magic=50544b44	# "PTKD" little-endian
hello() { printf '%s01000000000000001800000%s' "$magic" "$1"; }
# HELLO: version 2 (unknown), flags 0, token 0, pid 0, reserved 0
r=$(first "$(hello 0)020000000000000000000000000000000000000000000000")
[ "$r" = -71 ] && ok "HELLO with an unknown version: -EPROTO" || nok "HELLO version 2: $r"
# a bad magic
r=$(first "deadbeef01000000000000001800000001000000000000000000000000000000000000000000000000000000")
[ "$r" = closed ] && ok "a bad magic: the connection is closed" || nok "bad magic: $r"
# an ioctl op before HELLO (PTASK_IOC_GRAPH_RUN, empty payload)
r=$(first "${magic}0bb710400000000000000000")
[ "$r" = closed ] && ok "a request before HELLO: the connection is closed" || nok "request before HELLO: $r"
# HELLO attaching to a token nobody has
r=$(first "$(hello 0)01000000000000001122334455667788000000000000000000000000")
[ "$r" = -2 ] && ok "HELLO with an unknown token: -ENOENT" || nok "unknown token: $r"
kill -0 "$DPID" 2>/dev/null && ok "ptaskd still serves after all that" || nok "ptaskd died"
echo "1..$n"
echo "$pass passed, $fail failed, 0 skipped"
[ "$fail" = 0 ]
