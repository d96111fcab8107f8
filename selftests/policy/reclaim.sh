#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Proactive reclaim by `daptrace policy` onto zram swap, judged by what
# happened to the target (its VmSwap in /proc/PID/status, the system's
# pswpin), not by the tool's counters.  The workload has a hot set (read
# all the time), a warm set (read every second) and a cold set (never read
# until the end) and checks every word of every page at the end.
# Goals: >= 90 % of the cold bytes swapped out within 30 s of the start,
# <= 1 % of the hot pages ever found swapped out by the workload (mincore
# before each use; the system's swap-ins are printed too), no data lost.

. "$(dirname "$0")/../lib/ktap.sh"
. "$(dirname "$0")/../lib/bounds.sh"
. "$(dirname "$0")/../lib/setup.sh"

TMP=${TMPDIR:-/tmp}/policy-reclaim.$$
HOT_MB=32
WARM_MB=32
COLD_MB=128
DURATION=32
SCHEME="pageout idle=5s quota=64M/1s"

ktap_print_header
ktap_require_tools daptrace daptrace-policy-workload
zram_swap_on || ktap_skip_all "no zram swap (zram.ko not in the initramfs or failed to load)"
ktap_set_plan 5
mkdir -p "$TMP"
pswpin0=$(awk '$1 == "pswpin" { print $2 }' /proc/vmstat)
# How the kernel swapped (whole THPs, split ones, split failures): the
# reasons a range advised with MADV_PAGEOUT can stay resident.
VMSTAT_KEYS="pswpout thp_swpout thp_swpout_fallback thp_split_page thp_split_page_failed"
vm0=$(awk -v keys="$VMSTAT_KEYS" 'BEGIN { n = split(keys, k); for (i = 1; i <= n; i++) want[k[i]] = 1 }
	$1 in want { printf "%s=%s ", $1, $2 }' /proc/vmstat)

daptrace policy --progress 5s --stats-json "$TMP/stats.json" -S "$SCHEME" -- \
	daptrace-policy-workload reclaim --hot ${HOT_MB}M --warm ${WARM_MB}M \
	--cold ${COLD_MB}M --duration $DURATION --pidfile "$TMP/pid" > "$TMP/out" 2>&1 &
policy=$!

# Poll the target's VmSwap once a second from the moment its memory is ready.
i=0
while [ ! -s "$TMP/pid" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
pid=$(cat "$TMP/pid" 2>/dev/null)
want_kb=$((COLD_MB * 1024 * 9 / 10))
reached=
max_swap=0
series=
t=0
while [ -n "$pid" ] && [ -e "/proc/$pid/status" ] && [ $t -le 30 ]; do
	swap=$(proc_kb "/proc/$pid/status" VmSwap)
	[ -n "$swap" ] || break
	[ "$swap" -le "$max_swap" ] || max_swap=$swap
	series="${series:+$series }$((swap / 1024))"
	if [ -z "$reached" ] && [ "$swap" -ge "$want_kb" ]; then
		reached=$t
	fi
	sleep 1
	t=$((t + 1))
done
wait $policy
st=$?
sed 's/^/# /' "$TMP/out"
ktap_print_msg "vmstat during the run: $(awk -v before="$vm0" 'BEGIN {
	n = split(before, b, " "); for (i = 1; i <= n; i++) { split(b[i], kv, "="); v0[kv[1]] = kv[2] } }
	$1 in v0 { printf "%s=%d ", $1, $2 - v0[$1] }' /proc/vmstat)"
ktap_print_msg "target VmSwap (MiB), once a second: $series"

if [ $st -eq 0 ]; then
	ktap_test_pass "policy and workload exit 0"
else
	ktap_test_fail "policy and workload exit 0" "exit status $st"
fi
if pages_intact "$TMP/out"; then
	ktap_test_pass "every page of the workload intact"
else
	ktap_test_fail "every page of the workload intact" "see the verify lines above"
fi
if [ -n "$reached" ]; then
	ktap_test_pass "cold memory reclaimed: VmSwap >= 90% of ${COLD_MB} MiB after $reached s"
else
	bound_fail "cold memory reclaimed within 30 s" \
		"VmSwap peaked at $max_swap kB, want >= $want_kb kB"
fi
# Hot pages the workload found swapped out (mincore) right before use.
evicted=$(sed -n 's/^evicted hot=\([0-9]*\) .*/\1/p' "$TMP/out")
pswpin1=$(sed -n 's/^pswpin //p' "$TMP/out")
[ -z "$pswpin1" ] || ktap_print_msg "swap-ins during the run (all pages): $(((pswpin1 - pswpin0) * 4)) kB"
if [ -n "$evicted" ]; then
	limit=$((HOT_MB * 256 / 100))
	if [ "$evicted" -le $limit ]; then
		ktap_test_pass "hot pages swapped out: $evicted (<= 1% of the hot set: $limit)"
	else
		ktap_test_fail "hot pages swapped out <= 1% of the hot set" \
			"$evicted pages found swapped out, limit $limit"
	fi
else
	ktap_test_fail "hot pages swapped out <= 1% of the hot set" "the workload did not report"
fi
applied=$(sed -n 's/.*"sz_applied":\([0-9]*\).*/\1/p;s/.*"sz_applied": *\([0-9]*\).*/\1/p' \
	"$TMP/stats.json" 2>/dev/null | head -n 1)
if [ -n "$applied" ] && [ "$applied" -gt 0 ]; then
	ktap_test_pass "stats JSON written: $applied bytes paged out"
else
	ktap_test_fail "stats JSON written" "$(head -c 300 "$TMP/stats.json" 2>&1)"
fi
rm -rf "$TMP"
zram_swap_off || ktap_print_msg "swapoff /dev/zram0 failed"
ktap_finished
