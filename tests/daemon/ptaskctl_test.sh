#!/usr/bin/env bash
# ptaskctl_test.sh - ptaskctl against a user-mode ptaskd:
#
#   ptaskd --mode user --backend sim --socket $T/s  <-- ptaskctl --socket $T/s ...
#
# info (text and --json), policy read, set by root, refused for a bad name
# and for a user that is not root.  TAP lines, then the summary line.
set -u
cd "$(dirname "$0")/../.."
T=$(mktemp -d)
n=0 pass=0 fail=0 skip=0
ok() { n=$((n + 1)); pass=$((pass + 1)); echo "ok $n - $1"; }
nok() { n=$((n + 1)); fail=$((fail + 1)); echo "not ok $n - $1"; }
skp() { n=$((n + 1)); skip=$((skip + 1)); echo "ok $n - # SKIP $1"; }
check() { if eval "$2"; then ok "$1"; else nok "$1"; fi; }
cleanup() { [ -n "${DPID:-}" ] && kill "$DPID" 2>/dev/null; wait 2>/dev/null; rm -rf "$T"; }
trap cleanup EXIT

build/bin/ptaskd --mode user --backend sim --socket "$T/s" 2>"$T/log" &
DPID=$!
for _ in $(seq 50); do [ -S "$T/s" ] && break; sleep 0.1; done
ctl() { build/bin/ptaskctl --mode user --socket "$T/s" "$@"; }

check "info names the backend" 'ctl info | grep -qx "backend: sim"'
check "info --json is JSON" 'ctl --json info | python3 -c "import json,sys; d=json.load(sys.stdin); assert d[\"backend\"]==\"sim\" and d[\"accelerators\"]==2"'
check "policy starts as data-aware" '[ "$(ctl policy)" = "policy: data-aware" ]'
check "root sets fifo" '[ "$(ctl policy fifo)" = "policy: fifo" ] && [ "$(ctl policy)" = "policy: fifo" ]'
check "an unknown policy is refused" '! ctl policy sideways 2>"$T/err" && grep -q "Invalid argument" "$T/err"'
check "the policy is unchanged after a refusal" '[ "$(ctl policy)" = "policy: fifo" ]'
if command -v setpriv >/dev/null && [ "$(id -u)" = 0 ]; then
	chmod 755 "$T"
	check "a user that is not root may not set it" \
		'! setpriv --reuid 65534 --regid 65534 --clear-groups build/bin/ptaskctl --mode user --socket "$T/s" policy priority 2>"$T/err" && grep -q "root only" "$T/err"'
else
	skp "setpriv or root missing: the non-root refusal is not tested"
fi
check "too many arguments is a usage error" 'ctl policy a b 2>/dev/null; [ $? = 2 ]'
kill -TERM "$DPID"; wait "$DPID"; rc=$?; DPID=
check "ptaskd exits 0 on SIGTERM" '[ $rc = 0 ]'
echo "1..$n"
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" = 0 ]
