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
	echo "$(date -u +%F): each run in its own boot (2 vCPUs, qemu64, 8 GiB), the two modules"
	echo "taking turns and the first rotating every round; 10 s of the workload; worker"
	echo "CPU as a share of the wall time.  Ratio: after / before, of the medians, and"
	echo "the spread of the per-round ratios."
	echo
	python3 - "$ROWS" <<'PY'
import statistics, sys
from collections import defaultdict
rows = []
for line in open(sys.argv[1]):
    kv = {}
    for p in line.split():
        if '=' in p:
            k, v = p.split('=', 1)
            kv.setdefault(k, v)	# the first round= is ours
    rows.append(kv)
def f(r, k):
    try:
        return float(r[k])
    except (KeyError, ValueError):
        return None
by = defaultdict(lambda: defaultdict(dict))
for r in rows:
    by[(r['kernel'], r['wl'].split('_')[1] if '_' in r['wl'] else r['wl'])][r['round']][r['which']] = r
print('| kernel | workload | rounds | CPU % before | CPU % after | ratio | per-round ratios '
      '| CPU per sample (us) before / after | recall before / after | precision before / after |')
print('|---|---|---|---|---|---|---|---|---|---|')
def cpu(r):
    return 100.0 * f(r, 'cpu_ms') / f(r, 'wall_ms') if f(r, 'cpu_ms') is not None and f(r, 'wall_ms') else None
def per_sample(r):
    return 1000.0 * f(r, 'cpu_ms') / f(r, 'samples') if f(r, 'samples') else None
def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else float('nan')
for (k, wl), rounds in sorted(by.items()):
    pairs = [v for v in rounds.values() if 'before' in v and 'after' in v]
    b = [cpu(p['before']) for p in pairs]
    a = [cpu(p['after']) for p in pairs]
    ratios = sorted(cpu(p['after']) / cpu(p['before']) for p in pairs
                    if cpu(p['before']) and cpu(p['after']) is not None)
    spread = '–'.join('%.2f' % x for x in (ratios[0], ratios[-1])) if ratios else 'n/a'
    print('| %s | %s | %d | %.2f | %.2f | ×%.2f | %s | %.0f / %.0f | %.3f / %.3f | %.3f / %.3f |' % (
        k, wl, len(pairs), med(b), med(a), med(a) / med(b), spread,
        med([per_sample(p['before']) for p in pairs]), med([per_sample(p['after']) for p in pairs]),
        med([f(p['before'], 'recall_median') for p in pairs]), med([f(p['after'], 'recall_median') for p in pairs]),
        med([f(p['before'], 'precision_median') for p in pairs]), med([f(p['after'], 'precision_median') for p in pairs])))
PY
} > "$OUT"
