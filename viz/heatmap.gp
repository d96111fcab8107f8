# SPDX-License-Identifier: GPL-2.0-only
# Access heatmap: x = time, y = address with the big unmapped gaps elided
# (the dashed lines mark them), colour = access frequency.
# Data: `daptrace report heatmap` -> "time_s address_bin frequency_percent";
# ticsfile labels each block of addresses with its start (hex) and mapping
# and the rows within it with offsets from that start.
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
plot datafile using 1:2:3 with image notitle
