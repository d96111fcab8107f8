#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The newest kernel Debian ships, ready to build for and to boot: its headers
# need a trixie userland (gcc-14, libc >= 2.38) that Debian 12 cannot have,
# so they live in a debootstrap'd trixie root, and the module is built there
# (Makefile: `make module KVER=...` chroots when the kernel is one of the
# root's).  Its image and modules are unpacked into the same root with
# dpkg-deb -x, for QEMU and the initramfs.
#
#   scripts/trixie-root.sh ensure   create or update the root (idempotent)
#   scripts/trixie-root.sh path     print the root's path
#   scripts/trixie-root.sh kernel   print the kernel release installed there
#
# Sparse: 7.3's headers use __typeof_unqual__, which only sparse 0.6.5 parses;
# trixie has 0.6.4, so sid's binary (it needs only libc) goes to
# /usr/local/bin of the root, and a scripts/checker-valid.sh (which Debian's
# headers package lacks; the kernel's Makefile runs it before sparse, and
# without it sparse silently does not run) is added to the headers.
#
# The root is built once, in $DAPTRACE_CACHE (default /var/cache/daptrace),
# and brought up to date on every `ensure`: when the suite offers a newer
# kernel (Debian keeps only a suite's current upload), its headers replace
# the old ones and the new image is unpacked; the release is printed, so a
# test log says which kernel it ran.  Which suite: trixie-backports, whose
# headers install on a trixie root (sid's need sid's gcc); trixie itself if
# backports has no kernel newer than its own.
set -euo pipefail

CACHE=${DAPTRACE_CACHE:-/var/cache/daptrace}
ROOT=$CACHE/trixie-root
MIRROR=${DAPTRACE_MIRROR:-http://deb.debian.org/debian}
SECURITY_MIRROR=${DAPTRACE_SECURITY_MIRROR:-http://deb.debian.org/debian-security}
# What the module build needs besides the headers' own dependencies.
PKGS=(make sparse kmod)

log() { printf 'trixie-root: %s\n' "$*" >&2; }
die() { log "$*"; exit 1; }

in_root() {
	chroot "$ROOT" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LC_ALL=C.UTF-8 \
		DEBIAN_FRONTEND=noninteractive "$@"
}

create() {
	local tmp=$ROOT.new
	command -v debootstrap >/dev/null || die "debootstrap missing: run scripts/deps.sh"
	log "creating $ROOT (debootstrap trixie, a few minutes)"
	rm -rf "$tmp"
	mkdir -p "$CACHE"
	debootstrap --variant=minbase trixie "$tmp" "$MIRROR" > "$CACHE/debootstrap.log" 2>&1 ||
		{ tail -n 20 "$CACHE/debootstrap.log" >&2; die "debootstrap failed"; }
	cat > "$tmp/etc/apt/sources.list" <<-EOF
	deb $MIRROR trixie main
	deb $MIRROR trixie-updates main
	deb $MIRROR trixie-backports main
	deb $SECURITY_MIRROR trixie-security main
	EOF
	# No documentation or daemons in a build root.
	printf '#!/bin/sh\nexit 101\n' > "$tmp/usr/sbin/policy-rc.d"
	chmod 0755 "$tmp/usr/sbin/policy-rc.d"
	mv "$tmp" "$ROOT"
}

# The newest "-amd64" kernel ABI (7.3.4+deb13-amd64, ...) with headers in
# the root's suites, or nothing.
newest_abi() {
	in_root apt-cache search --names-only '^linux-headers-[0-9][0-9.]*\+deb[0-9]+-amd64$' |
		awk '{ sub(/^linux-headers-/, "", $1); print $1 }' | sort -V | tail -n1
}

# sid's sparse into /usr/local/bin, unless the one there runs already.
install_sparse() {
	local dir=/var/tmp/daptrace-sparse
	[ ! -x "$ROOT/usr/local/bin/sparse" ] || return 0
	rm -rf "$ROOT$dir"
	mkdir -p "$ROOT$dir"
	echo "deb $MIRROR sid main" > "$ROOT$dir/sid.list"
	mkdir -p "$ROOT$dir/lists/partial"
	in_root sh -c "apt-get update -qq -o Acquire::Check-Valid-Until=false \
		-o Dir::Etc::sourcelist=$dir/sid.list \
		-o Dir::Etc::sourceparts=- -o Dir::State::Lists=$dir/lists &&
		cd $dir && apt-get download -q -o Dir::Etc::sourcelist=$dir/sid.list \
		-o Dir::Etc::sourceparts=- -o Dir::State::Lists=$dir/lists sparse" \
		> "$CACHE/sparse.log" 2>&1 ||
		{ tail -n 20 "$CACHE/sparse.log" >&2; die "downloading sid's sparse failed"; }
	dpkg-deb -x "$ROOT$dir"/sparse_*.deb "$ROOT$dir/x"
	install -D -m 0755 "$ROOT$dir/x/usr/bin/sparse" "$ROOT/usr/local/bin/sparse"
	rm -rf "$ROOT$dir"
}

# scripts/checker-valid.sh for the headers of ABI: prints 1 if the checker
# given runs and parses __typeof_unqual__, as the kernel's own does.
install_checker_valid() {
	local f=$ROOT/usr/src/linux-headers-${1%-amd64}-common/scripts/checker-valid.sh
	[ -d "${f%/*}" ] && [ ! -e "$f" ] || return 0
	cat > "$f" <<-'EOF'
	#!/bin/sh
	# Added by daptrace's scripts/trixie-root.sh: Debian's headers lack it.
	command -v "$1" >/dev/null 2>&1 || { echo 0; exit 0; }
	t=$(mktemp --suffix=.c)
	printf 'int f(const int *p)\n{\n\t__typeof_unqual__(*p) v = *p;\n\treturn v;\n}\n' > "$t"
	if "$@" "$t" 2>&1 | grep -q error; then echo 0; else echo 1; fi
	rm -f "$t"
	EOF
	chmod 0755 "$f"
}

installed_abi() {
	cat "$ROOT/.daptrace-kernel" 2>/dev/null || true
}

# unpack_kernel ABI: image and modules of ABI, unpacked into the root.
# From 6.19 on, Debian splits the image into linux-binary-unsigned-ABI
# (the vmlinuz) and linux-modules-ABI; before, linux-image-ABI-unsigned
# holds both.
unpack_kernel() {
	local abi=$1 dir=/var/tmp/daptrace-debs pkgs=() p
	if in_root apt-cache show "linux-binary-unsigned-$abi" >/dev/null 2>&1; then
		pkgs=("linux-binary-unsigned-$abi" "linux-modules-$abi")
	else
		pkgs=("linux-image-$abi-unsigned")
	fi
	rm -rf "$ROOT$dir"
	mkdir -p "$ROOT$dir"
	(cd "$ROOT$dir" && in_root sh -c "cd $dir && apt-get download -q ${pkgs[*]}") \
		> "$CACHE/download.log" 2>&1 ||
		{ tail -n 20 "$CACHE/download.log" >&2; die "downloading ${pkgs[*]} failed"; }
	for p in "$ROOT$dir"/*.deb; do
		dpkg-deb -x "$p" "$ROOT"
	done
	rm -rf "$ROOT$dir"
	# One place for the image whatever the package's layout.
	mkdir -p "$ROOT/boot"
	if [ -f "$ROOT/usr/lib/modules/$abi/vmlinuz.unsigned" ]; then
		cp "$ROOT/usr/lib/modules/$abi/vmlinuz.unsigned" "$ROOT/boot/vmlinuz-$abi"
	fi
	[ -f "$ROOT/boot/vmlinuz-$abi" ] || die "no vmlinuz-$abi in ${pkgs[*]}"
	# depmod for modinfo -b (the initramfs takes zram from here).
	depmod -b "$ROOT" "$abi"
}

ensure() {
	local abi old
	[ "$(id -u)" = 0 ] || die "needs root (debootstrap, chroot)"
	[ -x "$ROOT/usr/bin/apt-get" ] || create
	log "apt-get update in $ROOT"
	in_root apt-get update -qq > "$CACHE/apt.log" 2>&1 ||
		{ tail -n 20 "$CACHE/apt.log" >&2; die "apt-get update failed"; }
	abi=$(newest_abi)
	[ -n "$abi" ] || die "no amd64 kernel headers found in trixie or trixie-backports"
	old=$(installed_abi)
	if [ "$abi" != "$old" ] || [ ! -f "$ROOT/boot/vmlinuz-$abi" ] ||
	   [ ! -d "$ROOT/usr/lib/modules/$abi/build" ]; then
		log "installing kernel $abi${old:+ (replacing $old)}"
		in_root apt-get install -y -qq --no-install-recommends -t trixie-backports \
			"linux-headers-$abi" "${PKGS[@]}" >> "$CACHE/apt.log" 2>&1 ||
			{ tail -n 20 "$CACHE/apt.log" >&2; die "installing linux-headers-$abi failed"; }
		unpack_kernel "$abi"
		if [ -n "$old" ] && [ "$old" != "$abi" ]; then
			in_root apt-get purge -y -qq "linux-headers-$old" >> "$CACHE/apt.log" 2>&1 || true
			rm -rf "$ROOT/usr/lib/modules/$old" "$ROOT/boot/vmlinuz-$old"
		fi
		echo "$abi" > "$ROOT/.daptrace-kernel"
	else
		# Same kernel: bring the root's compiler and tools up to date.
		in_root apt-get install -y -qq --no-install-recommends --only-upgrade \
			"linux-headers-$abi" "${PKGS[@]}" >> "$CACHE/apt.log" 2>&1 || true
	fi
	install_sparse
	install_checker_valid "$abi"
	log "newest kernel: $abi (headers built with $(sed -n 's/^CONFIG_CC_VERSION_TEXT=//p' \
		"$ROOT/usr/lib/modules/$abi/build/.config"))"
}

case ${1:-} in
ensure) ensure ;;
path) echo "$ROOT" ;;
kernel) installed_abi ;;
*) sed -n '/^# The newest/,/^set -euo/{/^set/d;s/^# \{0,1\}//;p}' "$0" >&2; exit 2 ;;
esac
