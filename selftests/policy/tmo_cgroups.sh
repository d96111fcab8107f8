#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Per-cgroup reclaim for several cgroups from one process, as the service
# runs it: `daptrace policy --config FILE` with "preset tmo" and one
# "cgroup PATH" line per cgroup (the format of systemd/policy.conf), two
# cgroups v2 each holding a reclaim workload (hot, warm, never-read sets),
# zram swap.  Judged on the targets and the files the policy writes:
#  - one process, one scheme and one pressure goal per cgroup, each goal
#    read from its own cgroup's memory.pressure, every window;
#  - each scheme acted only in its own cgroup (the regret counters are kept
#    per cgroup of the process acted on: scheme A's name only cgroup A);
#  - in both cgroups the never-read set >= 90 % swapped out (VmSwap) within
#    60 s and <= 1 % of the hot set ever found swapped out; every page
#    intact; the policy stops by itself when both cgroups are empty.

. "$(dirname "$0")/../lib/ktap.sh"
. "$(dirname "$0")/../lib/bounds.sh"
. "$(dirname "$0")/../lib/setup.sh"

TMP=${TMPDIR:-/tmp}/policy-tmo-cg.$$
HOT_MB=8
WARM_MB=8
COLD_MB=48
DURATION=75

cleanup() {
	pressure_test_end
}

# Two cgroups v2 with the memory controller (mounting the hierarchy first
# if nobody has).
pressure_test_begin "$TMP" daptrace-cg-a daptrace-cg-b
ktap_set_plan 6
root=$CG_ROOT
set -- $CGS
CGA=$1
CGB=$2
rel_a=/${CGA#"$root"/}
rel_b=/${CGB#"$root"/}

# start_wl CGROUP NAME: a workload that enters CGROUP before it allocates
# (the policy stays out).
start_wl() {
	sh -c 'echo $$ > "$1/cgroup.procs" && shift && exec "$@"' sh "$1" \
		daptrace-policy-workload reclaim --hot ${HOT_MB}M --warm ${WARM_MB}M \
		--cold ${COLD_MB}M --duration $DURATION --pidfile "$TMP/pid.$2" > "$TMP/out.$2" 2>&1 &
}
start_wl "$CGA" a
wl_a=$!
start_wl "$CGB" b
wl_b=$!
i=0
while { [ ! -s "$TMP/pid.a" ] || [ ! -s "$TMP/pid.b" ]; } && [ $i -lt 600 ]; do
	sleep 0.1
	i=$((i + 1))
done
pid_a=$(cat "$TMP/pid.a" 2>/dev/null)
pid_b=$(cat "$TMP/pid.b" 2>/dev/null)
if [ -z "$pid_a" ] || [ -z "$pid_b" ]; then
	cleanup
	ktap_exit_fail_msg "the workloads did not start: $(cat "$TMP"/out.*)"
fi

# The service's settings file, with the cgroups as the admin lists them:
# one by its directory, one by its path below the mount.
cat > "$TMP/policy.conf" <<EOF
# as systemd/policy.conf
preset tmo
cgroup $CGA
cgroup $rel_b
stats-json $TMP/stats.json
progress 10s
EOF
daptrace policy --config "$TMP/policy.conf" -o "$TMP/rec.csv" > "$TMP/policy.out" 2>&1 &
policy=$!

want_kb=$((COLD_MB * 1024 * 9 / 10))
reached_a=
reached_b=
series_a=
series_b=
t=0
while [ $t -le 60 ]; do
	swap_a=$(proc_kb "/proc/$pid_a/status" VmSwap)
	swap_b=$(proc_kb "/proc/$pid_b/status" VmSwap)
	series_a="${series_a:+$series_a }$((${swap_a:-0} / 1024))"
	series_b="${series_b:+$series_b }$((${swap_b:-0} / 1024))"
	[ -n "$reached_a" ] || [ "${swap_a:-0}" -lt "$want_kb" ] || reached_a=$t
	[ -n "$reached_b" ] || [ "${swap_b:-0}" -lt "$want_kb" ] || reached_b=$t
	[ -z "$reached_a" ] || [ -z "$reached_b" ] || break
	sleep 1
	t=$((t + 1))
done
wait "$wl_a"
wst_a=$?
wait "$wl_b"
wst_b=$?
# the cgroups are empty now: the policy stops by itself
i=0
while kill -0 $policy 2> /dev/null && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
if kill -0 $policy 2> /dev/null; then
	kill $policy
	wait $policy
	st=stuck
else
	wait $policy
	st=$?
fi
for n in a b; do
	sed "s/^/# $n: /" "$TMP/out.$n"
done
sed 's/^/# policy: /' "$TMP/policy.out" | tail -n 20
ktap_print_msg "VmSwap (MiB) once a second, a: $series_a"
ktap_print_msg "VmSwap (MiB) once a second, b: $series_b"

if [ "$st" = 0 ] && [ $wst_a -eq 0 ] && [ $wst_b -eq 0 ] &&
   [ "$(grep -cx 'verify ok' "$TMP/out.a" "$TMP/out.b" | grep -c ':1$')" = 2 ] &&
   grep -q 'stopped: no process left' "$TMP/policy.out"; then
	ktap_test_pass "workloads intact, the policy stopped by itself when the cgroups emptied"
else
	ktap_test_fail "workloads intact, the policy stopped by itself" \
		"policy '$st', workloads $wst_a $wst_b"
fi

# One scheme per cgroup, each with its own pressure goal, read every window.
sources=$(sed -n 's/.*"source": *"\([^"]*\)".*/\1/p' "$TMP/stats.json" | sed 's/\\//g' |
	grep memory.pressure | tr '\n' ' ')
nschemes=$(grep -c '"action": *"pageout"' "$TMP/stats.json")
reads=$(sed -n 's/.*"reads": *\([0-9]*\).*/\1/p' "$TMP/stats.json" | sort -n | head -n 1)
if [ "$nschemes" = 2 ] && [ "$sources" = "$CGA/memory.pressure $CGB/memory.pressure " ] &&
   [ "${reads:-0}" -ge 40 ]; then
	ktap_test_pass "one scheme per cgroup, each goal read from its own cgroup ($reads+ reads)"
else
	ktap_test_fail "one scheme and goal per cgroup" \
		"schemes '$nschemes', sources '$sources', fewest reads '$reads'"
fi

# Each scheme acted in its own cgroup only (regret is per cgroup acted in).
daptrace report regret "$TMP/rec.csv" > "$TMP/regret.txt" 2>&1
sed 's/^/# /' "$TMP/regret.txt"
rows=$(grep -v '^#' "$TMP/regret.txt" | awk '{ print $1, $2 }' | sort | tr '\n' ';')
want="0:pageout@$rel_a $rel_a;1:pageout@$rel_b $rel_b;"
if [ "$rows" = "$want" ]; then
	ktap_test_pass "each scheme acted in its own cgroup only"
else
	ktap_test_fail "each scheme acted in its own cgroup only" "got '$rows', want '$want'"
fi

# paged_out NAME SECONDS
paged_out() {
	if [ -n "$2" ]; then
		ktap_test_pass "cgroup $1: never-read memory paged out, VmSwap >= 90% after $2 s"
	else
		bound_fail "cgroup $1: never-read memory paged out within 60 s" \
			"VmSwap never reached $want_kb kB"
	fi
}
paged_out a "$reached_a"
paged_out b "$reached_b"
ev_a=$(sed -n 's/^evicted hot=\([0-9]*\) .*/\1/p' "$TMP/out.a")
ev_b=$(sed -n 's/^evicted hot=\([0-9]*\) .*/\1/p' "$TMP/out.b")
limit=$((HOT_MB * 256 / 100))
if [ -n "$ev_a" ] && [ -n "$ev_b" ] && [ "$ev_a" -le $limit ] && [ "$ev_b" -le $limit ]; then
	ktap_test_pass "hot pages swapped out: $ev_a and $ev_b (<= 1% of each hot set: $limit)"
else
	ktap_test_fail "hot pages swapped out <= 1% of each hot set" \
		"'$ev_a' and '$ev_b' pages, limit $limit"
fi
cleanup
ktap_finished
