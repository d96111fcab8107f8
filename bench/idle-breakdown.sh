#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Where a stopped target's worker time goes, window by window, and a busy
# one's, sample by sample: this tree's module with
# bench/idle-breakdown.patch (a ktime_get_ns() around each step of a window
# the worker slept to and no target was probed in, and around each other
# pass from wake-up to sleep, summed, printed when monitoring stops), built
# in a worktree under build/bench/, three passes of
# bench/idle-breakdown-guest.sh in each boot:
#
#   bench/idle-breakdown.sh [--rounds N] [--kernels "6.12"] [--out FILE] [--lock FILE]
#
# Per quiet window, median [min-max] over the passes of all rounds: the
# worker's CPU, each step inside the loop, and what is left (going to sleep
# and waking up, the context switches and the hrtimer: nothing in the loop
# holds it); per sample of the busy target before it was stopped, the same
# three without the steps.  The patch's own dozen clock reads are in the
# steps.  Passes share a boot, which is fine here: the columns are parts of
# one figure, not monitors compared.
set -euo pipefail

TOP=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
. "$TOP/bench/lib.sh"
SERIES=6.12
BENCH_OPTS="kernels=SERIES"
bench_parse_opts bench/idle-breakdown.sh "$@"
DIR=$TOP/build/bench/idle-breakdown
TREE=$DIR/tree
mkdir -p "$DIR"
rm -rf "$TREE"
git -C "$TOP" worktree prune
git -C "$TOP" worktree add --detach "$TREE" HEAD > /dev/null
git -C "$TREE" apply "$TOP/bench/idle-breakdown.patch" ||
	{ echo "bench/idle-breakdown.sh: the patch no longer applies to HEAD: refresh it" >&2; exit 1; }

ROWS=$DIR/rows.txt
: > "$ROWS"
for s in $SERIES; do
	k=$(bench_kernel bench/idle-breakdown.sh "$s")
	make -C "$TREE" --no-print-directory module KVER="$k" > "$DIR/build-$k.log" 2>&1 ||
		{ echo "bench/idle-breakdown.sh: no build for $k ($DIR/build-$k.log)" >&2; exit 1; }
	for r in $(seq 1 "$ROUNDS"); do
		log=$DIR/run-$k-$r.log
		bench_boot "$log" "bench/idle-breakdown.sh: round $r on $k" --kernel "$k" --no-la57 \
			--module "$TREE/build/kmod/$k/daptrace.ko" \
			--test extra/idle-breakdown-guest --extra-test "$TOP/bench/idle-breakdown-guest.sh"
		sed -n "s/^# breakdown /kernel=$k round=$r /p" "$log" >> "$ROWS"
	done
done

{
	echo "    bench/idle-breakdown.sh --rounds $ROUNDS --kernels \"$SERIES\""
	echo
	awk -f - "$ROWS" <<'AWK'
# median [min-max] of the values v[1..n], sorted in place
function fmt(n,    i, j, t) {
	for (i = 2; i <= n; i++)
		for (j = i; j > 1 && v[j - 1] > v[j]; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
	return sprintf(v[n] < 20 ? "%.1f [%.1f-%.1f]" : "%.0f [%.0f-%.0f]", n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2, v[1], v[n])
}
{
	delete f
	for (i = 1; i <= NF; i++)
		if (split($i, kv, "=") == 2) f[kv[1]] = kv[2]
	for (i = 1; i < NF; i++)
		if ($i !~ /=/ && $(i + 1) ~ /^[0-9]+$/) f[$i] = $(i + 1)
	k = f["kernel"]; kernels[k] = 1; n[k]++
	total = f["cpu_us"] / f["snapshots"]
	inloop = 0
	for (s = 1; s <= nsteps; s++) {
		x = f[steps[s]] / 1000 / f["windows"]
		val[k, steps[s], n[k]] = x
		inloop += x
	}
	val[k, "total", n[k]] = total
	val[k, "in the loop", n[k]] = inloop
	val[k, "sleep and wake-up (the rest)", n[k]] = total - inloop
	# a second of windows, against a second of the busy target
	val[k, "stopped / busy, %", n[k]] = 100 * f["cpu_us"] / f["busy_us"]
	bs = f["busy_us"] / f["busy_samples"]
	bl = f["busy_ns"] / 1000 / f["busy_passes"]
	val[k, "busy: per sample", n[k]] = bs
	val[k, "busy: in the loop", n[k]] = bl
	val[k, "busy: sleep and wake-up (the rest)", n[k]] = bs - bl
	val[k, "the rest alone / busy, %", n[k]] = 100 * (total - inloop) * f["snapshots"] / f["busy_us"]
}
BEGIN {
	nsteps = split("check probe_end find_exited publish tune apply aggregate update upper counters probe_start prepare", steps, " ")
	nrows = split("stopped / busy, %;the rest alone / busy, %;total;in the loop;sleep and wake-up (the rest);busy: per sample;busy: in the loop;busy: sleep and wake-up (the rest)", rows, ";")
}
END {
	printf "| per quiet window, us (first two rows: ratios of the phases) |"
	for (k in kernels) printf " %s (%d passes) |", k, n[k]
	printf "\n| --- |"
	for (k in kernels) printf " --- |"
	printf "\n"
	for (r = 1; r <= nrows + nsteps; r++) {
		name = r <= nrows ? rows[r] : steps[r - nrows]
		printf "| %s |", name
		for (k in kernels) {
			for (i = 1; i <= n[k]; i++) v[i] = val[k, name, i]
			printf " %s |", fmt(n[k])
		}
		printf "\n"
	}
}
AWK
} > "$OUT"
