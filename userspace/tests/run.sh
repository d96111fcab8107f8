#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Run the host test binaries (each a kselftest_harness program) as one flat
# KTAP stream: every test case of every binary is one result, named
# "userspace: BINARY: CASE", so totals count cases, not binaries.  Diagnostics
# are kept as "# " lines.  A binary that exits non-zero without reporting a
# failed case (a crash, a wrong plan) or that reports nothing adds one failed
# result of its own.  The plan comes last, once the count is known.
# Exit status: 0 if nothing failed.
i=0
failed=0
skipped=0
tmp=$(mktemp) || exit 1
trap 'rm -f "$tmp"' EXIT
echo "TAP version 13"
for t in "$@"; do
	name=$(basename "$t")
	"$t" > "$tmp" 2>&1
	rc=$?
	results=0
	fails=0
	while IFS= read -r line; do
		case $line in
		"ok "[0-9]*|"not ok "[0-9]*)
			status=${line%% [0-9]*}
			desc=${line#"$status" }
			desc=${desc#* }
			i=$((i + 1))
			results=$((results + 1))
			if [ "$status" = "not ok" ]; then
				fails=$((fails + 1))
				failed=$((failed + 1))
			elif [ "${desc#*"# SKIP"}" != "$desc" ]; then
				skipped=$((skipped + 1))
			fi
			echo "$status $i userspace: $name: $desc"
			;;
		"TAP version"*|"KTAP version"*|1..[0-9]*) ;;
		*) echo "# $line" ;;
		esac
	done < "$tmp"
	if [ "$results" -eq 0 ] || { [ "$rc" -ne 0 ] && [ "$rc" -ne 4 ] && [ "$fails" -eq 0 ]; }; then
		i=$((i + 1))
		failed=$((failed + 1))
		echo "not ok $i userspace: $name: exit status $rc after $results results"
	fi
done
echo "1..$i"
echo "# Totals: pass:$((i - failed - skipped)) fail:$failed skip:$skipped"
[ "$failed" -eq 0 ]
