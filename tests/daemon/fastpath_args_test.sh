#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# fastpath_args_test.sh - the fast-path benchmark's options and its
# no-GPU baseline (bench/fastpath-args-test.sh), in `make check-daemon`:
# a benchmark nobody runs here must still refuse bad input clearly.
exec "$(dirname "$0")/../../bench/fastpath-args-test.sh" "$@"
