#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Following processes (issue 27): one boot per run (bench/follow-guest.sh
# as an extra test), runs of a pair alternating and the first flipping
# every round, medians with the spread over the rounds:
#  - a process tree against a process alone: per-process precision and
#    recall of the hot set, join latency (fork to the first window);
#  - the whole machine (daptrace stat, 220 idle processes and one busy one)
#    against the busy one alone at the same intervals and region budget:
#    worker CPU;
#  - idle-time percentiles against the ground truth of a workload whose
#    areas go idle at known times;
#  - worker CPU and daptrace's own CPU as targets grow, 1 to 4000 mostly
#    idle processes;
#  - damon_stat (issue 36): on the newest kernel, whose DAMON_STAT starts
#    at boot, `daptrace stat` (DAMON_STAT off) against DAMON_STAT itself
#    (daptrace not monitoring) on the same work, one boot each a round:
#    aging's percentiles, then machine's CPU (the worker's against the
#    kdamond's), in that order in both boots;
#  - build (issue 36): a real build in the guest, `make -j2` of the
#    project's own userspace sources with the host's gcc packed into the
#    guest (bench/toolchain-payload.sh), followed by `daptrace record`:
#    the processes it started and how many of them the record holds, join
#    latency from each one's fork (the kernel's sched_process_fork trace
#    event) to its first window; each compile job's cc1 against the same
#    compile recorded alone: working set, in both the record's `report wss`.
#
#   bench/follow.sh [--rounds N] [--out FILE] [--lock FILE] [--module KO]
#                   [--kernel SERIES] [--parts "tree machine aging scale build"]
#                   [--stat-args ARGS]
#
# --parts: only these measurements (default all but damon_stat, which
# needs the newest kernel, and build, which packs a 20 MiB toolchain into
# its boots and answers another question: bench/run.sh's follow-build
# table; the table has only them).
# --kernel: the series of scripts/kernels.sh the other parts run on
# (default 6.12); damon_stat always runs on the newest.
# --module: load KO instead of the module built here (a module of another
# tree, as selftests/vm/run.sh --module; "%k" the kernel release).
# --stat-args: options of the aging part's `daptrace stat` (its percentiles
# are in steps of the aggregation interval, which stat tunes by default as
# DAMON_STAT does: "--no-auto-intervals" keeps its 20 ms / 1 s).
set -euo pipefail

TOP=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
. "$TOP/bench/lib.sh"
KO='' PARTS="tree machine aging scale" SERIES=6.12 STAT_ARGS=''
BENCH_OPTS="module=KO parts=PARTS kernel=SERIES stat-args=STAT_ARGS"
bench_parse_opts bench/follow.sh "$@"
MODULE=()
[ -z "$KO" ] || MODULE=(--module "$KO")
[[ $STAT_ARGS =~ ^[-A-Za-z0-9=,.%\ ]*$ ]] ||
	{ echo "bench/follow.sh: --stat-args: options, letters, digits and -=,.% only: '$STAT_ARGS'" >&2; exit 2; }
bench_words bench/follow.sh --parts part "tree machine aging scale damon_stat build" "$PARTS"
# part NAME: is NAME among --parts
part() {
	[[ " $PARTS " == *" $1 "* ]]
}

K=$(bench_kernel bench/follow.sh "$SERIES")
KN=-
! part damon_stat || KN=$(bench_kernel bench/follow.sh newest)
bench_rows follow

# build's boots unpack the toolchain first (an extra test that runs before
# the guest script)
TOOLCHAIN=()
if part build; then
	"$TOP/bench/toolchain-payload.sh" "$DIR/follow-toolchain.sh"
	TOOLCHAIN=(--extra-test "$DIR/follow-toolchain.sh")
fi

# run KERNEL ROUND "MODE..." [N]: one boot, the modes one after the other;
# its "BENCH" rows, tagged with the round, the date and the kernel
run() {
	local k=$1 r=$2 mode=$3 n=${4:-0} tag log script extra=()
	tag=${mode// /+}
	[[ $mode != build* ]] || extra=("${TOOLCHAIN[@]}")
	script=$DIR/follow-$tag.sh
	log=$DIR/follow-$r-$tag-$n-$k.log
	# the guest script with its modes, after the shebang
	sed "2i MODE='$mode' N=$n STAT_ARGS='$STAT_ARGS'" "$TOP/bench/follow-guest.sh" > "$script"
	echo "bench/follow.sh: $k round $r $mode${4:+ $n}" >&2
	bench_boot "$log" "bench/follow.sh: run $r $mode" --kernel "$k" --no-la57 \
		${MODULE[@]+"${MODULE[@]}"} --test "extra/follow-$tag" \
		${extra[@]+"${extra[@]}"} --extra-test "$script"
	grep -o 'BENCH .*' "$log" |
		sed "s/^BENCH /round=$r date=$(date -u +%F) kernel=$k /" >> "$ROWS" ||
		{ echo "bench/follow.sh: no figures in $log" >&2; exit 1; }
}

# The two monitors of damon_stat: the same work, in the same order
STAT="aging machine" DSTAT="dstat-aging dstat-machine"
for r in $(seq "$ROUNDS"); do
	if [ $((r % 2)) = 1 ]; then
		! part tree || { run "$K" "$r" tree; run "$K" "$r" single; }
		! part machine || { run "$K" "$r" machine; run "$K" "$r" one; }
		! part damon_stat || { run "$KN" "$r" "$STAT"; run "$KN" "$r" "$DSTAT"; }
		! part build || { run "$K" "$r" build; run "$K" "$r" build-alone; }
	else
		! part tree || { run "$K" "$r" single; run "$K" "$r" tree; }
		! part machine || { run "$K" "$r" one; run "$K" "$r" machine; }
		! part damon_stat || { run "$KN" "$r" "$DSTAT"; run "$KN" "$r" "$STAT"; }
		! part build || { run "$K" "$r" build-alone; run "$K" "$r" build; }
	fi
	! part aging || run "$K" "$r" aging
	if part scale; then
		for n in 1 64 512 4000; do
			run "$K" "$r" scale $n
		done
	fi
done

python3 "$TOP/bench/follow-report.py" "$ROWS" "$ROUNDS" "$K" "$PARTS" "$KN" "$STAT_ARGS" > "$OUT"
echo "bench/follow.sh: wrote $OUT" >&2
