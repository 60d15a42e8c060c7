#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# examples/gesture/demo.sh - what `make demo` runs: the gesture pipeline's
# five implementations, in realtime and unconstrained modes, on the best
# backend this machine has; then the table and a PNG plot.
#
#   gesture gpucheck --frames 1 --> GPU works?  yes: ptaskd --backend cuda
#                                               no:  ptaskd --backend cpu and
#                                                    the stages' CPU code
#   ptaskd --mode user --socket $W/sock  (a private daemon, stopped at the end)
#   for mode in realtime unconstrained; for impl in host handcode pipes modular ptask:
#       gesture run --impl $impl --mode $mode --csv $OUT/gesture.csv
#   gesture table $OUT/gesture.csv;  plot.py -> $OUT/gesture.png
#
# An implementation that cannot run here (handcode without a GPU) is left
# out of the table, saying so.  Environment:
#   GESTURE_OUT        where results go (build/demo)
#   GESTURE_FRAMES     unconstrained frames (1000)
#   GESTURE_RT_FRAMES  realtime frames (150: 5 s at 30 fps)
#   GESTURE_IMPLS      implementations to run ("host handcode pipes modular ptask")
#   GESTURE_BACKEND    cuda or cpu instead of probing
#   GESTURE_PTASKD_ARGS more ptaskd options (e.g. --isolation shared)
#   GESTURE_NO_PLOT=1  no PNG (a machine without matplotlib; plot.py can
#                      draw it elsewhere from gesture.csv)
#   GESTURE_HID        auto (uinput when /dev/uinput opens, else print to a
#                      log), uinput, print or none.  uinput makes a real
#                      pointer that moves and clicks on this machine's
#                      desktop; GESTURE_HID=print avoids that.
# Exit 0 when every implementation that can run here ran.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"

G=build/bin/gesture
D=build/bin/ptaskd
OUTDIR=${GESTURE_OUT:-build/demo}
FRAMES=${GESTURE_FRAMES:-1000}
RT_FRAMES=${GESTURE_RT_FRAMES:-150}
IMPLS=${GESTURE_IMPLS:-host handcode pipes modular ptask}
HID=${GESTURE_HID:-auto}
CSV=$OUTDIR/gesture.csv
# Debian's python3, where `make deps` installs matplotlib (a python3 of
# pyenv or a venv first in PATH may lack it)
PY=$( [ -x /usr/bin/python3 ] && echo /usr/bin/python3 || echo python3)
PNG=$OUTDIR/gesture.png
LOGS=$OUTDIR/logs

say() { printf 'demo: %s\n' "$*"; }
die() { printf 'demo: error: %s\n' "$*" >&2; exit 1; }

for f in "$G" "$D"; do
	[ -x "$f" ] || die "$f missing: run 'make demo' (it builds it)"
done
mkdir -p "$LOGS" || die "cannot make $LOGS"
rm -f "$CSV" "$PNG" "$LOGS"/*
W=$(mktemp -d)
DPID=
stop_daemon() {
	[ -n "$DPID" ] || return 0
	kill -TERM "$DPID" 2>/dev/null
	wait "$DPID" 2>/dev/null
	local rc=$?
	DPID=
	return $rc
}
trap 'stop_daemon; rm -rf "$W"' EXIT
trap 'exit 130' INT TERM

# --- the backend ----------------------------------------------------------------
backend=${GESTURE_BACKEND:-}
if [ -z "$backend" ]; then
	"$G" gpucheck --frames 1 >"$LOGS/gpucheck.log" 2>&1
	case $? in
	0) backend=cuda ;;
	77) backend=cpu ;;
	*) say "warning: the GPU's stages disagree with the CPU's (see $LOGS/gpucheck.log); running on the GPU anyway"
	   backend=cuda ;;
	esac
fi
case $backend in
cuda) say "backend: cuda${GESTURE_BACKEND:+ (GESTURE_BACKEND)}$(grep -m1 '^# ' "$LOGS/gpucheck.log" 2>/dev/null | sed 's/^# / on /')"
      cpu_flag=() ;;
cpu) say "backend: cpu - no usable GPU here, so the stages run their CPU implementations"
     say "         (ptaskd --backend cpu runs the kernels' host twins; handcode needs a GPU)"
     cpu_flag=(--cpu) ;;
*) die "GESTURE_BACKEND=$backend: cuda or cpu" ;;
esac
case $HID in
auto) if [ -w /dev/uinput ]; then
	      say "events: a uinput pointer device ('ptask gesture pointer'; GESTURE_HID=print to keep it off the desktop)"
      else
	      say "events: no /dev/uinput, so hidinput prints them to $LOGS/<impl>-<mode>.events"
      fi ;;
uinput | print | none) say "events: --hid $HID" ;;
*) die "GESTURE_HID=$HID: auto, uinput, print or none" ;;
esac

# --- the daemon -------------------------------------------------------------------
# shellcheck disable=SC2086 # GESTURE_PTASKD_ARGS is a list of options
"$D" --mode user --backend "$backend" --socket "$W/sock" \
	--host-kernels "$ROOT/build/twins" ${GESTURE_PTASKD_ARGS:-} \
	>"$LOGS/ptaskd.log" 2>&1 &
DPID=$!
# up to 30 s: a busy machine starts it later, not never
for _ in $(seq 300); do [ -S "$W/sock" ] && break; sleep 0.1; done
[ -S "$W/sock" ] || die "ptaskd did not start within 30 s: $(tail -n 3 "$LOGS/ptaskd.log")"
say "ptaskd --mode user --backend $backend ${GESTURE_PTASKD_ARGS:+$GESTURE_PTASKD_ARGS }(pid $DPID, socket $W/sock)"

# --- the runs ---------------------------------------------------------------------
failed=0 ran=0 skipped=()
for mode in realtime unconstrained; do
	frames=$FRAMES
	[ "$mode" = realtime ] && frames=$RT_FRAMES
	for impl in $IMPLS; do
		log=$LOGS/$impl-$mode
		say "$impl, $mode, $frames frames"
		# stderr stays the terminal's: gesture shows its progress there
		# (a line updated in place); the result line goes to the log
		"$G" run --impl "$impl" --mode "$mode" --frames "$frames" \
			"${cpu_flag[@]}" --socket "$W/sock" --daemon-pid "$DPID" \
			--hid "$HID" --hid-log "$log.events" --csv "$CSV" \
			>"$log.out"
		rc=$?
		case $rc in
		0) ran=$((ran + 1)) ;;
		77) [ "$mode" = realtime ] && skipped+=("$impl") ;;
		*) failed=$((failed + 1))
		   say "$impl $mode FAILED (exit status $rc)" ;;
		esac
	done
done
stop_daemon
drc=$?
[ "$drc" = 0 ] || { say "ptaskd exit status $drc (see $LOGS/ptaskd.log)"; failed=$((failed + 1)); }

# --- the table and the plot -------------------------------------------------------------
echo
if [ -s "$CSV" ]; then
	"$G" table "$CSV" | tee "$OUTDIR/gesture-table.txt"
else
	say "no run succeeded: no table"
	failed=$((failed + 1))
fi
[ "${#skipped[@]}" = 0 ] || say "not run here: ${skipped[*]} (needs a GPU)"
if [ -s "$CSV" ] && [ -n "${GESTURE_NO_PLOT:-}" ]; then
	say "no plot (GESTURE_NO_PLOT); elsewhere: python3 examples/gesture/plot.py $CSV gesture.png"
elif [ -s "$CSV" ]; then
	if "$PY" examples/gesture/plot.py "$CSV" "$PNG" "gesture pipeline, $backend backend, $(hostname), $(date -u +%Y-%m-%d)"; then
		say "table: $OUTDIR/gesture-table.txt, data: $CSV, plot: $PNG, logs: $LOGS/"
	else
		say "the plot failed (python3-matplotlib missing? 'make deps' installs it)"
		failed=$((failed + 1))
	fi
fi
[ "$failed" = 0 ] || { say "$failed failure(s)"; exit 1; }
say "done: $ran runs"
