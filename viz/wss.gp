# SPDX-License-Identifier: GPL-2.0-only
# Working set size over time with its p50/p90/p99 as reference lines, and,
# when the record has them, the targets' footprints (RSS, VSZ) and the
# memory that cannot be observed (never in the working set).
# Data: `daptrace report wss` -> "time_s wss_bytes not_observable_bytes
# rss_bytes vsz_bytes" (NaN: no footprint); ticsfile sets p50..p99, has_fp
# and has_unobs.
# The y axis is in KiB, MiB or GiB, whichever suits the largest value; a
# moving average over about one second smooths the per-window noise.  A VSZ
# far above the rest goes on its own axis, on the right.
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
has_fp = 0
has_unobs = 0
if (strlen(ticsfile) > 0) load ticsfile

stats datafile using 1 nooutput
npts = STATS_records
dt = npts > 1 ? (STATS_max - STATS_min) / (npts - 1) : 1
stats datafile using 2 nooutput
ymax = STATS_max
vmax = 0
if (has_fp) {
	stats datafile using 4 nooutput
	ymax = STATS_max > ymax ? STATS_max : ymax
	stats datafile using 5 nooutput
	vmax = STATS_max
}
if (has_unobs) {
	stats datafile using 3 nooutput
	ymax = STATS_max > ymax ? STATS_max : ymax
}
# VSZ on the right if it would squash the rest
vsz_y2 = has_fp && vmax > 4 * ymax
if (has_fp && !vsz_y2) { ymax = vmax > ymax ? vmax : ymax }
if (ymax <= 0) set yrange [0:1]
# floating point: p50 / unit must not be an integer division (2.6 MiB, not 2)
unit = ymax >= 2 * 1024.0**3 ? 1024.0**3 : (ymax >= 2 * 1024.0**2 ? 1024.0**2 : 1024.0)
uname = unit == 1024.0**3 ? "GiB" : (unit == 1024.0**2 ? "MiB" : "KiB")
set ylabel sprintf("%s (%s)", has_fp ? "bytes" : "working set size", uname)
v2unit = vmax >= 2 * 1024.0**3 ? 1024.0**3 : (vmax >= 2 * 1024.0**2 ? 1024.0**2 : 1024.0)
v2name = v2unit == 1024.0**3 ? "GiB" : (v2unit == 1024.0**2 ? "MiB" : "KiB")
if (vsz_y2) {
	set ytics nomirror
	set y2tics
	set y2range [0:vmax / v2unit * 1.3]
	set y2label sprintf("VSZ (%s)", v2name)
}

# Moving average over the last nwin windows (about one second).
nwin = dt > 0 ? int(1.0 / dt + 0.5) : 1
nwin = nwin < 1 ? 1 : (nwin > 50 ? 50 : nwin)
array win[nwin]
wsum = 0
wcnt = 0
wpos = 0
mavg(v) = (wpos = wpos % nwin + 1, wsum = wsum - (wcnt >= nwin ? win[wpos] : 0) + v, \
	   win[wpos] = v, wcnt = wcnt + 1, wsum / (wcnt < nwin ? wcnt : nwin))
avgtitle = nwin > 1 ? sprintf("WSS, moving average (%.1f s)", nwin * dt) : "WSS"

# the optional curves, as plot clauses
p_lines = !exists("p50") ? "" : \
	", p50 / unit with lines dt 2 lw 1.5 lc rgb '#2ca02c' title sprintf('WSS p50 %.3g %s', p50 / unit, uname)" . \
	", p90 / unit with lines dt 2 lw 1.5 lc rgb '#ff7f0e' title sprintf('WSS p90 %.3g %s', p90 / unit, uname)" . \
	", p99 / unit with lines dt 2 lw 1.5 lc rgb '#d62728' title sprintf('WSS p99 %.3g %s', p99 / unit, uname)"
p_fp = !has_fp ? "" : \
	", datafile using 1:($4 / unit) with lines lw 2 lc rgb '#6a3d9a' title 'RSS'" . \
	(vsz_y2 ? ", datafile using 1:($5 / v2unit) axes x1y2 with lines lw 1.5 dt 4 lc rgb '#555555' title 'VSZ (right axis)'" : \
		  ", datafile using 1:($5 / unit) with lines lw 1.5 dt 4 lc rgb '#555555' title 'VSZ'")
p_unobs = !has_unobs ? "" : \
	", datafile using 1:($3 / unit) with lines lw 1.5 lc rgb '#1b9e77' title 'not observable (never in the WSS)'"
plot datafile using 1:($2 / unit) with steps lw 1 lc rgb "#9ecae1" title "WSS per window", \
     datafile using 1:(mavg($2) / unit) with lines lw 2.5 lc rgb "#08519c" title avgtitle \
     @p_lines @p_fp @p_unobs
