#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# A stopped target costs next to nothing (kernel/vaddr.c, "Idle targets"):
# its walks, its memory-map reads and, in windows it never ran, the merge,
# split and prepare of its regions are skipped.  None of that may change
# what is measured:
#  - while it is stopped, no window shows an access (nothing is invented
#    from stale samples);
#  - once it runs again, its hot set is seen again within a second (the
#    samples kept through the quiet windows are still prepared).
# And it gets no accuracy probes once it has not run for 10 windows
# (kernel/core.c, daptrace_probed()): probe_us does not move.
# Accessed: the hot bytes (the workload's truth) in regions with
# nr_accesses > 0, as a fraction of all hot bytes, from the snapshot file.

. "$(dirname "$0")/../lib/ktap.sh"
. "$(dirname "$0")/../lib/workload.sh"

D=/sys/kernel/daptrace
TMP=${TMPDIR:-/tmp}/idle_target.$$

# hot_seen TRUTH: fraction of phase 0's hot bytes in accessed regions of
# the newest snapshot, "-1" if it has no region lines.
hot_seen() {
	cat $D/snapshot > "$TMP/snap" || { echo -1; return; }
	awk '
	FNR == NR { if ($1 == "hot" && $2 == 0) { hs[++nh] = $3 + 0; he[nh] = $4 + 0 } next }
	/^[0-9]+ 0x/ { if ($4 > 0) { rs[++nr] = $2 + 0; re[nr] = $3 + 0 } n++ }
	END {
		if (!n) { print -1; exit }
		for (i = 1; i <= nh; i++) {
			tot += he[i] - hs[i]
			for (j = 1; j <= nr; j++) {
				lo = hs[i] > rs[j] ? hs[i] : rs[j]
				hi = he[i] < re[j] ? he[i] : re[j]
				if (hi > lo) seen += hi - lo
			}
		}
		printf "%.3f\n", tot ? seen / tot : -1
	}' "$1" "$TMP/snap"
}

# max_accesses: the largest nr_accesses of the newest snapshot.
max_accesses() {
	awk '/^[0-9]+ 0x/ { if ($4 > m) m = $4 } END { print m + 0 }' $D/snapshot
}

# wait_seq N: until a snapshot newer than N was published (5 s at most).
wait_seq() {
	i=0
	while [ "$(cat $D/snapshot_seq)" -le "$1" ] && [ $i -lt 50 ]; do
		sleep 0.1
		i=$((i + 1))
	done
}

# mostly_seen SHARE: is SHARE (of the hot bytes seen accessed) >= 0.9?
mostly_seen() {
	awk -v s="$1" 'BEGIN { exit !(s >= 0.9) }'
}

# until_hot_seen MAX: window by window after snapshot $seq, at most MAX
# windows, until the hot set is mostly seen.  Sets seq, seen (the last
# share), n (the windows before it) and trail (every window's share).
until_hot_seen() {
	seen=-1 n=0 trail=
	while [ $n -lt "$1" ]; do
		wait_seq "$seq"
		seq=$(cat $D/snapshot_seq)
		seen=$(hot_seen "$TMP/truth")
		trail="$trail $seen"
		mostly_seen "$seen" && break
		n=$((n + 1))
	done
}

cleanup() {
	echo off > $D/state 2>/dev/null
	[ -z "${WL_PID:-}" ] || { kill -CONT "$WL_PID"; kill "$WL_PID"; wait "$WL_PID"; } 2>/dev/null
	echo "$WL_PID" > $D/target_remove 2>/dev/null
	rm -rf "$TMP"
}

ktap_print_header
ktap_set_plan 4
mkdir -p "$TMP"
# The probes at their default, whatever a test before left.
echo 64 > $D/probe_pages || ktap_exit_fail_msg "cannot set probe_pages"
workload_start "$TMP/truth" -p hotcold -s 256M --thp never -d 120s ||
	ktap_exit_fail_msg "workload did not start"
if ! echo "$WL_PID" > $D/target || ! echo on > $D/state; then
	cleanup
	ktap_exit_fail_msg "monitoring did not start"
fi
# Running: the hot set is seen within 40 windows of the start.  Counted in
# windows, not seconds: on a loaded host a few seconds may hold only a few
# windows (each region splits at most once per window), and what is tested
# here is what the monitor sees, not how fast the emulator runs.
seq=$(cat $D/snapshot_seq)
until_hot_seen 40
ktap_print_msg "running: hot bytes seen accessed, window by window:$trail"
ktap_test_result "running: hot set seen within 40 windows (>= 0.9)" \
	mostly_seen "$seen"

# Stopped: after two windows, every window (3 s, about 30) shows nothing.
# Counted from when the kernel says it stopped (a slow kernel, the debug
# one, takes a while): the window it stopped in may show what it did before,
# and so may the next, whose samples were prepared before the stop.
probe_run=$(cat $D/probe_us)
workload_stop "$WL_PID"
seq=$(cat $D/snapshot_seq)
wait_seq "$seq"
seq=$(cat $D/snapshot_seq)
wait_seq "$seq"
seq=$(cat $D/snapshot_seq)
worst=0 n=0
while [ $n -lt 30 ]; do
	wait_seq "$seq"
	seq=$(cat $D/snapshot_seq)
	m=$(max_accesses)
	[ "$m" -le "$worst" ] || worst=$m
	n=$((n + 1))
	# 12 windows after the two above: quiet for 10 in a row by then
	[ $n -ne 12 ] || probe0=$(cat $D/probe_us)
done
probe1=$(cat $D/probe_us)
ktap_print_msg "stopped: largest nr_accesses over $n windows: $worst"
ktap_test_result "stopped: no window shows an access" test "$worst" -eq 0
ktap_print_msg "stopped: probe_us $probe_run running," \
	"$probe0 after 14 windows stopped, $probe1 after 32"
# (probes while it ran: else this would test nothing)
ktap_test_result "stopped: no accuracy probes after 10 quiet windows" \
	test "$probe_run" -gt 0 -a "$probe1" -eq "$probe0"

# Resumed: the hot set again within a second.
kill -CONT "$WL_PID"
until_hot_seen 10
ktap_print_msg "resumed: hot bytes seen accessed $seen after $n windows"
ktap_test_result "resumed: hot set seen within 10 windows (>= 0.9)" \
	mostly_seen "$seen"
cleanup
ktap_finished
