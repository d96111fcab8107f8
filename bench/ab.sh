#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# daptrace against DAMON with one VM boot per monitored run:
#
#   bench/ab.sh [--rounds N] [--wl "hotcold moving smallhot"]
#               [--settings "default fast"] [--lock FILE] [--out FILE]
#
# Under TCG a monitor's TLB flushes change the emulator's own software TLB
# and with it the speed of everything that runs later in the same boot
# (DESIGN.md, 3), so runs sharing a boot are not comparable.  Each run
# (bench/guest.sh "bench.one=...") gets a fresh boot of the 6.12 kernel; the
# two monitors alternate, and which one goes first flips every round.  The
# workload runs for a fixed time (10 s), so CPU shares compare like with
# like.  Each boot takes the VM lock (--lock, default /tmp/daptrace-vm.lock)
# for itself only.  Rows go to build/bench/ab-rows.txt; the summary
# (medians, per-round ratio spread; bench/ab-report.py) to --out, a
# Markdown section (default stdout).
set -euo pipefail

TOP=$(cd "$(dirname "$0")/.." && pwd)
ROUNDS=3 WLS="hotcold moving smallhot" SETTINGS="default fast"
LOCK=/tmp/daptrace-vm.lock OUT=/dev/stdout
while [ $# -gt 0 ]; do
	case $1 in
	--rounds) ROUNDS=$2; shift ;;
	--wl) WLS=$2; shift ;;
	--settings) SETTINGS=$2; shift ;;
	--lock) LOCK=$2; shift ;;
	--out) OUT=$2; shift ;;
	*) echo "bench/ab.sh: unknown option '$1'" >&2; exit 2 ;;
	esac
	shift
done

K=$("$TOP/scripts/kernels.sh" 6.12)
[ -n "$K" ] || { echo "bench: no 6.12 kernel installed (it carries DAMON)" >&2; exit 1; }
DIR=$TOP/build/bench
mkdir -p "$DIR"
ROWS=$DIR/ab-rows.txt
: > "$ROWS"

for wl in $WLS; do
	for setting in $SETTINGS; do
		for r in $(seq "$ROUNDS"); do
			order="daptrace damon"
			[ $((r % 2)) = 0 ] && order="damon daptrace"
			for mon in $order; do
				log=$DIR/ab-$wl-$setting-$r-$mon.log
				flock "$LOCK" "$TOP/selftests/vm/run.sh" --kernel "$K" --no-la57 \
					--memory 8G --test extra/guest --extra-test "$TOP/bench/guest.sh" \
					--append "bench.one=$mon,$setting,$wl,$r" > "$log" 2>&1 ||
					echo "bench: run $wl $setting $r $mon failed (log: $log)" >&2
				grep -o 'BENCH .*' "$log" | sed 's/^BENCH //' >> "$ROWS" || true
			done
		done
	done
done
{
	echo "## daptrace vs DAMON, one boot per monitored run"
	echo
	echo "    bench/ab.sh --rounds $ROUNDS --wl \"$WLS\" --settings \"$SETTINGS\""
	echo
	echo "Each run in its own boot of $K (2 vCPUs, qemu64), the monitors alternating"
	echo "and the first one flipping every round, 10 s fixed-time phases; CPU is the"
	echo "worker's (kdamond's) share of the workload's wall time.  Ratio: of the"
	echo "medians; per-round ratios: of the CPU times within a round.  Settings:"
	echo "default = 5 ms / 100 ms, fast = 1 ms / 20 ms, 10-1000 regions."
	echo
	python3 "$TOP/bench/ab-report.py" "$ROWS"
} > "$OUT"
