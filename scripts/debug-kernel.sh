#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Build the debug kernel for `make check-debug` (KASAN, lockdep, kmemleak,
# DEBUG_VM, ...) once, and print its directory:
#
#   scripts/debug-kernel.sh [--force]
#
# Source: Debian's linux-source-6.12 tarball.  Config: `make tinyconfig` plus
# scripts/debug-kernel.config.  The kernel is cached outside the clone, in
# $DEBUG_KERNEL_CACHE (default /var/cache/daptrace/debug-kernel), under a hash
# of the config fragment's settings, the source package version, the compiler
# and this recipe; it is rebuilt only when one of them changes (--force: always).
# The directory holds:
#
#   bzImage    the kernel to boot
#   release    its `uname -r`
#   build/     the build tree (O=): `make -C DIR/build M=... modules`
#   build.log  the build output; build-seconds: its wall clock time
#
# The build runs under `nice -n 19` with -j$DEBUG_KERNEL_JOBS (default 2) and
# gcc-12.  Progress goes to stderr, the directory to stdout.
set -euo pipefail

TOP=$(cd "$(dirname "$0")/.." && pwd)
FRAGMENT=$TOP/scripts/debug-kernel.config
CACHE=${DEBUG_KERNEL_CACHE:-/var/cache/daptrace/debug-kernel}
JOBS=${DEBUG_KERNEL_JOBS:-2}
KCC=${DEBUG_KERNEL_CC:-gcc-12}
TARBALL=${LINUX_SRC_TAR:-/usr/src/linux-source-6.12.tar.xz}
# Bump when the steps below change in a way that changes the kernel.
RECIPE=1
export LC_ALL=C
# Not the caller's make flags (jobserver, -s, ...): our own -j and nice.
unset MAKEFLAGS MFLAGS MAKELEVEL MAKEOVERRIDES

die() {
	echo "debug-kernel: $*" >&2
	exit 1
}

log() {
	echo "debug-kernel: $*" >&2
}

FORCE=0
case ${1:-} in
--force) FORCE=1 ;;
"") ;;
*) sed -n '/^# Build/,/^set -euo/{/^set/d;s/^# \{0,1\}//;p}' "$0" >&2; exit 2 ;;
esac

[ -f "$TARBALL" ] || die "$TARBALL missing: apt-get install linux-source-6.12"
command -v "$KCC" > /dev/null || die "$KCC missing"
for tool in flex bison bc perl; do
	command -v "$tool" > /dev/null || die "$tool missing (kernel build dependency)"
done
[ -f /usr/include/libelf.h ] || die "libelf-dev missing (objtool)"

SRC_VERSION=$(dpkg-query -W -f '${Version}' linux-source-6.12 2>/dev/null) ||
	SRC_VERSION=$(stat -c '%s-%Y' "$TARBALL")
HASH=$({
	echo "recipe $RECIPE"
	echo "source $SRC_VERSION"
	"$KCC" --version | head -n1
	# Its settings, not its comments.
	grep -E '^(CONFIG_|# CONFIG_)' "$FRAGMENT"
} | sha256sum | cut -c1-16)
DIR=$CACHE/$HASH
SRC=$CACHE/src-$SRC_VERSION
OUT=$DIR/build

mkdir -p "$CACHE" "$DIR"
# One build at a time per configuration (two checkouts may ask at once).
exec 9> "$DIR/.lock"
flock 9
if [ "$FORCE" = 0 ] && [ -f "$DIR/.done" ]; then
	log "cached: $DIR ($(cat "$DIR/release"))"
	echo "$DIR"
	exit 0
fi
rm -f "$DIR/.done"

# The source is shared by every configuration of one version (O= builds
# never write into it).
exec 8> "$CACHE/src-$SRC_VERSION.lock"
flock 8
if [ ! -f "$SRC/.extracted" ]; then
	log "extracting $TARBALL into $SRC"
	rm -rf "$SRC"
	mkdir -p "$SRC"
	tar -xf "$TARBALL" -C "$SRC" --strip-components=1
	touch "$SRC/.extracted"
fi
flock -u 8

# ARCH=x86_64: 64BIT is set from tinyconfig on, so int defaults (FRAME_WARN,
# ...) are the 64-bit ones.
KMAKE=(make -C "$SRC" O="$OUT" ARCH=x86_64 CC="$KCC" HOSTCC="$KCC")
log "configuring in $OUT (tinyconfig + ${FRAGMENT#"$TOP"/})"
mkdir -p "$OUT"
rm -f "$OUT/.config"
"${KMAKE[@]}" -s tinyconfig >&2
"$SRC/scripts/kconfig/merge_config.sh" -m -O "$OUT" "$OUT/.config" "$FRAGMENT" > "$DIR/config.log" 2>&1 ||
	{ cat "$DIR/config.log" >&2; die "merge_config.sh failed"; }
"${KMAKE[@]}" -s olddefconfig >&2

# Every line of the fragment must have survived (a missing dependency
# silently drops a symbol otherwise).
missing=()
while IFS= read -r line; do
	case $line in
	CONFIG_*=*) sym=${line%%=*} ;;
	"# CONFIG_"*" is not set") sym=${line#\# }; sym=${sym%% *} ;;
	*) continue ;;
	esac
	if [[ $line == "#"* ]]; then
		! grep -q "^$sym=" "$OUT/.config" || missing+=("$line (got $(grep "^$sym=" "$OUT/.config"))")
	else
		grep -qxF "$line" "$OUT/.config" ||
			missing+=("$line (got $(grep -E "^(# )?${sym}[= ]" "$OUT/.config" || echo unset))")
	fi
done < "$FRAGMENT"
if [ ${#missing[@]} -gt 0 ]; then
	printf 'debug-kernel: not in the final .config: %s\n' "${missing[@]}" >&2
	die "fix scripts/debug-kernel.config"
fi

log "building with -j$JOBS under nice -n 19 (log: $DIR/build.log)"
t0=$(date +%s)
if ! nice -n 19 "${KMAKE[@]}" -j"$JOBS" all > "$DIR/build.log" 2>&1; then
	tail -n 30 "$DIR/build.log" >&2
	die "kernel build failed (log: $DIR/build.log)"
fi
secs=$(($(date +%s) - t0))
echo "$secs" > "$DIR/build-seconds"
cp "$OUT/arch/x86/boot/bzImage" "$DIR/bzImage"
"${KMAKE[@]}" -s kernelrelease > "$DIR/release"
touch "$DIR/.done"
log "built $(cat "$DIR/release") in $((secs / 60)) min $((secs % 60)) s: $DIR"
echo "$DIR"
