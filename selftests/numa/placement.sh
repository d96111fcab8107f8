#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# NUMA placement end to end: helpers/numa_wl binds 32 MiB to node 0 and
# 32 MiB to node 1, reads both, and after 3 s moves the second range to node
# 0.  `daptrace report nodes` must match the truth the workload read from
# /proc/self/numa_maps (bytes per node within 5 %; for a node that holds
# almost nothing, within 5 % of the total), and the migration must show in
# the first whole window after it finished (within two windows of it).
# Only whole windows of a phase count: the one the workload exits in
# averages over time in which the memory no longer existed.

. "$(dirname "$0")/../lib/ktap.sh"

TMP=${TMPDIR:-/tmp}/numa.$$
AGGR_S=0.1

ktap_print_header
[ -d /sys/devices/system/node/node1 ] ||
	ktap_skip_all "needs two NUMA nodes (run.sh --numa 2, the default)"
command -v daptrace > /dev/null ||
	ktap_skip_all "no static daptrace CLI in the guest"
ktap_set_plan 7
mkdir -p "$TMP"

daptrace record -q --phys-addr -o "$TMP/n.csv" -s 2ms -a 100ms -- \
	"$(dirname "$0")/helpers/numa_wl" 32 3 6 "$TMP/truth" 2> "$TMP/rec.err"
rc=$?
if [ $rc -ne 0 ] || ! grep -q '^end ' "$TMP/truth" 2>/dev/null; then
	ktap_test_fail "record the workload" "rc $rc: $(cat "$TMP/rec.err" "$TMP/truth" 2>/dev/null | tr '\n' ' ')"
else
	ktap_test_pass "record the workload"
fi
sed 's/^/# truth: /' "$TMP/truth"

# all of B moved (the truth itself is right)
moved=$(awk '$1 == "migrate" { print $4 }' "$TMP/truth")
if [ "$moved" = 8192 ]; then
	ktap_test_pass "workload moved all 8192 pages of B to node 0"
else
	ktap_test_fail "workload moved all 8192 pages of B to node 0" "moved '$moved'"
fi

if ! daptrace report nodes "$TMP/n.csv" > "$TMP/nodes" 2> "$TMP/rep.err"; then
	ktap_test_fail "bytes per node before the migration within 5%" \
		"report nodes: $(cat "$TMP/rep.err")"
	ktap_test_fail "bytes per node after the migration within 5%" "no report"
	ktap_test_fail "migration visible within two windows" "no report"
	ktap_test_fail "report pheatmap" "no report"
	rm -rf "$TMP"
	ktap_finished
fi
grep '^# node\|^# snapshots' "$TMP/nodes"

# check PHASE: compare mean node bytes over the phase's windows with the truth.
# t=0 of the record on CLOCK_MONOTONIC (libcsv quotes the fields)
t0=$(sed -n 's/^#meta,"\{0,1\}monotonic_start_ns"\{0,1\},"\{0,1\}\([0-9]*\)"\{0,1\}$/\1/p' "$TMP/n.csv")
[ -n "$t0" ] || echo "# no monotonic_start_ns in the record"

awk -v t0="$t0" -v aggr="$AGGR_S" '
	FNR == NR && $1 == "ready" { ready = ($2 - t0) / 1e9 }
	FNR == NR && $1 == "before" { b0 = $2; b1 = $3 }
	FNR == NR && $1 == "migrate" { ms = ($2 - t0) / 1e9; md = ($3 - t0) / 1e9 }
	FNR == NR && $1 == "after" { a0 = $2; a1 = $3 }
	FNR == NR && $1 == "end" { me = ($2 - t0) / 1e9 }
	FNR != NR && $1 !~ /^#/ {
		t = $1; n0 = $2 + $3 + $4; n1 = $5 + $6 + $7
		# steady before: from 1 s after the ranges were populated
		if (t - aggr >= ready + 1 && t <= ms) { s0 += n0; s1 += n1; nb++ }
		# after: the whole windows between the migration and the exit
		if (t - aggr >= md && t <= me) { p0 += n0; p1 += n1; na++ }
		if (!first && t > md + aggr) { first = 1; f1 = n1; ft = t }
		last = t
	}
	function ok(est, truth, tot) {
		d = est - truth; if (d < 0) d = -d
		return truth >= 0.05 * tot ? d <= 0.05 * truth : d <= 0.05 * tot
	}
	function pr(name, pass, msg) {
		printf "%s %s%s\n", pass ? "PASS" : "FAIL", name, msg
	}
	END {
		printf "windows up to %.2f s; populated %.2f s, migration %.2f-%.2f s, exit %.2f s\n", last, ready, ms, md, me
		if (nb < 3 || na < 3) {
			pr("before", 0, sprintf(": too few windows (%d before, %d after)", nb, na))
			pr("after", 0, ""); pr("visible", 0, ""); exit
		}
		tb = b0 + b1; ta = a0 + a1
		e0 = s0 / nb; e1 = s1 / nb
		pr("before", ok(e0, b0, tb) && ok(e1, b1, tb),
		   sprintf(": %d windows, node0 %.2f MiB (truth %.2f), node1 %.2f MiB (truth %.2f)",
			   nb, e0 / 1048576, b0 / 1048576, e1 / 1048576, b1 / 1048576))
		e0 = p0 / na; e1 = p1 / na
		pr("after", ok(e0, a0, ta) && ok(e1, a1, ta),
		   sprintf(": %d windows, node0 %.2f MiB (truth %.2f), node1 %.2f MiB (truth %.2f)",
			   na, e0 / 1048576, a0 / 1048576, e1 / 1048576, a1 / 1048576))
		pr("visible", first && ok(f1, a1, ta),
		   sprintf(": migration %.2f-%.2f s, window ending %.2f s: node1 %.2f MiB (truth %.2f)",
			   ms, md, ft, f1 / 1048576, a1 / 1048576))
	}' "$TMP/truth" "$TMP/nodes" > "$TMP/verdict"
sed 's/^/# /' "$TMP/verdict"

# verdict NAME KEY
verdict() {
	line=$(grep " $2" "$TMP/verdict")
	case $line in
	PASS*) ktap_test_pass "$1" ;;
	*) ktap_test_fail "$1" "${line#FAIL "$2"}" ;;
	esac
}
verdict "bytes per node before the migration within 5%" before
verdict "bytes per node after the migration within 5%" after
verdict "migration visible within two windows" visible

if daptrace report pheatmap "$TMP/n.csv" > "$TMP/ph" 2> "$TMP/rep.err" &&
	grep -q '^# physical range 0x' "$TMP/ph"; then
	sed -n 's/^# physical range/# pheatmap: physical range/p' "$TMP/ph"
	ktap_test_pass "report pheatmap"
else
	ktap_test_fail "report pheatmap" "$(cat "$TMP/rep.err")"
fi
# The load-time knob make bench compares with: placement=0 measures nothing.
off_test() {
	rows=$(awk -F, '/^[0-9]/ { n++; if ($9 != 0 || $14 != "") bad++ }
		END { print n + 0, bad + 0 }' "$TMP/off.csv")
	echo "# placement=0: rows, rows with placement: $rows"
	[ "$(cat /sys/module/daptrace/parameters/placement)" = N ] &&
		[ "${rows% *}" -gt 0 ] && [ "${rows#* }" = 0 ]
}
if [ ! -f "${DAPTRACE_KO:-}" ]; then
	ktap_test_skip "placement=0 records no placement" "DAPTRACE_KO not set"
elif ! rmmod daptrace || ! insmod "$DAPTRACE_KO" placement=0; then
	ktap_test_fail "placement=0 records no placement" "reload with placement=0 failed"
else
	daptrace record -q -o "$TMP/off.csv" -s 2ms -a 100ms -- \
		"$(dirname "$0")/helpers/numa_wl" 8 1 2 "$TMP/truth.off" 2> "$TMP/off.err"
	off=0
	off_test || off=1
	if ! { rmmod daptrace && insmod "$DAPTRACE_KO"; }; then
		ktap_test_fail "placement=0 records no placement" "reload with placement on failed"
	elif [ $off = 0 ]; then
		ktap_test_pass "placement=0 records no placement"
	else
		ktap_test_fail "placement=0 records no placement" "$(cat "$TMP/off.err")"
	fi
fi
rm -rf "$TMP"
ktap_finished
