#!/usr/bin/env bash
# kernel-compat-build.sh - build ptask.ko against newer Debian kernel headers
# than the installed 6.1 ones (`make check-kernels`; not part of `make
# check`: it downloads about 30 MB per kernel).
#
# Usage: scripts/kernel-compat-build.sh [SUITE...]
#   SUITE  a Debian suite whose newest linux-headers-<ver>-amd64 to use;
#          default: bookworm-backports (Debian 12's newer kernel) and sid
#          (the newest Debian packages)
#
# For each suite: `apt-get download` (a private source list and state
# under build/compat/, nothing on the system changes) of the headers, their
# -common part and the linux-kbuild package; dpkg -x into
# build/compat/<kernel>/root; then `make M=` on a copy of kmod/, core/ and
# uapi/ with CONFIG_DEBUG_INFO_BTF_MODULES= (no pahole here).  Headers of a
# newer Debian want a newer gcc (gcc-16 for 7.2): the build uses this
# machine's gcc through a wrapper that drops or maps the few options it
# lacks (build/compat/cc-wrapper), so every object is compiled against the
# newer headers by an older compiler.  When the last step fails only
# because a kbuild tool of the newer Debian (objtool, modpost) needs a
# newer glibc than this machine's, the result is "compiled": every object
# built, and every symbol the objects need is checked against the kernel's
# Module.symvers instead of by modpost.  Ends with "N passed, M failed".
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
work=$root/build/compat
mkdir -p "$work"
[ $# -gt 0 ] || set -- bookworm-backports sid
cc=$(command -v gcc-12 || command -v gcc)

wrapper=$work/cc-wrapper
cat >"$wrapper" <<EOF
#!/usr/bin/env bash
# $cc standing in for a newer gcc: options it lacks are mapped or dropped.
args=()
for a in "\$@"; do
	case "\$a" in
	-fmin-function-alignment=*) args+=("-falign-functions=\${a#*=}") ;;
	-fzero-init-padding-bits=*|-fdiagnostics-show-context*) ;;
	-Wno-unterminated-string-initialization|-Wno-default-const-init-*) ;;
	*) args+=("\$a") ;;
	esac
done
exec $cc "\${args[@]}"
EOF
chmod +x "$wrapper"

# fetch SUITE: prints the kernel release it unpacked under $work/<release>
fetch() {
	local suite=$1 apt=$work/apt-$1 hdr rel dir
	local -a o
	mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial"
	echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian $suite main" \
		>"$apt/sources.list"
	o=(-o "Dir::Etc::SourceList=$apt/sources.list" -o Dir::Etc::SourceParts=/dev/null
	   -o "Dir::State::Lists=$apt/lists" -o "Dir::Cache=$apt/cache")
	apt-get "${o[@]}" -qq update >&2
	hdr=$(apt-cache "${o[@]}" search --names-only '^linux-headers-[0-9].*-amd64$' |
		awk '{print $1}' | grep -v -e '-rt-' -e '-cloud-' | sort -V | tail -n 1)
	[ -n "$hdr" ] || { echo "kernel-compat: no linux-headers in $suite" >&2; return 1; }
	rel=${hdr#linux-headers-}
	dir=$work/$rel
	if [ ! -d "$dir/root" ]; then
		mkdir -p "$dir/debs"
		(cd "$dir/debs" && apt-get "${o[@]}" -qq download "$hdr" \
			"linux-headers-${rel%-amd64}-common" "linux-kbuild-${rel%-amd64}" 2>&1 |
			grep -v '^W: Download is performed unsandboxed' >&2 || true)
		for deb in "$dir"/debs/*.deb; do dpkg -x "$deb" "$dir/root"; done
		# The headers' Makefile includes the -common part by absolute path.
		sed -i "s#/usr/src/#$dir/root/usr/src/#g" \
			"$dir/root/usr/src/linux-headers-$rel/Makefile"
	fi
	echo "$rel"
}

# build RELEASE: 0 built or compiled, 1 failed
build() {
	local rel=$1 dir=$work/$1 kdir src log missing
	kdir=$dir/root/usr/src/linux-headers-$rel
	src=$dir/src
	log=$dir/build.log
	rm -rf "$src"
	mkdir -p "$src"
	cp -r "$root/kmod" "$root/core" "$root/uapi" "$src/"
	rm -f "$src/kmod/core" && ln -s ../core "$src/kmod/core"
	find "$src" \( -name '*.o' -o -name '*.ko' -o -name '.*.cmd' -o -name '*.mod*' \) -delete
	if make -C "$kdir" M="$src/kmod" CC="$wrapper" CONFIG_DEBUG_INFO_BTF_MODULES= \
		modules >"$log" 2>&1; then
		echo "kernel-compat: $rel: built $(modinfo -F vermagic "$src/kmod/ptask.ko")"
		return 0
	fi
	make -k -C "$kdir" M="$src/kmod" CC="$wrapper" CONFIG_DEBUG_INFO_BTF_MODULES= \
		modules >>"$log" 2>&1 || true
	if grep -q ' error: ' "$log" || ! grep -q "GLIBC_[0-9.]*' not found" "$log"; then
		grep -E ' error: |not found' "$log" | head -n 20
		echo "kernel-compat: $rel: FAILED (log $log)"
		return 1
	fi
	missing=$(comm -23 <(nm -u "$src"/kmod/*.o "$src"/kmod/core/*.o | awk '{print $2}' | sort -u) \
		<(cat <(awk '{print $2}' "$kdir/Module.symvers") \
		      <(nm --defined-only "$src"/kmod/*.o "$src"/kmod/core/*.o | awk '{print $3}') \
		      <(echo __this_module) | sort -u))
	if [ -n "$missing" ]; then
		echo "kernel-compat: $rel: symbols the kernel does not export: $missing"
		return 1
	fi
	echo "kernel-compat: $rel: compiled ($(ls "$src"/kmod/*.o "$src"/kmod/core/*.o | wc -l) objects, every symbol exported); link not run: $(grep -o "[a-z]*: [^ ]*libc.so.6: version .GLIBC_[0-9.]*' not found" "$log" | head -n 1)"
}

passed=0 failed=0
for suite in "$@"; do
	if rel=$(fetch "$suite") && build "$rel"; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
	fi
done
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
