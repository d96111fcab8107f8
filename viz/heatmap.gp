# SPDX-License-Identifier: GPL-2.0-only
# Access heatmap: x = time, y = address with the big unmapped gaps elided,
# colour = access frequency.
# Data: `daptrace report heatmap` -> "time_s address_bin frequency_percent";
# ticsfile: the address tics (each block's start, offsets within it), the
# blocks' names, a white band with its size for each elided gap, hatched
# rectangles where memory cannot be observed, and lmargin_chars, the room
# the labels need.
# Called as `gnuplot -c SCRIPT datafile ticsfile outfile title subtitle vizdir`
# by `daptrace report --plot` (or with gnuplot -e and the variables set).
if (ARGC >= 6) { datafile = ARG1; ticsfile = ARG2; outfile = ARG3; plottitle = ARG4; plotsub = ARG5; vizdir = ARG6 }
load vizdir."/terminal.gp"
set title titled("data access heatmap")
set xlabel "time since start (s)"
set cblabel "access frequency: % of the window's samples that found the region accessed"
set cbrange [0:100]
set cbtics 0, 20, 100 format "%g %%"
set palette defined (0 "#000004", 10 "#3b0f70", 30 "#8c2981", 55 "#de4968", \
		     80 "#fe9f6d", 100 "#fcfdbf")
set tics out
set grid noxtics noytics
unobs_colour = "#1b9e77"
grey = "#b0b0b0"
lmargin_chars = 30
has_unobs = 0
has_nodes = 0
# NaN rows (unmapped holes, columns without data) are not drawn: grey (the
# first object, before the ticsfile's take the next numbers)
set object 1 rectangle from graph 0, graph 0 to graph 1, graph 1 behind \
	fillcolor rgb grey fillstyle solid noborder
if (strlen(ticsfile) > 0) load ticsfile
set lmargin lmargin_chars
set bmargin 5.5
# room right of the colour box for its tics and title
set rmargin 17
set colorbox user origin graph 1.025, graph 0 size graph 0.035, graph 1
# the axis title at the left edge, clear of the labels
set label "virtual address (unmapped gaps elided)" at screen 0.012, graph 0.5 center \
	rotate by 90
# a legend of what the colour bar does not explain, under the x axis title
kx = 0.06
set object rectangle from screen kx, screen 0.012 to screen kx + 0.018, screen 0.036 \
	fillcolor rgb grey fillstyle solid noborder
set label "unmapped or no data" at screen kx + 0.024, screen 0.024 left
kx = kx + 0.2
if (has_unobs) {
	set object rectangle from screen kx, screen 0.012 to screen kx + 0.018, screen 0.036 \
		fillcolor rgb unobs_colour fillstyle pattern 2 border lc rgb unobs_colour
	set label "not observable (hugetlb, PFNMAP/IO, KVM)" at screen kx + 0.024, \
		screen 0.024 left
	kx = kx + 0.32
}
if (has_nodes) {
	set label "Nn:p%: p% of the resident pages on NUMA node n" at screen kx, screen 0.024 left
}
plot datafile using 1:2:3 with image notitle
