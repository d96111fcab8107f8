#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# A target whose mmap lock is held for writing (as a fault stuck in a hung
# FUSE or NFS mapping holds up the writer queued behind it, and with it every
# new reader) must not stall daptrace.  The test helper module
# (selftests/vm/testmod/dt_mmap_hold.c) holds the lock of a monitored
# workload; each step below must return while it still holds it (its "held"
# parameter still reads Y afterwards), so no step can have waited for it:
#  - the worker keeps running and counts the target's skipped passes
#    (nr_samples_busy grows) instead of sleeping on the lock;
#  - the checks it could not make are unobserved, not "not accessed": a
#    window taken while the lock is held has every check of every region
#    unobserved (nr_unobserved = nr_samples);
#  - attribute reads, "echo off", "echo on" and rmmod return;
# and once the lock is released the target is monitored again.

. "$(dirname "$0")/../lib/ktap.sh"
. "$(dirname "$0")/../lib/workload.sh"

D=/sys/kernel/daptrace
HELPER=/lib/daptrace/testmod/dt_mmap_hold.ko
HELD=/sys/module/dt_mmap_hold/parameters/held
TMP=${TMPDIR:-/tmp}/stalled.$$

ktap_print_header
[ -f "${DAPTRACE_KO:-}" ] || ktap_exit_fail_msg "DAPTRACE_KO does not name the module"
[ -f "$HELPER" ] || ktap_exit_fail_msg "$HELPER missing: built by 'make module'"
ktap_set_plan 8
mkdir -p "$TMP"

# still_held NAME: pass if the helper still holds the lock after step NAME.
still_held() {
	if [ "$(cat $HELD 2>/dev/null)" = Y ]; then
		ktap_test_pass "$1"
	else
		ktap_test_fail "$1" "returned only after the lock was released"
	fi
}

cleanup() {
	rmmod dt_mmap_hold 2>/dev/null
	grep -q '^daptrace ' /proc/modules || insmod "$DAPTRACE_KO"
	[ -z "${WL_PID:-}" ] || { kill "$WL_PID"; wait "$WL_PID"; } 2>/dev/null
	rm -rf "$TMP"
}

workload_start "$TMP/truth" -p hotcold -s 64M -d 600s ||
	ktap_exit_fail_msg "workload did not start"
echo "$WL_PID" > $D/target
echo on > $D/state
sleep 1

# Held until rmmod dt_mmap_hold, or 30 s: the steps below take about 5 s,
# so a step that waits for the lock returns only after the release, sees
# "held" read N and fails, rather than hanging the suite.
if ! insmod "$HELPER" pid="$WL_PID" ms=30000; then
	cleanup
	ktap_exit_fail_msg "insmod $HELPER pid=$WL_PID failed"
fi
ktap_test_result "helper holds the target's mmap lock" test "$(cat $HELD)" = Y

busy0=$(cat $D/nr_samples_busy)
samples0=$(cat $D/nr_samples)
sleep 2
busy1=$(cat $D/nr_samples_busy)
samples1=$(cat $D/nr_samples)
ktap_print_msg "over 2 s held: nr_samples $samples0 -> $samples1, nr_samples_busy $busy0 -> $busy1"
if [ "$busy1" -gt "$busy0" ] && [ "$samples1" -gt "$samples0" ]; then
	still_held "worker skips the locked target and counts it"
else
	ktap_test_fail "worker skips the locked target and counts it" \
		"samples $samples0 -> $samples1, busy $busy0 -> $busy1"
fi

# The newest window lies inside the 2 s held: no check of it was made.
cat $D/snapshot > "$TMP/snap"
bad=$(awk '$1 == "nr_samples" { n = $2 }
	/^[0-9]+ 0x/ { r++; if ($6 != n) b++ }
	END { if (!r || !n) print "no regions"; else if (b) print b " of " r " regions" }' "$TMP/snap")
if [ -z "$bad" ]; then
	still_held "checks not made are unobserved, not 'not accessed'"
else
	ktap_test_fail "checks not made are unobserved, not 'not accessed'" \
		"$bad with nr_unobserved != nr_samples: $(grep -E '^(seq|nr_samples) |^[0-9]+ 0x' "$TMP/snap" | head -n 6 | tr '\n' ' ')"
fi

for f in sample_us aggr_us target target_status nr_regions worker_cpu_us state; do
	cat "$D/$f" > /dev/null || ktap_print_msg "reading $f failed"
done
still_held "attribute reads"

echo off > $D/state
still_held "echo off"

echo on > $D/state
sleep 1
still_held "echo on"

rmmod daptrace
still_held "rmmod daptrace"

# Released: the target is monitored again.
rmmod dt_mmap_hold
insmod "$DAPTRACE_KO"
echo "$WL_PID" > $D/target
echo on > $D/state
busy0=$(cat $D/nr_samples_busy)
samples0=$(cat $D/nr_samples)
sleep 2
busy1=$(cat $D/nr_samples_busy)
samples1=$(cat $D/nr_samples)
echo off > $D/state
ktap_print_msg "over 2 s released: nr_samples $samples0 -> $samples1, nr_samples_busy $busy0 -> $busy1"
if [ "$samples1" -gt "$samples0" ] && kill -0 "$WL_PID" 2>/dev/null; then
	ktap_test_pass "monitored again after the release"
else
	ktap_test_fail "monitored again after the release" \
		"samples $samples0 -> $samples1, workload alive: $(kill -0 "$WL_PID" 2>/dev/null && echo yes || echo no)"
fi
cleanup
ktap_finished
