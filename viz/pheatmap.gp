# SPDX-License-Identifier: GPL-2.0-only
# Physical heatmap: x = time, y = physical address, colour = access frequency
# of the region whose sampled page was found there; grey: no page sampled;
# hatched green: only memory that cannot be observed.
# Data: `daptrace report pheatmap` -> "time_s phys_bin frequency_percent
# [not_observable]"; ticsfile: the time range, the physical address tics,
# has_unobs and cell_w (a column's width in seconds).
# Called as `gnuplot -c SCRIPT datafile ticsfile outfile title subtitle vizdir`
# by `daptrace report --plot` (or with gnuplot -e and the variables set).
if (ARGC >= 6) { datafile = ARG1; ticsfile = ARG2; outfile = ARG3; plottitle = ARG4; plotsub = ARG5; vizdir = ARG6 }
load vizdir."/terminal.gp"
set title titled("physical page heatmap")
set xlabel "time since start (s)"
set ylabel "physical address"
set cblabel "access frequency: % of the window's samples that found the region accessed"
set cbrange [0:100]
set cbtics 0, 20, 100 format "%g %%"
set palette defined (0 "#000004", 10 "#3b0f70", 30 "#8c2981", 55 "#de4968", \
		     80 "#fe9f6d", 100 "#fcfdbf")
set tics out
grey = "#b0b0b0"
unobs_colour = "#1b9e77"
has_unobs = 0
cell_w = 0
# cells where no sampled page was found are NaN, not drawn: grey
set object 1 rectangle from graph 0, graph 0 to graph 1, graph 1 behind \
	fillcolor rgb grey fillstyle solid noborder
if (strlen(ticsfile) > 0) load ticsfile
set bmargin 5.5
# room right of the colour box for its tics and title
set rmargin 17
set colorbox user origin graph 1.025, graph 0 size graph 0.035, graph 1
set object rectangle from screen 0.06, screen 0.012 to screen 0.078, screen 0.036 \
	fillcolor rgb grey fillstyle solid noborder
set label "no sampled page found there" at screen 0.084, screen 0.024 left
if (has_unobs) {
	set object rectangle from screen 0.3, screen 0.012 to screen 0.318, screen 0.036 \
		fillcolor rgb unobs_colour fillstyle pattern 2 border lc rgb unobs_colour
	set label "not observable (hugetlb, PFNMAP/IO, KVM)" at screen 0.324, screen 0.024 left
	plot datafile using 1:2:3 with image notitle, \
	     datafile using 1:($4 > 0 ? $2 : NaN):(cell_w / 2):(0.5) with boxxyerror \
		fillcolor rgb unobs_colour fillstyle pattern 2 lc rgb unobs_colour notitle
} else {
	plot datafile using 1:2:3 with image notitle
}
