#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# What the online accuracy estimate costs: daptrace with its accuracy
# probes off (probe_pages 0) against on (64, the default ceiling, under the
# default cost bound probe_max_cpu_bp 500: at most 5 % of the worker's CPU
# by the module's own count, probe_us), one VM boot per run, alternating,
# same module and workload:
#
#   bench/probe-cost.sh [--rounds N] [--kernels "newest"]
#                       [--wl "hotcold smallhot"] [--setting default]
#                       [--probes 64] [--out FILE] [--lock FILE]
#
# Each run is bench/ab.sh's daptrace run (bench/guest.sh: fixed 10 s of
# daptrace-workload, worker CPU, samples, accuracy by daptrace-score) in a
# boot of its own, the two settings taking turns and the first one rotating
# every round (DESIGN.md 3: runs sharing a boot are not comparable under
# TCG).  The probes cost most where the regions' own checks are few: the
# small hot set keeps fewer regions than hotcold.  The summary
# (bench/pair-report.py): per kernel and workload, median worker CPU of
# each, the ratio of medians (on / off) and the per-round ratios, CPU per
# sample, recall and precision.  (10 s runs are too short for the estimate
# to be compared with the truth: bench/estimate.sh does that.)
set -euo pipefail

TOP=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
. "$TOP/bench/lib.sh"
SERIES=newest WLS="hotcold smallhot" SETTING=default PROBES=64
BENCH_OPTS="kernels=SERIES wl=WLS setting=SETTING probes=PROBES"
bench_parse_opts bench/probe-cost.sh "$@"
[[ $PROBES =~ ^[1-9][0-9]*$ ]] ||
	{ echo "bench/probe-cost.sh: --probes: not a positive integer: '$PROBES'" >&2; exit 2; }
for s in $SERIES; do
	bench_kernel bench/probe-cost.sh "$s" > /dev/null
done
bench_rows probe-cost

for s in $SERIES; do
	k=$(bench_kernel bench/probe-cost.sh "$s")
	for wl in $WLS; do
		for r in $(seq "$ROUNDS"); do
			order=(off on)
			[ $((r % 2)) = 1 ] || order=(on off)
			for which in "${order[@]}"; do
				n=0
				[ "$which" = off ] || n=$PROBES
				"$TOP/bench/ab.sh" --rounds 1 --wl "$wl" --settings "$SETTING" \
					--mons daptrace --kernel "$s" --probe-pages "$n" \
					--tag "probes_$which" --lock "$LOCK" --out /dev/null
				sed "s/^/kernel=$k which=$which round=$r /" \
					"$DIR/ab-smp2-probes_$which-rows.txt" >> "$ROWS"
			done
		done
	done
done

{
	echo "## The cost of the accuracy probes: probe_pages 0 against $PROBES, one boot per run"
	echo
	echo "    bench/probe-cost.sh --rounds $ROUNDS --kernels \"$SERIES\" --wl \"$WLS\" --setting $SETTING --probes $PROBES"
	echo
	echo "$(date -u +%F): each run in its own boot (2 vCPUs, qemu64, 8 GiB), the two settings"
	echo "taking turns and the first rotating every round; 10 s of the workload; worker"
	echo "CPU as a share of the wall time.  Ratio: on / off, of the medians, and the"
	echo "spread of the per-round ratios."
	echo
	python3 "$TOP/bench/pair-report.py" "$ROWS" off on
} > "$OUT"
