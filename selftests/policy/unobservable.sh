#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# A policy never acts on memory the module cannot observe.  A process with
# a secondary MMU (an MMU notifier, as KVM gives the QEMU that runs a
# guest: selftests/vm/testmod/dt_notifier.ko) is accessed where no accessed
# bit shows it, so every check of it is unobserved and its regions read
# nr_accesses 0.  "cold freq=0-0" must leave all of it alone, counting it
# as unobserved_skip; with unobserved=act the same scheme acts on it (the
# control: this test can fail).

. "$(dirname "$0")/../lib/ktap.sh"
. "$(dirname "$0")/../lib/workload.sh"

TMP=${TMPDIR:-/tmp}/policy-unobservable.$$
NOTIFIER_KO=/lib/daptrace/testmod/dt_notifier.ko

# column NAME of the scheme's row in the stats CSV FILE
stat_of() {
	awk -F, -v name="$2" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == name) c = i; next }
		c { print $c; exit }' "$1"
}

# policy SCHEME: run it on the workload for 4 s; stats in $TMP/stats.csv
policy() {
	rm -f "$TMP/stats.csv"
	daptrace policy -q -S "$1" -p "$WL_PID" -s 5ms -a 100ms -d 4s \
		--stats-csv "$TMP/stats.csv" > "$TMP/policy.log" 2>&1
}

ktap_print_header
ktap_require_tools daptrace
# Kbuild builds the helper exactly when the kernel has CONFIG_MMU_NOTIFIER.
[ -f "$NOTIFIER_KO" ] ||
	ktap_skip_all "kernel without CONFIG_MMU_NOTIFIER: no secondary MMU can exist"
ktap_set_plan 3
mkdir -p "$TMP"
trap 'rmmod dt_notifier 2>/dev/null; kill "$WL_PID" 2>/dev/null; rm -rf "$TMP"' EXIT

workload_start "$TMP/truth" -p hotcold -s 16M --hot-size 4M --warm-size 0 -d 120s ||
	ktap_exit_fail_msg "workload did not start"
if insmod "$NOTIFIER_KO" pid="$WL_PID"; then
	ktap_test_pass "secondary MMU given to the target"
else
	ktap_exit_fail_msg "insmod dt_notifier.ko pid=$WL_PID failed"
fi

policy "cold freq=0-0"
applied=$(stat_of "$TMP/stats.csv" sz_applied)
skipped=$(stat_of "$TMP/stats.csv" sz_unobserved_skip)
ktap_print_msg "default: sz_applied ${applied:-?}, sz_unobserved_skip ${skipped:-?}"
if [ "$applied" = 0 ] && [ "${skipped:-0}" -gt 0 ]; then
	ktap_test_pass "by default nothing unobserved is acted on, and it is counted"
else
	ktap_test_fail "by default nothing unobserved is acted on, and it is counted" \
		"$(tail -n 5 "$TMP/policy.log")"
fi

policy "cold freq=0-0 unobserved=act"
applied=$(stat_of "$TMP/stats.csv" sz_applied)
ktap_print_msg "unobserved=act: sz_applied ${applied:-?}"
if [ "${applied:-0}" -gt 0 ]; then
	ktap_test_pass "unobserved=act acts on it"
else
	ktap_test_fail "unobserved=act acts on it" "$(tail -n 5 "$TMP/policy.log")"
fi
ktap_finished
