#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The userspace policies against DAMOS on 6.12: proactive reclaim (daptrace
# policy vs a DAMOS pageout scheme with the same pattern and quota vs
# DAMON_RECLAIM and its scheme through DAMON's sysfs) and two-tier
# placement (daptrace policy vs DAMOS migrate_hot/migrate_cold); and reclaim
# to a memory pressure goal (daptrace policy -P tmo vs a Senpai loop on the
# cgroup's memory.reclaim vs DAMOS pageout with a some_mem_psi_us goal) on a
# workload whose sets change size (phases) and on memcached under a Zipf
# load (kv).  One boot per run (selftests/vm/README.md: runs in one boot
# contaminate each other under TCG), the policies alternating within a
# round, several rounds; prints a Markdown section with medians and ranges
# (bench/policy-report.py).
#
#   bench/policy.sh [--rounds N] [--first R] [--kernel K] [--output FILE]
#                   [--lock FILE]
#                   [--mons "daptrace damos damos_reclaim damon_reclaim"]
#                   [--scens "reclaim tiering"]
#   bench/policy.sh --scens "phases kv" --mons "tmo senpai damos_psi" ...
#
# The kv scenario needs Debian's memcached: bench/memcached-payload.sh
# fetches it and writes the extra test that unpacks it into the guest.
# damos_psi needs DAMON (6.12; on 6.1 it is left out).
#
# Raw rows stay in build/bench-policy/KERNEL/rows.txt, boot logs next to them;
# --first R > 1 adds rounds R..N to the rows already there.
set -euo pipefail

TOP=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
. "$TOP/bench/lib.sh"
DEFAULT_MONS="daptrace damos damos_reclaim damon_reclaim"
FIRST=1 MONS=$DEFAULT_MONS SCENS="reclaim tiering" K=''
# --output is this driver's name for the common --out (BENCHMARKS.md quotes it).
BENCH_OPTS="first=FIRST mons=MONS scens=SCENS kernel=K output=OUT"
bench_parse_opts bench/policy.sh "$@"
[[ $FIRST =~ ^[1-9][0-9]*$ ]] || { echo "bench/policy.sh: --first: not a positive integer: '$FIRST'" >&2; exit 2; }
bench_words bench/policy.sh --mons policy \
	"daptrace damos damos_reclaim damon_reclaim tmo senpai damos_psi" "$MONS"
bench_words bench/policy.sh --scens scenario "reclaim tiering phases kv" "$SCENS"
# The report's command line names --mons only when it is not the default.
MONS_ARG=
[ "$MONS" = "$DEFAULT_MONS" ] || MONS_ARG=" --mons \"$MONS\""
SCENS_ARG=
[ "$SCENS" = "reclaim tiering" ] || SCENS_ARG=" --scens \"$SCENS\""
[ -n "$K" ] || K=$("$TOP/scripts/kernels.sh" 6.12)
[ -n "$K" ] || { echo "bench/policy.sh: no 6.12 kernel (it carries DAMON)" >&2; exit 1; }
DIR=$TOP/build/bench-policy/$K
mkdir -p "$DIR"
[ "$FIRST" -gt 1 ] || : > "$DIR/rows.txt"
make -C "$TOP" --no-print-directory -s modules-all

# kv's boots unpack Debian's memcached first (an extra test that runs
# before the guest script)
EXTRA=()
if [[ " $SCENS " == *" kv "* ]]; then
	"$TOP/bench/memcached-payload.sh" "$DIR/memcached-payload.sh"
	EXTRA=(--extra-test "$DIR/memcached-payload.sh")
fi

t0=$SECONDS
for ((r = FIRST; r <= ROUNDS; r++)); do
	# alternate who goes first
	read -ra mons <<< "$MONS"
	if ! ((r % 2)); then
		mapfile -t mons < <(printf '%s\n' "${mons[@]}" | tac)
	fi
	for scen in $SCENS; do
		for mon in "${mons[@]}"; do
			case $scen-$mon in
			tiering-damon_reclaim | tiering-damos_reclaim) continue ;;
			phases-tmo | phases-senpai | phases-damos_psi | kv-tmo | kv-senpai | kv-damos_psi) ;;
			phases-* | kv-* | *-tmo | *-senpai | *-damos_psi) continue ;;
			esac
			# DAMOS is not in Debian's 6.1
			case $K-$mon in 6.1.*-damos*) continue ;; esac
			log=$DIR/$r-$mon-$scen.log
			echo "bench/policy: round $r $mon $scen" >&2
			flock "$LOCK" "$TOP/selftests/vm/run.sh" --kernel "$K" --no-la57 \
				--test extra/policy-guest ${EXTRA[@]+"${EXTRA[@]}"} \
				--extra-test "$TOP/bench/policy-guest.sh" \
				--append "bench.policy=$mon-$scen" > "$log" 2>&1 || true
			if row=$(grep -o 'BENCH .*' "$log"); then
				echo "${row#BENCH } round=$r date=$(date -u +%F)" >> "$DIR/rows.txt"
			else
				echo "bench/policy: no result from $log" >&2
			fi
		done
	done
done
report=(python3 "$TOP/bench/policy-report.py" --rows "$DIR/rows.txt"
	--command "bench/policy.sh --rounds $ROUNDS --kernel $K${SCENS_ARG}${MONS_ARG}" --duration $((SECONDS - t0)))
"${report[@]}" > "$OUT"
