#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Run the selftests in QEMU on every supported kernel, plus one boot of the
# newest with 5-level paging and page-table isolation (-cpu max,+la57,
# pti=on), and print one KTAP stream for all of them.  (QEMU's TCG offers
# no PCID, INVPCID or INVLPGB on any CPU model: see docs/kernel-facts.md.)
#
#   selftests/vm/run.sh [options]
#
#   --kernel K          boot kernel release K (repeatable; default: all of
#                       scripts/kernels.sh)
#   --no-la57           no extra 5-level-paging boot
#   --la57-kernel K     kernel for the 5-level-paging boot (default: newest)
#   --la57-cpu MODEL    its QEMU CPU model (default max; +la57 is added),
#                       booted with pti=on
#   --test SUITE/NAME   run only this test (repeatable)
#   --skip SUITE/NAME   leave this test out of every boot, counted as a skip
#                       (repeatable)
#   --la57-test SUITE/NAME  the 5-level-paging boot runs only these tests
#                       (repeatable; the others count as skips); without it,
#                       all
#   --kernel-skip K:SUITE/NAME  leave this test out of kernel K's own boot
#                       (not its 5-level-paging one), counted as a skip
#                       (repeatable)
#   --extra-test FILE   also run FILE (.sh, .c or static binary) as extra/NAME
#   --module KO         load KO instead of build/kmod/<kernel>/daptrace.ko;
#                       "%k" in KO is replaced by the kernel release
#   --vmlinuz IMG       boot IMG instead of the kernel's own image
#                       (/boot/vmlinuz-<kernel>, in the trixie root for the
#                       newest; "%k" as in --module), e.g. the debug kernel
#                       of check-debug
#   --insmod-args ARGS  module parameters, e.g. "inject_warn=1"
#   --keep              keep initramfs and logs in build/vm/<label>/ (logs of
#                       a failed boot are always kept)
#   --shell             boot the first kernel into a busybox shell on this
#                       terminal with the module loaded (no tests, no timeout)
#   --memory SIZE       guest memory (default 4G)
#   --smp N             guest CPUs (default 2)
#   --numa N            NUMA nodes (default 2): memory split evenly, all CPUs
#                       on node 0, nodes 1.. memory-only (a slow tier); 1 = none
#   --cpu MODEL         QEMU CPU model (default qemu64,+rdrand; la57 boot:
#                       MODEL,+la57)
#   --timeout SECS      hard limit per boot on the host (default 2400)
#   --test-timeout SECS per-test limit inside the guest, 0 = none (default 600)
#   --append ARGS       extra kernel command line
#   --qemu-args ARGS    extra QEMU arguments
#   --guest-file SRC:DEST  copy SRC into the guest as DEST, with the
#                       libraries a dynamically linked SRC needs (repeatable)
#   --guest-kmod NAME   put kernel module NAME (and its dependencies) in the
#                       guest's /lib/modules for a test to load (repeatable)
#
# The module must be built first (`make modules-all`, which `make check-vm`
# does).  A boot that died before /init even tried to load the module (the
# TCG bring-up flake) is retried once, and the output says so;
# nothing after insmod is ever retried.  Exit status 0 only if all passed.
set -euo pipefail

TOP=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-$TOP/build}
VMDIR=${DAPTRACE_VMDIR:-$BUILD/vm}
BAD=$TOP/selftests/vm/bad-patterns
ALLOWED=$TOP/selftests/vm/allowed-patterns
DROP_OOM=$TOP/selftests/vm/drop-oom-reports.awk
QEMU=${QEMU:-qemu-system-x86_64}
export LC_ALL=C

usage() {
	sed -n '/^# Run the/,/^set -euo/{/^set/d;s/^# \{0,1\}//;p}' "$0" >&2
	exit 2
}

die() {
	echo "run.sh: $*" >&2
	exit 1
}

KERNELS=()
LA57=1
LA57_KERNEL=
LA57_CPU=max
TESTS=()
SKIP_TESTS=()
KERNEL_SKIPS=()
LA57_TESTS=()
EXTRA=()
MODULE=
VMLINUZ=
INSMOD_ARGS=
KEEP=0
SHELL_MODE=0
MEMORY=4G
SMP=2
NUMA=2
# RDRAND lets the guest's crng be ready at its first instruction.  Without
# it, "crng init done" came anywhere in a boot (55 s, 238 s), and the
# static-branch text patching it does raced QEMU's emulation: an int3 oops
# in crng_make_state during functional/lru_cold on 7.3, no daptrace frame
# (as the clocksource switch once did: see boot()).
CPU=qemu64,+rdrand
# A boot of every test takes 19-20 minutes on 2 cores with the host's
# steps and the debug kernel's build beside it (make check on a new
# machine): 1200 s killed a 5.10 boot still in its stress tests.  A test
# that hangs is the guest's per-test limit's (--test-timeout); this one is
# for a guest that stops, so twice what a boot takes.
TIMEOUT=2400
TEST_TIMEOUT=600
APPEND=
QEMU_ARGS=
GUEST_FILES=()
GUEST_KMODS=()
while [ $# -gt 0 ]; do
	case $1 in
	--kernel) KERNELS+=("$2"); shift ;;
	--no-la57) LA57=0 ;;
	--la57-kernel) LA57_KERNEL=$2; shift ;;
	--la57-cpu) LA57_CPU=$2; shift ;;
	--test) TESTS+=("$2"); shift ;;
	--skip) SKIP_TESTS+=("$2"); shift ;;
	--la57-test) LA57_TESTS+=("$2"); shift ;;
	--kernel-skip)
		[[ $2 == ?*:?*/?* ]] || die "--kernel-skip takes KERNEL:SUITE/NAME, not '$2'"
		KERNEL_SKIPS+=("$2"); shift ;;
	--extra-test) EXTRA+=("$(realpath "$2")"); shift ;;
	--module) MODULE=$2; shift ;;
	--vmlinuz) VMLINUZ=$2; shift ;;
	--insmod-args) INSMOD_ARGS=$2; shift ;;
	--keep) KEEP=1 ;;
	--shell) SHELL_MODE=1 ;;
	--memory) MEMORY=$2; shift ;;
	--smp) SMP=$2; shift ;;
	--numa) NUMA=$2; shift ;;
	--cpu) CPU=$2; shift ;;
	--timeout) TIMEOUT=$2; shift ;;
	--test-timeout) TEST_TIMEOUT=$2; shift ;;
	--append) APPEND=$2; shift ;;
	--qemu-args) QEMU_ARGS=$2; shift ;;
	--guest-file) GUEST_FILES+=("$2"); shift ;;
	--guest-kmod) GUEST_KMODS+=("$2"); shift ;;
	-h | --help) usage ;;
	*) die "unknown option '$1' (--help lists them)" ;;
	esac
	shift
done

if [ ${#KERNELS[@]} -eq 0 ]; then
	mapfile -t KERNELS < <("$TOP/scripts/kernels.sh")
	[ ${#KERNELS[@]} -gt 0 ] || die "no supported kernel installed: run 'make deps'"
fi
# vmlinuz_for K: the image to boot for kernel K.
vmlinuz_for() {
	local root
	if [ -n "$VMLINUZ" ]; then
		echo "${VMLINUZ//%k/$1}"
	else
		root=$("$TOP/scripts/kernels.sh" --root "$1")
		echo "${root%/}/boot/vmlinuz-$1"
	fi
}
for k in "${KERNELS[@]}"; do
	[ -f "$(vmlinuz_for "$k")" ] || die "$(vmlinuz_for "$k") missing"
done
[ -n "$LA57_KERNEL" ] || LA57_KERNEL=$(printf '%s\n' "${KERNELS[@]}" | sort -V | tail -n1)

# Boots: "label kernel cpu cmdline-extra".
BOOTS=()
for k in "${KERNELS[@]}"; do
	BOOTS+=("$k $k $CPU -")
done
if [ "$LA57" = 1 ] && [ "$SHELL_MODE" = 0 ]; then
	BOOTS+=("$LA57_KERNEL-la57 $LA57_KERNEL $LA57_CPU,+la57 dtvm.la57=1,pti=on")
fi

# ---- results ------------------------------------------------------------

# shellcheck source=scripts/results.sh
. "$TOP/scripts/results.sh"

diag() {
	local line
	for line in "$@"; do
		echo "# $line"
	done
}

# diag_file FILE N: the last N lines of FILE as diagnostics.
diag_file() {
	local line
	[ -s "$1" ] || return 0
	tail -n "$2" "$1" | tr -d '\r' | while IFS= read -r line; do
		echo "# | $line"
	done
}

# Bad lines of a kernel console log: init's own "dtvm:" lines don't count.
bad_lines() {
	tr -d '\r' < "$1" | grep -v '^dtvm: ' | awk -f "$DROP_OOM" |
		grep -v -F -f "$ALLOWED" | grep -F -f "$BAD" || true
}

# bad_context FILE: FILE from its first bad line on, 60 lines: the trace a
# crash or a warning printed, which a CI run's output is all there is of
bad_context() {
	local first n
	first=$(bad_lines "$1" | head -n 1)
	[ -n "$first" ] || return 0
	n=$(tr -d '\r' < "$1" | grep -n -x -F -m 1 -- "$first" | cut -d: -f1)
	[ -z "$n" ] || tr -d '\r' < "$1" | sed -n "$n,$((n + 59))p"
}

# ---- one boot -------------------------------------------------------------

module_for() {
	local k=$1
	if [ -n "$MODULE" ]; then
		echo "${MODULE//%k/$k}"
	else
		echo "$BUILD/kmod/$k/daptrace.ko"
	fi
}

# module_problem KO: why KO can't be used, or nothing.
module_problem() {
	local ko=$1 src
	[ -f "$ko" ] || { echo "$ko missing: run 'make modules-all'"; return; }
	[ -z "$MODULE" ] || return 0
	for src in "$TOP"/Kbuild "$TOP"/kernel/*.[ch] "$TOP"/include/uapi/linux/daptrace.h; do
		if [ -e "$src" ] && [ "$src" -nt "$ko" ]; then
			echo "$ko older than ${src#"$TOP"/}: run 'make modules-all'"
			return
		fi
	done
}

# numa_args: QEMU arguments for $NUMA nodes sharing $MEMORY evenly; CPUs on
# node 0 only, so nodes 1.. stand for CPU-less (slower) memory.
numa_args() {
	local mib n i
	[ "$NUMA" -gt 1 ] || return 0
	case $MEMORY in
	*G) mib=$((${MEMORY%G} * 1024)) ;;
	*M) mib=${MEMORY%M} ;;
	*) mib=$MEMORY ;;
	esac
	n=$((mib / NUMA))
	for ((i = 0; i < NUMA; i++)); do
		printf -- '-object memory-backend-ram,id=mem%d,size=%dM -numa node,nodeid=%d,memdev=mem%d' \
			"$i" "$n" "$i" "$i"
		[ "$i" -ne 0 ] || printf -- ',cpus=0-%d' $((SMP - 1))
		printf ' '
	done
}

# boot DIR KERNEL CPU CMDLINE-EXTRA: one QEMU run; sets BOOT_RC (124 = hung).
boot() {
	local dir=$1 k=$2 cpu=$3 extra=$4 accel=(-accel tcg)
	# tsc=reliable: under TCG the TSC follows the host's clock, and a busy
	# host makes the clocksource watchdog see "frequency skew" and switch
	# clocksources at run time; the text patching that switch does raced
	# QEMU's emulation once here (an int3 oops in sched_clock_cpu, 74 s into
	# a 7.3 boot, no daptrace frame).  The skew is the emulator's, not
	# the guest's.
	local cmdline="console=ttyS0 quiet panic=-1 tsc=reliable dtvm.timeout=$TEST_TIMEOUT"
	[ "$extra" = - ] || cmdline+=" ${extra//,/ }"
	[ -z "$INSMOD_ARGS" ] || cmdline+=" dtvm.modparams=${INSMOD_ARGS// /,}"
	[ -z "$APPEND" ] || cmdline+=" $APPEND"
	[[ " $QEMU_ARGS " != *" -accel "* ]] || accel=()
	rm -f "$dir"/{console,token,results}.log
	local qemu=("$QEMU" -machine pc "${accel[@]}" -cpu "$cpu" -m "$MEMORY" -smp "$SMP"
		-nodefaults -display none -no-reboot
		-kernel "$(vmlinuz_for "$k")" -initrd "$dir/initramfs.cpio.gz")
	# shellcheck disable=SC2207 # words by design
	qemu+=($(numa_args))
	# shellcheck disable=SC2206 # user-given extra words
	[ -z "$QEMU_ARGS" ] || qemu+=($QEMU_ARGS)
	if [ "$SHELL_MODE" = 1 ]; then
		"${qemu[@]}" -append "$cmdline dtvm.shell=1" -serial mon:stdio \
			-serial "file:$dir/token.log" -serial "file:$dir/results.log"
		return
	fi
	BOOT_RC=0
	timeout -k 10 "$TIMEOUT" "${qemu[@]}" -append "$cmdline" \
		-serial "file:$dir/console.log" -serial "file:$dir/token.log" \
		-serial "file:$dir/results.log" < /dev/null > "$dir/qemu.log" 2>&1 &
	QEMU_PID=$!
	wait "$QEMU_PID" || BOOT_RC=$?
	QEMU_PID=
	case $BOOT_RC in 137) BOOT_RC=124 ;; esac
}

# Interrupted: take the guest down with us (timeout passes TERM to QEMU).
QEMU_PID=
trap '[ -z "$QEMU_PID" ] || kill "$QEMU_PID" 2>/dev/null' EXIT
trap 'exit 130' INT TERM

# Per-test state while reading the results port.
T_NAME='' T_PLAN='' T_RESULTS=0 T_FAILS=0 T_SKIPALL='' T_TIMEOUT='' T_DMESG=()

test_begin() {
	T_NAME=$1 T_PLAN='' T_RESULTS=0 T_FAILS=0 T_SKIPALL='' T_TIMEOUT='' T_DMESG=()
}

# test_line LABEL LINE: one line of a test program's output.
test_line() {
	local label=$1 line=$2 status rest desc directive
	if [[ $line =~ ^(ok|not\ ok)\ [0-9]+(\ (.*))?$ ]]; then
		status=${BASH_REMATCH[1]} rest=${BASH_REMATCH[3]} directive=
		desc=$rest
		if [[ $rest == *" # "* ]]; then
			desc=${rest%% # *} directive=${rest#* # }
		fi
		desc=${desc#- }
		T_RESULTS=$((T_RESULTS + 1))
		if [ "$status" = ok ] && [[ ${directive^^} == SKIP* ]]; then
			directive=${directive:4}
			skip "$label: $T_NAME: $desc" "${directive# }"
		elif [ "$status" = ok ]; then
			ok "$label: $T_NAME: $desc"
		else
			T_FAILS=$((T_FAILS + 1))
			not_ok "$label: $T_NAME: $desc"
		fi
	elif [[ $line =~ ^1\.\.([0-9]+)(.*)$ ]]; then
		T_PLAN=${BASH_REMATCH[1]}
		[[ ${BASH_REMATCH[2]} != *"# SKIP"* ]] || T_SKIPALL=${BASH_REMATCH[2]#*# SKIP}
	elif [[ $line == "TAP version"* || $line == "KTAP version"* ]]; then
		:
	elif [[ $line == "#"* ]]; then
		echo "$line"
	else
		echo "# $line"
	fi
}

# test_end LABEL RC: the test program's own verdict beyond its cases.
test_end() {
	local label=$1 rc=$2 secs=$3
	if [ -n "$T_TIMEOUT" ]; then
		not_ok "$label: $T_NAME: timed out after $T_TIMEOUT s"
	elif [ -n "$T_SKIPALL" ] && [ "$T_RESULTS" = 0 ]; then
		if [ "$rc" = 4 ]; then
			skip "$label: $T_NAME" "${T_SKIPALL# }"
		else
			not_ok "$label: $T_NAME: skipped all but exit status $rc"
		fi
	elif [ -z "$T_PLAN" ] && [ "$T_RESULTS" = 0 ]; then
		not_ok "$label: $T_NAME: no KTAP results (exit status $rc)"
	elif [ -n "$T_PLAN" ] && [ "$T_RESULTS" -lt "$T_PLAN" ]; then
		not_ok "$label: $T_NAME: crashed after $T_RESULTS of $T_PLAN cases (exit status $rc)"
	elif [ "$rc" != 0 ] && [ "$rc" != 4 ] && [ "$T_FAILS" = 0 ]; then
		not_ok "$label: $T_NAME: exit status $rc with no failed case"
	fi
	if [ ${#T_DMESG[@]} -gt 0 ]; then
		diag "kernel log during $T_NAME:" "${T_DMESG[@]}"
		not_ok "$label: $T_NAME: kernel log clean"
	fi
	diag "$label: $T_NAME: exit status $rc after $secs s"
	T_NAME=
}

# parse LABEL DIR: turn the results port into KTAP results.  Sets INSMOD
# (init got as far as loading the module) and LOADED.
parse() {
	local label=$1 dir=$2 line word rest
	local la57='' unload='' done='' phase_dmesg=() fails=()
	INSMOD=0 LOADED=0
	T_NAME=
	while IFS= read -r line || [ -n "$line" ]; do
		line=${line%$'\r'}
		if [[ $line != "@@dtvm "* ]]; then
			if [ -n "$T_NAME" ]; then
				test_line "$label" "$line"
			else
				echo "# guest: $line"
			fi
			continue
		fi
		line=${line#@@dtvm }
		word=${line%% *} rest=${line#* }
		case $word in
		start) ;;
		insmod) INSMOD=1 ;;
		module)
			LOADED=1
			ok "$label: boot and module load"
			;;
		check)
			case $rest in
			"5-level paging: ok")
				la57=ok
				ok "$label: 5-level paging active"
				;;
			"5-level paging: fail"*)
				la57=fail
				diag "${rest#*fail }"
				not_ok "$label: 5-level paging active"
				;;
			"module unload: ok") unload=ok ;;
			esac
			;;
		fail)
			fails+=("$rest")
			diag "guest: FAILURE: $rest"
			;;
		dmesg)
			if [ -n "$T_NAME" ] && [ "${rest#"$T_NAME "}" != "$rest" ]; then
				T_DMESG+=("${rest#"$T_NAME "}")
			else
				phase_dmesg+=("${rest%% *}: ${rest#* }")
			fi
			;;
		test-begin) test_begin "$rest" ;;
		timeout) T_TIMEOUT=${rest##* } ;;
		test-end)
			[[ $rest =~ rc=([0-9]+)\ secs=([0-9]+) ]] || BASH_REMATCH=(x 255 0)
			test_end "$label" "${BASH_REMATCH[1]}" "${BASH_REMATCH[2]}"
			;;
		done) done=$rest ;;
		esac
	done < "$dir/results.log"

	if [ -n "$T_NAME" ]; then
		diag "$T_NAME did not finish: the guest died or hung during it"
		not_ok "$label: $T_NAME: finished"
	fi
	if [ "$LOADED" = 0 ]; then
		diag_file "$dir/console.log" 30
		if [ "$INSMOD" = 1 ]; then
			diag "insmod failed or crashed (${fails[*]:-no report from /init})"
		else
			diag "the guest died before /init loaded the module"
		fi
		not_ok "$label: boot and module load"
	fi
	if [[ $label == *-la57 ]] && [ -z "$la57" ]; then
		diag "5-level paging was never checked"
		not_ok "$label: 5-level paging active"
	fi
	if [ "$unload" = ok ]; then
		ok "$label: module unload"
	else
		not_ok "$label: module unload"
	fi
	local console_bad=()
	mapfile -t console_bad < <(bad_lines "$dir/console.log")
	if [ ${#phase_dmesg[@]} -eq 0 ] && [ ${#console_bad[@]} -eq 0 ]; then
		ok "$label: kernel log clean"
	else
		[ ${#phase_dmesg[@]} -eq 0 ] || diag "${phase_dmesg[@]}"
		if [ ${#console_bad[@]} -gt 0 ]; then
			diag "console:" "${console_bad[@]}"
			mapfile -t console_bad < <(bad_context "$dir/console.log")
			diag "console from the first of them:" "${console_bad[@]}"
		fi
		not_ok "$label: kernel log clean"
	fi
	[ -n "$done" ] || diag "/init did not finish (done line missing)"
}

# run_boot "label kernel cpu extra": build, boot (retrying a pre-insmod death
# once), report.
run_boot() {
	local label k cpu extra
	read -r label k cpu extra <<< "$1"
	local dir=$VMDIR/$label ko problem t0 t1 fails_before=$FAILED
	ko=$(module_for "$k")
	problem=$(module_problem "$ko")
	if [ -n "$problem" ]; then
		diag "$label: $problem"
		not_ok "$label: boot and module load"
		return
	fi
	rm -rf "$dir"
	mkdir -p "$dir"
	t0=$(date +%s.%N)
	local mk=(--module "$ko") subset=0
	for t in ${TESTS[@]+"${TESTS[@]}"}; do mk+=(--test "$t"); done
	# A subset of the suite: what it leaves out is counted as skipped.
	if [ ${#TESTS[@]} = 0 ]; then
		for t in ${SKIP_TESTS[@]+"${SKIP_TESTS[@]}"}; do mk+=(--skip "$t") subset=1; done
		for t in ${KERNEL_SKIPS[@]+"${KERNEL_SKIPS[@]}"}; do
			[ "${t%%:*}" = "$label" ] || continue
			mk+=(--skip "${t#*:}") subset=1
		done
		if [[ $label == *-la57 ]]; then
			for t in ${LA57_TESTS[@]+"${LA57_TESTS[@]}"}; do mk+=(--test "$t") subset=1; done
		fi
		[ "$subset" = 0 ] || mk+=(--unselected "$dir/unselected")
	fi
	for t in ${EXTRA[@]+"${EXTRA[@]}"}; do mk+=(--extra-test "$t"); done
	for t in ${GUEST_FILES[@]+"${GUEST_FILES[@]}"}; do mk+=(--file "$t"); done
	for t in ${GUEST_KMODS[@]+"${GUEST_KMODS[@]}"}; do mk+=(--kmod "$t"); done
	if ! "$TOP/selftests/vm/mkinitramfs.sh" "${mk[@]}" "$k" "$dir/initramfs.cpio.gz" \
		> "$dir/mkinitramfs.log" 2>&1; then
		diag_file "$dir/mkinitramfs.log" 20
		not_ok "$label: initramfs built"
		return
	fi
	t1=$(date +%s.%N)
	diag "$label: initramfs built in $(printf '%.1f' "$(echo "$t1 - $t0" | bc)") s"
	if [ "$SHELL_MODE" = 1 ]; then
		boot "$dir" "$k" "$cpu" "$extra"
		exit
	fi

	t0=$(date +%s)
	boot "$dir" "$k" "$cpu" "$extra"
	if ! grep -q '^@@dtvm insmod' "$dir/results.log" 2>/dev/null; then
		diag "retrying boot of $label: died before module load (exit status $BOOT_RC)"
		diag_file "$dir/console.log" 15
		for f in console token results qemu; do
			mv "$dir/$f.log" "$dir/$f.attempt1.log" 2>/dev/null || true
		done
		boot "$dir" "$k" "$cpu" "$extra"
	fi
	parse "$label" "$dir"
	if [ "$subset" = 1 ]; then
		while read -r t; do
			[ -z "$t" ] || skip "$label: $t" "not in this boot's subset (make check-full runs it)"
		done < "$dir/unselected"
	fi
	if [ "$BOOT_RC" = 124 ]; then
		diag "guest killed after $TIMEOUT s; console tail:"
		diag_file "$dir/console.log" 15
		not_ok "$label: guest hung"
	elif [ "$BOOT_RC" != 0 ]; then
		diag_file "$dir/qemu.log" 10
		not_ok "$label: qemu exit status $BOOT_RC"
	fi
	if tr -d '\r' < "$dir/token.log" | grep -qx "DAPTRACE-SUCCESS $k"; then
		ok "$label: success token"
	else
		diag "no success token on the token port"
		not_ok "$label: success token"
	fi
	diag "$label: boot+tests took $(($(date +%s) - t0)) s"
	if [ "$FAILED" != "$fails_before" ]; then
		diag "$label: logs kept in ${dir#"$TOP"/}/"
	elif [ "$KEEP" = 0 ]; then
		rm -rf "$dir"
	fi
}

# The static CLI for the guest's /usr/bin/daptrace and the workload tools
# (generator, scorer, DAMON converter), once for all boots.
build_cli() {
	local log=$VMDIR/userspace-static.log
	[ -f "$TOP/userspace/Makefile" ] || return 0
	mkdir -p "$VMDIR"
	if make -C "$TOP/userspace" O="$BUILD/userspace-static" STATIC=1 \
		> "$log" 2>&1 &&
	   make -C "$TOP/workload" O="$BUILD/workload" >> "$log" 2>&1; then
		ok "static daptrace CLI and workload tools for the guest"
	else
		diag_file "$log" 20
		not_ok "static daptrace CLI and workload tools for the guest"
	fi
}

# ---- main -----------------------------------------------------------------

echo "TAP version 13"
build_cli
for b in "${BOOTS[@]}"; do
	read -r label k cpu extra <<< "$b"
	diag "$label: kernel $k, -cpu $cpu, -m $MEMORY, -smp $SMP, NUMA nodes $NUMA"
	run_boot "$b"
done
results_end
