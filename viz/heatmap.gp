# SPDX-License-Identifier: GPL-2.0-only
# Access heatmap: x = time, y = address with the big unmapped gaps elided
# (the dashed lines mark them), colour = access frequency.
# Data: `daptrace report heatmap` -> "time_s address_bin frequency_percent".
load vizdir."/terminal.gp"
set title plottitle." - data access heatmap"
set xlabel "time since start (s)"
set ylabel "virtual address (blocks stacked, unmapped gaps elided)" offset -2,0
set cblabel "access frequency (% of samples in the window that saw an access)"
set cbrange [0:100]
set palette defined (0 "#000004", 10 "#3b0f70", 30 "#8c2981", 55 "#de4968", \
		     80 "#fe9f6d", 100 "#fcfdbf")
set lmargin 30
set tics out
set grid noxtics noytics
if (strlen(ticsfile) > 0) load ticsfile
plot datafile using 1:2:3 with image notitle
