#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Accuracy against exact ground truth: daptrace-workload touches known hot,
# warm and cold ranges; `daptrace record` records it; daptrace-score checks,
# per aggregation window, hot-byte precision and recall (median >= 0.9), the
# working set size (median error within 10%), and that every window's region
# count stays within the default bounds [10, 1000].  Each scenario also scores
# the same record with every count replaced by a random one, which must FAIL:
# the thresholds are tight enough to reject a monitor that guesses.
#
# The workload sweeps its hot set continuously, so under TCG a hot page is
# touched many times per sampling interval; the TLB blind spot of selftests/vm/README.md
# applies, hence the default tlb_flush=mm is what is tested here (the
# benchmark compares the policies).

. "$(dirname "$0")/../lib/ktap.sh"
. "$(dirname "$0")/../lib/bounds.sh"
. "$(dirname "$0")/../lib/workload.sh"

TMP=${TMPDIR:-/tmp}/accuracy.$$
SCORE_ARGS="--min-precision 0.9 --min-recall 0.9 --max-wss-err 0.1 --regions 10-1000"

# scenario NAME WORKLOAD-ARGS...: run, record, score, control.
scenario() {
	name=$1
	shift
	truth=$TMP/$name.truth
	rec=$TMP/$name.csv
	# Recording starts once the mapping is populated and phase 0 began.
	if ! workload_record "$truth" "$rec" "$TMP/$name.log" "$@"; then
		ktap_test_fail "$name" "$WL_WHY"
		ktap_test_fail "$name: random counts rejected" "no record"
		return
	fi
	# shellcheck disable=SC2086
	if daptrace-score --truth "$truth" --record "$rec" $SCORE_ARGS \
		--aggr-us 100000 > "$TMP/$name.score" 2>&1; then
		sed 's/^/# /' "$TMP/$name.score"
		ktap_test_pass "$name"
	else
		sed 's/^/# /' "$TMP/$name.score"
		bound_fail "$name" "scores below the bounds"
	fi
	# Exit status 1 is "scored, below the bounds"; anything else is not a
	# rejection (2: bad input, >128: crashed).
	# shellcheck disable=SC2086
	daptrace-score --truth "$truth" --record "$rec" $SCORE_ARGS \
		--randomize=7 > "$TMP/$name.random" 2>&1
	st=$?
	sed 's/^/# random: /' "$TMP/$name.random"
	if [ $st -eq 1 ]; then
		ktap_test_pass "$name: random counts rejected"
	else
		ktap_test_fail "$name: random counts rejected" "scorer exit status $st, want 1"
	fi
}

ktap_print_header
ktap_require_tools daptrace daptrace-workload daptrace-score
mkdir -p "$TMP"
ktap_set_plan 14

# Sizes leave headroom under TCG emulation, where a guest touches a few
# million pages a second: every hot page must really be touched in every
# 5 ms sampling interval for "hot" to be the truth.
# Warm pages are touched every 20 ms: a 5 ms sample sees one with p ~ 0.25,
# so a warm region reads idle for a whole 20-sample window with p ~ 0.3%.
# That holds while the checks come every 5 ms.  On a busy host the guest is
# not scheduled for a while, the checks after such a gap each cover it (the
# module counts them late), and a warm page is seen with p up to 1: on a
# host running 4 busy loops beside the VM, checks came 1.9 times the
# sampling interval apart and warm memory read hot (precision 0.59-0.70).
# daptrace-score therefore calls warm "not hot" only in windows whose real
# check spacing makes that a correct sampler's answer (95 %), and counts the
# others (warm_undecided_windows); hot and cold are scored in every window.
# (At a 50 ms period that is 12%: a sampling limit, not a bug; the
# benchmark reports WSS at 50 ms.)
scenario hotcold-thp-never -p hotcold -s 256M --hot-size 16M --warm-size 16M \
	--warm-period 20ms -d 8s --thp never
# With huge pages the accessed bit covers 2 MiB: a "warm" 2 MiB area, its 512
# pages touched in turn, is touched all the time and IS hot at that
# granularity, so this scenario has hot and cold only.
scenario hotcold-thp-always -p hotcold -s 256M --hot-size 16M --warm-size 0 -d 8s \
	--thp always
scenario moving-window -p moving -s 512M --hot-size 32M -d 12s --phase 3s --thp never
# A hot set 1/256-1/512 of what is monitored (the static workload's layout
# puts ~550 MiB of text-to-heap gap into the first of the three regions: 1.5
# GiB in all) is found by random splits; the core's unit test
# finds_small_hot_set measures how reliably.  Simulated on this layout, the
# median recall of a 4 MiB set reaches 0.9 in 98.7 % of 10 s runs and 99.4 %
# of 20 s runs, so those scenarios run 20 s.
scenario smallhot-8M-in-1G -p smallhot -s 1G --hot-size 8M -d 10s --thp never
scenario smallhot-4M-in-1G -p smallhot -s 1G --hot-size 4M -d 20s --thp never
scenario smallhot-4M-in-1G-thp -p smallhot -s 1G --hot-size 4M -d 20s --thp always
scenario phases -p phases -s 512M --hot-size 32M -d 12s --phase 3s --thp never

rm -rf "$TMP"
ktap_finished
