#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Build the test VM's initramfs for one kernel:
#
#   selftests/vm/mkinitramfs.sh [options] KVER OUT.cpio.gz
#
#   --module KO        the module to load (default build/kmod/KVER/daptrace.ko,
#                      from `make module KVER=KVER`)
#   --test SUITE/NAME  include only this test (repeatable; only the selected
#                      tests are compiled; --extra-test ones always run)
#   --skip SUITE/NAME  leave this test out (repeatable)
#   --unselected FILE  write to FILE the suites' tests left out by --test or
#                      --skip, one SUITE/NAME a line (for the caller to
#                      count as skipped)
#   --extra-test FILE  add FILE (.sh, .c or a static binary) as test
#                      extra/NAME (repeatable)
#   --file SRC:DEST    copy SRC to DEST in the image, and the libraries a
#                      dynamically linked SRC needs (repeatable)
#   --kmod NAME        add kernel module NAME and the modules it depends on
#                      to /lib/modules (listed in /lib/modules/order; the
#                      test loads them), e.g. virtio_net (repeatable)
#
# Contents: busybox-static with its applet links, /init (selftests/vm/init),
# the module, the bad/allowed kernel log patterns, sysfs-docs/ (as
# /sysfs-docs, for the ABI tests), selftests/lib, every suite
# selftests/<suite>/ (all but vm/ and lib/) and the static `daptrace` CLI if
# one was built.  Tests: every executable selftests/<suite>/*.sh and every
# selftests/<suite>/*.c (compiled statically into build/selftests/<suite>/);
# .c files in a suite's subdirectories are compiled as helpers, not run; any
# other file in a suite is copied as it is.  /selftests/TESTS lists the tests
# in the order they run: suites by name, tests by name.
set -euo pipefail

TOP=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-$TOP/build}
CC=${CC:-gcc}
CFLAGS=(-static -O2 -Wall -Werror -I "$BUILD/kselftest" -I "$TOP/include/uapi"
	-I "$TOP/selftests/lib")
export LC_ALL=C

die() {
	echo "mkinitramfs: $*" >&2
	exit 1
}

usage() {
	sed -n '/^# Build/,/^set -euo/{/^set/d;s/^# \{0,1\}//;p}' "$0" >&2
	exit 2
}

MODULE=
FILTER=()
SKIP=()
UNSELECTED_FILE=
UNSELECTED=()
EXTRA=()
FILES=()
KMODS=()
while [ $# -gt 0 ]; do
	case $1 in
	--module) MODULE=$2; shift 2 ;;
	--test) FILTER+=("$2"); shift 2 ;;
	--skip) SKIP+=("$2"); shift 2 ;;
	--unselected) UNSELECTED_FILE=$2; shift 2 ;;
	--extra-test) EXTRA+=("$2"); shift 2 ;;
	--file) FILES+=("$2"); shift 2 ;;
	--kmod) KMODS+=("$2"); shift 2 ;;
	-h | --help) usage ;;
	-*) die "unknown option $1" ;;
	*) break ;;
	esac
done
[ $# -eq 2 ] || usage
KVER=$1
OUT=$2
MODULE=${MODULE:-$BUILD/kmod/$KVER/daptrace.ko}
[ -f "$MODULE" ] || die "$MODULE missing: run 'make module KVER=$KVER'"
BUSYBOX=$(command -v busybox) || die "busybox-static missing: run 'make deps'"

if [ ! -f "$BUILD/kselftest/kselftest_harness.h" ]; then
	make -s -C "$TOP" ksft-headers >&2
fi

STAGE=$(mktemp -d "${TMPDIR:-/tmp}/daptrace-initramfs.XXXXXX")
trap 'rm -rf "$STAGE"' EXIT
ROOT=$STAGE/root
mkdir -p "$ROOT"/{bin,sbin,usr/bin,usr/sbin,proc,sys,dev,tmp,etc/dtvm,lib/daptrace,selftests/lib}

# compile SRC OUT: a static test program, rebuilt only when it or a header
# it may include changed.
compile() {
	local src=$1 out=$2 h
	if [ -x "$out" ] && [ "$out" -nt "$src" ]; then
		for h in "$BUILD"/kselftest/*.h "$TOP"/include/uapi/linux/*.h \
			 "$TOP"/selftests/lib/*.h; do
			[ ! -e "$h" ] || [ "$out" -nt "$h" ] || { rm -f "$out"; break; }
		done
		[ ! -x "$out" ] || return 0
	fi
	mkdir -p "$(dirname "$out")"
	"$CC" "${CFLAGS[@]}" -o "$out" "$src" || die "compiling $src failed"
}

TESTS=()	# "suite/name path-in-image", in run order

# selected SUITE/NAME: is this test wanted?  (With no --test, all but the
# --skip ones are.)
selected() {
	local want
	for want in ${SKIP[@]+"${SKIP[@]}"}; do
		[ "$1" != "$want" ] || return 1
	done
	[ ${#FILTER[@]} -gt 0 ] || return 0
	for want in "${FILTER[@]}"; do
		[ "$1" != "$want" ] || return 0
	done
	return 1
}

# suite_selected SUITE: does any wanted test belong to SUITE?
suite_selected() {
	local want
	[ ${#FILTER[@]} -gt 0 ] || return 0
	for want in "${FILTER[@]}"; do
		[ "${want%%/*}" != "$1" ] || return 0
	done
	return 1
}

# unselected SUITE/NAME: note a test left out, for --unselected.
unselected() {
	UNSELECTED+=("$1")
	return 1
}

# add_suite DIR SUITE: copy the suite, compile its C files (only the tests
# selected), list its selected tests.
add_suite() {
	local dir=$1 suite=$2 f rel name img
	local -A seen=()
	if ! suite_selected "$suite"; then
		while IFS= read -r -d '' f; do
			rel=${f#"$dir"/}
			case $rel in
			*/*) ;;
			*.c) unselected "$suite/${rel%.c}" || true ;;
			*.sh) [ ! -x "$f" ] || unselected "$suite/${rel%.sh}" || true ;;
			esac
		done < <(find "$dir" -type f ! -name '*~' ! -name '.*' -print0 | sort -z)
		return 0
	fi
	while IFS= read -r -d '' f; do
		rel=${f#"$dir"/}
		case $rel in
		*.c)
			name=${rel%.c}
			[[ $rel == */* ]] || selected "$suite/$name" || unselected "$suite/$name" ||
				continue
			compile "$f" "$BUILD/selftests/$suite/$name"
			mkdir -p "$(dirname "$ROOT/selftests/$suite/$name")"
			cp "$BUILD/selftests/$suite/$name" "$ROOT/selftests/$suite/$name"
			[[ $rel != */* ]] || continue
			img=/selftests/$suite/$name
			;;
		*)
			mkdir -p "$(dirname "$ROOT/selftests/$suite/$rel")"
			cp -p "$f" "$ROOT/selftests/$suite/$rel"
			[[ $rel != */* && $rel == *.sh && -x $f ]] || continue
			name=${rel%.sh}
			selected "$suite/$name" || unselected "$suite/$name" || continue
			img=/selftests/$suite/$rel
			;;
		esac
		[ -z "${seen[$name]:-}" ] || die "$suite/$name: both $name.sh and $name.c"
		seen[$name]=1
		TESTS+=("$suite/$name $img")
	done < <(find "$dir" -type f ! -name '*~' ! -name '.*' -print0 | sort -z)
}

for dir in "$TOP"/selftests/*/; do
	dir=${dir%/}
	suite=${dir##*/}
	# "final": tests that change the boot for good (Yama scope 3), last.
	case $suite in vm | lib | final) continue ;; esac
	add_suite "$dir" "$suite"
done
cp -p "$TOP"/selftests/lib/* "$ROOT/selftests/lib/"

# --extra-test files always run, after the suites.
for f in ${EXTRA[@]+"${EXTRA[@]}"}; do
	[ -f "$f" ] || die "extra test $f missing"
	mkdir -p "$ROOT/selftests/extra"
	name=$(basename "$f")
	case $name in
	*.c)
		name=${name%.c}
		compile "$f" "$BUILD/selftests/extra/$name"
		cp "$BUILD/selftests/extra/$name" "$ROOT/selftests/extra/$name"
		TESTS+=("extra/$name /selftests/extra/$name")
		;;
	*)
		install -m 0755 "$f" "$ROOT/selftests/extra/$name"
		TESTS+=("extra/${name%.sh} /selftests/extra/$name")
		;;
	esac
done

add_suite "$TOP/selftests/final" final

# Run order: suites by name, tests by name (find | sort), then extras, then
# the final suite.
printf '%s\n' ${TESTS[@]+"${TESTS[@]}"} > "$ROOT/selftests/TESTS"
for want in ${FILTER[@]+"${FILTER[@]}"}; do
	grep -q "^$want " "$ROOT/selftests/TESTS" || die "no test named $want"
done
for want in ${SKIP[@]+"${SKIP[@]}"}; do
	printf '%s\n' ${UNSELECTED[@]+"${UNSELECTED[@]}"} | grep -qx "$want" ||
		die "--skip $want: no test of that name"
done
[ -z "$UNSELECTED_FILE" ] ||
	printf '%s\n' ${UNSELECTED[@]+"${UNSELECTED[@]}"} > "$UNSELECTED_FILE"

# busybox and its applets; /init and its pattern files; the module.
cp "$BUSYBOX" "$ROOT/bin/busybox"
"$BUSYBOX" --list-full | while read -r applet; do
	[ -e "$ROOT/$applet" ] || ln -s /bin/busybox "$ROOT/$applet"
done
install -m 0755 "$TOP/selftests/vm/init" "$ROOT/init"
cp "$TOP"/selftests/vm/{bad,allowed}-patterns "$TOP"/selftests/vm/drop-oom-reports.awk \
	"$ROOT/etc/dtvm/"
cp "$MODULE" "$ROOT/lib/daptrace/daptrace.ko"
# Test-only helper modules (selftests/vm/testmod), built with the module.
mkdir -p "$ROOT/lib/daptrace/testmod"
for f in "$BUILD/kmod/$KVER/testmod/"*.ko; do
	[ ! -f "$f" ] || cp "$f" "$ROOT/lib/daptrace/testmod/"
done
# The ABI documentation, for the selftests that check it against sysfs.
[ ! -d "$TOP/sysfs-docs" ] || cp -r "$TOP/sysfs-docs" "$ROOT/sysfs-docs"
echo "root:x:0:0:root:/root:/bin/sh" > "$ROOT/etc/passwd"
echo "root:x:0:" > "$ROOT/etc/group"

# The CLI, if a static one was built (run.sh does:
# `make -C userspace O=build/userspace-static STATIC=1`).
for cli in ${DAPTRACE_CLI:-} "$BUILD"/userspace-static/daptrace; do
	if [ ! -f "$cli" ] || [ ! -x "$cli" ]; then continue; fi
	if LC_ALL=C readelf -l "$cli" 2>/dev/null | grep -q 'program interpreter'; then
		echo "mkinitramfs: $cli is dynamically linked, not included" \
		     "(build it with 'make -C userspace STATIC=1')" >&2
		continue
	fi
	cp "$cli" "$ROOT/usr/bin/daptrace"
	break
done

# The workload generator, its scorer and the DAMON trace converter
# (static: `make -C workload`), for accuracy tests and the benchmark.
for tool in "$BUILD"/workload/*; do
	[ -f "$tool" ] && [ -x "$tool" ] && cp "$tool" "$ROOT/usr/bin/"
done

# record --objects: the LD_PRELOAD tracer (found by the CLI in
# /usr/bin/../lib/daptrace), and the loader and libraries that the
# dynamically linked programs among the tools need (objects-test), by scripts/shared-libs.sh.
for so in ${DAPTRACE_CLI:+"$(dirname "$DAPTRACE_CLI")/libdaptrace-objtrace.so"} \
	  "$BUILD"/userspace-static/libdaptrace-objtrace.so; do
	[ -f "$so" ] || continue
	mkdir -p "$ROOT/usr/lib/daptrace"
	cp "$so" "$ROOT/usr/lib/daptrace/"
	break
done
# --file SRC:DEST: given files, their libraries too (below).
ADDED=()
for spec in ${FILES[@]+"${FILES[@]}"}; do
	src=${spec%%:*} dest=${spec#*:}
	[ -f "$src" ] && [ "$dest" != "$spec" ] && [ "${dest#/}" != "$dest" ] ||
		die "--file $spec: expected SRC:DEST, SRC a file, DEST absolute"
	install -D -m 0755 "$src" "$ROOT$dest"
	ADDED+=("$ROOT$dest")
done
DYNAMIC=()
for f in "$ROOT"/usr/bin/* "$ROOT"/usr/lib/daptrace/*.so ${ADDED[@]+"${ADDED[@]}"}; do
	[ -L "$f" ] || [ ! -f "$f" ] || DYNAMIC+=("$f")
done
"$TOP/scripts/shared-libs.sh" --into "$ROOT" ${DYNAMIC[@]+"${DYNAMIC[@]}"}

# zram and the modules it needs (Debian ships it as a module): swap for the
# reclaim tests.  /lib/modules/order lists them dependencies first, and
# they are decompressed here because busybox insmod reads plain .ko files.
KROOT=$("$TOP/scripts/kernels.sh" --root "$KVER")
add_kmod() {
	local name=$1 f dep
	f=$(modinfo -b "$KROOT" -k "$KVER" -F filename "$name" 2>/dev/null) || return 0
	[ -f "$f" ] && [ ! -e "$ROOT/lib/modules/$name.ko" ] || return 0
	for dep in $(modinfo -b "$KROOT" -k "$KVER" -F depends "$name" | tr , ' '); do
		add_kmod "$dep"
	done
	case $f in
	*.xz) xz -dc "$f" ;;
	*.zst) zstd -dc "$f" ;;
	*) cat "$f" ;;
	esac > "$ROOT/lib/modules/$name.ko"
	echo "$name" >> "$ROOT/lib/modules/order"
}
mkdir -p "$ROOT/lib/modules"
add_kmod zram
for m in ${KMODS[@]+"${KMODS[@]}"}; do
	modinfo -b "$KROOT" -k "$KVER" "$m" > /dev/null 2>&1 ||
		die "--kmod $m: no such module for $KVER (in $KROOT)"
	add_kmod "$m"
done

mkdir -p "$(dirname "$OUT")"
(cd "$ROOT" && find . -print0 | sort -z |
	cpio --null --create --format=newc --owner=0:0 --quiet) | gzip -1 > "$OUT.tmp"
mv "$OUT.tmp" "$OUT"
