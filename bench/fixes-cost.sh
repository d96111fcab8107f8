#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# What a change to the module costs: the module of an earlier revision
# against this tree's, one VM boot per run, alternating, same workload:
#
#   bench/fixes-cost.sh [--before REV] [--rounds N] [--kernels "6.12 newest"]
#                       [--wl "hotcold"] [--setting default] [--out FILE]
#                       [--lock FILE]
#
# The earlier module is built from REV (default: the commit that ended the
# previous wave, 7cb0581) in a worktree under build/bench/; this tree's from
# build/kmod/ (make modules-all first).  Each run is bench/ab.sh's daptrace
# run (bench/guest.sh: fixed 10 s of daptrace-workload, worker CPU, samples,
# accuracy by daptrace-score) in a boot of its own, the two modules taking
# turns and the first one rotating every round (DESIGN.md 3: runs sharing a
# boot are not comparable under TCG).  The summary: per kernel and workload,
# median worker CPU of each, the ratio of medians and the per-round ratios,
# CPU per sample, recall and precision.
set -euo pipefail

TOP=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
. "$TOP/bench/lib.sh"
BEFORE=7cb0581 SERIES="6.12 newest" WLS=hotcold SETTING=default
BENCH_OPTS="before=BEFORE kernels=SERIES wl=WLS setting=SETTING"
bench_parse_opts bench/fixes-cost.sh "$@"
rev=$(git -C "$TOP" rev-parse --short "$BEFORE^{commit}") ||
	{ echo "bench/fixes-cost.sh: --before: no such revision '$BEFORE'" >&2; exit 2; }
now=$(git -C "$TOP" rev-parse --short HEAD)
DIR=$TOP/build/bench/fixes-cost
OLD=$DIR/tree-$rev
mkdir -p "$DIR"
if [ ! -d "$OLD" ]; then
	git -C "$TOP" worktree add --detach "$OLD" "$rev" > /dev/null
fi

for s in $SERIES; do
	k=$("$TOP/scripts/kernels.sh" "$s")
	[ -n "$k" ] || { echo "bench/fixes-cost.sh: --kernels: $s not installed" >&2; exit 1; }
	make -C "$OLD" --no-print-directory module KVER="$k" > "$DIR/build-$rev-$k.log" 2>&1 ||
		{ echo "bench/fixes-cost.sh: $rev does not build for $k ($DIR/build-$rev-$k.log)" >&2; exit 1; }
	[ -f "$TOP/build/kmod/$k/daptrace.ko" ] ||
		{ echo "bench/fixes-cost.sh: no module of this tree for $k: make modules-all" >&2; exit 1; }
done

ROWS=$DIR/rows.txt
: > "$ROWS"
for s in $SERIES; do
	k=$("$TOP/scripts/kernels.sh" "$s")
	for wl in $WLS; do
		for r in $(seq "$ROUNDS"); do
			order=(before after)
			[ $((r % 2)) = 1 ] || order=(after before)
			for which in "${order[@]}"; do
				ko=$TOP/build/kmod/$k/daptrace.ko
				[ "$which" = after ] || ko=$OLD/build/kmod/$k/daptrace.ko
				"$TOP/bench/ab.sh" --rounds 1 --wl "$wl" --settings "$SETTING" \
					--mons daptrace --kernel "$s" --module "$ko" \
					--tag "fixes_$which" --lock "$LOCK" --out /dev/null
				sed "s/^/kernel=$k which=$which round=$r /" \
					"$TOP/build/bench/ab-smp2-fixes_$which-rows.txt" >> "$ROWS"
			done
		done
	done
done

{
	echo "## The cost of the fixes: $rev against $now, one boot per run"
	echo
	echo "    bench/fixes-cost.sh --before $BEFORE --rounds $ROUNDS --kernels \"$SERIES\" --wl \"$WLS\" --setting $SETTING"
	echo
	echo "$(date -u +%F): each run in its own boot (2 vCPUs, qemu64,+rdrand, 8 GiB), the two modules"
	echo "taking turns and the first rotating every round; 10 s of the workload; worker"
	echo "CPU as a share of the wall time.  Ratio: after / before, of the medians, and"
	echo "the spread of the per-round ratios."
	echo
	python3 "$TOP/bench/pair-report.py" "$ROWS" before after
} > "$OUT"
