# SPDX-License-Identifier: GPL-2.0-only
# The savings curve: for each idle-time threshold T, the memory a policy
# reclaiming what is idle for at least T would save (mean over the windows)
# against the refaults per second the record says it would cause.  Points
# run from the shortest threshold (most saved, most refaults) to the
# longest; the knee is ringed and named.
# Data: `daptrace report savings` -> "threshold_s saved_mean_bytes
# refault_pages_per_s knee"; ticsfile sets knee_s and page_size.
# A point is named by its threshold unless it would sit on the name of the
# one before it (several thresholds often give the same point: nothing
# saved, no refaults).
# Called as `gnuplot -c SCRIPT datafile ticsfile outfile title subtitle vizdir`
# by `daptrace report --plot` (or with gnuplot -e and the variables set).
if (ARGC >= 6) { datafile = ARG1; ticsfile = ARG2; outfile = ARG3; plottitle = ARG4; plotsub = ARG5; vizdir = ARG6 }
load vizdir."/terminal.gp"
page_size = 4096
if (strlen(ticsfile) > 0) load ticsfile
set title titled("memory saved against refaults, per idle-time threshold")
set xlabel sprintf("expected refaults per second (pages of %d bytes)", page_size)

stats datafile using 2 nooutput
ymax = STATS_max
stats datafile using 3 nooutput
xmax = STATS_max
unit = ymax >= 2 * 1024.0**3 ? 1024.0**3 : (ymax >= 2 * 1024.0**2 ? 1024.0**2 : 1024.0)
uname = unit == 1024.0**3 ? "GiB" : (unit == 1024.0**2 ? "MiB" : "KiB")
set ylabel sprintf("memory saved, mean over the windows (%s)", uname)
# room around the points for their names
if (xmax > 0) { set xrange [-0.08 * xmax:1.15 * xmax] } else { set xrange [-0.1:1] }
if (ymax > 0) { set yrange [0:1.2 * ymax / unit] } else { set yrange [0:1] }
xspan = xmax > 0 ? 1.23 * xmax : 1.1
yspan = ymax > 0 ? 1.2 * ymax / unit : 1

# name a point only if it is clear of the last one named (in graph fractions)
lastx = -1e30
lasty = -1e30
clear(x, y) = (abs(x - lastx) / xspan > 0.07 || abs(y - lasty) / yspan > 0.05) ? \
	(lastx = x, lasty = y, 1) : 0
name(t) = t >= 60 && int(t) % 60 == 0 ? sprintf("%d m", int(t) / 60) : sprintf("%g s", t)

set key top right opaque box
p_knee = !exists("knee_s") ? "" : \
	", datafile using ($4 > 0 ? $3 : NaN):($2 / unit) with points pt 6 ps 3.5 lw 2 lc rgb '#d62728' title sprintf('knee: %s', name(knee_s))"
plot datafile using 3:($2 / unit) with linespoints pt 7 ps 1.2 lw 2 lc rgb "#1f77b4" \
	title "one point per threshold", \
     datafile using 3:($2 / unit):(clear($3, $2 / unit) ? name($1) : "") with labels \
	offset char 1.2, char 0.9 left tc rgb "#333333" notitle \
     @p_knee
