#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# daptrace against DAMON with one VM boot per monitored run:
#
#   bench/ab.sh [--rounds N] [--wl "hotcold moving smallhot"]  (also sparse16g sparse1t)
#               [--settings "default fast"] [--mons "daptrace damon"]
#               [--smp N] [--kernel SERIES] [--tag NAME] [--lock FILE]
#               [--module KO] [--probe-pages N] [--out FILE]
#
# Under TCG a monitor's TLB flushes change the emulator's own software TLB
# and with it the speed of everything that runs later in the same boot
# (selftests/vm/README.md), so runs sharing a boot are not comparable.  Each run
# (bench/guest.sh "bench.one=...") gets a fresh boot of one kernel (--kernel:
# a series of scripts/kernels.sh, default 6.12, "newest" the trixie root's;
# DAMON only where it is built: not 5.10's); the
# monitors take turns, and which one goes first rotates every round.  The
# workload runs for a fixed time (10 s), so CPU shares compare like with
# like.  With "none" among --mons the section also gives each monitor's
# slowdown: the work the workload got done in its 10 s (pages touched)
# against the unmonitored boots of the same rounds; with --smp 1 the worker
# and the workload share the one vCPU, so every cycle the monitor spends is
# one the workload loses.  Each boot takes the VM lock (--lock, default
# /tmp/daptrace-vm.lock) for itself only.  Rows go to
# build/bench/ab-smpN[-NAME]-rows.txt; the summary (medians, per-round
# ratio spread; bench/ab-report.py) to --out, a Markdown section (default
# stdout).  --module KO boots another build of daptrace (run.sh --module,
# "%k" for the kernel release), to measure one tree against another: tag
# each and alternate them by hand (bench/fixes-cost.sh).  --probe-pages N
# sets the module's accuracy probes per window for daptrace's runs (default:
# the module's, 64), to measure what they cost (bench/probe-cost.sh).
set -euo pipefail

TOP=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
. "$TOP/bench/lib.sh"
WLS="hotcold moving smallhot" SETTINGS="default fast"
MONS="daptrace damon" SMP=2 SERIES=6.12 TAG='' MODULE='' PROBES=''
BENCH_OPTS="wl=WLS settings=SETTINGS mons=MONS smp=SMP kernel=SERIES tag=TAG module=MODULE
	probe-pages=PROBES"
bench_parse_opts bench/ab.sh "$@"
MODULE_ARGS=()
[ -z "$MODULE" ] || MODULE_ARGS=(--module "$MODULE")
[[ $SMP =~ ^[1-9][0-9]*$ ]] || { echo "bench/ab.sh: --smp: not a positive integer: '$SMP'" >&2; exit 2; }
[[ $PROBES =~ ^[0-9]*$ ]] || { echo "bench/ab.sh: --probe-pages: not a number: '$PROBES'" >&2; exit 2; }
read -ra mons <<< "$MONS"
for m in "${mons[@]}"; do
	case $m in
	none | daptrace | damon) ;;
	*) echo "bench/ab.sh: --mons: unknown monitor '$m' (none, daptrace, damon)" >&2; exit 2 ;;
	esac
done
[ ${#mons[@]} -gt 0 ] || { echo "bench/ab.sh: --mons: empty" >&2; exit 2; }
for st in $SETTINGS; do
	case $st in
	default | fast | default-bare | fast-bare) ;;
	*) echo "bench/ab.sh: --settings: unknown setting '$st' (default, fast, default-bare, fast-bare)" >&2
	   exit 2 ;;
	esac
done
for w in $WLS; do
	case $w in
	hotcold | moving | smallhot | hotcold[1-9]*[MG] | sparse16g | sparse1t) ;;
	*) echo "bench/ab.sh: --wl: unknown workload '$w' (hotcold, moving, smallhot, hotcold<size>, sparse16g, sparse1t)" >&2
	   exit 2 ;;
	esac
done
[[ $TAG =~ ^[A-Za-z0-9_]*$ ]] || { echo "bench/ab.sh: --tag: letters, digits and _ only: '$TAG'" >&2; exit 2; }
TAG=${TAG:+-$TAG}

K=$("$TOP/scripts/kernels.sh" "$SERIES")
[ -n "$K" ] || { echo "bench/ab.sh: --kernel $SERIES: no such kernel installed (scripts/kernels.sh)" >&2; exit 1; }
DIR=$TOP/build/bench
mkdir -p "$DIR"
ROWS=$DIR/ab-smp$SMP$TAG-rows.txt
: > "$ROWS"

for wl in $WLS; do
	for setting in $SETTINGS; do
		for r in $(seq "$ROUNDS"); do
			# round r starts with monitor (r - 1) mod n
			s=$(((r - 1) % ${#mons[@]}))
			order=("${mons[@]:s}" "${mons[@]:0:s}")
			for mon in "${order[@]}"; do
				log=$DIR/ab-smp$SMP$TAG-$wl-$setting-$r-$mon.log
				flock "$LOCK" "$TOP/selftests/vm/run.sh" --kernel "$K" --no-la57 \
					${MODULE_ARGS[@]+"${MODULE_ARGS[@]}"} \
					--smp "$SMP" --memory 8G --test extra/guest --extra-test "$TOP/bench/guest.sh" \
					--append "bench.one=$mon,$setting,$wl,$r${PROBES:+ bench.probe_pages=$PROBES}" \
					> "$log" 2>&1 ||
					echo "bench: run $wl $setting $r $mon failed (log: $log)" >&2
				grep -o 'BENCH .*' "$log" | sed 's/^BENCH //' >> "$ROWS" || true
			done
		done
	done
done
{
	echo "## daptrace vs DAMON, one boot per run, $SMP vCPU(s)${TAG:+, ${TAG#-}}"
	echo
	echo "    bench/ab.sh --rounds $ROUNDS --wl \"$WLS\" --settings \"$SETTINGS\" --mons \"$MONS\" --smp $SMP --kernel $SERIES"
	echo
	echo "Each run in its own boot of $K ($SMP vCPUs, qemu64,+rdrand), the monitors taking turns"
	echo "and the first one rotating every round, 10 s fixed-time phases; CPU is the"
	echo "worker's (kdamond's) share of the workload's wall time.  Ratio: of the"
	echo "medians; per-round ratios: of the CPU times within a round.  Per sample: the"
	echo "same for CPU time divided by the samples taken (windows: in the fixed time;"
	echo "DAMON, sleeping a relative interval after each sample's work, stretches its"
	echo "windows and takes fewer samples than its attributes ask for).  Settings:"
	echo "default = 5 ms / 100 ms, fast = 1 ms / 20 ms, 10-1000 regions; -bare: the"
	echo "monitor alone (daptrace through sysfs with no reader, DAMON without its"
	echo "tracepoint), so no accuracy or sample count."
	echo
	python3 "$TOP/bench/ab-report.py" "$ROWS"
} > "$OUT"
