#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The daptrace CLI end to end against the real module: record a launched
# command, a pid that exits by itself, and one interrupted with Ctrl-C
# (SIGINT); every record must be complete (#eof trailer, the right end
# reason), readable by every report mode, and leave the module off and
# without stale targets.

. "$(dirname "$0")/../lib/ktap.sh"
. "$(dirname "$0")/../lib/setup.sh"

TMP=${TMPDIR:-/tmp}/cli.$$

# trailer FILE KEY: a trailer value of a record.
trailer() {
	sed -n "s/^#end,\"\{0,1\}$2\"\{0,1\},\"\{0,1\}\([^\"]*\)\"\{0,1\}$/\1/p" "$1"
}

is_complete() {
	[ "$(tail -n 1 "$1")" = "#eof" ]
}

# check_record NAME FILE REASON-PATTERN
check_record() {
	if ! is_complete "$2"; then
		ktap_test_fail "$1: record complete" "no #eof: $(tail -n 2 "$2" | tr '\n' ' ')"
	else
		ktap_test_pass "$1: record complete"
	fi
	reason=$(trailer "$2" reason)
	# shellcheck disable=SC2254 # $3 is a pattern on purpose
	case $reason in
	$3) ktap_test_pass "$1: end reason '$reason'" ;;
	*) ktap_test_fail "$1: end reason" "got '$reason', want '$3'" ;;
	esac
	nsnap=$(grep -c '^#snap,' "$2")
	if [ "$nsnap" -ge 3 ]; then
		ktap_test_pass "$1: $nsnap snapshots recorded"
	else
		ktap_test_fail "$1: snapshots recorded" "only $nsnap"
	fi
	bad=
	for mode in heatmap wss regions hot raw; do
		daptrace report "$mode" "$2" > "$TMP/report.$mode" 2> "$TMP/report.err" ||
			bad="$bad $mode($(head -n 1 "$TMP/report.err"))"
	done
	if [ -z "$bad" ]; then
		ktap_test_pass "$1: every report mode reads it"
	else
		ktap_test_fail "$1: every report mode reads it" "failed:$bad"
	fi
	if dt_left_off; then
		ktap_test_pass "$1: module left off, no stale target"
	else
		ktap_test_fail "$1: module left off, no stale target" \
			"state $DT_STATE, targets '$DT_TARGETS'"
	fi
}

ktap_print_header
ktap_require_tools daptrace
mkdir -p "$TMP"
ktap_set_plan 17

# 1. Launch a command: the record ends when it exits, with its exit status.
daptrace record -q -o "$TMP/cmd.csv" --aggr 50ms -- \
	daptrace-workload -p moving -s 64M --phase 500ms -d 3s -t "$TMP/cmd.truth" \
	> "$TMP/cmd.log" 2>&1
st=$?
if [ $st -eq 0 ]; then
	ktap_test_pass "record -- cmd: exit status 0"
else
	sed 's/^/# /' "$TMP/cmd.log"
	ktap_test_fail "record -- cmd: exit status 0" "exit status $st"
fi
check_record "record -- cmd" "$TMP/cmd.csv" "command exited*"

# 2. A pid that exits by itself.
daptrace-workload -p hotcold -s 64M -d 3s -t "$TMP/pid.truth" &
pid=$!
daptrace record -q -p $pid -o "$TMP/pid.csv" --aggr 50ms > "$TMP/pid.log" 2>&1
wait $pid
check_record "record -p (target exits)" "$TMP/pid.csv" "all targets exited*"

# 3. Ctrl-C in the middle: still a complete, valid file.
daptrace-workload -p hotcold -s 64M -d 60s -t "$TMP/int.truth" &
pid=$!
daptrace record -q -p $pid -o "$TMP/int.csv" --aggr 50ms > "$TMP/int.log" 2>&1 &
rec=$!
sleep 3
kill -INT $rec
wait $rec
st=$?
kill $pid
wait $pid
if [ $st -eq 0 ]; then
	ktap_test_pass "record interrupted: exit status 0"
else
	sed 's/^/# /' "$TMP/int.log"
	ktap_test_fail "record interrupted: exit status 0" "exit status $st"
fi
check_record "record interrupted" "$TMP/int.csv" "interrupted*"

rm -rf "$TMP"
ktap_finished
