#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# bench/encfs-gpu-run.sh - encfs-gpu on the lent GPU machine, in one call.
#
# Here first (root, package access):  make encfs-gpu-carry
#   (bench/encfs-gpu-carry.sh: builds, fills build/encfscarry, ~47 MB)
# Then the device tool, one call:
#   run(command="bash bench/encfs-gpu-run.sh",
#       carry=["build/encfscarry"], timeout_s=600)
# (one carried path, 47 MB with a 3 MB tree: under the 64 MiB limit.  The
# GPU machine has no package access, no libfuse3, no fusermount3: it runs
# as root, so libfuse3 and libfuse2 mount with mount(2) themselves,
# gocryptfs uses the carried fusermount3, and everything unmounts with
# umount.  Tested here under unshare -m with those programs and libraries
# hidden and ENCFS_RUN_PTASKD_BACKEND=cpu: 255 s on 2 CPUs.)
#
#   0. the machine, and ldd of every carried program (LD_LIBRARY_PATH =
#      the carried Debian libraries)
#   1. xts_gpu_test: the kernel against IEEE 1619, CAVP and OpenSSL
#   2. ENCFS_PTASKD_BACKEND=cuda tests/encfs/run.sh with ENCFS_TESTS=gpu:
#      tests/encfs/ptask.sh (vectors through ptaskd, every file operation
#      on a --backend gpu mount, fsx, concurrency, one format with cpu,
#      ptaskd killed under the mount, auto) against ptaskd --backend cuda
#   3. the auto crossover: three mounts with --backend auto against a
#      ptaskd --mode user --backend cuda, each printing what it measured
#   4. bench/encfs_bench.sh, every row (ptaskd --backend cuda), the
#      carried kernel-tree slice as the tarball, in the time left
# Everything lands in $OUT (build/encfs-gpu-run without it): summary.txt,
# encfs_bench.{csv,txt,png} and encfs-gpu-run.tar.gz (all logs); the
# device tool brings back 8 files at most.  Budgets: ENCFS_RUN_BUDGET
# (s, default 570, under run's 600), ENCFS_RUN_TEST_BUDGET (default 200).
# ENCFS_RUN_PTASKD_BACKEND=cpu (default cuda) stands in for the GPU, to
# try the whole run on a machine without one; ENCFS_BENCH_* pass through.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
START=$(date +%s)
BUDGET=${ENCFS_RUN_BUDGET:-570}
TEST_BUDGET=${ENCFS_RUN_TEST_BUDGET:-200}
PDB=${ENCFS_RUN_PTASKD_BACKEND:-cuda}
C=$ROOT/build/encfscarry
OUTDIR=${OUT:-$ROOT/build/encfs-gpu-run}
mkdir -p "$OUTDIR"
W=$(mktemp -d /var/tmp/encfs-gpu-run.XXXXXX)
S=$W/summary.txt
PDPID=
MNT=
FPID=
# (encfs keeps its own libencfs in /usr/lib/encfs, found by its RUNPATH on
# an installed system: here that path is the carried one)
export LD_LIBRARY_PATH="$C/root/usr/lib/x86_64-linux-gnu:$C/root/lib/x86_64-linux-gnu:$C/root/usr/lib/encfs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PATH="$C/root/usr/bin:$C/root/bin:$PATH"
export XTS_CAVP_DIR=$C/gpu/XTS

say() { echo "$*" | tee -a "$S"; }
left() { echo $((BUDGET - ($(date +%s) - START))); }

finish() {
	local rc=$?
	if [ -n "$MNT" ] && mountpoint -q "$MNT"; then umount "$MNT" || umount -l "$MNT" || true; fi
	if [ -n "$FPID" ]; then kill "$FPID" 2>/dev/null || true; wait "$FPID" 2>/dev/null || true; fi
	if [ -n "$PDPID" ]; then kill "$PDPID" 2>/dev/null || true; wait "$PDPID" 2>/dev/null || true; fi
	say "encfs-gpu-run: done in $(($(date +%s) - START)) s (exit $rc)"
	cp "$S" "$OUTDIR/summary.txt"
	for f in encfs_bench.csv encfs_bench.txt encfs_bench.png; do
		[ -f "$W/bench/$f" ] && cp "$W/bench/$f" "$OUTDIR/"
	done
	cp "$C"/tests/*.log "$W/" 2>/dev/null || true
	# Its entries by name, not ".": a "./" entry carries the mktemp
	# directory's mode 0700 to any directory it is extracted into with -C.
	tar -C "$W" -czf "$OUTDIR/encfs-gpu-run.tar.gz" $(cd "$W" && ls -A | grep -vx bench-dir) || true
	rm -rf "$W"
	exit "$rc"
}
trap finish EXIT
trap 'exit 130' INT TERM

# ---------------------------------------------------------------- 0.
say "date=$(date -u +%Y-%m-%dT%H:%M:%SZ) host=$(hostname) cpus=$(nproc) kernel=$(uname -r)"
say "gpu: $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | head -n 1)"
say "backing: /var/tmp on $(df -T /var/tmp | awk 'NR == 2 { print $2 ", " $5 " free" }')"
say "carried: $(tr '\n' ' ' <"$C/root/PACKAGES"); tarball: $(cat "$C/src.txt")"
for p in "$C/bin/encfs-gpu" "$C/bin/ptaskd" "$C/bin/ptaskctl" "$C/root/usr/bin/gocryptfs" "$C/root/usr/bin/encfs" \
	"$C/tests/encfs-gpu-san" "$C/tests/vectors_test"; do
	if ldd "$p" 2>&1 | grep -q 'not found'; then
		say "MISSING libraries for $p: $(ldd "$p" | grep 'not found' | tr '\n' ' ')"
	fi
done
# (fusermount3 should be the carried one: gocryptfs mounts through it)
for t in xz fusermount3 fusermount gocryptfs encfs; do
	say "$t: $(command -v "$t" || echo none)"
done

# ---------------------------------------------------------------- 1.
rc=0
timeout -k 10 120 "$C/gpu/xts_gpu_test" "$C/gpu/aes_xts.ptx" >"$W/xts_gpu_test.txt" 2>&1 || rc=$?
say "1. xts_gpu_test exit $rc: $(grep -c '^ok' "$W/xts_gpu_test.txt" || true) ok, $(grep -c '^not ok' "$W/xts_gpu_test.txt" || true) not ok"
grep -E '^(not ok|#)' "$W/xts_gpu_test.txt" | head -n 20 | tee -a "$S" || true

# ---------------------------------------------------------------- 2.
rc=0
ENCFS_TESTS=gpu ENCFS_PTASKD_BACKEND=$PDB ENCFS_TEST_DIR=$C/tests ENCFS_BIN=$C/bin/encfs-gpu \
	ENCFS_PTASKD=$C/bin/ptaskd ENCFS_PTASKCTL=$C/bin/ptaskctl \
	timeout -k 10 "$TEST_BUDGET" tests/encfs/run.sh >"$W/check-gpu.log" 2>&1 || rc=$?
say "2. ENCFS_PTASKD_BACKEND=$PDB tests/encfs/run.sh (ENCFS_TESTS=gpu), exit $rc: $(tail -n 1 "$W/check-gpu.log")"
grep -E 'FAIL|skip - ' "$W/check-gpu.log" | tee -a "$S" || true

# ---------------------------------------------------------------- 3.
SOCK=$W/ptaskd.sock
"$C/bin/ptaskd" --mode user --backend "$PDB" --socket "$SOCK" >>"$W/ptaskd.log" 2>&1 &
PDPID=$!
for _ in $(seq 200); do [ -S "$SOCK" ] && break; sleep 0.05; done
if [ -S "$SOCK" ]; then
	echo "crossover password" >"$W/pw"
	mkdir -p "$W/xc" "$W/xm"
	"$C/bin/encfs-gpu" init --scrypt-logn 12 --passfile "$W/pw" "$W/xc" >/dev/null 2>&1
	for i in 1 2 3; do
		MNT=$W/xm
		PTASK_MODE=user PTASK_SOCKET=$SOCK "$C/bin/encfs-gpu" mount -f --backend auto \
			--passfile "$W/pw" "$W/xc" "$MNT" >"$W/auto$i.log" 2>&1 &
		FPID=$!
		for _ in $(seq 600); do mountpoint -q "$MNT" && break; sleep 0.05; done
		say "3. auto, mount $i: $(grep -h 'backend auto:' "$W/auto$i.log" || echo 'no line; see auto'$i'.log')"
		mountpoint -q "$MNT" && umount "$MNT"
		wait "$FPID" || true
		FPID= MNT=
	done
	kill "$PDPID"
	wait "$PDPID" || true
else
	say "3. ptaskd --backend $PDB did not start: $(tail -n 2 "$W/ptaskd.log")"
	kill "$PDPID" 2>/dev/null || true
	wait "$PDPID" 2>/dev/null || true
fi
PDPID=

# ---------------------------------------------------------------- 4.
t=$(($(left) - 15))
say "4. bench/encfs_bench.sh with ${t} s left"
rc=0
mkdir -p "$W/bench-dir"
ENCFS_BENCH_ROWS=${ENCFS_BENCH_ROWS:-cpu gpu gocryptfs auto encfs plain} \
	ENCFS_BENCH_PTASKD_BACKEND=$PDB ENCFS_BENCH_TARBALL=${ENCFS_BENCH_TARBALL-$C/src.tar.xz} \
	ENCFS_BENCH_OUT=$W/bench ENCFS_BENCH_DIR=$W/bench-dir \
	ENCFS_BENCH_ENCFSGPU=$C/bin/encfs-gpu ENCFS_BENCH_PTASKD=$C/bin/ptaskd \
	ENCFS_BENCH_STEP_TIMEOUT=${ENCFS_BENCH_STEP_TIMEOUT:-120} \
	timeout -k 10 "$t" bash bench/encfs_bench.sh >"$W/bench.out" 2>&1 || rc=$?
say "bench exit $rc"
if [ -s "$W/bench/encfs_bench.txt" ] && [ "$rc" = 0 ]; then
	cat "$W/bench/encfs_bench.txt" >>"$S"
elif [ -s "$W/bench/encfs_bench.csv" ]; then
	say "(cut short: the rows measured so far)"
	awk -F, -f bench/encfs_table.awk "$W/bench/encfs_bench.csv" | tee -a "$S"
	tail -n 5 "$W/bench.out" | tee -a "$S"
else
	tail -n 20 "$W/bench.out" | tee -a "$S"
fi
rm -rf "$W/bench-dir"
