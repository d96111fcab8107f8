# SPDX-License-Identifier: GPL-2.0
#
# Start daptrace-workload for a test.  Source after ktap.sh.

# workload_start TRUTH ARGS...: run daptrace-workload ARGS in the background,
# writing its ground truth to TRUTH; sets WL_PID.  Returns once the mapping is
# populated and phase 0 began, or 1 (workload killed) if it died or took
# longer than WL_WAIT_S seconds (default 60).
workload_start() {
	wl_truth=$1
	shift
	daptrace-workload "$@" --truth "$wl_truth" &
	WL_PID=$!
	wl_i=0
	while ! grep -q '^phase 0' "$wl_truth" 2>/dev/null; do
		wl_i=$((wl_i + 1))
		if [ $wl_i -gt $((${WL_WAIT_S:-60} * 10)) ] || ! kill -0 $WL_PID 2>/dev/null; then
			kill $WL_PID 2>/dev/null
			wait $WL_PID 2>/dev/null
			return 1
		fi
		sleep 0.1
	done
}
