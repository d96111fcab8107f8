# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# The guest set-up and state reads several shell selftests share: the
# module's state after a run, zram swap, a cgroup v2 hierarchy, a daemon's
# start.  Each function only sets up or reads; what a test asserts stays
# in the test:
#
#	if dt_left_off; then
#		ktap_test_pass "module left off, no stale target"
#	else
#		ktap_test_fail "module left off, no stale target" \
#			"state $DT_STATE, targets '$DT_TARGETS'"
#	fi
#
# POSIX sh (busybox ash in the guest).  Source after ktap.sh.

# dt_left_off: true when the module is off and has no target left.  Sets
# DT_STATE and DT_TARGETS (the contents of state and target) for the
# test's failure message.
dt_left_off() {
	DT_STATE=$(cat /sys/kernel/daptrace/state)
	DT_TARGETS=$(cat /sys/kernel/daptrace/target)
	[ "$DT_STATE" = off ] && [ -z "$DT_TARGETS" ]
}

# zram_swap_on: 512 MiB of zram swap on /dev/zram0, unless it is already
# swap (then nothing is done and nothing will be undone).  zram and the
# modules it needs come with the initramfs, listed in load order in
# /lib/modules/order (no list: built in, as on the debug kernel).  Sets
# ZRAM_ADDED=1 when it added the swap.  Fails when there is no zram.
zram_swap_on() {
	ZRAM_ADDED=
	grep -q zram0 /proc/swaps && return 0
	if [ -f /lib/modules/order ]; then
		while read -r m; do
			grep -q "^$m " /proc/modules || insmod "/lib/modules/$m.ko" || return 1
		done < /lib/modules/order
	fi
	[ -e /sys/block/zram0 ] || return 1
	echo 512M > /sys/block/zram0/disksize || return 1
	mkswap /dev/zram0 > /dev/null || return 1
	swapon /dev/zram0 || return 1
	ZRAM_ADDED=1
}

# damon_stat_off: Debian's 7.x kernels start DAMON_STAT at boot, a
# whole-machine kdamond that holds DAMON exclusively (a sysfs kdamond's "on"
# fails with EBUSY) and takes CPU and TLB flushes beside whatever else runs.
# A measurement turns it off in every run, whichever monitor it measures,
# so that each runs on an equally quiet machine.  Fails only when it is on
# and cannot be turned off.
damon_stat_off() {
	_stat=/sys/module/damon_stat/parameters/enabled
	[ -w $_stat ] && [ "$(cat $_stat)" = Y ] || return 0
	echo N > $_stat || return 1
	echo "# DAMON_STAT turned off for the run"
}

# zram_swap_off: undoes zram_swap_on (nothing if it added nothing); later
# tests (the OOM ones) expect a guest without swap.
zram_swap_off() {
	[ -z "$ZRAM_ADDED" ] || { swapoff /dev/zram0 && echo 1 > /sys/block/zram0/reset; }
}

# cgroup2_mount [DIR]: sets CG_ROOT to where the cgroup v2 hierarchy is
# mounted, mounting it on DIR (default /sys/fs/cgroup) first if nobody has
# (the busybox guest mounts nothing).  Sets CG_MOUNTED to the directory it
# mounted, empty if it mounted nothing.  Fails when it cannot mount.
cgroup2_mount() {
	CG_MOUNTED=
	CG_ROOT=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
	[ -z "$CG_ROOT" ] || return 0
	CG_ROOT=${1:-/sys/fs/cgroup}
	mkdir -p "$CG_ROOT" || return 1
	mount -t cgroup2 none "$CG_ROOT" || return 1
	# shellcheck disable=SC2034 # for the test's clean-up
	CG_MOUNTED=$CG_ROOT
}

# cgroup2_memory: the memory controller enabled for the children of
# CG_ROOT (after cgroup2_mount).  Fails when the kernel has none.
cgroup2_memory() {
	grep -qw memory "$CG_ROOT/cgroup.controllers" || return 1
	grep -qw memory "$CG_ROOT/cgroup.subtree_control" ||
		echo +memory > "$CG_ROOT/cgroup.subtree_control"
}

# pressure_test_begin DIR NAME...: the start of a test of a policy driven
# by memory pressure, up to its plan: the KTAP header, the tools (a missing
# one fails the test), PSI, zram swap (zram_swap_on), one cgroup v2 with
# the memory controller and memory.pressure per NAME (CG_ROOT/NAME.PID,
# listed in CGS) and the test's scratch directory DIR.  Without PSI, zram
# or the cgroups the whole test is skipped, with the reason, after
# pressure_test_end undid the rest.
pressure_test_begin() {
	ktap_print_header
	ktap_require_tools daptrace daptrace-policy-workload
	[ -e /proc/pressure/memory ] || ktap_skip_all "PSI is off in this kernel (psi=0?)"
	zram_swap_on || ktap_skip_all "no zram swap (zram.ko not in the initramfs or failed to load)"
	PT_DIR=$1
	shift
	CGS=
	if ! pressure_cgroups "$@"; then
		pressure_test_end
		ktap_skip_all "no cgroup v2 with the memory controller and memory.pressure"
	fi
	mkdir -p "$PT_DIR"
}

# pressure_cgroups NAME...: pressure_test_begin's cgroups, added to CGS as
# they are made (so that pressure_test_end removes those made before a
# failure).
pressure_cgroups() {
	cgroup2_mount /sys/fs/cgroup && cgroup2_memory || return 1
	for pc_name in "$@"; do
		mkdir "$CG_ROOT/$pc_name.$$" || return 1
		CGS="${CGS:+$CGS }$CG_ROOT/$pc_name.$$"
		[ -e "$CG_ROOT/$pc_name.$$/memory.pressure" ] || return 1
	done
}

# pressure_test_end: undoes pressure_test_begin: the cgroups (once their
# processes are gone), the mount cgroup2_mount made, the zram swap, DIR.
# Again, it does nothing.
pressure_test_end() {
	for pe_cg in $CGS; do
		rmdir "$pe_cg" 2>/dev/null
	done
	[ -z "$CG_MOUNTED" ] || umount "$CG_MOUNTED"
	zram_swap_off
	[ -z "$PT_DIR" ] || rm -rf "$PT_DIR"
	CGS='' CG_MOUNTED='' ZRAM_ADDED='' PT_DIR=''
}

# log_wait FILE TEXT: wait up to 10 s for TEXT (a fixed string) to appear
# in FILE, the log of a daemon the test started (the exporter's "serving
# http://..."); fails if it did not.
log_wait() {
	lw_i=0
	until grep -qF -e "$2" "$1" 2>/dev/null; do
		[ $lw_i -lt 100 ] || return 1
		sleep 0.1
		lw_i=$((lw_i + 1))
	done
}

# proc_kb FILE KEY: the kB value of "KEY:" in a /proc status-like FILE
# (VmSwap in /proc/PID/status, Shmem in /proc/meminfo), empty if none.
proc_kb() {
	awk -v k="$2:" '$1 == k { print $2 }' "$1" 2>/dev/null
}

# pages_intact OUT: daptrace-policy-workload's output OUT says that every
# page was intact at its final check and at every touch.
pages_intact() {
	grep -qx "verify ok" "$1" && grep -qx "touch bad=0" "$1"
}
