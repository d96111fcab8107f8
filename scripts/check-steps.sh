# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# The steps of `make check` (scripts/check.sh, scripts/check-host.sh): a
# command run with its output in a log, folded into the KTAP stream of
# scripts/results.sh as one result (step) or as the results it prints
# (ktap_step).  Sourced with TOP set; sets what the steps share: BUILD, LOGS
# (created), MAKE, the C locale, and scripts/results.sh's counters.

BUILD=${BUILD:-$TOP/build}
LOGS=$BUILD/logs
# shellcheck disable=SC2034 # used by the scripts that source this
MAKE=(make -C "$TOP" --no-print-directory)
export LC_ALL=C
mkdir -p "$LOGS"

# shellcheck source=scripts/results.sh
. "$TOP/scripts/results.sh"

# log_tail LOG: where the log is and its last 20 lines, as diagnostics.
log_tail() {
	echo "# log: ${1#"$TOP"/}"
	tail -n 20 "$1" | while IFS= read -r line; do
		echo "# | $line"
	done
}

# step NAME LOG CMD...: a step that is one result.
step() {
	local name=$1 log=$2 t0=$SECONDS rc=0
	shift 2
	"$@" < /dev/null > "$log" 2>&1 || rc=$?
	if [ $rc = 0 ]; then
		ok "$name"
	else
		log_tail "$log"
		not_ok "$name"
	fi
	echo "# $name: $((SECONDS - t0)) s"
}

# Diagnostics of a KTAP step are held back and shown only before a failed
# result, except the VM harness's retry, timing and log-location notes.
DIAG=()

hold_diag() {
	DIAG+=("$1")
	[ ${#DIAG[@]} -le 20 ] || DIAG=("${DIAG[@]:1}")
}

# ktap_result LINE: if LINE is a result, its KT_STATUS (ok, not ok or
# skip), KT_DESC and, of a skip, KT_WHY; false if it is none.
ktap_result() {
	local rest directive
	[[ $1 =~ ^(ok|not\ ok)\ [0-9]+\ (.*)$ ]] || return 1
	KT_STATUS=${BASH_REMATCH[1]} rest=${BASH_REMATCH[2]} KT_WHY=
	KT_DESC=${rest#- }
	if [[ $rest == *" # "* ]]; then
		KT_DESC=${rest%% # *} directive=${rest#* # }
		if [ "$KT_STATUS" = ok ] && [[ ${directive^^} == SKIP* ]]; then
			directive=${directive:4}
			KT_STATUS=skip KT_WHY=${directive# }
		fi
	fi
}

# fold NAME LINE: one line of a KTAP step's output.
fold() {
	local name=$1 line=$2
	if ktap_result "$line"; then
		STEP_RESULTS=$((STEP_RESULTS + 1))
		case $KT_STATUS in
		skip) skip "$name: $KT_DESC" "$KT_WHY" ;;
		ok) ok "$name: $KT_DESC" ;;
		*)
			STEP_FAILS=$((STEP_FAILS + 1))
			[ ${#DIAG[@]} -eq 0 ] || printf '%s\n' "${DIAG[@]}"
			not_ok "$name: $KT_DESC"
			;;
		esac
		DIAG=()
	elif [[ $line =~ ^#\ (retrying\ boot|.*boot\+tests\ took|.*logs\ kept\ in) ]]; then
		echo "$line"
	elif [[ $line == "#"* ]]; then
		hold_diag "$line"
	elif [[ $line =~ ^(TAP\ version|KTAP\ version|1\.\.[0-9]+$|[0-9]+\ passed,\ ) ]]; then
		:
	elif [ -n "$line" ]; then
		hold_diag "# $line"
	fi
}

# replay FILE: what another check script wrote to FILE (scripts/check-host.sh,
# run beside the VM boots), its results counted here under their own names,
# its diagnostics shown as they were.  False if FILE ends without its totals
# line: the script died.
replay() {
	local line ended=1
	while IFS= read -r line; do
		if ktap_result "$line"; then
			case $KT_STATUS in
			skip) skip "$KT_DESC" "$KT_WHY" ;;
			ok) ok "$KT_DESC" ;;
			*) not_ok "$KT_DESC" ;;
			esac
		elif [[ $line =~ ^[0-9]+\ passed,\  ]]; then
			ended=0
		elif [[ $line =~ ^(TAP\ version|1\.\.[0-9]+$) ]]; then
			:
		elif [[ $line == "#"* ]]; then
			echo "$line"
		elif [ -n "$line" ]; then
			echo "# $line"
		fi
	done < "$1"
	return $ended
}

# ktap_step NAME LOG CMD...: a step whose KTAP results are folded in as they
# come; its exit status must agree with them.
ktap_step() {
	local name=$1 log=$2 t0=$SECONDS rc line rcfile=$2.rc
	shift 2
	STEP_RESULTS=0 STEP_FAILS=0 DIAG=()
	rm -f "$rcfile"
	while IFS= read -r line; do
		fold "$name" "$line"
	done < <({ "$@" < /dev/null; echo $? > "$rcfile"; } 2>&1 | tee "$log")
	rc=$(cat "$rcfile" 2>/dev/null || echo 255)
	if [ "$rc" != 0 ] && [ "$STEP_FAILS" = 0 ]; then
		log_tail "$log"
		not_ok "$name: exit status $rc"
	elif [ "$STEP_RESULTS" = 0 ]; then
		log_tail "$log"
		not_ok "$name: no KTAP results"
	fi
	echo "# $name: $((SECONDS - t0)) s"
}
