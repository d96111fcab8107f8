#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The benchmark's guest half: runs in one VM boot of a kernel with DAMON
# (6.12), as a KTAP test of the harness, and prints one "# BENCH k=v ..."
# row per run for bench/run.sh to tabulate.
#
# Every run: start daptrace-workload (exact ground truth), attach one monitor
# (none | daptrace | damon) with the same attributes, wait for the workload
# to end, then record
#   cpu_pct   monitor thread CPU time / wall time (% of one CPU): the
#             thread's sum_exec_runtime for both (daptrace: worker_cpu_us;
#             kdamond: /proc/<pid>/schedstat)
#   touched   pages the workload touched (slowdown = 1 - touched / touched
#             of the unmonitored run in the same round)
#   accuracy  daptrace-score on the record (DAMON's via its tracepoint)
# A setting ending in "-bare" measures the monitor alone: daptrace attached
# through sysfs with nobody reading its snapshots, DAMON without its
# tracepoint; no record, so no accuracy.
# Monitors alternate within a round (none, daptrace, damon) so drift in the
# emulator hits all three alike.
#
# "bench.quick=1" on the kernel command line runs a reduced matrix.

. "$(dirname "$0")/../lib/ktap.sh" 2>/dev/null || . /selftests/lib/ktap.sh
# shellcheck source=selftests/lib/setup.sh
. /selftests/lib/setup.sh
. "$(dirname "$0")/../lib/workload.sh" 2>/dev/null || . /selftests/lib/workload.sh

DT=/sys/kernel/daptrace
DAMON=/sys/kernel/mm/damon/admin/kdamonds
TRACE=/sys/kernel/tracing
TMP=/tmp/bench
QUICK=0
BARE=
grep -qw 'bench.quick=1' /proc/cmdline && QUICK=1
FAILS=0

mkdir -p "$TMP"

die() {
	echo "Bail out! $*"
	exit 1
}

# schedstat_ns PID: CPU time of a thread in ns.
schedstat_ns() {
	cut -d' ' -f1 "/proc/$1/schedstat" 2>/dev/null || echo 0
}

damon_setup() { # PID SAMPLE AGGR UPDATE MIN MAX
	echo 1 > $DAMON/nr_kdamonds
	echo 1 > $DAMON/0/contexts/nr_contexts
	echo vaddr > $DAMON/0/contexts/0/operations
	echo 1 > $DAMON/0/contexts/0/targets/nr_targets
	echo "$1" > $DAMON/0/contexts/0/targets/0/pid_target
	# (sh has no locals: no name the callers use)
	damon_attrs=$DAMON/0/contexts/0/monitoring_attrs
	echo "$2" > "$damon_attrs/intervals/sample_us"
	echo "$3" > "$damon_attrs/intervals/aggr_us"
	echo "$4" > "$damon_attrs/intervals/update_us"
	echo "$5" > "$damon_attrs/nr_regions/min"
	echo "$6" > "$damon_attrs/nr_regions/max"
}

# run ROUND MONITOR SETTING SAMPLE AGGR TLB WORKLOAD-ARGS...
run() {
	round=$1 mon=$2 setting=$3 sample=$4 aggr=$5 tlb=$6
	shift 6
	truth=$TMP/truth rec=$TMP/rec.csv
	rm -f "$truth" "$rec" "$TMP/trace"
	# Populating 4 GiB under TCG takes a while.
	if ! WL_WAIT_S=120 workload_start "$truth" "$@"; then
		echo "# bench: workload did not start: $*"
		FAILS=$((FAILS + 1))
		return
	fi
	wpid=$WL_PID
	t0=$(cut -d' ' -f1 /proc/uptime)
	cpu=0 probe=
	case $mon${BARE:+-bare} in
	none | none-bare)
		wait $wpid
		;;
	daptrace-bare)
		echo "$sample" > $DT/sample_us
		echo "$aggr" > $DT/aggr_us
		echo "$tlb" > $DT/tlb_flush
		echo "$wpid" > $DT/target
		echo on > $DT/state
		wait "$wpid"
		cpu=$(($(cat $DT/worker_cpu_us) * 1000)) probe=$(cat $DT/probe_us)
		echo off > $DT/state 2>/dev/null
		;;
	damon-bare)
		damon_setup "$wpid" "$sample" "$aggr" $((aggr * 10)) 10 1000
		echo on > $DAMON/0/state
		kpid=$(cat $DAMON/0/pid)
		while kill -0 "$wpid" 2>/dev/null; do
			c=$(schedstat_ns "$kpid")
			[ "$c" -gt "$cpu" ] && cpu=$c
			sleep 0.2
		done
		wait "$wpid"
		echo off > $DAMON/0/state 2>/dev/null
		;;
	daptrace)
		daptrace record -q -p $wpid -o "$rec" --sample "${sample}us" \
			--aggr "${aggr}us" --regions 10-1000 --tlb-flush "$tlb" \
			> "$TMP/rec.log" 2>&1 &
		rpid=$!
		wait $wpid
		wait $rpid || { sed 's/^/# record: /' "$TMP/rec.log"; FAILS=$((FAILS + 1)); }
		# The worker's sum_exec_runtime and the probes' part (probe_us),
		# kept after "off" until the next "on".
		cpu=$(($(cat $DT/worker_cpu_us) * 1000)) probe=$(cat $DT/probe_us)
		;;
	damon)
		damon_setup $wpid "$sample" "$aggr" $((aggr * 10)) 10 1000
		echo 0 > $TRACE/tracing_on
		echo > $TRACE/trace
		echo mono > $TRACE/trace_clock
		echo 65536 > $TRACE/buffer_size_kb
		echo 1 > $TRACE/events/damon/damon_aggregated/enable
		echo 1 > $TRACE/tracing_on
		echo on > $DAMON/0/state
		kpid=$(cat $DAMON/0/pid)
		cat $TRACE/trace_pipe > "$TMP/trace" &
		cpid=$!
		while kill -0 $wpid 2>/dev/null; do
			c=$(schedstat_ns "$kpid")
			[ "$c" -gt "$cpu" ] && cpu=$c
			sleep 0.2
		done
		wait $wpid
		echo off > $DAMON/0/state 2>/dev/null
		sleep 0.5
		kill $cpid 2>/dev/null
		wait $cpid 2>/dev/null
		echo 0 > $TRACE/events/damon/damon_aggregated/enable
		# trace_clock mono: event times are already on the truth's clock.
		damon2rec --pid $wpid --sample-us "$sample" --aggr-us "$aggr" \
			< "$TMP/trace" > "$rec"
		;;
	esac
	t1=$(cut -d' ' -f1 /proc/uptime)
	wall_ms=$(awk "BEGIN { printf \"%d\", ($t1 - $t0) * 1000 }")
	touched=$(awk '/^end/ { print $4 }' "$truth")
	line="round=$round monitor=$mon setting=$setting tlb=$tlb wl=$(echo "$*" | tr ' ' '_')"
	line="$line wall_ms=$wall_ms cpu_ms=$((cpu / 1000000)) touched=$touched"
	line="$line probe_pages=$(cat $DT/probe_pages)"
	[ ! -f $DT/probe_max_cpu_bp ] || line="$line probe_max_cpu_bp=$(cat $DT/probe_max_cpu_bp)"
	[ -z "$probe" ] || line="$line probe_us=$probe"
	if [ "$mon" != none ] && [ -z "$BARE" ]; then
		# Samples taken: DAMON's windows hold aggr/sample each however
		# long they stretch, daptrace's fewer if the worker ran late.
		line="$line samples=$(awk -F, '$1 == "#snap" { n += $6 } END { print n + 0 }' "$rec")"
		# The probe pages a window had, on average: the cost bound's
		# count (at most probe_pages), less draws that fell in gaps.
		line="$line probes_per_window=$(awk -F, '$1 == "#probes" { p += $3 }
			$1 == "#snap" { w++ } END { printf "%.1f", w ? p / w : 0 }' "$rec")"
		if daptrace-score --truth "$truth" --record "$rec" --aggr-us "$aggr" \
			--settle 1000 --min-windows 1 > "$TMP/score" 2>&1; then
			line="$line $(grep -v '^#' "$TMP/score" | tr ' ' '=' | tr '\n' ' ')"
		else
			sed 's/^/# score: /' "$TMP/score"
			FAILS=$((FAILS + 1))
		fi
	fi
	echo "# BENCH $line"
}

ktap_print_header
[ -d $DT ] || die "daptrace module not loaded"
damon_stat_off || die "cannot turn DAMON_STAT off"
# "bench.probe_pages=N": daptrace's accuracy probes per window
# (bench/ab.sh --probe-pages); every row says how many there were.
probes=$(tr ' ' '\n' < /proc/cmdline | sed -n 's/^bench\.probe_pages=//p')
[ -z "$probes" ] || echo "$probes" > $DT/probe_pages || die "probe_pages $probes refused"
# DAMON only for its own runs: 5.10 has none, and daptrace runs need none.
one=$(tr ' ' '\n' < /proc/cmdline | sed -n 's/^bench\.one=//p')
case ${one:-damon} in
damon*)
	[ -d $DAMON ] || die "no DAMON sysfs interface (this kernel has no DAMON)"
	[ -d $TRACE/events/damon ] || mount -t tracefs nodev $TRACE 2>/dev/null
	[ -d $TRACE/events/damon ] || die "no damon trace events"
	;;
esac
ktap_set_plan 1

# wl_args NAME [ROUND]: the workload's arguments.
wl_args() {
	case $1 in
	hotcold) echo "-p hotcold -s 512M --thp never" ;;
	hotcold[0-9]*[MG]) echo "-p hotcold -s ${1#hotcold} --thp never" ;;
	smallhot) echo "-p smallhot -s 1G --hot-size 8M --thp never" ;;
	moving) echo "-p moving -s 512M --thp never" ;;
	# An 8 MiB hot set in a MAP_NORESERVE span, 256 MiB of it populated
	# (functional/upper_scan's target; issue 35's "Telescope's scale").
	# The round (bench.one) seeds its places: each monitor meets the same.
	sparse16g) echo "-p sparse -s 16G --populate 256M --thp never --seed $((35000 + ${2:-0}))" ;;
	sparse1t) echo "-p sparse -s 1T --populate 256M --thp never --seed $((35000 + ${2:-0}))" ;;
	scattered) echo "-p scattered -s 1G --objects 32 --thp always" ;;
	esac
}

# "bench.one=MONITOR,SETTING,WORKLOAD,ROUND": just that run, so that every
# monitored run has a boot of its own (bench/ab.sh); tlb_flush is the default.
if [ -n "$one" ]; then
	IFS=, read -r mon setting wlname round <<-EOF
	$one
	EOF
	case $setting in
	default*) smp=5000 agg=100000 ;;
	*) smp=1000 agg=20000 ;;
	esac
	case $setting in *-bare) BARE=1 ;; esac
	# shellcheck disable=SC2046
	run "$round" "$mon" "$setting" $smp $agg "$(cat $DT/tlb_flush)" $(wl_args "$wlname" "$round") -d 10s
	if [ $FAILS -eq 0 ]; then
		ktap_test_pass "benchmark run"
	else
		ktap_test_fail "benchmark run" "$FAILS runs failed"
	fi
	ktap_finished
	exit 0
fi

if [ "$QUICK" = 1 ]; then
	ROUNDS=2 DUR=6s SIZES="256M 1G" TARGETS="1 4"
	MAIN_WLS="hotcold" TLB_WLS="scattered"
else
	ROUNDS=3 DUR=10s SIZES="256M 1G 2G 4G" TARGETS="1 4 16"
	MAIN_WLS="hotcold smallhot" TLB_WLS="smallhot scattered"
fi

# 1. daptrace vs DAMON vs nothing, both settings.
for wlname in $MAIN_WLS; do
	wl=$(wl_args $wlname)
	for setting in default fast; do
		if [ $setting = default ]; then smp=5000 agg=100000; else smp=1000 agg=20000; fi
		r=1
		while [ $r -le $ROUNDS ]; do
			# shellcheck disable=SC2086
			for mon in none daptrace damon; do
				run $r $mon $setting $smp $agg mm $wl -d $DUR
			done
			r=$((r + 1))
		done
	done
done

# 2. TLB policies: accuracy gained vs CPU spent (and DAMON, which never flushes).
for wlname in $TLB_WLS; do
	wl=$(wl_args $wlname)
	for tlb in none round mm; do
		# shellcheck disable=SC2086
		run 1 daptrace tlb 5000 100000 $tlb $wl -d $DUR
	done
	# shellcheck disable=SC2086
	run 1 damon tlb 5000 100000 none $wl -d $DUR
done

# 3. Scaling with the target's size (the paper's claim: flat cost).
for size in $SIZES; do
	for mon in daptrace damon; do
		run 1 $mon scale-size 5000 100000 mm -p hotcold -s "$size" --thp never -d $DUR
	done
done

# 4. Scaling with the number of targets (daptrace only: one worker, N targets).
for n in $TARGETS; do
	pids=
	i=0
	while [ $i -lt "$n" ]; do
		if ! workload_start "$TMP/t$i" -p hotcold -s 64M --thp never -d 60s; then
			echo "# bench: workload $i of $n did not start"
			FAILS=$((FAILS + 1))
		fi
		pids="$pids $WL_PID"
		i=$((i + 1))
	done
	plist=$(echo $pids | tr ' ' ',')
	t0=$(cut -d' ' -f1 /proc/uptime)
	daptrace record -q -p "$plist" -o "$TMP/multi.csv" --duration 8s > "$TMP/rec.log" 2>&1 ||
		{ sed 's/^/# record: /' "$TMP/rec.log"; FAILS=$((FAILS + 1)); }
	t1=$(cut -d' ' -f1 /proc/uptime)
	cpu=$(cat $DT/worker_cpu_us)
	# shellcheck disable=SC2086
	kill $pids 2>/dev/null
	wait
	wall_ms=$(awk "BEGIN { printf \"%d\", ($t1 - $t0) * 1000 }")
	echo "# BENCH round=1 monitor=daptrace setting=scale-targets targets=$n wall_ms=$wall_ms cpu_ms=$((cpu / 1000))"
done

if [ $FAILS -eq 0 ]; then
	ktap_test_pass "benchmark runs"
else
	ktap_test_fail "benchmark runs" "$FAILS runs failed"
fi
ktap_finished
