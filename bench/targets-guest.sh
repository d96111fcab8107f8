#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# A measurement, not a test (run by bench/targets.sh as an extra test of
# selftests/vm/run.sh, one boot per run): it prints "# BENCH ..." rows and
# fails only if a run could not be made.  bench/targets.sh writes N (the
# number of targets) on the line after this comment block.
#
# A cgroup of N processes: one stopped worker with a 4 MiB hot set in
# 32 MiB (daptrace-tree-workload --worker 0) and N - 1 that populated
# 64 KiB and sleep (for N > 1: the idle pattern's parent and its N - 2
# children).  `daptrace record --cgroup` at the default attributes
# (5 ms / 100 ms) for 34 s: the worker's CPU and daptrace's own
# (user + system) over 12 s from 8 s in, everyone idle; then the worker is
# resumed (SIGCONT; the wake time is CLOCK_MONOTONIC, from
# /proc/timer_list, just before) and runs 10 s.  daptrace-score against a
# truth whose hot set starts at the wake: the time from the wake to the end
# of the first window with recall >= 0.9, and the median recall of the
# windows after it.

. /selftests/lib/ktap.sh

DT=/sys/kernel/daptrace
TMP=${TMPDIR:-/tmp}/bench-targets.$$
CG=/sys/fs/cgroup
G=$CG/dt-targets

# cpu_of PID: its user + system CPU time in clock ticks
cpu_of() {
	awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null
}

# mono_ns: CLOCK_MONOTONIC now, the clock of the truth and the snapshots
# (/proc/timer_list's header, read up to that line only: the kernel stamps it
# when the read starts, and the whole file lists every sleeping process's
# timer: 2.7 s to read with 4096 of them, all of it between the stamp and
# what the caller does next)
mono_ns() {
	awk '/^now at /{ print $3; exit }' /proc/timer_list
}

# trailer FILE KEY
trailer() {
	sed -n "s/^#end,\"\{0,1\}$2\"\{0,1\},\"\{0,1\}\([^\"]*\)\"\{0,1\}$/\1/p" "$1"
}

# step WHAT: where the run is, with the guest's uptime (a run that times
# out shows how far it got)
step() {
	echo "# targets $N: $* at $(cut -d' ' -f1 /proc/uptime) s"
}

# procs: the processes in the cgroup
procs() {
	wc -l < $G/cgroup.procs
}

ktap_print_header
ktap_set_plan 1
grep -q ' cgroup2 ' /proc/mounts || { mkdir -p $CG; mount -t cgroup2 none $CG; }
mkdir -p $G "$TMP/hot" "$TMP/idle"

sh -c "echo \$\$ > $G/cgroup.procs && exec daptrace-tree-workload --worker 0 -s 32M \
	-l 600s -t $TMP/hot" &
HOT=$!
while ! grep -q '^hot 0' "$TMP/hot/worker-0.truth" 2>/dev/null; do
	sleep 0.1
done
kill -STOP $HOT
step "the worker stopped"
t0=$(date +%s)
if [ "$N" -gt 1 ]; then
	sh -c "echo \$\$ > $G/cgroup.procs && exec daptrace-tree-workload -p idle \
		-w $((N - 2)) -s 64K -l 900s -t $TMP/idle" &
	IDLE=$!
	i=0
	while [ "$(procs)" -lt "$N" ] && [ $i -lt 3000 ]; do
		sleep 0.1
		i=$((i + 1))
	done
fi
[ "$(procs)" -eq "$N" ] ||
	ktap_exit_fail_msg "bench/targets-guest.sh: $(procs) processes in the cgroup, not $N"
spawn_s=$(($(date +%s) - t0))
step "$N processes in the cgroup"
sleep 2

daptrace record -q -o "$TMP/r.csv" --cgroup /dt-targets -d 34s > "$TMP/log" 2>&1 &
mon=$!
sleep 8
c0=$(cat $DT/worker_cpu_us) u0=$(cpu_of $mon)
step "recording, $(cat $DT/nr_regions) regions"
sleep 12
c1=$(cat $DT/worker_cpu_us) u1=$(cpu_of $mon)
regions=$(cat $DT/nr_regions)
targets=$(cat $DT/nr_targets 2>/dev/null || grep -c '^[0-9]' $DT/target)
wake=$(mono_ns)
kill -CONT $HOT
step "the worker resumed"
wait $mon || { cat "$TMP/log"; ktap_exit_fail_msg "bench/targets-guest.sh: record failed"; }

step "recorded, $(wc -c < "$TMP/r.csv") bytes"
# the truth: the worker's map, its hot set from the wake on
{
	echo "# daptrace-workload truth v1"
	grep -E '^(pid|pattern|map) ' "$TMP/hot/worker-0.truth"
	echo "phase 0 0"
	echo "phase 1 $wake"
	sed -n 's/^hot 0 /hot 1 /p' "$TMP/hot/worker-0.truth"
	echo "end $(mono_ns)"
} > "$TMP/truth"
daptrace-score --truth "$TMP/truth" --record "$TMP/r.csv" --aggr-us 100000 \
	--settle 0 > "$TMP/score" 2>&1
# the windows from the wake on, for the recall after it
sed 's/^phase 0 0$/phase 0 '"$wake"'/; /^phase 1 /d; s/^hot 1 /hot 0 /' "$TMP/truth" \
	> "$TMP/truth1"
daptrace-score --truth "$TMP/truth1" --record "$TMP/r.csv" --aggr-us 100000 \
	--settle 0 > "$TMP/score1" 2>&1
step "scored"
val() {
	v=$(sed -n "s/^$1 \([-0-9.a-z]*\).*/\1/p" "$2")
	echo "${v:-nan}"
}
hz=100	# USER_HZ on x86
echo "# BENCH n=$N targets=$targets regions=$regions spawn_s=$spawn_s" \
	"cpu_us=$((c1 - c0)) user_us=$(((u1 - u0) * 1000000 / hz)) secs=12" \
	"detect_s=$(val detect_latency_mean_s "$TMP/score")" \
	"undetected=$(val phases_undetected "$TMP/score")" \
	"recall=$(val recall_median "$TMP/score1")" \
	"recall_ge09=$(val recall_windows_ge_0.9 "$TMP/score1")" \
	"hot_seen=$(val hot_seen_median "$TMP/score1")" \
	"windows=$(val scored_windows "$TMP/score1")" \
	"missed=$(trailer "$TMP/r.csv" missed)" \
	"est_within=$(val 'recall_est_windows_within_0.05' "$TMP/score1")" \
	"est_windows=$(val accuracy_windows "$TMP/score1")" \
	"recall_est_all=$(val recall_est_all "$TMP/score1")" \
	"recall_truth_all=$(val recall_truth_all "$TMP/score1")" \
	"worker_cpu_total_us=$(trailer "$TMP/r.csv" worker_cpu_us)"
grep -q '^# FAIL\|^daptrace-score' "$TMP/score1" && sed 's/^/# /' "$TMP/score1"
ktap_test_pass "bench targets $N"
kill "$HOT" ${IDLE:+"$IDLE"} 2>/dev/null
kill -CONT "$HOT" 2>/dev/null
wait
rm -rf "$TMP"
ktap_finished
