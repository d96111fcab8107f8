#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# `make check-debug`: the whole VM selftest suite on a debug kernel (KASAN,
# lockdep, kmemleak, DEBUG_VM, DEBUG_LIST, debug objects, UBSAN), as one KTAP
# stream.
#
#   scripts/check-debug.sh [--la57] [run.sh options...]
#
# Steps: the debug kernel (scripts/debug-kernel.sh: built once, cached
# outside the clone), the module for it (`make module`), then
# selftests/vm/run.sh on it with panic_on_warn=1 (any WARN, KASAN or UBSAN
# report ends the boot) and dtvm.leakcheck=1 (after the tests and the rmmod,
# /init has kmemleak scan and fails on a leak involving daptrace: the
# debug/kmemleak result), and dtvm.slow=1 (DAPTRACE_VM_SLOW=1 in the guest).
# Lockdep splats fail through the kernel log check.
# One boot with 4-level paging; --la57 adds the 5-level-paging boot.  Other
# options go to run.sh (e.g. --test abi/ring, --keep; not --append, which
# would replace ours).  Build progress goes to stderr; the last line is
# "N passed, M failed[, K skipped]".
set -euo pipefail

TOP=$(cd "$(dirname "$0")/.." && pwd)
export LC_ALL=C
unset MAKEFLAGS MFLAGS MAKELEVEL

LA57=(--no-la57)
if [ "${1:-}" = --la57 ]; then
	LA57=()
	shift
fi

# fail NAME LOG: a step before the VM run failed; KTAP says so.
fail() {
	echo "TAP version 13"
	echo "# log: $2"
	tail -n 20 "$2" | sed 's/^/# | /'
	echo "not ok 1 $1"
	echo "1..1"
	echo "0 passed, 1 failed"
	exit 1
}

mkdir -p "$TOP/build/logs"
LOG=$TOP/build/logs/debug-kernel.log
echo "check-debug: debug kernel (first build: about 20 min; log: $LOG)" >&2
DIR=$("$TOP/scripts/debug-kernel.sh" 2> >(tee "$LOG" >&2)) || fail "debug kernel built" "$LOG"
REL=$(cat "$DIR/release")

LOG=$TOP/build/logs/debug-module.log
echo "check-debug: module for $REL" >&2
make -C "$TOP" --no-print-directory module KVER="$REL" KDIR="$DIR/build" CC=gcc-12 \
	> "$LOG" 2>&1 || fail "module built for $REL" "$LOG"

# Everything is several times slower than on the stock kernels.
exec "$TOP/selftests/vm/run.sh" --kernel "$REL" --vmlinuz "$DIR/bzImage" \
	"${LA57[@]}" --timeout 5400 --test-timeout 1800 \
	--append "panic_on_warn=1 dtvm.leakcheck=1 dtvm.slow=1" "$@"
