/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * report savings: what a policy "reclaim everything idle for at least T"
 * would have saved over a record, and what it would have cost, for each
 * idle-time threshold T.  report_savings.c replays the record (the model
 * below), report_savings_out.c prints it as text, JSON or plot data.
 *
 * The replayed policy.  A byte is reclaimed in the first window in which
 * it lies in an observable region with no access and a known age and its
 * idle time is >= T.  Idle time is by address, as the policy engine's
 * idle= counts it: from the end of the last window in which a region
 * covering the byte had an access (else from the start of its space's
 * first window) to the end of this one.  Not age + window: a region's age
 * keeps growing while its count moves by less than the merge threshold,
 * so memory read in one window of ten would look idle for ever.  It
 * stays reclaimed until the first later window in which it lies in a
 * region with nr_accesses > 0: a refault, after the time between the two
 * windows' ends (to the windows' precision).  Regions split and merge from
 * window to window, so this is kept per byte range of each address space
 * (a target of the record: a process that exec'ed starts a new one), not
 * per region.  A reclaimed range that the record later shows unmapped (in
 * no region of its process, or in an [unmapped] hole) or whose process
 * left was never reused; one still reclaimed when the record ends has an
 * unknown future: reported apart, never as "never reused".  So, for each
 * threshold, reclaimed = refaulted + never reused + unknown.
 *
 * Only resident bytes are reclaimed: a region's resident share is the
 * share of its sampling rounds that found the page present (the placement
 * columns), taken when its bytes are reclaimed and kept with them, so
 * what refaults is at most what was taken; memory mapped but never
 * touched saves nothing.  A record without placement counts every byte
 * and says how many.  Memory saved is what is held reclaimed at the end
 * of each window, averaged over the windows in which the group had
 * regions, and in its last such window.
 * Memory that cannot be observed, and idle memory of unknown age, is never
 * idle enough; memory the replayed scheme could not act on is never
 * reclaimed: the kernel's special mappings ([vvar], [vdso], [vsyscall]:
 * the policy engine skips them) and, with --type, the other type
 * (pol_label_actionable(), the engine's own test).  How much was left out
 * so is said apart, and none of it counts as observed.
 */
#ifndef DAPTRACE_REPORT_SAVINGS_H
#define DAPTRACE_REPORT_SAVINGS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "report.h"
#include "common/report_group.h"

/* The knee: the largest saving whose refaults/s stay within this % of the most. */
#define SAV_KNEE_PCT	10

/*
 * Time-to-reuse, bytes-weighted, in log buckets 1/32 of an octave wide: a
 * percentile is its bucket's mean, exact when the bucket holds one value
 * (regular windows), else within 3 %.  Sparse: few buckets are used.
 */
struct sav_bucket {
	uint32_t idx;
	double bytes;
	double ns_bytes;		/* sum of reuse ns x bytes */
};

struct sav_reuse {
	struct sav_bucket *b;		/* sorted by idx */
	size_t n, cap;
	double bytes;
};

/* One threshold of one group. */
struct sav_point {
	double saved_sum;		/* bytes held reclaimed, summed over the windows */
	double saved_now;		/* at the end of this window */
	double saved_last;		/* in the group's last window */
	double reclaimed;		/* bytes: refaulted + never_reused + unknown */
	double refaulted;
	double never_reused;		/* later unmapped, or its process left */
	double unknown;			/* still reclaimed at the end of the record */
	struct sav_reuse reuse;
};

/* The whole record, or one group of --by. */
struct sav_stats {
	uint64_t windows;		/* windows with regions of the group */
	uint64_t first_ns, last_ns;	/* start of the first of them, end of the last */
	double observed_sum, observed_now;	/* observable mapped bytes */
	double unobs_sum, unobs_now;		/* not observable: left out */
	double age_unknown_sum, age_unknown_now; /* idle, of unknown age: left out */
	double unreachable_sum, unreachable_now; /* out of the scheme's reach: left out */
	double resident_sum, resident_now;	/* of the observed, resident */
	double res_unknown_sum, res_unknown_now; /* observed, residency not recorded */
	int touched;			/* has regions in this window */
	uint64_t nr_procs;
	const char *key;		/* group name ("all" for the record) */
	struct sav_point *pt;		/* [nr_thresholds] */
	int knee;			/* index into pt, -1: none */
};

/* The replayed record, for report_savings_out.c. */
struct sav_result {
	const struct report_opts *o;
	const uint64_t *t_ns;		/* thresholds, ascending */
	unsigned int nr_t;
	uint64_t page_size;
	struct sav_stats all;
	struct sav_stats **groups;	/* --by, most saved first */
	size_t nr_groups;
};

/* The record's seconds for the rates: from its first window's start to its last one's end. */
static inline double sav_seconds(const struct sav_stats *st)
{
	return st->last_ns > st->first_ns ? (double)(st->last_ns - st->first_ns) / 1e9 : 0;
}

static inline double sav_saved_mean(const struct sav_stats *st, unsigned int k)
{
	return st->windows ? st->pt[k].saved_sum / (double)st->windows : 0;
}

/* Refaulted bytes per second of the group's part of the record (0 if none). */
static inline double sav_refault_rate(const struct sav_stats *st, unsigned int k)
{
	double s = sav_seconds(st);

	return s > 0 ? st->pt[k].refaulted / s : 0;
}

/* The time-to-reuse at percentile @p (0..100) in ns; < 0 if nothing refaulted. */
double sav_reuse_pct(const struct sav_reuse *r, double p);
/* Output, report_savings_out.c: text, JSON, or plot data with @tics. */
void sav_print_text(const struct sav_result *res, FILE *out);
void sav_print_json(const struct sav_result *res, FILE *out);
void sav_print_plot(const struct sav_result *res, FILE *out, FILE *tics);

#endif
