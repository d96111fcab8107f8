#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Cost of NUMA placement in the sampling check: one module build loaded with
# placement=1 (the default) and placement=0, one VM boot per run (runs in
# one boot contaminate each other under TCG, selftests/vm/README.md), the two settings
# alternating and the first one flipping every round.
#
#   bench/placement.sh [--rounds N] [--out FILE] [--lock FILE]
#
# Each run is bench/placement-guest.sh: hotcold 256M monitored for 10 s.
set -euo pipefail

TOP=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
. "$TOP/bench/lib.sh"
bench_parse_opts bench/placement.sh "$@"

K=$(bench_kernel bench/placement.sh 6.12)
bench_rows placement

for r in $(seq "$ROUNDS"); do
	order="1 0"
	[ $((r % 2)) = 0 ] && order="0 1"
	for p in $order; do
		log=$DIR/placement-$r-$p.log
		echo "bench/placement.sh: round $r placement=$p" >&2
		bench_boot "$log" "bench/placement.sh: run $r placement=$p" --kernel "$K" \
			--no-la57 --insmod-args "placement=$p" --test extra/placement-guest \
			--extra-test "$TOP/bench/placement-guest.sh"
		bench_row bench/placement.sh "$log" \
			's/.*# placement: worker_cpu_us \([0-9]*\) .* nr_regions \([0-9]*\)$/\1 \2/p' "$p $r"
	done
done

python3 - "$ROWS" "$ROUNDS" "$K" > "$OUT" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
cpu = {p: [int(x[2]) / 1000 for x in rows if x[0] == p] for p in ("1", "0")}
regions = {p: [int(x[3]) for x in rows if x[0] == p] for p in ("1", "0")}
ratio = [int(a[2]) / int(b[2]) for a in rows for b in rows
         if a[0] == "1" and b[0] == "0" and a[1] == b[1]]
def cell(v, f="%.0f"):
    return (f + " [" + f + "–" + f + "]") % (statistics.median(v), min(v), max(v))
print("## NUMA placement overhead\n")
print("    bench/placement.sh --rounds %s\n" % sys.argv[2])
print("Worker CPU (ms) over 10 s of `daptrace-workload -p hotcold -s 256M`, default")
print("attributes, %s, two NUMA nodes; one module build loaded with" % sys.argv[3])
print("`placement=1` (default) and `placement=0`, one boot per run, alternating,")
print("the first flipping every round; median [min–max] over %s rounds.\n" % sys.argv[2])
print("| placement | worker CPU, ms | per-round ratio on/off | regions at the end |")
print("| --- | --- | --- | --- |")
print("| on (default) | %s | %s | %s |" % (cell(cpu["1"]), cell(ratio, "%.2f"), cell(regions["1"])))
print("| off | %s | | %s |" % (cell(cpu["0"]), cell(regions["0"])))
print()
print("Placement adds, per check, a `pfn_valid()`, one `struct page` read for")
print("the node and two counter increments on a pte the walk already holds, and")
print("makes the snapshot records 64 bytes instead of 32 (the ring layout does")
print("not depend on the parameter).  With placement, neighbours whose pages")
print("live on different nodes are not merged, so a target spread over nodes")
print("keeps more regions, each checked every interval.")
PY
echo "bench/placement.sh: wrote $OUT" >&2
