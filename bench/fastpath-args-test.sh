#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# bench/fastpath-args-test.sh - build/bin/fastpath refuses every bad
# option with a message naming it (exit 2), says clearly when there is no
# ptaskd to measure (exit 1), and runs its no-GPU baseline alone (exit 0,
# result lines present); bench/fastpath-ab.sh refuses its bad arguments.  Needs no GPU and no ptaskd: `make
# bench-fastpath-check`, and `make check-daemon` through
# tests/daemon/fastpath_args_test.sh).  TAP (tests/tap.sh); last line
# "N passed, M failed, K skipped".
set -u
cd "$(dirname "$0")/.." || exit 1
# shellcheck source=tests/tap.sh
. tests/tap.sh
FP=build/bin/fastpath
PTX=build/gpu/bench_kernels.ptx
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

# refused WANT_IN_MESSAGE COMMAND...: exit 2, the message names the problem
refused() {
	local want=$1

	shift
	"$@" >"$T/out" 2>"$T/err"
	local st=$?
	if [ "$st" = 2 ] && grep -q -- "$want" "$T/err"; then
		ok "$* refused: '$want'"
	else
		notok "$* -> exit $st, stderr:"
		sed 's/^/#    /' "$T/err"
	fi
}

bad() { local want=$1; shift; refused "$want" "$FP" --ptx "$PTX" "$@"; }

bad "--rounds '99'" --rounds 99
bad "--rounds 'x'" --rounds x
bad "--rounds '5e3'" --rounds 5e3
bad "--warmup '-1'" --warmup -1
bad "--batches '9'" --batches 9
bad "--inflight '0'" --inflight 0
bad "--inflight '4097'" --inflight 4097
bad "--streams '17'" --streams 17
bad "--p1b 'sync'" --p1b sync
bad "--p1b ''" --p1b ""
bad "--seconds '0'" --seconds 0
bad "--seconds 'abc'" --seconds abc
bad "--idle-seconds '0.1'" --idle-seconds 0.1
bad "--procs '0'" --procs 0
bad "--procs '65'" --procs 1,65
bad "--procs ''" --procs ""
bad "--procs ',,'" --procs ,,
bad "too many entries" --procs 1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17
bad "--chain '1001'" --chain 1001
bad "--big-bytes '6'" --big-bytes 6
bad "--big-bytes '2'" --big-bytes 2
bad "--big-max-k '-3'" --big-max-k -3
bad "--ptaskd-pid '0'" --ptaskd-pid 0
bad "--parts 'p2'" --parts p1,p2
bad "--sides 'gpu'" --sides gpu
bad "--baseline 'opencl'" --baseline opencl
bad "name one" --baseline cuda,socket
bad "nothing to measure" --baseline none --sides raw
bad "--seed '4294967296'" --seed 4294967296
bad "longer than 200" --tag "$(printf 'x%.0s' $(seq 201))"
bad "argument 'extra'" extra
bad "unrecognized option" --no-such-option
bad "cannot read the PTX" --ptx "$T/none.ptx"

# no daemon: a clear error, exit 1
PTASK_MODE=user PTASK_SOCKET=$T/no-such.sock "$FP" --ptx "$PTX" --parts p1 \
	--rounds 100 >"$T/out" 2>"$T/err"
st=$?
if [ "$st" = 1 ] && grep -q "is ptaskd running" "$T/err"; then
	ok "no ptaskd: exit 1, 'is ptaskd running'"
else
	notok "no ptaskd -> exit $st"; sed 's/^/#    /' "$T/err"
fi

# the socket baseline alone runs and reports (no ptaskd, no GPU)
"$FP" --ptx "$PTX" --baseline socket --sides raw --parts p1,p1b,p1c \
	--rounds 200 --warmup 10 --batches 10 --procs 1,2 --seconds 0.2 \
	>"$T/out" 2>"$T/err"
st=$?
if [ "$st" = 0 ] && grep -q '^P1 variant=raw .*pingpong_med_us=' "$T/out" &&
   grep -q '^P1B variant=raw .*pingpong_per_s=' "$T/out" &&
   grep -q '^P1C procs=2 .*raw_per_s=' "$T/out" &&
   ! grep -q 'raw_threads' "$T/out"; then
	ok "the socket baseline alone reports P1, P1b and P1c (no raw threads: CUDA's)"
else
	notok "socket baseline alone -> exit $st"
	cat "$T/out" "$T/err" | sed 's/^/#    /'
fi

# bench/fastpath-ab.sh: every bad argument refused (exit 2) before a run
ab_bad() { local want=$1; shift; refused "$want" bash bench/fastpath-ab.sh "$@"; }

ab_bad "usage" -n 2
ab_bad "-n ROUNDS" -n 0 a=build/bin/ptaskd
ab_bad "-n ROUNDS" -n x a=build/bin/ptaskd
ab_bad "-b cuda|cpu" -b opencl a=build/bin/ptaskd
ab_bad "not an executable" a="$T/no-such-ptaskd"
ab_bad "NAME of letters" "a b=build/bin/ptaskd"
ab_bad "VAR=VALUE" a=build/bin/ptaskd:novalue
ab_bad "twice" a=build/bin/ptaskd a=build/bin/ptaskd

# bench/fastpath-run.sh: FASTPATH_PTASKD_ARGS takes options only
FASTPATH_PTASKD_ARGS="--lanes=1 lanes" OUT="$T/run" \
	refused "'lanes' is not a --NAME" bash bench/fastpath-run.sh --backend cpu
# build/gpu/gpu_raw refuses a GPU_RAW_CHAIN_OTHER it does not know,
# before it looks for a GPU (make check-daemon builds it)
if [ -x build/gpu/gpu_raw ]; then
	GPU_RAW_CHAIN_OTHER=streams refused "GPU_RAW_CHAIN_OTHER='streams': graph or kernel" \
		build/gpu/gpu_raw build/gpu/kernels.ptx
else
	skip "gpu_raw refuses a bad GPU_RAW_CHAIN_OTHER" "no build/gpu/gpu_raw"
fi

# ... and hands them to ptaskd (the cpu backend, one short P1 run)
if [ -x build/bin/ptaskd ] && [ -d build/twins ]; then
	FASTPATH_PTASKD_ARGS="--lanes=5 --inflight=9" FASTPATH_CONFIGS="client:default:p1" \
		FASTPATH_ARGS="--quick --rounds 100 --warmup 10" FASTPATH_BUDGET=60 \
		OUT="$T/lanes" bash bench/fastpath-run.sh --backend cpu \
		>"$T/out" 2>"$T/err"
	st=$?
	if [ "$st" = 0 ] &&
	   tar xzOf "$T/lanes/fastpath-run.tar.gz" ptaskd.log 2>/dev/null |
	   grep -q '9 jobs in flight per device on 5 lane(s)'; then
		ok "FASTPATH_PTASKD_ARGS='--lanes=5 --inflight=9' reach ptaskd (its log says so)"
	else
		notok "FASTPATH_PTASKD_ARGS='--lanes=5 --inflight=9' -> exit $st, or not in ptaskd's log"
		sed 's/^/#    /' "$T/err"
	fi
else
	skip "FASTPATH_PTASKD_ARGS reaches ptaskd" "no build/bin/ptaskd or build/twins"
fi

finish
