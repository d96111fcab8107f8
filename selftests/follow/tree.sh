#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Process trees against the real module: `daptrace record -- CMD` follows
# the processes CMD starts while monitoring runs.  The workload
# (daptrace-tree-workload) starts four workers a second apart, each
# exec()ing first, each touching its own hot set from two threads (a sweep
# a millisecond each, asleep in between: eight threads sweeping back to
# back kept the guest's two CPUs busy, and each worker ran in bursts 15 to
# 30 ms apart, its hot set untouched across checks), and runs two
# commands through vfork(); then the workers exit one by one.
# Checked: every worker joins within one update interval of its fork
# (measured: the start of the first window holding its regions), its hot
# set is found as a single process's would be (daptrace-score: median
# precision and recall >= 0.9), its exit is recorded and counted, no thread
# ever becomes a target, the reports group the tree by process and command;
# -p PID -i follows a running tree, --no-inherit does not; the module is
# left off without stale targets.

. "$(dirname "$0")/../lib/ktap.sh"
. "$(dirname "$0")/../lib/bounds.sh"
. "$(dirname "$0")/../lib/setup.sh"

D=/sys/kernel/daptrace
TMP=${TMPDIR:-/tmp}/follow-tree.$$
WORKERS=4
UPDATE_NS=1000000000
SCORE_ARGS="--min-precision 0.9 --min-recall 0.9"

# meta FILE KEY, trailer FILE KEY: a record's header or trailer value
meta() {
	sed -n "s/^#meta,\"\{0,1\}$2\"\{0,1\},\"\{0,1\}\([^\"]*\)\"\{0,1\}$/\1/p" "$1"
}
trailer() {
	sed -n "s/^#end,\"\{0,1\}$2\"\{0,1\},\"\{0,1\}\([^\"]*\)\"\{0,1\}$/\1/p" "$1"
}

# first_window FILE PID: the start (ns since the record's start) of the
# first window with a region of PID, or nothing
first_window() {
	awk -F, -v p="$2" '/^#snap,/ { s = $3; next } /^#/ { next }
		$3 == p { print s; exit }' "$1"
}

# left_off NAME: the module is off and has no target
left_off() {
	if dt_left_off; then
		ktap_test_pass "$1: module left off, no stale target"
	else
		ktap_test_fail "$1: module left off, no stale target" \
			"state $DT_STATE, targets '$DT_TARGETS'"
		ktap_print_msg "target_status: $(tr '\n' ' ' < $D/target_status)"
		for t in $DT_TARGETS; do
			ktap_print_msg "$t: $(grep -E "^#(target|exit),$t," "$REC" | tr '\n' ' ')"
		done
		ktap_print_msg "log: $(tail -n 5 "$TMP/rec.log" | tr '\n' ' ')"
	fi
}

ktap_print_header
ktap_require_tools daptrace daptrace-tree-workload daptrace-score
mkdir -p "$TMP"
ktap_set_plan $((WORKERS * 3 + 12))

# 1. record -- CMD: the whole tree.
REC=$TMP/tree.csv
daptrace record -q -o "$REC" --aggr 100ms --update 1s -- \
	daptrace-tree-workload -w $WORKERS -s 32M --stagger 1s -l 6s --exec --threads \
	--sweep-period 1ms --vfork 2 -t "$TMP" > "$TMP/rec.log" 2>&1
st=$?
if [ $st -eq 0 ] && [ "$(tail -n 1 "$REC")" = "#eof" ]; then
	ktap_test_pass "record -- tree: exit status 0, record complete"
else
	sed 's/^/# /' "$TMP/rec.log"
	ktap_test_fail "record -- tree: exit status 0, record complete" "exit status $st"
fi
reason=$(trailer "$REC" reason)
if [ "$reason" = "command exited" ]; then
	ktap_test_pass "record -- tree: ends when the tree has exited"
else
	ktap_test_fail "record -- tree: ends when the tree has exited" "reason '$reason'"
fi
sed -n 's/^#end,"\(targets[a-z_]*\|not_added[a-z_]*\|join_latency[a-z_]*\|process_[a-z_]*\)","\(.*\)"$/# trailer \1 \2/p' "$REC"

mono=$(meta "$REC" monotonic_start_ns)
root=$(sed -n 's/^#target,\([0-9]*\),.*/\1/p' "$REC" | head -n 1)
for i in $(seq 0 $((WORKERS - 1))); do
	pid=$(sed -n "s/^worker $i pid \([0-9]*\) fork_ns.*/\1/p" "$TMP/tree.txt")
	fork=$(sed -n "s/^worker $i pid [0-9]* fork_ns \([0-9]*\)$/\1/p" "$TMP/tree.txt")
	first=$(first_window "$REC" "$pid")
	# joined: its first window started within one update interval of its fork
	if [ -z "$pid" ] || [ -z "$first" ]; then
		ktap_test_fail "worker $i joins within the update interval" "pid '$pid': no region"
	else
		lat=$(awk -v f="$first" -v m="$mono" -v k="$fork" \
			'BEGIN { printf "%d", f + m - k }')
		ktap_print_msg "worker $i (pid $pid): first window $((lat / 1000000)) ms after its fork"
		if [ "$lat" -le $UPDATE_NS ]; then
			ktap_test_pass "worker $i joins within the update interval"
		else
			bound_fail "worker $i joins within the update interval" \
				"$((lat / 1000000)) ms after its fork"
		fi
	fi
	# its own hot set, found
	# shellcheck disable=SC2086
	if daptrace-score --truth "$TMP/worker-$i.truth" --record "$REC" $SCORE_ARGS \
		--aggr-us 100000 > "$TMP/score.$i" 2>&1; then
		sed -n 's/^\(precision\|recall\|check_span\)/# worker '"$i"' &/p' "$TMP/score.$i"
		ktap_test_pass "worker $i: hot set found (precision, recall)"
	else
		sed 's/^/# /' "$TMP/score.$i"
		bound_fail "worker $i: hot set found (precision, recall)" "below the bounds"
	fi
	# it left when it exited
	if grep -q "^#exit,$pid," "$REC"; then
		ktap_test_pass "worker $i: its exit is recorded"
	else
		ktap_test_fail "worker $i: its exit is recorded" "no #exit row for $pid"
	fi
done

# threads are part of their process, never a target of their own
bad=
for f in "$TMP"/worker-*.thread; do
	tid=$(cat "$f")
	grep -q "^#target,$tid," "$REC" && bad="$bad $tid"
done
if [ -z "$bad" ] && ls "$TMP"/worker-*.thread > /dev/null 2>&1; then
	ktap_test_pass "no thread is a target"
else
	ktap_test_fail "no thread is a target" "threads named by #target rows:$bad"
fi
# the root and the workers, and at most the two vfork()ed commands besides
ntargets=$(sed -n 's/^#target,\([0-9]*\),.*/\1/p' "$REC" | sort -u | wc -l)
if [ "$ntargets" -ge $((WORKERS + 1)) ] && [ "$ntargets" -le $((WORKERS + 3)) ]; then
	ktap_test_pass "targets: the tree's processes ($ntargets)"
else
	ktap_test_fail "targets: the tree's processes" "$ntargets distinct pids"
fi
exited=$(trailer "$REC" targets_exited)
if [ "${exited:-0}" -ge $((WORKERS + 1)) ]; then
	ktap_test_pass "exits counted ($exited)"
else
	ktap_test_fail "exits counted" "targets_exited '$exited'"
fi
# each worker's parent is the root
np=$(awk -F, -v r="$root" '/^#target,/ && $4 == r' "$REC" | sed -n 's/^#target,\([0-9]*\),.*/\1/p' |
	sort -u | wc -l)
if [ "$np" -ge $WORKERS ]; then
	ktap_test_pass "workers' #target rows name their parent"
else
	ktap_test_fail "workers' #target rows name their parent" "$np of $WORKERS"
fi
# grouped by process and by command name
daptrace report wss --by pid "$REC" > "$TMP/by-pid" 2>&1
daptrace report wss --by comm "$REC" > "$TMP/by-comm" 2>&1
rows=$(grep -c '^[0-9]' "$TMP/by-pid")
if [ "$rows" -ge $((WORKERS + 1)) ] && grep -q '^daptrace-tree-w ' "$TMP/by-comm"; then
	ktap_test_pass "report wss --by pid, --by comm"
else
	sed 's/^/# /' "$TMP/by-pid" "$TMP/by-comm"
	ktap_test_fail "report wss --by pid, --by comm" "$rows process rows"
fi
left_off "record -- tree"

# 2. -p PID -i: a running tree and the workers it starts.
rm -f "$TMP"/worker-* "$TMP/tree.txt"
daptrace-tree-workload -w 3 -s 16M --stagger 1s -l 4s -t "$TMP" &
wl=$!
daptrace record -q -p $wl -i -o "$TMP/p.csv" --aggr 100ms > "$TMP/p.log" 2>&1
st=$?
wait $wl
joined=$(trailer "$TMP/p.csv" targets_joined)
if [ $st -eq 0 ] && [ "${joined:-0}" -ge 2 ]; then
	ktap_test_pass "record -p PID -i: its new children join ($joined)"
else
	sed 's/^/# /' "$TMP/p.log"
	ktap_test_fail "record -p PID -i: its new children join" "status $st, joined '$joined'"
fi
left_off "record -p PID -i"

# 3. --no-inherit: the command alone.
daptrace record -q --no-inherit -o "$TMP/n.csv" --aggr 100ms -- \
	daptrace-tree-workload -w 2 -s 16M --stagger 500ms -l 2s -t "$TMP" > "$TMP/n.log" 2>&1
n=$(grep -c '^#target,' "$TMP/n.csv")
if [ "$n" = 1 ]; then
	ktap_test_pass "record --no-inherit: the command alone"
else
	ktap_test_fail "record --no-inherit: the command alone" "$n #target rows"
fi
left_off "record --no-inherit"

rm -rf "$TMP"
ktap_finished
