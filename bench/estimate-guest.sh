#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The estimate bench's guest half (bench/estimate.sh): for each case, run
# daptrace-workload (exact truth) under `daptrace record` with the module's
# accuracy probes at their default (64 a window), then daptrace-score the
# record, which compares the pooled estimate with the true recall window by
# window; one "# BENCH case=NAME k=v ..." row per case.  CASES (set by the
# host driver in line 2) names the cases below.

. "$(dirname "$0")/../lib/ktap.sh" 2>/dev/null || . /selftests/lib/ktap.sh
. "$(dirname "$0")/../lib/workload.sh" 2>/dev/null || . /selftests/lib/workload.sh

TMP=/tmp/estimate
D=${D:-30}
mkdir -p "$TMP"

# case_args NAME: "WORKLOAD-ARGS|RECORD-ARGS" of a case.
case_args() {
	case $1 in
	hotcold) echo "-p hotcold -s 512M --thp never|" ;;
	moving) echo "-p moving -s 512M --thp never|" ;;
	smallhot) echo "-p smallhot -s 1G --hot-size 8M --thp never|" ;;
	# coarse regions and one check a window: a truth near 0.5
	blocks-coarse) echo "-p blocks -s 128M|-s 100ms -a 100ms -r 10-10 --no-auto-intervals" ;;
	# TLB-blind regions: the probes must follow what they miss
	tlb-none) echo "-p hotcold -s 512M --thp never|-t none" ;;
	# a sparse target: a small hot set, a 16 GiB hole inside the span
	sparse) echo "-p smallhot -s 1G --hot-size 8M --thp never --gap 16G|" ;;
	*) return 1 ;;
	esac
}

ktap_print_header
ktap_require_tools daptrace daptrace-workload daptrace-score
# shellcheck disable=SC2086
ktap_set_plan "$(echo $CASES | wc -w)"
probes=$(cat /sys/kernel/daptrace/probe_pages)
bound=$(cat /sys/kernel/daptrace/probe_max_cpu_bp 2>/dev/null || echo none)
for c in $CASES; do
	if ! a=$(case_args "$c"); then
		ktap_test_fail "$c" "unknown case"
		continue
	fi
	truth=$TMP/$c.truth rec=$TMP/$c.csv
	# shellcheck disable=SC2086
	if ! WL_WAIT_S=120 workload_start "$truth" ${a%%|*} -d ${D}s; then
		ktap_test_fail "$c" "workload did not start"
		continue
	fi
	pid=$WL_PID
	# shellcheck disable=SC2086
	if ! daptrace record -q -p $pid -o "$rec" ${a#*|} > "$TMP/$c.log" 2>&1; then
		sed 's/^/# record: /' "$TMP/$c.log"
		wait $pid
		ktap_test_fail "$c" "daptrace record failed"
		continue
	fi
	wait $pid
	# the run's cost, kept after "off" (reset by the next "on")
	cost="probe_us=$(cat /sys/kernel/daptrace/probe_us) worker_cpu_us=$(cat /sys/kernel/daptrace/worker_cpu_us)"
	# no bounds here: the figures are the result (selftests bound them)
	if ! daptrace-score --truth "$truth" --record "$rec" > "$TMP/$c.score" 2>&1; then
		sed "s/^/# $c: /" "$TMP/$c.score"
		ktap_test_fail "$c" "daptrace-score failed"
		continue
	fi
	# accuracy_probes tp N fn N fp N tn N unobserved N pages N
	echo "# BENCH case=$c probe_pages=$probes probe_max_cpu_bp=$bound secs=$D $cost" \
		"$(grep -E '^(accuracy_|recall_est|recall_truth|regions_)' "$TMP/$c.score" |
		   grep -v '^accuracy_probes ' | tr ' ' '=' | tr '\n' ' ')" \
		"$(awk '$1 == "accuracy_probes" {
			printf "probes_accessed=%d probes_all=%d", $3 + $5, $13 }' "$TMP/$c.score")"
	ktap_test_pass "$c"
done
ktap_finished
