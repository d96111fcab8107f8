# SPDX-License-Identifier: GPL-2.0-only
# Physical heatmap: x = time, y = physical address, colour = access frequency
# of the region whose sampled page was found there (blank: no sample).
# Data: `daptrace report pheatmap` -> "time_s phys_bin frequency_percent";
# ticsfile labels the physical address range.
load vizdir."/terminal.gp"
set title titled("physical page heatmap")
set xlabel "time since start (s)"
set ylabel "physical address" offset -2,0
set cblabel "access frequency: % of the window's samples that found the region accessed"
set cbrange [0:100]
set cbtics 0, 20, 100 format "%g %%"
set palette defined (0 "#000004", 10 "#3b0f70", 30 "#8c2981", 55 "#de4968", \
		     80 "#fe9f6d", 100 "#fcfdbf")
set lmargin 20
set tics out
if (strlen(ticsfile) > 0) load ticsfile
plot datafile using 1:2:3 with image notitle
