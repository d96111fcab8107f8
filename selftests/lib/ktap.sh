# SPDX-License-Identifier: GPL-2.0
#
# KTAP output for shell selftests, mirroring kselftest.h's ksft_* helpers and
# the kernel's tools/testing/selftests/kselftest/ktap_helpers.sh.  POSIX sh:
# sourced by busybox ash in the test VM and by bash/dash on the host.
#
#	. "$(dirname "$0")/../lib/ktap.sh"
#	ktap_print_header
#	ktap_set_plan 2
#	if check_a; then ktap_test_pass "a"; else ktap_test_fail "a" "why"; fi
#	ktap_test_skip "b" "needs 5-level paging"
#	ktap_finished
#
# Exit codes are kselftest's: 0 pass, 1 fail, 4 skip (everything skipped).

# shellcheck disable=SC2034 # kselftest's full set, for the tests' use
KSFT_PASS=0
KSFT_FAIL=1
KSFT_XFAIL=2
# shellcheck disable=SC2034
KSFT_XPASS=3
KSFT_SKIP=4

KTAP_TESTNO=1
KTAP_PLAN=0
KTAP_CNT_PASS=0
KTAP_CNT_FAIL=0
KTAP_CNT_SKIP=0

ktap_print_header() {
	echo "TAP version 13"
}

# ktap_print_msg "text": a diagnostic line.
ktap_print_msg() {
	echo "# $*"
}

ktap_set_plan() {
	KTAP_PLAN=$1
	echo "1..$KTAP_PLAN"
}

# ktap_skip_all "reason": nothing can run here; ends the test with exit 4.
ktap_skip_all() {
	echo "1..0 # SKIP $*"
	exit "$KSFT_SKIP"
}

__ktap_result() {
	# $1 "ok"/"not ok", $2 name, $3 optional directive
	if [ -n "${3:-}" ]; then
		echo "$1 $KTAP_TESTNO $2 # $3"
	else
		echo "$1 $KTAP_TESTNO $2"
	fi
	KTAP_TESTNO=$((KTAP_TESTNO + 1))
}

# ktap_test_pass "name"
ktap_test_pass() {
	__ktap_result "ok" "$1"
	KTAP_CNT_PASS=$((KTAP_CNT_PASS + 1))
}

# ktap_test_fail "name" ["reason"]: the reason is printed as a diagnostic
# before the result line, as kselftest_harness.h does.
ktap_test_fail() {
	[ -z "${2:-}" ] || ktap_print_msg "$1: $2"
	__ktap_result "not ok" "$1"
	KTAP_CNT_FAIL=$((KTAP_CNT_FAIL + 1))
}

# ktap_test_skip "name" "reason": a skip always says why.
ktap_test_skip() {
	__ktap_result "ok" "$1" "SKIP ${2:-no reason given}"
	KTAP_CNT_SKIP=$((KTAP_CNT_SKIP + 1))
}

# ktap_test_result "name" command args...: pass if the command succeeds.
ktap_test_result() {
	__ktap_name=$1
	shift
	if "$@"; then
		ktap_test_pass "$__ktap_name"
	else
		ktap_test_fail "$__ktap_name" "'$*' failed"
	fi
}

# ktap_exit_fail_msg "reason": give up on the rest of the plan.
ktap_exit_fail_msg() {
	echo "Bail out! $*"
	ktap_print_totals
	exit "$KSFT_FAIL"
}

# ktap_require_tools TOOL...: bail out unless every TOOL is installed in
# the guest (the image was built without it: no test of it can run).
ktap_require_tools() {
	for ktap_tool in "$@"; do
		command -v "$ktap_tool" > /dev/null ||
			ktap_exit_fail_msg "$ktap_tool is not installed in the guest"
	done
}

ktap_print_totals() {
	echo "# Totals: pass:$KTAP_CNT_PASS fail:$KTAP_CNT_FAIL xfail:0 xpass:0 skip:$KTAP_CNT_SKIP error:0"
}

# ktap_finished: totals, then exit 0 if every planned case passed or skipped
# (4 if all of them skipped), 1 otherwise -- including a plan not run out.
ktap_finished() {
	ktap_print_totals
	if [ "$KTAP_CNT_FAIL" -ne 0 ] ||
	   [ $((KTAP_CNT_PASS + KTAP_CNT_SKIP)) -ne "$KTAP_PLAN" ]; then
		exit "$KSFT_FAIL"
	fi
	if [ "$KTAP_PLAN" -gt 0 ] && [ "$KTAP_CNT_SKIP" -eq "$KTAP_PLAN" ]; then
		exit "$KSFT_SKIP"
	fi
	exit "$KSFT_PASS"
}
