#!/usr/bin/env bash
# tests/vm/debug-kernel.sh - the debug kernel of `make check-vm`: build it
# once per machine, keep it in a cache outside the repository, and build
# ptask.ko against it.
#
# Usage: tests/vm/debug-kernel.sh build        make sure the kernel is cached
#        tests/vm/debug-kernel.sh dir          print its cache folder (exit 1
#                                              when not built yet)
#        tests/vm/debug-kernel.sh module OUT   copy kmod/, core/ and uapi/
#                                              to OUT and build OUT/kmod/ptask.ko
#                                              against the cached kernel
#        tests/vm/debug-kernel.sh key          print the cache key
#
# The kernel: Debian's linux-source-6.1 (/usr/src/linux-source-6.1.tar.xz,
# installed by `make deps`), `make tinyconfig` plus tests/vm/debug.config
# (KASAN, UBSAN, lockdep, kmemleak and what the guest needs), then
# `make olddefconfig`; every CONFIG_X=value line of the fragment must be in
# the final .config or the build stops naming the missing options.  Built
# with ccache (its folder defaults to <cache>/ccache).
#
# The cache: $PTASK_KERNEL_CACHE (default /var/cache/ptask/kernel, or
# ~/.cache/ptask/kernel when that cannot be written), one folder per key
#   <linux-source version>_<compiler version>_<hash of the fragment+recipe>
# holding
#   bzImage       the kernel QEMU boots
#   build/        the O= build folder, less its objects (.config,
#                 Module.symvers, generated headers, host tools, objtool)
#   src/          the part of the source tree that external modules read
#                 (Makefile, scripts/, include/, arch/x86/)
#   release       `make kernelrelease`
#   info          what it was built from, when, and how long it took
# A build runs in <cache>/.build under a lock (<cache>/build.lock) and is
# renamed to <key> when complete: a second build waits for the first and
# then finds its kernel, an interrupted one leaves nothing half-made (the
# next build starts <cache>/.build afresh).  Old keys are
# not removed; `rm -rf` the cache folder to reclaim them.
#
# A cold build takes about 8 minutes on two idle cores and 30 on busy ones
# (measured: 16 CPU-minutes).  ccache helps only a rebuild of the same
# .config (a wiped or moved cache folder): any change of the configuration
# changes the header every file includes, so nearly everything recompiles.
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
fragment=$root/tests/vm/debug.config
# Bump when the build steps below change what ends up in the cache.
recipe=1
cc=${PTASK_KERNEL_CC:-gcc}

say() { printf 'debug-kernel: %s\n' "$*"; }
die() { printf 'debug-kernel: error: %s\n' "$*" >&2; exit 1; }

cache_root() {
	local dir=${PTASK_KERNEL_CACHE:-/var/cache/ptask/kernel}
	if [ -z "${PTASK_KERNEL_CACHE:-}" ] && ! mkdir -p "$dir" 2>/dev/null; then
		dir=${XDG_CACHE_HOME:-$HOME/.cache}/ptask/kernel
	fi
	mkdir -p "$dir" || die "cannot create $dir (set PTASK_KERNEL_CACHE)"
	printf '%s\n' "$dir"
}

tarball() {
	local t
	t=$(printf '%s\n' /usr/src/linux-source-*.tar.xz | grep -v '\*' | sort -V | tail -n 1 || true)
	[ -n "$t" ] || die "no /usr/src/linux-source-*.tar.xz; run 'make deps' (package linux-source)"
	printf '%s\n' "$t"
}

# source_version TARBALL: the Debian version of the package that holds it,
# else the file's name, size and time.
source_version() {
	local pkg ver
	pkg=$(dpkg-query -S "$1" 2>/dev/null | cut -d: -f1 | head -n 1 || true)
	ver=
	if [ -n "$pkg" ]; then
		ver=$(dpkg-query -W -f='${Version}' "$pkg" 2>/dev/null || true)
	fi
	if [ -n "$ver" ]; then
		printf '%s\n' "$ver"
	else
		stat -c '%s-%Y' "$1" | sed "s/^/$(basename "$1" .tar.xz)-/"
	fi
}

compute_key() {
	local t ccver hash
	t=$(tarball)
	command -v "$cc" >/dev/null || die "no compiler $cc; run 'make deps'"
	ccver=$("$cc" --version | head -n 1 | sed -E 's/^[^ ]+ \(([^)]*)\) .*/\1/; s/[^A-Za-z0-9.+-]+/-/g')
	hash=$({ cat "$fragment"; echo "recipe=$recipe"; } | sha256sum | cut -c1-12)
	printf '%s_%s_%s\n' "$(source_version "$t")" "$ccver" "$hash"
}

# check_config CONFIG: every CONFIG_X=value line of the fragment must be in
# CONFIG as written.
check_config() {
	local line missing=()
	while IFS= read -r line; do
		grep -qxF "$line" "$1" || missing+=("$line (got: $(grep -E "^(# )?${line%%=*}[= ]" "$1" || echo unset))")
	done < <(grep -E '^CONFIG_[A-Za-z0-9_]+=' "$fragment")
	if [ "${#missing[@]}" -gt 0 ]; then
		printf 'debug-kernel: error: %s\n' "olddefconfig dropped or changed ${#missing[@]} option(s) of $fragment:" >&2
		printf '    %s\n' "${missing[@]}" >&2
		return 1
	fi
}

# prune TMP: keep what `make M=...` needs of the source and build trees.
prune() {
	local tmp=$1 p
	mv "$tmp/build/arch/x86/boot/bzImage" "$tmp/bzImage"
	# Build tree: no objects, archives, command files or images.
	find "$tmp/build" \( -name '*.o' -o -name '*.a' -o -name '.*.cmd' -o -name '*.mod.c' \
		-o -name '.tmp_*' \) -delete
	rm -rf "$tmp/build/vmlinux" "$tmp/build/arch/x86/boot" "$tmp/build/source"
	# Source tree: the top Makefile, scripts/, include/, arch/x86's
	# Makefiles and headers.
	mkdir "$tmp/src.keep"
	for p in Makefile scripts include arch/x86/Makefile arch/x86/Makefile_32.cpu \
		arch/x86/include; do
		mkdir -p "$(dirname "$tmp/src.keep/$p")"
		mv "$tmp/src/$p" "$tmp/src.keep/$p"
	done
	rm -rf "$tmp/src"
	mv "$tmp/src.keep" "$tmp/src"
}

# progress LOG START PID: a line a minute while PID runs.
progress() {
	local log=$1 start=$2 pid=$3 last=$2 now
	while kill -0 "$pid" 2>/dev/null; do
		sleep 2
		now=$(date +%s)
		if [ $((now - last)) -ge 60 ] && kill -0 "$pid" 2>/dev/null; then
			last=$now
			say "still building: $(((now - start) / 60)) min, $(grep -c '^  CC ' "$log" || true) files compiled"
		fi
	done
}

# build: make sure the kernel of this key is in the cache.  Builds run one
# at a time per cache, in the same folder (<cache>/.build, so that ccache
# sees the same paths from one key to the next) and are renamed to <key>
# when complete.
build() {
	local croot key dir t tmp start log rc pid jobs ccache_dir ccpfx=()
	croot=$(cache_root)
	key=$(compute_key)
	dir=$croot/$key
	if [ -f "$dir/bzImage" ]; then
		say "cached: $dir ($(cat "$dir/release"))"
		return 0
	fi
	exec 9>"$croot/build.lock"
	if ! flock -n 9; then
		say "another debug kernel build is running in $croot; waiting for it"
		flock 9
	fi
	if [ -f "$dir/bzImage" ]; then
		say "cached: $dir ($(cat "$dir/release"))"
		return 0
	fi
	for t in flex bison bc; do
		command -v "$t" >/dev/null || die "no $t; run 'make deps'"
	done
	[ -f /usr/include/libelf.h ] || die "no libelf.h (libelf-dev, for objtool); run 'make deps'"
	t=$(tarball)
	jobs=$(nproc)
	ccache_dir=${CCACHE_DIR:-$croot/ccache}
	if command -v ccache >/dev/null; then
		ccpfx=(ccache)
	else
		say "note: no ccache; every rebuild is a cold one (run 'make deps')"
	fi
	tmp=$croot/.build
	rm -rf "$tmp"
	mkdir "$tmp"
	log=$tmp/build.log
	start=$(date +%s)
	say "building the debug kernel (KASAN, UBSAN, lockdep, kmemleak) from $t"
	say "  into $dir"
	say "  ${ccpfx[*]:-no ccache}, $jobs jobs: about 8 min on two idle cores, up to 30 on busy ones"
	say "  (less when ccache has this configuration); log: $log"
	set +e
	(
		set -e
		export CCACHE_DIR=$ccache_dir CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-5G} CCACHE_BASEDIR=$tmp
		export CCACHE_SLOPPINESS=include_file_mtime,include_file_ctime,time_macros
		export KBUILD_BUILD_USER=ptask KBUILD_BUILD_HOST=ptask
		[ ${#ccpfx[@]} = 0 ] || ccache -z >/dev/null
		tar -xJf "$t" -C "$tmp"
		mv "$tmp"/linux-source-* "$tmp/src"
		mkdir "$tmp/build"
		mk=(make -C "$tmp/src" O="$tmp/build" CC="${ccpfx[*]} $cc" HOSTCC="$cc")
		"${mk[@]}" tinyconfig
		"$tmp/src/scripts/kconfig/merge_config.sh" -m -O "$tmp/build" "$tmp/build/.config" "$fragment"
		"${mk[@]}" olddefconfig
		check_config "$tmp/build/.config"
		"${mk[@]}" -j "$jobs" bzImage modules
		"${mk[@]}" -s kernelrelease >"$tmp/release"
	) >"$log" 2>&1 &
	pid=$!
	progress "$log" "$start" "$pid" &
	wait "$pid"
	rc=$?
	wait
	set -e
	if [ "$rc" != 0 ]; then
		cp "$log" "$croot/$key.failed.log"
		grep -A20 '^debug-kernel: error' "$log" >&2 || tail -n 40 "$log" >&2
		rm -rf "$tmp"
		die "the kernel build failed (status $rc); log: $croot/$key.failed.log"
	fi
	prune "$tmp"
	# The O= folder's Makefile names the source folder: point it at the
	# place it is about to have.
	printf 'include %s/src/Makefile\n' "$dir" >"$tmp/build/Makefile"
	cp "$tmp/build/.config" "$tmp/config"
	{
		echo "key: $key"
		echo "source: $t ($(source_version "$t"))"
		echo "compiler: $("$cc" --version | head -n 1)"
		echo "fragment: $fragment (recipe $recipe)"
		echo "built: $(date -u +%FT%TZ) in $(($(date +%s) - start)) s, $jobs jobs, ${ccpfx[*]:-no ccache}"
		[ ${#ccpfx[@]} = 0 ] || CCACHE_DIR=$ccache_dir ccache -s 2>/dev/null | grep -iE 'hits|misses' || true
	} >"$tmp/info"
	rm -f "$log" "$croot/$key.failed.log"
	rm -rf "$dir"
	mv -T "$tmp" "$dir"
	say "built $(cat "$dir/release") in $(($(date +%s) - start)) s; cached: $dir"
}

cached_dir() {
	local dir
	dir=$(cache_root)/$(compute_key)
	[ -f "$dir/bzImage" ] || die "the debug kernel is not built ($dir); run 'tests/vm/debug-kernel.sh build'"
	printf '%s\n' "$dir"
}

# module OUT: a private copy of the module's sources (Kbuild writes its
# objects beside them; kmod/ itself belongs to the stock kernel's build),
# rebuilt against the cached tree.
module() {
	local out=$1 dir d f stamp
	dir=$(cached_dir)
	# Objects built against another kernel (or another build of this
	# one) go first.
	stamp="$dir $(stat -c %Y "$dir/bzImage")"
	if [ -d "$out" ] && [ "$(cat "$out/.kernel" 2>/dev/null)" != "$stamp" ]; then
		rm -rf "$out"
	fi
	mkdir -p "$out"
	out=$(cd "$out" && pwd)
	printf '%s\n' "$stamp" >"$out/.kernel"
	# Sources only (kmod/ also holds the stock build's objects), copied
	# when changed; sources removed from the tree go from the copy too.
	for d in kmod core core/user uapi; do
		mkdir -p "$out/$d"
		for f in "$root/$d"/*.[ch] "$root/$d/Kbuild"; do
			if [ ! -f "$f" ] || [ -L "$f" ]; then
				continue
			fi
			cmp -s "$f" "$out/$d/${f##*/}" || cp -p "$f" "$out/$d/"
		done
		for f in "$out/$d"/*.[ch] "$out/$d/Kbuild"; do
			[ -f "$f" ] || continue
			[ -e "$root/$d/${f##*/}" ] || rm -f "$f"
		done
	done
	ln -sfn ../core "$out/kmod/core"
	say "building $out/kmod/ptask.ko against $(cat "$dir/release")"
	# -g: the kernel has no debug info, but tests/vm/run.sh turns the
	# module's frames in a report into file:line with it.
	make -C "$dir/build" M="$out/kmod" CC="$cc" HOSTCC="$cc" KCFLAGS="-g ${KCFLAGS:-}" modules
}

case "${1:-build}" in
build) build ;;
dir) cached_dir ;;
key) compute_key ;;
module)
	[ $# -eq 2 ] || die "usage: $0 module OUT"
	module "$2" ;;
*) die "usage: $0 build|dir|key|module OUT" ;;
esac
