#!/usr/bin/env bash
# ptaskctl_test.sh - ptaskctl against a user-mode ptaskd:
#
#   ptaskd --mode user --backend sim --socket $T/s  <-- ptaskctl --socket $T/s ...
#        ^
#        +-- ptaskctl_client ctl 3 busy: graph "ctl", GPU ptask "add"
#            (vec_add), invoking until SIGTERM
#
# info; policy and sched (read, set, they agree, every invalid value
# refused and nothing half-applied, refused for a user that is not root,
# the daemon's own checks of the raw protocol); show and show --json of
# the client's graph; prio on a ptask and a pid; top (text, JSON, bad
# options); after the client exits nothing is listed.  TAP lines, then
# the summary line.
set -u
cd "$(dirname "$0")/../.."
T=$(mktemp -d)
n=0 pass=0 fail=0 skip=0
ok() { n=$((n + 1)); pass=$((pass + 1)); echo "ok $n - $1"; }
nok() { n=$((n + 1)); fail=$((fail + 1)); echo "not ok $n - $1"; }
skp() { n=$((n + 1)); skip=$((skip + 1)); echo "ok $n - # SKIP $1"; }
check() { if eval "$2"; then ok "$1"; else nok "$1"; fi; }
# A state the client or the daemon reaches in its own time (an invocation
# count, a weight recomputed): asked again until it holds, for up to 20 s,
# so that a busy machine is slower, not wrong.
holds() { eval "$1"; }
eventually() { for _ in $(seq 200); do "$@" && return 0; sleep 0.1; done; return 1; }
check_eventually() { if eventually holds "$2"; then ok "$1"; else nok "$1 (not within 20 s)"; fi; }
cleanup() {
	[ -n "${CPID:-}" ] && kill "$CPID" 2>/dev/null
	[ -n "${DPID:-}" ] && kill "$DPID" 2>/dev/null
	wait 2>/dev/null; rm -rf "$T"
}
trap cleanup EXIT

build/bin/ptaskd --mode user --backend sim --socket "$T/s" 2>"$T/log" &
DPID=$!
for _ in $(seq 300); do [ -S "$T/s" ] && break; sleep 0.1; done
ctl() { build/bin/ptaskctl --mode user --socket "$T/s" "$@"; }
# exit status of ctl with stderr kept in $T/err
rc() { ctl "$@" >"$T/out" 2>"$T/err"; echo $?; }
json() { python3 -c "import json,sys; d=json.load(sys.stdin); sys.exit(0 if ($1) else 1)"; }
nobody_ok=false
if command -v setpriv >/dev/null && [ "$(id -u)" = 0 ]; then
	chmod 755 "$T"
	nobody_ok=true
fi
nobody() { setpriv --reuid 65534 --regid 65534 --clear-groups \
	build/bin/ptaskctl --mode user --socket "$T/s" "$@"; }

# --- info, policy ---------------------------------------------------------------
check "info names the backend" 'ctl info | grep -qx "backend: sim"'
check "info --json is JSON" 'ctl --json info | json "d[\"backend\"]==\"sim\" and d[\"accelerators\"]==2"'
check "policy starts as data-aware" '[ "$(ctl policy)" = "policy: data-aware" ]'
check "sched starts with policy default (the daemon's own)" 'ctl sched | grep -qx "policy: default"'
check "root sets fifo" '[ "$(ctl policy fifo)" = "policy: fifo" ] && [ "$(ctl policy)" = "policy: fifo" ]'
check "sched shows the policy 'policy' set" 'ctl sched | grep -qx "policy: fifo"'
check "sched policy priority: policy shows it" 'ctl sched policy priority >/dev/null && [ "$(ctl policy)" = "policy: priority" ]'
check "--policy is sched's policy too" 'ctl sched --policy first-available >/dev/null && [ "$(ctl policy)" = "policy: first-available" ]'
check "sched policy default: back to ptaskd's --policy" 'ctl sched policy default >/dev/null && [ "$(ctl policy)" = "policy: data-aware" ]'
check "an unknown policy is a usage error" '[ "$(rc policy sideways)" = 2 ] && grep -q "want default, first-available" "$T/err"'
check "the policy is unchanged after a refusal" '[ "$(ctl policy)" = "policy: data-aware" ]'
check "too many arguments is a usage error" '[ "$(rc policy a b)" = 2 ]'
if $nobody_ok; then
	check "a user that is not root may not set the policy" \
		'! nobody policy priority 2>"$T/err" && grep -q "root only" "$T/err"'
else
	skp "setpriv or root missing: the non-root refusal is not tested"
fi

# --- sched ------------------------------------------------------------------------
check "sched reads budgets, alpha, policy, timer, window, period, active, held, accelerators" \
	'ctl --json sched | json "d[\"budgets\"]==\"on\" and d[\"alpha_permille\"]==500 and d[\"timer_us\"]==100 and d[\"window_ms\"]==100 and d[\"accelerators\"]==2 and d[\"period_ns\"]>0 and \"active\" in d and \"held\" in d"'
check "sched sets several at once" \
	'ctl --json sched budgets off alpha 250 policy fifo timer 200 window 50 | json "d[\"budgets\"]==\"off\" and d[\"alpha_permille\"]==250 and d[\"policy\"]==\"fifo\" and d[\"timer_us\"]==200 and d[\"window_ms\"]==50"'
check "the settings stay" 'ctl --json sched | json "d[\"budgets\"]==\"off\" and d[\"alpha_permille\"]==250 and d[\"window_ms\"]==50"'
ctl sched budgets on alpha 500 policy default timer 100 window 100 >/dev/null
ctl sched >"$T/before"
bad_sched() { # name expected-message args...
	local name=$1 msg=$2; shift 2
	bad_args=("$@")
	check "sched $name: usage error, nothing applied" \
		'[ "$(rc sched "${bad_args[@]}")" = 2 ] && grep -q -- "$msg" "$T/err" && ctl sched | cmp -s - "$T/before"'
}
bad_sched "alpha 0" "alpha 0: want permille, 1..1000" alpha 0
bad_sched "alpha 1001" "want permille, 1..1000" policy fifo alpha 1001
bad_sched "alpha 12x" "want permille" alpha 12x
bad_sched "alpha -1" "want permille" alpha -1
bad_sched "timer 9" "timer 9: want microseconds, 10..1000000" budgets off timer 9
bad_sched "timer 1000001" "want microseconds" timer 1000001
bad_sched "window 0" "window 0: want milliseconds, 1..600000" window 0
bad_sched "window 600001" "want milliseconds" alpha 100 window 600001
bad_sched "budgets maybe" "budgets maybe: want on or off" budgets maybe
bad_sched "policy sideways" "policy sideways: want default" policy sideways
bad_sched "an unknown setting" "unknown setting 'speed'" speed 3
bad_sched "a setting without a value" "has no value" alpha
bad_sched "a setting given twice" "alpha given twice" alpha 100 alpha 200
if $nobody_ok; then
	check "a user that is not root may read sched" 'nobody sched | grep -qx "budgets: on"'
	check "a user that is not root may not set sched" \
		'! nobody sched alpha 100 2>"$T/err" && grep -q "root only" "$T/err" && ctl sched | cmp -s - "$T/before"'
else
	skp "setpriv or root missing: sched as non-root is not tested"
	skp "setpriv or root missing: sched as non-root is not tested"
fi

# The daemon's own checks, past ptaskctl's: raw requests on the socket.
# Prints the reply's err for op $1 with payload hex $2.
raw() {
	python3 - "$T/s" "$1" "$2" <<'PY'
import socket, struct, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(sys.argv[1])
def call(op, payload):
    s.sendall(struct.pack("<IIiI", 0x444b5450, op, 0, len(payload)) + payload)
    magic, rop, err, n = struct.unpack("<IIiI", s.recv(16, socket.MSG_WAITALL))
    if n:
        s.recv(n, socket.MSG_WAITALL)
    return err
call(1, struct.pack("<IIQiI", 1, 0, 0, 0, 0))
print(call(int(sys.argv[2]), bytes.fromhex(sys.argv[3])))
PY
}
sched_set() { # mask reserved budgets alpha policy timer window -> hex
	python3 -c "import struct,sys; a=[int(x) for x in sys.argv[1:]]; print(struct.pack('<II5I3IQQ', *a, 0,0,0, 0,0).hex())" "$@"
}
check "SCHED_SET alpha 0 is -EINVAL from the daemon" '[ "$(raw 6 "$(sched_set 2 0 0 0 0 0 0)")" = -22 ]'
check "SCHED_SET timer 5 with a good alpha: -EINVAL, nothing applied" \
	'[ "$(raw 6 "$(sched_set 10 0 0 300 0 5 0)")" = -22 ] && ctl sched | cmp -s - "$T/before"'
check "SCHED_SET with mask 0 is -EINVAL" '[ "$(raw 6 "$(sched_set 0 0 0 0 0 0 0)")" = -22 ]'
check "SCHED_SET with an unknown mask bit is -EINVAL" '[ "$(raw 6 "$(sched_set 32 0 0 0 0 0 0)")" = -22 ]'
check "SCHED_SET with reserved set is -EINVAL" '[ "$(raw 6 "$(sched_set 2 1 0 300 0 0 0)")" = -22 ]'
check "SCHED_SET policy 5 (no such) is -EINVAL" '[ "$(raw 6 "$(sched_set 4 0 0 0 5 0 0)")" = -22 ]'
check "SCHED_SET of the wrong size is -EINVAL" '[ "$(raw 6 00000000)" = -22 ]'
check "PROCS with flags set is -EINVAL" '[ "$(raw 7 00000000000000000100000000000000)" = -22 ]'
check "OBJECTS with reserved set is -EINVAL" '[ "$(raw 8 00000000000000000000000001000000)" = -22 ]'
check "SET_PRIO with an unknown target is -EINVAL" '[ "$(raw 9 03000000010000000000000001000000)" = -22 ]'
check "SET_PRIO ptask with a pid too is -EINVAL" '[ "$(raw 9 01000000010000000100000001000000)" = -22 ]'
check "SET_PRIO ptask priority 100 is -EINVAL" '[ "$(raw 9 01000000010000000000000064000000)" = -22 ]'
check "SET_PRIO pid weight over PTASK_WEIGHT_MAX is -EINVAL" '[ "$(raw 9 02000000000000000100000041420f00)" = -22 ]'
check "the raw refusals changed nothing" 'ctl sched | cmp -s - "$T/before"'

# --- a client: show, prio, top ----------------------------------------------------
PTASK_MODE=user PTASK_SOCKET="$T/s" build/tests/helpers/ptaskctl_client ctl 3 busy \
	>"$T/client" 2>"$T/client.err" &
CPID=$!
for _ in $(seq 300); do grep -q ready "$T/client" 2>/dev/null && break; sleep 0.1; done
ptask=$(sed -n 's/.*ptask=\([0-9]*\).*/\1/p' "$T/client")
check "the client is up" '[ -n "$ptask" ]'
# The client runs at this script's nice value (make check may itself run
# under nice on a busy machine): its proxy nice and its weight follow it.
cnice=$(ps -o ni= -p "$CPID" | tr -d ' ')
cnice=${cnice:-0}
# shellcheck disable=SC2034 # read by the check strings below
cweight=$(python3 -c 'import sys
w = [88761, 71755, 56483, 46273, 36291, 29154, 23254, 18705, 14949, 11916,
     9548, 7620, 6100, 4904, 3906, 3121, 2501, 1991, 1586, 1277,
     1024, 820, 655, 526, 423, 335, 272, 215, 172, 137,
     110, 87, 70, 56, 45, 36, 29, 23, 18, 15]
print(w[int(sys.argv[1]) + 20])' "$cnice")
check "show --json lists the client's graph and its GPU ptask" \
	'ctl --json show | json "[(g[\"name\"],g[\"state\"],p[\"name\"],p[\"kind\"],p[\"owner_pid\"],p[\"handle\"]) for g in d[\"graphs\"] for p in g[\"ptasks\"]]==[(\"ctl\",\"running\",\"add\",\"gpu\",$CPID,$ptask)]"'
check_eventually "show --json: priority, proxy nice, accelerator, GPU time, invocations" \
	'ctl --json show | json "[(p[\"priority\"],p[\"proxy_nice\"],p[\"accelerator\"] in (0,1),p[\"gpu_ns\"]>0,p[\"invocations\"]>=3) for g in d[\"graphs\"] for p in g[\"ptasks\"]]==[(50,$cnice,True,True,True)]"'
check "show prints the graph and the ptask" \
	'ctl show >"$T/out" && grep -q "^graph [0-9]* ctl: running, owner uid 0" "$T/out" && grep -Eq "^  $ptask +add +gpu " "$T/out"'
check "show takes no arguments" '[ "$(rc show ctl)" = 2 ]'
check "prio ptask sets the static priority" \
	'ctl prio ptask "$ptask" 77 | grep -qx "priority: 77" && ctl --json show | json "d[\"graphs\"][0][\"ptasks\"][0][\"priority\"]==77"'
check "prio ptask 100 is a usage error" '[ "$(rc prio ptask "$ptask" 100)" = 2 ] && grep -q "want 0..99" "$T/err"'
check "prio ptask of no ptask: no such ptask" '[ "$(rc prio ptask 99999 3)" = 1 ] && grep -q "no such ptask" "$T/err"'
check "prio pid sets the weight" \
	'ctl prio pid "$CPID" 5000 >/dev/null && ctl --json top --once -d 0.1 | json "[(p[\"weight\"],p[\"weight_override\"]) for p in d[\"processes\"] if p[\"pid\"]==$CPID]==[(5000,5000)]"'
check "prio pid default: the override is gone" \
	'ctl prio pid "$CPID" default | grep -qx "weight_override: default"'
check_eventually "prio pid default: the nice value's weight again" \
	'ctl --json top --once -d 0.1 | json "[(p[\"weight\"],p[\"weight_override\"]) for p in d[\"processes\"] if p[\"pid\"]==$CPID]==[($cweight,0)]"'
check "prio pid of a process without GPU work: no accounting" '[ "$(rc prio pid 1 3)" = 1 ] && grep -q "no GPU accounting" "$T/err"'
check "prio pid weight 0 is a usage error" '[ "$(rc prio pid "$CPID" 0)" = 2 ] && grep -q "want 1..1000000 or default" "$T/err"'
check "prio with an unknown target is a usage error" '[ "$(rc prio graph 1 2)" = 2 ]'
check "prio with too few arguments is a usage error" '[ "$(rc prio ptask 1)" = 2 ]'
if $nobody_ok; then
	check "a user that is not root may not show" '! nobody show 2>"$T/err" && grep -q "root only" "$T/err"'
	check "a user that is not root may not set a priority" \
		'! nobody prio ptask "$ptask" 3 2>"$T/err" && grep -q "root only" "$T/err"'
	check "a user that is not root may run top" 'nobody top --once -d 0.1 | grep -q "^ *$CPID "'
else
	for _ in 1 2 3; do skp "setpriv or root missing: non-root show, prio, top"; done
fi
check "top -n 2 prints two tables with the client" \
	'ctl top -n 2 -d 0.2 >"$T/out" && [ "$(grep -c "^ptaskctl top:" "$T/out")" = 2 ] && [ "$(grep -c "^ *$CPID " "$T/out")" = 2 ]'
check_eventually "top --json -n 2: two documents, the busy client has a GPU share" \
	'ctl --json top -n 2 -d 0.3 >"$T/out" && [ "$(wc -l <"$T/out")" = 2 ] && tail -1 "$T/out" | json "[p[\"gpu_share\"]>0 and p[\"invocations\"]>3 for p in d[\"processes\"] if p[\"pid\"]==$CPID]==[True]"'
for bad in "-d 0" "-d abc" "-d 3601" "-n 0" "-n x" "--bogus" "extra"; do
	# shellcheck disable=SC2086 # split on purpose
	check "top $bad is a usage error" '[ "$(rc top $bad)" = 2 ]'
done

kill -TERM "$CPID"; wait "$CPID"; crc=$?; CPID=
check "the client ran and exited cleanly" '[ $crc = 0 ]'
# The daemon frees the client when it sees the hang-up, a moment later.
no_procs() { ctl --json top --once -d 0.1 | json 'd["processes"]==[]'; }
no_graphs() { ctl --json show | json 'd["graphs"]==[]'; }
check "after the client: top lists no process" 'eventually no_procs'
check "after the client: show lists no graph" 'eventually no_graphs'
kill -TERM "$DPID"; wait "$DPID"; rc=$?; DPID=
check "ptaskd exits 0 on SIGTERM" '[ $rc = 0 ]'
# A kernel that faults (the sim's fault_launch: its 3rd launch): show
# counts the failure and says why, errno and the accelerator's code.
build/bin/ptaskd --mode user --backend sim --sim-config "devices=1;fault_launch=3" \
	--socket "$T/s" 2>"$T/log2" &
DPID=$!
for _ in $(seq 300); do [ -S "$T/s" ] && break; sleep 0.1; done
PTASK_MODE=user PTASK_SOCKET="$T/s" build/tests/helpers/ptaskctl_client fail 10 failing \
	>"$T/fail" 2>"$T/fail.err" &
CPID=$!
eventually grep -q "^failed " "$T/fail"
check "the faulting client's round failed with -EIO" 'grep -q "^failed .* err=-5$" "$T/fail"'
check "show --json: one failure, -EIO, the accelerator's code 700" \
	'ctl --json show | json "[(p[\"failures\"],p[\"last_error\"],p[\"error_code\"]) for g in d[\"graphs\"] for p in g[\"ptasks\"]]==[(1,-5,700)]"'
check "show names the failure and the CUDA error" \
	'ctl show | grep -q "last failure: Input/output error, CUDA_ERROR_ILLEGAL_ADDRESS (700)"'
check "ptaskd's log gives the code too" 'grep -q "failed: -5 (accelerator code 700)" "$T/log2"'
kill -TERM "$CPID"; wait "$CPID"; CPID=
kill -TERM "$DPID"; wait "$DPID"; DPID=
check "ptaskctl without ptaskd: a clear error" \
	'! ctl sched 2>"$T/err" && grep -q "is ptaskd running?" "$T/err"'
echo "1..$n"
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" = 0 ]
