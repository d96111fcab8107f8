#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The module says which kernel series it was built for and whether daptrace
# is verified on it (kernel_series, kernel_series_verified; Kbuild's
# daptrace-verified-series), and an unverified build warns once per load.
#
# The test VM boots verified series, so by default the files must read the
# booted kernel's series and "verified", and a load must log no warning.
# dtvm.unverified=SERIES on the kernel command line (the init exports
# DAPTRACE_VM_UNVERIFIED=SERIES) says the module under test was built for
# SERIES with DAPTRACE_UNVERIFIED=1: 9.99 for scripts/unverified-test.sh
# --boot (the test-only DAPTRACE_SERIES_TEST=9.99), or the booted kernel's
# own series when it is not a verified one.  Then they must read SERIES and
# "unverified", and each load must log the warning exactly once.  Needs root and DAPTRACE_KO (the test VM's /init exports it).

# shellcheck source=selftests/lib/ktap.sh
. "$(dirname "$0")/../lib/ktap.sh"

ROOT=/sys/kernel/daptrace
WARNING='daptrace: kernel series [0-9]*\.[0-9]* is unverified'

# The kernel log's lines of the unverified warning, counted.
warnings() {
	dmesg | grep -c "$WARNING"
}

ktap_print_header
[ "$(id -u)" = 0 ] || ktap_skip_all "needs root"
[ -f "${DAPTRACE_KO:-}" ] || ktap_skip_all "DAPTRACE_KO does not name the module"
ktap_set_plan 4

if [ -n "${DAPTRACE_VM_UNVERIFIED:-}" ]; then
	want_series=$DAPTRACE_VM_UNVERIFIED want_verdict=unverified want_warnings=1
else
	want_series=$(uname -r | sed -n 's/^\([0-9]*\.[0-9]*\)[.-].*/\1/p')
	want_verdict=verified want_warnings=0
fi
ktap_print_msg "kernel $(uname -r): want series $want_series, $want_verdict"

series=$(cat "$ROOT/kernel_series" 2>&1)
if [ "$series" = "$want_series" ]; then
	ktap_test_pass "kernel_series is $want_series"
else
	ktap_test_fail "kernel_series is $want_series" "read '$series'"
fi
verdict=$(cat "$ROOT/kernel_series_verified" 2>&1)
if [ "$verdict" = "$want_verdict" ]; then
	ktap_test_pass "kernel_series_verified is $want_verdict"
else
	ktap_test_fail "kernel_series_verified is $want_verdict" "read '$verdict'"
fi

# A fresh load: the warning is logged once per load, or never.
before=$(warnings)
if rmmod daptrace && insmod "$DAPTRACE_KO"; then
	ktap_test_pass "reloaded"
else
	ktap_test_fail "reloaded" "rmmod, insmod $DAPTRACE_KO failed"
fi
got=$(($(warnings) - before))
if [ "$got" = "$want_warnings" ]; then
	ktap_test_pass "a load logs the unverified warning $want_warnings time(s)"
else
	dmesg | grep "$WARNING" | while IFS= read -r l; do ktap_print_msg "$l"; done
	ktap_test_fail "a load logs the unverified warning $want_warnings time(s)" \
		"$got time(s)"
fi

ktap_finished
