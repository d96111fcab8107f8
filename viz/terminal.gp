# SPDX-License-Identifier: GPL-2.0-only
# Shared by the daptrace plots: pick the terminal from outfile's extension
# (.svg -> svg, else PNG via pngcairo when gnuplot has it, plain png if not).
# Variables set by `daptrace report --plot` (or by hand with gnuplot -e):
#   datafile, ticsfile (may be ''), outfile, plottitle, plotsub (a subtitle,
#   may be ''), vizdir
if (!exists("outfile")) outfile = "daptrace.png"
if (!exists("plottitle")) plottitle = datafile
if (!exists("plotsub")) plotsub = ""
if (!exists("ticsfile")) ticsfile = ""
# "<plottitle> - <what>", the subtitle on a second line
titled(what) = plottitle." - ".what.(strlen(plotsub) > 0 ? "\n".plotsub : "")
if (strlen(outfile) > 4 && outfile[strlen(outfile)-2:] eq "svg") {
	set terminal svg size 1200,700 dynamic font "sans,11" background rgb "white"
} else {
	if (strstrt(GPVAL_TERMINALS, "pngcairo") > 0) {
		set terminal pngcairo size 1200,700 font "sans,10" background rgb "white"
	} else {
		set terminal png size 1200,700 background rgb "white"
	}
}
set output outfile
# labels are file paths: '_' must not turn into a subscript
set termoption noenhanced
set grid front lc rgb "#999999" lw 0.5
