#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The module loads, shows its sysfs root, unloads cleanly and loads again.
# Needs root and DAPTRACE_KO (the test VM's /init exports it).

# shellcheck source=selftests/lib/ktap.sh
. "$(dirname "$0")/../lib/ktap.sh"

ROOT=/sys/kernel/daptrace

listed() {
	grep -q '^daptrace ' /proc/modules
}

ktap_print_header
[ "$(id -u)" = 0 ] || ktap_skip_all "needs root"
[ -f "${DAPTRACE_KO:-}" ] || ktap_skip_all "DAPTRACE_KO does not name the module"
ktap_set_plan 7

ktap_test_result "module listed in /proc/modules" listed
ktap_test_result "$ROOT is a directory" test -d "$ROOT"

if rmmod daptrace; then
	ktap_test_pass "rmmod daptrace"
else
	ktap_test_fail "rmmod daptrace" "exit status $?"
fi
if listed; then
	ktap_test_fail "gone from /proc/modules after rmmod" "still listed"
else
	ktap_test_pass "gone from /proc/modules after rmmod"
fi
if [ -e "$ROOT" ]; then
	ktap_test_fail "$ROOT gone after rmmod" "still there"
else
	ktap_test_pass "$ROOT gone after rmmod"
fi

if insmod "$DAPTRACE_KO"; then
	ktap_test_pass "insmod again"
else
	ktap_test_fail "insmod again" "insmod $DAPTRACE_KO: exit status $?"
fi
ktap_test_result "$ROOT is back after insmod" test -d "$ROOT"

ktap_finished
