#!/usr/bin/env bash
# tests/vm/run.sh - run ptask.ko and static programs in a QEMU guest.
#
# Usage: tests/vm/run.sh [check|demo|bench] [--kernel stock|debug]
#                        [--helper FILE]... FILE...
#
#   check|demo|bench  the mode (default check), first argument only
#   --kernel K        the guest kernel: stock (default), Debian's
#                     /boot/vmlinuz-<scripts/kver.sh>, or debug, the
#                     cached build of tests/vm/debug-kernel.sh (KASAN,
#                     UBSAN, lockdep, kmemleak; `debug-kernel.sh build`
#                     first, and the module built against it with
#                     `debug-kernel.sh module OUT`)
#   FILE.ko           a module: insmod'ed in the order given (after fuse.ko
#                     and uinput.ko, which are always packed when the kernel
#                     has them), rmmod'ed in reverse order at the end
#   FILE              a static program, copied to /bin/<name> and run in
#                     the order given: in check mode as a test (KTAP/TAP on
#                     stdout), in demo/bench mode with the arguments in
#                     $PTASK_VM_ARGS, output streamed
#   --helper FILE     a static program copied to /bin/<name> but not run.
#                     A FILE named test_executor is always a helper: tests
#                     start it themselves, from $PTASK_TEST_EXECUTOR, which
#                     /init sets to /bin/test_executor (also on PATH)
#
# What happens: packs an initramfs (busybox-static and its applets, the
# /init in tests/vm/init.sh, the modules, the programs, vm-exit built from
# tests/vm/vm-exit.c) into build/vm/<run>.cpio.gz, boots the kernel in
# QEMU (software emulation, one CPU, 1 GiB, serial console on stdio),
# streams the console and saves it to build/vm/<run>.log (<run> is the
# mode, "-debug" added for the debug kernel), then counts from the log:
#   - per program (check mode): scripts/tap-count.sh on the program's
#     output and exit status (a crash, a timeout or an exit without
#     "# Totals" and without a matching plan is a failure); demo/bench
#     mode: a program passes when it exits 0;
#   - one extra failure for: each failed insmod/rmmod, each program after
#     which /sys/kernel/ptask/objects/* did not read 0 (a leak), each
#     program (or insmod, rmmod, boot, "outside any test") to which
#     tests/vm/kreport.awk ties kernel reports (BUG, WARNING, Oops, KASAN,
#     UBSAN, lockdep, kmemleak's unreferenced objects, list corruption,
#     hung tasks ...: see there), a missing end marker, an unclean QEMU
#     exit.
# The last line is "N passed, M failed, K skipped"; exits 1 when M > 0.
#
# The output names the kernel ("vm: kernel: ..."), first and again before
# the summary.
#
# QEMU exit status: the guest writes 0x10 (all fine) or 0x11 (the guest saw
# a failure) to the isa-debug-exit port 0xf4 and QEMU exits with
# (value << 1) | 1, i.e. 33 or 35; both are a clean end.  124/137: the
# timeout killed QEMU (a hung guest); 0: the guest rebooted or powered off
# without vm-exit (a panic: the guest boots with panic=-1 oops=panic and
# QEMU with -no-reboot); 1: QEMU itself failed.
#
# Environment: PTASK_VM_TIMEOUT (whole boot, s; default 600, 1800 on the
# debug kernel),
# PTASK_VM_PROG_TIMEOUT (each program, s; default 300), PTASK_VM_ARGS
# (demo/bench program arguments, split on blanks), PTASK_VM_APPEND (more
# kernel command line), PTASK_VM_ENV (NAME=VALUE words exported to the
# programs), PTASK_VM_SMP (virtual CPUs; default 1), PTASK_VM_QUIET=1
# (log only, no streaming), KVER (the kernel).  See tests/vm/README.md.
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
out=$root/build/vm
prog_timeout=${PTASK_VM_PROG_TIMEOUT:-900}
marker=@@PTASK-VM@@

say() { printf 'vm: %s\n' "$*"; }
# die MESSAGE: a setup error; still ends with the summary line (one failure).
die() {
	printf 'vm: error: %s\n' "$*" >&2
	echo "0 passed, 1 failed, 0 skipped"
	exit 1
}

mode=check
case "${1:-}" in
check | demo | bench) mode=$1; shift ;;
esac
kind=stock
mods=()
progs=()
helpers=()
while [ $# -gt 0 ]; do
	case "$1" in
	--helper)
		[ $# -ge 2 ] || die "--helper needs a file"
		helpers+=("$2"); shift 2 ;;
	--kernel)
		[ $# -ge 2 ] || die "--kernel needs stock or debug"
		kind=$2; shift 2 ;;
	-*) die "unknown option $1" ;;
	*.ko) mods+=("$1"); shift ;;
	*)
		if [ "$(basename "$1")" = test_executor ]; then
			helpers+=("$1")
		else
			progs+=("$1")
		fi
		shift ;;
	esac
done

append_kernel=
slow=1
case "$kind" in
stock)
	kver=$("$root/scripts/kver.sh")
	kernel=/boot/vmlinuz-$kver
	kname="stock Debian $kver"
	run=$mode ;;
debug)
	kdir=$("$root/tests/vm/debug-kernel.sh" dir) || die "no debug kernel; run 'tests/vm/debug-kernel.sh build'"
	kver=$(cat "$kdir/release")
	kernel=$kdir/bzImage
	kname="debug $kver with KASAN, UBSAN, lockdep, kmemleak"
	append_kernel="kmemleak=on kasan_multi_shot"
	# KASAN, lockdep and kmemleak under TCG: several times slower.
	slow=3
	run=$mode-debug ;;
*) die "--kernel takes stock or debug, not '$kind'" ;;
esac
[ -r "$kernel" ] || die "cannot read $kernel"
timeout_s=${PTASK_VM_TIMEOUT:-$((1800 * slow))}
say "kernel: $kname"
busybox=$(command -v busybox || true)
[ -n "$busybox" ] || die "no busybox; run 'make deps' (busybox-static)"
command -v qemu-system-x86_64 >/dev/null || die "no qemu-system-x86_64; run 'make deps'"

is_static() { ! readelf -l "$1" 2>/dev/null | grep -q 'program interpreter'; }
is_static "$busybox" || die "$busybox is not static; install busybox-static"

stage=$out/$run.root
initrd=$out/$run.cpio.gz
log=$out/$run.log
results=$out/$run.results
rm -rf "$stage" "$results"
mkdir -p "$stage"/{bin,etc,modules/extra} "$results"

# vm-exit: the guest's way out through isa-debug-exit.
vmexit=$out/vm-exit
if [ ! -x "$vmexit" ] || [ "$root/tests/vm/vm-exit.c" -nt "$vmexit" ]; then
	say "building $vmexit"
	gcc -static -O2 -Wall -Wextra -Werror -o "$vmexit" "$root/tests/vm/vm-exit.c"
fi

cp "$busybox" "$stage/bin/busybox"
ln -s busybox "$stage/bin/sh"
cp "$vmexit" "$stage/bin/vm-exit"
install -m 0755 "$root/tests/vm/init.sh" "$stage/init"
printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n' \
	>"$stage/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' >"$stage/etc/group"

# add_bin FILE: copy a static program to /bin/<name>, refusing clashes.
add_bin() {
	local f=$1 name
	name=$(basename "$f")
	[ -f "$f" ] || die "no such program: $f"
	is_static "$f" || die "$f is dynamically linked; the guest has no libc: link it with -static"
	[ ! -e "$stage/bin/$name" ] || die "two programs named $name"
	cp "$f" "$stage/bin/$name"
}
prog_names=()
for p in ${progs[@]+"${progs[@]}"}; do
	add_bin "$p"
	prog_names+=("$(basename "$p")")
done
for h in ${helpers[@]+"${helpers[@]}"}; do
	add_bin "$h"
done
mod_names=()
for m in ${mods[@]+"${mods[@]}"}; do
	[ -f "$m" ] || die "no such module: $m"
	magic=$(modinfo -F vermagic "$m" 2>/dev/null || true)
	case "$magic" in
	"$kver "*) ;;
	*) die "$m is built for '${magic%% *}', not the $kind kernel $kver" ;;
	esac
	cp "$m" "$stage/modules/"
	mod_names+=("$(basename "$m")")
done

# Modules later tests need (FUSE, uinput), from the guest kernel's tree
# (the debug kernel has them built in).
extra_mods=(fuse uinput)
[ "$kind" = stock ] || extra_mods=()
for name in ${extra_mods[@]+"${extra_mods[@]}"}; do
	f=$(find "/lib/modules/$kver/kernel" -name "$name.ko*" -print -quit 2>/dev/null || true)
	case "$f" in
	"") say "note: $name.ko not in /lib/modules/$kver; not packed" ;;
	*.ko) cp "$f" "$stage/modules/extra/" ;;
	*.ko.xz) xz -dc "$f" >"$stage/modules/extra/$name.ko" ;;
	*.ko.gz) gzip -dc "$f" >"$stage/modules/extra/$name.ko" ;;
	*.ko.zst) zstd -qdc "$f" >"$stage/modules/extra/$name.ko" ;;
	esac
done

{
	printf 'MODE=%q\n' "$mode"
	printf 'MODULES=%q\n' "${mod_names[*]-}"
	printf 'PROGS=%q\n' "${prog_names[*]-}"
	printf 'ARGS=%q\n' "${PTASK_VM_ARGS:-}"
	printf 'TEST_ENV=%q\n' "${PTASK_VM_ENV:-}"
	printf 'PROG_TIMEOUT=%q\n' "$prog_timeout"
} >"$stage/etc/ptask-vm.conf"

say "packing $initrd (${#mod_names[@]} module(s), ${#prog_names[@]} program(s), ${#helpers[@]} helper(s))"
(cd "$stage" && find . | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet) | gzip -1 >"$initrd"

append="console=ttyS0 quiet panic=-1 oops=panic no_timer_check printk.devkmsg=on${append_kernel:+ $append_kernel}"
append+="${PTASK_VM_APPEND:+ $PTASK_VM_APPEND}"
# shellcheck disable=SC2054 # commas belong to the options
qemu=(qemu-system-x86_64 -accel tcg -smp "${PTASK_VM_SMP:-1}" -m 1024 -nographic -no-reboot
	-monitor none -serial stdio -nic none
	-device isa-debug-exit,iobase=0xf4,iosize=0x04
	-kernel "$kernel" -initrd "$initrd" -append "$append")

say "booting $kernel under TCG (mode $mode, timeout ${timeout_s}s); console log: $log"
start=$(date +%s)
# The log gets everything but carriage returns and the firmware's terminal
# escapes; the terminal gets the log less the boot dmesg.
show() {
	if [ "${PTASK_VM_QUIET:-0}" = 1 ]; then
		cat >/dev/null
	else
		sed -u "/$marker BOOT-DMESG-BEGIN/,/^$marker BOOT-DMESG-END/d"
	fi
}
set +e
timeout -k 10 "$timeout_s" "${qemu[@]}" </dev/null 2>&1 |
	sed -u 's/\r$//; s/\x1b\[[?0-9;]*[A-Za-z]//g; s/\x1bc//g' | tee "$log" | show
qrc=${PIPESTATUS[0]}
set -e
elapsed=$(($(date +%s) - start))
say "QEMU exited with status $qrc after ${elapsed}s"

# Split the log into one file per program: results/NNN.out, and an index
# "NNN name rc" (rc "none" when the END marker never came).
awk -v m="$marker" -v dir="$results" '
	$1 == m && $2 == "BEGIN" {
		if (cur != "") { printf "%s %s none\n", cur, name >> (dir "/index"); close(file) }
		n++; cur = sprintf("%03d", n); name = $3; file = dir "/" cur ".out"
		printf "" > file
		next
	}
	$1 == m && $2 == "END" && cur != "" {
		rc = $4; sub(/^rc=/, "", rc)
		printf "%s %s %s\n", cur, name, rc >> (dir "/index")
		close(file); cur = ""
		next
	}
	cur != "" { print > file }
	END { if (cur != "") printf "%s %s none\n", cur, name >> (dir "/index") }
' "$log"
touch "$results/index"

passed=0
failed=0
skipped=0
problems=()
while read -r idx name rc; do
	if [ "$rc" = none ]; then
		problems+=("$name did not finish")
		rc=255
	fi
	if [ "$mode" = check ]; then
		read -r p f s reason < <("$root/scripts/tap-count.sh" "$rc" <"$results/$idx.out")
	elif [ "$rc" = 0 ]; then
		p=1 f=0 s=0 reason=
	else
		p=0 f=1 s=0 reason="exit status $rc"
	fi
	passed=$((passed + p)); failed=$((failed + f)); skipped=$((skipped + s))
	say "$name: $p passed, $f failed, $s skipped${reason:+ ($reason)}"
done <"$results/index"

# extra MESSAGE: one more failure, listed at the end.
extra() {
	failed=$((failed + 1))
	problems+=("$1")
}
ran=$(wc -l <"$results/index")
if [ "$ran" -lt "${#prog_names[@]}" ]; then
	problems+=("only $ran of ${#prog_names[@]} programs started")
fi
while IFS= read -r line; do
	extra "guest: ${line#"$marker ERROR "}"
done < <(grep "^$marker ERROR " "$log" || true)
while IFS= read -r who; do
	extra "leak after $who: $(grep -F "$marker LEAK after $who: " "$log" | sed "s/.*: //" | paste -sd " ")"
done < <(grep "^$marker LEAK after " "$log" | sed "s/^$marker LEAK after //; s/: .*//" | sort -u || true)
# where LINE: "func+0x1/0x2 [mod]" in a report line, resolved to a source
# line of the module given (which has debug info) by the kernel's
# scripts/faddr2line (from the debug kernel's cached tree), "" if none.
faddr2line=
if dk=$("$root/tests/vm/debug-kernel.sh" dir 2>/dev/null); then
	faddr2line=$dk/src/scripts/faddr2line
fi
# kmemleak's frames are return addresses: the call is the byte before.
where() {
	local re='([A-Za-z0-9_.]+)\+(0x[0-9a-f]+)(/0x[0-9a-f]+) \[([A-Za-z0-9_]+)\]' m loc off
	[ -x "$faddr2line" ] && [[ $1 =~ $re ]] || return 0
	off=${BASH_REMATCH[2]}
	case "$1" in kmemleak*) off=$(printf '0x%x' $((off - 1))) ;; esac
	for m in ${mods[@]+"${mods[@]}"}; do
		[ "$(basename "$m" .ko)" = "${BASH_REMATCH[4]}" ] || continue
		loc=$("$faddr2line" "$m" "${BASH_REMATCH[1]}+$off${BASH_REMATCH[3]}" 2>/dev/null |
			sed -n 's/.* at //p' | tail -n 1)
		loc=${loc#"$root/"}
		loc=${loc#build/kmod-debug/}
		loc=${loc/#kmod\/core\//core/}
		[ -z "$loc" ] || printf ' (%s)' "$loc"
		return 0
	done
}

# Kernel reports, one failure per program (or phase) they are tied to.
awk -f "$root/tests/vm/kreport.awk" "$log" >"$results/kreports"
while IFS= read -r who; do
	n=$(awk -F '\t' -v w="$who" '$1 == w' "$results/kreports" | wc -l)
	lines=$(awk -F '\t' -v w="$who" '$1 == w { print $2 }' "$results/kreports" | head -n 20 |
		while IFS= read -r l; do printf '    %s%s\n' "$l" "$(where "$l")"; done)
	extra "$who: $n kernel report line(s):
$lines"
done < <(cut -f1 "$results/kreports" | awk '!seen[$0]++')
if ! grep -q "^$marker DONE " "$log"; then
	extra "the guest never printed its end marker ($marker DONE)"
fi
case "$qrc" in
33) ;;
35)
	if [ "$failed" = 0 ]; then
		extra "the guest reported a failure the log does not explain"
	fi ;;
124 | 137) extra "QEMU timed out after ${timeout_s}s (guest hung? raise PTASK_VM_TIMEOUT if it was only slow)" ;;
0) extra "the guest rebooted or powered off without vm-exit (kernel panic?)" ;;
*) extra "QEMU exited with status $qrc" ;;
esac

for p in ${problems[@]+"${problems[@]}"}; do
	say "FAIL: $p"
done
say "kernel: $kname"
say "log: $log (${elapsed}s)"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ]
