/* SPDX-License-Identifier: GPL-2.0-only */
/* daptrace report: shared options and the modes. */
#ifndef DAPTRACE_REPORT_H
#define DAPTRACE_REPORT_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "common/recfile.h"
#include "common/savings_model.h"

/* One window's end, for ages in seconds (report_age_ns()). */
struct report_window {
	uint64_t seq, end_ns;
	uint32_t aggr_us;
};

/*
 * The record being read: a pipe or stdin is spooled once for many passes.
 * Each report_read() also notes what it saw before the filters, so that an
 * empty report can say why (report_nothing()).
 */
struct report_input {
	FILE *spool;			/* NULL: reopen the path for each pass */
	int spooled;
	int warned;			/* of an incomplete record, once */
	int warned_assumed;		/* of an assumed sampling interval, once */
	uint64_t nr_read, nr_kept;	/* snapshots, and those --since/--until kept */
	uint64_t first_ns, last_ns;	/* the span of the snapshots read */
	uint64_t regions_read, regions_kept;	/* in kept snapshots; --addr/--label */
	struct report_window *win;	/* every window read so far, by seq */
	size_t nr_win, win_cap;
};

/* report access: the ranges a region must fall in (damo's access pattern) */
struct access_pattern {
	uint64_t size_min, size_max;	/* bytes */
	double freq_min, freq_max;	/* % of the window's samples */
	uint64_t age_min_ns, age_max_ns;
};

enum access_sort { SORT_ADDRESS, SORT_SIZE, SORT_FREQ, SORT_AGE, SORT_TEMPERATURE,
		   NR_SORT_KEYS };

struct report_opts {
	const char *mode;
	const char *input;
	const char *output;		/* data file, NULL: stdout */
	const char *plot;		/* picture to render, NULL: none */
	int partial;
	pid_t pid;			/* 0: all targets (heatmap: the first) */
	unsigned int time_bins;
	unsigned int addr_bins;
	unsigned int max_blocks;	/* heatmap: address blocks after gap elision */
	uint64_t threshold;		/* wss: nr_accesses >= threshold counts */
	unsigned int top;		/* hot */
	double at_s;			/* hot: snapshot time, < 0: last */
	int by_label;			/* hot */
	int json;			/* --json: one JSON document on stdout */
	int terminal;			/* heatmap --terminal: 0 off, 1 colour, 2 ASCII */
	unsigned int term_width;	/* columns of the terminal */
	unsigned int term_rows;		/* its lines, 0: --addr-bins says */
	int term_fit_cols;		/* no --time-bins: fill the width */
	double since_s, until_s;	/* snapshots ending in [since, until] */
	uint64_t addr_lo, addr_hi;	/* regions overlapping [lo, hi) */
	const char *label;		/* regions whose label contains this */
	struct report_input *in;
	unsigned int hot_pct;		/* nodes: hot if frequency >= this % */
	struct access_pattern pattern;	/* access */
	enum access_sort sort[NR_SORT_KEYS];
	int sort_desc[NR_SORT_KEYS];
	int nr_sort;
	double temp_w[3];		/* access: temperature weights of size, freq, age */
	int by;				/* wss, hot, access: enum report_by, 0: none */
	unsigned int skip;		/* wss, regions: first snapshots left out */
	int pct_damo;			/* wss, regions: damo's percentile (floor index) */
	unsigned int fp_metrics;	/* footprints: bit 0 vsz, bit 1 rss */
	int fp_by_time;			/* footprints: in time order, not by size */
	int fp_all;			/* footprints: every window's value */
	int raw_number;			/* footprints: sizes in bytes */
	uint64_t adjust_aggr_us;	/* adjust: the merged windows' length */
	uint64_t thresholds_ns[SAV_MAX_THRESHOLDS];	/* savings: ascending */
	unsigned int nr_thresholds;	/* savings: 0: the defaults */
	int sav_type;			/* savings --type: enum pol_filter_type, 0: any */
	double sav_speed;		/* savings --speed: 0: not given (1) */
#define SAV_MIN_SPEED	0.01
#define SAV_MAX_SPEED	100
};

/*
 * Each mode writes gnuplot-ready data to @out; with @tics it also writes
 * gnuplot commands (axis tics, gap markers) for the plot script.  Return an
 * exit code.
 */
int report_heatmap(const struct report_opts *o, FILE *out, FILE *tics);
int report_wss(const struct report_opts *o, FILE *out, FILE *tics);
int report_regions(const struct report_opts *o, FILE *out, FILE *tics);
int report_hot(const struct report_opts *o, FILE *out, FILE *tics);
int report_raw(const struct report_opts *o, FILE *out, FILE *tics);
int report_hist(const struct report_opts *o, FILE *out, FILE *tics);
/* report hot's table for one snapshot (daptrace top); @info names the targets. */
int report_hot_snapshot(const struct report_opts *o, const struct rec_snapshot *s,
			const struct rec_info *info, FILE *out);
int report_objects(const struct report_opts *o, FILE *out, FILE *tics);
int report_nodes(const struct report_opts *o, FILE *out, FILE *tics);
int report_pheatmap(const struct report_opts *o, FILE *out, FILE *tics);
int report_access(const struct report_opts *o, FILE *out, FILE *tics);
int report_damo(const struct report_opts *o, FILE *out, FILE *tics);
int report_footprints(const struct report_opts *o, FILE *out, FILE *tics);
int report_adjust(const struct report_opts *o, FILE *out, FILE *tics);
int report_savings(const struct report_opts *o, FILE *out, FILE *tics);
int report_regret(const struct report_opts *o, FILE *out, FILE *tics);
/* report damo of @record into @out (record --damo). */
int report_damo_write(const char *record, const char *out);

/*
 * Make *@p hold at least @need items of @size bytes, doubling *@cap (from
 * 64); 0, or -1 with *@p as it was when out of memory.
 */
int report_grow(void **p, size_t *cap, size_t need, size_t size);
/* Close the spool, free what the reads noted. */
void report_input_free(struct report_input *in);
/* Read @o->input, calling @cb per snapshot; prints the error and returns 1. */
int report_read(const struct report_opts *o, rec_snapshot_cb cb, void *arg,
		struct rec_info *info);
struct mapped_now;
/*
 * report_read() with the targets' maps in force (report_mapped.h) in
 * @maps, brought up to each snapshot read, those --since/--until leave
 * out too: a map read before --since still holds after it.
 */
int report_read_mapped(const struct report_opts *o, rec_snapshot_cb cb, void *arg,
		       struct rec_info *info, struct mapped_now *maps);
/*
 * Access frequency of a region in percent of its own window's samples
 * (nr_samples, else the window's aggr_us / sample_us): right across a
 * change of the sampling interval.  Of the observed ones: the region's
 * unobserved checks are left out of the count (0 if all were).
 */
double report_freq(const struct rec_snapshot *s, const struct rec_region *r);
/*
 * A region's age in ns: the span of the @age windows up to @s, from the
 * windows read so far (the kernel counts age in windows, and their length
 * may change while recording); windows before the record or missed are
 * taken at the nearest known window's aggregation interval.
 */
uint64_t report_age_ns(const struct report_opts *o, const struct rec_snapshot *s,
		       uint32_t age);
/*
 * An error for a report with nothing to show, saying why: no snapshots in
 * the record, none in --since/--until (with the record's span), no region
 * matching --addr/--label, none of --pid.  Returns EXIT_FAIL.
 */
int report_nothing(const struct report_opts *o, const char *what);

/*
 * plot.c: whether byte @c may go into a string of the gnuplot code in a tics
 * file.  Labels come from the record (the target's mappings, object names):
 * a backquote there would run a shell command in double quotes, a quote or
 * a backslash would end or escape the string.
 */
int plot_unsafe(int c);
/* plot.c: whether gnuplot can write @name: it ends in .png or .svg. */
int plot_name_ok(const char *name);
/* plot.c: run viz/<script>.gp on @data (+ @tics) producing @out. */
int plot_run(const struct report_opts *o, const char *script, const char *data,
	     const char *tics, const char *out);

#endif
