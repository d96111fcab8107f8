#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Regret counters of `daptrace policy` against the workload's own view of
# its memory: the workload (daptrace-policy-workload regret) reads 4 MiB
# of its memory every 10 ms, notes every page that goes out (present in
# /proc/self/pagemap -> not: an event) and reads some pages again at known
# delays after they first went out (0.4 s, 3 s, 14 s: back within 1 s,
# 10 s, 60 s; the rest never), so it knows how many of its events came
# back within each window.  A pageout scheme restricted to that memory
# (addr=) runs long enough that every window of every event has closed;
# then the policy's record must say, exactly: bytes taken away = events x
# page size, back within W = the workload's count for W, every window
# checked, nothing unknown, and the exporter-facing stats JSON must agree
# with the record.
#
# The workload reads pagemap because the counters do (policy/regret.c:
# another process's memory has no mincore).  It reads mincore(2) beside
# it, and the two views may differ by one reason only: a page reclaim
# unmapped but could not free (an extra reference on its folio just then;
# the workload's own mincore, which looks the page up in the swap cache,
# is one) stays in the swap cache, not present for pagemap and resident
# for mincore, until reclaim frees it (a mincore event then) or a touch
# maps it again.  The counters count such a page taken away (the process
# lost its mapping and pays a fault to use it), and so does the test; the
# last check says the mincore view's events are the pagemap view's minus
# those left in the swap cache plus those freed from it later, and that
# no page was ever in a state this reason does not explain.

. "$(dirname "$0")/../lib/ktap.sh"
. "$(dirname "$0")/../lib/setup.sh"

TMP=${TMPDIR:-/tmp}/policy-regret.$$
SET=4M
POLICY_S=95
WORKLOAD_S=100

# json_vals FILE KEY: every value of "KEY": N in a pretty-printed JSON file
json_vals() {
	sed -n "s/^ *\"$2\": *\([0-9]*\),\{0,1\}$/\1/p" "$1"
}

ktap_print_header
command -v daptrace > /dev/null || ktap_exit_fail_msg "daptrace is not installed in the guest"
command -v daptrace-policy-workload > /dev/null ||
	ktap_exit_fail_msg "daptrace-policy-workload is not installed in the guest"
zram_swap_on || ktap_skip_all "no zram swap (zram.ko not in the initramfs or failed to load)"
ktap_set_plan 7
mkdir -p "$TMP"
psz=$(getconf PAGESIZE 2>/dev/null || echo 4096)

daptrace-policy-workload regret --cold $SET --duration $WORKLOAD_S --pidfile "$TMP/pid" \
	--go "$TMP/go" > "$TMP/wl" 2>&1 &
wl=$!
i=0
while [ ! -s "$TMP/pid" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
pid=$(cat "$TMP/pid" 2>/dev/null)
range=$(sed -n 's/^range \(0x[0-9a-f]*\) \(0x[0-9a-f]*\)$/\1-\2/p' "$TMP/wl")
[ -n "$pid" ] && [ -n "$range" ] || ktap_exit_fail_msg "the workload did not start: $(cat "$TMP/wl")"
cg=$(sed -n 's/^0::\(.*\)$/\1/p' "/proc/$pid/cgroup")

daptrace policy -p "$pid" -d ${POLICY_S}s --progress 10s --record "$TMP/rec.csv" \
	--stats-json "$TMP/stats.json" -S "pageout freq=0-0 idle=2s addr=$range" \
	> "$TMP/policy" 2>&1
st=$?
touch "$TMP/go"
wait $wl
wst=$?
sed 's/^/# policy: /' "$TMP/policy"
sed 's/^/# workload: /' "$TMP/wl"

if [ $st -eq 0 ] && [ $wst -eq 0 ]; then
	ktap_test_pass "policy and workload exit 0"
else
	ktap_test_fail "policy and workload exit 0" "policy $st, workload $wst"
fi
line=$(grep '^regret out=' "$TMP/wl")
out=$(echo "$line" | sed -n 's/.* out=\([0-9]*\).*/\1/p')
b1=$(echo "$line" | sed -n 's/.* back1s=\([0-9]*\).*/\1/p')
b10=$(echo "$line" | sed -n 's/.* back10s=\([0-9]*\).*/\1/p')
b60=$(echo "$line" | sed -n 's/.* back60s=\([0-9]*\).*/\1/p')
if daptrace report regret --json "$TMP/rec.csv" > "$TMP/report.json" 2> "$TMP/report.err"; then
	ktap_test_pass "report regret reads the policy's record"
else
	ktap_test_fail "report regret reads the policy's record" "$(cat "$TMP/report.err")"
fi
sed 's/^/# /' "$TMP/report.json"
acted=$(json_vals "$TMP/report.json" acted_bytes)
back=$(json_vals "$TMP/report.json" back_bytes | tr '\n' ' ')
checked=$(json_vals "$TMP/report.json" checked_bytes | tr '\n' ' ')
unknown=$(json_vals "$TMP/report.json" unknown_bytes | tr '\n' ' ')
rcg=$(sed -n 's/^ *"cgroup": *"\(.*\)",\{0,1\}$/\1/p' "$TMP/report.json")

if [ -n "$out" ] && [ "$out" -gt 0 ] && [ "$acted" = "$((out * psz))" ]; then
	ktap_test_pass "taken away = the workload's $out pagemap events ($acted bytes)"
else
	ktap_test_fail "taken away = the workload's pagemap events" \
		"record: ${acted:-none} bytes; workload: ${out:-none} pages of $psz"
fi
want="$((b1 * psz)) $((b10 * psz)) $((b60 * psz)) "
if [ -n "$b1" ] && [ "$back" = "$want" ] && [ "$b1" -gt 0 ] && [ "$b10" -gt "$b1" ] &&
   [ "$b60" -gt "$b10" ]; then
	ktap_test_pass "back within 1s/10s/60s = the workload's $b1/$b10/$b60 pages"
else
	ktap_test_fail "back within 1s/10s/60s = the workload's" \
		"record: $back; workload: $want (pages $b1/$b10/$b60)"
fi
if [ -n "$acted" ] && [ "$checked" = "$acted $acted $acted " ] && [ "$unknown" = "0 0 0 " ] &&
   [ "$rcg" = "$cg" ]; then
	ktap_test_pass "every window checked, none unknown, cgroup '$cg'"
else
	ktap_test_fail "every window checked, none unknown, cgroup" \
		"checked '$checked' unknown '$unknown' of $acted; cgroup '$rcg' want '$cg'"
fi
sacted=$(json_vals "$TMP/stats.json" acted_bytes)
sback=$(json_vals "$TMP/stats.json" back_bytes | tr '\n' ' ')
if [ -n "$sacted" ] && [ "$sacted" = "$acted" ] && [ "$sback" = "$back" ]; then
	ktap_test_pass "the stats JSON (exporter's input) agrees with the record"
else
	ktap_test_fail "the stats JSON agrees with the record" \
		"stats: $sacted / $sback; record: $acted / $back"
fi
views=$(grep '^views ' "$TMP/wl")
view() {
	echo "$views" | sed -n "s/.* $1=\([0-9]*\).*/\1/p"
}
mc=$(view mincore_out) sc=$(view swapcache) fr=$(view freed) odd=$(view odd)
ub=$(view untouched_back)
if [ -n "$out" ] && [ -n "$mc" ] && [ -n "$sc" ] && [ -n "$fr" ] && [ "$odd" = 0 ] &&
   [ "$ub" = 0 ] && [ "$mc" -eq $((out - sc + fr)) ]; then
	ktap_test_pass "mincore's $mc events = $out - $sc left in the swap cache + $fr freed from it"
else
	ktap_test_fail "mincore's events = pagemap's - left in the swap cache + freed from it" \
		"$views"
fi
rm -rf "$TMP"
zram_swap_off || ktap_print_msg "swapoff /dev/zram0 failed"
ktap_finished
