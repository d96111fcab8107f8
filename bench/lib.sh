#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Shared by the bench drivers that take only the common options:
#   bench_parse_opts NAME "$@"
# sets ROUNDS (default 3), OUT (default stdout) and LOCK (default the VM
# lock) from --rounds N, --out FILE and --lock FILE, and exits 2 naming the
# option on anything else.

# The variables are the caller's.
# shellcheck disable=SC2034
bench_parse_opts() {
	local name=$1
	shift
	ROUNDS=3 OUT=/dev/stdout LOCK=/tmp/daptrace-vm.lock
	while [ $# -gt 0 ]; do
		case $1 in
		--rounds | --out | --lock)
			[ $# -ge 2 ] || { echo "$name: $1: missing value" >&2; exit 2; }
			case $1 in
			--rounds) ROUNDS=$2 ;;
			--out) OUT=$2 ;;
			--lock) LOCK=$2 ;;
			esac
			shift ;;
		*) echo "$name: unknown option '$1' (--rounds N, --out FILE, --lock FILE)" >&2
		   exit 2 ;;
		esac
		shift
	done
	[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] ||
		{ echo "$name: --rounds: not a positive integer: '$ROUNDS'" >&2; exit 2; }
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
