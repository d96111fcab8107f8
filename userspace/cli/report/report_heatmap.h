/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * report heatmap: the grid (report_heatmap.c) and its renderings: gnuplot
 * data and tics, JSON (report_heatmap_out.c), the terminal
 * (report_heatmap_term.c).
 */
#ifndef DAPTRACE_REPORT_HEATMAP_H
#define DAPTRACE_REPORT_HEATMAP_H

#include <stdint.h>
#include <stdio.h>

#include "common/accuracy.h"
#include "report.h"

/* Pass 1's map: the finest verdict so far on each address range. */
struct piece {
	uint64_t start, end;
	unsigned int size_log;		/* log2 of the covering region's size */
	int unmapped;
};

struct ival {
	uint64_t start, end;
};

/*
 * A block of mapped addresses; blocks are stacked on the y axis, bottom up,
 * with a band of gap_rows rows between two (the elided gap).
 */
struct block {
	uint64_t start, end;
	uint64_t width;			/* bytes per row */
	unsigned int bin0, nbins;
	char *label;
	uint64_t label_score;		/* size of the region it came from */
	char *label_any;		/* fallback: a mapping inside the block */
	uint64_t label_any_start;
	double node_bytes[REC_NODES];	/* resident bytes x windows per node */
};

struct heatmap {
	const struct report_opts *o;
	pid_t pid;
	struct piece *pc;		/* pass 1: the map, sorted, disjoint */
	size_t npc;
	struct piece *tmp;
	size_t tmp_cap;
	struct ival *iv;		/* mapped ranges, sorted, disjoint */
	size_t niv;
	uint64_t tmin, tmax, nsnap;
	int has_unobs;			/* some region cannot be observed */
	struct acc_total acc;		/* the accuracy probes of the record */
	/* pass 2 */
	struct block *b;
	unsigned int nb, tbins, abins;
	unsigned int gap_rows;		/* rows of the band between two blocks */
	double *grid;			/* [column][row]: frequency x time */
	double *unobs;			/* [column][row]: not observable x time */
	double *cnt;			/* per column: snapshot time in it, in windows */
	double *row, *urow;		/* one snapshot's rows */
	char *mapped;			/* per row: overlaps mapped memory */
	int all_mapped;			/* no labels: everything counts as mapped */
};

/* A cell is drawn as not observable if at least this share of it is. */
#define HEATMAP_UNOBS_SHARE	0.5

/* Access frequency % of a cell, NaN if unmapped, no data or not observable. */
double heatmap_cell(const struct heatmap *h, unsigned int t, unsigned int a);
/* The share (0..1) of a cell that cannot be observed. */
double heatmap_unobs(const struct heatmap *h, unsigned int t, unsigned int a);
const char *heatmap_block_label(const struct block *b);
/* The node holding most of a block's resident bytes, -1 if unknown; @pct its share. */
int heatmap_block_node(const struct block *b, double *pct);
/*
 * A label as gnuplot and a terminal may print it: a path by its basename,
 * nothing plot_unsafe(), at most @max characters ("..." cut), "" if the
 * label holds bytes outside printable ASCII.
 */
void heatmap_short_label(char *buf, size_t len, const char *label, size_t max);

/* report_heatmap_out.c */
void heatmap_write_data(const struct heatmap *h, FILE *out, FILE *tics);
void heatmap_write_json(const struct heatmap *h, FILE *out);
/* report_heatmap_term.c: rows and columns the terminal picture can have */
void heatmap_term_fit(const struct heatmap *h, unsigned int *rows, unsigned int *cols);
void heatmap_write_terminal(const struct heatmap *h, FILE *out);

#endif
