#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Overhead of the allocation tracer of `record --objects` on the target
# (host side, no VM: the tracer is plain userspace).  objects-test -a ROUNDS
# does ROUNDS x 1000 malloc/free pairs of 16 B..64 KiB (1 in 16 at least a
# page, so logged) and prints its own run time; it runs with and without
# LD_PRELOAD=libdaptrace-objtrace.so, alternating, the first flipping every
# round.
#
#   bench/objtrace.sh [--rounds N] [--allocs ROUNDS] [--out FILE]
set -euo pipefail

TOP=$(cd "$(dirname "$0")/.." && pwd)
ROUNDS=5 ALLOCS=2000 OUT=/dev/stdout
while [ $# -gt 0 ]; do
	case $1 in
	--rounds) ROUNDS=$2; shift ;;
	--allocs) ALLOCS=$2; shift ;;
	--out) OUT=$2; shift ;;
	--lock) shift ;;	# host only: no VM lock needed
	*) echo "bench/objtrace.sh: unknown option '$1' (--rounds N, --allocs ROUNDS, --out FILE)" >&2
	   exit 2 ;;
	esac
	shift
done
for v in "$ROUNDS" "$ALLOCS"; do
	[[ $v =~ ^[1-9][0-9]*$ ]] || { echo "bench/objtrace.sh: not a positive integer: '$v'" >&2; exit 2; }
done

make -C "$TOP/userspace" --no-print-directory -s all
make -C "$TOP/workload" --no-print-directory -s all
WL=$TOP/build/workload/objects-test
LIB=$TOP/userspace/build/libdaptrace-objtrace.so
DIR=$TOP/build/bench
mkdir -p "$DIR"
ROWS=$DIR/objtrace-rows.txt LOG=$DIR/objtrace.log
: > "$ROWS"

for r in $(seq "$ROUNDS"); do
	order="off on"
	[ $((r % 2)) = 0 ] && order="on off"
	for mode in $order; do
		if [ "$mode" = on ]; then
			t=$(LD_PRELOAD=$LIB DAPTRACE_OBJTRACE_FD=9 "$WL" -a "$ALLOCS" 9> "$LOG")
			echo "on $r $t $(wc -l < "$LOG") $(stat -c %s "$LOG")" >> "$ROWS"
		else
			echo "off $r $("$WL" -a "$ALLOCS") 0 0" >> "$ROWS"
		fi
	done
done

python3 - "$ROWS" "$ROUNDS" "$ALLOCS" "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')" > "$OUT" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
t = {m: [float(x[2]) for x in rows if x[0] == m] for m in ("off", "on")}
on = [x for x in rows if x[0] == "on"]
ratio = [float(a[2]) / float(b[2]) for a in on for b in rows
         if b[0] == "off" and a[1] == b[1]]
lines = statistics.median(int(x[3]) for x in on)
size = statistics.median(int(x[4]) for x in on)
cost = (statistics.median(t["on"]) - statistics.median(t["off"])) / lines * 1e6
def cell(v, f):
    return (f + " [" + f + "–" + f + "]") % (statistics.median(v), min(v), max(v))
print("## Allocation tracer overhead (`record --objects`)\n")
print("    bench/objtrace.sh --rounds %s --allocs %s\n" % (sys.argv[2], sys.argv[3]))
print("`objects-test -a %s`: %s000 malloc/free pairs of 16 B..64 KiB, one in 16 at" % (sys.argv[3], sys.argv[3]))
print("least a page and so logged; with and without the tracer preloaded,")
print("alternating, on the host (%s); median [min–max] over %s rounds.\n" % (sys.argv[4], sys.argv[2]))
print("| tracer | run time, ms | per-round ratio with/without |")
print("| --- | --- | --- |")
print("| without | %s | |" % cell([x * 1e3 for x in t["off"]], "%.1f"))
print("| with | %s | %s |" % (cell([x * 1e3 for x in t["on"]], "%.1f"), cell(ratio, "%.2f")))
print()
print("The log had %d lines (%.1f MB); the added time is %.2f us per logged" % (lines, size / 1e6, cost))
print("line, i.e. per allocation or free of at least a page: one `write(2)` each")
print("(a single write keeps concurrent threads' lines whole).  Allocations below")
print("the threshold cost one size comparison.  This is an allocation-bound")
print("worst case; a program doing work between allocations pays this per large")
print("allocation only.")
PY
echo "bench/objtrace.sh: wrote $OUT" >&2
