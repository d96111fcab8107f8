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
#    idle processes.
#
#   bench/follow.sh [--rounds N] [--out FILE] [--lock FILE] [--module KO]
#
# --module: load KO instead of the module built here (a module of another
# tree, as selftests/vm/run.sh --module).
set -euo pipefail

TOP=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
. "$TOP/bench/lib.sh"
MODULE=()
args=()
while [ $# -gt 0 ]; do
	if [ "$1" = --module ]; then
		[ $# -ge 2 ] || { echo "bench/follow.sh: --module: missing value" >&2; exit 2; }
		MODULE=(--module "$2")
		shift 2
		continue
	fi
	args+=("$1")
	shift
done
bench_parse_opts bench/follow.sh ${args[@]+"${args[@]}"}

K=$(bench_kernel bench/follow.sh 6.12)
bench_rows follow

# run ROUND MODE [N]: one boot; its "BENCH" rows, tagged with the round
run() {
	local r=$1 mode=$2 n=${3:-0} log script
	script=$DIR/follow-$mode.sh
	log=$DIR/follow-$r-$mode-$n.log
	# the guest script with its mode, after the shebang
	sed "2i MODE=$mode N=$n" "$TOP/bench/follow-guest.sh" > "$script"
	echo "bench/follow.sh: round $r $mode${3:+ $n}" >&2
	bench_boot "$log" "bench/follow.sh: run $r $mode" --kernel "$K" --no-la57 \
		${MODULE[@]+"${MODULE[@]}"} --test "extra/follow-$mode" --extra-test "$script"
	grep -o 'BENCH .*' "$log" | sed "s/^BENCH /round=$r /" >> "$ROWS" ||
		{ echo "bench/follow.sh: no figures in $log" >&2; exit 1; }
}

for r in $(seq "$ROUNDS"); do
	if [ $((r % 2)) = 1 ]; then
		run "$r" tree; run "$r" single; run "$r" machine; run "$r" one
	else
		run "$r" single; run "$r" tree; run "$r" one; run "$r" machine
	fi
	run "$r" aging
	for n in 1 64 512 4000; do
		run "$r" scale $n
	done
done

python3 "$TOP/bench/follow-report.py" "$ROWS" "$ROUNDS" "$K" > "$OUT"
echo "bench/follow.sh: wrote $OUT" >&2
