#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Checking the savings curve (issue 39), inside the VM (bench/savings.sh
# boots one per round, writing WLS, D and TS on the line after this comment
# block): for each workload of WLS, a `daptrace record -p` of it for its D
# seconds and `daptrace report savings --json` at the thresholds TS
# (seconds): the prediction; then for each T of TS a fresh run of the same
# workload, same arguments, under `daptrace policy -p -S "pageout idle=Ts"`
# (no quota) for the same D seconds: what it really saves and refaults.
#
#   phases   daptrace-policy-workload phases, 16 MiB hot, 16 MiB warm (read
#            every 1 s), 64 MiB cold, D/4 s a phase (the sets at x1, x2,
#            x1/2, x1): memory that went idle is used again, so a policy
#            refaults
#   reclaim  daptrace-policy-workload reclaim, the same sets, static: the
#            cold set is never used again until the final check
#
# Measured on the target, never from daptrace's counters: its VmSwap once a
# second (mean over the samples, and at the end), the system's pswpin from
# the attach to the end of the run (per second; nothing else in the guest
# swaps), the workload's own data check.  The workload holds its final
# check (which reads every page back) until told (--go): the record and the
# policy stop first, so neither sees nor counts it.  Swap readahead is off
# (vm.page-cluster 0; zram skips it anyway) so a swap-in is one page.
# A measurement, not a test: it prints "# BENCH ..." rows and fails only if
# a run could not be made or a workload's data check failed.

. /selftests/lib/ktap.sh
. /selftests/lib/setup.sh

: "${WLS:=phases reclaim}" "${D:=32}" "${TS:=2 5 10}"
TMP=${TMPDIR:-/tmp}/bench-savings.$$
FAILED=

vmstat() { awk -v k="$1" '$1 == k { print $2 }' /proc/vmstat; }
uptime_s() { cut -d' ' -f1 /proc/uptime; }
# status_kb PID FIELD
status_kb() { sed -n "s/^$2:[[:space:]]*\([0-9]*\) kB/\1/p" "/proc/$1/status" 2>/dev/null; }

# wl_args WL
wl_args() {
	case $1 in
	phases) echo "phases --hot 16M --warm 16M --cold 64M --phase $((D / 4))" ;;
	reclaim) echo "reclaim --hot 16M --warm 16M --cold 64M --duration $D" ;;
	*) ktap_exit_fail_msg "bench/savings-guest.sh: workload '$1'?" ;;
	esac
}

# run WL MONITOR...: the workload WL under MONITOR (its -p PID added), until
# the workload's run is over (its "pswpin" line, printed just before it
# holds for --go); then the monitor is stopped with SIGINT and the check
# let go.  Sets SWAP_MEAN SWAP_LAST (kB), SWAPIN (pages), SECS, VERIFY.
run() {
	wl=$1
	shift
	rm -f "$TMP/pid" "$TMP/go" "$TMP/out"
	# shellcheck disable=SC2046 # the workload's arguments, split
	daptrace-policy-workload $(wl_args "$wl") --pidfile "$TMP/pid" --go "$TMP/go" \
		> "$TMP/out" 2>&1 &
	wlp=$!
	i=0
	while [ ! -s "$TMP/pid" ] && [ $i -lt 1200 ]; do sleep 0.1; i=$((i + 1)); done
	pid=$(cat "$TMP/pid" 2>/dev/null)
	[ -n "$pid" ] || { cat "$TMP/out"; ktap_exit_fail_msg "$wl did not start"; }
	in0=$(vmstat pswpin)
	t0=$(uptime_s)
	"$@" -p "$pid" > "$TMP/mon" 2>&1 &
	mon=$!
	: > "$TMP/swap"
	i=0
	while ! grep -q '^pswpin ' "$TMP/out" && kill -0 "$wlp" 2>/dev/null; do
		sleep 0.2
		i=$((i + 1))
		[ $((i % 5)) = 0 ] || continue
		# not once the run is over (the lines before the hold)
		grep -q '^touch bad=' "$TMP/out" || status_kb "$pid" VmSwap >> "$TMP/swap"
	done
	t1=$(uptime_s)
	kill -INT "$mon" 2>/dev/null
	wait "$mon" || { sed 's/^/# monitor: /' "$TMP/mon" | tail -n 20; FAILED="$FAILED $wl:$*"; }
	touch "$TMP/go"
	wait "$wlp"
	wst=$?
	SWAP_MEAN=$(awk '{ s += $1; n++ } END { printf "%d", n ? s / n : 0 }' "$TMP/swap")
	SWAP_LAST=$(sed -n 's/^VmSwap:[[:space:]]*\([0-9]*\).*/\1/p' "$TMP/out")
	SWAPIN=$(($(sed -n 's/^pswpin //p' "$TMP/out") - in0))
	SECS=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
	VERIFY=FAILED
	if grep -q '^verify ok' "$TMP/out" && grep -q '^touch bad=0$' "$TMP/out" && [ $wst = 0 ]; then
		VERIFY=ok
	else
		sed 's/^/# workload: /' "$TMP/out" | tail -n 20
		FAILED="$FAILED $wl:verify"
	fi
}

# curve JSON: one line per threshold of the report's curve, "threshold_s
# saved_mean_bytes saved_last_bytes refault_pages_per_s refaulted_bytes
# unknown_future_bytes" (the curve's entries hold no objects of their own)
curve() {
	tr -d ' \n\t' < "$1" | sed 's/.*"curve":\[//' | tr '{}' '[\n*]' | grep '"threshold_s"' |
	awk '
	function f(k,   m) {
		if (!match($0, "\"" k "\":[^,]*"))
			return "nan"
		m = substr($0, RSTART + length(k) + 3, RLENGTH - length(k) - 3)
		return m == "null" ? "nan" : m
	}
	{ print f("threshold_s"), f("saved_mean_bytes"), f("saved_last_bytes"),
		f("refault_pages_per_s"), f("refaulted_bytes"), f("unknown_future_bytes") }'
}

ktap_print_header
ktap_set_plan 1
ktap_require_tools daptrace daptrace-policy-workload
zram_swap_on || ktap_exit_fail_msg "no zram swap"
echo 0 > /proc/sys/vm/page-cluster
mkdir -p "$TMP"
thr=$(echo "$TS" | sed 's/\([0-9][0-9]*\)/\1s/g; s/ /,/g')

for wl in $WLS; do
	# the prediction
	rm -f "$TMP/rec.csv"
	run "$wl" daptrace record -q -o "$TMP/rec.csv"
	echo "# BENCH kind=record wl=$wl d=$D secs=$SECS swap_mean_kb=$SWAP_MEAN" \
		"swapin=$SWAPIN verify=$VERIFY"
	if ! daptrace report savings --json --thresholds "$thr" "$TMP/rec.csv" > "$TMP/sav.json" \
		2> "$TMP/sav.err"; then
		sed 's/^/# report: /' "$TMP/sav.err"
		FAILED="$FAILED $wl:report"
		continue
	fi
	daptrace report savings --thresholds "$thr" "$TMP/rec.csv" 2>&1 | sed "s/^/# $wl: /"
	windows=$(tr -d ' \n\t' < "$TMP/sav.json" | sed -n 's/.*"windows":\([0-9]*\).*/\1/p' | head -n 1)
	rsecs=$(tr -d ' \n\t' < "$TMP/sav.json" | sed -n 's/.*"seconds":\([0-9.]*\).*/\1/p' | head -n 1)
	curve "$TMP/sav.json" | while read -r t mean last rf refaulted unknown; do
		echo "# BENCH kind=pred wl=$wl t=$t d=$D windows=$windows secs=$rsecs" \
			"saved_mean_kb=$(awk -v b="$mean" 'BEGIN { printf "%d", b / 1024 }')" \
			"saved_last_kb=$(awk -v b="$last" 'BEGIN { printf "%d", b / 1024 }')" \
			"rf_pps=$rf refaulted_kb=$(awk -v b="$refaulted" 'BEGIN { printf "%d", b / 1024 }')" \
			"unknown_kb=$(awk -v b="$unknown" 'BEGIN { printf "%d", b / 1024 }')"
	done
	# what a policy does
	for t in $TS; do
		run "$wl" daptrace policy -q -S "pageout idle=${t}s"
		echo "# BENCH kind=real wl=$wl t=$t d=$D secs=$SECS swap_mean_kb=$SWAP_MEAN" \
			"swap_last_kb=$SWAP_LAST swapin=$SWAPIN" \
			"rf_pps=$(awk -v n="$SWAPIN" -v s="$SECS" 'BEGIN { printf "%.3f", (s > 0 ? n / s : 0) }')" \
			"verify=$VERIFY"
		sed -n 's/^/# policy: /p' "$TMP/mon" | tail -n 5
	done
done

rm -rf "$TMP"
zram_swap_off || ktap_print_msg "swapoff /dev/zram0 failed"
if [ -z "$FAILED" ]; then
	ktap_test_pass "bench savings $WLS"
else
	ktap_test_fail "bench savings $WLS" "failed:$FAILED"
fi
ktap_finished
