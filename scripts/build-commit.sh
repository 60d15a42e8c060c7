#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# scripts/build-commit.sh - what the tree is being built from, for the
# record a build leaves beside its binary (build/bin/ptaskd.commit): HEAD's
# short id, "+changes" when the working tree differs from it (untracked
# files that git does not ignore count), "unknown"
# outside a git checkout.  The GPU machine gets the working tree but not
# always a current .git, so benchmarks there read this file instead of
# asking git (bench/fastpath-run.sh).
c=$(git rev-parse --short HEAD 2>/dev/null) || { echo unknown; exit 0; }
[ -z "$(git status --porcelain 2>/dev/null)" ] || c="$c+changes"
echo "$c"
