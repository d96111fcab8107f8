# SPDX-License-Identifier: GPL-2.0
#
# Timing and accuracy bounds of the functional tests hold on the stock
# kernels.  On the debug kernel (KASAN, lockdep: `make check-debug` boots it
# with dtvm.slow=1, which exports DAPTRACE_VM_SLOW=1) the guest runs about
# ten times slower and a bound measures the emulator, not daptrace: the run
# still happens, so every kernel path is exercised under the debug checks,
# but a missed bound is a counted skip that says so.  Source after ktap.sh.

# bound_fail NAME REASON: a missed timing/accuracy bound.
bound_fail() {
	if [ "${DAPTRACE_VM_SLOW:-0}" = 1 ]; then
		ktap_test_skip "$1" "bound not applied on a slow (debug) kernel: $2"
	else
		ktap_test_fail "$1" "$2"
	fi
}
