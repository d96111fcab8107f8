#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Many targets (issue 36): the cost of monitoring 1 to 4096 mostly idle
# processes, and the recall of one that wakes among them
# (bench/targets-guest.sh: one boot per run, a cgroup of N processes under
# `daptrace record --cgroup`).  The runs of a round go up in N on odd
# rounds and down on even ones; median [min-max] over the rounds.
#
#   bench/targets.sh [--rounds N] [--out FILE] [--lock FILE]
#                    [--kernel SERIES] [--ns "1 64 512 4096"]
#
# --kernel: a series of scripts/kernels.sh (default 6.12; "newest" the
# trixie root's).  Logs and rows in build/bench/targets-*.
set -euo pipefail

TOP=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
. "$TOP/bench/lib.sh"
SERIES=6.12 NS="1 64 512 4096"
BENCH_OPTS="kernel=SERIES ns=NS"
bench_parse_opts bench/targets.sh "$@"
read -ra ns <<< "$NS"
[ ${#ns[@]} -gt 0 ] || { echo "bench/targets.sh: --ns: empty" >&2; exit 2; }
for n in "${ns[@]}"; do
	if ! [[ $n =~ ^[1-9][0-9]*$ ]] || [ "$n" -gt 4096 ] || [ "$n" = 2 ]; then
		echo "bench/targets.sh: --ns: '$n': 1, or 3 to 4096" >&2
		exit 2
	fi
done

K=$("$TOP/scripts/kernels.sh" "$SERIES")
[ -n "$K" ] || { echo "bench/targets.sh: --kernel $SERIES: no such kernel installed" >&2; exit 1; }
make -C "$TOP" --no-print-directory -s modules-all
DIR=$TOP/build/bench
mkdir -p "$DIR"
ROWS=$DIR/targets-$SERIES-rows.txt
: > "$ROWS"

# run ROUND N: one boot; its "BENCH" row, tagged with the round and the date
run() {
	local r=$1 n=$2 log script
	script=$DIR/targets-$n.sh
	log=$DIR/targets-$SERIES-$r-$n.log
	# the guest script with its N, after the shebang
	sed "2i N=$n" "$TOP/bench/targets-guest.sh" > "$script"
	echo "bench/targets.sh: $K round $r, $n targets" >&2
	# 4096 targets: minutes to start under TCG, and a record of 100 MB
	if ! flock "$LOCK" "$TOP/selftests/vm/run.sh" --kernel "$K" --no-la57 \
		--test-timeout 1200 --timeout 1500 \
		--test "extra/targets-$n" --extra-test "$script" > "$log" 2>&1; then
		cp "$TOP/build/vm/$K/console.log" "${log%.log}.console" 2>/dev/null || true
		echo "bench/targets.sh: run $r $n failed (log: $log)" >&2
		return 0
	fi
	grep -o 'BENCH .*' "$log" | sed "s/^BENCH /round=$r date=$(date -u +%F) /" >> "$ROWS" ||
		echo "bench/targets.sh: no figures in $log" >&2
}

for r in $(seq "$ROUNDS"); do
	order=("${ns[@]}")
	if [ $((r % 2)) = 0 ]; then
		mapfile -t order < <(printf '%s\n' "${ns[@]}" | tac)
	fi
	for n in "${order[@]}"; do
		run "$r" "$n"
	done
done

python3 "$TOP/bench/targets-report.py" "$ROWS" "$ROUNDS" "$K" "$SERIES" > "$OUT"
echo "bench/targets.sh: wrote $OUT" >&2
