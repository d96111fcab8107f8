#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# What monitoring costs where it should cost nothing (bench/idle-guest.sh):
# the worker's CPU for a stopped target against a busy one, and the IPIs on
# a CPU that never ran the target or only idles since it did.  One boot per
# round on each kernel (6.1 on a PCID+INVPCID CPU model, 6.12 on qemu64);
# within a boot the phases run one after the other, each with a new target.
#
#   bench/idle.sh [--rounds N] [--out FILE] [--lock FILE]
set -euo pipefail

TOP=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
. "$TOP/bench/lib.sh"
bench_parse_opts bench/idle.sh "$@"

K61=$("$TOP/scripts/kernels.sh" 6.1)
K612=$("$TOP/scripts/kernels.sh" 6.12)
[ -n "$K61" ] && [ -n "$K612" ] || { echo "bench/idle.sh: needs a 6.1 and a 6.12 kernel" >&2; exit 1; }
bench_rows idle

for r in $(seq "$ROUNDS"); do
	for kc in "$K612 qemu64" "$K61 max"; do
		read -r k cpu <<< "$kc"
		log=$DIR/idle-$r-$k.log
		echo "bench/idle.sh: round $r $k -cpu $cpu" >&2
		bench_boot "$log" "bench/idle.sh: run $r on $k" --kernel "$k" --no-la57 --cpu "$cpu" \
			--test extra/idle-guest --extra-test "$TOP/bench/idle-guest.sh"
		# "busy idle none mm moved round" (CPU 0's IPIs: 2-CPU guest)
		row=$(sed -n -e 's/.*# worker CPU over [0-9]*s: busy target \([0-9]*\) us, stopped target \([0-9]*\) us$/\1 \2/p' \
			-e 's/.*# CAL+TLB IPIs .*none: \([0-9]*\) *; mm: \([0-9]*\) *; mm, target moved off CPU 0: \([0-9]*\) *; round: \([0-9]*\) *$/\1 \2 \3 \4/p' \
			"$log" | tr '\n' ' ')
		[ "$(echo "$row" | wc -w)" = 6 ] || { echo "bench/idle.sh: no figures in $log" >&2; exit 1; }
		echo "$k $cpu $row" >> "$ROWS"
	done
done

python3 - "$ROWS" "$ROUNDS" > "$OUT" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
def cell(v, f="%.0f"):
    return (f + " [" + f + "–" + f + "]") % (statistics.median(v), min(v), max(v))
print("## Idle targets and IPIs to CPUs that never ran the target\n")
print("    bench/idle.sh --rounds %s\n" % sys.argv[2])
print("One boot per round and kernel (2 vCPUs); worker CPU over 12 s of a busy")
print("`hotcold 256M` target (from 3 s after monitoring started) against 12 s of")
print("the same target stopped (SIGSTOP), in two 6 s phases of each, alternating;")
print("then CAL+TLB interrupts on CPU 0 over 4 s with the target and the worker")
print("pinned to CPU 1, a new target per phase: `tlb_flush=none` (what monitoring")
print("costs besides flushing), `mm`, `mm` with the target started on CPU 0 and")
print("moved off it once monitored (CPU 0 then idles with the target's page")
print("tables loaded), and `round`.  Median [min–max] over %s rounds.\n" % sys.argv[2])
print("| kernel, CPU model | busy target, ms | stopped target, ms | stopped/busy (goal < 5 %) "
      "| IPIs on CPU 0: none | mm | mm, target moved off | round |")
print("| --- | --- | --- | --- | --- | --- | --- | --- |")
for k in dict.fromkeys((r[0], r[1]) for r in rows):
    rs = [r for r in rows if (r[0], r[1]) == k]
    col = lambda i: [int(r[i]) for r in rs]
    ratio = [100.0 * int(r[3]) / int(r[2]) for r in rs]
    print("| %s, %s | %s | %s | %s %% | %s | %s | %s | %s |" % (
        k[0], k[1], cell([x / 1000 for x in col(2)]), cell([x / 1000 for x in col(3)]),
        cell(ratio, "%.1f"), cell(col(4)), cell(col(5)), cell(col(6)), cell(col(7))))
PY
