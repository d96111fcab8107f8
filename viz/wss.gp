# SPDX-License-Identifier: GPL-2.0-only
# Working set size over time with its p50/p90/p99 as reference lines.
# Data: `daptrace report wss` -> "time_s wss_bytes"; ticsfile sets p50..p99.
# The y axis is in KiB, MiB or GiB, whichever suits the largest value; a
# moving average over about one second smooths the per-window noise.
# Called as `gnuplot -c SCRIPT datafile ticsfile outfile title subtitle vizdir`
# by `daptrace report --plot` (or with gnuplot -e and the variables set).
if (ARGC >= 6) { datafile = ARG1; ticsfile = ARG2; outfile = ARG3; plottitle = ARG4; plotsub = ARG5; vizdir = ARG6 }
load vizdir."/terminal.gp"
set title titled("working set size")
set xlabel "time since start (s)"
set autoscale xfix
set yrange [0:*]
set key top left opaque box
# room above the data for the key
set offsets 0, 0, graph 0.25, 0
if (strlen(ticsfile) > 0) load ticsfile

stats datafile using 1 nooutput
npts = STATS_records
dt = npts > 1 ? (STATS_max - STATS_min) / (npts - 1) : 1
stats datafile using 2 nooutput
ymax = STATS_max
if (ymax <= 0) set yrange [0:1]
# floating point: p50 / unit must not be an integer division (2.6 MiB, not 2)
unit = ymax >= 2 * 1024.0**3 ? 1024.0**3 : (ymax >= 2 * 1024.0**2 ? 1024.0**2 : 1024.0)
uname = unit == 1024.0**3 ? "GiB" : (unit == 1024.0**2 ? "MiB" : "KiB")
set ylabel sprintf("working set size (%s): bytes of the regions accessed in the window", uname)

# Moving average over the last nwin windows (about one second).
nwin = dt > 0 ? int(1.0 / dt + 0.5) : 1
nwin = nwin < 1 ? 1 : (nwin > 50 ? 50 : nwin)
array win[nwin]
wsum = 0
wcnt = 0
wpos = 0
mavg(v) = (wpos = wpos % nwin + 1, wsum = wsum - (wcnt >= nwin ? win[wpos] : 0) + v, \
	   win[wpos] = v, wcnt = wcnt + 1, wsum / (wcnt < nwin ? wcnt : nwin))
avgtitle = nwin > 1 ? sprintf("moving average (%.1f s)", nwin * dt) : "WSS"

if (exists("p50")) {
	plot datafile using 1:($2 / unit) with steps lw 1 lc rgb "#9ecae1" title "WSS per window", \
	     datafile using 1:(mavg($2) / unit) with lines lw 2.5 lc rgb "#08519c" title avgtitle, \
	     p50 / unit with lines dt 2 lw 1.5 lc rgb "#2ca02c" title sprintf("p50 %.3g %s", p50 / unit, uname), \
	     p90 / unit with lines dt 2 lw 1.5 lc rgb "#ff7f0e" title sprintf("p90 %.3g %s", p90 / unit, uname), \
	     p99 / unit with lines dt 2 lw 1.5 lc rgb "#d62728" title sprintf("p99 %.3g %s", p99 / unit, uname)
} else {
	plot datafile using 1:($2 / unit) with steps lw 1 lc rgb "#9ecae1" title "WSS per window", \
	     datafile using 1:(mavg($2) / unit) with lines lw 2.5 lc rgb "#08519c" title avgtitle
}
