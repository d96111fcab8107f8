#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# What the exporter, scraped every 5 s, adds to the monitor's worker
# (issue 31's goal: <= 5 % worker CPU, 0 missed snapshots): one boot per
# run on the newest kernel, runs with and without the exporter taking
# turns (the first of each round alternates), the same workload monitored
# the same way in both (bench/exporter-guest.sh); medians with the range.
#
#   bench/exporter.sh [--rounds N] [--out FILE] [--lock FILE]
set -euo pipefail

TOP=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
. "$TOP/bench/lib.sh"
bench_parse_opts bench/exporter.sh "$@"

K=$("$TOP/scripts/kernels.sh" | sort -V | tail -n1)
[ -n "$K" ] || { echo "bench/exporter.sh: no supported kernel installed" >&2; exit 1; }
bench_rows exporter
# the dynamically linked CLI: the guest's static one has no HTTP server
make -C "$TOP/userspace" --no-print-directory -s

for r in $(seq "$ROUNDS"); do
	order="0 1"
	[ $((r % 2)) = 1 ] || order="1 0"
	for with in $order; do
		log=$DIR/exporter-$r-$with.log
		echo "bench/exporter.sh: round $r, exporter=$with" >&2
		bench_boot "$log" "bench/exporter.sh: round $r exporter=$with" \
			--kernel "$K" --no-la57 --append "dtbench.exporter=$with" \
			--guest-file "$TOP/userspace/build/daptrace:/opt/daptrace/daptrace" \
			--test extra/exporter-guest --extra-test "$TOP/bench/exporter-guest.sh"
		bench_row bench/exporter.sh "$log" 's/.*# exporter-bench //p' "round=$r"
	done
done

python3 - "$ROWS" "$ROUNDS" "$K" > "$OUT" <<'PY'
import statistics, sys
rows = [dict(kv.split("=", 1) for kv in l.split()) for l in open(sys.argv[1])]
rounds, kernel = sys.argv[2], sys.argv[3]
def cell(v, f="%.0f"):
    return (f + " [" + f + "–" + f + "]") % (statistics.median(v), min(v), max(v))
without = {r["round"]: r for r in rows if r["exporter"] == "0"}
with_ = {r["round"]: r for r in rows if r["exporter"] == "1"}
ms = lambda r: int(r["worker_us"]) / 1000
ratio = [100 * (ms(with_[k]) / ms(without[k]) - 1) for k in with_ if k in without]
print("    bench/exporter.sh --rounds %s\n" % rounds)
print("%s, one boot per run, %s rounds, median [min–max]. Worker CPU over the same"
      % (kernel, rounds))
print("60 s window of a `hotcold 256M` target (from 5 s after \"on\", default attributes:")
print("5 ms / 100 ms), without and with `daptrace exporter --attach` scraped every 5 s")
print("by `wget` in the guest; the added CPU is the with/without ratio of each round.\n")
print("| | without exporter | with exporter, scraped every 5 s |")
print("| --- | --- | --- |")
print("| worker CPU in 60 s, ms | %s | %s |" % (cell([ms(r) for r in without.values()]),
                                              cell([ms(r) for r in with_.values()])))
print("| snapshots published in 60 s | %s | %s |" % (
    cell([int(r["snapshots"]) for r in without.values()]),
    cell([int(r["snapshots"]) for r in with_.values()])))
print("| worker CPU added by the exporter (goal <= 5 %%) | | %s %% |" % cell(ratio, "%+.1f"))
print("| snapshots the exporter missed (goal 0) | | %d in all |"
      % sum(int(r["missed"]) for r in with_.values()))
print("| snapshots read / published while it ran | | %s |" % ", ".join(
    "%s/%s" % (r["read"], r["published"]) for r in with_.values()))
print("| scrapes served | | %s |" % cell([int(r["scrapes"]) for r in with_.values()]))
print("| the exporter's own CPU in 60 s, ms | | %s |"
      % cell([int(r["exporter_ms"]) for r in with_.values()]))
pairs = [tuple(int(x) for x in p.split(":")) for r in with_.values()
         for p in r["pairs"].split(",")]
per_boot = [statistics.median(100 * (on / off - 1) for off, on in
                              (tuple(int(x) for x in p.split(":")) for p in r["pairs"].split(",")))
            for r in with_.values()]
print("\nWithin each boot with the exporter, 6 pairs of 10 s, the exporter and its scraper")
print("stopped (SIGSTOP) then running: the worker's CPU added, the median of each boot's")
print("pairs, and over all %d pairs:\n" % len(pairs))
print("| | worker CPU added, running against stopped |")
print("| --- | --- |")
print("| median of each boot's 6 pairs | %s |" % ", ".join("%+.1f %%" % v for v in per_boot))
print("| all pairs | %s %% |" % cell([100 * (on / off - 1) for off, on in pairs], "%+.1f"))
PY
echo "bench/exporter.sh: written to $OUT (rows: ${ROWS#"$TOP"/})" >&2
