#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# `make bench`: every table of BENCHMARKS.md, each from a script of bench/
# (the list below), one after the other; `make bench T=NAME` runs one table
# and puts it in place of the same table in BENCHMARKS.md (appended if the
# file has none yet).  What BENCHMARKS.md holds above the line
# "<!-- make bench: generated below -->" (hand-written analysis and one-off
# measurements, each with its command) is kept, but for the list of tables
# between "<!-- tables -->" and "<!-- /tables -->", rewritten from TABLES.
# Each generated table sits between "<!-- table:NAME -->" and
# "<!-- /table:NAME -->".
#
#   bench/run.sh [--quick] [--rounds N] [--table NAME [--reuse]] [--output FILE]
#   bench/run.sh --list
#
# --quick: one round everywhere (the default is 3); --rounds N: N rounds.
# --reuse: put the table's last output (build/bench/NAME.md, written by its
# script's --out) in place without running anything.
# The raw rows and logs of every table are kept in build/bench/.
set -euo pipefail

TOP=$(cd "$(dirname "$0")/.." && pwd)
OUT=$TOP/BENCHMARKS.md
QUICK=0 ROUNDS='' TABLE='' LIST=0 REUSE=0
while [ $# -gt 0 ]; do
	case $1 in
	--quick) QUICK=1 ;;
	--list) LIST=1 ;;
	--reuse) REUSE=1 ;;
	--rounds | --table | --output)
		[ $# -ge 2 ] || { echo "bench/run.sh: $1: missing value" >&2; exit 2; }
		case $1 in
		--rounds) ROUNDS=$2 ;;
		--table) TABLE=$2 ;;
		--output) OUT=$2 ;;
		esac
		shift ;;
	*) echo "bench/run.sh: unknown option '$1' (--quick, --rounds N, --table NAME," \
		"--reuse, --output FILE, --list)" >&2
	   exit 2 ;;
	esac
	shift
done

# NAME|what the table shows, in one line (the list at the top of
# BENCHMARKS.md); in the order `make bench` runs them.
TABLES=(
"oneboot|all monitors in one boot (the old method): daptrace vs DAMON, TLB policies, scaling"
"ab|daptrace vs DAMON on 6.12, one boot per run: CPU per second and per sample, recall, precision"
"ab-smp1|the workload's slowdown with the worker on its only vCPU, daptrace vs DAMON"
"ab-bare|the monitors alone (no reader, DAMON untraced): CPU per second"
"ab-scale|daptrace vs DAMON as the target grows from 256 MiB to 4 GiB"
"ab-5.10|daptrace on the oldest kernel (5.10, no DAMON): CPU, accuracy, slowdown"
"ab-newest|daptrace vs DAMON on the newest kernel (7.3, DAMON_STAT off)"
"idle|worker CPU for a stopped target, IPIs to CPUs that never ran it"
"policy-6.12|reclaim and tiering: daptrace policy vs DAMOS on 6.12"
"policy-6.1|reclaim and tiering: daptrace policy on 6.1 (no DAMON)"
"tmo-6.12|reclaim to a pressure goal: -P tmo vs a Senpai loop vs DAMOS's psi goal, on 6.12"
"tmo-newest|the same on the newest kernel (7.3, DAMON_STAT off)"
"placement|the cost of NUMA placement tracking"
"follow|process trees (per-process recall, join latency), the whole machine, idle-time percentiles"
"follow-damon_stat|daptrace stat vs DAMON_STAT itself on the newest kernel: CPU, idle percentiles"
"follow-build|a real build (make -j2 in the guest) followed: processes in the record, join latency, each compile job against itself alone"
"targets|1 to 4096 mostly idle targets: worker and daptrace CPU, recall of the one that wakes"
"goals|interval auto-tuning against the fixed defaults; a quota goal (goal=rss) reached and held"
"savings|the savings curve's prediction against a real pageout policy: saved and refaults"
"exporter|the cost of \`daptrace exporter --attach\` scraped every 5 s"
"fixes-cost|the worker CPU of this wave's kernel fixes, module before and after"
"probe-cost|the worker CPU of the accuracy probes (probe_pages 0 against 64)"
"estimate|the online accuracy estimate against the truth, by workload"
"objtrace|the allocation tracer's overhead (\`record --objects\`), on the host"
)
names=()
for t in "${TABLES[@]}"; do
	names+=("${t%%|*}")
done
if [ $LIST = 1 ]; then
	printf '%s\n' "${TABLES[@]}" | sed 's/|/\t/'
	exit 0
fi
[ $REUSE = 0 ] || [ -n "$TABLE" ] || { echo "bench/run.sh: --reuse needs --table" >&2; exit 2; }
if [ -n "$TABLE" ] && ! printf '%s\n' "${names[@]}" | grep -qxF -- "$TABLE"; then
	echo "bench/run.sh: --table: no table '$TABLE' (${names[*]})" >&2
	exit 2
fi
rounds=3
[ $QUICK = 0 ] || rounds=1
[ -z "$ROUNDS" ] || rounds=$ROUNDS
[[ $rounds =~ ^[1-9][0-9]*$ ]] ||
	{ echo "bench/run.sh: --rounds: not a positive integer: '$rounds'" >&2; exit 2; }

if [ $REUSE = 0 ]; then
	"$TOP/scripts/deps.sh"
	make -C "$TOP" --no-print-directory -s modules-all
fi
K=$("$TOP/scripts/kernels.sh" 6.12)
[ -n "$K" ] || { echo "bench: no 6.12 kernel installed (it carries DAMON)" >&2; exit 1; }
K61=$("$TOP/scripts/kernels.sh" 6.1)
KN=$("$TOP/scripts/kernels.sh" newest)
DIR=$TOP/build/bench
mkdir -p "$DIR"
t0=$SECONDS

# One boot of 6.12 running bench/guest.sh, every monitor in turn.
oneboot() {
	local args cmd rc=0
	args=(--kernel "$K" --no-la57 --memory 8G --test extra/guest
	      --extra-test "$TOP/bench/guest.sh" --test-timeout 5400 --timeout 6000)
	cmd="make bench T=oneboot"
	if [ $QUICK = 1 ]; then
		args+=(--append bench.quick=1)
		cmd="make bench T=oneboot BENCHFLAGS=--quick"
	fi
	local s=$SECONDS
	"$TOP/selftests/vm/run.sh" "${args[@]}" | tee "$DIR/run.log" || rc=$?
	grep -o 'BENCH .*' "$DIR/run.log" | sed 's/^BENCH //' > "$DIR/rows.txt" || true
	if [ $rc != 0 ]; then
		echo "bench: the VM run failed (log: build/bench/run.log)" >&2
		return 1
	fi
	python3 "$TOP/bench/report.py" --rows "$DIR/rows.txt" --kernel "$K" \
		--command "$cmd" --duration $((SECONDS - s)) \
		--cpu "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')" \
		> "$DIR/oneboot.md"
}

# make NAME: run the table's script; its section goes to $DIR/NAME.md.
make_table() {
	local o=$DIR/$1.md
	case $1 in
	oneboot) oneboot ;;
	ab) "$TOP/bench/ab.sh" --rounds "$rounds" --out "$o" ;;
	# Slowdown: the worker and the workload on one vCPU, unmonitored boots too.
	ab-smp1) "$TOP/bench/ab.sh" --rounds "$rounds" --wl hotcold --settings "default fast" \
		--mons "none daptrace damon" --smp 1 --out "$o" ;;
	# The monitors alone: nobody reading daptrace's snapshots, DAMON untraced.
	ab-bare) "$TOP/bench/ab.sh" --rounds "$rounds" --settings "default-bare fast-bare" \
		--tag bare --out "$o" ;;
	ab-scale) "$TOP/bench/ab.sh" --rounds "$rounds" --wl "hotcold256M hotcold4G" \
		--settings default --tag scale --out "$o" ;;
	# 5.10 has no DAMON (the unmonitored boots give the slowdown instead);
	# the newest starts DAMON_STAT at boot, which bench/guest.sh turns off.
	ab-5.10) "$TOP/bench/ab.sh" --rounds "$rounds" --wl hotcold --settings default \
		--kernel 5.10 --mons "none daptrace" --tag k5_10 --out "$o" ;;
	ab-newest) "$TOP/bench/ab.sh" --rounds "$rounds" --wl hotcold --settings default \
		--kernel newest --tag newest --out "$o" ;;
	idle) "$TOP/bench/idle.sh" --rounds "$rounds" --out "$o" ;;
	policy-6.12) "$TOP/bench/policy.sh" --rounds "$rounds" --kernel "$K" --output "$o" ;;
	policy-6.1) "$TOP/bench/policy.sh" --rounds "$rounds" --kernel "$K61" --mons daptrace \
		--output "$o" ;;
	# Reclaim to a pressure goal, phases and memcached: the three ways.
	tmo-6.12) "$TOP/bench/policy.sh" --rounds "$rounds" --kernel "$K" --scens "phases kv" \
		--mons "tmo senpai damos_psi" --output "$o" ;;
	tmo-newest) "$TOP/bench/policy.sh" --rounds "$rounds" --kernel "$KN" --scens "phases kv" \
		--mons "tmo senpai damos_psi" --output "$o" ;;
	placement) "$TOP/bench/placement.sh" --rounds "$rounds" --out "$o" ;;
	follow) "$TOP/bench/follow.sh" --rounds "$rounds" --out "$o" ;;
	# One boot per monitor a round: DAMON_STAT as Debian starts it, or off.
	follow-damon_stat) "$TOP/bench/follow.sh" --rounds "$rounds" --parts damon_stat \
		--out "$o" ;;
	# The host's gcc in the guest, make -j2 followed; each job alone.
	follow-build) "$TOP/bench/follow.sh" --rounds "$rounds" --parts build --out "$o" ;;
	targets) "$TOP/bench/targets.sh" --rounds "$rounds" --out "$o" ;;
	goals) "$TOP/bench/goals.sh" --rounds "$rounds" --out "$o" ;;
	savings) "$TOP/bench/savings.sh" --rounds "$rounds" --out "$o" ;;
	exporter) "$TOP/bench/exporter.sh" --rounds "$rounds" --out "$o" ;;
	# That wave's module against this tree's, alternating boots.
	fixes-cost) "$TOP/bench/fixes-cost.sh" --rounds "$rounds" --out "$o" ;;
	# The same module, its accuracy probes off and on, alternating boots.
	probe-cost) "$TOP/bench/probe-cost.sh" --rounds "$rounds" --out "$o" ;;
	estimate) "$TOP/bench/estimate.sh" --rounds "$rounds" --out "$o" ;;
	objtrace) "$TOP/bench/objtrace.sh" --out "$o" ;;
	esac
}

# block NAME: the section of $DIR/NAME.md between its markers
block() {
	echo "<!-- table:$1 -->"
	echo
	cat "$DIR/$1.md"
	echo
	echo "<!-- /table:$1 -->"
}

# tables_list: the list of tables for the top of BENCHMARKS.md
tables_list() {
	echo "<!-- tables -->"
	echo "Tables below the marker line (\`make bench T=NAME\` regenerates one):"
	echo
	local t
	for t in "${TABLES[@]}"; do
		echo "- \`${t%%|*}\`: ${t#*|}"
	done
	echo "<!-- /tables -->"
}

# head FILE: FILE above the marker line, its list of tables rewritten
MARK="<!-- make bench: generated below -->"
head_of() {
	[ -f "$1" ] || return 0
	awk -v mark="$MARK" -v list="$DIR/tables-list.md" '
		$0 == mark { exit }
		$0 == "<!-- tables -->" { while ((getline l < list) > 0) print l; skip = 1; next }
		$0 == "<!-- /tables -->" { skip = 0; next }
		!skip' "$1"
}

tables_list > "$DIR/tables-list.md"
if [ -n "$TABLE" ]; then
	if [ $REUSE = 0 ]; then
		make_table "$TABLE"
	elif ! [ -s "$DIR/$TABLE.md" ]; then
		echo "bench/run.sh: --reuse: no ${DIR#"$TOP"/}/$TABLE.md" >&2
		exit 1
	fi
	block "$TABLE" > "$DIR/$TABLE.block"
	# replace the table's block, or append it
	{
		head_of "$OUT"
		if [ -f "$OUT" ] && grep -qxF "$MARK" "$OUT"; then
			sed -n "/^$MARK\$/,\$p" "$OUT"
		else
			echo "$MARK"
		fi
	} | awk -v name="$TABLE" -v blk="$DIR/$TABLE.block" '
		$0 == "<!-- table:" name " -->" { while ((getline l < blk) > 0) print l; skip = 1; done = 1; next }
		skip && $0 == "<!-- /table:" name " -->" { skip = 0; next }
		!skip { print }
		END { if (!done) { print ""; while ((getline l < blk) > 0) print l } }' > "$OUT.tmp"
	mv "$OUT.tmp" "$OUT"
	echo "bench: wrote table $TABLE into ${OUT#"$TOP"/} ($((SECONDS - t0)) s)"
	exit 0
fi
{
	head_of "$OUT"
	echo "$MARK"
	for n in "${names[@]}"; do
		make_table "$n" >&2
		echo
		block "$n"
	done
} > "$OUT.tmp"
mv "$OUT.tmp" "$OUT"
echo "bench: wrote ${OUT#"$TOP"/} ($((SECONDS - t0)) s)"
