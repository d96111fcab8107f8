#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The recall goal (recall_goal_bp): a goal on the answer's quality rather
# than on a knob.  The low-recall case of accuracy_estimate (hot and cold
# 2 MiB blocks alternating, one check per window) starts with a region
# budget of 10, where about half of the accessed memory reads as not
# accessed; with a goal of 90 % the module must raise the budget by itself
# and the estimated recall must rise with it: over the last 8 s of a 40 s
# run, the budget above 10 and the estimated recall at least 0.15 above
# that of the first 4 s (or at the goal).  Without the goal (0, the
# default) the budget stays at 10 and the recall where it was: this test
# then fails.

. "$(dirname "$0")/../lib/ktap.sh"
. "$(dirname "$0")/../lib/bounds.sh"
. "$(dirname "$0")/../lib/workload.sh"

TMP=${TMPDIR:-/tmp}/recall_goal.$$
SYS=/sys/kernel/daptrace
GOAL=${RECALL_GOAL_BP:-9000}

ktap_print_header
ktap_require_tools daptrace daptrace-workload
[ -f $SYS/recall_goal_bp ] || ktap_exit_fail_msg "no recall_goal_bp attribute"
mkdir -p "$TMP"
ktap_set_plan 2

echo "$GOAL" > $SYS/recall_goal_bp || ktap_exit_fail_msg "cannot set recall_goal_bp"
if ! workload_start "$TMP/truth" -p blocks -s 128M -d 40s; then
	ktap_test_fail "budget raised" "workload did not start"
	ktap_test_fail "recall recovered" "workload did not start"
	echo 0 > $SYS/recall_goal_bp
	ktap_finished
fi
pid=$WL_PID
daptrace record -q -p $pid -o "$TMP/rec.csv" -s 100ms -a 100ms -r 10-10 \
	--no-auto-intervals > "$TMP/log" 2>&1
st=$?
wait $pid
echo 0 > $SYS/recall_goal_bp
[ $st -eq 0 ] || sed 's/^/# record: /' "$TMP/log"

# Per 4 s bucket: the largest region count and the pooled recall.
awk -F, '
	$1 == "#probes" { tp[$2] = $4; fn[$2] = $5 }
	$1 == "#snap" { t = $4 / 1e9; if (!(t0 > 0)) t0 = t; b = int((t - t0) / 4)
		if ($5 > reg[b]) reg[b] = $5; seq = $2
		if (seq in tp) { TP[b] += tp[seq]; FN[b] += fn[seq] }; if (b > last) last = b }
	END {
		for (b = 0; b <= last; b++)
			printf "bucket %d regions_max %d recall %.3f accessed_probes %d\n", b,
				reg[b], TP[b] + FN[b] ? TP[b] / (TP[b] + FN[b]) : -1, TP[b] + FN[b]
	}' "$TMP/rec.csv" > "$TMP/buckets"
sed 's/^/# /' "$TMP/buckets"
nb=$(wc -l < "$TMP/buckets")
first=$(awk '$2 == 0 { print $6 }' "$TMP/buckets")
# the last two whole buckets (8 s), the partial one left out
lastreg=$(awk -v n="$nb" '$2 >= n - 3 && $2 < n - 1 { if ($4 > m) m = $4 } END { print m + 0 }' "$TMP/buckets")
lastrec=$(awk -v n="$nb" '$2 >= n - 3 && $2 < n - 1 { tp += $6 * $8; a += $8 }
	END { if (a) printf "%.3f", tp / a; else print -1 }' "$TMP/buckets")
echo "# first 4 s: recall $first; last 8 s: regions max $lastreg, recall $lastrec"

if [ "$nb" -ge 5 ] && [ "$lastreg" -gt 10 ]; then
	ktap_test_pass "budget raised"
else
	ktap_test_fail "budget raised" "regions at most $lastreg in the last 8 s (budget 10)"
fi
if awk -v f="$first" -v l="$lastrec" -v g="$GOAL" \
	'BEGIN { exit !(f >= 0 && l >= 0 && (l >= f + 0.15 || l >= g / 10000)) }'; then
	ktap_test_pass "recall recovered"
else
	bound_fail "recall recovered" "estimated recall $first at first, $lastrec at the end"
fi
rm -rf "$TMP"
ktap_finished
