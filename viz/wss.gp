# SPDX-License-Identifier: GPL-2.0-only
# Working set size over time with its p50/p90/p99 as reference lines.
# Data: `daptrace report wss` -> "time_s wss_bytes"; ticsfile sets p50..p99.
load vizdir."/terminal.gp"
set title plottitle." - working set size"
set xlabel "time since start (s)"
set ylabel "working set size (bytes in regions accessed in the window)"
set format y "%.1b %BB"
set yrange [0:*]
set key top left opaque
if (strlen(ticsfile) > 0) load ticsfile
if (exists("p50")) {
	plot datafile using 1:2 with steps lw 2 lc rgb "#1f77b4" title "WSS", \
	     p50 with lines dt 2 lc rgb "#2ca02c" title "p50", \
	     p90 with lines dt 2 lc rgb "#ff7f0e" title "p90", \
	     p99 with lines dt 2 lc rgb "#d62728" title "p99"
} else {
	plot datafile using 1:2 with steps lw 2 lc rgb "#1f77b4" title "WSS"
}
