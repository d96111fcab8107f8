# SPDX-License-Identifier: GPL-2.0-only
# Number of monitored regions over time, and snapshots missed by the recorder.
# Data: `daptrace report regions` -> "time_s nr_regions missed_before".
# Called as `gnuplot -c SCRIPT datafile ticsfile outfile title subtitle vizdir`
# by `daptrace report --plot` (or with gnuplot -e and the variables set).
if (ARGC >= 6) { datafile = ARG1; ticsfile = ARG2; outfile = ARG3; plottitle = ARG4; plotsub = ARG5; vizdir = ARG6 }
load vizdir."/terminal.gp"
set title titled("regions and missed snapshots")
set xlabel "time since start (s)"
set autoscale xfix
set ylabel "regions (all targets)"
set y2label "snapshots missed before this one"
set yrange [0:*]
# no snapshot missed: a 0..1 axis with whole-number tics (and no warning)
stats datafile using 3 nooutput
if (STATS_max > 0) { set y2range [0:*] } else { set y2range [0:1]; set y2tics 0, 1, 1 }
set ytics nomirror
if (STATS_max > 0) set y2tics
set format y2 "%.0f"
set key top left opaque
plot datafile using 1:2 with steps lw 2 lc rgb "#1f77b4" title "regions", \
     datafile using 1:3 axes x1y2 with impulses lw 2 lc rgb "#d62728" title "missed"
