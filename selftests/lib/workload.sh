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

# workload_record TRUTH REC LOG WORKLOAD-ARGS...: run daptrace-workload
# WORKLOAD-ARGS (workload_start), `daptrace record` it (with the options in
# DT_RECORD_ARGS, if set) into REC until it exits, its output into LOG, and
# wait for it.  Returns 0, or 1 with WL_WHY saying what failed (a failed
# record's output printed as diagnostics).
workload_record() {
	wl_rec=$2 wl_log=$3
	wl_t=$1
	shift 3
	if ! workload_start "$wl_t" "$@"; then
		WL_WHY="workload did not start"
		return 1
	fi
	# shellcheck disable=SC2086
	if ! daptrace record -q -p $WL_PID -o "$wl_rec" ${DT_RECORD_ARGS:-} > "$wl_log" 2>&1; then
		sed 's/^/# record: /' "$wl_log"
		wait $WL_PID
		WL_WHY="daptrace record failed"
		return 1
	fi
	wait $WL_PID
}

# workload_stop PID: SIGSTOP it and wait until the kernel says it stopped
# (state T in /proc/PID/stat; 10 s at most: a slow kernel, the debug one,
# takes a while).
workload_stop() {
	kill -STOP "$1"
	wl_i=0
	while [ "$(awk '{ print $3 }' /proc/"$1"/stat)" != T ] && [ $wl_i -lt 100 ]; do
		sleep 0.1
		wl_i=$((wl_i + 1))
	done
}
