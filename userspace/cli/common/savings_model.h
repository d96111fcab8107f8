/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The savings curve: what a policy "reclaim everything idle for at least
 * T" would save over a run of windows, and what it would cost, for each
 * idle-time threshold T.  One model, fed window by window: by `daptrace
 * report savings` from a record, by `daptrace stat --savings` from the
 * monitor as it runs.
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
 * (a process; one that exec'ed starts a new one), not per region.  A
 * reclaimed range that a later window shows unmapped (in no region of its
 * process, or in an [unmapped] hole) or whose process left was never
 * reused; one still reclaimed at the end has an unknown future: reported
 * apart, never as "never reused".  So, for each threshold, reclaimed =
 * refaulted + never reused + unknown + what is held reclaimed now.
 *
 * Only resident bytes are reclaimed: a region's resident share is the
 * share of its sampling rounds that found the page present (the placement
 * counts), taken when its bytes are reclaimed and kept with them, so what
 * refaults is at most what was taken; memory mapped but never touched
 * saves nothing.  Windows without placement count every byte and say how
 * many.  Memory saved is what is held reclaimed at the end of each window,
 * averaged over the windows in which the group had regions, and in its
 * last such window.
 * Memory that cannot be observed, and idle memory of unknown age, is never
 * idle enough; memory the replayed scheme could not act on is never
 * reclaimed: the kernel's special mappings ([vvar], [vdso], [vsyscall]:
 * the policy engine skips them) and, with a type, the other type
 * (pol_label_actionable(), the engine's own test).  How much was left out
 * so is said apart, and none of it counts as observed.
 *
 * Windows the monitor missed (a snapshot's missed_before) may hold
 * accesses: see after_gap() in savings_model.c.
 */
#ifndef DAPTRACE_SAVINGS_MODEL_H
#define DAPTRACE_SAVINGS_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "recfile.h"

/* The knee: the largest saving whose refaults/s stay within this % of the most. */
#define SAV_KNEE_PCT		10
#define SAV_MAX_THRESHOLDS	32

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
	double reclaimed;		/* bytes: refaulted + never_reused + unknown + held */
	double refaulted;
	double never_reused;		/* later unmapped, or its process left */
	double unknown;			/* still reclaimed at the end */
	struct sav_reuse reuse;
};

/* The whole run, or one group of spaces (a --by group, a cgroup). */
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
	uint64_t nr_procs;		/* the caller's count */
	char *key;			/* group name ("all" for the whole) */
	struct sav_point *pt;		/* [nr_thresholds] */
	int knee;			/* index into pt, -1: none */
};

/* The seconds for the rates: from the group's first window's start to its last one's end. */
static inline double sav_seconds(const struct sav_stats *st)
{
	return st->last_ns > st->first_ns ? (double)(st->last_ns - st->first_ns) / 1e9 : 0;
}

static inline double sav_saved_mean(const struct sav_stats *st, unsigned int k)
{
	return st->windows ? st->pt[k].saved_sum / (double)st->windows : 0;
}

/* What @p holds reclaimed now: reclaimed, not back, not freed, not settled unknown. */
static inline double sav_held(const struct sav_point *p)
{
	double v = p->reclaimed - p->refaulted - p->never_reused - p->unknown;

	return v > 0 ? v : 0;
}

/* Refaulted bytes per second of the group's windows (0 if none). */
static inline double sav_refault_rate(const struct sav_stats *st, unsigned int k)
{
	double s = sav_seconds(st);

	return s > 0 ? st->pt[k].refaulted / s : 0;
}

/* The time-to-reuse at percentile @p (0..100) in ns; < 0 if nothing refaulted. */
double sav_reuse_pct(const struct sav_reuse *r, double p);

/*
 * "1s,2s,5s,1m" into @t_ns (ascending, distinct, above 0, at most
 * SAV_MAX_THRESHOLDS); 0, or -EINVAL with @t_ns and @nr unchanged.
 * SAV_THRESHOLDS_EXPECTED says what is wanted.
 */
int sav_parse_thresholds(const char *val, uint64_t *t_ns, unsigned int *nr);
#define SAV_THRESHOLDS_EXPECTED "expected up to 32 different idle times above 0, comma " \
	"separated, each with a unit, us, ms, s or m (e.g. 1s,2s,5s,10s,30s,1m)"

/* The model; a space: one process's address space in it. */
struct sav_model;
struct sav_space;

/*
 * A model of thresholds @t_ns[0..nr_t) (ascending) for a scheme of @type
 * (enum pol_filter_type: 0 any, or anon or file only, by label); NULL
 * when out of memory.
 */
struct sav_model *sav_model_new(const uint64_t *t_ns, unsigned int nr_t, int type);
void sav_model_free(struct sav_model *m);
unsigned int sav_model_nr_t(const struct sav_model *m);
const uint64_t *sav_model_t_ns(const struct sav_model *m);
/* The whole: every space counts in it. */
struct sav_stats *sav_model_all(struct sav_model *m);

/* A group's stats, the caller's to keep and free; NULL when out of memory. */
struct sav_stats *sav_group_new(const struct sav_model *m, const char *key);
void sav_group_free(const struct sav_model *m, struct sav_stats *st);

/* A new space, counting in @group too (NULL: the whole only); NULL: out of memory. */
struct sav_space *sav_space_new(struct sav_model *m, struct sav_stats *group);
/*
 * Space @sp is over and freed: its process left or exec'ed (@freed: what it
 * holds reclaimed was never reused), or the run ended (its future is
 * unknown).
 */
void sav_space_end(struct sav_model *m, struct sav_space *sp, int freed);

/*
 * The space of region @r of a window (*@sp NULL: not one to count);
 * 0, or < 0 to fail the window.
 */
typedef int (*sav_space_fn)(void *ctx, const struct rec_region *r, struct sav_space **sp);
/* How long ago, in ns, the level of a region @age windows old in @s last changed. */
typedef uint64_t (*sav_age_fn)(void *ctx, const struct rec_snapshot *s, uint32_t age);
/*
 * The map in force of region @r's process at its window (the address
 * ranges its mappings cover, ascending and apart: a record's #maps rows):
 * 1 and the ranges in *@ranges, *@nr, or 0 if not known.
 */
typedef int (*sav_map_fn)(void *ctx, const struct rec_region *r,
			  const struct rec_range **ranges, uint32_t *nr);

/* What the model asks its caller about a window's regions, with @ctx. */
struct sav_feed {
	sav_space_fn space_of;
	sav_age_fn age_ns;
	sav_map_fn map_of;		/* NULL: no maps (labels say where holes are) */
	uint64_t page_size;		/* the target's base page, bytes (0: 4096) */
	void *ctx;
};

/*
 * The touched shares checked against the accuracy probes (savings_model.c,
 * calibrate()), pooled over the windows that had probes so far: what an
 * access takes back to stay is the touched share times @scale; what
 * refaults, the touched share as sampled.
 */
struct sav_calib {
	double probed;			/* probe pages whose region read accessed (tp + fp) */
	double precision;		/* of them, the share accessed in their window (tp) */
	double upper;			/* the 95 % interval's upper end of @precision */
	double touched;			/* the model's touched share of the same windows' accessed bytes */
	double huge;			/* their share in huge pages, by the samples (nr_huge) */
	double scale;			/* now: <= 1 (1: as sampled) */
};

/* Its calibration as of the last window (probed 0: no probes yet). */
const struct sav_calib *sav_model_calib(const struct sav_model *m);

/* Window @s through the model; 0, -ENOMEM, or the space callback's error. */
int sav_model_window(struct sav_model *m, const struct rec_snapshot *s,
		     const struct sav_feed *f);
/*
 * @st's knee: the largest average saving among the thresholds whose
 * refaults/s stay within SAV_KNEE_PCT % of the most any causes.
 */
void sav_model_knee(const struct sav_model *m, struct sav_stats *st);

#endif
