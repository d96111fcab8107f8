#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# A measurement, not a test (run by bench/exporter.sh as an extra test of
# selftests/vm/run.sh, one boot per run): what `daptrace exporter`, scraped
# every 5 s, adds to the monitor's worker.  The kernel command line says
# which run this is: dtbench.exporter=1 with the exporter, 0 without.
#
# Both runs monitor the same workload the same way (sysfs, the default
# attributes); with the exporter, `daptrace exporter --attach` reads every
# snapshot and a loop fetches /metrics every 5 s, as a Prometheus would.
# It prints one line, "# exporter-bench k=v ...": the worker's CPU over the
# measured window, the snapshots published in it, and with the exporter its
# own missed snapshots, its CPU and the scrapes served.
#
# Boots differ by far more than 5 % (the host's other jobs), so a run with
# the exporter then also takes turns within its boot: 10 s with the exporter
# and its scraper stopped (SIGSTOP: no wake-up at all), 10 s running, 6
# pairs; "pairs=OFF:ON,..." are the worker's CPU in µs of each pair.  The
# exporter misses snapshots while stopped (the ring holds 1.6 s); its missed
# count above is read before.  It fails only if a step could not run.

. /selftests/lib/ktap.sh
. /selftests/lib/setup.sh
. /selftests/lib/workload.sh

DT=/sys/kernel/daptrace
EXPORTER=/opt/daptrace/daptrace
PORT=9798
TMP=${TMPDIR:-/tmp}/exporter-bench
WARM=5
WINDOW=60
SCRAPE=5
PAIR=10

WITH=0
for tok in $(cat /proc/cmdline); do
	case $tok in dtbench.exporter=1) WITH=1 ;; esac
done

ktap_print_header
ktap_set_plan 1
mkdir -p "$TMP"
ip link set lo up

# ticks (USER_HZ, 100 on x86) of a process, user + system
ticks() {
	awk '{ print $14 + $15 }' "/proc/$1/stat"
}

# cpu_over SECS: the worker's CPU time in µs over the next SECS seconds
cpu_over() {
	c=$(cat $DT/worker_cpu_us)
	sleep "$1"
	echo $(($(cat $DT/worker_cpu_us) - c))
}

# value NAME: a sample of the last scrape
value() {
	awk -v s="$1" '$1 == s { print $2 }' "$TMP/last.txt"
}

run() {
	workload_start "$TMP/truth" -p hotcold -s 256M --thp never \
		-d "$((WARM + WINDOW + 6 * (2 * PAIR + 2) + 30))s" ||
		{ echo "workload did not start"; return 1; }
	if [ "$WITH" = 1 ]; then
		[ -x "$EXPORTER" ] || { echo "$EXPORTER missing"; return 1; }
		"$EXPORTER" exporter --attach --listen "127.0.0.1:$PORT" > "$TMP/exporter.log" 2>&1 &
		EXP=$!
		log_wait "$TMP/exporter.log" "serving http" || { cat "$TMP/exporter.log"; return 1; }
	fi
	echo "$WL_PID" > $DT/target && echo on > $DT/state || return 1
	if [ "$WITH" = 1 ]; then
		(while :; do
			wget -q -O /dev/null "http://127.0.0.1:$PORT/metrics"
			sleep $SCRAPE
		done) &
		SCRAPER=$!
	fi
	sleep $WARM
	c0=$(cat $DT/worker_cpu_us) s0=$(cat $DT/nr_snapshots)
	[ "$WITH" = 0 ] || e0=$(ticks "$EXP")
	sleep $WINDOW
	c1=$(cat $DT/worker_cpu_us) s1=$(cat $DT/nr_snapshots)
	line="exporter=$WITH worker_us=$((c1 - c0)) snapshots=$((s1 - s0)) secs=$WINDOW"
	if [ "$WITH" = 1 ]; then
		e1=$(ticks "$EXP")
		wget -q -O "$TMP/last.txt" "http://127.0.0.1:$PORT/metrics" || return 1
		line="$line exporter_ms=$(((e1 - e0) * 10))"
		line="$line missed=$(value daptrace_exporter_snapshots_missed_total)"
		line="$line read=$(value daptrace_exporter_snapshots_read_total)"
		line="$line published=$(value daptrace_snapshots_published_total)"
		line="$line scrapes=$(value daptrace_exporter_scrapes_total)"
		pairs=
		for _ in 1 2 3 4 5 6; do
			kill -STOP "$EXP" "$SCRAPER"
			sleep 1
			off=$(cpu_over $PAIR)
			kill -CONT "$EXP" "$SCRAPER"
			sleep 1
			on=$(cpu_over $PAIR)
			pairs="$pairs${pairs:+,}$off:$on"
		done
		line="$line pairs=$pairs"
		kill "$SCRAPER"
	fi
	echo off > $DT/state
	[ "$WITH" = 0 ] || { kill "$EXP"; wait "$EXP"; }
	kill "$WL_PID" 2>/dev/null
	wait "$WL_PID" 2>/dev/null
	echo "# exporter-bench $line"
}

if run > "$TMP/run.log" 2>&1; then
	cat "$TMP/run.log"
	ktap_test_pass "measured, exporter=$WITH"
else
	sed 's/^/# /' "$TMP/run.log"
	ktap_test_fail "measured, exporter=$WITH"
fi
ktap_finished
