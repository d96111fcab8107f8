#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The online accuracy estimate against the truth (issue 38): each case a
# workload with exact truth under `daptrace record`, the estimate its
# accuracy probes give (pooled as the CLI pools it) compared with the true
# recall of the same windows by daptrace-score (bench/estimate-guest.sh).
# The comparison is within a run, so a round's cases share one boot; median
# over the rounds of each run's figures (bench/estimate-report.py).
#
#   bench/estimate.sh [--rounds N] [--out FILE] [--lock FILE]
#                     [--kernels "5.10 newest"] [--secs D]
#                     [--cases "hotcold moving smallhot blocks-coarse tlb-none sparse"]
#
# --secs: each case's length (the estimate is compared once its pool is
# whole: 600 accessed probe pages, or 10 s).
# Raw rows in build/bench/estimate-rows.txt, boot logs beside them.
set -euo pipefail

TOP=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
. "$TOP/bench/lib.sh"
SERIES="5.10 newest" SECS=30 CASES="hotcold moving smallhot blocks-coarse tlb-none sparse"
BENCH_OPTS="kernels=SERIES secs=SECS cases=CASES"
bench_parse_opts bench/estimate.sh "$@"
bench_words bench/estimate.sh --cases case "hotcold moving smallhot blocks-coarse tlb-none sparse" "$CASES"
[[ $SECS =~ ^[1-9][0-9]*$ ]] ||
	{ echo "bench/estimate.sh: --secs: not a positive integer: '$SECS'" >&2; exit 2; }
for s in $SERIES; do
	bench_kernel bench/estimate.sh "$s" > /dev/null
done
bench_rows estimate
script=$DIR/estimate-guest.sh
sed "2i CASES=\"$CASES\" D=$SECS" "$TOP/bench/estimate-guest.sh" > "$script"
n=$(echo "$CASES" | wc -w)

for r in $(seq "$ROUNDS"); do
	for s in $SERIES; do
		k=$(bench_kernel bench/estimate.sh "$s")
		log=$DIR/estimate-$s-$r.log
		echo "bench/estimate.sh: $k round $r" >&2
		bench_boot "$log" "bench/estimate.sh: $k round $r" --kernel "$k" --no-la57 \
			--memory 8G --test extra/estimate-guest --extra-test "$script" \
			--test-timeout $((n * (SECS + 90) + 120)) --timeout $((n * (SECS + 90) + 600))
		grep -o 'BENCH .*' "$log" |
			sed "s/^BENCH /round=$r kernel=$k which=probes /; s/ case=/ wl=/" >> "$ROWS" ||
			{ echo "bench/estimate.sh: no figures in $log" >&2; exit 1; }
	done
done

{
	echo "## The online accuracy estimate against the truth, by workload"
	echo
	echo "    bench/estimate.sh --rounds $ROUNDS --kernels \"$SERIES\" --secs $SECS --cases \"$CASES\""
	echo
	echo "$(date -u +%F): one boot per kernel and round (2 vCPUs, qemu64,+rdrand, 8 GiB), the cases one"
	echo "after the other, $SECS s each, probe_pages 64 (the default ceiling) under the"
	echo "default cost bound (probe_max_cpu_bp 500: the probes' share of the worker's CPU"
	echo "within 5 %, but at least 2 probe pages a window, or the precision floor's"
	echo "count where the estimate needs more: probe_max_cpu_bp's documentation), the record's other"
	echo "settings the CLI's defaults (5 ms / 100 ms, 10-1000 regions) but for"
	echo "blocks-coarse (-s 100ms -a 100ms -r 10-10: one check a window, a truth near 0.5)"
	echo "and tlb-none (-t none); sparse: the small hot set with a 16 GiB hole inside the"
	echo "span the regions cover.  daptrace-score pools the estimate as the CLI does and"
	echo "compares it with the true recall of the same windows, once a pool is whole."
	echo "Medians over the rounds of each run's figures.  The probes' cost: the module's"
	echo "probe_us (wall time of the probe work) over worker_cpu_us, of the same run."
	echo
	python3 "$TOP/bench/estimate-report.py" "$ROWS" probes
} > "$OUT"
