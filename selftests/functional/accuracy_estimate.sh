#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The online accuracy estimate against exact ground truth.  The module's
# accuracy probes (probe_pages, at its default of 64 per window) give a few
# pages per window page-level truth and compare it with their regions'
# verdicts; daptrace record keeps the counts (#probes rows) and
# daptrace-score pools them as the CLI does (accuracy.h: windows enough for
# 600 accessed probe pages, within 10 s; compared once a pool is whole) and
# compares the estimated recall of accessed memory with the true recall
# over the same windows, from the truth daptrace-workload reports: the
# share of its truly accessed bytes that lie in regions read as accessed.
# The estimate must be within 0.05 of the truth in >= 90 % of the windows
# compared, both where the truth is high and where it is low:
#
#  - high: hot half of a mapping, the module's defaults.
#  - low: hot and cold 2 MiB blocks alternating, coarse regions (exactly
#    10) and one check per window (-s 100ms -a 100ms, "too long
#    intervals"): a region's one check finds its page hot half the time,
#    so about half of the accessed memory is read as not accessed.  The
#    test also requires that truth to be low (mean <= 0.75), so it does
#    measure the low case.
#  - tlb_flush=none on the hot half: the probes flush whatever the policy;
#    how blind the regions are depends on the (emulated) TLB, and the
#    estimate must follow it either way.
#  - sparse: the high case with a 4 GiB hole after the mapping, inside
#    the span the regions cover (a page is mapped beyond it), so that
#    nearly all of that span is unmapped.
#
# The probes are drawn from mapped memory (daptrace_probes_select()): in
# the high and sparse cases, where half the mapped memory is hot, at least
# 0.3 of the probes must be accessed pages.  Drawn from the regions' whole
# span they are a few percent in the sparse case (and 5-15 % in the high
# case, with the gaps ASLR leaves), and the estimate then rests on so few
# accessed pages that its pools stay short of their 600 even at 10 s.
#
# Every case runs at the module's defaults (probe_pages 64, the cost bound
# probe_max_cpu_bp 500).  In the low case (10 regions, one check a window)
# the cost bound alone leaves 2 probe pages a window, about 100 accessed
# ones in a 10 s pool, whose interval (+-0.1) is wider than the 0.05 asked
# here: the estimate was within it in 37-74 % of windows.  The precision
# floor (probe_max_cpu_bp's documentation) gives it the ~12 a window that
# keep the pool within +-0.04, whatever they cost.  A pool then spans the
# whole 10 s, so the windows sharing it are off together or not at all:
# the low case runs 120 s, ~1100 windows compared (eleven pools' worth),
# so that the share within 0.05 is that of the estimate, not of one pool's
# luck.  At 60 s (five pools) one pool off by 0.07 (its windows 470-495 on
# 7.3, the whole run's estimate 0.477 against a truth of 0.491) was a fifth
# of the windows compared and failed the case; now one such pool is under a
# tenth of them, as the bound allows.
#
# Controls that must FAIL, so that the bound can reject a wrong estimate:
# the low case's record scored with the estimate moved up by 0.4 (it then
# says ~0.9 where the truth says ~0.5), and the high case's moved down by
# 0.4.

. "$(dirname "$0")/../lib/ktap.sh"
. "$(dirname "$0")/../lib/bounds.sh"
. "$(dirname "$0")/../lib/workload.sh"

TMP=${TMPDIR:-/tmp}/accuracy_estimate.$$
SCORE_ARGS="--max-recall-est-err 0.05 --min-recall-est-ok 0.9 --min-accuracy-windows 40"

# accessed_share NAME MIN: a test that at least MIN of NAME's probes (those
# observed) were accessed pages.
accessed_share() {
	name=$1 min=$2
	share=$(awk '$1 == "accuracy_probes" {
		n = $3 + $5 + $7 + $9; if (n) printf "%.3f", ($3 + $5) / n }' "$TMP/$name.score")
	echo "# $name: accessed share of the probes: ${share:-none}"
	if awk -v s="$share" -v m="$min" 'BEGIN { exit !(s != "" && s >= m) }'; then
		ktap_test_pass "$name: probes drawn from mapped memory"
	else
		ktap_test_fail "$name: probes drawn from mapped memory" \
			"accessed share ${share:-none} < $min"
	fi
}

# scenario NAME "WORKLOAD-ARGS" "RECORD-ARGS" [MAX-TRUTH-MEAN] [MIN-SHARE]:
# run, record, score (scenario_run), the nr_probe_pages the cost bound and
# the precision floor left at the end; with MIN-SHARE also accessed_share.
scenario() {
	name=$1 wl=$2 rec_args=$3 max_truth=$4 min_share=$5
	truth=$TMP/$name.truth rec=$TMP/$name.csv
	scenario_run
	st=$?
	echo "# $name: nr_probe_pages $(cat /sys/kernel/daptrace/nr_probe_pages)," \
		"probe_us $(cat /sys/kernel/daptrace/probe_us)" \
		"of worker_cpu_us $(cat /sys/kernel/daptrace/worker_cpu_us)"
	return $st
}

scenario_run() {
	# shellcheck disable=SC2086
	if ! workload_start "$truth" $wl; then
		ktap_test_fail "$name" "workload did not start"
		[ -z "$min_share" ] || ktap_test_fail "$name: probes drawn from mapped memory" "no run"
		return 1
	fi
	pid=$WL_PID
	# shellcheck disable=SC2086
	if ! daptrace record -q -p $pid -o "$rec" $rec_args > "$TMP/$name.log" 2>&1; then
		sed 's/^/# record: /' "$TMP/$name.log"
		wait $pid
		ktap_test_fail "$name" "daptrace record failed"
		[ -z "$min_share" ] || ktap_test_fail "$name: probes drawn from mapped memory" "no run"
		return 1
	fi
	wait $pid
	if ! grep -q '^#probes,' "$rec"; then
		ktap_test_fail "$name" "the record has no #probes rows"
		[ -z "$min_share" ] || ktap_test_fail "$name: probes drawn from mapped memory" "no run"
		return 1
	fi
	# shellcheck disable=SC2086
	daptrace-score --truth "$truth" --record "$rec" $SCORE_ARGS \
		--dump-accuracy "$TMP/$name.dump" > "$TMP/$name.score" 2>&1
	st=$?
	grep -E '^(accuracy_|recall_est|recall_truth|hot_seen_m|# FAIL)' \
		"$TMP/$name.score" | sed "s/^/# $name: /"
	[ -z "$min_share" ] || accessed_share "$name" "$min_share"
	if [ $st -ne 0 ]; then
		[ $st -eq 1 ] || sed "s/^/# $name: /" "$TMP/$name.score"
		# the windows furthest off, to see why
		echo "# $name: worst windows: $(head -1 "$TMP/$name.dump")"
		grep -v '^#' "$TMP/$name.dump" |
			awk '{ d = $2 - $3; if (d < 0) d = -d; print d, $0 }' |
			sort -rn | head -8 | sed "s/^/# $name:   /"
		bound_fail "$name" "estimate off the truth (scorer exit status $st)"
		return 0
	fi
	if [ -n "$max_truth" ]; then
		mean=$(awk '$1 == "recall_truth_mean" { print $2 }' "$TMP/$name.score")
		if ! awk -v m="$mean" -v b="$max_truth" 'BEGIN { exit !(m != "" && m <= b) }'; then
			ktap_test_fail "$name" "true recall $mean is not low (> $max_truth): the case is not tested"
			return 0
		fi
	fi
	ktap_test_pass "$name"
}

# control NAME BIAS: the record of NAME scored with the estimate moved by
# BIAS must be rejected (exit status 1: scored, off the bound).
control() {
	name=$1 bias=$2
	if [ ! -s "$TMP/$name.csv" ]; then
		ktap_test_fail "$name: estimate $bias rejected" "no record"
		return
	fi
	# shellcheck disable=SC2086
	daptrace-score --truth "$TMP/$name.truth" --record "$TMP/$name.csv" $SCORE_ARGS \
		--bias-estimate "$bias" > "$TMP/$name.bias" 2>&1
	st=$?
	grep -E '^(recall_est_mean|recall_truth_mean|recall_est_windows)' "$TMP/$name.bias" |
		sed "s/^/# $name biased: /"
	if [ $st -eq 1 ]; then
		ktap_test_pass "$name: estimate $bias rejected"
	else
		ktap_test_fail "$name: estimate $bias rejected" "scorer exit status $st, want 1"
	fi
}

ktap_print_header
ktap_require_tools daptrace daptrace-workload daptrace-score
[ -f /sys/kernel/daptrace/probe_pages ] || ktap_exit_fail_msg "no probe_pages attribute"
[ "$(cat /sys/kernel/daptrace/probe_pages)" = 64 ] ||
	ktap_exit_fail_msg "probe_pages is $(cat /sys/kernel/daptrace/probe_pages), not the default 64"
[ "$(cat /sys/kernel/daptrace/probe_max_cpu_bp)" = 500 ] ||
	ktap_exit_fail_msg "probe_max_cpu_bp is $(cat /sys/kernel/daptrace/probe_max_cpu_bp), not the default 500"
mkdir -p "$TMP"
ktap_set_plan 8

# 24 s: the estimate is compared once its pool is whole (600 accessed probe
# pages or 10 s: daptrace-score); in the sparse case most draws land in the
# hole, windows hold ~13 probes, and the pools take the full 10 s.
scenario high "-p hotcold -s 128M --hot-size 64M --warm-size 0 -d 24s" "" "" 0.3
scenario low "-p blocks -s 128M -d 120s" "-s 100ms -a 100ms -r 10-10 --no-auto-intervals" 0.75
scenario tlb_none "-p hotcold -s 128M --hot-size 64M --warm-size 0 -d 24s" "-t none"
scenario sparse "-p hotcold -s 128M --hot-size 64M --warm-size 0 --gap 4G -d 24s" "" "" 0.3
control low +0.4
control high -0.4
rm -rf "$TMP"
ktap_finished
