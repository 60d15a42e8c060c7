#!/bin/sh
# /init of the ptask test guest (busybox sh; tests/vm/run.sh packs it).
#
# 1. mounts devtmpfs, proc, sysfs, devpts, /dev/shm, /tmp, debugfs; puts the
#    busybox applets on PATH; loads fuse.ko and uinput.ko when packed;
# 2. prints the boot dmesg, clears it, then insmods the modules listed in
#    /etc/ptask-vm.conf (MODULES, in order; a failure ends the run);
# 3. runs each program in PROGS in turn under `timeout $PROG_TIMEOUT`,
#    framed by "@@PTASK-VM@@ BEGIN <name>" and "@@PTASK-VM@@ END <name>
#    rc=<status>"; check mode runs them bare, demo/bench mode with $ARGS;
# 4. after each program checks that every /sys/kernel/ptask/objects/* reads
#    0 (a non-zero one is "@@PTASK-VM@@ LEAK after <name>: <file>=<value>");
# 5. rmmods the modules (reverse order; a failure is an ERROR), prints every
#    dmesg line since the insmod that matches BUG, WARNING, Oops, leak,
#    general protection or refcount_t as "@@PTASK-VM@@ DMESG-HIT <line>",
#    then the whole dmesg since the insmod;
# 6. prints "@@PTASK-VM@@ DONE errors=<n>" and leaves QEMU through
#    isa-debug-exit (/bin/vm-exit): 0x10 (QEMU exits 33) when the guest saw
#    nothing wrong, 0x11 (QEMU exits 35) otherwise.
#
# The host (tests/vm/run.sh) counts the results from the log; the guest's
# own verdict is only a cross-check.  No `set -eu` here: this is PID 1, and
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
		[ "$tries" -ge 5 ] && break
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
	if ! insmod "/modules/$m"; then
		err "insmod $m failed"
		finish
	fi
	loaded="$m $loaded"
done

export PTASK_VM=1
export PTASK_VM_MODE="$MODE"
export PTASK_TEST_EXECUTOR=/bin/test_executor
cd /tmp || err "no /tmp"
for p in $PROGS; do
	echo "$M BEGIN $p"
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
done
[ -n "$MODULES" ] && [ -z "$PROGS" ] && leak_check "insmod"
cd /

for m in $loaded; do
	echo "$M RMMOD $m"
	rmmod "${m%.ko}" || err "rmmod ${m%.ko} failed"
done

dmesg >/tmp/dmesg.txt
grep -E 'BUG|WARNING|Oops|[Ll]eak|general protection|refcount_t' /tmp/dmesg.txt >/tmp/hits.txt
while IFS= read -r line; do
	echo "$M DMESG-HIT $line"
	errors=$((errors + 1))
done </tmp/hits.txt
echo "$M DMESG-BEGIN"
cat /tmp/dmesg.txt
echo "$M DMESG-END"

finish
