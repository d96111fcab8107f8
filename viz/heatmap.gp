# SPDX-License-Identifier: GPL-2.0-only
# Access heatmap: x = time, y = address with the big unmapped gaps elided
# (the dashed lines mark them), colour = access frequency.
# Data: `daptrace report heatmap` -> "time_s address_bin frequency_percent";
# ticsfile labels each block of addresses with its start (hex) and mapping
# and the rows within it with offsets from that start.
# Called as `gnuplot -c SCRIPT datafile ticsfile outfile title subtitle vizdir`
# by `daptrace report --plot` (or with gnuplot -e and the variables set).
if (ARGC >= 6) { datafile = ARG1; ticsfile = ARG2; outfile = ARG3; plottitle = ARG4; plotsub = ARG5; vizdir = ARG6 }
load vizdir."/terminal.gp"
set title titled("data access heatmap")
set xlabel "time since start (s)"
set ylabel "virtual address (unmapped gaps elided)" offset -2,0
set cblabel "access frequency: % of the window's samples that found the region accessed"
set cbrange [0:100]
set cbtics 0, 20, 100 format "%g %%"
set palette defined (0 "#000004", 10 "#3b0f70", 30 "#8c2981", 55 "#de4968", \
		     80 "#fe9f6d", 100 "#fcfdbf")
set lmargin 30
set tics out
set grid noxtics noytics
# the "N gap elided" labels: white on a black box, readable over hot rows
set style textbox opaque fillcolor rgb "black" noborder margins 1, 1
if (strlen(ticsfile) > 0) load ticsfile
# NaN rows (unmapped holes, columns without data) are not drawn: grey
set object 1 rectangle from graph 0, graph 0 to graph 1, graph 1 behind \
	fillcolor rgb "#b0b0b0" fillstyle solid noborder
plot datafile using 1:2:3 with image notitle
