#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Checking the savings curve (issue 39), inside the VM (bench/savings.sh
# boots one per round, writing WLS, D, TS, KV_RATE, PERF, KEEP, THP and REGRET_SYMS on
# the line after this comment block): for each workload of WLS, a `daptrace record -p` of it for its D
# seconds and `daptrace report savings --json --type anon` at the
# thresholds TS (seconds): the prediction; then for each T of TS a fresh
# run of the same workload, same arguments, under `daptrace policy -p -S
# "pageout idle=Ts type=anon"` (no quota) for the same D seconds: what it
# really saves and refaults.  Anonymous memory on both sides: what is
# measured is swap, and the guest's files live in its initramfs, whose
# pages no pageout can drop.
#
#   phases   daptrace-policy-workload phases, 16 MiB hot, 16 MiB warm (read
#            every 1 s), 64 MiB cold, D/4 s a phase (the sets at x1, x2,
#            x1/2, x1): memory that went idle is used again, so a policy
#            refaults
#   reclaim  daptrace-policy-workload reclaim, the same sets, static: the
#            cold set is never used again until the final check
#   kv       memcached (bench/memcached-payload.sh, the extra test before
#            this one) under daptrace-kv-client's Zipf load (40000 keys of
#            4000 bytes, exponent 0.99) for D seconds after loading them:
#            a real program under a skewed load, memcached the target;
#            KV_RATE requests a second whether memcached keeps up or not
#            (0: each as soon as the last is answered)
#
# Then a run under `daptrace stat --savings --cgroup` (the target started in
# a cgroup of its own, the record's intervals): the same curve live, from
# the windows stat read as they came (kind=live; stat reads no maps, so it
# cannot leave file-backed memory out as --type anon does: the workloads'
# binaries and libraries, a few MiB at most).
#
# Each policy run also writes what it acted on as a record (policy -o), and
# `report savings` replays that record at the run's T (kind=replay): the
# curve's model on the very windows the policy saw, apart from the record
# run's own sampling (a separate run of the workload, whose monitor may see
# a rarely read range a second sooner or later than the policy's did).
#
# Measured on the target, never from daptrace's counters: its VmSwap once a
# second (mean over the samples, and at the end), the system's pswpin from
# the attach to the end of the run (per second; nothing else in the guest
# swaps), the workload's own data check.  The workload holds its final
# check (which reads every page back) until told (--go): the record and the
# policy stop first, so neither sees nor counts it.  Swap readahead is off
# (vm.page-cluster 0; zram skips it anyway) so a swap-in is one page.
# With PERF=1 (bench/savings.sh --perf 1, which copies the host's perf in
# and names the regret counters' functions in REGRET_SYMS), each policy run
# is also sampled by perf (software cpu-clock, one sample a millisecond of
# its CPU): the share of its samples the regret counters take, beside the
# policy's CPU from /proc (kind=real: policy_cpu_s, regret_lo_pct,
# regret_hi_pct).  The static CLI's user stacks are not unwound (no frame
# pointers; perf's DWARF unwinding failed on a static binary), so a sample
# is known by the function it hit and, in the kernel, by its whole chain: the counters take at least the samples in their own functions and
# under pagemap_read (only they read pagemap), at most those and every
# pread(2) (the snapshot and sysfs reads too).
# With KEEP=1 (bench/savings.sh --keep-records 1) every record the round
# made (the prediction's and each policy run's) and the target's VmSwap
# samples are printed too, gzip'ed and in base64 between "# KEEP-BEGIN
# NAME" and "# KEEP-END NAME" lines, for the host to unpack: the model can
# then be replayed, changed and replayed again on the host, against what
# the policy runs really did.
# A measurement, not a test: it prints "# BENCH ..." rows and fails only if
# a run could not be made or a workload's data check failed.

. /selftests/lib/ktap.sh
. /selftests/lib/setup.sh

: "${WLS:=phases reclaim}" "${D:=32}" "${TS:=2 5 10}" "${KV_RATE:=0}" "${PERF:=0}" "${KEEP:=0}"
TMP=${TMPDIR:-/tmp}/bench-savings.$$
FAILED=
CGB=

vmstat() { awk -v k="$1" '$1 == k { print $2 }' /proc/vmstat; }
uptime_s() { cut -d' ' -f1 /proc/uptime; }
# status_kb PID FIELD
status_kb() { sed -n "s/^$2:[[:space:]]*\([0-9]*\) kB/\1/p" "/proc/$1/status" 2>/dev/null; }

# huge_kb PID: the process's anonymous memory in transparent huge pages, kB
huge_kb() {
	sed -n 's/^AnonHugePages:[[:space:]]*\([0-9]*\) kB/\1/p' "/proc/$1/smaps_rollup" 2>/dev/null
}

# keep FILE NAME: FILE for the host (KEEP=1), as NAME
keep() {
	[ "$KEEP" = 1 ] || return 0
	echo "# KEEP-BEGIN $2"
	gzip -c "$1" | base64
	echo "# KEEP-END $2"
}

# wl_args WL: daptrace-policy-workload's arguments
wl_args() {
	case $1 in
	phases) echo "phases --hot 16M --warm 16M --cold 64M --phase $((D / 4))" ;;
	reclaim) echo "reclaim --hot 16M --warm 16M --cold 64M --duration $D" ;;
	*) ktap_exit_fail_msg "bench/savings-guest.sh: workload '$1'?" ;;
	esac
}

# wl_start WL: starts it (WLP: the process to wait for) and its target
# (PID, in cgroup CGB/bench-savings: stat --cgroup's target); returns once
# the target is ready to be monitored
wl_start() {
	rm -f "$TMP/pid" "$TMP/go" "$TMP/out" "$TMP/ready" "$TMP/mc.sock"
	if [ "$1" = kv ]; then
		sh -c "echo \$\$ > $CGB/bench-savings/cgroup.procs && exec memcached -u root \
			-s $TMP/mc.sock -m 1024 -M -t 2" > "$TMP/mc.log" 2>&1 &
		PID=$!
		i=0
		while [ ! -S "$TMP/mc.sock" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
		daptrace-kv-client --socket "$TMP/mc.sock" --keys 40000 --value 4000 \
			--zipf 0.99 --duration "$D" --rate "$KV_RATE" --ready "$TMP/ready" --go "$TMP/go" \
			> "$TMP/out" 2>&1 &
		WLP=$!
		while [ ! -e "$TMP/ready" ] && kill -0 "$WLP" 2>/dev/null; do sleep 0.1; done
		[ -e "$TMP/ready" ] || { cat "$TMP/out" "$TMP/mc.log"; ktap_exit_fail_msg "kv did not start"; }
		return
	fi
	sh -c "echo \$\$ > $CGB/bench-savings/cgroup.procs && exec daptrace-policy-workload \
		$(wl_args "$1") --pidfile $TMP/pid --go $TMP/go" > "$TMP/out" 2>&1 &
	WLP=$!
	i=0
	while [ ! -s "$TMP/pid" ] && [ $i -lt 1200 ]; do sleep 0.1; i=$((i + 1)); done
	PID=$(cat "$TMP/pid" 2>/dev/null)
	[ -n "$PID" ] || { cat "$TMP/out"; ktap_exit_fail_msg "$1 did not start"; }
}

# wl_over WL: whether its run is over (the line it prints before holding
# for --go)
wl_over() {
	if [ "$1" = kv ]; then
		grep -q '^ops_per_s=' "$TMP/out"
	else
		grep -q '^pswpin ' "$TMP/out"
	fi
}

# run WL MONITOR...: the workload WL under MONITOR (its -p PID added, or
# with BY_CGROUP=1 --cgroup of its cgroup), until the workload's run is
# over (wl_over); then the monitor is stopped with SIGINT and the check
# let go.  Sets SWAP_MEAN SWAP_LAST (kB, the target's
# VmSwap), HUGE (" huge_start_kb=N huge_kb=M": its anonymous memory huge
# pages backed when the monitor attached and at the run's end,
# AnonHugePages; kv only: the others ask for none), SWAPIN (pages: pswpin from the attach to the run's end), SECS,
# VERIFY, OPS (kv: " ops_per_s=N", with KV_RATE " rate=R behind_max_s=S" too,
# the longest a request was sent after it was due; else empty).
run() {
	wl=$1
	shift
	# Free memory made whole again first, so that every run of the boot
	# starts from the same: one after others' swapping may find fewer
	# 2 MiB blocks free and get fewer huge pages than the first (the
	# record's), and what a window calls accessed depends on them (a huge
	# page's accessed bit is its 512 pages').
	echo 1 > /proc/sys/vm/compact_memory
	wl_start "$wl"
	huge0=
	[ "$wl" != kv ] || huge0=$(huge_kb "$PID")
	in0=$(vmstat pswpin)
	t0=$(uptime_s)
	if [ "${BY_CGROUP:-0}" = 1 ]; then
		"$@" --cgroup /bench-savings > "$TMP/mon" 2>&1 &
	else
		"$@" -p "$PID" > "$TMP/mon" 2>&1 &
	fi
	mon=$!
	prof=
	if [ "${PROFILE:-0}" = 1 ]; then
		perf record -q -e cpu-clock -c 1000000 -g -p "$mon" \
			-o "$TMP/perf.data" > "$TMP/perf.log" 2>&1 &
		prof=$!
	fi
	: > "$TMP/swap"
	i=0
	while ! wl_over "$wl" && kill -0 "$WLP" 2>/dev/null; do
		sleep 0.2
		i=$((i + 1))
		[ $((i % 5)) = 0 ] || continue
		status_kb "$PID" VmSwap >> "$TMP/swap"
	done
	t1=$(uptime_s)
	in1=$(vmstat pswpin)
	SWAP_LAST=$(status_kb "$PID" VmSwap)
	HUGE=
	[ "$wl" != kv ] || HUGE=" huge_start_kb=$huge0 huge_kb=$(huge_kb "$PID")"
	# the monitor's CPU over its run, s (utime + stime, clock ticks)
	MON_CPU=$(awk -v hz="$(getconf CLK_TCK 2>/dev/null || echo 100)" \
		'{ sub(/.*\) /, ""); printf "%.2f", ($12 + $13) / hz }' "/proc/$mon/stat" 2>/dev/null)
	# perf record stopped by SIGINT exits 130
	if [ -n "$prof" ]; then
		kill -INT "$prof"
		wait "$prof"
		rc=$?
		[ $rc = 0 ] || [ $rc = 130 ] ||
			{ sed 's/^/# perf: /' "$TMP/perf.log"; FAILED="$FAILED $wl:perf"; }
	fi
	kill -INT "$mon" 2>/dev/null
	wait "$mon" || { sed 's/^/# monitor: /' "$TMP/mon" | tail -n 20; FAILED="$FAILED $wl:$*"; }
	touch "$TMP/go"
	wait "$WLP"
	wst=$?
	[ "$wl" != kv ] || { kill "$PID"; wait "$PID"; }
	SWAP_MEAN=$(awk '{ s += $1; n++ } END { printf "%d", n ? s / n : 0 }' "$TMP/swap")
	SWAPIN=$((in1 - in0))
	# kv: the requests memcached served, per second of the run (a target
	# stalled on its refaults serves fewer and so touches less memory,
	# unless the load is open: then it serves them late)
	OPS=
	[ "$wl" != kv ] || OPS=$(awk '/^ops_per_s=/ { for (i = 1; i <= NF; i++)
		if ($i ~ /^(ops_per_s|rate|behind_max_s)=/) printf " %s", $i }' "$TMP/out")
	SECS=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
	VERIFY=FAILED
	if grep -q '^verify ok' "$TMP/out" && [ $wst = 0 ] &&
		{ [ "$wl" = kv ] || grep -q '^touch bad=0$' "$TMP/out"; }; then
		VERIFY=ok
	else
		sed 's/^/# workload: /' "$TMP/out" | tail -n 20
		FAILED="$FAILED $wl:verify"
	fi
}

# regret_share: " regret_lo_pct=X regret_hi_pct=Y", the bounds (%) on the
# policy's perf samples the regret counters take (above, PERF): lines of
# `perf report --children` are "children% self% [.]|[k] symbol"
regret_share() {
	perf report -i "$TMP/perf.data" --children --sort sym --stdio -g none --no-inline \
		--percent-limit 0 > "$TMP/perf.rep" 2> "$TMP/perf.err" ||
		{ sed 's/^/# perf report: /' "$TMP/perf.err" | tail -n 5; return 1; }
	awk -v syms="$REGRET_SYMS" '
	BEGIN { n = split(syms, a, " "); for (i = 1; i <= n; i++) want[a[i]] = 1 }
	/^#/ || NF < 4 { next }
	{ c = $1; s = $2; sub(/%/, "", c); sub(/%/, "", s); sym = $NF; k = $(NF - 1) }
	k == "[.]" && (sym in want) { user += s }
	k == "[.]" && sym ~ /^(__libc_pread(64)?|__pread(64)?|pread(64)?)$/ { wrap += s }
	k == "[k]" && sym == "pagemap_read" { pm = c }
	k == "[k]" && sym == "__x64_sys_pread64" { pr = c }
	END { printf " regret_lo_pct=%.2f regret_hi_pct=%.2f", user + pm, user + wrap + pr }' "$TMP/perf.rep"
}

# curve JSON: one line per threshold of the report's curve, "threshold_s
# saved_mean_bytes saved_last_bytes refault_pages_per_s refaulted_bytes
# unknown_future_bytes" (the curve's entries hold no objects of their own)
curve() {
	tr -d ' \n\t' < "$1" | sed 's/.*"curve":\[//' | tr '{}' '[\n*]' | grep '"threshold_s"' |
	awk '
	function f(k,   m) {
		if (!match($0, "\"" k "\":[^,]*"))
			return "nan"
		m = substr($0, RSTART + length(k) + 3, RLENGTH - length(k) - 3)
		return m == "null" ? "nan" : m
	}
	{ print f("threshold_s"), f("saved_mean_bytes"), f("saved_last_bytes"),
		f("refault_pages_per_s"), f("refaulted_bytes"), f("unknown_future_bytes") }'
}

# live_rows STAT-OUTPUT PREFIX: the curve of the target's cgroup in stat's
# last report (its last "curve": stat --cgroup has that cgroup alone), one
# "# BENCH PREFIX t=..." row per threshold; saved_last is the curve's
# saved_now, what the live curve holds reclaimed at the end
live_rows() {
	tail -n 1 "$1" | sed 's/"saved_now_bytes"/"saved_last_bytes"/g' > "$TMP/live.json"
	grep -q '"cgroup": *"/bench-savings"' "$TMP/live.json" || return 1
	curve "$TMP/live.json" | while read -r t mean last rf refaulted _; do
		echo "# BENCH $2 t=$t d=$D" \
			"saved_mean_kb=$(awk -v b="$mean" 'BEGIN { printf "%d", b / 1024 }')" \
			"saved_last_kb=$(awk -v b="$last" 'BEGIN { printf "%d", b / 1024 }')" \
			"rf_pps=$rf refaulted_kb=$(awk -v b="$refaulted" 'BEGIN { printf "%d", b / 1024 }')"
	done
}

# curve_rows RECORD THRESHOLDS PREFIX [SPEED]: `report savings` of RECORD
# at THRESHOLDS (and --speed SPEED, default 1), one "# BENCH PREFIX t=..."
# row per threshold; fails if the report does
curve_rows() {
	daptrace report savings --json --type anon --speed "${4:-1}" --thresholds "$2" "$1" \
		> "$TMP/sav.json" \
		2> "$TMP/sav.err" ||
		{ sed 's/^/# report: /' "$TMP/sav.err"; return 1; }
	windows=$(tr -d ' \n\t' < "$TMP/sav.json" | sed -n 's/.*"windows":\([0-9]*\).*/\1/p' | head -n 1)
	rsecs=$(tr -d ' \n\t' < "$TMP/sav.json" | sed -n 's/.*"seconds":\([0-9.]*\).*/\1/p' | head -n 1)
	curve "$TMP/sav.json" | while read -r t mean last rf refaulted unknown; do
		echo "# BENCH $3 t=$t d=$D windows=$windows secs=$rsecs" \
			"saved_mean_kb=$(awk -v b="$mean" 'BEGIN { printf "%d", b / 1024 }')" \
			"saved_last_kb=$(awk -v b="$last" 'BEGIN { printf "%d", b / 1024 }')" \
			"rf_pps=$rf refaulted_kb=$(awk -v b="$refaulted" 'BEGIN { printf "%d", b / 1024 }')" \
			"unknown_kb=$(awk -v b="$unknown" 'BEGIN { printf "%d", b / 1024 }')"
	done
}

ktap_print_header
ktap_set_plan 1
ktap_require_tools daptrace daptrace-policy-workload
[ "$PERF" != 1 ] || {
	ktap_require_tools perf
	echo -1 > /proc/sys/kernel/perf_event_paranoid
	echo 0 > /proc/sys/kernel/kptr_restrict
}
case " $WLS " in *" kv "*) ktap_require_tools memcached daptrace-kv-client ;; esac
zram_swap_on || ktap_exit_fail_msg "no zram swap"
echo 0 > /proc/sys/vm/page-cluster
if [ -n "$THP" ]; then
	echo "$THP" > /sys/kernel/mm/transparent_hugepage/enabled ||
		ktap_exit_fail_msg "cannot set transparent huge pages to $THP"
fi
ktap_print_msg "transparent huge pages: $(cat /sys/kernel/mm/transparent_hugepage/enabled)"
mkdir -p "$TMP"
cgroup2_mount /sys/fs/cgroup || ktap_exit_fail_msg "cannot mount cgroup2"
CGB=$CG_ROOT
mkdir -p "$CGB/bench-savings"
thr=$(echo "$TS" | sed 's/\([0-9][0-9]*\)/\1s/g; s/ /,/g')

for wl in $WLS; do
	# the prediction
	rm -f "$TMP/rec.csv"
	run "$wl" daptrace record -q -o "$TMP/rec.csv"
	echo "# BENCH kind=record wl=$wl d=$D secs=$SECS swap_mean_kb=$SWAP_MEAN" \
		"swapin=$SWAPIN verify=$VERIFY$OPS$HUGE"
	keep "$TMP/rec.csv" "$wl-record.csv"
	REC_OPS=$(echo "$OPS" | sed -n 's/.*ops_per_s=\([0-9]*\).*/\1/p')
	if ! curve_rows "$TMP/rec.csv" "$thr" "kind=pred wl=$wl"; then
		FAILED="$FAILED $wl:report"
		continue
	fi
	daptrace report savings --type anon --thresholds "$thr" "$TMP/rec.csv" 2>&1 |
		sed "s/^/# $wl: /"
	# the same curve, live (the record's intervals: the comparison is of
	# the live feed, not of stat's own defaults)
	BY_CGROUP=1 run "$wl" daptrace stat --json -d 3600s --thresholds "$thr" -s 5ms -a 100ms \
		--no-auto-intervals
	live_rows "$TMP/mon" "kind=live wl=$wl" || {
		sed 's/^/# stat: /' "$TMP/mon" | tail -n 5
		FAILED="$FAILED $wl:live"
	}
	# what a policy does
	for t in $TS; do
		rm -f "$TMP/pol.csv"
		PROFILE=$PERF run "$wl" daptrace policy -q -o "$TMP/pol.csv" \
			-S "pageout idle=${t}s type=anon"
		PROF=
		[ "$PERF" != 1 ] || PROF=$(regret_share) || FAILED="$FAILED $wl:perf_report"
		echo "# BENCH kind=real wl=$wl t=$t d=$D secs=$SECS swap_mean_kb=$SWAP_MEAN" \
			"swap_last_kb=$SWAP_LAST swapin=$SWAPIN" \
			"rf_pps=$(awk -v n="$SWAPIN" -v s="$SECS" 'BEGIN { printf "%.3f", (s > 0 ? n / s : 0) }')" \
			"verify=$VERIFY$OPS$HUGE policy_cpu_s=$MON_CPU$PROF"
		sed -n 's/^/# policy: /p' "$TMP/mon" | tail -n 5
		keep "$TMP/pol.csv" "$wl-policy-${t}s.csv"
		keep "$TMP/swap" "$wl-policy-${t}s.vmswap"
		curve_rows "$TMP/pol.csv" "${t}s" "kind=replay wl=$wl" ||
			FAILED="$FAILED $wl:replay"
		# the record's prediction for the speed this run had (kv: requests
		# served against the record's), see report savings --speed
		[ -z "$OPS" ] || [ "${REC_OPS:-0}" -le 0 ] || {
			ops=$(echo "$OPS" | sed -n 's/.*ops_per_s=\([0-9]*\).*/\1/p')
			speed=$(awk -v a="$ops" -v b="$REC_OPS" 'BEGIN { printf "%.4f", a / b }')
			curve_rows "$TMP/rec.csv" "${t}s" "kind=pred_speed wl=$wl speed=$speed" \
				"$speed" || FAILED="$FAILED $wl:pred_speed"
		}
	done
done

rm -rf "$TMP"
rmdir "$CGB/bench-savings" 2>/dev/null
zram_swap_off || ktap_print_msg "swapoff /dev/zram0 failed"
if [ -z "$FAILED" ]; then
	ktap_test_pass "bench savings $WLS"
else
	ktap_test_fail "bench savings $WLS" "failed:$FAILED"
fi
ktap_finished
