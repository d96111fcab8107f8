#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# What one sample costs each monitor: one VM boot, one monitor (daptrace's
# worker or DAMON's kdamond) on the hotcold workload with the default
# attributes, as bench/ab.sh runs them (daptrace with its recorder, DAMON
# with its damon_aggregated tracepoint, here kept in the trace
# buffer with the function graph), DAMON_STAT off.  Run by
# bench/percost.sh as an extra test; "bench.mon=daptrace|damon",
# "bench.secs=S" on the kernel command line.  After 3 s of warm-up, for S
# seconds (default 10) with the counting tracer alone (the "quiet" phase:
# CPU per sample), then S seconds with perf too (the "perf" phase):
#   - perf record -a -g of the software cpu-clock event, one sample every
#     250 us of CPU, reported for the monitor thread alone (self and
#     children, by symbol);
#   - the function_graph tracer on the monitor's per-sample operations
#     only (prepare, check): their time per call, and their calls, which
#     for DAMON are the samples taken; "bench.graph=0": the function tracer
#     instead, calls only (on 7.3 perf's unwinder warns about the graph
#     tracer's return trampoline, and the graph tracer adds its own cost);
#   - the thread's CPU time (schedstat) and context switches.
# Prints "# PERCOST k=v ..." rows and the perf tables as "# PERF" lines.

. /selftests/lib/ktap.sh
# shellcheck source=selftests/lib/setup.sh
. /selftests/lib/setup.sh
. /selftests/lib/workload.sh

DT=/sys/kernel/daptrace
DAMON=/sys/kernel/mm/damon/admin/kdamonds
TR=/sys/kernel/tracing
TMP=/tmp/percost
PERIOD_NS=250000

arg() { # NAME DEFAULT
	v=$(tr ' ' '\n' < /proc/cmdline | sed -n "s/^bench\.$1=//p")
	echo "${v:-$2}"
}
MON=$(arg mon damon) SECS=$(arg secs 10) GRAPH=$(arg graph 1)

# tid_of COMM: the kernel thread (parent kthreadd) named COMM.
tid_of() {
	for s in /proc/[0-9]*/stat; do
		# pid (comm) state ppid ...
		# shellcheck disable=SC2046
		set -- $(cat "$s" 2>/dev/null)
		[ "$2" = "($COMM)" ] && [ "$4" = 2 ] && { echo "$1"; return; }
	done
}

# thread_stat TID: "cpu_ns vol_cs invol_cs"
thread_stat() {
	echo "$(cut -d' ' -f1 "/proc/$1/schedstat")" \
		"$(awk '/^voluntary_ctxt/ { print $2 }' "/proc/$1/status")" \
		"$(awk '/^nonvoluntary_ctxt/ { print $2 }' "/proc/$1/status")"
}

ktap_print_header
ktap_set_plan 1
# The function_graph parser, shared with bench/profile.sh: bench/percost.sh
# copies it in.
[ -r /bench/lib-guest.sh ] || ktap_exit_fail_msg "no /bench/lib-guest.sh (run by bench/percost.sh)"
# shellcheck source=bench/lib-guest.sh
. /bench/lib-guest.sh
mkdir -p "$TMP"
command -v perf > /dev/null || ktap_exit_fail_msg "no perf in the guest (bench/percost.sh copies it)"
damon_stat_off || ktap_exit_fail_msg "cannot turn DAMON_STAT off"
[ -d $TR/events ] || mount -t tracefs nodev $TR
echo -1 > /proc/sys/kernel/perf_event_paranoid
echo 0 > /proc/sys/kernel/kptr_restrict

# The tracer is set up before anything runs (see bench/profile.sh).
echo 0 > $TR/tracing_on
echo 8192 > $TR/buffer_size_kb
echo 1 > $TR/options/funcgraph-tail
case $MON in
daptrace) FNS="daptrace_va_sample daptrace_va_prepare_access_checks daptrace_va_check_accesses daptrace_va_tlb_flush" COMM=daptrace ;;
damon) FNS="damon_va_prepare_access_checks damon_va_check_accesses" COMM=kdamond.0 ;;
*) ktap_exit_fail_msg "bench.mon: daptrace or damon, not '$MON'" ;;
esac
for f in $FNS; do
	echo "$f" >> $TR/set_ftrace_filter 2>/dev/null
done
grep -qv '^#' $TR/set_ftrace_filter || ktap_exit_fail_msg "no function to trace"
if [ "$GRAPH" = 1 ]; then
	echo function_graph > $TR/current_tracer
else
	echo function > $TR/current_tracer
fi

workload_start "$TMP/truth" -p hotcold -s 512M --thp never -d $((2 * SECS + 15))s ||
	ktap_exit_fail_msg "workload did not start"
wpid=$WL_PID
case $MON in
daptrace)
	daptrace record -q -p $wpid -o "$TMP/rec.csv" --sample 5000us --aggr 100000us \
		--regions 10-1000 --tlb-flush "$(cat $DT/tlb_flush)" > "$TMP/rec.log" 2>&1 &
	;;
damon)
	echo 1 > $DAMON/nr_kdamonds
	echo 1 > $DAMON/0/contexts/nr_contexts
	echo vaddr > $DAMON/0/contexts/0/operations
	echo 1 > $DAMON/0/contexts/0/targets/nr_targets
	echo $wpid > $DAMON/0/contexts/0/targets/0/pid_target
	a=$DAMON/0/contexts/0/monitoring_attrs
	echo 5000 > $a/intervals/sample_us
	echo 100000 > $a/intervals/aggr_us
	echo 1000000 > $a/intervals/update_us
	echo 10 > $a/nr_regions/min
	echo 1000 > $a/nr_regions/max
	echo 1 > $TR/events/damon/damon_aggregated/enable
	echo on > $DAMON/0/state || ktap_exit_fail_msg "kdamond did not start"
	;;
esac
sleep 3
tid=$(tid_of)
[ -n "$tid" ] || ktap_exit_fail_msg "no $COMM thread"
echo > $TR/trace
# samples_now: the samples taken so far (DAMON's: its check_accesses calls
# in the trace, which is read without consuming it).
samples_now() {
	if [ "$MON" = daptrace ]; then
		cat $DT/nr_samples
	else
		awk '/damon_va_check_accesses/ && (/\(\);$/ || /\} \/\* / || / <-/) { n++ } END { print n + 0 }' $TR/trace
	fi
}
# phase NAME: one "# PERCOST phase=" row from the marks taken before it.
mark() {
	# shellcheck disable=SC2046
	set -- $(thread_stat "$tid")
	mc=$1 mv=$2 mi=$3 mt=$(cut -d' ' -f1 /proc/uptime) ms=$(samples_now)
}
phase() {
	pc=$mc pv=$mv pi=$mi pt=$mt ps=$ms
	mark
	echo "# PERCOST phase=$1 mon=$MON kernel=$(uname -r)" \
		"wall_us=$(awk "BEGIN { printf \"%d\", ($mt - $pt) * 1000000 }") cpu_us=$(((mc - pc) / 1000))" \
		"samples=$((ms - ps)) vol_cs=$((mv - pv)) invol_cs=$((mi - pi))" \
		"cpu_per_sample_us=$(((mc - pc) / 1000 / ((ms - ps) > 0 ? (ms - ps) : 1)))"
}
echo 1 > $TR/tracing_on
# First the monitor with only the (cheap) counting tracer: CPU per sample
# undisturbed by perf, whose sampling interrupts (and their unwinding,
# emulated) are charged to whatever thread they hit.
mark
sleep "$SECS"
phase quiet
perf record -q -a -g -e cpu-clock -c $PERIOD_NS -o "$TMP/perf.data" -- sleep "$SECS" \
	> "$TMP/perf.log" 2>&1 || { cat "$TMP/perf.log"; ktap_exit_fail_msg "perf record failed"; }
phase perf
echo 0 > $TR/tracing_on
[ "$MON" = daptrace ] && nr=$(cat $DT/nr_regions)
cp $TR/trace "$TMP/trace"
echo "# PERCOST overrun=$(awk '/overrun/ { n += $2 } END { print n + 0 }' $TR/per_cpu/cpu*/stats)"
echo nop > $TR/current_tracer
echo 0 > $TR/events/damon/damon_aggregated/enable 2>/dev/null
wait $wpid
[ "$MON" = damon ] && echo off > $DAMON/0/state 2> /dev/null
# The per-sample operations: calls and time (see bench/profile.sh); with
# the function tracer, lines "comm-pid [cpu] ... name <-caller": calls.
awk '/ <-/ { for (i = 1; i <= NF; i++) if ($i ~ /^<-/) n[$(i - 1)]++ }
END { for (f in n) printf "# PERCOST fn=%s calls=%d\n", f, n[f] }' "$TMP/trace"
graph_times PERCOST "$TMP/trace"
# DAMON's regions: the last window's, from its tracepoint.
[ "$MON" = damon ] && nr=$(awk '/damon_aggregated/ { for (i = 1; i <= NF; i++) if ($i ~ /^nr_regions=/) { sub(/nr_regions=/, "", $i); print $i } }' \
	"$TMP/trace" | tail -1)
echo "# PERCOST mon=$MON graph=$GRAPH kernel=$(uname -r) nr_regions=${nr:-?}"
# The monitor thread's CPU by symbol (each perf sample: 250 us of CPU).
perf report -i "$TMP/perf.data" --tid "$tid" --no-children --sort sym --stdio -n -g none --percentage relative \
	--percent-limit 0.3 2> /dev/null | grep -v '^#\s*$\|tips.txt\|header info\|^# \.\.' | sed 's/^/# PERF self /' | head -60
perf report -i "$TMP/perf.data" --tid "$tid" --children --sort sym --stdio -n -g none --percentage relative \
	--percent-limit 1 2> /dev/null | grep -v '^#\s*$\|tips.txt\|header info\|^# \.\.' | sed 's/^/# PERF children /' | head -80
# The whole machine, by thread, for the wake-up side (idle, interrupts).
perf report -i "$TMP/perf.data" --no-children --sort comm,sym --stdio -n -g none \
	--percent-limit 0.2 2> /dev/null | grep -v '^#\s*$\|tips.txt\|header info\|^# \.\.' | sed "s/^/# PERF all /" | head -50
ktap_test_pass "percost $MON"
ktap_finished
