#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# `make bench`: daptrace against the in-kernel DAMON, same VM boot, same
# workloads, same attributes; then the sections measured with one boot per
# run (bench/ab.sh on 6.12, 5.10 and the newest kernel, idle.sh, policy.sh
# on 6.12 and 6.1, placement.sh, follow.sh, exporter.sh, fixes-cost.sh) and
# on the host (objtrace.sh); writes BENCHMARKS.md.  What BENCHMARKS.md holds
# above the line "<!-- make bench: generated below -->" (hand-written
# analysis and one-off measurements, each with its command) is kept.
#
#   bench/run.sh [--quick] [--output FILE]
#
# One boot of the newest installed 6.12 kernel (it ships DAMON) runs
# bench/guest.sh, which prints "BENCH k=v ..." rows; bench/report.py turns
# them into tables of ratios.  The raw rows are kept in build/bench/.
set -euo pipefail

TOP=$(cd "$(dirname "$0")/.." && pwd)
OUT=$TOP/BENCHMARKS.md
QUICK=0
while [ $# -gt 0 ]; do
	case $1 in
	--quick) QUICK=1 ;;
	--output) OUT=$2; shift ;;
	*) echo "bench/run.sh: unknown option '$1' (--quick, --output FILE)" >&2; exit 2 ;;
	esac
	shift
done

"$TOP/scripts/deps.sh"
make -C "$TOP" --no-print-directory -s modules-all
K=$("$TOP/scripts/kernels.sh" 6.12)
[ -n "$K" ] || { echo "bench: no 6.12 kernel installed (it carries DAMON)" >&2; exit 1; }

DIR=$TOP/build/bench
mkdir -p "$DIR"
args=(--kernel "$K" --no-la57 --memory 8G --test extra/guest
      --extra-test "$TOP/bench/guest.sh" --test-timeout 5400 --timeout 6000)
cmd="make bench"
if [ $QUICK = 1 ]; then
	args+=(--append bench.quick=1)
	cmd="make bench BENCHFLAGS=--quick"
fi

t0=$SECONDS
rc=0
"$TOP/selftests/vm/run.sh" "${args[@]}" | tee "$DIR/run.log" || rc=$?
grep -o 'BENCH .*' "$DIR/run.log" | sed 's/^BENCH //' > "$DIR/rows.txt" || true
if [ $rc != 0 ]; then
	echo "bench: the VM run failed (log: build/bench/run.log); BENCHMARKS.md not written" >&2
	exit 1
fi
MARK="<!-- make bench: generated below -->"
{
	if [ -f "$OUT" ] && grep -qxF "$MARK" "$OUT"; then
		sed "/^$MARK\$/,\$d" "$OUT"
	fi
	echo "$MARK"
	echo
	python3 "$TOP/bench/report.py" --rows "$DIR/rows.txt" --kernel "$K" \
		--command "$cmd" --duration $((SECONDS - t0)) \
		--cpu "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
} > "$OUT.tmp"
# Sections measured on their own (one boot per run, or on the host).
rounds=3
[ $QUICK = 0 ] || rounds=1
K61=$("$TOP/scripts/kernels.sh" 6.1)
# append NAME: add the section a step below wrote to $DIR/NAME.md.
append() { { echo; cat "$DIR/$1.md"; } >> "$OUT.tmp"; }
"$TOP/bench/ab.sh" --rounds $rounds --out "$DIR/ab.md"
append ab
# Slowdown: the worker and the workload on one vCPU, unmonitored boots too.
"$TOP/bench/ab.sh" --rounds $rounds --wl hotcold --settings "default fast" \
	--mons "none daptrace damon" --smp 1 --out "$DIR/ab-smp1.md"
append ab-smp1
# The monitors alone: nobody reading daptrace's snapshots, DAMON untraced.
"$TOP/bench/ab.sh" --rounds $rounds --settings "default-bare fast-bare" \
	--tag bare --out "$DIR/ab-bare.md"
append ab-bare
# Scaling: the hot/cold workload from 256 MiB to 4 GiB.
"$TOP/bench/ab.sh" --rounds $rounds --wl "hotcold256M hotcold4G" --settings default \
	--tag scale --out "$DIR/ab-scale.md"
append ab-scale
# The oldest and the newest supported kernel next to 6.12: 5.10 has no
# DAMON (the unmonitored boots give the slowdown instead); the newest starts
# DAMON_STAT at boot, which bench/guest.sh turns off in every run.
"$TOP/bench/ab.sh" --rounds $rounds --wl hotcold --settings default --kernel 5.10 \
	--mons "none daptrace" --tag k5_10 --out "$DIR/ab-5.10.md"
append ab-5.10
"$TOP/bench/ab.sh" --rounds $rounds --wl hotcold --settings default --kernel newest \
	--tag newest --out "$DIR/ab-newest.md"
append ab-newest
"$TOP/bench/idle.sh" --rounds $rounds --out "$DIR/idle.md"
append idle
"$TOP/bench/policy.sh" --rounds $rounds --kernel "$K" --output "$DIR/policy-6.12.md"
append policy-6.12
"$TOP/bench/policy.sh" --rounds $rounds --kernel "$K61" --mons daptrace \
	--output "$DIR/policy-6.1.md"
append policy-6.1
"$TOP/bench/placement.sh" --rounds $rounds --out "$DIR/placement.md"
append placement
"$TOP/bench/follow.sh" --rounds $rounds --out "$DIR/follow.md"
append follow
"$TOP/bench/exporter.sh" --rounds $rounds --out "$DIR/exporter.md"
append exporter
# What the kernel fixes since the previous wave cost: that wave's module
# against this tree's, alternating boots.
"$TOP/bench/fixes-cost.sh" --rounds $rounds --out "$DIR/fixes-cost.md"
append fixes-cost
"$TOP/bench/objtrace.sh" --out "$DIR/objtrace.md"
append objtrace
mv "$OUT.tmp" "$OUT"
echo "bench: wrote ${OUT#"$TOP"/} ($((SECONDS - t0)) s)"
