#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Where each monitor's CPU goes per sample, by kernel:
#
#   bench/percost.sh [--kernels "6.12 7.3"] [--mons "daptrace damon"]
#                    [--rounds N] [--secs S] [--graph 0|1] [--lock FILE]
#                    [--out FILE]
#
# One VM boot per monitored run (bench/percost-guest.sh: hotcold 512 MiB,
# 5 ms / 100 ms, 10-1000 regions, DAMON_STAT off), the monitors taking
# turns; each boot takes the VM lock (default /tmp/daptrace-vm.lock) for
# itself only.  --graph 1 (default) times the per-sample operations with
# the function_graph tracer; --graph 0 only counts them (function tracer),
# for CPU figures without the graph tracer's own cost.  The host's perf is copied into the guest (perf record of
# the software cpu-clock event works under TCG).  Logs and the "# PERCOST"
# and "# PERF" lines go to build/bench/percost-<kernel>-<mon>-g<graph>-<round>.log,
# each run's "# PERCOST phase=" and "mon=" lines also to stdout or --out FILE.
set -euo pipefail

TOP=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
. "$TOP/bench/lib.sh"
KERNELS="6.12 7.3" MONS="daptrace damon" SECS=10 GRAPH=1 BENCH_ROUNDS=1
BENCH_OPTS="kernels=KERNELS mons=MONS secs=SECS graph=GRAPH"
bench_parse_opts bench/percost.sh "$@"
[[ $SECS =~ ^[1-9][0-9]*$ ]] || { echo "bench/percost.sh: --secs: not a positive integer: '$SECS'" >&2; exit 2; }
[[ $GRAPH =~ ^[01]$ ]] || { echo "bench/percost.sh: --graph: 0 or 1, not '$GRAPH'" >&2; exit 2; }
PERF=$(command -v perf) || { echo "bench/percost.sh: no perf on the host (linux-perf)" >&2; exit 1; }
bench_words bench/percost.sh --mons monitor "daptrace damon" "$MONS"
read -ra mons <<< "$MONS"
DIR=$TOP/build/bench
mkdir -p "$DIR"

for series in $KERNELS; do
	K=$("$TOP/scripts/kernels.sh" "$series")
	[ -n "$K" ] || { echo "bench/percost.sh: no kernel $series installed (scripts/kernels.sh)" >&2; exit 1; }
	for r in $(seq "$ROUNDS"); do
		s=$(((r - 1) % ${#mons[@]}))
		for mon in "${mons[@]:s}" "${mons[@]:0:s}"; do
			log=$DIR/percost-$series-$mon-g$GRAPH-$r.log
			flock "$LOCK" "$TOP/selftests/vm/run.sh" --kernel "$K" --no-la57 \
				--smp 2 --memory 8G --guest-file "$PERF:/usr/bin/perf" \
				--guest-file "$TOP/bench/lib-guest.sh:/bench/lib-guest.sh" \
				--test extra/percost-guest --extra-test "$TOP/bench/percost-guest.sh" \
				--append "bench.mon=$mon bench.secs=$SECS bench.graph=$GRAPH" > "$log" 2>&1 ||
				echo "bench/percost.sh: $series $mon $r failed (log: $log)" >&2
			grep -h '# PERCOST phase=\|# PERCOST mon=' "$log" || true
		done
	done
done > "$OUT"
