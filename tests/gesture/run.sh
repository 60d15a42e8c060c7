#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# tests/gesture/run.sh - the gesture pipeline's tests (`make check-gesture`).
#
#   build/tests/gesture/twin_test: the host twins of the kernels
#   build/tests/gesture/recording_fuzz: the recording reader, 8 s of libFuzzer
#   gesture record (56 frames, seed 1) --> rec
#        |
#        +--> host, modular --cpu, pipes --cpu  ---------------> events == golden.events
#        +--> ptask --cpu --> ptaskd --backend cpu (host twins) --> events == golden.events
#        +--> handcode, modular, pipes, ptask on a GPU (skipped without one)
#   the generator directly (no file) --> host --> events == golden.events
#   broken copies of rec (truncated, corrupt, ...) --> a clear error each
#   demo.sh, small (what make demo runs): table, PNG, ptaskd stopped
#   bad command lines, a malformed CSV --> exit 2 (1) and a message each
#
# golden.events is what the host implementation gave when the pipeline was
# written (2026-11-22); every other implementation must match it exactly:
# the CPU paths compute bit-identical clouds (gesture_math.h), and
# hidinput decides on whole millimetres.  Regenerate it only on purpose:
#   build/bin/gesture record --out R --frames 56 &&
#   build/bin/gesture run --impl host --cpu --recording R --frames 56 \
#       --hid none --events tests/gesture/golden.events
#
# Builds nothing (make check-gesture builds build/bin/gesture, ptaskd, the
# host twins' test and the fuzz target).  Every program runs under a
# `timeout` that only a hang should meet: $LIMIT s (GESTURE_TEST_TIMEOUT),
# as a 56-frame run that takes seconds took over 120 s at nice 19 on two
# busy cores.
# Last line: "N passed, M failed, K skipped"; exit 1 on any failure.
set -uo pipefail
cd "$(dirname "$0")/../.."

G=build/bin/gesture
D=build/bin/ptaskd
LIMIT=${GESTURE_TEST_TIMEOUT:-600}
GOLDEN=tests/gesture/golden.events
FRAMES=56
n=0 pass=0 fail=0 skip=0
for f in "$G" "$D" "$GOLDEN"; do
	if [ ! -e "$f" ]; then
		echo "gesture tests: $f missing (make check-gesture builds it)" >&2
		echo "0 passed, 1 failed, 0 skipped"
		exit 1
	fi
done
W=$(mktemp -d)
DPID=
cleanup() {
	if [ -n "$DPID" ]; then
		kill -TERM "$DPID" 2>/dev/null
		wait "$DPID" 2>/dev/null
	fi
	rm -rf "$W"
}
trap cleanup EXIT

ok() { n=$((n + 1)); pass=$((pass + 1)); echo "ok $n - $*"; }
not_ok() { n=$((n + 1)); fail=$((fail + 1)); echo "not ok $n - $*"; }
skipped() { n=$((n + 1)); skip=$((skip + 1)); echo "ok $n - $* # SKIP"; }

# same_events NAME FILE: FILE equals the golden stream
same_events() {
	if cmp -s "$GOLDEN" "$2"; then
		ok "$1: the event stream equals $GOLDEN ($(wc -l <"$2") events)"
	else
		not_ok "$1: the event stream differs from $GOLDEN"
		diff "$GOLDEN" "$2" | head -n 10 | sed 's/^/#   /'
	fi
}

# run_impl NAME ARGS...: gesture run on the recording; compares its event
# stream, and what its hidinput stage printed (the stage's own output:
# in the ptask way a CPU ptask's, in the pipes way a child process's)
run_impl() {
	local name=$1 rc
	shift
	timeout -k 5 "$LIMIT" "$G" run --frames "$FRAMES" --quiet \
		--hid print --hid-log "$W/$name.hid" \
		--recording "$W/rec" --events "$W/$name.events" "$@" \
		>"$W/$name.out" 2>&1
	rc=$?
	if [ "$rc" = 77 ]; then
		skipped "$name: cannot run here (no GPU)"
	elif [ "$rc" != 0 ]; then
		not_ok "$name: exit status $rc"
		sed 's/^/#   /' "$W/$name.out"
	else
		same_events "$name" "$W/$name.events"
		same_events "$name (hidinput's printed events)" "$W/$name.hid"
	fi
}

# --- the host twins of the kernels, alone ---------------------------------------
# (make check-gesture builds both; a machine given only build/bin, as
# the GPU machine is, skips them)
HK=build/tests/gesture/twin_test
if [ ! -x "$HK" ]; then
	skipped "host twins: $HK not built"
elif timeout -k 5 "$LIMIT" "$HK" >"$W/hk.out" 2>&1; then
	ok "host twins: $(tail -n 1 "$W/hk.out") ($HK)"
else
	not_ok "host twins: $HK failed"
	sed 's/^/#   /' "$W/hk.out"
fi

# --- the recording reader under libFuzzer, briefly ---------------------------------
FZ=build/tests/gesture/recording_fuzz
mkdir -p "$W/corpus"
if [ ! -x "$FZ" ]; then
	skipped "recording reader fuzzing: $FZ not built"
elif timeout -k 5 "$LIMIT" "$FZ" -max_total_time="${GESTURE_FUZZ_SECONDS:-8}" \
	-max_len=4096 -artifact_prefix="$W/" "$W/corpus" tests/gesture/corpus \
	>"$W/fuzz.out" 2>&1; then
	ok "recording reader fuzzed: $(grep -o 'Done [0-9]* runs in [0-9]* second(s)' "$W/fuzz.out")"
else
	not_ok "recording reader fuzzing: a crash (input saved in the log's directory)"
	tail -n 20 "$W/fuzz.out" | sed 's/^/#   /'
fi

# --- the recording ------------------------------------------------------------
if "$G" record --out "$W/rec" --frames "$FRAMES" --seed 1 >"$W/record.out" 2>&1 &&
	"$G" verify "$W/rec" >>"$W/record.out" 2>&1; then
	ok "record $FRAMES frames of 2 cameras and verify them"
else
	not_ok "record and verify"
	sed 's/^/#   /' "$W/record.out"
fi

# --- the CPU paths: all must give the golden stream ---------------------------
run_impl host --impl host --cpu
run_impl modular-cpu --impl modular --cpu
run_impl pipes-cpu --impl pipes --cpu

"$D" --mode user --backend cpu --socket "$W/sock" --host-kernels "$PWD/build/twins" \
	>"$W/ptaskd.log" 2>&1 &
DPID=$!
# up to 30 s: a busy machine starts it later, not never
for _ in $(seq 300); do [ -S "$W/sock" ] && break; sleep 0.1; done
if [ -S "$W/sock" ]; then
	run_impl ptask-cpu --impl ptask --cpu --socket "$W/sock" --daemon-pid "$DPID"
else
	not_ok "ptask-cpu: ptaskd --backend cpu did not start"
	sed 's/^/#   /' "$W/ptaskd.log"
fi

# the generator straight into the pipeline, no file in between
if timeout -k 5 "$LIMIT" "$G" run --impl host --cpu --frames "$FRAMES" --seed 1 \
	--hid none --quiet --events "$W/gen.events" >"$W/gen.out" 2>&1; then
	same_events "host from the generator" "$W/gen.events"
else
	not_ok "host from the generator: exit status $?"
	sed 's/^/#   /' "$W/gen.out"
fi

# realtime mode paces at the cameras' 30 fps: 15 frames take 14/30 s
if "$G" run --impl host --cpu --mode realtime --frames 15 --hid none --quiet \
	--csv "$W/rt.csv" >"$W/rt.out" 2>&1 &&
	awk -F, 'NR == 2 { exit !($6 >= 0.46 && $7 <= 32.5) }' "$W/rt.csv"; then
	ok "realtime mode paces frames at 30 fps ($(awk -F, 'NR == 2 { print $7 }' "$W/rt.csv") fps)"
else
	not_ok "realtime mode pacing"
	sed 's/^/#   /' "$W/rt.out" "$W/rt.csv"
fi

# --- the GPU paths (each skips without a GPU) ----------------------------------
run_impl handcode --impl handcode
run_impl modular-gpu --impl modular
run_impl pipes-gpu --impl pipes
if "$G" gpucheck >"$W/gpucheck.out" 2>&1; then
	ok "gpucheck: GPU stages match the CPU within tolerance"
else
	rc=$?
	if [ "$rc" = 77 ]; then
		skipped "gpucheck: no GPU"
	else
		not_ok "gpucheck: exit status $rc"
	fi
fi
sed 's/^/#   /' "$W/gpucheck.out"
if [ "${rc:-0}" != 77 ]; then
	"$D" --mode user --backend cuda --socket "$W/sock-cuda" >"$W/ptaskd-cuda.log" 2>&1 &
	CPID=$!
	for _ in $(seq 300); do [ -S "$W/sock-cuda" ] && break; sleep 0.1; done
	run_impl ptask-gpu --impl ptask --socket "$W/sock-cuda" --daemon-pid "$CPID"
	kill -TERM "$CPID" 2>/dev/null
	wait "$CPID" 2>/dev/null
else
	skipped "ptask-gpu: no GPU"
fi

# --- broken recordings: each gets its own clear error ---------------------------
HDR=224			# 64-byte header + 2 cameras of 80 bytes
REC=$((16 + 2 * 640 * 480 * 2))	# one frame record

# patch FILE OFFSET BYTE(octal escape): overwrite one byte in place
patch() { printf "$3" | dd of="$1" bs=1 seek="$2" conv=notrunc status=none; }

# bad_rec NAME FILE MESSAGE: verify fails (exit 1) saying MESSAGE
bad_rec() {
	local rc
	"$G" verify "$2" >"$W/bad.out" 2>&1
	rc=$?
	if [ "$rc" = 1 ] && grep -qF -- "$3" "$W/bad.out"; then
		ok "$1: $(head -n 1 "$W/bad.out")"
	else
		not_ok "$1: exit status $rc, expected 1 and '$3'"
		sed 's/^/#   /' "$W/bad.out"
	fi
}

head -c $((HDR + 3 * REC + 1000)) "$W/rec" >"$W/cut"
bad_rec "truncated in frame 3" "$W/cut" "truncated: 3 of $FRAMES frames whole"
head -c 10 "$W/rec" >"$W/cut"
bad_rec "truncated in the header" "$W/cut" "truncated: the header has 10 of 64 bytes"
head -c 100 "$W/rec" >"$W/cut"
bad_rec "truncated in the camera table" "$W/cut" "truncated: the camera table has 36 of 160 bytes"
: >"$W/cut"
bad_rec "empty file" "$W/cut" "truncated: the header has 0 of 64 bytes"
bad_rec "no such file" "$W/none" "No such file or directory"
cp "$W/rec" "$W/bad"
patch "$W/bad" 0 'X'
bad_rec "bad magic" "$W/bad" "not a gesture recording (bad magic)"
cp "$W/rec" "$W/bad"
patch "$W/bad" 8 '\002'
bad_rec "unknown version" "$W/bad" "recording version 2, this program reads 1"
cp "$W/rec" "$W/bad"
patch "$W/bad" 16 '\011'
bad_rec "nine cameras" "$W/bad" "corrupt header: 9 cameras (1..4)"
cp "$W/rec" "$W/bad"
patch "$W/bad" 21 '\377'
bad_rec "absurd image size" "$W/bad" "corrupt header: image"
cp "$W/rec" "$W/bad"
patch "$W/bad" 40 '\177'
bad_rec "header checksum" "$W/bad" "corrupt header: checksum mismatch"
cp "$W/rec" "$W/bad"
patch "$W/bad" $((HDR + 7 * REC + 4)) '\001'
bad_rec "frame record header" "$W/bad" "frame 7: corrupt record header"
cp "$W/rec" "$W/bad"
patch "$W/bad" $((HDR + 5 * REC + 16 + 1000)) '\252'
bad_rec "corrupt pixels" "$W/bad" "frame 5: checksum mismatch (corrupt data)"
# ... and the pipeline stops on it with the same message
if "$G" run --impl host --cpu --recording "$W/bad" --frames 20 --hid none --quiet \
	>"$W/badrun.out" 2>&1; then
	not_ok "a run over a corrupt frame succeeded"
elif grep -qF "frame 5: checksum mismatch" "$W/badrun.out"; then
	ok "a run over a corrupt frame stops: $(grep -F 'frame 5' "$W/badrun.out")"
else
	not_ok "a run over a corrupt frame: no clear error"
	sed 's/^/#   /' "$W/badrun.out"
fi
# ... in every way (pipes: the catusb process fails, the others end)
for impl in pipes ptask; do
	if timeout -k 5 "$LIMIT" "$G" run --impl "$impl" --cpu --recording "$W/bad" --frames 20 \
		--hid none --quiet --socket "$W/sock" >"$W/badrun.out" 2>&1; then
		not_ok "$impl over a corrupt frame succeeded"
	elif grep -qF "frame 5: checksum mismatch" "$W/badrun.out"; then
		ok "$impl over a corrupt frame stops with the frame's error"
	else
		not_ok "$impl over a corrupt frame: no clear error"
		sed 's/^/#   /' "$W/badrun.out"
	fi
done
# ptask without a daemon is an error, not a skip
"$G" run --impl ptask --cpu --frames 5 --hid none --quiet --socket "$W/nosock" \
	>"$W/nod.out" 2>&1
rc=$?
if [ "$rc" = 1 ] && grep -qF "no ptaskd to talk to (socket $W/nosock)" "$W/nod.out"; then
	ok "ptask without ptaskd: exit 1, $(head -n 1 "$W/nod.out")"
else
	not_ok "ptask without ptaskd: exit status $rc"
	sed 's/^/#   /' "$W/nod.out"
fi
cp "$W/rec" "$W/bad"
printf 'extra' >>"$W/bad"
bad_rec "bytes after the last frame" "$W/bad" "corrupt: 5 bytes after the last frame"

# --- make demo's script, small: table, PNG, the daemon stopped --------------------
if GESTURE_OUT="$W/demo" GESTURE_FRAMES=12 GESTURE_RT_FRAMES=6 \
	GESTURE_IMPLS="host handcode ptask" GESTURE_HID=none \
	timeout -k 5 "$LIMIT" examples/gesture/demo.sh >"$W/demo.out" 2>&1; then
	dpid=$(sed -n 's/.*ptaskd --mode user .*(pid \([0-9]*\),.*/\1/p' "$W/demo.out")
	rows=$(($(wc -l <"$W/demo/gesture.csv") - 1))
	if [ "$rows" -ge 4 ] && grep -q '^ptask *unconstrained' "$W/demo.out" &&
		{ [ -n "${GESTURE_NO_PLOT:-}" ] ||
		  [ "$(head -c 4 "$W/demo/gesture.png" | od -An -c | tr -d ' ')" = '211PNG' ]; } &&
		[ -n "$dpid" ] && ! kill -0 "$dpid" 2>/dev/null; then
		ok "demo.sh: $rows rows in the table, a PNG, ptaskd (pid $dpid) stopped"
	else
		not_ok "demo.sh: rows $rows, ptaskd pid '$dpid'"
		tail -n 20 "$W/demo.out" | sed 's/^/#   /'
	fi
else
	not_ok "demo.sh: exit status $?"
	tail -n 20 "$W/demo.out" | sed 's/^/#   /'
fi
printf 'impl,mode\nhost,realtime,cpu,oops\n' >"$W/bad.csv"
if "$G" table "$W/bad.csv" >"$W/table.out" 2>&1; then
	not_ok "gesture table accepted a malformed CSV"
elif grep -qF "bad.csv:2: not a result row" "$W/table.out"; then
	ok "gesture table: $(head -n 1 "$W/table.out")"
else
	not_ok "gesture table on a malformed CSV: no clear error"
	sed 's/^/#   /' "$W/table.out"
fi

# --hid uinput where there is no /dev/uinput: an error, not a silent print
if [ -e /dev/uinput ]; then
	skipped "--hid uinput without /dev/uinput: this machine has one"
elif "$G" run --impl host --cpu --frames 2 --hid uinput --quiet >"$W/ui.out" 2>&1; then
	not_ok "--hid uinput without /dev/uinput succeeded"
elif grep -qF "gesture: /dev/uinput: No such file or directory" "$W/ui.out"; then
	ok "--hid uinput without /dev/uinput: exit 1, $(head -n 1 "$W/ui.out")"
else
	not_ok "--hid uinput without /dev/uinput: no clear error"
	sed 's/^/#   /' "$W/ui.out"
fi

# --- bad command lines: exit 2 and a message naming the problem ------------------
bad_cli() {
	local msg=$1 rc
	shift
	"$G" "$@" >"$W/cli.out" 2>&1
	rc=$?
	if [ "$rc" = 2 ] && grep -qF -- "$msg" "$W/cli.out"; then
		ok "gesture $*: $(head -n 1 "$W/cli.out")"
	else
		not_ok "gesture $*: exit status $rc, expected 2 and '$msg'"
		sed 's/^/#   /' "$W/cli.out"
	fi
}
bad_cli "unknown command 'frobnicate'" frobnicate
bad_cli "--impl: 'gpu': host, handcode, pipes, modular or ptask" run --impl gpu
bad_cli "usage: --impl" run
bad_cli "--mode: 'fast': realtime or unconstrained" run --impl host --mode fast
bad_cli "--frames: '0' is not a number in 1..1000000" run --impl host --frames 0
bad_cli "--frames: '12x' is not a number" run --impl host --frames 12x
bad_cli "--cams: '1' is not a number in 2..4" run --impl host --cams 1
bad_cli "--cams: '5' is not a number in 2..4" record --out "$W/x" --cams 5
bad_cli "--hid: 'mouse': auto, uinput, print or none" run --impl host --hid mouse
bad_cli "--seed: '-3' is not a number" record --out "$W/x" --seed -3
bad_cli "usage: --out FILE" record
bad_cli "usage: FILE" verify

echo "1..$n"
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" = 0 ]
