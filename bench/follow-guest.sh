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
#            own CPU, targets, regions.

. /selftests/lib/ktap.sh

DT=/sys/kernel/daptrace
TMP=${TMPDIR:-/tmp}/bench-follow.$$
CG=/sys/fs/cgroup
IDLE=220

# idle_procs N CGROUP: N processes that populate 64 KiB and sleep, in CGROUP
idle_procs() {
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

ktap_print_header
ktap_set_plan 1
mkdir -p "$TMP/idle"
grep -q ' cgroup2 ' /proc/mounts || { mkdir -p $CG; mount -t cgroup2 none $CG; }

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
	c0=$(cat $DT/worker_cpu_us)
	sleep 12
	c1=$(cat $DT/worker_cpu_us)
	regions=$(cat $DT/nr_regions)
	targets=$(cat $DT/nr_targets 2>/dev/null || grep -c '^[0-9]' $DT/target)
	wait $mon || { cat "$TMP/log"; exit 1; }
	echo "# BENCH mode=$MODE cpu_us=$((c1 - c0)) secs=12 regions=$regions targets=$targets"
	;;
aging)
	idle_procs $IDLE dt-idle
	mkdir -p $CG/dt-aging "$TMP/aging"
	daptrace stat --json --interval 8s -d 41s > "$TMP/out" 2> "$TMP/log" &
	mon=$!
	sleep 3
	sh -c "echo \$\$ > $CG/dt-aging/cgroup.procs && exec daptrace-tree-workload -p aging \
		-s 64M --areas 4 --step 8s -l 60s -t $TMP/aging" &
	wait $mon || { cat "$TMP/log"; exit 1; }
	sed 's/^/# BENCH aging_truth /' "$TMP/aging/aging.txt"
	sed 's/^/# BENCH aging_json /' "$TMP/out"
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
ktap_test_pass "bench follow $MODE"
kill "${IDLE_PID:-}" "${BUSY_PID:-}" 2>/dev/null
wait
rm -rf "$TMP"
ktap_finished
