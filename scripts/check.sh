#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# `make check`: everything CI runs, as one KTAP stream.
#
#   scripts/check.sh
#
# Steps: deps (scripts/deps.sh), the module for every supported kernel (W=1,
# -Werror), then the VM tests (selftests/vm/run.sh; extra options in
# $VMFLAGS) with, beside them, the steps that need no VM
# (scripts/check-host.sh: the refusal of an unverified kernel series and its
# opt-in, style (checkpatch), shellcheck, sparse, host unit tests
# (tests/unit), userspace tests (userspace/), DKMS, the Debian packages),
# whose results follow the VM's; the exporter under a real Prometheus
# (tests/exporter/prometheus.sh), and the VM tests once more on the debug
# kernel (scripts/check-debug.sh; CHECK_DEBUG=0 leaves that out, counted as
# a skip).  Each boot runs a subset of the tests (below: every test runs on
# one boot at least) unless CHECK_FULL=1 (`make check-full`).  Each step's output goes to
# build/logs/<step>.log.  A step that prints KTAP contributes its results,
# renamed "<step>: <name>"; any other step is one result, and a failure shows
# the log's last 20 lines.  A suite directory without a Makefile (tests/unit/,
# userspace/) is not there yet: a "#" note, no result.  The last line is
# "N passed, M failed[, K skipped]"; exit status 0 only if nothing failed.
set -uo pipefail

TOP=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/check-steps.sh
. "$TOP/scripts/check-steps.sh"

echo "TAP version 13"

step deps "$LOGS/deps.log" "$TOP/scripts/deps.sh"

# low_priority CMD... &: CMD in the background (the function execs: its
# PID is $!) in a session of its own, so that a check that ends early stops
# it and all it started (kill -- -PID), at the lowest priority, so that the
# guests' timing is theirs.  A new session is a new scheduling autogroup
# where the kernel has them (sched_autogroup_enabled): groups share the CPU
# equally whatever their tasks' nice values, so the group's own nice is
# raised too (/proc/self/autogroup; raising it needs no privilege).
# Measured on a 2-core machine: three busy loops under `setsid nice -n 19`
# got 45 % of the CPU beside three at nice 0 (3273 against 3919
# iterations); with their group's nice at 19, 6 %.
low_priority() {
	exec setsid sh -c '{ echo 19 > /proc/self/autogroup; } 2> /dev/null; exec nice -n 19 "$@"' \
		sh "$@"
}

# The debug kernel, if not cached yet, builds from here on (its own lock)
# beside the host steps and the stock kernels' boots, which leave CPU idle
# while their guests wait: on a new machine its 5-40 minutes then no longer
# come on top of the rest.  The debug step below waits for it; if this
# build failed, that step's own call of debug-kernel.sh builds again and
# reports.
DEBUG_BUILD=
if [ "${CHECK_DEBUG:-1}" != 0 ]; then
	low_priority "$TOP/scripts/debug-kernel.sh" > /dev/null \
		2> "$LOGS/debug-kernel-early.log" < /dev/null &
	DEBUG_BUILD=$!
fi
HOST_STEPS=
stop_background() {
	local pid
	for pid in $DEBUG_BUILD $HOST_STEPS; do
		kill -- -"$pid" 2> /dev/null || true
	done
}
trap stop_background EXIT

mapfile -t KERNELS < <("$TOP/scripts/kernels.sh")
[ ${#KERNELS[@]} -gt 0 ] || not_ok "supported kernels installed"
for k in "${KERNELS[@]}"; do
	step "build $k" "$LOGS/build-$k.log" "${MAKE[@]}" module KVER="$k" W=1 WERROR=y
done

# The host's steps (scripts/check-host.sh: style, sparse, the unit and
# userspace tests, DKMS, the packages, ...) run beside the VM boots, whose
# guests leave CPU idle while they wait, as the debug kernel's build does
# (low_priority).  They need the kselftest headers, which the VM step's
# initramfs needs too: extracted first, once.  Their results are counted
# after the VM step's (the exporter's test, after them, builds where the
# userspace tests do).
step "kselftest headers" "$LOGS/ksft-headers.log" "${MAKE[@]}" ksft-headers
low_priority "$TOP/scripts/check-host.sh" > "$LOGS/host.ktap" 2>&1 < /dev/null &
HOST_STEPS=$!

# Every test boots on every supported kernel.  The two extra boots run the
# tests their difference can matter to, so that a fresh machine stays under
# CI's budget (README, "Tests"); `make check-full` (CHECK_FULL=1) runs every
# test there too.  What is left out is counted as skipped.
#  - 5-level paging and page-table isolation (the newest kernel, -cpu max):
#    the page-table walk (the upper-level scan's too: p4d is a level
#    there), the TLB flushes, targets whose mm goes away; not how the
#    regions adapt to what the walk reads (functional/adaptation), which
#    is the same code whatever the page tables.
LA57_SUBSET=(module/load module/sysfs_root abi/targets abi/unload
	functional/accuracy functional/tlb functional/unobservable functional/upper_scan
	functional/mmap_churn functional/idle_target stress/lifecycle stress/unload)
#  - KASAN, lockdep, kmemleak (the debug kernel): everything but the tests
#    of how accurate and how well tuned the results are, which measure the
#    same code as the stock kernels do, and the longest (functional/tlb
#    too: its flush policies' paths are stress/fuzz's, which switches them
#    while the monitor runs); and but the tests of the userspace tools (the
#    policies, following trees and cgroups, the CLI), whose module paths
#    (targets joining and leaving, snapshots read while they come) abi/ and
#    stress/ drive harder, so a debug kernel adds nothing to them.
DEBUG_SKIP=(functional/accuracy functional/adaptation functional/tlb functional/waking_target
	functional/timing functional/intervals_goal functional/accuracy_estimate
	functional/recall_goal functional/lru_cold
	policy/tiering policy/tmo policy/tmo_cgroups policy/regret policy/reclaim numa/placement
	cli/record cli/report cli/objects follow/tree follow/cgroup follow/stat follow/stat_savings)
#  - the series between the oldest and the newest: the ABI, functional and
#    stress tests, but the same measurements, whose outcome depends on the
#    page walk and the TLB code that the oldest and newest series bound
#    (each series' walk is the subject of abi/, functional/accuracy,
#    functional/tlb, functional/unobservable, stress/, which they run; how
#    the regions adapt to it, functional/adaptation, is the same code on
#    every series); and not the userspace tools' tests (policies,
#    following, the CLI), which meet a kernel through what the oldest and
#    the newest series bound too (reclaim, pagemap, process events) but for
#    policy/unobservable, the policies' view of the walk's unobservable
#    memory.  The upper-level scan's walk (functional/upper_scan) is the
#    same on every series after 5.10 (5.10 clears pud bits only), so the
#    oldest and the newest bound it.
MID_SKIP=(functional/adaptation functional/timing functional/intervals_goal functional/upper_scan
	functional/accuracy_estimate functional/recall_goal policy/tiering policy/tmo
	policy/tmo_cgroups policy/regret policy/reclaim numa/placement cli/record cli/report
	cli/objects follow/tree follow/cgroup follow/stat follow/stat_savings)
#  - the oldest and the newest series: every test, but those of code that
#    is the same on every series and meets the kernel only where tests both
#    of them run meet it too, which run on one of the two: the module's own
#    estimates and tuning (the accuracy estimate against the truth, the
#    recall and intervals goals: their walk is functional/accuracy's, which
#    runs everywhere), the CLI's records, reports and live figures (their
#    process events, cgroups and reclaim are follow/tree's, follow/cgroup's
#    and the policies', which run on both), and the TMO policy for several
#    cgroups at once (each cgroup's pressure and reclaim are policy/tmo's,
#    which runs on both).  Those that read what changes most from series
#    to series (pagemap's swap entries: policy/regret; memory.reclaim) go
#    to the newest, where users are going.  About 9 minutes less, which a
#    fresh machine needs to stay under CI's budget (README, "Tests").
NEWEST_ONLY=(functional/accuracy_estimate functional/intervals_goal policy/regret
	policy/tmo_cgroups)
OLDEST_ONLY=(functional/recall_goal cli/record cli/report cli/objects follow/stat
	follow/stat_savings)
VM_SUBSET=() DEBUG_SUBSET=()
if [ "${CHECK_FULL:-0}" = 0 ]; then
	for t in "${LA57_SUBSET[@]}"; do VM_SUBSET+=(--la57-test "$t"); done
	for t in "${DEBUG_SKIP[@]}"; do DEBUG_SUBSET+=(--skip "$t"); done
	mapfile -t SORTED < <(printf '%s\n' "${KERNELS[@]}" | sort -V)
	for k in "${SORTED[@]:1:${#SORTED[@]}-2}"; do
		for t in "${MID_SKIP[@]}"; do VM_SUBSET+=(--kernel-skip "$k:$t"); done
	done
	if [ ${#SORTED[@]} -gt 1 ]; then
		for t in "${NEWEST_ONLY[@]}"; do VM_SUBSET+=(--kernel-skip "${SORTED[0]}:$t"); done
		for t in "${OLDEST_ONLY[@]}"; do VM_SUBSET+=(--kernel-skip "${SORTED[-1]}:$t"); done
	fi
fi

# shellcheck disable=SC2086 # VMFLAGS is a list of options
ktap_step vm "$LOGS/vm.log" "$TOP/selftests/vm/run.sh" ${VM_SUBSET[@]+"${VM_SUBSET[@]}"} \
	${VMFLAGS:-}

t0=$SECONDS
wait "$HOST_STEPS"
HOST_STEPS=
echo "# host steps: waited $((SECONDS - t0)) s for them after the VM step"
replay "$LOGS/host.ktap" || not_ok "host steps: finished (log: ${LOGS#"$TOP"/}/host.ktap)"

# The exporter scraped by a real Prometheus on the host: one boot of the
# newest kernel with a NIC, about a minute.
ktap_step exporter "$LOGS/exporter.log" "$TOP/tests/exporter/prometheus.sh"

# KASAN, lockdep and kmemleak see what the stock kernels cannot.  The kernel
# is built once and cached outside the clone: measured 5-40 min to build
# (from the start of the check on, above), 17 min to run its subset
# (README, "Tests").
if [ "${CHECK_DEBUG:-1}" = 0 ]; then
	skip "debug kernel" "CHECK_DEBUG=0 given"
else
	t0=$SECONDS
	wait "$DEBUG_BUILD" || echo "# debug kernel: the early build failed (log: $LOGS/debug-kernel-early.log)"
	DEBUG_BUILD=
	echo "# debug kernel: waited $((SECONDS - t0)) s for its build"
	ktap_step debug "$LOGS/debug.log" "$TOP/scripts/check-debug.sh" \
		${DEBUG_SUBSET[@]+"${DEBUG_SUBSET[@]}"}
fi

results_end
