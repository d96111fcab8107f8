#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Interval precision under load, with a busy loop on every CPU competing with
# the worker and the workload:
#  - drift: the mean window length stays within 5% of nominal, at the
#    default and at a fast setting (DAMON drifts 12-15% in this VM: it adds
#    its work time to its sleeps; daptrace sleeps to absolute deadlines);
#  - jitter (how far single windows stray, each one ending at the first
#    check after its deadline) is printed: under CPU load it is the worker's
#    wake-up latency as a CFS thread plus one round of work, which under TCG
#    emulation takes milliseconds;
#  - a recorder that keeps up loses no snapshot.

. "$(dirname "$0")/../lib/ktap.sh"
. "$(dirname "$0")/../lib/bounds.sh"
. "$(dirname "$0")/../lib/workload.sh"

TMP=${TMPDIR:-/tmp}/timing.$$

# timed ID NAME SAMPLE_US AGGR_US SCORE-ARGS...
timed() {
	id=$1 name=$2 sample=$3 aggr=$4
	shift 4
	truth=$TMP/$id.truth rec=$TMP/$id.csv
	if ! workload_start "$truth" -p hotcold -s 256M -d 8s; then
		ktap_test_fail "$name" "workload did not start"
		return
	fi
	pid=$WL_PID
	hogs=
	for _ in $(seq "$(nproc)"); do
		sh -c 'while :; do :; done' &
		hogs="$hogs $!"
	done
	daptrace record -q -p $pid -o "$rec" --sample "${sample}us" --aggr "${aggr}us" \
		> "$TMP/$id.log" 2>&1
	st=$?
	# shellcheck disable=SC2086
	kill $hogs
	wait $pid
	if [ $st -ne 0 ]; then
		sed 's/^/# record: /' "$TMP/$id.log"
		ktap_test_fail "$name" "daptrace record failed"
		return
	fi
	if daptrace-score --truth "$truth" --record "$rec" --aggr-us "$aggr" \
		--max-interval-drift 0.05 --max-missed 0 --settle 0 "$@" \
		> "$TMP/$id.score" 2>&1; then
		grep -E 'windows|interval|missed' "$TMP/$id.score" | sed 's/^/# /'
		ktap_test_pass "$name"
	else
		sed 's/^/# /' "$TMP/$id.score"
		bound_fail "$name" "windows drift or snapshots lost"
	fi
}

ktap_print_header
ktap_require_tools daptrace daptrace-workload daptrace-score
mkdir -p "$TMP"
ktap_set_plan 2
timed default "default 5ms/100ms with a busy loop per CPU" 5000 100000
timed fast "fast 1ms/20ms with a busy loop per CPU" 1000 20000
rm -rf "$TMP"
ktap_finished
