#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# tests/gpu/gesture_gpu_test.sh - the gesture pipeline's GPU stages against
# the CPU reference (build/bin/gesture gpucheck): xform, the stacked filter
# and the filter of each camera alone (the ptask graph's) on 60 generated frames,
# each coordinate within GESTURE_GPU_TOL_MM (0.01 mm; the kernels are built
# without contraction, so 0 is expected) and the same hidinput events.
# Skips (exit 77, "0 passed, 0 failed, 1 skipped") without a GPU.
# Builds nothing: carry build/bin from `make gesture`.
set -uo pipefail
cd "$(dirname "$0")/../.."

G=build/bin/gesture
if [ ! -x "$G" ]; then
	echo "gesture_gpu_test: $G missing; run 'make gesture' first" >&2
	echo "0 passed, 1 failed, 0 skipped"
	exit 1
fi
timeout -k 10 300 "$G" gpucheck --frames "${GESTURE_GPUCHECK_FRAMES:-60}"
rc=$?
case $rc in
0) echo "1 passed, 0 failed, 0 skipped" ;;
77) echo "0 passed, 0 failed, 1 skipped"; exit 77 ;;
*) echo "0 passed, 1 failed, 0 skipped"; exit 1 ;;
esac
