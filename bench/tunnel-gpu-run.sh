#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# bench/tunnel-gpu-run.sh - bench/tunnel-run.sh on the lent GPU machine
# (ptaskd --backend cuda), with the programs carried from here.
#
# Here first (root, package access):
#   make encfs-gpu-carry build/encfs-gpu/tunnel_bench
# (encfs-gpu-carry builds ptaskd and ptaskctl and carries the libnl the GPU
# machine lacks; tunnel_bench needs only libcrypto and libc.)  Then, on the
# GPU machine:
#   run(command="bench/tunnel-gpu-run.sh",
#       carry=["build/encfscarry", "build/encfs-gpu/tunnel_bench"],
#       timeout_s=600)
# It prints tunnel-run.sh's table; TUNNEL_* knobs pass through.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
C=$ROOT/build/encfscarry
export LD_LIBRARY_PATH="$C/root/usr/lib/x86_64-linux-gnu:$C/root/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export TUNNEL_BACKEND=${TUNNEL_BACKEND:-cuda}
export TUNNEL_PTASKD=${TUNNEL_PTASKD:-$C/bin/ptaskd}
export TUNNEL_PTASKCTL=${TUNNEL_PTASKCTL:-$C/bin/ptaskctl}
export TUNNEL_BENCH_BIN=${TUNNEL_BENCH_BIN:-$ROOT/build/encfs-gpu/tunnel_bench}
command -v nvidia-smi >/dev/null && nvidia-smi -L
exec bench/tunnel-run.sh
