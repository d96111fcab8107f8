#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The daptrace:daptrace_aggregated tracepoint (one event per published region,
# shaped like DAMON's damon:damon_aggregated):
#  - it exists in tracefs with DAMON's fields (and nr_unobserved);
#  - it is opt-in: enabled in tracefs while the module's tracepoint switch is
#    off, it produces nothing (its readers need not hold CAP_SYS_ADMIN, and
#    it shows the targets' layout);
#  - enabled, a monitored workload produces events with sane values (target
#    0, start < end, nr_accesses <= aggr/sample, nr_regions within the
#    limits), at least one per published snapshot;
#  - its cost: the worker's CPU time with the event disabled and enabled is
#    printed as a diagnostic (not asserted: TCG timing is too noisy).

. "$(dirname "$0")/../lib/ktap.sh"
. "$(dirname "$0")/../lib/workload.sh"

D=/sys/kernel/daptrace
TMP=${TMPDIR:-/tmp}/tracepoint.$$
SECS=4

T=/sys/kernel/tracing
[ -d $T/events ] || T=/sys/kernel/debug/tracing
EV=$T/events/daptrace/daptrace_aggregated

ktap_print_header
ktap_set_plan 3
mkdir -p "$TMP"

if [ ! -d "$EV" ]; then
	ktap_test_fail "event in tracefs" "$EV missing"
	ktap_test_skip "opt-in" "no event"
	ktap_test_skip "events sane" "no event"
	ktap_finished
fi
fmt=$(cat "$EV/format")
ok=1
for f in "unsigned long target_id" "unsigned int nr_regions" "unsigned long start" \
	 "unsigned long end" "unsigned int nr_accesses" "unsigned int age" \
	 "unsigned int nr_unobserved"; do
	echo "$fmt" | grep -q "field:$f;" || { ok=0; ktap_print_msg "no field '$f'"; }
done
if [ $ok = 1 ]; then
	ktap_test_pass "event in tracefs"
else
	ktap_test_fail "event in tracefs" "fields differ from damon_aggregated"
fi

if ! workload_start "$TMP/truth" -p hotcold -s 64M -d 60s; then
	ktap_test_fail "events sane" "workload did not start"
	ktap_finished
fi
echo 5000 > $D/sample_us
echo 100000 > $D/aggr_us
echo 10 > $D/min_nr_regions
echo 1000 > $D/max_nr_regions
echo "$WL_PID" > $D/target

# run_for SECS: monitor that long; prints "worker_cpu_us nr_snapshots"
run_for() {
	echo on > $D/state
	sleep "$1"
	echo off > $D/state
	echo "$(cat $D/worker_cpu_us) $(cat $D/nr_snapshots)"
}

echo 0 > "$EV/enable"
off=$(run_for $SECS)
: > $T/trace
echo 1 > "$EV/enable"
gated=$(run_for 2)
nr_gated=$(grep -c 'daptrace_aggregated:' $T/trace)
set -- $gated
if [ "$nr_gated" = 0 ] && [ "$2" -gt 0 ]; then
	ktap_test_pass "opt-in"
else
	ktap_test_fail "opt-in" "$nr_gated events over $2 snapshots with tracepoint=off"
fi
: > $T/trace
echo on > $D/tracepoint
on=$(run_for $SECS)
echo off > $D/tracepoint
echo 0 > "$EV/enable"
cp $T/trace "$TMP/trace"
: > $T/trace
kill "$WL_PID" 2>/dev/null
wait "$WL_PID" 2>/dev/null

# "... daptrace_aggregated: target_id=0 nr_regions=12 4096-8192: 3 1"
awk -v max_acc=20 -v min_r=1 -v max_r=1000 '
/daptrace_aggregated:/ {
	n++
	for (i = 1; i <= NF; i++) {
		if ($i ~ /^target_id=/) { split($i, a, "="); tid = a[2] }
		if ($i ~ /^nr_regions=/) { split($i, a, "="); nr = a[2] }
		if ($i ~ /^[0-9]+-[0-9]+:$/) {
			sub(":", "", $i); split($i, a, "-"); s = a[1]; e = a[2]
			acc = $(i + 1); age = $(i + 2)
		}
	}
	if (tid != 0) { bad = "target_id " tid; exit }
	if (s + 0 >= e + 0) { bad = "empty range " s "-" e; exit }
	if (acc + 0 > max_acc) { bad = "nr_accesses " acc; exit }
	if (nr + 0 < min_r || nr + 0 > max_r) { bad = "nr_regions " nr; exit }
	if (acc + 0 > 0) hot++
}
END { printf "%d %d %s\n", n, hot, bad ? bad : "-" }' "$TMP/trace" > "$TMP/check"
read -r nr_ev nr_hot bad < "$TMP/check"
set -- $on
snaps_on=$2
ktap_print_msg "enabled: $nr_ev events over $snaps_on snapshots, $nr_hot with accesses"
if [ "$bad" != "-" ]; then
	ktap_test_fail "events sane" "bad event: $bad"
elif [ "$nr_ev" -lt "$snaps_on" ] || [ "$nr_hot" -eq 0 ]; then
	ktap_test_fail "events sane" "$nr_ev events, $nr_hot hot, $snaps_on snapshots"
else
	ktap_test_pass "events sane"
fi

set -- $off
ktap_print_msg "worker CPU over ${SECS}s: disabled $1 us ($2 snapshots), enabled ${on% *} us ($snaps_on snapshots)"
echo "$WL_PID" > $D/target_remove
rm -rf "$TMP"
ktap_finished
