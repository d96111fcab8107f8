#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Shared by the bench guest scripts that time functions with ftrace's
# function_graph tracer (percost-guest.sh, profile.sh), so the two read the
# tracer's lines one way.  Sourced in the guest, where bench/ is not
# (selftests/vm/mkinitramfs.sh ships only selftests/lib, which is the
# tests' and not the place for bench code): the boots that run those
# scripts copy it in with
#   --guest-file "$TOP/bench/lib-guest.sh:/bench/lib-guest.sh"

# graph_times TAG TRACE: one "# TAG fn=NAME calls=N total_us=T mean_us=M"
# line per function timed in TRACE, a copy of the trace buffer with the
# funcgraph-tail option on: leaf lines " 1)   12.345 us    |  name();",
# closing lines of calls with traced callees
# " 1)   12.345 us    |  } /* name */".
graph_times() {
	awk -v tag="$1" '/\(\);$/ || /\} \/\* / {
		gsub(/ \[[A-Za-z0-9_]+\]/, "")	# " [module]" after a name
		u = ""
		for (i = 1; i <= NF; i++) if ($i == "us" || $i == "ms") { d = $(i - 1); u = $i; break }
		if (u == "") next
		if ($NF == "*/") name = $(NF - 1); else { name = $NF; sub(/\(\);/, "", name) }
		if (u == "ms") d *= 1000
		n[name]++; t[name] += d
	}
	END {
		for (f in n)
			printf "# %s fn=%s calls=%d total_us=%d mean_us=%.1f\n", tag, f, n[f], t[f], t[f] / n[f]
	}' "$2"
}
