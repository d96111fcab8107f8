#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# A measurement, not a test (run by bench/goals.sh as an extra test of
# selftests/vm/run.sh, one boot per run): it prints "# BENCH ..." rows and
# fails only if a run could not be made.  bench/goals.sh writes MODE, WL and
# SET on the line after this comment block:
#
#   intervals  daptrace-workload WL (hotcold: 64 MiB hot in 512 MiB;
#              smallhot: 8 MiB hot in 1 GiB, under the goal's 4 %;
#              scattered: 32 hot pages, each in its own 2 MiB of 1 GiB,
#              THP always) for 20 s under `daptrace record`, SET fixed (5 ms /
#              100 ms) or auto (--auto-intervals, from 5 ms / 100 ms):
#              worker CPU, daptrace-score's recall / precision / hot seen,
#              the time from the start of the record to the end of its
#              first window with recall >= 0.9, and the intervals in force
#              at the end;
#   quota      hotcold 512 MiB (64 MiB hot, 64 MiB warm, the rest never
#              touched again) with zram swap under `daptrace policy -S
#              'pageout freq=0-0 quota=64M/1s goal=rss:256M'` for 60 s: the
#              target's RSS every second, for bench/goals-report.py to find
#              when it first came within +-20 % of 256 MiB and how much of
#              the time after that it stayed there.

. /selftests/lib/ktap.sh
. /selftests/lib/workload.sh
. /selftests/lib/setup.sh

DT=/sys/kernel/daptrace
TMP=${TMPDIR:-/tmp}/bench-goals.$$

# trailer FILE KEY
trailer() {
	sed -n "s/^#end,\"\{0,1\}$2\"\{0,1\},\"\{0,1\}\([^\"]*\)\"\{0,1\}$/\1/p" "$1"
}

# meta FILE KEY
meta() {
	sed -n "s/^#meta,\"\{0,1\}$2\"\{0,1\},\"\{0,1\}\([^\"]*\)\"\{0,1\}$/\1/p" "$1"
}

# val KEY FILE: a daptrace-score figure
val() {
	v=$(sed -n "s/^$1 \([-0-9.a-z]*\).*/\1/p" "$2")
	echo "${v:-nan}"
}

# status_kb PID FIELD
status_kb() {
	sed -n "s/^$2:[[:space:]]*\([0-9]*\) kB/\1/p" "/proc/$1/status" 2>/dev/null
}

ktap_print_header
ktap_set_plan 1
mkdir -p "$TMP"

case $MODE in
intervals)
	case $WL in
	hotcold) args="-p hotcold -s 512M --thp never" ;;
	smallhot) args="-p smallhot -s 1G --hot-size 8M --thp never" ;;
	scattered) args="-p scattered -s 1G --objects 32 --thp always" ;;
	*) ktap_exit_fail_msg "bench/goals-guest.sh: WL '$WL'?" ;;
	esac
	case $SET in
	fixed) auto= ;;
	auto) auto=--auto-intervals ;;
	*) ktap_exit_fail_msg "bench/goals-guest.sh: SET '$SET'?" ;;
	esac
	# shellcheck disable=SC2086
	WL_WAIT_S=120 workload_start "$TMP/truth" $args -d 20s ||
		ktap_exit_fail_msg "the workload did not start"
	# shellcheck disable=SC2086
	daptrace record -q -p "$WL_PID" -o "$TMP/r.csv" --sample 5ms --aggr 100ms \
		--regions 10-1000 $auto > "$TMP/log" 2>&1 &
	rec=$!
	wait "$WL_PID"
	wait $rec || { cat "$TMP/log"; ktap_exit_fail_msg "record failed"; }
	daptrace-score --truth "$TMP/truth" --record "$TMP/r.csv" --aggr-us 100000 \
		--settle 1000 --min-windows 1 > "$TMP/score" 2>&1
	# the same hot (and warm) set, from the start of the record: the time
	# to the first window with recall >= 0.9 is the time to find it
	start=$(meta "$TMP/r.csv" monotonic_start_ns)
	awk -v s="$start" '
		$1 == "phase" && $2 == 0 { print "phase 0 0"; print "phase 1 " s; next }
		($1 == "hot" || $1 == "warm") && $2 == 0 { $2 = 1 }
		{ print }' "$TMP/truth" > "$TMP/truth1"
	daptrace-score --truth "$TMP/truth1" --record "$TMP/r.csv" --aggr-us 100000 \
		--settle 0 > "$TMP/score1" 2>&1
	last=$(grep '^#snap,' "$TMP/r.csv" | tail -n 1)
	echo "# BENCH mode=intervals wl=$WL set=$SET" \
		"cpu_us=$(trailer "$TMP/r.csv" worker_cpu_us)" \
		"duration_ns=$(trailer "$TMP/r.csv" duration_ns)" \
		"windows=$(grep -c '^#snap,' "$TMP/r.csv")" \
		"samples=$(awk -F, '$1 == "#snap" { n += $6 } END { print n + 0 }' "$TMP/r.csv")" \
		"recall=$(val recall_median "$TMP/score")" \
		"precision=$(val precision_median "$TMP/score")" \
		"hot_seen=$(val hot_seen_median "$TMP/score")" \
		"find_s=$(val detect_latency_mean_s "$TMP/score1")" \
		"undetected=$(val phases_undetected "$TMP/score1")" \
		"sample_us_end=$(echo "$last" | cut -d, -f9)" \
		"aggr_us_end=$(echo "$last" | cut -d, -f10)"
	;;
quota)
	zram_swap_on || ktap_exit_fail_msg "no zram swap"
	WL_WAIT_S=120 workload_start "$TMP/truth" -p hotcold -s 512M --thp never -d 75s ||
		ktap_exit_fail_msg "the workload did not start"
	pid=$WL_PID
	echo "# BENCH mode=quota t=0 rss_kb=$(status_kb "$pid" VmRSS)" \
		"swap_kb=$(status_kb "$pid" VmSwap)"
	daptrace policy -S 'pageout freq=0-0 quota=64M/1s goal=rss:256M' -p "$pid" -d 60s \
		> "$TMP/log" 2>&1 &
	pol=$!
	i=1
	while [ $i -le 60 ]; do
		sleep 1
		echo "# BENCH mode=quota t=$i rss_kb=$(status_kb "$pid" VmRSS)" \
			"swap_kb=$(status_kb "$pid" VmSwap)"
		i=$((i + 1))
	done
	wait $pol || { cat "$TMP/log"; ktap_exit_fail_msg "policy failed"; }
	echo "# BENCH mode=quota end=1 cpu_us=$(cat $DT/worker_cpu_us)" \
		"pswpin=$(sed -n 's/^pswpin //p' /proc/vmstat)" \
		"pswpout=$(sed -n 's/^pswpout //p' /proc/vmstat)"
	sed 's/^/# policy: /' "$TMP/log" | tail -n 20
	kill "$pid" 2>/dev/null
	wait "$pid"
	;;
*)
	ktap_exit_fail_msg "bench/goals-guest.sh: MODE '$MODE'?"
	;;
esac
ktap_test_pass "bench goals $MODE ${WL:-} ${SET:-}"
rm -rf "$TMP"
ktap_finished
