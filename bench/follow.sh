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
#                   [--parts "tree machine aging scale"]
#
# --parts: only these measurements (default all; the table has only them).
# --module: load KO instead of the module built here (a module of another
# tree, as selftests/vm/run.sh --module).
set -euo pipefail

TOP=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
. "$TOP/bench/lib.sh"
KO='' PARTS="tree machine aging scale"
BENCH_OPTS="module=KO parts=PARTS"
bench_parse_opts bench/follow.sh "$@"
MODULE=()
[ -z "$KO" ] || MODULE=(--module "$KO")
bench_words bench/follow.sh --parts part "tree machine aging scale" "$PARTS"
# part NAME: is NAME among --parts
part() {
	[[ " $PARTS " == *" $1 "* ]]
}

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
	grep -o 'BENCH .*' "$log" | sed "s/^BENCH /round=$r date=$(date -u +%F) /" >> "$ROWS" ||
		{ echo "bench/follow.sh: no figures in $log" >&2; exit 1; }
}

for r in $(seq "$ROUNDS"); do
	if [ $((r % 2)) = 1 ]; then
		! part tree || { run "$r" tree; run "$r" single; }
		! part machine || { run "$r" machine; run "$r" one; }
	else
		! part tree || { run "$r" single; run "$r" tree; }
		! part machine || { run "$r" one; run "$r" machine; }
	fi
	! part aging || run "$r" aging
	if part scale; then
		for n in 1 64 512 4000; do
			run "$r" scale $n
		done
	fi
done

python3 "$TOP/bench/follow-report.py" "$ROWS" "$ROUNDS" "$K" "$PARTS" > "$OUT"
echo "bench/follow.sh: wrote $OUT" >&2
