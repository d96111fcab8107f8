#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# A measurement, not a test (run by bench/idle-breakdown.sh as an extra
# test of selftests/vm/run.sh, with the module built with
# bench/idle-breakdown.patch): where a stopped target's worker time goes.
# The target (hotcold 256M, as bench/idle-guest.sh) runs 3 s, then PHASE
# seconds more with the worker's CPU read (the busy figure), is stopped,
# and after a second (its last window over) the worker's CPU is read over
# PHASE seconds again; monitoring then stops and the patched worker prints the
# time of each step of the windows it slept to.  Per quiet window: the
# worker's CPU (worker_cpu_us over the phase, by the windows in it), the
# steps inside the loop (the patch's sums, by the windows they cover), and
# the difference: going to sleep and waking up, which no step of the loop
# holds.  The same for the busy phase's samples: the worker's CPU by the
# samples taken, and the patch's sum of the passes from wake-up to sleep.  Printed as one "# breakdown" line per pass; fails only if a pass
# could not run.

. /selftests/lib/ktap.sh
. /selftests/lib/workload.sh

DT=/sys/kernel/daptrace
TMP=${TMPDIR:-/tmp}/idle-breakdown.$$
PHASE=8

pass() {
	if ! workload_start "$TMP/truth" -p hotcold -s 256M --thp never -d 120s; then
		ktap_test_fail "pass $1" "workload did not start"
		return
	fi
	pid=$WL_PID
	echo off > $DT/state
	for t in $(cat $DT/target); do echo "$t" > $DT/target_remove; done
	if ! { echo "$pid" > $DT/target && echo on > $DT/state; }; then
		kill "$pid"
		ktap_test_fail "pass $1" "monitoring did not start"
		return
	fi
	sleep 3
	b0=$(cat $DT/worker_cpu_us) s0=$(cat $DT/nr_samples)
	sleep $PHASE
	b1=$(cat $DT/worker_cpu_us) s1=$(cat $DT/nr_samples)
	kill -STOP "$pid"
	sleep 1
	c0=$(cat $DT/worker_cpu_us) w0=$(cat $DT/nr_snapshots)
	sleep $PHASE
	c1=$(cat $DT/worker_cpu_us) w1=$(cat $DT/nr_snapshots)
	echo off > $DT/state
	kill -CONT "$pid"
	kill "$pid"
	wait "$pid" 2>/dev/null
	line=$(dmesg | grep 'daptrace: diag: windows' | tail -1)
	if [ -z "$line" ]; then
		ktap_test_fail "pass $1" "no diag line: module not built with bench/idle-breakdown.patch?"
		return
	fi
	echo "# breakdown pass=$1 busy_us=$((b1 - b0)) busy_samples=$((s1 - s0)) cpu_us=$((c1 - c0)) snapshots=$((w1 - w0)) ${line#*diag: }"
	ktap_test_pass "pass $1"
}

mkdir -p "$TMP"
ktap_print_header
ktap_set_plan 3
for p in 1 2 3; do
	pass $p
done
rm -rf "$TMP"
ktap_finished
