#!/bin/sh
# /init of the ptask test guest (busybox sh; tests/vm/run.sh packs it).
#
# 1. mounts devtmpfs, proc, sysfs, devpts, /dev/shm, /tmp, debugfs; puts the
#    busybox applets on PATH; lets /dev/kmsg take every marker
#    (printk_devkmsg=on); on a kernel with kmemleak, stops its automatic
#    scans and forgets what boot left (scan=off, clear); loads fuse.ko and
#    uinput.ko when packed;
# 2. prints the boot dmesg, clears it, then insmods the modules listed in
#    /etc/ptask-vm.conf (MODULES, in order; a failure ends the run);
# 3. runs each program in PROGS in turn under `timeout $PROG_TIMEOUT`,
#    framed by "@@PTASK-VM@@ BEGIN <name>" and "@@PTASK-VM@@ END <name>
#    rc=<status>"; check mode runs them bare, demo/bench mode with $ARGS;
# 4. after each program checks that every /sys/kernel/ptask/objects/* reads
#    0 (a non-zero one is "@@PTASK-VM@@ LEAK after <name>: <file>=<value>");
# 5. rmmods the modules (reverse order; a failure is an ERROR), then prints
#    the whole dmesg since the insmod;
# 6. with kmemleak: scans twice after 5 s (objects younger than 5 s are
#    never reported) and prints /sys/kernel/debug/kmemleak, once before
#    the rmmod (the module's symbols still name its frames) and once after
#    it (what the module's exit left unreferenced);
# 7. prints "@@PTASK-VM@@ DONE errors=<n>" and leaves QEMU through
#    isa-debug-exit (/bin/vm-exit): 0x10 (QEMU exits 33) when the guest saw
#    nothing wrong, 0x11 (QEMU exits 35) otherwise.
#
# Markers in the kernel log: "ptask-test: begin <name> jiffies=<j>" and
# "ptask-test: end <name> rc=<status> jiffies=<j>" around every program
# (the end one after its leak check), and the same with "insmod <module>"
# and "rmmod <module>" as the name.  The host (tests/vm/run.sh, through
# tests/vm/kreport.awk) reads the dmesg and the kmemleak reports, ties each
# report to the program whose markers enclose it, and counts the results
# from the log; the guest's own verdict is only a cross-check.  No `set -eu` here: this is PID 1, and
# its exit would panic the guest; every step reports its own failure.
# Environment of every program: PATH=/bin, HOME=/tmp, cwd /tmp,
# PTASK_VM=1, PTASK_VM_MODE=<mode>, PTASK_TEST_EXECUTOR=/bin/test_executor.

/bin/busybox mkdir -p /proc /sys /dev /tmp /run /root
/bin/busybox mount -t devtmpfs devtmpfs /dev
exec </dev/console >/dev/console 2>&1
/bin/busybox --install -s /bin
export PATH=/bin
export HOME=/tmp

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts
mount -t tmpfs -o mode=1777 tmpfs /dev/shm
mount -t tmpfs -o mode=1777 tmpfs /tmp
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
hostname ptask-vm
# /dev/kmsg drops writes beyond 10 per 5 s unless told otherwise.
echo on >/proc/sys/kernel/printk_devkmsg 2>/dev/null
KMEMLEAK=/sys/kernel/debug/kmemleak
if [ -w "$KMEMLEAK" ]; then
	echo scan=off >"$KMEMLEAK"
	echo clear >"$KMEMLEAK"
else
	KMEMLEAK=
fi

M=@@PTASK-VM@@
MODE=check
MODULES=
PROGS=
ARGS=
PROG_TIMEOUT=300
# shellcheck disable=SC1091 # written by tests/vm/run.sh
. /etc/ptask-vm.conf

errors=0
err() {
	echo "$M ERROR $*"
	errors=$((errors + 1))
}

# mark WORDS: a line in the kernel log, with the jiffies count (kmemleak
# dates its objects in jiffies) where /proc/timer_list has it.
mark() {
	j=$(sed -n 's/^jiffies: *//p' /proc/timer_list 2>/dev/null | head -n 1)
	echo "<6>ptask-test: $*${j:+ jiffies=$j}" >/dev/kmsg
}

# kmemleak_report WHEN: scan twice and print what kmemleak holds, then
# forget it (the next report shows only new objects).
kmemleak_report() {
	[ -n "$KMEMLEAK" ] || return 0
	sleep 5
	echo scan >"$KMEMLEAK"
	echo scan >"$KMEMLEAK"
	echo "$M KMEMLEAK-BEGIN $1"
	cat "$KMEMLEAK"
	echo "$M KMEMLEAK-END $1"
	echo clear >"$KMEMLEAK"
}

finish() {
	echo "$M DONE errors=$errors"
	sync
	if [ "$errors" = 0 ]; then
		/bin/vm-exit 0x10
	else
		/bin/vm-exit 0x11
	fi
	# Without isa-debug-exit: QEMU exits 0 here, which the host counts as
	# an unclean end.
	poweroff -f
	sleep 60
}

# leak_check WHEN: every object count must be back to 0 (objects may be
# freed from RCU callbacks or work items, so retry a few times).
leak_check() {
	dir=/sys/kernel/ptask/objects
	if [ ! -d "$dir" ]; then
		err "no $dir after $1"
		return
	fi
	tries=0
	while :; do
		bad=
		for f in "$dir"/*; do
			[ -f "$f" ] || continue
			v=$(cat "$f")
			[ "$v" = 0 ] || bad="$bad ${f##*/}=$v"
		done
		[ -z "$bad" ] && return
		tries=$((tries + 1))
		[ "$tries" -ge 30 ] && break
		sleep 1
	done
	for b in $bad; do
		echo "$M LEAK after $1: $b"
	done
	errors=$((errors + 1))
}

for m in /modules/extra/*.ko; do
	[ -f "$m" ] || continue
	insmod "$m" || echo "$M NOTE insmod $m failed"
done

echo
echo "$M BOOT-DMESG-BEGIN"
dmesg -c
echo "$M BOOT-DMESG-END"

echo "$M MODE $MODE"
loaded=
for m in $MODULES; do
	echo "$M INSMOD $m"
	mark "begin insmod $m"
	if ! insmod "/modules/$m"; then
		mark "end insmod $m rc=1"
		err "insmod $m failed"
		finish
	fi
	mark "end insmod $m rc=0"
	loaded="$m $loaded"
done

export PTASK_VM=1
export PTASK_VM_MODE="$MODE"
export PTASK_TEST_EXECUTOR=/bin/test_executor
# PTASK_VM_ENV's NAME=VALUE words (a long race hunt: PT_RACE_ROUNDS=5000)
for kv in ${TEST_ENV:-}; do
	case "$kv" in
	[A-Za-z_]*=*) export "${kv?}" ;;
	*) echo "$M NOTE PTASK_VM_ENV: not NAME=VALUE: $kv" ;;
	esac
done
cd /tmp || err "no /tmp"
for p in $PROGS; do
	echo "$M BEGIN $p"
	mark "begin $p"
	if [ "$MODE" = check ]; then
		# shellcheck disable=SC2086
		timeout -k 10 "$PROG_TIMEOUT" "/bin/$p"
	else
		# shellcheck disable=SC2086
		timeout -k 10 "$PROG_TIMEOUT" "/bin/$p" $ARGS
	fi
	rc=$?
	echo "$M END $p rc=$rc"
	[ "$rc" = 0 ] || [ "$rc" = 4 ] || errors=$((errors + 1))
	[ -n "$MODULES" ] && leak_check "$p"
	mark "end $p rc=$rc"
done
[ -n "$MODULES" ] && [ -z "$PROGS" ] && leak_check "insmod"
cd /

kmemleak_report before-rmmod
for m in $loaded; do
	echo "$M RMMOD $m"
	mark "begin rmmod $m"
	rc=0
	rmmod "${m%.ko}" || rc=$?
	mark "end rmmod $m rc=$rc"
	[ "$rc" = 0 ] || err "rmmod ${m%.ko} failed"
done
[ -n "$loaded" ] && kmemleak_report after-rmmod

echo "$M DMESG-BEGIN"
dmesg
echo "$M DMESG-END"

finish
