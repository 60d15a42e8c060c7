# SPDX-License-Identifier: GPL-2.0
# tests/encfs/ptask.sh - sourced by tests/encfs/run.sh: encfs-gpu's gpu
# backend through ptaskd, on a machine without a GPU.
#
# The test starts its own ptaskd (--mode user --backend cpu) on a private
# socket; its cpu backend runs the host twin of the CUDA kernel
# (encfs-gpu/gpu/twin.c, build/twins/encfs-gpu.so), so everything but the GPU itself is the real
# path: the embedded PTX handed to ptaskd, the graphs, the by-value key and
# shape parameters, the in/out datablock, the engine.  Then:
#   - the known-answer vectors through the ptask path (vectors_test gpu);
#   - every file operation against a plain directory, fsx with two files
#     at once, concurrent writers, on a --backend gpu mount;
#   - that the I/O really went through ptaskd (its invocation count);
#   - files written with the gpu backend read back identically with the
#     cpu backend after a remount, and the other way round (one format);
#   - ptaskd killed under the mount: reads and writes fail with EIO at
#     once (no hang, no bytes), the daemon lives, a restarted ptaskd is
#     picked up, and unmount works with ptaskd gone;
#   - --backend auto with ptaskd measures both and mounts.
# Uses run.sh's helpers (ok, bad, check, expect, tap) and variables.
#
# ENCFS_PTASKD_BACKEND=cuda (default cpu) runs the same tests against the
# real kernel on a GPU machine.

PT_PD=		# ptaskd's pid while it runs (run.sh's cleanup kills it)
PT_BACKEND=${ENCFS_PTASKD_BACKEND:-cpu}

ptask_tests() {
	local W=$1 S=$1/ptaskd.sock C=$1/c M=$1/m P=$1/plain PW=$1/pw LOG=$1/daemon.log
	local pid= rc n0 n1 i
	mkdir -p "$C" "$M" "$P"
	echo "correct horse battery staple" >"$PW"

	pt_ptaskd_start() {
		rm -f "$S"
		"$PTASKD" --mode user --backend "$PT_BACKEND" --socket "$S" \
			--host-kernels "$TWINS" 2>>"$W/ptaskd.log" &
		PT_PD=$!
		# up to 30 s: a busy machine starts it later, not never
		for _ in $(seq 600); do
			[ -S "$S" ] && return 0
			kill -0 "$PT_PD" 2>/dev/null || { PT_PD=; return 1; }
			sleep 0.05
		done
		return 1
	}
	pt_ptaskd_kill() {
		[ -n "$PT_PD" ] || return 0
		kill -KILL "$PT_PD"
		wait "$PT_PD" 2>/dev/null
		PT_PD=
	}
	pt_invocations() {
		PTASK_SOCKET=$S "$PTASKCTL" --json info 2>/dev/null |
			grep -oE '"engine":\{"invocations":[0-9]+' | grep -oE '[0-9]+$'
	}
	pt_mount() { # BACKEND [DAEMON]
		local d=${2:-$T/encfs-gpu-san}
		mountpoint -q "$M" && return 1
		PTASK_SOCKET=$S "$d" mount -f --backend "$1" --passfile "$PW" "$C" "$M" \
			>>"$LOG" 2>&1 &
		pid=$!
		for _ in $(seq 600); do	# 30 s
			mountpoint -q "$M" && return 0
			kill -0 "$pid" 2>/dev/null || { pid=; return 1; }
			sleep 0.05
		done
		return 1
	}
	pt_umount() {
		[ -n "$pid" ] || return 0
		timeout 30 fusermount3 -u "$M" || umount "$M" || return 1
		# the daemon must exit by itself, ptaskd or not (30 s)
		for _ in $(seq 600); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.05
		done
		kill -0 "$pid" 2>/dev/null && return 1
		wait "$pid"
		rc=$?
		pid=
		return $rc
	}

	if ! pt_ptaskd_start; then
		bad "ptaskd --mode user --backend $PT_BACKEND on a private socket"
		tail -5 "$W/ptaskd.log"
		return
	fi
	ok "ptaskd --mode user --backend $PT_BACKEND on a private socket"

	# --- the vectors through the ptask path
	say "running vectors_test gpu"
	PTASK_SOCKET=$S timeout -k 10 600 stdbuf -oL "$T/vectors_test" gpu \
		>"$T/vectors_test_gpu.log" 2>&1
	rc=$?
	grep -E '^(not ok|#)' "$T/vectors_test_gpu.log" | head -20
	tap "vectors_test gpu" "$T/vectors_test_gpu.log" "$rc"

	# --- every operation, on a gpu mount
	"$BIN" init --scrypt-logn 10 --passfile "$PW" "$C" >/dev/null 2>&1
	if ! pt_mount gpu; then
		bad "mount --backend gpu against ptaskd (checks the kernel at mount)"
		tail -20 "$LOG"
		pt_ptaskd_kill
		return
	fi
	ok "mount --backend gpu against ptaskd (checks the kernel at mount)"
	n0=$(pt_invocations)
	timeout -k 10 300 "$T/fsops_test" "$M" "$P" >"$T/fsops_test_gpu.log" 2>&1
	rc=$?
	grep -E '^(not ok|#)' "$T/fsops_test_gpu.log"
	tap "fsops_test (gpu backend)" "$T/fsops_test_gpu.log" "$rc"
	n1=$(pt_invocations)
	check "the gpu mount's I/O ran as ptasks in ptaskd ($((${n1:-0} - ${n0:-0})) invocations)" \
		test "${n1:-0}" -gt $((${n0:-0} + 100))
	check "unmount (gpu)" pt_umount
	pt_mount gpu || bad "remount (gpu)"
	"$T/fsops_test" tree "$M" >"$W/tree.m"
	"$T/fsops_test" tree "$P" >"$W/tree.p"
	check "gpu: after a remount the tree equals the plain one ($(wc -l <"$W/tree.m") entries)" \
		diff -u "$W/tree.p" "$W/tree.m"
	rm -rf "${M:?}"/* "${P:?}"/*

	# --- random operations, two files at once; concurrent writers
	local r1 r2
	timeout -k 10 300 "$T/fsx" -N 2000 -S 7 -l 1048576 -m "$W/good1" "$M/fsx1" \
		>"$W/fsx1.log" 2>&1 &
	r1=$!
	timeout -k 10 300 "$T/fsx" -N 2000 -S 107 -l 300000 -o 20000 -m "$W/good2" "$M/fsx2" \
		>"$W/fsx2.log" 2>&1
	r2=$?
	wait "$r1"
	r1=$?
	if [ "$r1" = 0 ] && [ "$r2" = 0 ]; then
		ok "gpu: fsx, 2 x 2000 random ops at once, checked against the model"
	else
		cat "$W/fsx1.log" "$W/fsx2.log" | tail -40
		bad "gpu: fsx"
	fi
	rm -f "$M/fsx1" "$M/fsx2"
	for i in 1 2 3 4; do
		head -c $((3000000 + i * 4099)) /dev/urandom >"$W/par$i"
	done
	# (wait on the copies only: ptaskd and the mount are children too)
	local cps=()
	for i in 1 2 3 4; do
		cp "$W/par$i" "$M/par$i" &
		cps+=($!)
	done
	wait "${cps[@]}"
	check "gpu: 4 concurrent writers, then 4 concurrent readers, all equal" bash -c "
		p=(); for i in 1 2 3 4; do cmp '$W/par'\$i '$M/par'\$i & p+=(\$!); done
		r=0; for j in \${p[@]}; do wait \$j || r=1; done; exit \$r"

	# --- one format: gpu-written files read with cpu, and back
	head -c 9000000 /dev/urandom >"$W/big"
	cp "$W/big" "$M/big"
	printf 'tiny' >"$M/tiny"
	head -c 4113 /dev/urandom >"$M/odd"
	"$T/fsops_test" tree "$M" >"$W/tree.gpu"
	check "unmount (gpu)" pt_umount
	pt_mount cpu || bad "mount --backend cpu on the gpu-written volume"
	"$T/fsops_test" tree "$M" >"$W/tree.cpu"
	check "files written by the gpu backend read back identically with the cpu backend" \
		bash -c "diff -u '$W/tree.gpu' '$W/tree.cpu' && cmp '$W/big' '$M/big' &&
			 for i in 1 2 3 4; do cmp '$W/par'\$i '$M/par'\$i || exit 1; done"
	head -c 5000000 /dev/urandom >"$W/bycpu"
	cp "$W/bycpu" "$M/bycpu"
	pt_umount
	pt_mount gpu || bad "remount (gpu)"
	check "files written by the cpu backend read back identically with the gpu backend" \
		cmp "$W/bycpu" "$M/bycpu"

	# --- ptaskd killed under the mount
	pt_ptaskd_kill
	expect "ptaskd killed: a read fails with EIO at once" 1 'Input/output error' \
		timeout 20 cat "$M/big"
	rm -f "$W/partial"
	timeout 20 dd if="$M/bycpu" of="$W/partial" bs=1M status=none 2>/dev/null
	check "ptaskd killed: a failed read returns no bytes" test ! -s "$W/partial"
	expect "ptaskd killed: a write fails with EIO" 1 'Input/output error' \
		timeout 20 dd if="$W/big" of="$M/new" bs=64k count=4 conv=fsync status=none
	check "ptaskd killed: the filesystem daemon lives and lists" bash -c \
		"kill -0 $pid && ls '$M' | grep -q bycpu"
	if pt_ptaskd_start; then
		check "ptaskd restarted: the mount connects again, the files read back equal" \
			bash -c "cmp '$W/big' '$M/big' && cmp '$W/bycpu' '$M/bycpu'"
	else
		bad "ptaskd restarted"
	fi
	# killed again while four readers keep several lanes busy: each read
	# gives the right bytes or EIO, never other bytes
	local rds=()
	for i in 1 2 3 4; do
		bash -c "for k in 1 2 3 4 5 6; do cmp '$W/par$i' '$M/par$i'; done" \
			>"$W/reader$i.log" 2>&1 &
		rds+=($!)
	done
	sleep 0.3
	pt_ptaskd_kill
	wait "${rds[@]}"
	check "ptaskd killed under 4 concurrent readers: right bytes or EIO, never others" bash -c \
		"! grep -h differ '$W'/reader?.log && kill -0 $pid"
	if pt_ptaskd_start; then
		check "ptaskd restarted again: the files read back equal" bash -c \
			"for i in 1 2 3 4; do cmp '$W/par'\$i '$M/par'\$i || exit 1; done"
	else
		bad "ptaskd restarted again"
	fi
	pt_ptaskd_kill
	check "ptaskd killed: unmount works" pt_umount
	mountpoint -q "$M" && { fusermount3 -u "$M" || umount -l "$M"; }
	[ -n "$pid" ] && { kill -KILL "$pid"; wait "$pid"; pid=; }

	# --- auto with ptaskd: both measured at mount
	pt_ptaskd_start || bad "ptaskd restarted"
	if pt_mount auto; then
		check "--backend auto with ptaskd: measured both at mount, reads back equal" \
			bash -c "grep -q 'backend auto: .*gpu' '$LOG' && cmp '$W/big' '$M/big'"
		pt_umount
	else
		bad "mount --backend auto with ptaskd"
		tail -5 "$LOG"
	fi
	kill -TERM "$PT_PD"
	wait "$PT_PD"
	check "ptaskd exits 0 on SIGTERM after the tests" test $? = 0
	PT_PD=
	check "gpu tests: no ASan/UBSan/LeakSanitizer report in the daemon logs" bash -c \
		"! grep -E 'ERROR: (Address|Leak)Sanitizer|runtime error:' '$LOG'"
	grep -E -A20 'ERROR: (Address|Leak)Sanitizer|runtime error:' "$LOG" | head -40
}
