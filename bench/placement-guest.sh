#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Guest side of bench/placement.sh: worker CPU of one monitored run.  A
# 256 MiB hot/cold workload is monitored for 10 s (fixed time) with the
# default attributes; prints worker_cpu_us, sampling rounds and regions.

. "$(dirname "$0")/../lib/ktap.sh" 2> /dev/null || . /selftests/lib/ktap.sh

D=/sys/kernel/daptrace
T=${TMPDIR:-/tmp}/po.$$
ktap_print_header
ktap_set_plan 1
daptrace-workload -p hotcold -s 256M -d 0 --truth "$T" &
wl=$!
i=0
while ! grep -q '^phase 0' "$T" 2> /dev/null && [ $i -lt 600 ]; do
	sleep 0.1
	i=$((i + 1))
done
echo "$wl" > $D/target
echo on > $D/state
sleep 10
echo off > $D/state
cpu=$(cat $D/worker_cpu_us) samples=$(cat $D/nr_samples)
snaps=$(cat $D/nr_snapshots) regions=$(cat $D/nr_regions)
kill "$wl"
wait "$wl" 2> /dev/null
echo "$wl" > $D/target_remove 2> /dev/null
echo "# placement: worker_cpu_us $cpu nr_samples $samples nr_snapshots $snaps nr_regions $regions"
if [ "$samples" -gt 0 ]; then
	ktap_test_pass "monitored run"
else
	ktap_test_fail "monitored run" "no samples"
fi
ktap_finished
