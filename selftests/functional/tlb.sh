#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The TLB blind spot (selftests/vm/README.md): a small hot set (4 MiB, 1024 pages) in a
# 1 GiB cold mapping, hammered continuously, fits in the TLB.  Without a
# flush a cached translation never sets the accessed bit again, so the hot
# set can read as never accessed (DAMON's behaviour); with tlb_flush=round
# or mm it must be seen: >= 90% of the hot bytes in regions read as accessed
# (recall, which also needs the regions to converge, is printed).
# The "none" run is reported, not bounded: how blind it is depends on the
# (emulated) TLB.  (The benchmark adds the scattered-pages case.)

. "$(dirname "$0")/../lib/ktap.sh"
. "$(dirname "$0")/../lib/bounds.sh"
. "$(dirname "$0")/../lib/workload.sh"

TMP=${TMPDIR:-/tmp}/tlb.$$

# policy POLICY SCORE-ARGS...
policy() {
	p=$1
	shift
	truth=$TMP/$p.truth rec=$TMP/$p.csv
	if ! DT_RECORD_ARGS="--tlb-flush $p" workload_record "$truth" "$rec" "$TMP/$p.log" \
		-p smallhot -s 1G --hot-size 4M --thp never -d 10s; then
		ktap_test_fail "tlb_flush=$p" "$WL_WHY"
		return
	fi
	if daptrace-score --truth "$truth" --record "$rec" "$@" > "$TMP/$p.score" 2>&1; then
		grep -E 'hot_seen_median|recall_median|scored' "$TMP/$p.score" | sed "s/^/# $p: /"
		ktap_test_pass "tlb_flush=$p"
	else
		sed "s/^/# $p: /" "$TMP/$p.score"
		bound_fail "tlb_flush=$p" "hot pages read as not accessed"
	fi
}

ktap_print_header
ktap_require_tools daptrace daptrace-workload daptrace-score
mkdir -p "$TMP"
ktap_set_plan 3
policy none
policy round --min-hot-seen 0.9
policy mm --min-hot-seen 0.9
rm -rf "$TMP"
ktap_finished
