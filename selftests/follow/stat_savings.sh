#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# daptrace stat --savings against the real module: the savings curve live,
# per cgroup.  A workload in a cgroup of its own holds a hot set (read all
# the time), a warm one (read every second) and a cold one (never read);
# stat follows the machine.  Within 30 s the cgroup's memory saved now at
# 3 s holds its cold set, resident (>= 90 % of it: the regions that also
# hold warm or hot bytes must first split at the sets' edges, seconds on
# the oldest kernel), and not its hot set (at most its VmRSS less 90 % of
# the hot set); when the
# workload is killed, its cgroup keeps its curve: nothing saved now, the
# cold set never reused (its process is gone), no process.  The curve's
# arithmetic is the host tests' (test_stat, test_report_savings); this is
# the module's windows, the follower's exits and the cgroups feeding it.

. "$(dirname "$0")/../lib/ktap.sh"
. "$(dirname "$0")/../lib/setup.sh"

TMP=${TMPDIR:-/tmp}/follow-stat-savings.$$
CG=/sys/fs/cgroup
HOT_MB=8
WARM_MB=8
COLD_MB=32
MiB=1048576

ktap_print_header
ktap_require_tools daptrace daptrace-policy-workload
mkdir -p "$TMP"
cgroup2_mount $CG || ktap_skip_all "cannot mount cgroup2 (no CONFIG_CGROUPS?)"
CG=$CG_ROOT
ktap_set_plan 5

# sav_field LINE CGROUP KEY: in a `stat --json --savings` LINE, KEY of
# CGROUP's savings object (in its curve, the first threshold's); empty if
# there is none.  By position, as busybox has no JSON tool: the object
# ends with its "cgroup" key and begins with the last "processes" before.
sav_field() {
	printf '%s\n' "$1" | awk -v cg="$2" -v key="$3" '{
		s = substr($0, index($0, "\"savings\":"))
		if (!match(s, "\"cgroup\": *\"" cg "\"")) exit
		obj = substr(s, 1, RSTART)
		while (match(obj, "[{] *\"processes\"") && RSTART > 1)
			obj = substr(obj, RSTART + 1)
		if (!match(obj, "\"" key "\": *[0-9.]+")) exit
		v = substr(obj, RSTART, RLENGTH)
		sub(/.*: */, "", v)
		print v
	}'
}

# last_line: stat's newest report
last_line() {
	tail -n 1 "$TMP/stat.json"
}

mkdir -p $CG/dt-sav
sh -c "echo \$\$ > $CG/dt-sav/cgroup.procs && exec daptrace-policy-workload reclaim \
	--hot ${HOT_MB}M --warm ${WARM_MB}M --cold ${COLD_MB}M --duration 120 \
	--pidfile $TMP/pid" > "$TMP/wl.out" 2>&1 &
wl=$!
i=0
while [ ! -s "$TMP/pid" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
pid=$(cat "$TMP/pid" 2>/dev/null)
[ -n "$pid" ] || ktap_exit_fail_msg "the workload did not start: $(cat "$TMP/wl.out")"

# fixed intervals: the thresholds' seconds are the windows' own
: > "$TMP/stat.json"
daptrace stat --json --interval 1s --thresholds 3s,6s --no-auto-intervals -s 10ms -a 200ms \
	> "$TMP/stat.json" 2> "$TMP/stat.err" &
sp=$!
# until the report that has the cold set saved, 30 s at most (60 s of
# polls only catch a hang of the first reports)
want=$((COLD_MB * MiB * 9 / 10))
i=0
while [ $i -lt 600 ] && kill -0 $sp 2>/dev/null; do
	live=$(last_line)
	saved=$(sav_field "$live" /dt-sav saved_now_bytes)
	# the report's own "seconds", after its "time" (the curves have theirs)
	secs=$(echo "$live" | sed -n 's/.*"time": *"[^"]*", *"seconds": *\([0-9]*\).*/\1/p')
	[ "${saved:-0}" -lt $want ] && [ "${secs:-0}" -lt 30 ] || break
	sleep 0.1
	i=$((i + 1))
done
rss_kb=$(proc_kb "/proc/$pid/status" VmRSS)
kill -KILL "$wl" "$pid" 2>/dev/null
wait "$wl" 2>/dev/null
# until the follower has forgotten it (2 s after it left) and a report said so
i=0
while [ "$(sav_field "$(last_line)" /dt-sav processes)" != 0 ] && [ $i -lt 300 ] &&
      kill -0 $sp 2>/dev/null; do
	sleep 0.1
	i=$((i + 1))
done
gone=$(last_line)
kill -INT $sp 2>/dev/null
wait $sp
st=$?

if [ $st -eq 0 ] && echo "$live" | grep -q '"savings": *{"page_size"'; then
	ktap_test_pass "stat --savings: a curve in each report"
else
	sed 's/^/# /' "$TMP/stat.err"
	tail -n 2 "$TMP/stat.json" | sed 's/^/# /'
	ktap_test_fail "stat --savings: a curve in each report" "status $st"
fi

procs=$(sav_field "$live" /dt-sav processes)
ktap_print_msg "/dt-sav after ${secs:-?} s: $procs process(es), saved now at 3 s ${saved:-?} B," \
	"VmRSS ${rss_kb:-?} kB (cold ${COLD_MB} MiB, hot ${HOT_MB} MiB, warm ${WARM_MB} MiB)"
if [ "$procs" = 1 ] && [ -n "$saved" ] &&
   awk -v s="$saved" -v c=$((COLD_MB * MiB)) 'BEGIN { exit !(s >= 0.9 * c) }'; then
	ktap_test_pass "the cold set is saved at 3 s"
else
	ktap_test_fail "the cold set is saved at 3 s" "saved '${saved}', processes '$procs'"
fi
if [ -n "$saved" ] && [ -n "$rss_kb" ] &&
   awk -v s="$saved" -v r="$rss_kb" -v h=$((HOT_MB * MiB)) \
	'BEGIN { exit !(s <= r * 1024 - 0.9 * h) }'; then
	ktap_test_pass "the hot set is not"
else
	ktap_test_fail "the hot set is not" "saved '${saved}' B, VmRSS '${rss_kb}' kB"
fi

now=$(sav_field "$gone" /dt-sav saved_now_bytes)
never=$(sav_field "$gone" /dt-sav never_reused_bytes)
procs=$(sav_field "$gone" /dt-sav processes)
ktap_print_msg "/dt-sav after the kill: $procs process(es), saved now ${now:-?} B," \
	"never reused ${never:-?} B"
if [ "$procs" = 0 ] && [ "$now" = 0 ] && [ -n "$never" ] &&
   awk -v n="$never" -v c=$((COLD_MB * MiB)) 'BEGIN { exit !(n >= 0.9 * c) }'; then
	ktap_test_pass "a cgroup whose process is gone: its reclaimed memory never reused"
else
	tail -n 1 "$TMP/stat.json" | sed 's/^/# /'
	ktap_test_fail "a cgroup whose process is gone: its reclaimed memory never reused" \
		"processes '$procs', saved now '$now', never reused '$never'"
fi
if dt_left_off; then
	ktap_test_pass "module left off, no stale target"
else
	ktap_test_fail "module left off, no stale target" \
		"state $DT_STATE, targets '$(echo $DT_TARGETS | head -c 80)'"
fi

rmdir $CG/dt-sav 2>/dev/null
rm -rf "$TMP"
ktap_finished
