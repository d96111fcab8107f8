# SPDX-License-Identifier: GPL-2.0-only
# Bytes of hot, warm and cold memory per NUMA node over time.
# Data: `daptrace report nodes` -> "time_s node0_hot node0_warm node0_cold
# node1_hot ..."; ticsfile sets nnodes.
load vizdir."/terminal.gp"
set title titled("memory per NUMA node")
set xlabel "time since start (s)"
set autoscale xfix
set yrange [0:*]
set key top left opaque box
set offsets 0, 0, graph 0.2, 0
nnodes = 1
if (strlen(ticsfile) > 0) load ticsfile
unit = 1024**2
set ylabel "MiB (estimated from the sampled pages' nodes)"
array cls[3] = ["hot", "warm", "cold"]
array dts[3] = [1, 2, 3]
plot for [n=0:nnodes-1] for [c=1:3] datafile \
	using 1:(column(2 + 3 * n + c - 1) / unit) with lines lw 2 dt dts[c] lc n + 1 \
	title sprintf("node %d %s", n, cls[c])
