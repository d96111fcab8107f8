#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The upper-level scan (upper_scan; kernel/upper.c, issue 35): a hot set of
# 8 MiB at a random 2 MiB-aligned place in a sparse MAP_NORESERVE target of
# 16 GiB and of 1 TiB, of which 256 MiB more are populated (in 8 MiB pieces
# at random places) and never touched again, the rest never.  A region's
# one sample per interval almost never lands on the hot set; with the scan
# the touched 2 MiB chunks are cut out of their regions within a few
# windows.  At default settings the hot set must be found (regions read
# hot, at least half of their samples, cover 90 % of it: daptrace-score's
# detect_first_s) within 10 s in 16 GiB and within 1 s in 1 TiB (which is
# the issue's 30 s and more: a 32 s run of it found it in 0.32-0.41 s on
# every kernel, and asserted nothing the 4 s one does not); with
# upper_scan off, the control that fails without the feature, it must not
# be found within 1 s in 1 TiB, which 4 s of recording decide as well as
# 32 did.
#
# Without the scan the hot set is found too, only later: a region's rare
# hit is kept apart from never-accessed neighbours (the merge's history
# rule) and cut closer at each sighting.  6.12 under TCG, seed 24002: with
# the scan 0.49 s (16 GiB) and 0.34 s (1 TiB), without 1.7 s and 24 s.  The
# unit model (tests/unit: sparse_*hot_set_needs_touched_split) puts the
# 1 TiB case without the scan within 10 windows in 1 run of 100 (median 83
# windows), the 16 GiB case in 46 (median 11): so 16 GiB without the scan
# is measured and printed, not asserted (a SKIP that says so).  The seed of
# the places is printed; DAPTRACE_UPPER_SEED repeats a run.
#
# Last, the 16 GiB target is stopped: once armed, it must cost the scan
# nothing while it does not run (stopped(), below).

. "$(dirname "$0")/../lib/ktap.sh"
. "$(dirname "$0")/../lib/bounds.sh"
. "$(dirname "$0")/../lib/workload.sh"

TMP=${TMPDIR:-/tmp}/upper_scan.$$
DT=/sys/kernel/daptrace
SEED=${DAPTRACE_UPPER_SEED:-$(( $(date +%s) % 100000 ))}

# run NAME SWITCH SIZE DURATION SCORE-ARGS...: record, score against ARGS.
run() {
	name=$1 sw=$2 size=$3 dur=$4
	shift 4
	truth=$TMP/$name.truth rec=$TMP/$name.csv
	if ! echo "$sw" > $DT/upper_scan; then
		ktap_test_fail "$name" "cannot set upper_scan $sw"
		return
	fi
	if ! workload_record "$truth" "$rec" "$TMP/$name.log" -p sparse -s "$size" \
		--populate 256M --thp never -d "$dur" --seed "$SEED"; then
		ktap_test_fail "$name" "$WL_WHY"
		return
	fi
	ktap_print_msg "$name: upper_entries $(cat $DT/upper_entries)" \
		"upper_uncovered $(cat $DT/upper_uncovered)" \
		"upper_cuts $(cat $DT/upper_cuts) worker_cpu_us $(cat $DT/worker_cpu_us)" \
		"nr_regions $(cat $DT/nr_regions)"
	if daptrace-score --truth "$truth" --record "$rec" --min-windows 1 "$@" \
		> "$TMP/$name.score" 2>&1; then
		grep -E 'detect_first_s|recall_median|scored' "$TMP/$name.score" |
			sed "s/^/# $name: /"
		if [ $# -eq 0 ]; then
			ktap_test_skip "$name" "measured, not asserted (see the top)"
		else
			ktap_test_pass "$name"
		fi
	else
		sed "s/^/# $name: /" "$TMP/$name.score"
		# whether the workload swept its hot set meanwhile (its
		# truth's cumulative sweeps, every 10 ms), or the monitor
		# did not see it: a record without a single access says one
		grep -E '^(map|phase|hot) ' "$truth" | sed "s/^/# $name: truth: /"
		grep '^sweeps ' "$truth" | sed -n '1p;$p' | sed "s/^/# $name: truth: /"
		bound_fail "$name" "hot set not found in time, or found without the scan"
	fi
}

# wait_windows N: until N more snapshots were published (30 s at most).
wait_windows() {
	ww_to=$(( $(cat $DT/snapshot_seq) + $1 )) ww_i=0
	while [ "$(cat $DT/snapshot_seq)" -lt $ww_to ] && [ $ww_i -lt 300 ]; do
		sleep 0.1
		ww_i=$((ww_i + 1))
	done
}

# A stopped target is armed once and then left alone ("Sleep" in
# kernel/upper.c): while it does not run, no boundary reads its tables,
# upper_entries stays put.  Before, it was armed and collected every other
# boundary (a pud read per GiB, and the arm's TLB flush).  Running, the scan
# must have read entries: else this would test nothing.
stopped() {
	name="16 GiB, stopped: no scan after its arm"
	echo on > $DT/upper_scan
	if ! workload_start "$TMP/stopped.truth" -p sparse -s 16G --populate 256M \
		--thp never -d 60s --seed "$SEED"; then
		ktap_test_fail "$name" "workload did not start"
		return
	fi
	if ! echo "$WL_PID" > $DT/target || ! echo on > $DT/state; then
		kill "$WL_PID"
		wait "$WL_PID"
		ktap_test_fail "$name" "monitoring did not start"
		return
	fi
	wait_windows 10
	running=$(cat $DT/upper_entries)
	workload_stop "$WL_PID"
	# The window it stopped in; the map update after it (the first reads
	# its map again: it ran since the last read; an unchanged map keeps
	# its regions, a changed one is refit, which makes it non-quiet once:
	# a collect and an arm); then it rests.
	wait_windows $(( $(cat $DT/update_us) / $(cat $DT/aggr_us) + 3 ))
	before=$(cat $DT/upper_entries)
	wait_windows 20
	after=$(cat $DT/upper_entries)
	echo off > $DT/state
	echo "$WL_PID" > $DT/target_remove
	kill -CONT "$WL_PID"
	kill "$WL_PID"
	wait "$WL_PID" 2>/dev/null
	ktap_print_msg "$name: upper_entries running $running," \
		"stopped $before, 20 windows later $after"
	if [ "$running" -eq 0 ]; then
		ktap_test_fail "$name" "the scan read nothing while it ran"
	elif [ "$after" -ne "$before" ]; then
		ktap_test_fail "$name" "$((after - before)) entries read while stopped"
	else
		ktap_test_pass "$name"
	fi
}

ktap_print_header
ktap_require_tools daptrace daptrace-workload daptrace-score
[ -e $DT/upper_scan ] || ktap_skip_all "no upper_scan in this module"
mkdir -p "$TMP"
ktap_set_plan 5
ktap_print_msg "seed $SEED (DAPTRACE_UPPER_SEED)"
run "16 GiB: hot set found within 10 s" on 16G 12s --max-detect-first 10
run "16 GiB, upper_scan off" off 16G 12s
run "1 TiB: hot set found within 1 s" on 1T 4s --max-detect-first 1
run "1 TiB, upper_scan off: not found within 1 s" off 1T 4s --min-detect-first 1
stopped
echo on > $DT/upper_scan
rm -rf "$TMP"
ktap_finished
