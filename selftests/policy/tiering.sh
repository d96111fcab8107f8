#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Two-tier placement by `daptrace policy` on the guest's two NUMA nodes
# (node 0 with the CPUs: fast; node 1 memory-only: slow), judged by where
# the workload's pages are (move_pages(2) status queries by the workload
# itself), not by the tool's counters.  All memory starts on node 1; hot set
# A is used for one phase, then hot set B; the rest is never used.
# Goals: >= 95 % of the hot set on node 0 within 10 s of each phase start,
# the cold memory left on node 1, the idle set A demoted back to node 1,
# and every page intact.

. "$(dirname "$0")/../lib/ktap.sh"
. "$(dirname "$0")/../lib/bounds.sh"
. "$(dirname "$0")/../lib/setup.sh"

TMP=${TMPDIR:-/tmp}/policy-tiering.$$
PHASE=14

# field LINE-PREFIX KEY: KEY=value from the workload's line starting with PREFIX
field() {
	sed -n "s/^$1 .*$2=\([^ ]*\).*/\1/p" "$TMP/out" | tail -n 1
}

# ge VALUE MIN: float comparison
ge() {
	awk -v v="$1" -v m="$2" 'BEGIN { exit !(v != "" && v + 0 >= m + 0) }'
}

ktap_print_header
ktap_require_tools daptrace daptrace-policy-workload
[ -e /sys/devices/system/node/node1/meminfo ] ||
	ktap_skip_all "one NUMA node only (run.sh --numa 2 gives two)"
ktap_set_plan 7
mkdir -p "$TMP"
# Automatic NUMA balancing is a tiering policy of its own (it promotes on
# hinting faults, and its PROT_NONE pages read as not present to
# move_pages): off for the run, as for any userspace tiering.
numab=$(cat /proc/sys/kernel/numa_balancing 2>/dev/null)
[ -z "$numab" ] || echo 0 > /proc/sys/kernel/numa_balancing

# The workload places its memory first, then the policy attaches (-p).
daptrace-policy-workload tiering --hot 16M --cold 64M --phase $PHASE \
	--fast-node 0 --slow-node 1 --pidfile "$TMP/pid" --go "$TMP/go" > "$TMP/out" 2>&1 &
wl=$!
i=0
while [ ! -s "$TMP/pid" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
pid=$(cat "$TMP/pid" 2>/dev/null)
[ -n "$pid" ] || ktap_exit_fail_msg "the workload did not start: $(cat "$TMP/out")"
daptrace policy --progress 5s --stats-csv "$TMP/stats.csv" -o "$TMP/rec.csv" -p "$pid" \
	-S "migrate_hot 0 freq=80-100" -S "migrate_cold 1 idle=4s" > "$TMP/policy.out" 2>&1 &
policy=$!
sleep 1
touch "$TMP/go"
wait $policy
st=$?
wait $wl
wst=$?
cat "$TMP/policy.out" >> "$TMP/out"
sed 's/^/# /' "$TMP/out"
sed 's/^/# /' "$TMP/stats.csv" 2>/dev/null

if [ $st -eq 0 ] && [ $wst -eq 0 ] && pages_intact "$TMP/out"; then
	ktap_test_pass "policy and workload exit 0, every page intact"
else
	ktap_test_fail "policy and workload exit 0, every page intact" \
		"policy exit status $st, workload $wst"
fi
start_a=$(field start hotA_fast) start_c=$(field start cold_slow)
if [ "$start_a" = 0.000 ] && [ "$start_c" = 1.000 ]; then
	ktap_test_pass "memory starts on the slow node"
else
	ktap_test_fail "memory starts on the slow node" "hotA on fast $start_a, cold on slow $start_c"
fi
for p in 1 2; do
	secs=$(sed -n "s/^converge phase=$p secs=//p" "$TMP/out")
	if ge "$secs" 0 && ! ge "$secs" 10.001; then
		ktap_test_pass "phase $p: >= 95% of the hot set on node 0 after $secs s"
	else
		bound_fail "phase $p: >= 95% of the hot set on node 0 within 10 s" "took: $secs"
	fi
done
cold=$(field end cold_slow)
if ge "$cold" 0.95; then
	ktap_test_pass "cold memory stays on node 1 ($cold)"
else
	ktap_test_fail "cold memory stays on node 1" "fraction on node 1 at the end: $cold"
fi
a_slow=$(field end hotA_slow)
if ge "$a_slow" 0.95; then
	ktap_test_pass "set A demoted to node 1 once idle ($a_slow)"
else
	bound_fail "set A demoted to node 1 once idle" "fraction on node 1 at the end: $a_slow"
fi
# The record written alongside (--record) holds every snapshot the policy saw.
nsnap=$(grep -c '^#snap,' "$TMP/rec.csv" 2>/dev/null)
said=$(sed -n 's/.* s, \([0-9]*\) snapshots (\([0-9]*\) missed).*/\1 \2/p' "$TMP/out")
if [ "$(tail -n 1 "$TMP/rec.csv" 2>/dev/null)" = "#eof" ] && [ "$nsnap" -ge 10 ] &&
   [ "$nsnap ${said#* }" = "$said" ] &&
   daptrace report wss "$TMP/rec.csv" > /dev/null 2> "$TMP/report.err"; then
	ktap_test_pass "--record: complete, $nsnap snapshots as the policy saw (missed: ${said#* })"
else
	ktap_test_fail "--record: complete, every snapshot the policy saw" \
		"#snap rows $nsnap, policy said '$said', $(tail -n 1 "$TMP/rec.csv") $(cat "$TMP/report.err")"
fi
rm -rf "$TMP"
[ -z "$numab" ] || echo "$numab" > /proc/sys/kernel/numa_balancing
ktap_finished
