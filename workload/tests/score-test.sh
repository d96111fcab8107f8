#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# daptrace-score's comparison of the online accuracy estimate with the
# truth, on a synthetic workload whose hot set moves every 2 s (as the
# moving-window workload's does) and a record whose regions find it: the
# pools (10 s) always hold a window across a phase change, which has no
# truth, and the comparison must still be made, over the windows that have
# one.  Before, no window was compared on such a workload.  As KTAP.
#
#   workload/tests/score-test.sh
#
# Builds build/workload/daptrace-score.  Exit status 0/1.
set -euo pipefail

TOP=$(cd "$(dirname "$0")/../.." && pwd)
SCORE=${BUILD:-$TOP/build}/workload/daptrace-score

# shellcheck source=selftests/lib/ktap.sh
. "$TOP/selftests/lib/ktap.sh"
ktap_print_header
ktap_set_plan 3
make -s -C "$TOP/workload" O="$(dirname "$SCORE")" "$SCORE" > /dev/null ||
	ktap_exit_fail_msg "daptrace-score does not build"

T=$(mktemp -d "${TMPDIR:-/tmp}/score-test.XXXXXX")
trap 'rm -rf "$T"' EXIT

# 30 s, hot 256 KiB moving by its size every 2 s in a 4 MiB mapping; the
# workload sweeps it every 10 ms.  Windows of 100 ms; each window's region
# rows: the hot set read accessed, the rest not; 8 probe pages a window, 2
# of them in the hot set (tp), the others in memory read not accessed (tn).
START=5000000000 MAP=$((0x10000000)) HOT=$((256 * 1024)) PHASE_NS=2000000000
awk -v start=$START -v map=$MAP -v hot=$HOT -v pns=$PHASE_NS '
BEGIN {
	printf "pid 7\nmap %x %x\n", map, map + 16 * hot
	for (p = 0; p < 15; p++) {
		printf "phase %d %.0f\nhot %d %x %x\n", p, start + p * pns, p,
			map + p * hot, map + (p + 1) * hot
		for (s = 1; s < pns / 10000000; s++)
			printf "sweeps %.0f %d\n", start + p * pns + s * 10000000, s
	}
	printf "end %.0f\n", start + 15 * pns
}' > "$T/truth"
awk -v map=$MAP -v hot=$HOT -v pns=$PHASE_NS '
BEGIN {
	printf "# daptrace-record v2\n#meta,sample_us,5000\n#meta,aggr_us,100000\n"
	printf "#meta,update_us,1000000\n#meta,monotonic_start_ns,5000000000\n#target,7,wl\n"
	printf "time_ns,seq,pid,start,end,nr_accesses,age,nr_samples,flags,label\n"
	for (w = 1; w <= 300; w++) {
		end = w * 100000000
		p = int((end - 100000000) / pns)
		h = map + p * hot
		printf "#probes,%d,8,2,0,0,6,0\n", w
		printf "#snap,%d,%.0f,%.0f,3,20,0,0,5000,100000\n", w, end - 100000000, end
		if (h > map)
			printf "%.0f,%d,7,%.0f,%.0f,0,0,20,0,wl\n", end, w, map, h
		else
			printf "%.0f,%d,7,%.0f,%.0f,0,0,20,0,wl\n", end, w, map + 16 * hot, map + 17 * hot
		printf "%.0f,%d,7,%.0f,%.0f,20,0,20,0,wl\n", end, w, h, h + hot
		printf "%.0f,%d,7,%.0f,%.0f,0,0,20,0,wl\n", end, w, h + hot, map + 16 * hot
	}
	printf "#eof\n"
}' > "$T/rec.csv"

if ! "$SCORE" --truth "$T/truth" --record "$T/rec.csv" --aggr-us 100000 > "$T/out" 2>&1; then
	ktap_print_msg "$(cat "$T/out")"
fi
val() { awk -v k="$1" '$1 == k { print $2 }' "$T/out"; }
n=$(val accuracy_windows)
ktap_print_msg "compared $n windows, $(val accuracy_windows_partial_truth) pools mostly without a truth," \
	"$(val accuracy_windows_without_truth) windows without one"
if [ -n "$n" ] && [ "$n" -ge 150 ]; then
	ktap_test_pass "pools across phase changes compared"
else
	ktap_test_fail "pools across phase changes compared" "accuracy_windows '$n', want >= 150 of 300"
fi
if [ "$(val recall_est_windows_within_0.05)" = 1.000 ]; then
	ktap_test_pass "estimate and truth agree where both are exact"
else
	ktap_test_fail "estimate and truth agree where both are exact" \
		"windows within 0.05: $(val recall_est_windows_within_0.05)"
fi
# The control: the same record with the estimate moved must fail.
if "$SCORE" --truth "$T/truth" --record "$T/rec.csv" --aggr-us 100000 \
	--bias-estimate -0.4 --min-recall-est-ok 0.9 > "$T/biased" 2>&1; then
	ktap_test_fail "an estimate 0.4 off is rejected" "$(grep -i fail "$T/biased" || true)"
else
	ktap_test_pass "an estimate 0.4 off is rejected"
fi
ktap_finished
