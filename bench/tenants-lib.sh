# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# bench/tenants-lib.sh - what bench/tenants-run.sh and bench/faults-run.sh
# share (sourced, not run): a user-mode ptaskd on $W/sock and NVIDIA MPS
# under a pipe directory of the caller's own.  The caller sets W (its
# work directory), PTASKD (the binary) and say() (a logging function).
#
#   tl_start_daemon ARGS...   ptaskd --mode user --socket $W/sock ARGS,
#                             log $W/ptaskd.log, socket made 0666 (other
#                             uids' clients); sets DPID; 1 if it did not
#                             start
#   tl_stop_daemon            SIGTERM, 15 s, then SIGKILL; DPID cleared
#   tl_mps_start, tl_mps_stop a control daemon on $W/mps-pipe, and quit
DPID=""

tl_start_daemon() {
	local args=(--mode user --socket "$W/sock" "$@")

	rm -f "$W/sock"
	echo "== ptaskd ${args[*]}" >>"$W/ptaskd.log"
	"$PTASKD" "${args[@]}" >>"$W/ptaskd.log" 2>&1 &
	DPID=$!
	for _ in $(seq 300); do
		if [ -S "$W/sock" ]; then
			chmod 666 "$W/sock"
			return 0
		fi
		kill -0 "$DPID" 2>/dev/null || break
		sleep 0.1
	done
	say "ptaskd did not start: $(tail -n 3 "$W/ptaskd.log")"
	DPID=""
	return 1
}

tl_stop_daemon() {
	[ -n "$DPID" ] || return 0
	kill -TERM "$DPID" 2>/dev/null
	for _ in $(seq 150); do kill -0 "$DPID" 2>/dev/null || break; sleep 0.1; done
	kill -0 "$DPID" 2>/dev/null && kill -KILL "$DPID"
	wait "$DPID" 2>/dev/null
	DPID=""
}

tl_mps_start() {
	export CUDA_MPS_PIPE_DIRECTORY=$W/mps-pipe CUDA_MPS_LOG_DIRECTORY=$W/mps-log
	mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
	chmod 755 "$CUDA_MPS_PIPE_DIRECTORY"
	nvidia-cuda-mps-control -d
}

tl_mps_stop() {
	echo quit | nvidia-cuda-mps-control
	sleep 1
	unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
}
