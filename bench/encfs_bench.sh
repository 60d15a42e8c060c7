#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# bench/encfs_bench.sh - encfs-gpu against gocryptfs and encfs, one run,
# one machine, one backing directory (make bench-encfs).
#
# Rows (ENCFS_BENCH_ROWS, default all): plain (the backing directory
# itself, the ceiling), cpu, gpu, auto (encfs-gpu --backend ...), gocryptfs,
# encfs.  gpu and auto need a ptaskd: the script starts its own,
# `ptaskd --mode user --backend $ENCFS_BENCH_PTASKD_BACKEND` (default cuda)
# on a private socket; when it does not start or the gpu backend cannot
# mount, those rows are skipped with the reason.  ENCFS_BENCH_PTASKD_BACKEND
# =cpu stands in for a GPU (ptaskd's host twin of the kernel).
#
# Workloads, each on a fresh mount of its own cipher directory per row:
#   seqw<N>/seqr<N>  dd 1 MiB requests, N MB from /dev/zero, then back
#                    (ENCFS_BENCH_SEQ_MB, default "200 2048")
#   ddw/ddr          gocryptfs's dd: 128 KiB x 2000 (ENCFS_BENCH_DD_COUNT)
#   untar            tar -xf of a kernel source tarball, decompressed once
#                    outside the timing (ENCFS_BENCH_TARBALL, default
#                    /usr/src/linux-source-*.tar.xz)
#   md5              md5sum of every file of it
#   ls               ls -lR of it
#   rm               rm -rf of it, after a remount, for every row once all
#                    rows are done: ext4 allocates inodes slowly for a
#                    minute or more after many were freed (an untar 6x
#                    slower right after an rm -rf of a tree, measured on
#                    this VM's ext4, which has no journal), so no row's
#                    untar may follow another's rm
# Before every read (seqr, ddr, md5) the filesystem is unmounted, the page
# cache dropped (sync; echo 3 >/proc/sys/vm/drop_caches) and remounted, so
# reads go through the FUSE daemon and to the backing disk.  Writes are
# timed without fsync: none of the three uses FUSE's writeback cache, so
# dd returns only when the daemon has encrypted and written every request
# (into the backing filesystem's page cache).
#
# CPU seconds: utime + stime of the FUSE daemon (all its threads) and of
# ptaskd, from /proc/PID/stat just before and just after each workload,
# while both still run (mounts run in the foreground, so $! is the daemon).
#
# Output (ENCFS_BENCH_OUT, default build/encfs-bench): encfs_bench.csv,
# encfs_bench.txt (the tables), encfs_bench.png (bench/encfs_plot.py, with
# matplotlib), encfs_bench.log (progress, daemon logs).
# Other knobs: ENCFS_BENCH_DIR (where the backing directories go; default
# a mktemp -d under /var/tmp), ENCFS_BENCH_STEP_TIMEOUT (s, default 1200),
# ENCFS_BENCH_GOCRYPTFS, ENCFS_BENCH_ENCFS, ENCFS_BENCH_ENCFSGPU,
# ENCFS_BENCH_PTASKD (the programs).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"

ROWS=${ENCFS_BENCH_ROWS:-plain cpu gpu auto gocryptfs encfs}
SEQ_MB=${ENCFS_BENCH_SEQ_MB-200 2048}
DD_COUNT=${ENCFS_BENCH_DD_COUNT:-2000}
TARBALL=${ENCFS_BENCH_TARBALL-$(ls /usr/src/linux-source-*.tar.xz 2>/dev/null | tail -n 1 || true)}
PD_BACKEND=${ENCFS_BENCH_PTASKD_BACKEND:-cuda}
OUTDIR=${ENCFS_BENCH_OUT:-$ROOT/build/encfs-bench}
STEP_TIMEOUT=${ENCFS_BENCH_STEP_TIMEOUT:-1200}
EGFS=${ENCFS_BENCH_ENCFSGPU:-$ROOT/build/encfs-gpu/encfs-gpu}
PTASKD=${ENCFS_BENCH_PTASKD:-$ROOT/build/bin/ptaskd}
GOCRYPTFS=${ENCFS_BENCH_GOCRYPTFS:-$(command -v gocryptfs || true)}
ENCFS=${ENCFS_BENCH_ENCFS:-$(command -v encfs || true)}
PW="bench password, not a secret"

mkdir -p "$OUTDIR"
OUTDIR=$(cd "$OUTDIR" && pwd)
BASE=${ENCFS_BENCH_DIR:-$(mktemp -d /var/tmp/encfs-bench.XXXXXX)}
mkdir -p "$BASE"
CSV=$OUTDIR/encfs_bench.csv
LOG=$OUTDIR/encfs_bench.log
TXT=$OUTDIR/encfs_bench.txt
: >"$LOG"
T0=$(date +%s)
TICK=$(getconf CLK_TCK)

FPID=	# the FUSE daemon of the current mount
MNT=	# the current mount point
PDPID=	# ptaskd
SOCK=$BASE/ptaskd.sock

say() { printf '[%4ss] %s\n' $(($(date +%s) - T0)) "$*" | tee -a "$LOG" >&2; }

cleanup() {
	local rc=$?
	if [ -n "$MNT" ] && mountpoint -q "$MNT"; then umount "$MNT" || umount -l "$MNT" || true; fi
	if [ -n "$FPID" ]; then kill "$FPID" 2>/dev/null || true; wait "$FPID" 2>/dev/null || true; fi
	if [ -n "$PDPID" ]; then kill "$PDPID" 2>/dev/null || true; wait "$PDPID" 2>/dev/null || true; fi
	if [ -z "${ENCFS_BENCH_DIR:-}" ]; then rm -rf "$BASE"; fi
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ticks PID: utime + stime of PID in clock ticks (0 if none); the comm
# field may hold spaces, so cut after its closing parenthesis
ticks() {
	local s
	[ -n "$1" ] && s=$(cat "/proc/$1/stat" 2>/dev/null) || { echo 0; return; }
	s=${s##*) }
	echo "$s" | awk '{ print $12 + $13 }'
}

drop_caches() {
	sync
	if ! echo 3 >/proc/sys/vm/drop_caches 2>/dev/null; then
		[ -n "${DROP_WARNED:-}" ] || say "WARNING: cannot drop caches (not root?): reads may come from the page cache"
		DROP_WARNED=1
	fi
}

# row_mount ROW: mount ROW's cipher directory on $BASE/ROW.mnt; sets FPID, MNT
row_mount() {
	local row=$1 c=$BASE/$1.cipher
	MNT=$BASE/$row.mnt
	mkdir -p "$MNT"
	case $row in
	plain) FPID=; return 0 ;;
	cpu | gpu | auto)
		PTASK_MODE=user PTASK_SOCKET=$SOCK "$EGFS" mount -f --backend "$row" \
			--passfile "$BASE/pw" "$c" "$MNT" >>"$BASE/$row.log" 2>&1 & ;;
	gocryptfs)
		"$GOCRYPTFS" -fg -q -passfile "$BASE/pw" "$c" "$MNT" >>"$BASE/$row.log" 2>&1 & ;;
	encfs)
		"$ENCFS" -f --stdinpass "$c" "$MNT" <"$BASE/pw" >>"$BASE/$row.log" 2>&1 & ;;
	esac
	FPID=$!
	for _ in $(seq 600); do
		mountpoint -q "$MNT" && return 0
		kill -0 "$FPID" 2>/dev/null || break
		sleep 0.05
	done
	wait "$FPID" 2>/dev/null || true
	FPID=
	return 1
}

row_umount() {
	[ "$1" = plain ] && return 0
	umount "$MNT"
	for _ in $(seq 600); do
		kill -0 "$FPID" 2>/dev/null || break
		sleep 0.05
	done
	kill -0 "$FPID" 2>/dev/null && { say "$1: daemon still up after umount; killing it"; kill -KILL "$FPID"; }
	wait "$FPID" 2>/dev/null || true
	FPID=
}

row_init() {
	local row=$1 c=$BASE/$1.cipher
	rm -rf "$c" "$BASE/$row.mnt"
	mkdir -p "$c"
	case $row in
	plain) MNT=$c ;;
	cpu | gpu | auto)
		# scrypt 2^14 instead of 2^16: only mount time changes
		"$EGFS" init --scrypt-logn 14 --passfile "$BASE/pw" "$c" >>"$BASE/$row.log" 2>&1 ;;
	gocryptfs)
		# -scryptn 14 (default 16): only mount time changes
		"$GOCRYPTFS" -init -q -scryptn 14 -passfile "$BASE/pw" "$c" >>"$BASE/$row.log" 2>&1 ;;
	encfs)
		# --standard: AES-256... as encfs's "standard" mode chooses; the
		# password twice on stdin is not asked for with --stdinpass
		mkdir -p "$BASE/$row.mnt"
		"$ENCFS" --standard --stdinpass "$c" "$BASE/$row.mnt" <"$BASE/pw" >>"$BASE/$row.log" 2>&1
		umount "$BASE/$row.mnt" ;;
	esac
}

# measure ROW WORKLOAD BYTES CMD...: time CMD on the mount, with the CPU
# of the daemon and ptaskd; appends a CSV line
measure() {
	local row=$1 wl=$2 bytes=$3 t0 t1 f0 f1 p0 p1 secs mbs rc=0 pd=
	shift 3
	# ptaskd counts for the rows that use it
	case $row in gpu | auto) pd=$PDPID ;; esac
	f0=$(ticks "$FPID") p0=$(ticks "$pd")
	t0=$(date +%s.%N)
	timeout "$STEP_TIMEOUT" "$@" || rc=$?
	t1=$(date +%s.%N)
	f1=$(ticks "$FPID") p1=$(ticks "$pd")
	[ "$rc" = 0 ] || { say "$row $wl FAILED (exit $rc)"; return 1; }
	secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
	mbs=$(awk -v n="$bytes" -v s="$secs" 'BEGIN { if (n > 0 && s > 0) printf "%.1f", n / 1e6 / s }')
	echo "$row,$wl,$bytes,$secs,$mbs,$(awk -v a="$f0" -v b="$f1" -v t="$TICK" 'BEGIN { printf "%.2f", (b - a) / t }'),$(awk -v a="$p0" -v b="$p1" -v t="$TICK" 'BEGIN { printf "%.2f", (b - a) / t }')" >>"$CSV"
	say "$row $wl: ${secs}s${mbs:+ ($mbs MB/s)}"
}

# remount ROW: unmount, drop the page cache, mount again (before a read)
remount() {
	row_umount "$1"
	drop_caches
	row_mount "$1" || { say "$1: remount failed"; tail -n 5 "$BASE/$1.log" >&2; return 1; }
}

# run_row ROW: every workload on ROW
run_row() {
	local row=$1 n
	row_init "$row" || { say "$row: init failed"; tail -n 5 "$BASE/$row.log" >&2; return 1; }
	row_mount "$row" || { say "$row: mount failed"; tail -n 5 "$BASE/$row.log" >&2; return 1; }
	for n in $SEQ_MB; do
		say "$row: sequential write of $n MB (1 MiB requests)"
		measure "$row" "seqw$n" $((n * 1000000)) \
			dd if=/dev/zero of="$MNT/seq" bs=1M count=$((n * 1000000 / 1048576)) iflag=fullblock status=none
		remount "$row"
		say "$row: sequential read of $n MB (1 MiB requests)"
		measure "$row" "seqr$n" $((n * 1000000 / 1048576 * 1048576)) \
			dd if="$MNT/seq" of=/dev/null bs=1M status=none
		rm -f "$MNT/seq"
	done
	say "$row: dd 128 KiB x $DD_COUNT, write"
	measure "$row" ddw $((DD_COUNT * 131072)) \
		dd if=/dev/zero of="$MNT/zero" bs=131072 count="$DD_COUNT" status=none
	remount "$row"
	say "$row: dd 128 KiB x $DD_COUNT, read"
	measure "$row" ddr $((DD_COUNT * 131072)) dd if="$MNT/zero" of=/dev/null bs=131072 status=none
	rm -f "$MNT/zero"
	if [ -n "$TARBALL" ]; then
		say "$row: untar ($TAR_FILES files, $TAR_MB MB)"
		measure "$row" untar 0 tar -xf "$BASE/src.tar" -C "$MNT"
		remount "$row"
		say "$row: md5sum of every file"
		measure "$row" md5 0 bash -c "cd '$MNT' && find . -type f -print0 | xargs -0 md5sum >/dev/null"
		say "$row: ls -lR"
		measure "$row" ls 0 bash -c "ls -lR '$MNT' >/dev/null"
	fi
	row_umount "$row"
	MNT=
}

# rm_row ROW: the tree's rm -rf, then ROW's cipher directory goes
rm_row() {
	local row=$1
	if [ -n "$TARBALL" ]; then
		drop_caches
		row_mount "$row" || { say "$row: mount failed"; return 1; }
		say "$row: rm -rf (cold cache)"
		measure "$row" rm 0 bash -c "rm -rf '$MNT'/*"
		row_umount "$row"
		MNT=
	fi
	rm -rf "$BASE/$row.cipher" "$BASE/$row.mnt"
}

# ---------------------------------------------------------------- setup
say "encfs_bench: $(uname -n), $(nproc) CPUs, $(date -u +%Y-%m-%dT%H:%M:%SZ); backing: $BASE ($(df -T "$BASE" | awk 'NR == 2 { print $2 }'))"
say "rows: $ROWS; sequential sizes (MB): $SEQ_MB; dd count: $DD_COUNT; tarball: ${TARBALL:-none}"
# other work on the machine skews every row: say how loaded it was
LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
say "load average at the start: $LOAD0"
echo "$PW" >"$BASE/pw"
echo "row,workload,bytes,seconds,mb_s,cpu_fs_s,cpu_ptaskd_s" >"$CSV"
declare -A LABEL=([plain]="plain directory" [cpu]="encfs-gpu cpu" [gpu]="encfs-gpu gpu"
	[auto]="encfs-gpu auto" [gocryptfs]=gocryptfs [encfs]=encfs)
declare -A SKIP=()
[ -x "$EGFS" ] || { say "no $EGFS (make encfs-gpu)"; exit 1; }
# A program that is there but does not run (a library missing) skips its
# row with the reason instead of ending the run.
if [ -z "$GOCRYPTFS" ]; then
	SKIP[gocryptfs]="no gocryptfs (apt-get install gocryptfs)"
elif v=$("$GOCRYPTFS" -version 2>&1); then
	LABEL[gocryptfs]="gocryptfs $(awk '{ sub(/;$/, "", $2); print $2; exit }' <<<"$v")"
else
	SKIP[gocryptfs]="$GOCRYPTFS does not run: $(tail -n 1 <<<"$v")"
fi
if [ -z "$ENCFS" ]; then
	SKIP[encfs]="no encfs (apt-get install encfs)"
elif v=$("$ENCFS" --version 2>&1); then
	LABEL[encfs]="encfs $(awk '{ print $NF; exit }' <<<"$v")"
else
	SKIP[encfs]="$ENCFS does not run: $(tail -n 1 <<<"$v")"
fi
if [[ " $ROWS " = *" gpu "* || " $ROWS " = *" auto "* ]]; then
	if [ "$PD_BACKEND" = none ]; then
		SKIP[gpu]="ENCFS_BENCH_PTASKD_BACKEND=none"
	elif [ ! -x "$PTASKD" ]; then
		SKIP[gpu]="no $PTASKD (make ptaskd)"
	else
		"$PTASKD" --mode user --backend "$PD_BACKEND" --socket "$SOCK" \
			--host-kernels "$ROOT/build/twins" >>"$BASE/ptaskd.log" 2>&1 &
		PDPID=$!
		for _ in $(seq 200); do
			[ -S "$SOCK" ] && break
			kill -0 "$PDPID" 2>/dev/null || break
			sleep 0.05
		done
		if [ ! -S "$SOCK" ]; then
			SKIP[gpu]="ptaskd --backend $PD_BACKEND did not start: $(tail -n 1 "$BASE/ptaskd.log")"
			wait "$PDPID" 2>/dev/null || true
			PDPID=
		fi
	fi
	if [ -n "${SKIP[gpu]:-}" ]; then SKIP[auto]=${SKIP[gpu]}; fi
	if [ "$PD_BACKEND" != cuda ]; then
		LABEL[gpu]="encfs-gpu gpu (ptaskd $PD_BACKEND)"
		LABEL[auto]="encfs-gpu auto (ptaskd $PD_BACKEND)"
	fi
fi
if [ -n "$TARBALL" ]; then
	say "decompressing $TARBALL (outside the timing)"
	case $TARBALL in
	*.xz)
		if command -v xz >/dev/null; then
			xz -dc "$TARBALL" >"$BASE/src.tar"
		else
			python3 -c 'import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), sys.stdout.buffer)' \
				"$TARBALL" >"$BASE/src.tar"
		fi ;;
	*.gz) gzip -dc "$TARBALL" >"$BASE/src.tar" ;;
	*.zst) zstd -qdc "$TARBALL" >"$BASE/src.tar" ;;
	*) cp "$TARBALL" "$BASE/src.tar" ;;
	esac
	TAR_FILES=$(tar -tf "$BASE/src.tar" | grep -vc '/$' || true)
	TAR_MB=$(($(stat -c %s "$BASE/src.tar") / 1000000))
	say "tarball: $TAR_FILES files, $TAR_MB MB"
fi

# ---------------------------------------------------------------- rows
i=0
nrows=$(wc -w <<<"$ROWS")
for row in $ROWS; do
	i=$((i + 1))
	if [ -n "${SKIP[$row]:-}" ]; then
		say "[$i/$nrows] ${LABEL[$row]}: SKIPPED: ${SKIP[$row]}"
		continue
	fi
	say "[$i/$nrows] ${LABEL[$row]}"
	if ! run_row "$row"; then
		SKIP[$row]="failed: see $LOG"
		if [ -n "$MNT" ] && mountpoint -q "$MNT"; then umount "$MNT" || umount -l "$MNT" || true; fi
		if [ -n "$FPID" ]; then kill "$FPID" 2>/dev/null || true; wait "$FPID" 2>/dev/null || true; fi
		FPID= MNT=
	fi
	if [ "$row" = auto ]; then
		XOVER=$(grep -h 'backend auto:' "$BASE/auto.log" | tail -n 1 || true)
		say "auto at mount: ${XOVER:-no crossover line}"
	fi
	[ "$row" = plain ] || { echo "== $row.log"; cat "$BASE/$row.log"; } >>"$LOG"
done
for row in $ROWS; do
	[ -z "${SKIP[$row]:-}" ] || continue
	if ! rm_row "$row"; then
		if [ -n "$MNT" ] && mountpoint -q "$MNT"; then umount "$MNT" || umount -l "$MNT" || true; fi
		if [ -n "$FPID" ]; then kill "$FPID" 2>/dev/null || true; wait "$FPID" 2>/dev/null || true; fi
		FPID= MNT=
	fi
done
[ -n "$PDPID" ] && { echo "== ptaskd.log"; cat "$BASE/ptaskd.log"; } >>"$LOG"

# ---------------------------------------------------------------- report
{
	echo "encfs_bench: $(uname -n), $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')), $(date -u +%Y-%m-%dT%H:%M:%SZ)"
	echo "backing: $BASE ($(df -T "$BASE" | awk 'NR == 2 { print $2 }')); tarball: ${TARBALL:-none}${TARBALL:+ ($TAR_FILES files, $TAR_MB MB)}"
	echo "load average (1, 5, 15 min): $LOAD0 at the start, $(cut -d' ' -f1-3 /proc/loadavg) at the end; $(($(date +%s) - T0)) s in all"
	[ -n "${XOVER:-}" ] && echo "auto: $XOVER"
	for row in $ROWS; do
		[ -n "${SKIP[$row]:-}" ] && echo "skipped: ${LABEL[$row]}: ${SKIP[$row]}"
	done
	echo
	labels=$(for row in $ROWS; do echo "$row=${LABEL[$row]}"; done)
	awk -F, -v labels="$labels" -f bench/encfs_table.awk "$CSV"
} | tee "$TXT"
PY=
for p in python3 /usr/bin/python3; do
	if command -v "$p" >/dev/null && "$p" -c 'import matplotlib' 2>/dev/null; then PY=$p; break; fi
done
if [ -n "$PY" ]; then
	"$PY" bench/encfs_plot.py "$CSV" "$OUTDIR/encfs_bench.png" "$(for row in $ROWS; do echo "$row=${LABEL[$row]}"; done)" &&
		say "plot: $OUTDIR/encfs_bench.png"
else
	say "no python3 with matplotlib: no plot (run bench/encfs_plot.py on the CSV elsewhere)"
fi
say "results: $CSV, $TXT"
