#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The part of `make check` that needs no VM, as one KTAP stream: the refusal
# of an unverified kernel series and its opt-in (scripts/unverified-test.sh:
# one module build), the libraries of the host programs the guest roots
# carry, the scorer, style (checkpatch), shellcheck, sparse, the host unit
# tests (tests/unit), the userspace tests (userspace/), DKMS and the Debian
# packages (scripts/deb.sh test).  Each step's output goes to
# build/logs/<step>.log; the last line is "N passed, M failed[, K skipped]",
# exit status 0 only if nothing failed.
#
#   scripts/check-host.sh
#
# scripts/check.sh runs it beside the VM boots (nice -n 19, after building
# the modules and the kselftest headers they share) and counts its results
# after them.  Nothing here writes where the VM steps read or build: the
# guest's tools are built into build/userspace-static and build/workload,
# the scorer tested here into build/host/workload.
set -uo pipefail

TOP=$(cd "$(dirname "$0")/.." && pwd)
VERSION=$(cat "$TOP/VERSION")
# shellcheck source=scripts/check-steps.sh
. "$TOP/scripts/check-steps.sh"

echo "TAP version 13"

# An unverified series: refused, and built on request (one module build).
ktap_step unverified "$LOGS/unverified.log" "$TOP/scripts/unverified-test.sh"
# The libraries of the host programs the guest roots carry.
ktap_step shared-libs "$LOGS/shared-libs.log" "$TOP/scripts/shared-libs-test.sh"
# The scorer the accuracy tests and benchmarks judge the estimate with,
# built apart from the guest's copy (build/workload), which the VM step
# may be building at the same time.
ktap_step score "$LOGS/score.log" env BUILD="$BUILD/host" "$TOP/workload/tests/score-test.sh"

step style "$LOGS/style.log" "${MAKE[@]}" style
step shellcheck "$LOGS/shellcheck.log" "${MAKE[@]}" shellcheck
step sparse "$LOGS/sparse.log" "${MAKE[@]}" sparse

if [ -f "$TOP/tests/unit/Makefile" ]; then
	ktap_step unit "$LOGS/unit.log" "${MAKE[@]}" unit
else
	echo "# unit: tests/unit/Makefile not there yet, no results"
fi
if [ -f "$TOP/userspace/Makefile" ]; then
	ktap_step userspace "$LOGS/userspace.log" "${MAKE[@]}" userspace-check
else
	echo "# userspace: userspace/Makefile not there yet, no results"
fi

step dkms "$LOGS/dkms.log" "$TOP/scripts/dkms-test.sh" "$VERSION"
# The Debian packages: built, lintian-clean, installed on this host, checked
# (binary, library, pc file, header, man pages, DKMS source), purged.
ktap_step deb "$LOGS/deb.log" "$TOP/scripts/deb.sh" test

results_end
