// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Monitoring attributes: defaults, the kernel's validation rules, and the
 * order of writes.  The kernel validates each write against the current
 * values of the other attributes, so going from one valid set to another
 * may need a particular order, or even an intermediate value (e.g. sample
 * 100 µs/aggr 100 µs to sample 1 s/aggr 100 s breaks aggr/sample <= 100000
 * whichever goes first).  daptrace_attrs_plan() finds such a path.
 */
#include <errno.h>
#include <string.h>

#include "internal.h"

#define US_PER_S		1000000ULL
#define SAMPLE_MIN_US		100ULL
#define SAMPLE_MAX_US		(10 * US_PER_S)
#define AGGR_MAX_US		(100 * US_PER_S)
#define UPDATE_MAX_US		(3600 * US_PER_S)
#define AGGR_PER_SAMPLE_MAX	100000ULL
#define MIN_NR_REGIONS_MIN	3ULL
#define MAX_NR_REGIONS_MAX	20000ULL
#define GOAL_AGGRS_MAX		1000ULL

static const char *const attr_files[DAPTRACE_ATTR_NR_NUMERIC] = {
	[DAPTRACE_ATTR_SAMPLE]		= "sample_us",
	[DAPTRACE_ATTR_AGGR]		= "aggr_us",
	[DAPTRACE_ATTR_UPDATE]		= "update_us",
	[DAPTRACE_ATTR_MIN_REGIONS]	= "min_nr_regions",
	[DAPTRACE_ATTR_MAX_REGIONS]	= "max_nr_regions",
};

static const char *const tlb_names[DAPTRACE_TLB_NR] = {
	[DAPTRACE_TLB_NONE]	= "none",
	[DAPTRACE_TLB_ROUND]	= "round",
	[DAPTRACE_TLB_MM]	= "mm",
};

const char *daptrace_attr_file(enum daptrace_attr_id id)
{
	return (unsigned int)id < DAPTRACE_ATTR_NR_NUMERIC ? attr_files[id] : "?";
}

const char *daptrace_tlb_flush_name(enum daptrace_tlb_flush t)
{
	return (unsigned int)t < DAPTRACE_TLB_NR ? tlb_names[t] : "?";
}

int daptrace_tlb_flush_parse(const char *s, enum daptrace_tlb_flush *t)
{
	size_t len = strcspn(s, "\n");

	for (int i = 0; i < DAPTRACE_TLB_NR; i++) {
		if (strlen(tlb_names[i]) == len && !strncmp(s, tlb_names[i], len)) {
			*t = i;
			return 0;
		}
	}
	return -EINVAL;
}

void daptrace_attrs_default(struct daptrace_attrs *a)
{
	a->sample_us = 5000;
	a->aggr_us = 100000;
	a->update_us = 1000000;
	a->min_nr_regions = 10;
	a->max_nr_regions = 1000;
	a->tlb_flush = DAPTRACE_TLB_MM;
}

static uint64_t *attr_ptr(struct daptrace_attrs *a, enum daptrace_attr_id id)
{
	switch (id) {
	case DAPTRACE_ATTR_SAMPLE:	return &a->sample_us;
	case DAPTRACE_ATTR_AGGR:	return &a->aggr_us;
	case DAPTRACE_ATTR_UPDATE:	return &a->update_us;
	case DAPTRACE_ATTR_MIN_REGIONS:	return &a->min_nr_regions;
	default:			return &a->max_nr_regions;
	}
}

static uint64_t min_u64(uint64_t a, uint64_t b) { return a < b ? a : b; }
static uint64_t max_u64(uint64_t a, uint64_t b) { return a > b ? a : b; }

/* The values attribute @id may take given the current values of the others. */
static void attr_range(const struct daptrace_attrs *a, enum daptrace_attr_id id,
		       uint64_t *lo, uint64_t *hi)
{
	switch (id) {
	case DAPTRACE_ATTR_SAMPLE:
		*lo = max_u64(SAMPLE_MIN_US, (a->aggr_us + AGGR_PER_SAMPLE_MAX - 1) /
						AGGR_PER_SAMPLE_MAX);
		*hi = min_u64(SAMPLE_MAX_US, a->aggr_us);
		break;
	case DAPTRACE_ATTR_AGGR:
		*lo = a->sample_us;
		*hi = min_u64(min_u64(AGGR_MAX_US, a->update_us),
			      a->sample_us > UINT64_MAX / AGGR_PER_SAMPLE_MAX ?
			      UINT64_MAX : a->sample_us * AGGR_PER_SAMPLE_MAX);
		break;
	case DAPTRACE_ATTR_UPDATE:
		*lo = a->aggr_us;
		*hi = UPDATE_MAX_US;
		break;
	case DAPTRACE_ATTR_MIN_REGIONS:
		*lo = MIN_NR_REGIONS_MIN;
		*hi = a->max_nr_regions;
		break;
	default:
		*lo = a->min_nr_regions;
		*hi = MAX_NR_REGIONS_MAX;
		break;
	}
}

int daptrace_attrs_validate(const struct daptrace_attrs *a, const char **why)
{
	const char *w = NULL;

	if (a->sample_us < SAMPLE_MIN_US)
		w = "sample interval must be >= 100 us";
	else if (a->sample_us > SAMPLE_MAX_US)
		w = "sample interval must be <= 10 s";
	else if (a->aggr_us < a->sample_us)
		w = "aggregation interval must be >= sample interval";
	else if (a->aggr_us > AGGR_MAX_US)
		w = "aggregation interval must be <= 100 s";
	else if (a->aggr_us / a->sample_us > AGGR_PER_SAMPLE_MAX ||
		 (a->aggr_us / a->sample_us == AGGR_PER_SAMPLE_MAX &&
		  a->aggr_us % a->sample_us))
		w = "aggregation interval must be <= 100000 sample intervals";
	else if (a->update_us < a->aggr_us)
		w = "update interval must be >= aggregation interval";
	else if (a->update_us > UPDATE_MAX_US)
		w = "update interval must be <= 1 h";
	else if (a->min_nr_regions < MIN_NR_REGIONS_MIN)
		w = "min regions must be >= 3";
	else if (a->max_nr_regions < a->min_nr_regions)
		w = "max regions must be >= min regions";
	else if (a->max_nr_regions > MAX_NR_REGIONS_MAX)
		w = "max regions must be <= 20000";
	else if ((unsigned int)a->tlb_flush >= DAPTRACE_TLB_NR)
		w = "unknown tlb_flush policy";
	if (why)
		*why = w;
	return w ? -EINVAL : 0;
}

static int step(struct daptrace_attrs *cur, enum daptrace_attr_id id,
		uint64_t v, struct daptrace_attr_step *steps, int n, int max)
{
	if (n >= max)
		return -ENOSPC;
	steps[n].attr = id;
	steps[n].value = v;
	*attr_ptr(cur, id) = v;
	return n + 1;
}

int daptrace_attrs_plan(const struct daptrace_attrs *cur_in,
			const struct daptrace_attrs *want_in,
			struct daptrace_attr_step *steps, int max)
{
	/* widening intervals: outermost first; narrowing: innermost first */
	static const enum daptrace_attr_id grow[] = {
		DAPTRACE_ATTR_UPDATE, DAPTRACE_ATTR_AGGR, DAPTRACE_ATTR_SAMPLE,
		DAPTRACE_ATTR_MAX_REGIONS, DAPTRACE_ATTR_MIN_REGIONS,
	};
	static const enum daptrace_attr_id shrink[] = {
		DAPTRACE_ATTR_SAMPLE, DAPTRACE_ATTR_AGGR, DAPTRACE_ATTR_UPDATE,
		DAPTRACE_ATTR_MIN_REGIONS, DAPTRACE_ATTR_MAX_REGIONS,
	};
	struct daptrace_attrs cur = *cur_in, want = *want_in;
	const enum daptrace_attr_id *order;
	int n = 0, round;

	if (daptrace_attrs_validate(&want, NULL))
		return -EINVAL;
	order = want.aggr_us >= cur.aggr_us ? grow : shrink;

	for (round = 0; round < 4 * DAPTRACE_ATTR_NR_NUMERIC; round++) {
		int progress = 0, done = 1;

		/* first choice: a final value that is valid right now */
		for (int i = 0; i < DAPTRACE_ATTR_NR_NUMERIC; i++) {
			enum daptrace_attr_id id = order[i];
			uint64_t lo, hi, w = *attr_ptr(&want, id);

			if (*attr_ptr(&cur, id) == w)
				continue;
			done = 0;
			attr_range(&cur, id, &lo, &hi);
			if (w >= lo && w <= hi) {
				n = step(&cur, id, w, steps, n, max);
				if (n < 0)
					return n;
				progress = 1;
				break;
			}
		}
		if (done)
			return n;
		if (progress)
			continue;
		/* else move one attribute as close to its goal as allowed */
		for (int i = 0; i < DAPTRACE_ATTR_NR_NUMERIC; i++) {
			enum daptrace_attr_id id = order[i];
			uint64_t lo, hi, w = *attr_ptr(&want, id);
			uint64_t c = *attr_ptr(&cur, id), v;

			if (c == w)
				continue;
			attr_range(&cur, id, &lo, &hi);
			if (lo > hi)
				continue;
			v = w < lo ? lo : w > hi ? hi : w;
			if (v == c)
				continue;
			n = step(&cur, id, v, steps, n, max);
			if (n < 0)
				return n;
			progress = 1;
			break;
		}
		if (!progress)
			return -EINVAL;
	}
	return -EINVAL;
}

int daptrace_get_attrs(struct daptrace *d, struct daptrace_attrs *a)
{
	char buf[32];
	int err;

	for (int i = 0; i < DAPTRACE_ATTR_NR_NUMERIC; i++) {
		err = dt_read_u64(d, attr_files[i], attr_ptr(a, i));
		if (err)
			return err;
	}
	err = dt_read_str(d, "tlb_flush", buf, sizeof(buf));
	if (err < 0)
		return err;
	if (daptrace_tlb_flush_parse(buf, &a->tlb_flush)) {
		buf[strcspn(buf, "\n")] = '\0';
		return dt_fail(EINVAL, "%s/tlb_flush: unknown policy '%s'",
			       d->root, buf);
	}
	return 0;
}

int daptrace_set_attrs(struct daptrace *d, const struct daptrace_attrs *a)
{
	struct daptrace_attr_step steps[4 * DAPTRACE_ATTR_NR_NUMERIC];
	struct daptrace_attrs cur;
	const char *why;
	int n, err;

	if (daptrace_attrs_validate(a, &why))
		return dt_fail(EINVAL, "invalid attributes (%s)", why);
	err = daptrace_get_attrs(d, &cur);
	if (err)
		return err;
	n = daptrace_attrs_plan(&cur, a, steps, (int)(sizeof(steps) / sizeof(steps[0])));
	if (n < 0)
		return dt_fail(EINVAL, "no valid order of attribute writes found");
	for (int i = 0; i < n; i++) {
		err = dt_write_u64(d, attr_files[steps[i].attr], steps[i].value);
		if (err)
			return err;
	}
	if (cur.tlb_flush != a->tlb_flush)
		return dt_write_str(d, "tlb_flush", tlb_names[a->tlb_flush]);
	return 0;
}

void daptrace_intervals_goal_default(struct daptrace_intervals_goal *g)
{
	g->access_bp = 400;
	g->aggrs = 3;
	g->min_sample_us = 5000;
	g->max_sample_us = SAMPLE_MAX_US;
}

int daptrace_intervals_goal_validate(const struct daptrace_intervals_goal *g,
				     const char **why)
{
	const char *w = NULL;

	if (!g->access_bp || g->access_bp > 10000)
		w = "access share must be > 0 and <= 100 %";
	else if (g->aggrs > GOAL_AGGRS_MAX)
		w = "goal windows must be <= 1000";
	else if (g->min_sample_us < SAMPLE_MIN_US)
		w = "minimum sample interval must be >= 100 us";
	else if (g->max_sample_us > SAMPLE_MAX_US)
		w = "maximum sample interval must be <= 10 s";
	else if (g->min_sample_us > g->max_sample_us)
		w = "minimum sample interval must be <= the maximum";
	if (why)
		*why = w;
	return w ? -EINVAL : 0;
}

static const char *const goal_files[] = {
	"intervals_goal_access_bp", "intervals_goal_aggrs",
	"intervals_goal_min_sample_us", "intervals_goal_max_sample_us",
};

static uint64_t *goal_ptr(struct daptrace_intervals_goal *g, int i)
{
	uint64_t *f[] = { &g->access_bp, &g->aggrs, &g->min_sample_us,
			  &g->max_sample_us };

	return f[i];
}

int daptrace_get_intervals_goal(struct daptrace *d,
				struct daptrace_intervals_goal *g)
{
	for (int i = 0; i < 4; i++) {
		int err = dt_read_u64(d, goal_files[i], goal_ptr(g, i));

		if (err)
			return err;
	}
	return 0;
}

/*
 * The kernel checks each write against the others: off first, then the
 * bounds by way of the widest ones, then the share, then on.
 */
int daptrace_set_intervals_goal(struct daptrace *d,
				const struct daptrace_intervals_goal *g)
{
	const char *why;
	int err;

	if (daptrace_intervals_goal_validate(g, &why))
		return dt_fail(EINVAL, "invalid intervals goal (%s)", why);
	err = dt_write_u64(d, goal_files[1], 0);
	err = err ?: dt_write_u64(d, goal_files[2], SAMPLE_MIN_US);
	err = err ?: dt_write_u64(d, goal_files[3], g->max_sample_us);
	err = err ?: dt_write_u64(d, goal_files[2], g->min_sample_us);
	err = err ?: dt_write_u64(d, goal_files[0], g->access_bp);
	if (err || !g->aggrs)
		return err;
	return dt_write_u64(d, goal_files[1], g->aggrs);
}
