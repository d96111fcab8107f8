#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Checking the savings curve (issue 39): what `daptrace report savings`
# predicts from a record of a workload (the memory a policy reclaiming all
# that is idle for T would save, mean and last, and the refaults it would
# cause) against what `daptrace policy -S "pageout idle=T"` really saves
# (the target's VmSwap) and refaults (pswpin) on fresh runs of the same
# workload (bench/savings-guest.sh), and what `daptrace stat --savings`
# draws live on another run.  One boot per round: the record, the stat
# run and every policy run of every workload, one after the other; median
# [min-max] over the rounds (bench/savings-report.py).
#
#   bench/savings.sh [--rounds N] [--out FILE] [--lock FILE] [--kernel SERIES]
#                    [--wl "phases reclaim kv"] [--secs D] [--thresholds "2 5 10"]
#                    [--kv-rate OPS] [--perf 0|1] [--keep-records 0|1]
#                    [--thp always|madvise|never]
#
# kv (memcached under a Zipf load) needs Debian's memcached:
# bench/memcached-payload.sh fetches it and writes the extra test that
# unpacks it into the guest.
# --secs: each run's length, s (a multiple of 4: phases has four phases);
# --thresholds: the idle thresholds, whole seconds;
# --kv-rate: kv's requests a second, sent whether memcached keeps up or not
# (an open load: a policy's refaults delay requests, they do not remove
# them), so every run of a round is sent the same load; 0: each request as
# soon as the last is answered (a closed load, which a policy that slows
# memcached makes lighter).  Default 1000, about half what memcached served
# under the policies closed (BENCHMARKS.md, 2026-12-02);
# --perf 1: the host's perf copied into the guest, each policy run sampled
# by it: the share of the policy's CPU its regret counters take (a run of
# its own: perf's sampling slows what it samples);
# --keep-records 1: every record of the round (the prediction's, each
# policy run's, with the target's VmSwap samples) copied out of the guest
# into build/bench/savings-records/round-N/, to replay the model on the
# host (`daptrace report savings`) against what the policy really did.
# --thp: the guest's transparent huge page mode for every run (default: the
# kernel's own, Debian's "always"); each kv run's row says how much of
# memcached's anonymous memory huge pages backed at its end (huge_kb).
# Raw rows in build/bench/savings-rows.txt, boot logs beside them.
set -euo pipefail

TOP=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
. "$TOP/bench/lib.sh"
SERIES=6.12 WLS="phases reclaim kv" SECS=32 TS="2 5 10" KV_RATE=1000 PERF=0 KEEP=0 THP=
BENCH_OPTS="kernel=SERIES wl=WLS secs=SECS thresholds=TS kv-rate=KV_RATE perf=PERF keep-records=KEEP thp=THP"
bench_parse_opts bench/savings.sh "$@"
bench_words bench/savings.sh --wl workload "phases reclaim kv" "$WLS"
if ! [[ $SECS =~ ^[1-9][0-9]*$ ]] || [ $((SECS % 4)) != 0 ]; then
	echo "bench/savings.sh: --secs: a positive multiple of 4: '$SECS'" >&2
	exit 2
fi
[[ $TS =~ ^[1-9][0-9]*( [1-9][0-9]*)*$ ]] ||
	{ echo "bench/savings.sh: --thresholds: whole seconds, space separated: '$TS'" >&2; exit 2; }
[[ $KV_RATE =~ ^(0|[1-9][0-9]*)$ ]] ||
	{ echo "bench/savings.sh: --kv-rate: requests a second, a whole number: '$KV_RATE'" >&2; exit 2; }
[[ $PERF =~ ^[01]$ ]] || { echo "bench/savings.sh: --perf: 0 or 1, not '$PERF'" >&2; exit 2; }
[[ $KEEP =~ ^[01]$ ]] ||
	{ echo "bench/savings.sh: --keep-records: 0 or 1, not '$KEEP'" >&2; exit 2; }
[[ $THP =~ ^(|always|madvise|never)$ ]] ||
	{ echo "bench/savings.sh: --thp: always, madvise or never, not '$THP'" >&2; exit 2; }

# keep_records LOG DIR: the files the guest printed into LOG (KEEP=1:
# gzip'ed, in base64, between "# KEEP-BEGIN NAME" and "# KEEP-END NAME")
# unpacked into DIR
keep_records() {
	local name
	rm -rf "$2"
	mkdir -p "$2"
	sed -n 's/^# KEEP-BEGIN \([A-Za-z0-9._-]*\)$/\1/p' "$1" | while read -r name; do
		awk -v n="$name" '$0 == "# KEEP-END " n { f = 0 } f { sub(/^# /, ""); print }
			$0 == "# KEEP-BEGIN " n { f = 1 }' "$1" | base64 -d | gunzip > "$2/$name" ||
			{ echo "bench/savings.sh: $name in $1: not whole" >&2; exit 1; }
	done
}

K=$(bench_kernel bench/savings.sh "$SERIES")
bench_rows savings
# the record, the stat run, then one policy run per threshold, for every workload
n=$(($(echo "$WLS" | wc -w) * ($(echo "$TS" | wc -w) + 2)))
EXTRA=()
if [[ " $WLS " == *" kv "* ]]; then
	"$TOP/bench/memcached-payload.sh" "$DIR/memcached-payload.sh"
	EXTRA=(--extra-test "$DIR/memcached-payload.sh")
fi
REGRET_SYMS=
if [ "$PERF" = 1 ]; then
	perf=$(command -v perf) || { echo "bench/savings.sh: --perf 1: no perf on the host (linux-perf)" >&2; exit 1; }
	EXTRA+=(--guest-file "$perf:/usr/bin/perf")
	# The regret counters' functions, as the guest's CLI has them: that
	# static binary's user stacks are not unwound (only the function a
	# sample hit is known: bench/savings-guest.sh), so each function of policy/regret.c and the
	# pagemap probe of policy/actions.c that was not inlined is named, and
	# must be named once in the binary.  The static CLI as the boot builds
	# it (selftests/vm/run.sh).
	static=${BUILD:-$TOP/build}/userspace-static
	make -s -C "$TOP/userspace" O="$static" STATIC=1 > /dev/null
	REGRET_SYMS=$( { nm --defined-only "$static/policy/regret.o" | awk '$2 ~ /^[tT]$/ { print $3 }'
		echo probe_resident probe_node pol_probe | tr ' ' '\n'; } |
		while read -r sym; do
			n=$(nm "$static/daptrace" | awk -v s="$sym" '$3 == s' | wc -l)
			[ "$n" -le 1 ] || { echo "bench/savings.sh: $sym named $n times in the CLI" >&2; exit 1; }
			[ "$n" = 0 ] || echo "$sym"
		done | tr '\n' ' ')
	[ -n "$REGRET_SYMS" ] || { echo "bench/savings.sh: no regret functions in $static/daptrace" >&2; exit 1; }
fi
script=$DIR/savings-guest.sh
sed "2i WLS=\"$WLS\" D=$SECS TS=\"$TS\" KV_RATE=$KV_RATE PERF=$PERF KEEP=$KEEP THP=$THP REGRET_SYMS=\"$REGRET_SYMS\"" \
	"$TOP/bench/savings-guest.sh" > "$script"

t0=$SECONDS
for r in $(seq "$ROUNDS"); do
	log=$DIR/savings-$r.log
	echo "bench/savings.sh: $K round $r" >&2
	bench_boot "$log" "bench/savings.sh: round $r" --kernel "$K" --no-la57 \
		--test extra/savings-guest ${EXTRA[@]+"${EXTRA[@]}"} --extra-test "$script" \
		--test-timeout $((n * (SECS + 60) + 300)) --timeout $((n * (SECS + 60) + 600))
	grep -o 'BENCH .*' "$log" |
		sed "s/^BENCH /round=$r date=$(date -u +%F) kernel=$K /" >> "$ROWS" ||
		{ echo "bench/savings.sh: no figures in $log" >&2; exit 1; }
	[ "$KEEP" = 0 ] || keep_records "$log" "$DIR/savings-records/round-$r"
done

cmd="bench/savings.sh --rounds $ROUNDS"
[ "$SERIES" = 6.12 ] || cmd+=" --kernel $SERIES"
[ "$WLS" = "phases reclaim kv" ] || cmd+=" --wl \"$WLS\""
[ "$SECS" = 32 ] || cmd+=" --secs $SECS"
[ "$TS" = "2 5 10" ] || cmd+=" --thresholds \"$TS\""
[ "$KV_RATE" = 1000 ] || cmd+=" --kv-rate $KV_RATE"
[ "$PERF" = 0 ] || cmd+=" --perf 1"
[ "$KEEP" = 0 ] || cmd+=" --keep-records 1"
[ -z "$THP" ] || cmd+=" --thp $THP"
python3 "$TOP/bench/savings-report.py" --rows "$ROWS" --command "$cmd" \
	--duration $((SECONDS - t0)) > "$OUT"
echo "bench/savings.sh: wrote $OUT" >&2
