#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Shared by the bench drivers: their options, the rows file, the kernel of a
# series, one boot of the VM.

# bench_parse_opts NAME "$@": getopt(1) over the common options --rounds N
# (ROUNDS, default BENCH_ROUNDS or 3: percost.sh's one round is what
# BENCHMARKS.md quotes), --out FILE (OUT, default stdout) and --lock FILE
# (LOCK, default the VM lock), and over the driver's own, each taking a
# value into a variable: BENCH_OPTS lists them as OPTION=VARIABLE
# ("kernel=SERIES parts=PARTS").  Anything else exits 2 with getopt's
# message naming it.
# The variables are the caller's.
# shellcheck disable=SC2034
bench_parse_opts() {
	local name=$1 longopts=rounds:,out:,lock: o parsed
	local -A var=()
	shift
	for o in ${BENCH_OPTS:-}; do
		longopts+=,${o%%=*}:
		var[--${o%%=*}]=${o#*=}
	done
	parsed=$(getopt -n "$name" -o '' -l "$longopts" -- "$@") || exit 2
	eval set -- "$parsed"
	ROUNDS=${BENCH_ROUNDS:-3} OUT=/dev/stdout LOCK=/tmp/daptrace-vm.lock
	while [ "$1" != -- ]; do
		case $1 in
		--rounds) ROUNDS=$2 ;;
		--out) OUT=$2 ;;
		--lock) LOCK=$2 ;;
		*) printf -v "${var[$1]}" '%s' "$2" ;;
		esac
		shift 2
	done
	shift
	[ $# -eq 0 ] || { echo "$name: unexpected argument '$1'" >&2; exit 2; }
	[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] ||
		{ echo "$name: --rounds: not a positive integer: '$ROUNDS'" >&2; exit 2; }
}

# bench_words NAME OPTION WHAT "ALLOWED" "GIVEN": exit 2 naming the first
# word of GIVEN (the value of OPTION, a list of WHATs) not in ALLOWED.
bench_words() {
	local name=$1 opt=$2 what=$3 allowed=$4 w

	for w in $5; do
		[[ " $allowed " == *" $w "* ]] && continue
		echo "$name: $opt: unknown $what '$w' (${allowed// /, })" >&2
		exit 2
	done
}

# bench_rows NAME: the module built for every kernel, DIR (build/bench) made,
# and ROWS (DIR/NAME-rows.txt) emptied for this run's rows.
# shellcheck disable=SC2034
bench_rows() {
	make -C "$TOP" --no-print-directory -s modules-all
	DIR=$TOP/build/bench
	mkdir -p "$DIR"
	ROWS=$DIR/$1-rows.txt
	: > "$ROWS"
}

# bench_row NAME LOG SED PREFIX: the figures SED (a sed -n script printing
# them) finds in LOG, appended to ROWS as "PREFIX FIGURES"; none ends the
# benchmark naming NAME and LOG.  One copy for the drivers that take a
# single row from each boot's log (exporter.sh, placement.sh).
bench_row() {
	local row

	row=$(sed -n "$3" "$2")
	[ -n "$row" ] || { echo "$1: no figures in $2" >&2; exit 1; }
	echo "$4 $row" >> "$ROWS"
}

# bench_kernel NAME SERIES: the installed kernel of SERIES (scripts/kernels.sh)
# on stdout, or a message naming NAME and exit 1.
bench_kernel() {
	local k

	k=$("$TOP/scripts/kernels.sh" "$2")
	[ -n "$k" ] || { echo "$1: no $2 kernel installed" >&2; exit 1; }
	echo "$k"
}

# bench_boot LOG WHAT RUN_ARGS...: one boot of selftests/vm/run.sh RUN_ARGS
# under the VM lock, its output in LOG; a failed boot ends the benchmark,
# saying "WHAT failed" and where the log is.
bench_boot() {
	local log=$1 what=$2

	shift 2
	if ! flock "$LOCK" "$TOP/selftests/vm/run.sh" "$@" > "$log" 2>&1; then
		echo "$what failed (log: $log)" >&2
		exit 1
	fi
}
