# SPDX-License-Identifier: GPL-2.0
#
# Accuracy against exact ground truth (functional/accuracy, the page walk's;
# functional/adaptation, the regions'): daptrace-workload touches known hot,
# warm and cold ranges; `daptrace record` records it; daptrace-score checks,
# per aggregation window, hot-byte precision and recall (median >= 0.9), the
# working set size (median error within 10%), and that every window's region
# count stays within the default bounds [10, 1000].  Each scenario also scores
# the same record with every count replaced by a random one, which must FAIL:
# the thresholds are tight enough to reject a monitor that guesses.
#
# The workload sweeps its hot set continuously, so under TCG a hot page is
# touched many times per sampling interval; the TLB blind spot of
# selftests/vm/README.md applies, hence the default tlb_flush=mm is what is
# tested (the benchmark compares the policies).
#
# Source after ktap.sh, bounds.sh and workload.sh; set TMP (a directory
# that exists) first.  Two results per scenario.

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
