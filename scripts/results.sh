# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Results of the host-side test drivers (scripts/check.sh, scripts/deb.sh,
# selftests/vm/run.sh, tests/exporter/prometheus.sh), KTAP-style: numbered
# "ok" / "not ok" / "ok ... # SKIP why" lines, counted as they come; the
# plan and a totals line close the stream (results_end).  Sourced.

NUM=0
PASSED=0
FAILED=0
SKIPPED=0

ok() {
	NUM=$((NUM + 1)) PASSED=$((PASSED + 1))
	echo "ok $NUM $1"
}

not_ok() {
	NUM=$((NUM + 1)) FAILED=$((FAILED + 1))
	echo "not ok $NUM $1"
}

# skip NAME WHY: a skip always says why.
skip() {
	NUM=$((NUM + 1)) SKIPPED=$((SKIPPED + 1))
	echo "ok $NUM $1 # SKIP $2"
}

# results_end: the plan, "P passed, F failed[, S skipped]"; true if none failed.
results_end() {
	echo "1..$NUM"
	if [ "$SKIPPED" -gt 0 ]; then
		echo "$PASSED passed, $FAILED failed, $SKIPPED skipped"
	else
		echo "$PASSED passed, $FAILED failed"
	fi
	[ "$FAILED" = 0 ]
}
