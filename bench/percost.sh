#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Where each monitor's CPU goes per sample, by kernel:
#
#   bench/percost.sh [--kernels "6.12 7.3"] [--mons "daptrace damon"]
#                    [--rounds N] [--secs S] [--graph 0|1] [--lock FILE]
#
# One VM boot per monitored run (bench/percost-guest.sh: hotcold 512 MiB,
# 5 ms / 100 ms, 10-1000 regions, DAMON_STAT off), the monitors taking
# turns; each boot takes the VM lock (default /tmp/daptrace-vm.lock) for
# itself only.  --graph 1 (default) times the per-sample operations with
# the function_graph tracer; --graph 0 only counts them (function tracer),
# for CPU figures without the graph tracer's own cost.  The host's perf is copied into the guest (perf record of
# the software cpu-clock event works under TCG).  Logs and the "# PERCOST"
# and "# PERF" lines go to build/bench/percost-<kernel>-<mon>-g<graph>-<round>.log.
set -euo pipefail

TOP=$(cd "$(dirname "$0")/.." && pwd)
KERNELS="6.12 7.3" MONS="daptrace damon" ROUNDS=1 SECS=10 GRAPH=1
LOCK=/tmp/daptrace-vm.lock
while [ $# -gt 0 ]; do
	case $1 in
	--kernels) KERNELS=$2; shift ;;
	--mons) MONS=$2; shift ;;
	--rounds) ROUNDS=$2; shift ;;
	--secs) SECS=$2; shift ;;
	--graph) GRAPH=$2; shift ;;
	--lock) LOCK=$2; shift ;;
	*) echo "bench/percost.sh: unknown option '$1'" >&2; exit 2 ;;
	esac
	shift
done
[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || { echo "bench/percost.sh: --rounds: not a positive integer: '$ROUNDS'" >&2; exit 2; }
[[ $SECS =~ ^[1-9][0-9]*$ ]] || { echo "bench/percost.sh: --secs: not a positive integer: '$SECS'" >&2; exit 2; }
[[ $GRAPH =~ ^[01]$ ]] || { echo "bench/percost.sh: --graph: 0 or 1, not '$GRAPH'" >&2; exit 2; }
PERF=$(command -v perf) || { echo "bench/percost.sh: no perf on the host (linux-perf)" >&2; exit 1; }
read -ra mons <<< "$MONS"
for m in "${mons[@]}"; do
	case $m in
	daptrace | damon) ;;
	*) echo "bench/percost.sh: --mons: unknown monitor '$m' (daptrace, damon)" >&2; exit 2 ;;
	esac
done
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
				--test extra/percost-guest --extra-test "$TOP/bench/percost-guest.sh" \
				--append "bench.mon=$mon bench.secs=$SECS bench.graph=$GRAPH" > "$log" 2>&1 ||
				echo "bench/percost.sh: $series $mon $r failed (log: $log)" >&2
			grep -h '# PERCOST phase=\|# PERCOST mon=' "$log" || true
		done
	done
done
