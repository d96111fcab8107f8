# SPDX-License-Identifier: GPL-2.0-only
# Bytes of hot, warm and cold memory (and memory that cannot be observed)
# per NUMA node over time: one panel per node, the classes stacked, each in
# its own colour.
# Data: `daptrace report nodes` -> "time_s node0_hot node0_warm node0_cold
# node1_hot ... node0_not_observable node1_not_observable ..."; ticsfile sets
# nnodes and hot_pct.
# Called as `gnuplot -c SCRIPT datafile ticsfile outfile title subtitle vizdir`
# by `daptrace report --plot` (or with gnuplot -e and the variables set).
if (ARGC >= 6) { datafile = ARG1; ticsfile = ARG2; outfile = ARG3; plottitle = ARG4; plotsub = ARG5; vizdir = ARG6 }
load vizdir."/terminal.gp"
nnodes = 1
hot_pct = 50
if (strlen(ticsfile) > 0) load ticsfile
# c: 0 hot, 1 warm, 2 cold, 3 not observable (after every node's three)
col(n, c) = c < 3 ? column(2 + 3 * n + c) : column(2 + 3 * nnodes + n)
# the largest node total sets one unit for every panel
ymax = 0
unobs = 0
do for [n = 0:nnodes - 1] {
	stats datafile using (col(n, 0) + col(n, 1) + col(n, 2) + col(n, 3)) nooutput
	ymax = STATS_max > ymax ? STATS_max : ymax
	stats datafile using (col(n, 3)) nooutput
	unobs = unobs + STATS_max
}
unit = ymax >= 2 * 1024.0**3 ? 1024.0**3 : (ymax >= 2 * 1024.0**2 ? 1024.0**2 : 1024.0)
uname = unit == 1024.0**3 ? "GiB" : (unit == 1024.0**2 ? "MiB" : "KiB")
stats datafile using 1 nooutput
set xrange [STATS_min:STATS_max]
set yrange [0:(ymax > 0 ? ymax / unit * 1.05 : 1)]
set lmargin 10
set rmargin 30
set key outside right top Left reverse samplen 2
set style fill solid 1.0 noborder
set grid front
set multiplot layout nnodes, 1 title titled("memory per NUMA node (estimated from the sampled pages' nodes)")
do for [n = 0:nnodes - 1] {
	if (n == nnodes - 1) { set xlabel "time since start (s)" } else { unset xlabel }
	set ylabel sprintf("node %d (%s)", n, uname)
	if (n > 0) { unset key }
	plot datafile using 1:(0):(col(n, 3) / unit) with filledcurves \
		fillcolor rgb "#1b9e77" fillstyle pattern 2 title (unobs > 0 ? "not observable" : ""), \
	     '' using 1:(col(n, 3) / unit):((col(n, 3) + col(n, 2)) / unit) with filledcurves \
		fillcolor rgb "#4575b4" title "cold: no access seen", \
	     '' using 1:((col(n, 3) + col(n, 2)) / unit):((col(n, 3) + col(n, 2) + col(n, 1)) / unit) \
		with filledcurves fillcolor rgb "#fdae61" title sprintf("warm: accessed, < %d%%", hot_pct), \
	     '' using 1:((col(n, 3) + col(n, 2) + col(n, 1)) / unit):((col(n, 3) + col(n, 2) + col(n, 1) + col(n, 0)) / unit) \
		with filledcurves fillcolor rgb "#d73027" title sprintf("hot: >= %d%% of samples", hot_pct)
}
unset multiplot
