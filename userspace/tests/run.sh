#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Run each host test binary as one KTAP subtest (kselftest runner style):
# the binary's own KTAP output is nested with "# " and its exit code decides
# ok / not ok / SKIP (4).  Exit status: 0 if nothing failed.
n=$#
i=0
failed=0
echo "TAP version 13"
echo "1..$n"
for t in "$@"; do
	i=$((i + 1))
	name=$(basename "$t")
	out=$("$t" 2>&1)
	rc=$?
	printf '%s\n' "$out" | sed 's/^/# /'
	case $rc in
	0) echo "ok $i userspace: $name" ;;
	4) echo "ok $i userspace: $name # SKIP" ;;
	*) echo "not ok $i userspace: $name # exit=$rc"; failed=$((failed + 1)) ;;
	esac
done
echo "# Totals: pass:$((n - failed)) fail:$failed"
[ "$failed" -eq 0 ]
