#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# One policy benchmark run inside the VM (bench/policy.sh boots one per
# run): the scenario and the policy come from the kernel command line,
# bench.policy=MON-SCEN with MON daptrace, damos, damon_reclaim (the
# built-in DAMON_RECLAIM module) or damos_reclaim (its scheme, see below)
# and SCEN reclaim or tiering.  The same workload and the same pattern and
# quota for every MON; the outcome is measured on the target (VmSwap,
# mincore, move_pages, /proc/vmstat), never from a tool's counters.
# Prints one "BENCH k=v ..." row.
#
# DAMON_RECLAIM on Debian's 6.12 never acts: damon_reclaim_apply_parameters()
# installs its scheme on the running context and then commits the parameter
# context, which has none, over it (mm/damon/reclaim.c; lru_sort.c does it
# right).  damos_reclaim is DAMON_RECLAIM's scheme set up through DAMON's
# sysfs instead: paddr over all RAM, pageout of regions not accessed for
# min_age, its default 10 ms time quota on top of the same size quota.
#
# DAMOS tiering runs on the paddr operations over all of physical memory, as
# DAMON users do: 6.12 implements migrate_hot/migrate_cold only there (with
# vaddr the write of "on" fails with EPERM).  It then sees every process, but
# the workload is nearly all of the guest's memory.
#
# Reclaim to a pressure goal (SCEN phases or kv, MON tmo, senpai or
# damos_psi): the program runs in a cgroup v2 of its own, its memory on zram
# swap, and three ways of holding that cgroup's memory pressure ("some"
# stall) at 0.1 % of the time (1 ms per 1 s) try to save its memory:
#   tmo       daptrace policy -P tmo -p PID (the goal: the cgroup's pressure,
#             and refaults at 100/s)
#   senpai    the loop of Meta's TMO paper (ASPLOS '22, "Senpai"), every 1 s:
#             reclaim = memory.current x ratio x max(0, 1 - pressure/target),
#             written to the cgroup's memory.reclaim; ratio 5 % a second
#             (the paper's production ratio would reclaim 0.1 MiB a second
#             here, nothing within a run: 5 % of ~200 MiB is about the 10
#             MiB/s zram takes under TCG, as daptrace's ceiling is)
#   damos_psi a DAMOS pageout scheme (vaddr, the program's pid) with a
#             some_mem_psi_us quota goal of 1000 us per 1 s interval
#             (6.12: DAMOS's pressure is the system's, the same here: the
#             program is all that runs), not accessed for >= 2 s like
#             -P tmo's idle=2s, at most 256 MiB/s like -P tmo
# SCEN phases: daptrace-policy-workload phases (hot, warm and cold sets that
# change size every 15 s); kv: memcached (Debian's, copied in by
# bench/policy.sh) under daptrace-kv-client's Zipf load.  Sampled once a
# second: the cgroup's memory.current and stall, its refaults
# (workingset_refault_* in memory.stat), the program's VmSwap; the
# program's own throughput; every value checked at the end.

. "$(dirname "$0")/../lib/ktap.sh"
. "$(dirname "$0")/../lib/setup.sh"

TMP=/tmp/policy-bench
D=/sys/kernel/mm/damon/admin/kdamonds/0
R=/sys/module/damon_reclaim/parameters
COLD_MB=128
ROW=

spec=$(sed -n 's/.*bench\.policy=\([^ ]*\).*/\1/p' /proc/cmdline)
MON=${spec%-*}
SCEN=${spec#*-}

vmstat() { awk -v k="$1" '$1 == k { print $2 }' /proc/vmstat; }
status_kb() { awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/status" 2>/dev/null; }
# CPU of a process or thread, ms (utime + stime; USER_HZ 100)
cpu_ms() { awk '{ print ($14 + $15) * 10 }' "/proc/$1/stat" 2>/dev/null || echo 0; }

# ram_range: "LO HI", the lowest and the highest System RAM address.
ram_range() {
	awk -F'[- ]' '/^[0-9a-f]+-[0-9a-f]+ : System RAM$/ {
		print $1, $2 }' /proc/iomem | while read -r lo hi; do
		echo "$((0x$lo)) $((0x$hi + 1))"
	done | sort -n | awk 'NR == 1 { lo = $1 } { hi = $2 } END { print lo, hi }'
}

damos_common() { # PID, or "paddr"
	echo 1 > /sys/kernel/mm/damon/admin/kdamonds/nr_kdamonds
	echo 1 > $D/contexts/nr_contexts
	echo 1 > $D/contexts/0/targets/nr_targets
	if [ "$1" = paddr ]; then
		echo paddr > $D/contexts/0/operations
		ram_range > $TMP/ram
		read -r lo hi < $TMP/ram
		r=$D/contexts/0/targets/0/regions
		echo 1 > $r/nr_regions
		echo "$lo" > $r/0/start
		echo "$hi" > $r/0/end
	else
		echo vaddr > $D/contexts/0/operations
		echo "$1" > $D/contexts/0/targets/0/pid_target
	fi
	a=$D/contexts/0/monitoring_attrs
	echo 5000 > "$a"/intervals/sample_us
	echo 100000 > "$a"/intervals/aggr_us
	echo 1000000 > "$a"/intervals/update_us
	echo 10 > "$a"/nr_regions/min
	echo 1000 > "$a"/nr_regions/max
}

damos_scheme() { # INDEX ACTION NR_MIN NR_MAX AGE_MIN QUOTA_BYTES [NID]
	s=$D/contexts/0/schemes/$1
	echo "$2" > "$s"/action
	echo 0 > "$s"/access_pattern/sz/min
	echo 18446744073709551615 > "$s"/access_pattern/sz/max
	echo "$3" > "$s"/access_pattern/nr_accesses/min
	echo "$4" > "$s"/access_pattern/nr_accesses/max
	echo "$5" > "$s"/access_pattern/age/min
	echo 4294967295 > "$s"/access_pattern/age/max
	echo "$6" > "$s"/quotas/bytes
	echo 1000 > "$s"/quotas/reset_interval_ms
	[ -z "${7:-}" ] || echo "$7" > "$s"/target_nid
}

kdamond_cpu() {
	p=$(cat $D/pid 2>/dev/null)
	[ -n "$p" ] && [ "$p" -gt 0 ] 2>/dev/null && cpu_ms "$p" || echo 0
}

reclaim() {
	zram_swap_on || ktap_exit_fail_msg "no zram swap"
	pswpin0=$(vmstat pswpin)
	daptrace-policy-workload reclaim --hot 32M --warm 32M --cold ${COLD_MB}M \
		--duration 32 --pidfile $TMP/pid > $TMP/out 2>&1 &
	wl=$!
	while [ ! -s $TMP/pid ]; do sleep 0.1; done
	pid=$(cat $TMP/pid)
	case $MON in
	daptrace)
		daptrace policy -q -p "$pid" -S "pageout idle=5s quota=64M/1s" > $TMP/mon 2>&1 &
		mon=$!
		;;
	damos | damos_reclaim)
		# the same scheme; damos_reclaim as DAMON_RECLAIM sets it up
		if [ "$MON" = damos ]; then damos_common "$pid"; else damos_common paddr; fi
		echo 1 > $D/contexts/0/schemes/nr_schemes
		damos_scheme 0 pageout 0 0 50 67108864
		[ "$MON" = damos ] || echo 10 > $D/contexts/0/schemes/0/quotas/ms
		echo on > $D/state || ktap_exit_fail_msg "DAMOS refused the scheme (echo on > state)"
		;;
	damon_reclaim)
		echo 5000000 > $R/min_age
		echo 67108864 > $R/quota_sz
		echo 1000 > $R/quota_reset_interval_ms
		# active at any free memory (its default stays idle above 50 % free)
		echo 1000 > $R/wmarks_high
		echo 999 > $R/wmarks_mid
		echo 0 > $R/wmarks_low
		# all of RAM: by default it watches only the biggest System RAM
		# block, which need not hold the workload
		ram_range > $TMP/ram
		read -r lo hi < $TMP/ram
		echo "$lo" > $R/monitor_region_start
		echo "$hi" > $R/monitor_region_end
		echo Y > $R/enabled || ktap_exit_fail_msg "DAMON_RECLAIM refused to start"
		;;
	esac
	reached=none t=0
	while [ -e "/proc/$pid/status" ] && [ $t -le 30 ]; do
		swap=$(status_kb "$pid" VmSwap)
		if [ "$reached" = none ] && [ "${swap:-0}" -ge $((COLD_MB * 1024 * 9 / 10)) ]; then
			reached=$t
		fi
		sleep 1
		t=$((t + 1))
	done
	case $MON in
	daptrace) cpu=$(cpu_ms "$mon") ;;
	damos|damos_reclaim) cpu=$(kdamond_cpu) ;;
	damon_reclaim) p=$(cat $R/kdamond_pid); cpu=$(cpu_ms "$p") ;;
	esac
	wait "$wl"
	wst=$?
	case $MON in
	daptrace) wait "$mon"; cpu=$((cpu + $(cat /sys/kernel/daptrace/worker_cpu_us) / 1000)) ;;
	damos|damos_reclaim) echo off > $D/state ;;
	damon_reclaim)
		for f in nr_reclaim_tried_regions bytes_reclaim_tried_regions \
			nr_reclaimed_regions bytes_reclaimed_regions nr_quota_exceeds; do
			echo "$f $(cat $R/$f 2>/dev/null)" >> $TMP/out
		done
		echo N > $R/enabled ;;
	esac
	ROW="reached_s=$reached swap_kb=$(sed -n 's/^VmSwap:[[:space:]]*\([0-9]*\).*/\1/p' $TMP/out)"
	ROW="$ROW hot_evicted=$(sed -n 's/^evicted hot=\([0-9]*\) .*/\1/p' $TMP/out)"
	ROW="$ROW warm_evicted=$(sed -n 's/^evicted .* warm=\([0-9]*\)/\1/p' $TMP/out)"
	ROW="$ROW refault_kb=$((($(sed -n 's/^pswpin //p' $TMP/out) - pswpin0) * 4))"
	ROW="$ROW cpu_ms=$cpu verify=$(grep -q '^verify ok' $TMP/out && [ $wst = 0 ] && echo ok || echo FAILED)"
}

cgroup_on() {
	grep -q ' cgroup2 ' /proc/mounts || mount -t cgroup2 none /sys/fs/cgroup || return 1
	echo +memory > /sys/fs/cgroup/cgroup.subtree_control || return 1
	CG=/sys/fs/cgroup/bench
	mkdir -p $CG
}

cg_psi() { sed -n 's/^some .*total=\([0-9]*\).*/\1/p' $CG/memory.pressure; }
cg_refaults() { awk '$1 ~ /^workingset_refault_/ { n += $2 } END { print n + 0 }' $CG/memory.stat; }
# CPU of a process and of the children it waited for, ms
cpu_all_ms() { awk '{ print ($14 + $15 + $16 + $17) * 10 }' "/proc/$1/stat" 2>/dev/null || echo 0; }

# The Senpai loop (TMO, ASPLOS '22): every second, reclaim a share of the
# cgroup's memory scaled down as the pressure nears the target.
senpai_loop() {
	target=1000 ratio_pm=50 last=$(cg_psi)
	while [ ! -e $TMP/stop ]; do
		sleep 1
		now=$(cg_psi)
		d=$((now - last))
		last=$now
		[ $d -lt $target ] || continue
		cur=$(cat $CG/memory.current)
		r=$((cur / 1000 * ratio_pm / 1000 * (target - d) / target))
		[ $r -lt 4096 ] || echo $r > $CG/memory.reclaim 2>/dev/null || :
	done
}

damos_psi_on() { # PID
	damos_common "$1"
	echo 1 > $D/contexts/0/schemes/nr_schemes
	damos_scheme 0 pageout 0 0 20 268435456
	g=$D/contexts/0/schemes/0/quotas/goals
	echo 1 > $g/nr_goals
	echo some_mem_psi_us > $g/0/target_metric
	echo 1000 > $g/0/target_value
	echo on > $D/state || ktap_exit_fail_msg "DAMOS refused the scheme (echo on > state)"
}

# The effective quota of the goal-driven policy now, bytes ("" if none).
eff_quota() {
	case $MON in
	damos_psi)
		echo update_schemes_effective_quotas > $D/state 2>/dev/null &&
			cat $D/contexts/0/schemes/0/quotas/effective_bytes ;;
	tmo)
		sed -n 's/.*quota \([0-9.]*\) \([KMG]*i*B\)\/.*/\1 \2/p' $TMP/mon 2>/dev/null | tail -n 1 |
			awk '{ m = $2 == "KiB" ? 1024 : $2 == "MiB" ? 1048576 : $2 == "GiB" ? 1073741824 : 1
			       printf "%d", $1 * m }' ;;
	esac
}

# goal_reclaim: the program is running in $CG as $pid; run MON on it and
# sample until $TMP/done appears.  Sets the ROW fields common to both.
goal_reclaim() {
	cur0=$(cat $CG/memory.current)
	psi0=$(cg_psi)
	rf0=$(cg_refaults)
	case $MON in
	tmo)
		daptrace policy -P tmo -p "$pid" --progress 1s > $TMP/mon 2>&1 &
		mon=$! ;;
	senpai)
		senpai_loop &
		mon=$! ;;
	damos_psi)
		damos_psi_on "$pid" ;;
	esac
	t=0
	: > $TMP/series
	while [ ! -e $TMP/done ] && [ -e /proc/$pid/status ]; do
		sleep 1
		t=$((t + 1))
		# not once the program's own run is over (its check reads all back)
		[ ! -e $TMP/done ] || break
		echo "t=$t cur=$(cat $CG/memory.current) psi=$(($(cg_psi) - psi0))" \
		     "rf=$(($(cg_refaults) - rf0)) swap=$(status_kb "$pid" VmSwap) q=$(eff_quota)" >> $TMP/series
		# a vaddr kdamond ends with its target, before the loop does:
		# its CPU as last seen alive
		[ "$MON" != damos_psi ] || { k=$(kdamond_cpu); [ "$k" = 0 ] || kcpu=$k; }
	done
	case $MON in
	tmo) cpu=$(cpu_ms "$mon") ;;
	senpai) cpu=$(cpu_all_ms "$mon") ;;
	damos_psi) k=$(kdamond_cpu); [ "$k" = 0 ] || kcpu=$k; cpu=${kcpu:-0} ;;
	esac
	touch $TMP/stop
	case $MON in
	tmo) kill -INT "$mon"; wait "$mon"
	     cpu=$((cpu + $(cat /sys/kernel/daptrace/worker_cpu_us) / 1000)) ;;
	senpai) wait "$mon" ;;
	damos_psi) echo off > $D/state ;;
	esac
	sed 's/^/# /' $TMP/series
	[ "$MON" != tmo ] || sed 's/^/# tmo: /' $TMP/mon | tail -n 6
	sed -n 's/^/# smaps: /p' /proc/$pid/smaps_rollup 2>/dev/null | grep -i 'rss\|swap\|huge'
	# saved: the cgroup's memory below where it started; pressure per second
	ROW="$ROW $(awk -v c0="$cur0" -v tgt=1000 '
		{ for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
		  n++; t[n] = v["t"]; sv[n] = (c0 - v["cur"]) / 1048576; p[n] = v["psi"]; rf = v["rf"] }
		END {
			for (i = 11; i <= n; i++) { s += sv[i]; m++ }
			# pressure over 10 s windows: when it first came within 20 % of the
			# goal, and the share of later windows within +-20 %
			reach = -1
			for (i = 10; i <= n; i++) {
				w = (p[i] - (i > 10 ? p[i - 10] : 0)) / 10 / tgt
				if (reach < 0 && w >= 0.8) reach = t[i]
				if (reach >= 0) { k++; if (w >= 0.8 && w <= 1.2) held++ }
			}
			# memory saved over time: MiB at every 5th second
			for (i = 5; i <= n; i += 5) ts = ts (ts == "" ? "" : ",") sprintf("%.0f", sv[i])
			printf "saved_mb=%.0f saved_end_mb=%.0f psi_pct=%.3f refaults=%d reach_s=%s held=%s saved_ts=%s",
			       m ? s / m : 0, sv[n], n ? p[n] / n / 1e4 : 0, rf,
			       reach < 0 ? "never" : reach, k ? sprintf("%.2f", held / k) : "none",
			       ts == "" ? "none" : ts
		}' $TMP/series) cpu_ms=$cpu"
}

phases() {
	zram_swap_on || ktap_exit_fail_msg "no zram swap"
	cgroup_on || ktap_exit_fail_msg "no cgroup v2 with the memory controller"
	sh -c 'echo $$ > /sys/fs/cgroup/bench/cgroup.procs && exec "$@"' sh \
		daptrace-policy-workload phases --hot 32M --warm 32M --cold 128M --phase 15 \
		--pidfile $TMP/pid > $TMP/out 2>&1 &
	wl=$!
	while [ ! -s $TMP/pid ]; do sleep 0.1; done
	pid=$(cat $TMP/pid)
	( wait_pid=$pid; while grep -q . /proc/$wait_pid/status 2>/dev/null &&
		! grep -q '^touch bad=' $TMP/out; do sleep 0.2; done; touch $TMP/done ) &
	goal_reclaim
	wait "$wl"
	wst=$?
	ROW="$ROW $(awk -F'[= ]' '/^phase=[0-9] hot_pages_per_s=/ { s += $4; n++ } END {
		printf "tput=%.0f", n ? s / n : 0 }' $TMP/out)"
	ROW="$ROW verify=$(grep -q '^verify ok' $TMP/out && [ $wst = 0 ] && echo ok || echo FAILED)"
}

kv() {
	zram_swap_on || ktap_exit_fail_msg "no zram swap"
	cgroup_on || ktap_exit_fail_msg "no cgroup v2 with the memory controller"
	command -v memcached > /dev/null || ktap_exit_fail_msg "memcached is not in the guest"
	sh -c 'echo $$ > /sys/fs/cgroup/bench/cgroup.procs && exec "$@"' sh \
		memcached -u root -s $TMP/mc.sock -m 1024 -M -t 2 > $TMP/mc.log 2>&1 &
	mc=$!
	while [ ! -S $TMP/mc.sock ]; do sleep 0.1; done
	daptrace-kv-client --socket $TMP/mc.sock --keys 40000 --value 4000 --zipf 0.99 \
		--duration 60 --ready $TMP/ready > $TMP/out 2>&1 &
	cl=$!
	while [ ! -e $TMP/ready ] && kill -0 $cl 2>/dev/null; do sleep 0.1; done
	pid=$mc
	( while kill -0 $cl 2>/dev/null && ! grep -q '^ops_per_s=' $TMP/out; do sleep 0.2; done
	  touch $TMP/done ) &
	goal_reclaim
	wait "$cl"
	wst=$?
	kill "$mc"
	ROW="$ROW tput=$(sed -n 's/^ops_per_s=\([0-9]*\).*/\1/p' $TMP/out)"
	ROW="$ROW verify=$(grep -q '^verify ok' $TMP/out && [ $wst = 0 ] && echo ok || echo FAILED)"
}

tiering() {
	echo 0 > /proc/sys/kernel/numa_balancing 2>/dev/null
	daptrace-policy-workload tiering --hot 16M --cold 64M --phase 14 --fast-node 0 \
		--slow-node 1 --pidfile $TMP/pid --go $TMP/go > $TMP/out 2>&1 &
	wl=$!
	while [ ! -s $TMP/pid ]; do sleep 0.1; done
	pid=$(cat $TMP/pid)
	mig0=$(vmstat pgmigrate_success)
	case $MON in
	daptrace)
		daptrace policy -q -p "$pid" -S "migrate_hot 0 freq=80-100" \
			-S "migrate_cold 1 idle=4s" > $TMP/mon 2>&1 &
		mon=$!
		;;
	damos)
		damos_common paddr
		echo 2 > $D/contexts/0/schemes/nr_schemes
		damos_scheme 0 migrate_hot 16 20 0 0 0
		damos_scheme 1 migrate_cold 0 0 40 0 1
		echo on > $D/state || ktap_exit_fail_msg "DAMOS refused the scheme (echo on > state)"
		;;
	esac
	sleep 1
	touch $TMP/go
	wait "$wl"
	wst=$?
	case $MON in
	daptrace) cpu=$(cpu_ms "$mon"); wait "$mon"
		cpu=$((cpu + $(cat /sys/kernel/daptrace/worker_cpu_us) / 1000)) ;;
	damos) cpu=$(kdamond_cpu); echo off > $D/state ;;
	esac
	f() { sed -n "s/^$1 .*$2=\([^ ]*\).*/\1/p" $TMP/out | tail -n 1; }
	ROW="conv1_s=$(sed -n 's/^converge phase=1 secs=//p' $TMP/out)"
	ROW="$ROW conv2_s=$(sed -n 's/^converge phase=2 secs=//p' $TMP/out)"
	ROW="$ROW end_hotB_fast=$(f end hotB_fast) end_A_slow=$(f end hotA_slow)"
	ROW="$ROW end_cold_slow=$(f end cold_slow)"
	ROW="$ROW migrated_mb=$((($(vmstat pgmigrate_success) - mig0) * 4 / 1024))"
	ROW="$ROW cpu_ms=$cpu verify=$(grep -q '^verify ok' $TMP/out && [ $wst = 0 ] && echo ok || echo FAILED)"
}

ktap_print_header
ktap_set_plan 1
damon_stat_off || ktap_exit_fail_msg "cannot turn DAMON_STAT off"
mkdir -p $TMP
case $SCEN in
reclaim) reclaim ;;
tiering) tiering ;;
phases) phases ;;
kv) kv ;;
*) ktap_exit_fail_msg "bench.policy='$spec': expected MON-reclaim, MON-tiering, MON-phases or MON-kv" ;;
esac
sed 's/^/# /' $TMP/out
echo "BENCH mon=$MON scen=$SCEN kernel=$(uname -r) $ROW"
case $ROW in
*verify=ok*) ktap_test_pass "policy bench $MON $SCEN" ;;
*) ktap_test_fail "policy bench $MON $SCEN" "the workload's data check failed" ;;
esac
ktap_finished
