#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The shared libraries and the loader that dynamically linked programs need,
# as this host's ldd resolves them: for the guest roots that carry host
# programs (the VM's initramfs, the demo's xz, the benches' memcached and
# toolchain).
#
#   scripts/shared-libs.sh --list FILE...       their paths, one a line, sorted
#   scripts/shared-libs.sh --into ROOT FILE...  each copied to ROOT at that
#                                               path (links resolved), unless
#                                               ROOT has it already
#
# A static FILE needs none.  A library ldd cannot find is an error: a guest
# root without it would fail only when the program first runs there.
set -euo pipefail

die() {
	echo "scripts/shared-libs.sh: $*" >&2
	exit 1
}

MODE=${1-}
ROOT=
case $MODE in
--list) shift ;;
--into)
	[ $# -ge 2 ] || die "--into needs ROOT"
	ROOT=$2
	[ -d "$ROOT" ] || die "--into $ROOT: not a directory"
	shift 2
	;;
*) die "usage: scripts/shared-libs.sh --list FILE... | --into ROOT FILE..." ;;
esac

export LC_ALL=C
libs=()
for f in "$@"; do
	[ -f "$f" ] || die "$f: not a file"
	# ldd fails on a static file; readelf says whether there is anything to resolve.
	readelf -d "$f" 2>/dev/null | grep -q NEEDED || continue
	out=$(ldd "$f") || die "ldd $f failed"
	if grep -q 'not found' <<< "$out"; then
		die "$f: $(grep 'not found' <<< "$out" | tr -s '\t\n' '  ')"
	fi
	# "libc.so.6 => /lib/.../libc.so.6 (0x...)" and the loader, "/lib64/ld-... (0x...)"
	while read -r lib; do
		libs+=("$lib")
	done < <(awk '/=> \// { print $3 } /^[[:space:]]*\/[^ ]+ \(/ { print $1 }' <<< "$out")
done
[ ${#libs[@]} -gt 0 ] || exit 0

while read -r lib; do
	if [ -z "$ROOT" ]; then
		echo "$lib"
	elif [ ! -e "$ROOT$lib" ]; then
		mkdir -p "$ROOT$(dirname "$lib")"
		cp -L "$lib" "$ROOT$lib"
	fi
done < <(printf '%s\n' "${libs[@]}" | sort -u)
