#!/usr/bin/env bash
# deps.sh - install everything ptask needs to build and test (`make deps`).
#
#   scripts/deps.sh        everything `make check` needs but the packages
#   scripts/deps.sh deb    only what `make deb` needs (debian/DEPS)
#   scripts/deps.sh lint   that, and lintian (`make lint-deb`)
#
# For Debian 12 (bookworm).  Idempotent and fast when all is there: it asks
# dpkg what is installed and runs `apt-get update` + `apt-get install` only
# for what is missing (noninteractive, --no-install-recommends).  Installs:
#   - toolchains: build-essential, clang + the libclang-rt-<N>-dev that
#     matches clang's major version (libFuzzer, ASan, UBSan), sparse
#   - the test VM: linux-image-amd64 (the guest kernel, booted by QEMU, never
#     loaded on the host), qemu-system-x86, busybox-static, cpio
#   - kselftests: libnl-genl-3-dev, libnl-3-dev (static libs), pkg-config
#   - linux-source (checkpatch.pl comes from it; the debug kernel of
#     `make check-vm` is built from it), ccache, flex, bison, bc and
#     libelf-dev (that kernel's build)
#   - dkms (make dkms-install; make check-dkms tests it)
#   - python3, python3-matplotlib (plots)
#   - linux-headers-<ver> for exactly the kernel scripts/kver.sh picks; when
#     the archive no longer carries headers for that version, it installs
#     the current linux-image-amd64 + linux-headers-amd64 pair instead and
#     picks again.
# Then extracts checkpatch.pl into build/checkpatch/
# (scripts/extract-checkpatch.sh) and checks that the toolchain works.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
export DEBIAN_FRONTEND=noninteractive

say() { printf 'deps: %s\n' "$*"; }
die() { printf 'deps: error: %s\n' "$*" >&2; exit 1; }

part=${1:-}
case "$part" in
'' | deb | lint) ;;
*) die "unknown part '$part': 'deb', 'lint', or nothing for everything" ;;
esac

sudo=()
if [ "$(id -u)" != 0 ]; then
	command -v sudo >/dev/null || die "not root and no sudo: run as root"
	sudo=(sudo -E)
fi

# installed PKG... : prints the packages (of those named) that are not installed
not_installed() {
	local have
	have=$(dpkg-query -W -f='${Package} ${db:Status-Status}\n' "$@" 2>/dev/null |
		awk '$2 == "installed" { print $1 }') || true
	local p
	for p in "$@"; do
		grep -qxF "$p" <<<"$have" || printf '%s\n' "$p"
	done
}

updated=0
apt_update() {
	[ "$updated" = 1 ] && return 0
	say "apt-get update"
	"${sudo[@]}" apt-get update -q
	updated=1
}

# ensure PKG... : installs the missing ones, says so
ensure() {
	local missing
	mapfile -t missing < <(not_installed "$@")
	if [ "${#missing[@]}" = 0 ]; then
		return 0
	fi
	apt_update
	say "installing ${missing[*]}"
	"${sudo[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
}

base=(
	build-essential make gcc libc6-dev perl coreutils gzip xz-utils
	clang sparse pkg-config
	linux-image-amd64 qemu-system-x86 busybox-static cpio
	libnl-genl-3-dev libnl-3-dev
	linux-source dkms ccache flex bison bc libelf-dev
	python3 python3-matplotlib
)
# read_deps FILE: the packages a DEPS file lists (one a line, # comments)
read_deps() {
	local pkg
	while read -r pkg; do
		case "$pkg" in '' | '#'*) ;; *) printf '%s\n' "$pkg" ;; esac
	done <"$1"
}

# The packages are a part of their own: a machine that never runs
# `make deb` or `make check-deb` never gets debhelper and dkms.
if [ -n "$part" ]; then
	mapfile -t pkgs < <(read_deps "$root/debian/DEPS")
	[ "$part" = lint ] && pkgs+=(lintian)
	say "checking ${#pkgs[@]} packages for make $([ "$part" = lint ] && echo lint-deb || echo deb)"
	ensure "${pkgs[@]}"
	exit 0
fi

# Every other part lists its own packages in a DEPS file (one per line).
for deps_file in "$root"/encfs-gpu/DEPS "$root"/examples/gesture/DEPS; do
	[ -f "$deps_file" ] || continue
	mapfile -t -O "${#base[@]}" base < <(read_deps "$deps_file")
done
say "checking ${#base[@]} packages"
ensure "${base[@]}"

# The sanitizer/libFuzzer runtime of the installed clang.
clang_major=$(clang -dumpversion | cut -d. -f1)
ensure "libclang-rt-${clang_major}-dev"

# Headers for exactly the kernel the VM boots.
kver=$("$root/scripts/kver.sh")
if [ -n "$(not_installed "linux-headers-$kver")" ]; then
	apt_update
	if apt-cache show "linux-headers-$kver" >/dev/null 2>&1; then
		ensure "linux-headers-$kver"
	else
		say "linux-headers-$kver is not in the archive; installing the current kernel + headers pair"
		"${sudo[@]}" apt-get install -y -q --no-install-recommends \
			linux-image-amd64 linux-headers-amd64
		kver=$("$root/scripts/kver.sh")
		ensure "linux-headers-$kver"
	fi
fi
[ -f "/lib/modules/$kver/build/Makefile" ] ||
	die "/lib/modules/$kver/build is missing although linux-headers-$kver is installed"
[ -r "/boot/vmlinuz-$kver" ] || die "/boot/vmlinuz-$kver is not readable"

"$root/scripts/extract-checkpatch.sh"

# A smoke test of the fuzzing toolchain: cheaper to learn here than later.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { (void)d; (void)n; return 0; }\n' >"$tmp/f.c"
clang -fsanitize=fuzzer,address,undefined -o "$tmp/f" "$tmp/f.c" ||
	die "clang cannot build with -fsanitize=fuzzer,address,undefined"

say "ok: kernel $kver, $(clang --version | head -n 1), $(qemu-system-x86_64 --version | head -n 1)"
