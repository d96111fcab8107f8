#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# cgroup v2 against the real module: `daptrace record --cgroup PATH`
# follows the processes of a cgroup and of the cgroups below it.  A process
# moved into the cgroup joins within one update interval, a process forked
# inside joins at once, one moved out leaves (an #exit row, "moved"), one
# that exits leaves too; the reports give per-cgroup totals.  Bad input:
# a path that does not exist, a directory that is no cgroup v2, an empty
# cgroup.  The busybox guest mounts nothing: cgroup2 is mounted here.

. "$(dirname "$0")/../lib/ktap.sh"
. "$(dirname "$0")/../lib/bounds.sh"
. "$(dirname "$0")/../lib/setup.sh"

TMP=${TMPDIR:-/tmp}/follow-cgroup.$$
CG=/sys/fs/cgroup
UPDATE_NS=1000000000

meta() {
	sed -n "s/^#meta,\"\{0,1\}$2\"\{0,1\},\"\{0,1\}\([^\"]*\)\"\{0,1\}$/\1/p" "$1"
}
trailer() {
	sed -n "s/^#end,\"\{0,1\}$2\"\{0,1\},\"\{0,1\}\([^\"]*\)\"\{0,1\}$/\1/p" "$1"
}

# The clock of the record's times, from /proc/uptime (10 ms steps; the
# guest never suspends, so boot time and monotonic time agree).
now_ns() {
	awk '{ printf "%d", $1 * 1000000000 }' /proc/uptime
}

# A process that waits: an idle tree-workload worker, in cgroup $1.
start_in() {
	sh -c "echo \$\$ > $1/cgroup.procs && exec daptrace-tree-workload -p idle -w 1 \
		-s 1M -l 30s -t $TMP/$2" &
}

ktap_print_header
ktap_require_tools daptrace daptrace-tree-workload
mkdir -p "$TMP" "$TMP/a" "$TMP/b" "$TMP/c" "$TMP/d"
cgroup2_mount $CG || ktap_skip_all "cannot mount cgroup2 (no CONFIG_CGROUPS?)"
CG=$CG_ROOT
ktap_set_plan 11

# Bad input: clear messages, exit status 2, nothing started.
out=$(daptrace record -q -o "$TMP/x.csv" --cgroup /no/such/cgroup 2>&1)
st=$?
if [ $st -eq 2 ] && echo "$out" | grep -q "no such cgroup: /no/such/cgroup"; then
	ktap_test_pass "--cgroup: a path that does not exist is refused"
else
	ktap_test_fail "--cgroup: a path that does not exist is refused" "status $st: $out"
fi
out=$(daptrace record -q -o "$TMP/x.csv" --cgroup /tmp 2>&1)
st=$?
if [ $st -eq 2 ] && echo "$out" | grep -q "is not a cgroup v2 directory"; then
	ktap_test_pass "--cgroup: a directory that is no cgroup v2 is refused"
else
	ktap_test_fail "--cgroup: a directory that is no cgroup v2 is refused" "status $st: $out"
fi
mkdir -p $CG/dt-empty
out=$(daptrace record -q -o "$TMP/x.csv" --cgroup $CG/dt-empty 2>&1)
st=$?
if [ $st -eq 1 ] && echo "$out" | grep -q "no process to monitor in the cgroup"; then
	ktap_test_pass "--cgroup: an empty cgroup is an error"
else
	ktap_test_fail "--cgroup: an empty cgroup is an error" "status $st: $out"
fi
rmdir $CG/dt-empty
[ -e "$TMP/x.csv" ] && ktap_print_msg "a record was left behind"

# The cgroup dt with a child cgroup dt/sub.  A runs in dt; B in the root,
# moved into dt/sub after 2 s; a tree in dt/sub forks a worker after 3 s;
# A moves out after 5 s.
mkdir -p $CG/dt/sub
start_in $CG/dt a
a=$!
start_in $CG b
b=$!
sh -c "echo \$\$ > $CG/dt/sub/cgroup.procs && exec daptrace-tree-workload -w 2 \
	-s 2M --stagger 3s -l 4s -t $TMP/c" &
c=$!
sleep 1
daptrace record -q -o "$TMP/cg.csv" --cgroup /dt --aggr 100ms --update 1s -d 9s \
	> "$TMP/rec.log" 2>&1 &
rec=$!
sleep 2
moved_in=$(now_ns)
echo $b > $CG/dt/sub/cgroup.procs
sleep 3
echo $a > $CG/cgroup.procs
wait $rec
st=$?
REC=$TMP/cg.csv
if [ $st -eq 0 ] && [ "$(tail -n 1 "$REC")" = "#eof" ]; then
	ktap_test_pass "record --cgroup: exit status 0, record complete"
else
	sed 's/^/# /' "$TMP/rec.log"
	ktap_test_fail "record --cgroup: exit status 0, record complete" "exit status $st"
fi
sed -n 's/^#end,"\(targets[a-z_]*\|not_added[a-z_]*\|join_latency[a-z_]*\)","\(.*\)"$/# trailer \1 \2/p' "$REC"
mono=$(meta "$REC" monotonic_start_ns)

# B moved in: joined within one update interval (its #target row's time)
t=$(awk -F, -v p="$b" '$1 == "#target" && $2 == p { print $6; exit }' "$REC")
if [ -n "$t" ]; then
	lat=$(awk -v t="$t" -v m="$mono" -v k="$moved_in" 'BEGIN { printf "%d", t + m - k }')
	ktap_print_msg "moved in: joined $((lat / 1000000)) ms after the move"
	if [ "$lat" -le $((UPDATE_NS + 100000000)) ]; then
		ktap_test_pass "a process moved in joins within the update interval"
	else
		bound_fail "a process moved in joins within the update interval" \
			"$((lat / 1000000)) ms after the move"
	fi
else
	ktap_test_fail "a process moved in joins within the update interval" "no #target row of $b"
fi
# its cgroup, as the record names it
if awk -F, -v p="$b" '$1 == "#target" && $2 == p' "$REC" | grep -q '"/dt/sub"'; then
	ktap_test_pass "its #target row names its cgroup"
else
	ktap_test_fail "its #target row names its cgroup" \
		"$(awk -F, -v p="$b" '$1 == "#target" && $2 == p' "$REC")"
fi
# a worker forked inside, after the start: joined
w1=$(sed -n 's/^worker 1 pid \([0-9]*\) .*/\1/p' "$TMP/c/tree.txt")
if [ -n "$w1" ] && grep -q "^#target,$w1," "$REC"; then
	ktap_test_pass "a process forked inside joins"
else
	ktap_test_fail "a process forked inside joins" "worker 1 '$w1' has no #target row"
fi
# A moved out: it left, moved
if grep -q "^#exit,$a,[0-9]*,moved$" "$REC"; then
	ktap_test_pass "a process moved out leaves"
else
	ktap_test_fail "a process moved out leaves" "$(grep "^#exit,$a," "$REC")"
fi
moved=$(trailer "$REC" targets_moved_out)
exited=$(trailer "$REC" targets_exited)
if [ "${moved:-0}" -ge 1 ] && [ "${exited:-0}" -ge 1 ]; then
	ktap_test_pass "moves and exits counted ($moved moved out, $exited exited)"
else
	ktap_test_fail "moves and exits counted" "moved '$moved', exited '$exited'"
fi
# per-cgroup totals
daptrace report wss --by cgroup "$REC" > "$TMP/by-cg" 2>&1
if grep -q '^/dt/sub ' "$TMP/by-cg" && grep -q '^/dt ' "$TMP/by-cg"; then
	ktap_test_pass "report wss --by cgroup: per-cgroup totals"
else
	sed 's/^/# /' "$TMP/by-cg"
	ktap_test_fail "report wss --by cgroup: per-cgroup totals" "no /dt or /dt/sub row"
fi
if dt_left_off; then
	ktap_test_pass "module left off, no stale target"
else
	ktap_test_fail "module left off, no stale target" "state $DT_STATE, targets '$DT_TARGETS'"
fi

kill $a $b $c 2>/dev/null
wait
for p in $(cat $CG/dt/sub/cgroup.procs $CG/dt/cgroup.procs 2>/dev/null); do
	echo "$p" > $CG/cgroup.procs
done
rmdir $CG/dt/sub $CG/dt 2>/dev/null
rm -rf "$TMP"
ktap_finished
