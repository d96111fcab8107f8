#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Goals (issue 36): interval auto-tuning (--auto-intervals) against the
# fixed defaults on a hot/cold target and a sparse one (recall, time to
# find the hot set, worker CPU), and a quota goal (goal=rss) on reclaim:
# when it is reached and how well it is held (bench/goals-guest.sh).  One
# boot per run; the fixed and the auto run of a workload alternate, the
# first flipping every round; median [min-max] over the rounds.
#
#   bench/goals.sh [--rounds N] [--out FILE] [--lock FILE] [--kernel SERIES]
#                  [--parts "intervals quota"] [--wl "hotcold smallhot"]
#                  [--tag NAME]
#
# --wl: the workloads of the intervals part (hotcold, smallhot, scattered);
# --tag: rows to build/bench/goals-SERIES-NAME-rows.txt (bench/goals-report.py
# takes several rows files, to put runs made apart in one table).
set -euo pipefail

TOP=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
. "$TOP/bench/lib.sh"
SERIES=6.12 PARTS="intervals quota" WLS="hotcold smallhot" TAG=
BENCH_OPTS="kernel=SERIES parts=PARTS wl=WLS tag=TAG"
bench_parse_opts bench/goals.sh "$@"
bench_words bench/goals.sh --parts part "intervals quota" "$PARTS"
bench_words bench/goals.sh --wl workload "hotcold smallhot scattered" "$WLS"
[[ $TAG =~ ^[A-Za-z0-9_]*$ ]] ||
	{ echo "bench/goals.sh: --tag: letters, digits and _ only: '$TAG'" >&2; exit 2; }
TAG=${TAG:+-$TAG}

K=$("$TOP/scripts/kernels.sh" "$SERIES")
[ -n "$K" ] || { echo "bench/goals.sh: --kernel $SERIES: no such kernel installed" >&2; exit 1; }
make -C "$TOP" --no-print-directory -s modules-all
DIR=$TOP/build/bench
mkdir -p "$DIR"
ROWS=$DIR/goals-$SERIES$TAG-rows.txt
: > "$ROWS"

# run ROUND MODE [WL SET]: one boot; its "BENCH" rows, tagged
run() {
	local r=$1 mode=$2 wl=${3:-} set=${4:-} name log script
	name=$mode${wl:+-$wl-$set}
	script=$DIR/goals-$name.sh
	log=$DIR/goals-$SERIES-$r-$name.log
	sed "2i MODE=$mode WL=$wl SET=$set" "$TOP/bench/goals-guest.sh" > "$script"
	echo "bench/goals.sh: $K round $r $name" >&2
	if ! flock "$LOCK" "$TOP/selftests/vm/run.sh" --kernel "$K" --no-la57 \
		--test "extra/goals-$name" --extra-test "$script" > "$log" 2>&1; then
		echo "bench/goals.sh: run $r $name failed (log: $log)" >&2
		return 0
	fi
	grep -o 'BENCH .*' "$log" |
		sed "s/^BENCH /round=$r date=$(date -u +%F) kernel=$K /" >> "$ROWS" ||
		echo "bench/goals.sh: no figures in $log" >&2
}

for r in $(seq "$ROUNDS"); do
	for p in $PARTS; do
		if [ "$p" = quota ]; then
			run "$r" quota
			continue
		fi
		for wl in $WLS; do
			if [ $((r % 2)) = 1 ]; then
				run "$r" intervals "$wl" fixed; run "$r" intervals "$wl" auto
			else
				run "$r" intervals "$wl" auto; run "$r" intervals "$wl" fixed
			fi
		done
	done
done

python3 "$TOP/bench/goals-report.py" "$ROUNDS" "$SERIES" "$ROWS" > "$OUT"
echo "bench/goals.sh: wrote $OUT" >&2
