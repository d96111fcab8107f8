#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Where a sampling pass's time goes: one VM boot, one workload, daptrace
# only, the module's sampling functions timed with ftrace's function_graph
# tracer (Debian's kernels lack the function profiler).  Run as an extra
# test, with bench/lib-guest.sh copied in:
#   flock /tmp/daptrace-vm.lock selftests/vm/run.sh --kernel K --no-la57 \
#       --guest-file bench/lib-guest.sh:/bench/lib-guest.sh \
#       --test extra/profile --extra-test bench/profile.sh --append "bench.runs=..."
# It prints "# PROFILE k=v ..." rows:
#   fn=NAME calls=N total_us=T mean_us=M   per traced function
#   worker_cpu_us=... nr_samples=... nr_regions=...  for the traced phase
# Parameters from the kernel command line: bench.runs=WL:SAMPLE_US:AGGR_US,...
# (WL: hotcold|moving|smallhot), or one run from bench.wl, bench.sample,
# bench.aggr; bench.tlb=POLICY (default: the module's), bench.secs=S.
# Functions inlined by the compiler are not seen: a pass is the time of
# the ops callback(s) the worker calls through its function table.

. /selftests/lib/ktap.sh
. /selftests/lib/workload.sh

DT=/sys/kernel/daptrace
TR=/sys/kernel/tracing
TMP=/tmp/profile

arg() { # NAME DEFAULT
	v=$(tr ' ' '\n' < /proc/cmdline | sed -n "s/^bench\.$1=//p")
	echo "${v:-$2}"
}
WL=$(arg wl hotcold) SAMPLE=$(arg sample 5000) AGGR=$(arg aggr 100000)
TLB=$(arg tlb "$(cat $DT/tlb_flush)") SECS=$(arg secs 10)

ktap_print_header
ktap_set_plan 1
# The function_graph parser, shared with bench/percost-guest.sh.
[ -r /bench/lib-guest.sh ] || ktap_exit_fail_msg "no /bench/lib-guest.sh (--guest-file, above)"
# shellcheck source=bench/lib-guest.sh
. /bench/lib-guest.sh
mkdir -p "$TMP"
[ -d $TR/events ] || mount -t tracefs nodev $TR
# The tracer is set up once, before any workload runs: patching function
# entries while the module and the workload run took an int3 Oops under TCG.
echo 0 > $TR/tracing_on
echo 16384 > $TR/buffer_size_kb
echo 1 > $TR/options/funcgraph-tail
# The ops callbacks (old and new names) and the IPI senders.
for f in daptrace_va_sample daptrace_va_prepare_access_checks \
	daptrace_va_check_accesses daptrace_va_tlb_flush daptrace_va_update \
	on_each_cpu_cond_mask smp_call_function_many_cond; do
	echo "$f" >> $TR/set_ftrace_filter 2>/dev/null
done
# An empty filter would trace (and patch) every function.
[ -n "$(grep -v '^#' $TR/set_ftrace_filter)" ] || ktap_exit_fail_msg "no function to trace"
echo function_graph > $TR/current_tracer

# profile WL SAMPLE AGGR
profile() {
	WL=$1 SAMPLE=$2 AGGR=$3
	case $WL in
	hotcold) wl="-p hotcold -s 512M --thp never" ;;
	moving) wl="-p moving -s 512M --thp never" ;;
	smallhot) wl="-p smallhot -s 1G --hot-size 8M --thp never" ;;
	*) ktap_exit_fail_msg "unknown workload $WL" ;;
	esac
	# shellcheck disable=SC2086
	workload_start "$TMP/truth" $wl -d $((SECS + 10))s || ktap_exit_fail_msg "workload did not start"
	pid=$WL_PID
	echo "$TLB" > $DT/tlb_flush
	echo "$SAMPLE" > $DT/sample_us
	echo "$AGGR" > $DT/aggr_us
	echo $pid > $DT/target
	echo on > $DT/state
	sleep 3

	echo > $TR/trace
	c0=$(cat $DT/worker_cpu_us) s0=$(cat $DT/nr_samples)
	echo 1 > $TR/tracing_on
	sleep "$SECS"
	echo 0 > $TR/tracing_on
	c1=$(cat $DT/worker_cpu_us) s1=$(cat $DT/nr_samples)
	nr=$(cat $DT/nr_regions)
	echo off > $DT/state
	echo $pid > $DT/target_remove
	kill $pid
	wait $pid 2>/dev/null
	cat $TR/trace > "$TMP/trace"
	graph_times PROFILE "$TMP/trace"
	echo "# PROFILE wl=$WL sample=$SAMPLE aggr=$AGGR tlb=$TLB secs=$SECS worker_cpu_us=$((c1 - c0)) nr_samples=$((s1 - s0)) nr_regions=$nr"
	echo "# PROFILE overrun=$(cat $TR/per_cpu/cpu0/stats 2>/dev/null | awk '/overrun/ { print $2 }')"
}

# bench.runs=WL:SAMPLE:AGGR,...: several profiles in this boot.
for r in $(arg runs "$WL:$SAMPLE:$AGGR" | tr ',' ' '); do
	# shellcheck disable=SC2046
	profile $(echo "$r" | tr ':' ' ')
done
echo nop > $TR/current_tracer
ktap_test_pass "profile"
ktap_finished
