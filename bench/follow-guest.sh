#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# A measurement, not a test (run by bench/follow.sh as an extra test of
# selftests/vm/run.sh, one boot per run): it prints "# BENCH ..." rows and
# fails only if a run could not be made.  bench/follow.sh writes MODE (and
# N) on the line after this comment block:
#
#   tree     record -- a parent that starts 4 workers a second apart, each
#            with its own 4 MiB hot set in 32 MiB: per-worker precision
#            and recall (daptrace-score), join latency (fork to the start of
#            the first window with the worker's regions), worker CPU;
#   single   record -- one such worker alone: its precision and recall;
#   machine  220 idle processes and one busy worker: daptrace stat over the
#            machine for 20 s: worker CPU, targets, regions;
#   one      the same processes, daptrace record -p of the busy worker alone
#            with stat's intervals and region budget: worker CPU;
#   machine-rec  machine at record's intervals (5 ms / 100 ms / 1 s): the
#            cost of stat's longer defaults against them;
#   aging    220 idle processes and an aging workload (areas idle from 0, 8,
#            16, 24 s) in its own cgroup: daptrace stat's JSON every 8 s and
#            the ground truth, for bench/follow.sh to compare;
#   scale    N idle processes: daptrace stat for 20 s: worker CPU, daptrace's
#            own CPU, targets, regions;
#   build    a real build, followed: `daptrace record -- make -j2` of the
#            tree bench/toolchain-payload.sh unpacks in /opt/dtbuild (its
#            extra test runs first), the kernel's sched_process_fork, exec
#            and exit events traced beside it (trace clock mono): per
#            process of the build, its fork, exec and exit times and the
#            first window with its regions; the record's follower counts;
#            `report wss --by pid` of the record;
#   build-alone  each compile job of that build (jobs.txt, the command
#            `make -n` prints) recorded alone, the same trace and report;
#   dstat-machine  machine's processes with DAMON_STAT (Debian's 7.x start it
#            at boot) left on and daptrace not monitoring: the CPU of its
#            kdamond thread over machine's 12 s window;
#   dstat-aging    aging's processes, DAMON_STAT on, daptrace not monitoring:
#            its memory_idle_ms_percentiles, estimated_memory_bandwidth and
#            aggr_interval_us read when aging's `daptrace stat` reports (8,
#            16, ... 40 s after it would start), with the time of each read.
#
# MODE may list several of these, measured one after the other in one boot
# (bench/follow.sh's damon_stat part: "aging machine" against "dstat-aging
# dstat-machine", so each monitor gets one boot a round); the idle
# processes are started once and kept.  DAMON_STAT is turned off unless a
# dstat mode is asked for, so every daptrace run has as quiet a machine as
# on 6.12, which has no DAMON_STAT.

. /selftests/lib/ktap.sh
# shellcheck source=selftests/lib/setup.sh
. /selftests/lib/setup.sh

DT=/sys/kernel/daptrace
TMP=${TMPDIR:-/tmp}/bench-follow.$$
CG=/sys/fs/cgroup
DS=/sys/module/damon_stat/parameters
IDLE=220

# idle_procs N CGROUP: N processes that populate 64 KiB and sleep, in CGROUP
# (once: a later mode of the same boot keeps them)
idle_procs() {
	[ -z "${IDLE_PID:-}" ] || return 0
	mkdir -p "$CG/$2"
	sh -c "echo \$\$ > $CG/$2/cgroup.procs && exec daptrace-tree-workload -p idle \
		-w $1 -s 64K -l 600s -t $TMP/idle" &
	IDLE_PID=$!
	i=0
	while [ "$(wc -l < "$CG/$2/cgroup.procs")" -le "$1" ] && [ $i -lt 3000 ]; do
		sleep 0.1
		i=$((i + 1))
	done
}

# busy_proc: one worker touching its 4 MiB hot set, in the cgroup dt-busy
busy_proc() {
	mkdir -p $CG/dt-busy "$TMP/busy"
	sh -c "echo \$\$ > $CG/dt-busy/cgroup.procs && exec daptrace-tree-workload \
		--worker 0 -s 32M -l 600s -t $TMP/busy" &
	BUSY_PID=$!
	while ! grep -q '^phase 0' "$TMP/busy/worker-0.truth" 2>/dev/null; do
		sleep 0.1
	done
}

# trailer FILE KEY
trailer() {
	sed -n "s/^#end,\"\{0,1\}$2\"\{0,1\},\"\{0,1\}\([^\"]*\)\"\{0,1\}$/\1/p" "$1"
}

# score TRUTH RECORD: "precision recall" medians
score() {
	daptrace-score --truth "$1" --record "$2" --aggr-us 100000 > "$TMP/score" 2>&1
	p=$(sed -n 's/^precision_median \([0-9.]*\).*/\1/p' "$TMP/score")
	r=$(sed -n 's/^recall_median \([0-9.]*\).*/\1/p' "$TMP/score")
	echo "${p:-nan} ${r:-nan}"
}

# cpu_of PID: its user + system CPU time in clock ticks
cpu_of() {
	awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null
}

# mono_ns: CLOCK_MONOTONIC now, the clock of the truth and of stat's windows
# (/proc/timer_list's header, read up to that line only: the kernel stamps it
# when the read starts, and the whole file lists every sleeping process's
# timer: 2.7 s to read with 4096 of them, all of it between the stamp and
# what the caller does next)
mono_ns() {
	awk '/^now at /{ print $3; exit }' /proc/timer_list
}

# sleep_until NS: sleep until CLOCK_MONOTONIC reaches NS (now if past), so
# the reads keep to their times however long each one took
sleep_until() {
	sleep "$(awk -v t="$1" -v n="$(mono_ns)" \
		'BEGIN { d = (t - n) / 1e9; printf "%.3f", (d > 0 ? d : 0) }')"
}

# kdamonds: the PIDs of the kdamond.N kernel threads (DAMON_STAT's one)
kdamonds() {
	grep -l '^kdamond' /proc/[0-9]*/comm 2>/dev/null | cut -d/ -f3
}

# kdamond_ns PIDS: their run time in ns, summed (schedstat's first field:
# the scheduler's exact sum, where /proc/PID/stat counts 10 ms ticks)
kdamond_ns() {
	for p in $1; do
		cut -d' ' -f1 "/proc/$p/schedstat"
	done | awk '{ t += $1 } END { printf "%d", t }'
}

# ram_range: the bytes of the biggest "System RAM" range of /proc/iomem,
# the physical range DAMON_STAT monitors
# (damon_set_region_biggest_system_ram_default)
ram_range() {
	sed -n 's/^\([0-9a-f]*\)-\([0-9a-f]*\) : System RAM$/\1 \2/p' /proc/iomem | {
		best=0
		while read -r a b; do
			[ $((0x$b - 0x$a + 1)) -le $best ] || best=$((0x$b - 0x$a + 1))
		done
		echo $best
	}
}

# aging_workload: the aging workload in the cgroup dt-aging, started now
aging_workload() {
	mkdir -p $CG/dt-aging "$TMP/aging"
	sh -c "echo \$\$ > $CG/dt-aging/cgroup.procs && exec daptrace-tree-workload -p aging \
		-s 64M --areas 4 --step 8s -l 60s -t $TMP/aging" &
	AGING_PID=$!
}

# aging_done: the aging workload stopped (a later mode must not have its
# 64 MiB about) and its truth printed
aging_done() {
	kill "$AGING_PID" 2>/dev/null
	wait "$AGING_PID" 2>/dev/null
	sed 's/^/# BENCH aging_truth /' "$TMP/aging/aging.txt"
}

TRACE=/sys/kernel/tracing

# trace_on: the sched process events of everything from now, CLOCK_MONOTONIC
# timestamps (trace clock mono, as the record's monotonic_start_ns)
trace_on() {
	[ -d $TRACE/events ] || mount -t tracefs nodev $TRACE || return 1
	echo 0 > $TRACE/tracing_on
	echo mono > $TRACE/trace_clock || return 1
	echo 8192 > $TRACE/buffer_size_kb
	: > $TRACE/trace
	for e in sched_process_fork sched_process_exec sched_process_exit; do
		echo 1 > $TRACE/events/sched/$e/enable || return 1
	done
	echo 1 > $TRACE/tracing_on
}

# trace_off FILE: stop, the events into FILE
trace_off() {
	echo 0 > $TRACE/tracing_on
	cat $TRACE/trace > "$1"
	echo 0 > $TRACE/events/sched/enable
}

# procs MODE JOB TRACE RECORD: a row per process of the tree of the
# record's first target (the command): its parent, program, fork, exec and
# exit times (trace, ns; "-" unknown), the start of the first window with
# its regions (ns, CLOCK_MONOTONIC; "-" none) and how many windows had them;
# the processes of the tree are the root and whatever its members forked
procs() {
	mono=$(sed -n 's/^#meta,"\{0,1\}monotonic_start_ns"\{0,1\},"\{0,1\}\([0-9]*\)"\{0,1\}$/\1/p' "$4")
	root=$(sed -n 's/^#target,"\{0,1\}\([0-9]*\).*/\1/p' "$4" | head -n 1)
	awk -F, -v m="$mono" '/^#snap,/ { s = $3 + m; next } /^#/ || $3 == "pid" { next }
		{ if (!($3 in first)) first[$3] = s
		  if (last[$3] != s) { n[$3]++; last[$3] = s } }
		END { for (p in first) printf "%s %.0f %d\n", p, first[p], n[p] }' "$4" > "$TMP/first"
	awk -v root="$root" -v mode="$1" -v job="$2" '
	# a trace line: "comm-pid [cpu] flags secs.usecs: event: key=value ..."
	function ns(   i) {
		for (i = 1; i <= NF; i++)
			if ($i ~ /^[0-9]+\.[0-9]+:$/) {
				split(substr($i, 1, length($i) - 1), t, ".")
				# busybox awk reads "000200" as octal
				sub(/^0+/, "", t[2])
				return sprintf("%.0f", t[1] * 1e9 + (t[2] == "" ? 0 : t[2]) * 1000)
			}
	}
	function val(k,   i) {
		for (i = 1; i <= NF; i++)
			if (index($i, k "=") == 1)
				return substr($i, length(k) + 2)
	}
	FILENAME == ARGV[1] { first[$1] = $2; wins[$1] = $3; next }
	/sched_process_fork:/ {
		c = val("child_pid")
		if (c == root || val("pid") in tree) {
			tree[c] = 1; fork[c] = ns(); ppid[c] = val("pid"); order[++nr] = c
		}
	}
	/sched_process_exec:/ {
		c = val("pid")
		if (c in tree) { exe[c] = val("filename"); sub(/.*\//, "", exe[c]); exec[c] = ns() }
	}
	/sched_process_exit:/ { c = val("pid"); if (c in tree) exit_[c] = ns() }
	END {
		for (i = 1; i <= nr; i++) {
			c = order[i]
			printf "# BENCH mode=%s what=proc job=%s pid=%s ppid=%s exe=%s fork_ns=%s" \
				" exec_ns=%s exit_ns=%s first_ns=%s windows=%s\n", mode, job, c, ppid[c],
				(c in exe) ? exe[c] : "-", fork[c], (c in exec) ? exec[c] : "-",
				(c in exit_) ? exit_[c] : "-", (c in first) ? first[c] : "-",
				(c in wins) ? wins[c] : 0
		}
	}' "$TMP/first" "$3"
}

ktap_print_header
ktap_set_plan 1
mkdir -p "$TMP/idle"
grep -q ' cgroup2 ' /proc/mounts || { mkdir -p $CG; mount -t cgroup2 none $CG; }
case " $MODE" in
*" dstat-"*)
	[ "$(cat $DS/enabled 2>/dev/null)" = Y ] ||
		ktap_exit_fail_msg "DAMON_STAT is not running on $(uname -r)"
	KD=$(kdamonds)
	[ -n "$KD" ] || ktap_exit_fail_msg "DAMON_STAT is on but no kdamond thread"
	echo "# BENCH mode=dstat-range bytes=$(ram_range) kdamonds=$(echo "$KD" | wc -w)"
	;;
*)
	damon_stat_off || ktap_exit_fail_msg "cannot turn DAMON_STAT off"
	;;
esac

MODES=$MODE
for MODE in $MODES; do
case $MODE in
tree)
	daptrace record -q -o "$TMP/r.csv" -- daptrace-tree-workload -w 4 -s 32M \
		--stagger 1s -l 8s -t "$TMP" > "$TMP/log" 2>&1 || { cat "$TMP/log"; exit 1; }
	mono=$(sed -n 's/^#meta,"monotonic_start_ns","\([0-9]*\)"$/\1/p' "$TMP/r.csv")
	for i in 0 1 2 3; do
		pid=$(sed -n "s/^worker $i pid \([0-9]*\) .*/\1/p" "$TMP/tree.txt")
		fork=$(sed -n "s/^worker $i pid [0-9]* fork_ns \([0-9]*\)$/\1/p" "$TMP/tree.txt")
		first=$(awk -F, -v p="$pid" '/^#snap,/ { s = $3; next } /^#/ { next }
			$3 == p { print s; exit }' "$TMP/r.csv")
		lat=$(awk -v f="$first" -v m="$mono" -v k="$fork" \
			'BEGIN { printf "%.1f", (f + m - k) / 1e6 }')
		echo "# BENCH mode=tree worker=$i score=$(score "$TMP/worker-$i.truth" \
			"$TMP/r.csv" | tr ' ' ,) join_ms=$lat"
	done
	echo "# BENCH mode=tree cpu_us=$(trailer "$TMP/r.csv" worker_cpu_us)" \
		"duration_ns=$(trailer "$TMP/r.csv" duration_ns)" \
		"follow_lat_max_ns=$(trailer "$TMP/r.csv" join_latency_max_ns)"
	;;
single)
	daptrace record -q -o "$TMP/r.csv" -- daptrace-tree-workload --worker 0 -s 32M \
		-l 8s -t "$TMP" > "$TMP/log" 2>&1 || { cat "$TMP/log"; exit 1; }
	echo "# BENCH mode=single worker=0 score=$(score "$TMP/worker-0.truth" "$TMP/r.csv" |
		tr ' ' ,)"
	echo "# BENCH mode=single cpu_us=$(trailer "$TMP/r.csv" worker_cpu_us)" \
		"duration_ns=$(trailer "$TMP/r.csv" duration_ns)"
	;;
build)
	rm -rf "$TMP/src"
	cp -r /opt/dtbuild "$TMP/src" || ktap_exit_fail_msg "no build tree: the toolchain payload?"
	trace_on || ktap_exit_fail_msg "cannot trace sched process events"
	(cd "$TMP/src" && daptrace record -q -o "$TMP/b.csv" -- make -j2) > "$TMP/log" 2>&1 ||
		{ cat "$TMP/log"; exit 1; }
	trace_off "$TMP/trace"
	[ -x "$TMP/src/objects-test" ] || { cat "$TMP/log"; ktap_exit_fail_msg "the build failed"; }
	procs build - "$TMP/trace" "$TMP/b.csv"
	echo "# BENCH mode=build what=rec cpu_us=$(trailer "$TMP/b.csv" worker_cpu_us)" \
		"duration_ns=$(trailer "$TMP/b.csv" duration_ns)" \
		"targets=$(trailer "$TMP/b.csv" targets)" \
		"events=$(trailer "$TMP/b.csv" process_events)" \
		"lost=$(trailer "$TMP/b.csv" process_events_lost)" \
		"follow_lat_max_ns=$(trailer "$TMP/b.csv" join_latency_max_ns)" \
		"update_us=$(sed -n 's/^#meta,"\{0,1\}update_us"\{0,1\},"\{0,1\}\([0-9]*\).*/\1/p' "$TMP/b.csv")"
	echo "# BENCH build_json build - $(daptrace report wss --by pid --json "$TMP/b.csv" |
		tr -d '\n')"
	;;
build-alone)
	rm -rf "$TMP/src"
	cp -r /opt/dtbuild "$TMP/src" || ktap_exit_fail_msg "no build tree: the toolchain payload?"
	k=0
	while read -r obj; do
		k=$((k + 1))
		echo "# BENCH mode=build-alone what=job job=$k obj=$obj"
		# the job's command as the build runs it
		cmd=$(make -s -n --no-print-directory -C "$TMP/src" "$obj" < /dev/null)
		trace_on || ktap_exit_fail_msg "cannot trace sched process events"
		# shellcheck disable=SC2086 # the command's words
		(cd "$TMP/src" && daptrace record -q -o "$TMP/a.csv" -- $cmd) < /dev/null \
			> "$TMP/log" 2>&1 ||
			{ cat "$TMP/log"; exit 1; }
		trace_off "$TMP/trace"
		[ -f "$TMP/src/$obj" ] || { cat "$TMP/log"; ktap_exit_fail_msg "$cmd failed"; }
		procs build-alone "$k" "$TMP/trace" "$TMP/a.csv"
		echo "# BENCH build_json build-alone $k $(daptrace report wss --by pid --json \
			"$TMP/a.csv" | tr -d '\n')"
	done < "$TMP/src/jobs.txt"
	;;
machine | machine-rec | one)
	idle_procs $IDLE dt-idle
	busy_proc
	sleep 2
	if [ "$MODE" = machine ]; then
		daptrace stat --json -d 20s > "$TMP/out" 2> "$TMP/log" &
	elif [ "$MODE" = machine-rec ]; then
		daptrace stat --json -s 5ms -a 100ms -u 1s -d 20s > "$TMP/out" 2> "$TMP/log" &
	else
		daptrace record -q -o "$TMP/r.csv" -p "$BUSY_PID" -s 20ms -a 1s -u 5s -d 20s \
			> "$TMP/log" 2>&1 &
	fi
	mon=$!
	# from 5 s in (the targets added, the regions split) for 12 s
	sleep 5
	c0=$(cat $DT/worker_cpu_us) u0=$(cpu_of $mon) s0=$(cat $DT/nr_samples)
	sleep 12
	c1=$(cat $DT/worker_cpu_us) u1=$(cpu_of $mon) s1=$(cat $DT/nr_samples)
	regions=$(cat $DT/nr_regions)
	targets=$(cat $DT/nr_targets 2>/dev/null || grep -c '^[0-9]' $DT/target)
	wait $mon || { cat "$TMP/log"; exit 1; }
	# and the monitor process's own CPU: clock ticks, 10 ms each (USER_HZ
	# on x86), the daptrace side's cost beside the module's worker; the
	# sampling rounds, to set against a kdamond's tuned ones
	echo "# BENCH mode=$MODE cpu_us=$((c1 - c0)) secs=12 regions=$regions targets=$targets" \
		"user_us=$(((u1 - u0) * 10000)) samples=$((s1 - s0))"
	;;
dstat-machine)
	idle_procs $IDLE dt-idle
	busy_proc
	# machine's window: 2 s, then 5 s into the monitor's 20 s, for 12 s
	sleep 7
	k0=$(kdamond_ns "$KD") a0=$(cat $DS/aggr_interval_us)
	sleep 12
	k1=$(kdamond_ns "$KD") a1=$(cat $DS/aggr_interval_us)
	echo "# BENCH mode=$MODE cpu_us=$(((k1 - k0) / 1000)) secs=12" \
		"aggr_us_start=$a0 aggr_us_end=$a1"
	;;
aging)
	idle_procs $IDLE dt-idle
	# shellcheck disable=SC2086 # STAT_ARGS is a list of options
	daptrace stat ${STAT_ARGS:-} --json --interval 8s -d 41s > "$TMP/out" 2> "$TMP/log" &
	mon=$!
	sleep 3
	aging_workload
	wait $mon || { cat "$TMP/log"; exit 1; }
	aging_done
	sed 's/^/# BENCH aging_json /' "$TMP/out"
	;;
dstat-aging)
	idle_procs $IDLE dt-idle
	t0=$(mono_ns)
	sleep 3
	aging_workload
	# when aging's stat reports: every 8 s after its start, five times
	for k in 1 2 3 4 5; do
		sleep_until $((t0 + k * 8000000000))
		now=$(mono_ns)
		free=$(sed -n 's/^MemFree: *\([0-9]*\) kB$/\1/p' /proc/meminfo)
		total=$(sed -n 's/^MemTotal: *\([0-9]*\) kB$/\1/p' /proc/meminfo)
		echo "# BENCH dstat_json {\"window_end_ns\": $now," \
			"\"aggr_interval_us\": $(cat $DS/aggr_interval_us)," \
			"\"estimated_memory_bandwidth\": $(cat $DS/estimated_memory_bandwidth)," \
			"\"mem_free_bytes\": $((free * 1024)), \"mem_total_bytes\": $((total * 1024))," \
			"\"memory_idle_ms_percentiles\": [$(cat $DS/memory_idle_ms_percentiles)]}"
	done
	aging_done
	;;
scale)
	[ "$N" -gt 0 ] && idle_procs "$N" dt-idle
	sleep 2
	daptrace stat --json --interval 5s -d 25s > "$TMP/out" 2> "$TMP/log" &
	mon=$!
	sleep 8
	c0=$(cat $DT/worker_cpu_us) u0=$(cpu_of $mon)
	sleep 12
	c1=$(cat $DT/worker_cpu_us) u1=$(cpu_of $mon)
	regions=$(cat $DT/nr_regions)
	targets=$(cat $DT/nr_targets 2>/dev/null || grep -c '^[0-9]' $DT/target)
	wait $mon || { cat "$TMP/log"; exit 1; }
	hz=100	# USER_HZ on x86
	echo "# BENCH mode=scale n=$N cpu_us=$((c1 - c0)) user_us=$(((u1 - u0) * 1000000 / hz))" \
		"secs=12 regions=$regions targets=$targets" \
		"no_room=$(sed -n 's/.*"not_added": *\([0-9]*\).*/\1/p' "$TMP/out" | tail -n 1)"
	;;
*)
	ktap_exit_fail_msg "bench/follow-guest.sh: MODE '$MODE'?"
	;;
esac
done
ktap_test_pass "bench follow $MODES"
kill "${IDLE_PID:-}" "${BUSY_PID:-}" 2>/dev/null
wait
rm -rf "$TMP"
ktap_finished
