#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# daptrace stat against the real module on a guest running more than 200
# processes: every user process becomes a target (no kernel thread), the
# report names the whole and each cgroup, in text and as JSON lines with
# DAMON_STAT's 101 idle-time percentiles (monotonic, as percentiles are),
# periodic reports come at the interval, the module is left off without
# stale targets, and flags that do not apply are refused.

. "$(dirname "$0")/../lib/ktap.sh"
. "$(dirname "$0")/../lib/setup.sh"

D=/sys/kernel/daptrace
TMP=${TMPDIR:-/tmp}/follow-stat.$$
CG=/sys/fs/cgroup
IDLE=220

ktap_print_header
ktap_require_tools daptrace daptrace-tree-workload
mkdir -p "$TMP"
cgroup2_mount $CG || ktap_skip_all "cannot mount cgroup2 (no CONFIG_CGROUPS?)"
CG=$CG_ROOT
ktap_set_plan 9

# many mostly idle processes in a cgroup of their own, one busy one elsewhere
mkdir -p $CG/dt-idle $CG/dt-busy
sh -c "echo \$\$ > $CG/dt-idle/cgroup.procs && exec daptrace-tree-workload -p idle \
	-w $IDLE -s 64K -l 120s -t $TMP" &
idle=$!
sh -c "echo \$\$ > $CG/dt-busy/cgroup.procs && exec daptrace-tree-workload --worker 0 \
	-s 16M -l 120s -t $TMP" &
busy=$!
i=0
while [ "$(wc -l < $CG/dt-idle/cgroup.procs)" -le $IDLE ] && [ $i -lt 600 ]; do
	sleep 0.1
	i=$((i + 1))
done
nproc=$(ls -d /proc/[0-9]* | wc -l)
ktap_print_msg "$nproc pids in /proc, $(wc -l < $CG/dt-idle/cgroup.procs) in dt-idle"

daptrace stat --json -d 8s > "$TMP/stat.json" 2> "$TMP/stat.err" &
stat=$!
sleep 4
# the module's targets while stat runs (one page of them: all, here)
cat $D/target > "$TMP/targets"
wait $stat
st=$?
if [ $st -eq 0 ] && [ "$(wc -l < "$TMP/stat.json")" = 1 ]; then
	ktap_test_pass "stat --json -d: one report at the end"
else
	sed 's/^/# /' "$TMP/stat.err" "$TMP/stat.json"
	ktap_test_fail "stat --json -d: one report at the end" "status $st"
fi
# the figures, by a JSON-blind reader: busybox has no JSON tool
targets=$(sed -n 's/.*"targets": *\([0-9]*\).*/\1/p' "$TMP/stat.json")
procs=$(sed -n 's/^{"processes": *\([0-9]*\),.*/\1/p' "$TMP/stat.json")
ktap_print_msg "targets $targets, processes with memory in the window $procs"
sed -n 's/.*\("worker_cpu_percent": *[0-9.]*\).*/# \1/p' "$TMP/stat.json"
if [ "${targets:-0}" -gt $IDLE ] && [ "${procs:-0}" -gt $IDLE ]; then
	ktap_test_pass "every user process is a target"
else
	ktap_test_fail "every user process is a target" "targets '$targets', processes '$procs'"
fi
# no kernel thread (PF_KTHREAD, 0x00200000, in /proc/PID/stat's flags)
kt=
for p in $(grep '^[0-9]' "$TMP/targets"); do
	# the flags are the 9th field, the 7th after the comm's closing ')'
	f=$(sed 's/.*) //' "/proc/$p/stat" 2>/dev/null | awk '{ print $7 }')
	[ -n "$f" ] && [ $((f / 2097152 % 2)) = 1 ] && kt="$kt $p"
done
if [ "$(grep -c '^[0-9]' "$TMP/targets")" -gt $IDLE ] && [ -z "$kt" ] &&
   ! grep -qx 2 "$TMP/targets"; then
	ktap_test_pass "no kernel thread is a target"
else
	ktap_test_fail "no kernel thread is a target" "kernel threads:$kt"
fi
# 101 percentiles, in order, for the whole and for each cgroup
pct=$(sed 's/"cgroups".*//; s/.*"memory_idle_ms_percentiles": *\[\([^]]*\)\].*/\1/' "$TMP/stat.json")
if echo "$pct" | awk -F, '{ for (i = 2; i <= NF; i++) if ($i + 0 < $(i - 1) + 0) bad = 1 }
		END { exit NF != 101 || bad }'; then
	ktap_test_pass "memory_idle_ms_percentiles: 101, in order"
else
	ktap_test_fail "memory_idle_ms_percentiles: 101, in order" "$pct"
fi
if grep -q '"cgroup": *"/dt-idle"' "$TMP/stat.json" &&
   grep -q '"cgroup": *"/dt-busy"' "$TMP/stat.json"; then
	ktap_test_pass "per-cgroup figures"
else
	ktap_test_fail "per-cgroup figures" "no /dt-idle or /dt-busy"
fi

# text, every second: three reports, the whole and the cgroups.  Counted
# in reports, not seconds: a tick that finds no new window prints nothing
# (nothing new to say), and on a loaded host the first window of 227
# targets may come after the first tick, the third after a fixed 3.5 s (a
# run beside a compile printed two).  So: until three reports, then Ctrl-C;
# 60 s only catch a hang.
# (The file exists before the child opens it: the loop reads it at once.)
: > "$TMP/stat.txt"
daptrace stat --interval 1s > "$TMP/stat.txt" 2> "$TMP/stat.err" &
sp=$!
i=0
while [ "$(grep -c '^all ' "$TMP/stat.txt")" -lt 3 ] && [ $i -lt 600 ] &&
      kill -0 $sp 2>/dev/null; do
	sleep 0.1
	i=$((i + 1))
done
kill -INT $sp 2>/dev/null
wait $sp
st=$?
n=$(grep -c '^all ' "$TMP/stat.txt")
if [ $st -eq 0 ] && [ "$n" -ge 3 ] && grep -q '^/dt-busy ' "$TMP/stat.txt"; then
	ktap_test_pass "stat --interval: a report each interval ($n)"
else
	sed 's/^/# /' "$TMP/stat.txt" "$TMP/stat.err"
	ktap_test_fail "stat --interval: a report each interval" "status $st, $n reports"
fi
head -n 4 "$TMP/stat.txt" | sed 's/^/# /'
# --cgroup: those processes only
daptrace stat --json --cgroup /dt-busy -d 3s > "$TMP/busy.json" 2>&1
t=$(sed -n 's/.*"targets": *\([0-9]*\).*/\1/p' "$TMP/busy.json")
if [ "$t" = 1 ]; then
	ktap_test_pass "stat --cgroup: the cgroup's processes"
else
	sed 's/^/# /' "$TMP/busy.json"
	ktap_test_fail "stat --cgroup: the cgroup's processes" "targets '$t'"
fi
out=$(daptrace stat -p 1 2>&1)
if [ $? -eq 2 ] && echo "$out" | grep -q -- "--pid does not apply"; then
	ktap_test_pass "stat -p: refused"
else
	ktap_test_fail "stat -p: refused" "$out"
fi
if dt_left_off; then
	ktap_test_pass "module left off, no stale target"
else
	ktap_test_fail "module left off, no stale target" \
		"state $DT_STATE, targets '$(echo $DT_TARGETS | head -c 80)'"
fi

kill $idle $busy 2>/dev/null
wait
for p in $(cat $CG/dt-idle/cgroup.procs $CG/dt-busy/cgroup.procs 2>/dev/null); do
	echo "$p" > $CG/cgroup.procs
done
rmdir $CG/dt-idle $CG/dt-busy 2>/dev/null
rm -rf "$TMP"
ktap_finished
