#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The userspace policies against DAMOS on 6.12: proactive reclaim (daptrace
# policy vs a DAMOS pageout scheme with the same pattern and quota vs
# DAMON_RECLAIM and its scheme through DAMON's sysfs) and two-tier
# placement (daptrace policy vs DAMOS migrate_hot/migrate_cold).  One boot
# per run (selftests/vm/README.md: runs in one boot contaminate each other
# under TCG), the policies alternating within a round, several rounds;
# prints a Markdown section with medians and ranges (bench/policy-report.py).
#
#   bench/policy.sh [--rounds N] [--first R] [--kernel K] [--output FILE]
#                   [--mons "daptrace damos damos_reclaim damon_reclaim"]
#                   [--scens "reclaim tiering"]
#
# Raw rows stay in build/bench-policy/KERNEL/rows.txt, boot logs next to them;
# --first R > 1 adds rounds R..N to the rows already there.
set -euo pipefail

TOP=$(cd "$(dirname "$0")/.." && pwd)
ROUNDS=3
FIRST=1
MONS="daptrace damos damos_reclaim damon_reclaim"
MONS_ARG=
SCENS="reclaim tiering"
K=
OUT=
while [ $# -gt 0 ]; do
	case $1 in
	--rounds) ROUNDS=$2; shift ;;
	--first) FIRST=$2; shift ;;
	--mons) MONS=$2; MONS_ARG=" --mons \"$2\""; shift ;;
	--scens) SCENS=$2; shift ;;
	--kernel) K=$2; shift ;;
	--output) OUT=$2; shift ;;
	*) echo "bench/policy.sh: unknown option '$1'" >&2; exit 2 ;;
	esac
	shift
done
[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || { echo "bench/policy.sh: --rounds: not a positive integer: '$ROUNDS'" >&2; exit 2; }
[[ $FIRST =~ ^[1-9][0-9]*$ ]] || { echo "bench/policy.sh: --first: not a positive integer: '$FIRST'" >&2; exit 2; }
for m in $MONS; do
	case $m in
	daptrace | damos | damos_reclaim | damon_reclaim) ;;
	*) echo "bench/policy.sh: --mons: unknown policy '$m' (daptrace, damos, damos_reclaim, damon_reclaim)" >&2
	   exit 2 ;;
	esac
done
for sc in $SCENS; do
	case $sc in
	reclaim | tiering) ;;
	*) echo "bench/policy.sh: --scens: unknown scenario '$sc' (reclaim, tiering)" >&2; exit 2 ;;
	esac
done
[ -n "$K" ] || K=$("$TOP/scripts/kernels.sh" 6.12)
[ -n "$K" ] || { echo "bench/policy.sh: no 6.12 kernel (it carries DAMON)" >&2; exit 1; }
DIR=$TOP/build/bench-policy/$K
mkdir -p "$DIR"
[ "$FIRST" -gt 1 ] || : > "$DIR/rows.txt"
make -C "$TOP" --no-print-directory -s modules-all

t0=$SECONDS
for ((r = FIRST; r <= ROUNDS; r++)); do
	# alternate who goes first
	read -ra mons <<< "$MONS"
	if ! ((r % 2)); then
		mapfile -t mons < <(printf '%s\n' "${mons[@]}" | tac)
	fi
	for scen in $SCENS; do
		for mon in "${mons[@]}"; do
			case $scen-$mon in tiering-damon_reclaim | tiering-damos_reclaim) continue ;; esac
			log=$DIR/$r-$mon-$scen.log
			echo "bench/policy: round $r $mon $scen" >&2
			flock /tmp/daptrace-vm.lock "$TOP/selftests/vm/run.sh" --kernel "$K" --no-la57 \
				--test extra/policy-guest --extra-test "$TOP/bench/policy-guest.sh" \
				--append "bench.policy=$mon-$scen" > "$log" 2>&1 || true
			if row=$(grep -o 'BENCH .*' "$log"); then
				echo "${row#BENCH } round=$r" >> "$DIR/rows.txt"
			else
				echo "bench/policy: no result from $log" >&2
			fi
		done
	done
done
report=(python3 "$TOP/bench/policy-report.py" --rows "$DIR/rows.txt"
	--command "bench/policy.sh --rounds $ROUNDS --kernel $K${MONS_ARG}" --duration $((SECONDS - t0)))
if [ -n "$OUT" ]; then "${report[@]}" > "$OUT"; else "${report[@]}"; fi
