#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The build's refusal of a kernel series daptrace is not verified on, and
# its opt-in (Kbuild's daptrace-verified-series; README, "Supported
# kernels"), as KTAP.  Only verified series' headers are installed here, so
# the module is built against one installed kernel's headers (the host's
# newest, or KVER) with the test-only DAPTRACE_SERIES_TEST=9.99, which makes
# Kbuild take the build for series 9.99:
#
#   - without DAPTRACE_UNVERIFIED=1 the build fails before compiling
#     anything, and its message names every verified series and the opt-in;
#   - with it, the module builds W=1 -Werror clean (and no warning), and
#     carries the text of the load-time warning;
#   - with --boot, that module is then loaded in QEMU on KVER and
#     module/kernel_series must read "9.99" and "unverified", and find the
#     warning logged once per load.  One VM boot: run it alone (never two
#     VM jobs at once).
#
#   scripts/unverified-test.sh [--boot] [KVER]
#
# The module lands in build/unverified/KVER/.  Exit status 0/1.
set -euo pipefail

TOP=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$TOP/build}
SERIES=9.99
BOOT=0
if [ "${1:-}" = --boot ]; then
	BOOT=1
	shift
fi
KVER=${1:-$("$TOP/scripts/kernels.sh" --host | tail -n1)}

# shellcheck source=selftests/lib/ktap.sh
. "$TOP/selftests/lib/ktap.sh"
ktap_print_header
[ -n "$KVER" ] || ktap_skip_all "no supported kernel with headers installed: run 'make deps'"
ktap_set_plan 6
ktap_print_msg "headers of $KVER, pretending to be series $SERIES"

DIR=$BUILD/unverified/$KVER
LOG=$DIR.log
rm -rf "$DIR"
mkdir -p "$DIR"
# The Makefile's list of the module's sources (a list of our own here missed
# a compat header added later).
read -ra srcs <<< "$(make -s -C "$TOP" --no-print-directory ksrc)"
[ ${#srcs[@]} -gt 0 ] || ktap_exit_fail_msg "make ksrc listed no source"
(cd "$TOP" && cp -p --parents "${srcs[@]}" "$DIR/")
verified=$(sed -n 's/^daptrace-verified-series := //p' "$TOP/Kbuild")
[ -n "$verified" ] || ktap_exit_fail_msg "no daptrace-verified-series line in Kbuild"

# build ARGS...: the module for KVER as series $SERIES, W=1 -Werror; the
# output in $LOG.
build() {
	"$TOP/scripts/kbuild.sh" "$KVER" "$DIR" W=1 DAPTRACE_WERROR=y \
		DAPTRACE_SERIES_TEST="$SERIES" "$@" modules > "$LOG" 2>&1
}

log_tail() {
	tail -n 15 "$LOG" | while IFS= read -r l; do ktap_print_msg "| $l"; done
}

if build; then
	ktap_test_fail "refused without DAPTRACE_UNVERIFIED=1" "the build succeeded"
elif grep -q 'CC \[M\]' "$LOG" || [ -n "$(find "$DIR" -name '*.o' -print -quit)" ]; then
	log_tail
	ktap_test_fail "refused without DAPTRACE_UNVERIFIED=1" "it compiled first"
else
	ktap_test_pass "refused without DAPTRACE_UNVERIFIED=1"
fi
msg=$(grep -m1 "series $SERIES is not verified" "$LOG" || true)
missing=
for s in $verified; do
	[[ $msg == *" $s"[\ .]* ]] || missing+=" $s"
done
if [ -n "$msg" ] && [ -z "$missing" ] && [[ $msg == *"make DAPTRACE_UNVERIFIED=1"* ]] &&
   [[ $msg == *"/etc/dkms/daptrace.conf"* ]]; then
	ktap_test_pass "the refusal names the verified series ($verified) and the opt-in"
else
	log_tail
	ktap_test_fail "the refusal names the verified series ($verified) and the opt-in" \
		"message '${msg:-none}'${missing:+, missing:$missing}"
fi

if build DAPTRACE_UNVERIFIED=1 && [ -f "$DIR/daptrace.ko" ]; then
	ktap_test_pass "builds W=1 -Werror with DAPTRACE_UNVERIFIED=1"
else
	log_tail
	ktap_test_fail "builds W=1 -Werror with DAPTRACE_UNVERIFIED=1" "build failed"
fi
if grep -qi 'warning' "$LOG"; then
	grep -i 'warning' "$LOG" | head -n 5 | while IFS= read -r l; do ktap_print_msg "$l"; done
	ktap_test_fail "no warning in the build" "see $LOG"
else
	ktap_test_pass "no warning in the build"
fi
if [ -f "$DIR/daptrace.ko" ] &&
   grep -qa "kernel series %d.%d is unverified" "$DIR/daptrace.ko"; then
	ktap_test_pass "the module carries the load-time warning"
else
	ktap_test_fail "the module carries the load-time warning" "its text is not in daptrace.ko"
fi

if [ "$BOOT" = 0 ]; then
	ktap_test_skip "booted: module/kernel_series reads unverified" "no --boot"
elif "$TOP/selftests/vm/run.sh" --kernel "$KVER" --no-la57 --module "$DIR/daptrace.ko" \
	--append "dtvm.unverified=$SERIES" --test module/kernel_series > "$DIR.vm.log" 2>&1; then
	ktap_test_pass "booted: module/kernel_series reads unverified"
else
	tail -n 30 "$DIR.vm.log" | while IFS= read -r l; do ktap_print_msg "| $l"; done
	ktap_test_fail "booted: module/kernel_series reads unverified" "see $DIR.vm.log"
fi
ktap_finished
