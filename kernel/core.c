// SPDX-License-Identifier: GPL-2.0
/*
 * daptrace core: the region model, aggregation, adaptive merge/split, attribute
 * validation and snapshot assembly.
 *
 * The policy follows DAMON's mm/damon/core.c so results are comparable: one
 * sampled page per region per sampling interval, and every aggregation
 * interval regions with similar access counts are merged and every region is
 * split at random points, which lets the region boundaries drift towards the
 * real boundaries of differently accessed memory at a bounded cost.
 *
 * Nothing here touches page tables or sleeps for long; see core.h for why the
 * set of included headers is kept this small.
 */

#include <linux/align.h>
#include <linux/bug.h>
#include <linux/errno.h>
#include <linux/limits.h>
#include <linux/list.h>
#include <linux/math64.h>
#include <linux/minmax.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/types.h>
#include <linux/daptrace.h>

#include "core.h"

static unsigned int daptrace_absdiff(unsigned int a, unsigned int b)
{
	return a > b ? a - b : b - a;
}

/*
 * Uniform value in [0, @ceil).  @ctx->rand takes a 32-bit bound, but a region
 * of a 64-bit address space may hold more than 2^32 pages: compose a wider
 * value from 16-bit draws and reject values past @ceil, which keeps the result
 * exactly uniform (fewer than two rounds are needed on average).
 */
static u64 daptrace_rand_below(struct daptrace_ctx *ctx, u64 ceil)
{
	u64 mask, v;
	unsigned int shift;

	if (ceil <= U32_MAX)
		return ctx->rand(ctx->rand_arg, (u32)ceil);

	mask = ceil - 1;
	mask |= mask >> 1;
	mask |= mask >> 2;
	mask |= mask >> 4;
	mask |= mask >> 8;
	mask |= mask >> 16;
	mask |= mask >> 32;
	do {
		v = 0;
		for (shift = 0; shift < 64 && (mask >> shift); shift += 16)
			v |= (u64)ctx->rand(ctx->rand_arg, 1U << 16) << shift;
		v &= mask;
	} while (v >= ceil);
	return v;
}

/*
 * Size-weighted average of two per-region counters.  A region can be far
 * larger than 2^32 bytes and a counter can reach 2^32 - 1, so the plain
 * products could overflow even u64: scale both weights down until each fits
 * 31 bits.  Each product then stays below 2^63 and their sum below 2^64, and
 * the dropped low bits are negligible against weights that large.
 */
static unsigned int daptrace_weighted_avg(unsigned int a, unsigned long sz_a,
					  unsigned int b, unsigned long sz_b)
{
	u64 wa = sz_a, wb = sz_b;

	while ((wa | wb) >> 31) {
		wa >>= 1;
		wb >>= 1;
	}
	/* Only if both regions were empty, which the core never creates. */
	if (!(wa + wb))
		return a;
	return (unsigned int)div_u64((u64)a * wa + (u64)b * wb, (u32)(wa + wb));
}

/**
 * daptrace_ctx_init() - initialise a context with default attributes.
 * @ctx:		The context.
 * @min_region_sz:	Granularity of region boundaries, a power of two.
 * @rand:		Random source, see &daptrace_ctx.rand.
 * @rand_arg:		Passed to @rand.
 */
void daptrace_ctx_init(struct daptrace_ctx *ctx, unsigned long min_region_sz,
		       u32 (*rand)(void *arg, u32 ceil), void *rand_arg)
{
	daptrace_attrs_default(&ctx->attrs);
	ctx->min_region_sz = min_region_sz;
	ctx->rand = rand;
	ctx->rand_arg = rand_arg;
	ctx->nr_targets = 0;
	INIT_LIST_HEAD(&ctx->targets);
	ctx->last_nr_regions = 0;
	ctx->split_from = 0;
	ctx->age_unit_us = 0;
	ctx->nr_passes = 0;
	memset(&ctx->tuner, 0, sizeof(ctx->tuner));
	memset(&ctx->recall, 0, sizeof(ctx->recall));
	ctx->probes = NULL;
	ctx->nr_probes = 0;
	ctx->probe_slots = 0;
	memset(&ctx->budget, 0, sizeof(ctx->budget));
}

/**
 * daptrace_attrs_default() - fill @attrs with DAMON's default values.
 * @attrs:	The attributes to fill.
 */
void daptrace_attrs_default(struct daptrace_attrs *attrs)
{
	attrs->sample_us = DAPTRACE_DEF_SAMPLE_US;
	attrs->aggr_us = DAPTRACE_DEF_AGGR_US;
	attrs->update_us = DAPTRACE_DEF_UPDATE_US;
	attrs->min_nr_regions = DAPTRACE_DEF_MIN_NR_REGIONS;
	attrs->max_nr_regions = DAPTRACE_DEF_MAX_NR_REGIONS;
	attrs->goal_access_bp = DAPTRACE_DEF_GOAL_ACCESS_BP;
	attrs->goal_aggrs = DAPTRACE_DEF_GOAL_AGGRS;
	attrs->goal_min_sample_us = DAPTRACE_DEF_GOAL_MIN_SAMPLE_US;
	attrs->goal_max_sample_us = DAPTRACE_DEF_GOAL_MAX_SAMPLE_US;
	attrs->recall_goal_bp = DAPTRACE_DEF_RECALL_GOAL_BP;
	attrs->recall_max_cpu_bp = DAPTRACE_DEF_RECALL_MAX_CPU_BP;
}

/**
 * daptrace_attrs_validate() - check a set of attributes.
 * @attrs:	The attributes to check.
 *
 * Every value must be nonzero, the intervals must nest (sample <= aggregation
 * <= update) within the caps of core.h, an aggregation window may hold at most
 * DAPTRACE_MAX_SAMPLES_PER_AGGR samples, and the region bounds must satisfy
 * DAPTRACE_MIN_NR_REGIONS <= min <= max <= DAPTRACE_MAX_NR_REGIONS.  The
 * intervals goal: 1 <= access_bp <= 10000, aggrs <= DAPTRACE_MAX_GOAL_AGGRS,
 * its sampling interval bounds within the caps and in order, and, while it
 * is on (aggrs > 0), around sample_us.  The recall goal: at most 10000 bp,
 * its CPU bound 1..10000 bp.
 *
 * Return: 0 if valid, else -EINVAL.
 */
int daptrace_attrs_validate(const struct daptrace_attrs *attrs)
{
	if (attrs->sample_us < DAPTRACE_MIN_SAMPLE_US ||
	    attrs->sample_us > DAPTRACE_MAX_SAMPLE_US)
		return -EINVAL;
	if (attrs->aggr_us < attrs->sample_us ||
	    attrs->aggr_us > DAPTRACE_MAX_AGGR_US)
		return -EINVAL;
	if (attrs->update_us < attrs->aggr_us ||
	    attrs->update_us > DAPTRACE_MAX_UPDATE_US)
		return -EINVAL;
	if (attrs->aggr_us / attrs->sample_us > DAPTRACE_MAX_SAMPLES_PER_AGGR)
		return -EINVAL;
	if (attrs->min_nr_regions < DAPTRACE_MIN_NR_REGIONS ||
	    attrs->max_nr_regions < attrs->min_nr_regions ||
	    attrs->max_nr_regions > DAPTRACE_MAX_NR_REGIONS)
		return -EINVAL;
	if (!attrs->goal_access_bp || attrs->goal_access_bp > 10000 ||
	    attrs->goal_aggrs > DAPTRACE_MAX_GOAL_AGGRS ||
	    attrs->goal_min_sample_us < DAPTRACE_MIN_SAMPLE_US ||
	    attrs->goal_max_sample_us > DAPTRACE_MAX_SAMPLE_US ||
	    attrs->goal_min_sample_us > attrs->goal_max_sample_us)
		return -EINVAL;
	if (attrs->goal_aggrs &&
	    (attrs->sample_us < attrs->goal_min_sample_us ||
	     attrs->sample_us > attrs->goal_max_sample_us))
		return -EINVAL;
	if (attrs->recall_goal_bp > 10000 || !attrs->recall_max_cpu_bp ||
	    attrs->recall_max_cpu_bp > 10000)
		return -EINVAL;
	return 0;
}

/**
 * daptrace_max_nr_accesses() - the highest nr_accesses a window can reach.
 * @attrs:	The attributes in force.
 *
 * Return: the number of sampling rounds per aggregation window, 0 if
 * @attrs->sample_us is 0.
 */
unsigned int daptrace_max_nr_accesses(const struct daptrace_attrs *attrs)
{
	if (!attrs->sample_us)
		return 0;
	return (unsigned int)min_t(unsigned long,
				   attrs->aggr_us / attrs->sample_us, UINT_MAX);
}

/**
 * daptrace_target_new() - allocate a target without regions.
 * @pid_nr:	The pid as written by the user, for reporting.
 * @priv:	Operations-owned data, see &daptrace_target.priv.
 *
 * Return: the target, or NULL if out of memory.
 */
struct daptrace_target *daptrace_target_new(int pid_nr, void *priv)
{
	struct daptrace_target *t = kzalloc(sizeof(*t), GFP_KERNEL);

	if (!t)
		return NULL;
	t->pid_nr = pid_nr;
	t->priv = priv;
	INIT_LIST_HEAD(&t->regions);
	INIT_LIST_HEAD(&t->list);
	return t;
}

/**
 * daptrace_add_target() - append a target to a context.
 * @ctx:	The context.
 * @t:		The target, not on any context yet.
 */
void daptrace_add_target(struct daptrace_ctx *ctx, struct daptrace_target *t)
{
	list_add_tail(&t->list, &ctx->targets);
	ctx->nr_targets++;
}

/**
 * daptrace_destroy_target() - unlink a target from @ctx and free it.
 * @ctx:	The context holding @t.
 * @t:		The target.
 *
 * The regions are freed too.  @t->priv is not touched: releasing it is the
 * caller's job (the operations' target_put) and must happen before this call.
 */
void daptrace_destroy_target(struct daptrace_ctx *ctx, struct daptrace_target *t)
{
	daptrace_free_target_regions(t);
	list_del(&t->list);
	ctx->nr_targets--;
	kfree(t);
}

/**
 * daptrace_free_target_regions() - free every region of a target.
 * @t:	The target; left with an empty, valid region list.
 */
void daptrace_free_target_regions(struct daptrace_target *t)
{
	struct daptrace_region *r, *next;

	daptrace_for_each_region_safe(r, next, t)
		daptrace_destroy_region(t, r);
}

/**
 * daptrace_region_new() - allocate a region with zeroed statistics.
 * @start:	First byte.
 * @end:	One past the last byte.
 *
 * Return: the region, not on any list, or NULL if out of memory.
 */
struct daptrace_region *daptrace_region_new(unsigned long start, unsigned long end)
{
	struct daptrace_region *r = kmalloc(sizeof(*r), GFP_KERNEL);

	if (!r)
		return NULL;
	r->ar.start = start;
	r->ar.end = end;
	r->sampling_addr = start;
	r->sample_pfn = DAPTRACE_NO_PFN;
	r->sample_nid = -1;
	r->sample_huge = false;
	r->nr_accesses = 0;
	r->last_nr_accesses = 0;
	r->age = 0;
	r->idle = 0;
	r->nr_unobserved = 0;
	r->sample_state = 0;
	INIT_LIST_HEAD(&r->list);
	daptrace_reset_placement(r);
	return r;
}

/**
 * daptrace_add_region() - append a region at the end of a target's list.
 * @t:	The target.
 * @r:	The region; must lie above every region already in @t.
 */
void daptrace_add_region(struct daptrace_target *t, struct daptrace_region *r)
{
	list_add_tail(&r->list, &t->regions);
	t->nr_regions++;
}

/**
 * daptrace_insert_region_after() - insert a region right after another.
 * @t:		The target holding @prev.
 * @prev:	The region @r follows.
 * @r:		The region; must lie between @prev and @prev's successor.
 */
void daptrace_insert_region_after(struct daptrace_target *t,
				  struct daptrace_region *prev,
				  struct daptrace_region *r)
{
	list_add(&r->list, &prev->list);
	t->nr_regions++;
}

/**
 * daptrace_destroy_region() - unlink a region from its target and free it.
 * @t:	The target holding @r.
 * @r:	The region.
 */
void daptrace_destroy_region(struct daptrace_target *t, struct daptrace_region *r)
{
	list_del(&r->list);
	t->nr_regions--;
	kfree(r);
}

/**
 * daptrace_nr_live_targets() - number of targets that have not exited.
 * @ctx:	The context.
 *
 * Return: the count; exited targets hold no regions and get no share.
 */
unsigned int daptrace_nr_live_targets(const struct daptrace_ctx *ctx)
{
	const struct daptrace_target *t;
	unsigned int nr = 0;

	daptrace_for_each_target(t, ctx)
		nr += !t->exited;
	return nr;
}

/*
 * Do @t's regions count against max_nr_regions?  Only if it ran in the
 * window: a quiet target (&daptrace_target.quiet, or merged for being
 * quiet, &daptrace_target.merged_idle) keeps its regions outside the
 * budget, since its checks cost next to nothing (the prepare pass skips
 * it, and an idle target is asked whether it ran only now and then:
 * daptrace_va_sample()), and a budget they fill is a budget no target
 * that runs can be split in.
 */
static bool daptrace_budgeted(const struct daptrace_target *t)
{
	return !t->exited && !t->quiet && !t->merged_idle;
}

/**
 * daptrace_nr_budgeted() - the regions that count against max_nr_regions.
 * @ctx:	The context.
 *
 * Return: the regions of the targets that ran in the window
 * (daptrace_budgeted()).
 */
unsigned int daptrace_nr_budgeted(const struct daptrace_ctx *ctx)
{
	const struct daptrace_target *t;
	unsigned int nr = 0;

	daptrace_for_each_target(t, ctx)
		if (daptrace_budgeted(t))
			nr += t->nr_regions;
	return nr;
}

/**
 * daptrace_nr_regions() - number of regions over all targets.
 * @ctx:	The context.
 *
 * Return: the sum of every target's region count.
 */
unsigned int daptrace_nr_regions(const struct daptrace_ctx *ctx)
{
	const struct daptrace_target *t;
	unsigned int nr = 0;

	daptrace_for_each_target(t, ctx)
		nr += t->nr_regions;
	return nr;
}

/*
 * The largest region @t has at the resolution it would have alone: its own
 * size / min_nr_regions (at least min_region_sz), the merge's size limit
 * with @t the only target (daptrace_aggregate()).
 */
static unsigned long daptrace_own_sz_limit(const struct daptrace_ctx *ctx,
					   const struct daptrace_target *t)
{
	const struct daptrace_region *r;
	unsigned long sz = 0;

	daptrace_for_each_region(r, t)
		sz += daptrace_sz_region(r);
	return max(sz / max(ctx->attrs.min_nr_regions, 1UL), ctx->min_region_sz);
}

/*
 * Are there several targets, and can every one that ran have the
 * resolution it would have alone (daptrace_own_sz_limit()) and still be
 * split?  Merged within its own limit a target keeps min_nr_regions to
 * twice that (neighbours whose sum is over the limit stay apart), and it
 * is split only while all of its pieces fit (daptrace_split_regions()):
 * as many again.  So 4 min_nr_regions each within max_nr_regions; with
 * min_nr_regions each alone, the first targets' splits filled the budget
 * and the others' regions were never cut again (3 targets, min_nr_regions
 * 10, max_nr_regions 40: the hot sets of two never found).  (With one, its
 * own limit is the total's.)
 */
static bool daptrace_own_limits(const struct daptrace_ctx *ctx)
{
	const struct daptrace_target *t;
	unsigned long nr = 0;

	if (daptrace_nr_live_targets(ctx) < 2)
		return false;
	daptrace_for_each_target(t, ctx)
		nr += daptrace_budgeted(t);
	return 4 * nr * max(ctx->attrs.min_nr_regions, 1UL) <= ctx->attrs.max_nr_regions;
}

/**
 * daptrace_total_sz() - bytes covered by the regions of all targets.
 * @ctx:	The context.
 *
 * Return: the sum of every region's size.
 */
unsigned long daptrace_total_sz(const struct daptrace_ctx *ctx)
{
	const struct daptrace_target *t;
	const struct daptrace_region *r;
	unsigned long sz = 0;

	daptrace_for_each_target(t, ctx)
		daptrace_for_each_region(r, t)
			sz += daptrace_sz_region(r);
	return sz;
}

/**
 * daptrace_layout_init() - start the layout of an address space.
 * @l:		The layout, see daptrace_layout_add().
 */
void daptrace_layout_init(struct daptrace_layout *l)
{
	memset(l, 0, sizeof(*l));
}

/**
 * daptrace_layout_add() - add the next mapping to a layout.
 * @l:		The layout.
 * @start:	First byte of the mapping.
 * @end:	One past its last byte.
 *
 * A process's mappings usually form three clusters separated by two huge
 * unmapped gaps, and monitoring the gaps would be pure waste::
 *
 *	<text, data, heap>
 *	<BIG UNMAPPED GAP 1>
 *	<mmap()-ed area: libraries, anonymous mappings>
 *	<BIG UNMAPPED GAP 2>
 *	<stack>
 *
 * Mappings come in address order, one at a time, so that the map is never
 * copied: only its extent and its two largest gaps between consecutive
 * mappings are kept (mappings that touch leave no gap; of equal gaps the
 * lower one is kept).  daptrace_layout_ranges() then cuts them out.  A
 * mapping that is empty or starts below the end of the previous one makes
 * the layout invalid.
 */
void daptrace_layout_add(struct daptrace_layout *l, unsigned long start,
			 unsigned long end)
{
	struct daptrace_addr_range gap;

	if (start >= end || (l->nr_clusters && start < l->end)) {
		l->invalid = true;
		return;
	}
	if (!l->nr_clusters) {
		l->start = start;
		l->nr_clusters = 1;
	} else if (start > l->end) {
		gap.start = l->end;
		gap.end = start;
		/* gap1 stays the biggest, gap2 the second biggest. */
		if (gap.end - gap.start > l->gap1.end - l->gap1.start) {
			l->gap2 = l->gap1;
			l->gap1 = gap;
		} else if (gap.end - gap.start > l->gap2.end - l->gap2.start) {
			l->gap2 = gap;
		}
		l->nr_clusters++;
	}
	l->end = end;
}

/**
 * daptrace_layout_ranges() - the ranges to monitor of a layout.
 * @l:		The layout, built by daptrace_layout_add().
 * @out:	The ranges, sorted by address.
 *
 * The two largest gaps are cut out of the layout's extent, leaving three
 * ranges; smaller holes stay inside them and are cheap because the adaptive
 * regions soon learn they are never accessed.  With fewer than three
 * clusters (fewer than two gaps) the clusters themselves are returned,
 * which is exactly what is mapped.
 *
 * Return: the number of ranges in @out, 0 if nothing was mapped, or -EINVAL
 * if the mappings were not sorted and disjoint.
 */
int daptrace_layout_ranges(const struct daptrace_layout *l,
			   struct daptrace_addr_range out[3])
{
	struct daptrace_addr_range gap1 = l->gap1, gap2 = l->gap2, tmp;

	if (l->invalid)
		return -EINVAL;
	if (!l->nr_clusters)
		return 0;
	if (l->nr_clusters == 1) {
		out[0].start = l->start;
		out[0].end = l->end;
		return 1;
	}
	if (l->nr_clusters == 2) {
		out[0].start = l->start;
		out[0].end = gap1.start;
		out[1].start = gap1.end;
		out[1].end = l->end;
		return 2;
	}
	if (gap1.start > gap2.start) {
		tmp = gap1;
		gap1 = gap2;
		gap2 = tmp;
	}
	out[0].start = l->start;
	out[0].end = gap1.start;
	out[1].start = gap1.end;
	out[1].end = gap2.start;
	out[2].start = gap2.end;
	out[2].end = l->end;
	return 3;
}

/* Free the regions of a detached list, e.g. a pool of preallocated ones. */
static void daptrace_free_region_list(struct list_head *head)
{
	struct daptrace_region *r, *next;

	list_for_each_entry_safe(r, next, head, list) {
		list_del(&r->list);
		kfree(r);
	}
}

/*
 * Allocate @nr regions onto @pool up front, so that a caller that needs
 * several can fail before changing anything.
 */
static int daptrace_fill_pool(struct list_head *pool, unsigned long nr)
{
	struct daptrace_region *r;

	while (nr--) {
		r = daptrace_region_new(0, 0);
		if (!r) {
			daptrace_free_region_list(pool);
			return -ENOMEM;
		}
		list_add_tail(&r->list, pool);
	}
	return 0;
}

static struct daptrace_region *daptrace_pool_take(struct list_head *pool)
{
	struct daptrace_region *r;

	r = list_first_entry(pool, struct daptrace_region, list);
	list_del_init(&r->list);
	return r;
}

static void daptrace_copy_stats(struct daptrace_region *dst,
				const struct daptrace_region *src)
{
	dst->nr_accesses = src->nr_accesses;
	dst->last_nr_accesses = src->last_nr_accesses;
	dst->age = src->age;
	dst->idle = src->idle;
	dst->sample_pfn = src->sample_pfn;
	dst->sample_nid = src->sample_nid;
	dst->sample_huge = src->sample_huge;
	dst->nr_present = src->nr_present;
	dst->nr_huge = src->nr_huge;
	memcpy(dst->node_samples, src->node_samples, sizeof(dst->node_samples));
	dst->last_pfn = src->last_pfn;
	dst->sample_state = src->sample_state;
	dst->nr_unobserved = src->nr_unobserved;
}

/**
 * daptrace_evenly_split_region() - split a region into equal pieces.
 * @ctx:	The context (for the granularity).
 * @t:		The target holding @r.
 * @r:		The region; becomes the first piece.
 * @nr_pieces:	Wanted number of pieces.
 *
 * The pieces are ALIGN_DOWN(size / @nr_pieces, min_region_sz) large and the
 * last one also takes the remainder.  If @r is too small for @nr_pieces pieces
 * of at least min_region_sz, it is cut into as many as fit.  Every piece keeps
 * @r's statistics.
 *
 * Return: 0, -EINVAL if @nr_pieces is 0, or -ENOMEM with @r left unchanged.
 */
int daptrace_evenly_split_region(struct daptrace_ctx *ctx,
				 struct daptrace_target *t,
				 struct daptrace_region *r,
				 unsigned int nr_pieces)
{
	unsigned long unit = ctx->min_region_sz;
	unsigned long sz = daptrace_sz_region(r);
	unsigned long orig_end = r->ar.end, sz_piece, start;
	struct daptrace_region *prev = r, *n;
	LIST_HEAD(pool);
	unsigned int i;
	int err;

	if (!nr_pieces)
		return -EINVAL;
	if (nr_pieces > sz / unit)
		nr_pieces = sz / unit;
	if (nr_pieces <= 1)
		return 0;

	err = daptrace_fill_pool(&pool, nr_pieces - 1);
	if (err)
		return err;

	sz_piece = ALIGN_DOWN(sz / nr_pieces, unit);
	start = r->ar.start + sz_piece;
	for (i = 1; i < nr_pieces; i++, start += sz_piece) {
		n = daptrace_pool_take(&pool);
		n->ar.start = start;
		n->ar.end = i == nr_pieces - 1 ? orig_end : start + sz_piece;
		n->sampling_addr = start;
		daptrace_copy_stats(n, r);
		daptrace_insert_region_after(t, prev, n);
		prev = n;
	}
	r->ar.end = r->ar.start + sz_piece;
	if (r->sampling_addr >= r->ar.end)
		r->sampling_addr = r->ar.start;
	return 0;
}

/*
 * The sorted, non-overlapping input ranges are aligned outwards to the
 * granularity (start down, end up).  Two ranges may then share a granule;
 * the later one is clipped so the results stay disjoint, and a range left
 * empty is skipped.  Returns false for a skipped range.
 */
static bool daptrace_norm_range(const struct daptrace_ctx *ctx,
				const struct daptrace_addr_range *in,
				unsigned long *prev_end,
				struct daptrace_addr_range *out)
{
	out->start = ALIGN_DOWN(in->start, ctx->min_region_sz);
	out->end = ALIGN(in->end, ctx->min_region_sz);
	if (out->start < *prev_end)
		out->start = *prev_end;
	if (out->start >= out->end)
		return false;
	*prev_end = out->end;
	return true;
}

static int daptrace_ranges_check(const struct daptrace_addr_range *ranges,
				 unsigned int nr_ranges)
{
	unsigned int i;

	for (i = 0; i < nr_ranges; i++) {
		if (ranges[i].start >= ranges[i].end)
			return -EINVAL;
		if (i && ranges[i].start < ranges[i - 1].end)
			return -EINVAL;
	}
	return 0;
}

/*
 * How many pieces each range gets so that @want pieces in all keep the
 * largest piece small (see daptrace_init_regions()).  @units[i] receives
 * range i's size in granules, 0 if it vanished in the alignment.
 */
static void daptrace_plan_pieces(const struct daptrace_ctx *ctx,
				 const struct daptrace_addr_range *ranges,
				 unsigned int nr_ranges, unsigned long want,
				 unsigned long *pieces, unsigned long *units)
{
	unsigned long unit = ctx->min_region_sz, prev_end = 0, total = 0;
	unsigned long sum = 0, nr_live = 0, sz_piece, budget, best;
	struct daptrace_addr_range ar;
	unsigned int i, bi;

	for (i = 0; i < nr_ranges; i++) {
		units[i] = 0;
		if (!daptrace_norm_range(ctx, &ranges[i], &prev_end, &ar))
			continue;
		units[i] = (ar.end - ar.start) / unit;
		total += units[i];
		nr_live++;
	}

	/*
	 * Every range needs one region; the rest of the share first goes out
	 * in proportion to size, rounded down so the sum cannot overshoot.
	 */
	budget = want > nr_live ? want - nr_live : 0;
	sz_piece = budget ? total / budget + !!(total % budget) : 0;
	for (i = 0; i < nr_ranges; i++) {
		pieces[i] = 0;
		if (!units[i])
			continue;
		pieces[i] = 1 + (sz_piece ? units[i] / sz_piece : 0);
		pieces[i] = min(pieces[i], units[i]);
		sum += pieces[i];
	}
	/*
	 * Rounding left a few pieces (about one per range) unassigned: hand
	 * them out one by one to the range whose pieces are the largest.
	 */
	while (sum < want) {
		best = 0;
		bi = nr_ranges;
		for (i = 0; i < nr_ranges; i++) {
			if (pieces[i] >= units[i])
				continue;
			if (units[i] / pieces[i] > best) {
				best = units[i] / pieces[i];
				bi = i;
			}
		}
		if (bi == nr_ranges)
			break;
		pieces[bi]++;
		sum++;
	}
}

/*
 * Replace @t's regions by @ranges cut into @pieces each.  Built on a scratch
 * target, so that on -ENOMEM @t is left alone.
 */
static int daptrace_build_pieces(struct daptrace_ctx *ctx,
				 struct daptrace_target *t,
				 const struct daptrace_addr_range *ranges,
				 unsigned int nr_ranges,
				 const unsigned long *pieces)
{
	struct daptrace_addr_range ar;
	struct daptrace_target tmp;
	struct daptrace_region *r;
	unsigned long prev_end = 0;
	unsigned int i;
	int err;

	INIT_LIST_HEAD(&tmp.regions);
	tmp.nr_regions = 0;
	for (i = 0; i < nr_ranges; i++) {
		if (!daptrace_norm_range(ctx, &ranges[i], &prev_end, &ar))
			continue;
		r = daptrace_region_new(ar.start, ar.end);
		if (!r) {
			err = -ENOMEM;
			goto err_free_tmp;
		}
		daptrace_add_region(&tmp, r);
		err = daptrace_evenly_split_region(ctx, &tmp, r, pieces[i]);
		if (err)
			goto err_free_tmp;
	}

	daptrace_free_target_regions(t);
	list_splice_tail(&tmp.regions, &t->regions);
	t->nr_regions = tmp.nr_regions;
	/* New regions are sampled afresh: see &daptrace_target.quiet. */
	t->quiet = false;
	return 0;

err_free_tmp:
	daptrace_free_target_regions(&tmp);
	return err;
}

/**
 * daptrace_init_regions() - build the initial regions of a target.
 * @ctx:	The context; @t is normally on it already.
 * @t:		The target; any regions it has are replaced.
 * @ranges:	Address ranges to monitor, sorted, non-empty, disjoint.
 * @nr_ranges:	Number of entries in @ranges, at least one.
 *
 * min_nr_regions and max_nr_regions bound the count over all targets, so each
 * of the context's live (not exited) targets gets an equal share: at least
 * ceil(min_nr_regions / nr_targets) regions (then all targets together reach
 * min_nr_regions) but never more than max_nr_regions / nr_targets (then
 * together they stay within max_nr_regions).  Every range gets at least one
 * region, which is the only way to exceed that share.  With a single target
 * this starts from min_nr_regions regions like DAMON does.
 *
 * The share is spread so as to keep the largest region small: each range gets
 * one piece plus pieces in proportion to its size, then what rounding left
 * over goes piece by piece to the range whose pieces are currently largest.
 * A range is never cut below min_region_sz, so a tiny address space can end
 * up with fewer regions than the share.
 *
 * Return: 0, -EINVAL on bad @ranges, or -ENOMEM with @t unchanged.
 */
int daptrace_init_regions(struct daptrace_ctx *ctx, struct daptrace_target *t,
			  const struct daptrace_addr_range *ranges,
			  unsigned int nr_ranges)
{
	unsigned long nr_tgts, want, cap, *pieces, *units;
	int err = -ENOMEM;

	if (!nr_ranges || daptrace_ranges_check(ranges, nr_ranges))
		return -EINVAL;

	nr_tgts = max(daptrace_nr_live_targets(ctx), 1U);
	want = (ctx->attrs.min_nr_regions + nr_tgts - 1) / nr_tgts;
	cap = ctx->attrs.max_nr_regions / nr_tgts;
	want = min(want, cap);

	pieces = kmalloc_array(nr_ranges, sizeof(*pieces), GFP_KERNEL);
	units = kmalloc_array(nr_ranges, sizeof(*units), GFP_KERNEL);
	if (pieces && units) {
		daptrace_plan_pieces(ctx, ranges, nr_ranges, want, pieces, units);
		err = daptrace_build_pieces(ctx, t, ranges, nr_ranges, pieces);
	}
	kfree(units);
	kfree(pieces);
	return err;
}

/* The region after @r on @t's list, NULL at the end; @r must be on it. */
static struct daptrace_region *daptrace_next_region(struct daptrace_target *t,
						    struct daptrace_region *r)
{
	if (list_is_last(&r->list, &t->regions))
		return NULL;
	return list_next_entry(r, list);
}

/*
 * Step the walk below to @cur (the old @nxt): remember its range and find
 * its successor while it is still on @t's list.
 */
static struct daptrace_region *
daptrace_walk_advance(struct daptrace_target *t, struct daptrace_region *cur,
		      struct daptrace_region **nxt, struct daptrace_addr_range *cur_ar)
{
	if (cur) {
		*cur_ar = cur->ar;
		*nxt = daptrace_next_region(t, cur);
	}
	return cur;
}

/*
 * How many regions daptrace_refit_regions() will take from its pool: one per
 * hole between two old regions inside a range, one per further range an old
 * region reaches into, and one per range that no old region touches.  It
 * walks the same merge of old regions and normalized ranges, without changing
 * anything, so that every allocation can be done before the first change.
 */
static unsigned long daptrace_count_new_regions(const struct daptrace_ctx *ctx,
						struct daptrace_target *t,
						const struct daptrace_addr_range *ranges,
						unsigned int nr_ranges)
{
	struct daptrace_region *r;
	struct daptrace_addr_range ar;
	unsigned long prev_end = 0, pos, nr_new = 0;
	bool carried = false, touched;
	unsigned int i;

	r = list_first_entry_or_null(&t->regions, struct daptrace_region, list);
	for (i = 0; i < nr_ranges; i++) {
		if (!daptrace_norm_range(ctx, &ranges[i], &prev_end, &ar))
			continue;

		touched = false;
		pos = ar.start;
		while (r && r->ar.start < ar.end) {
			if (r->ar.end > ar.start) {
				if (touched && r->ar.start > pos)
					nr_new++;
				if (carried)
					nr_new++;
				touched = true;
				pos = r->ar.end;
				if (r->ar.end > ar.end) {
					carried = true;
					break;
				}
			}
			carried = false;
			r = daptrace_next_region(t, r);
		}
		if (!touched)
			nr_new++;
	}
	return nr_new;
}

/* A region for the newly mapped [@start, @end), with no history. */
static struct daptrace_region *
daptrace_pool_take_fresh(struct list_head *pool, unsigned long start,
			 unsigned long end)
{
	struct daptrace_region *r = daptrace_pool_take(pool);

	r->ar.start = start;
	r->ar.end = end;
	r->sampling_addr = start;
	r->nr_accesses = 0;
	r->last_nr_accesses = 0;
	r->age = 0;
	r->idle = 0;
	r->nr_unobserved = 0;
	r->sample_state = 0;
	r->sample_pfn = DAPTRACE_NO_PFN;
	r->sample_nid = -1;
	r->sample_huge = false;
	daptrace_reset_placement(r);
	return r;
}

/*
 * The walk of daptrace_set_regions(): old regions and normalized ranges are
 * merged like two sorted lists, and the new regions are built on @result.
 * Each (region, range) intersection becomes one new region: the first one of
 * an old region reuses its struct, further ones (the region spanned a gap that
 * has just opened) are copies from @pool.  Within a range the first piece is
 * stretched down to the range start, the last one up to the range end, and
 * holes between pieces get fresh regions, so the range is covered exactly.  A
 * range no region touches becomes one fresh region.  Old regions touching no
 * range are freed.  @pool holds daptrace_count_new_regions() regions.
 */
static void daptrace_refit_regions(const struct daptrace_ctx *ctx,
				   struct daptrace_target *t,
				   const struct daptrace_addr_range *ranges,
				   unsigned int nr_ranges,
				   struct list_head *pool,
				   struct list_head *result)
{
	struct daptrace_region *cur, *nxt = NULL, *piece, *last;
	struct daptrace_addr_range cur_ar, ar;
	unsigned long prev_end = 0, pos;
	bool carried = false;
	unsigned int i;

	/*
	 * @cur_ar is @cur's range before this walk clipped it, and @nxt is
	 * looked up while @cur is still on @t's list: once @cur has moved to
	 * @result its list pointers lead there.
	 */
	cur = list_first_entry_or_null(&t->regions, struct daptrace_region, list);
	cur = daptrace_walk_advance(t, cur, &nxt, &cur_ar);

	for (i = 0; i < nr_ranges; i++) {
		if (!daptrace_norm_range(ctx, &ranges[i], &prev_end, &ar))
			continue;

		last = NULL;
		pos = ar.start;
		while (cur && cur_ar.start < ar.end) {
			if (cur_ar.end <= ar.start) {
				/* Entirely between two ranges. */
				if (!carried) {
					list_del(&cur->list);
					kfree(cur);
				}
				carried = false;
				cur = daptrace_walk_advance(t, nxt, &nxt, &cur_ar);
				continue;
			}

			if (last && cur_ar.start > pos) {
				/* A hole inside the range: newly mapped. */
				piece = daptrace_pool_take_fresh(pool, pos,
								 cur_ar.start);
				list_add_tail(&piece->list, result);
			}
			if (carried) {
				piece = daptrace_pool_take(pool);
				daptrace_copy_stats(piece, cur);
			} else {
				piece = cur;
				list_del(&cur->list);
			}
			piece->ar.start = last ? cur_ar.start : ar.start;
			piece->ar.end = min(cur_ar.end, ar.end);
			if (piece->sampling_addr < piece->ar.start ||
			    piece->sampling_addr >= piece->ar.end)
				piece->sampling_addr = piece->ar.start;
			list_add_tail(&piece->list, result);
			last = piece;
			pos = piece->ar.end;
			/* Reaches into the next range: keep it for that one. */
			carried = cur_ar.end > ar.end;
			if (carried)
				break;
			cur = daptrace_walk_advance(t, nxt, &nxt, &cur_ar);
		}

		if (!last) {
			piece = daptrace_pool_take_fresh(pool, ar.start, ar.end);
			list_add_tail(&piece->list, result);
		} else {
			last->ar.end = ar.end;
		}
	}

	/* Whatever is left lies above the last range. */
	while (cur) {
		if (!carried) {
			list_del(&cur->list);
			kfree(cur);
		}
		carried = false;
		cur = daptrace_walk_advance(t, nxt, &nxt, &cur_ar);
	}
}

/**
 * daptrace_set_regions() - fit a target's regions to new address ranges.
 * @ctx:	The context (for the granularity).
 * @t:		The target.
 * @ranges:	The ranges to monitor from now on: sorted, non-empty,
 *		disjoint.  They are aligned outwards to min_region_sz.
 * @nr_ranges:	Number of entries in @ranges; 0 drops every region.
 *
 * Used when the memory map changed, so the access history of memory that is
 * still mapped must survive: regions outside every range are freed, regions
 * intersecting a range are clipped to it and keep their statistics, the first
 * and last region of a range are stretched to its ends, holes inside a range
 * and ranges without any region get new regions.  A region spanning a gap
 * between two ranges is cut at the gap so that no region covers unmapped
 * memory.  Afterwards the regions are sorted, disjoint, aligned and cover
 * exactly the (aligned) ranges.
 *
 * Return: 0, -EINVAL on bad @ranges, or -ENOMEM with @t unchanged (every
 * region that may be needed is allocated before anything is changed).
 */
int daptrace_set_regions(struct daptrace_ctx *ctx, struct daptrace_target *t,
			 const struct daptrace_addr_range *ranges,
			 unsigned int nr_ranges)
{
	struct daptrace_region *r;
	LIST_HEAD(result);
	LIST_HEAD(pool);
	int err;

	err = daptrace_ranges_check(ranges, nr_ranges);
	if (err)
		return err;

	err = daptrace_fill_pool(&pool,
				 daptrace_count_new_regions(ctx, t, ranges, nr_ranges));
	if (err)
		return err;
	daptrace_refit_regions(ctx, t, ranges, nr_ranges, &pool, &result);
	/* The count and the walk must agree; a leftover is only a leak. */
	if (WARN_ON_ONCE(!list_empty(&pool)))
		daptrace_free_region_list(&pool);

	/* The walk consumed or freed every old region. */
	INIT_LIST_HEAD(&t->regions);
	t->nr_regions = 0;
	list_splice_tail(&result, &t->regions);
	daptrace_for_each_region(r, t)
		t->nr_regions++;
	/* New regions are sampled afresh: see &daptrace_target.quiet. */
	t->quiet = false;
	return 0;
}

/**
 * daptrace_regions_fit() - do a target's regions already fit these ranges?
 * @ctx:	The context (for the granularity).
 * @t:		The target.
 * @ranges:	As for daptrace_set_regions().
 * @nr_ranges:	Number of entries in @ranges.
 *
 * A map read again after the target ran is most often the map it had
 * (a process that only computes, or that was stopped since): then
 * daptrace_set_regions() would change no region, yet it makes the target
 * non-quiet and its regions new, to be walked and prepared afresh.
 *
 * Return: true if the regions tile exactly the ranges, aligned as
 * daptrace_set_regions() aligns them, so that it would leave every region
 * as it is; false otherwise, also for ranges it would refuse.
 */
bool daptrace_regions_fit(const struct daptrace_ctx *ctx,
			  const struct daptrace_target *t,
			  const struct daptrace_addr_range *ranges,
			  unsigned int nr_ranges)
{
	const struct list_head *pos = t->regions.next;
	struct daptrace_addr_range ar;
	unsigned long prev_end = 0, at;
	unsigned int i;

	if (daptrace_ranges_check(ranges, nr_ranges))
		return false;
	for (i = 0; i < nr_ranges; i++) {
		if (!daptrace_norm_range(ctx, &ranges[i], &prev_end, &ar))
			continue;
		for (at = ar.start; at < ar.end; pos = pos->next) {
			const struct daptrace_region *r;

			if (pos == &t->regions)
				return false;
			r = list_entry(pos, struct daptrace_region, list);
			if (r->ar.start != at || r->ar.end > ar.end)
				return false;
			at = r->ar.end;
		}
	}
	return pos == &t->regions;
}

/**
 * daptrace_pick_sampling_addr() - choose the page a region is sampled at.
 * @ctx:	The context (random source, granularity).
 * @r:		The region.
 *
 * Draws a granule index rather than a byte offset: it is just as uniform
 * because the region is made of whole granules, and the result is already
 * aligned.
 */
void daptrace_pick_sampling_addr(struct daptrace_ctx *ctx,
				 struct daptrace_region *r)
{
	unsigned long nr_units = daptrace_sz_region(r) / ctx->min_region_sz;

	if (!nr_units) {
		r->sampling_addr = r->ar.start;
		return;
	}
	r->sampling_addr = r->ar.start +
		(unsigned long)daptrace_rand_below(ctx, nr_units) * ctx->min_region_sz;
}

/**
 * daptrace_account_access() - record the result of one access check.
 * @r:		The region.
 * @accessed:	Whether the sampled page was accessed.
 *
 * Saturates at DAPTRACE_MAX_SAMPLES_PER_AGGR, which no valid window reaches,
 * so that a stalled aggregation can never wrap the counter.
 */
void daptrace_account_access(struct daptrace_region *r, bool accessed)
{
	if (accessed && r->nr_accesses < DAPTRACE_MAX_SAMPLES_PER_AGGR)
		r->nr_accesses++;
}

/**
 * daptrace_account_unobserved() - record a check that could not observe.
 * @r:		The region.
 *
 * The sampled page lies where accesses leave no trace the module can read
 * (a secondary MMU's page tables, a PFN or I/O mapping, page tables shared
 * between processes): the check says nothing, so it must not read as "not
 * accessed".  A region all of whose checks were unobserved is reported as
 * not observable rather than cold.
 */
void daptrace_account_unobserved(struct daptrace_region *r)
{
	if (r->nr_unobserved < DAPTRACE_MAX_SAMPLES_PER_AGGR)
		r->nr_unobserved++;
}

/**
 * daptrace_reset_placement() - forget a region's placement counts.
 * @r:		The region.
 *
 * The last sample (@sample_pfn, @sample_nid) stays: an idle target's next
 * window repeats it.
 */
void daptrace_reset_placement(struct daptrace_region *r)
{
	r->nr_present = 0;
	r->nr_huge = 0;
	memset(r->node_samples, 0, sizeof(r->node_samples));
	r->last_pfn = DAPTRACE_NO_PFN;
}

/**
 * daptrace_account_placement() - record where the sampled page lived.
 * @r:		The region; @r->sample_pfn and @r->sample_huge were set by
 *		the check step.
 * @nid:	NUMA node of @r->sample_pfn, or -1 if unknown.
 *
 * Per-node counts of the window's samples give each region's bytes per node
 * as size * node_samples[n] / nr_samples: the same one-page-stands-for-the-
 * region estimate as nr_accesses, exact for a region on one node, unbiased
 * for a mixed one, and it costs a counter per check (the pfn is already in
 * hand from the page walk).  last_pfn gives root a physical address to plot.
 * nr_huge tells what an access count means: a check of a huge page reads
 * one bit for all its base pages, so "accessed" there says that at least
 * one of them was, not that the sampled one was (a reader estimating how
 * many pages an access touched needs to know; the walk knows it anyway).
 */
void daptrace_account_placement(struct daptrace_region *r, int nid)
{
	if (r->sample_pfn == DAPTRACE_NO_PFN ||
	    r->nr_present >= DAPTRACE_MAX_SAMPLES_PER_AGGR)
		return;
	r->nr_present++;
	r->nr_huge += r->sample_huge;
	r->last_pfn = r->sample_pfn;
	if (nid >= 0 && nid < DAPTRACE_NR_NODE_SLOTS)
		r->node_samples[nid]++;
}

/**
 * daptrace_repeat_placement() - count the last sample again, @n times.
 * @t:		A target whose checks were skipped because none of its threads
 *		ran (its pages did not move through its own faults either).
 * @n:		Skipped checks.
 *
 * Keeps node_samples / nr_samples an estimate of the bytes per node when the
 * worker skips an idle target's walks: the page sampled last stands for the
 * skipped samples, as it would have been sampled again.
 */
void daptrace_repeat_placement(struct daptrace_target *t, unsigned int n)
{
	struct daptrace_region *r;
	unsigned int room;

	daptrace_for_each_region(r, t) {
		if (r->sample_pfn == DAPTRACE_NO_PFN)
			continue;
		room = DAPTRACE_MAX_SAMPLES_PER_AGGR - r->nr_present;
		if (n < room)
			room = n;
		r->nr_present += room;
		if (r->sample_huge)
			r->nr_huge += room;
		r->last_pfn = r->sample_pfn;
		if (r->sample_nid >= 0 && r->sample_nid < DAPTRACE_NR_NODE_SLOTS)
			r->node_samples[r->sample_nid] += room;
	}
}

/**
 * daptrace_repeat_idle() - account @n checks skipped because @t did not run.
 * @t:		The target.
 * @n:		Skipped checks.
 *
 * A target that did not run cannot have accessed anything: the skipped
 * checks read "not accessed" (nothing to count) and repeat the last
 * placement (daptrace_repeat_placement()).  Unless none of its checks can
 * be observed (&daptrace_target.unobservable): a secondary MMU may access
 * its memory without any of its threads running, so they are unobserved.
 */
void daptrace_repeat_idle(struct daptrace_target *t, unsigned int n)
{
	if (!t->unobservable)
		daptrace_repeat_placement(t, n);
	else
		daptrace_repeat_unobserved(t, n);
}

/**
 * daptrace_repeat_unobserved() - account @n unobserved checks to all of @t.
 * @t:		The target.
 * @n:		Checks of each region that could not be observed.
 *
 * For checks skipped as a whole (the target's secondary MMU, or an idle
 * target's checks which the operations learn later may have seen accesses):
 * see daptrace_account_unobserved().
 */
void daptrace_repeat_unobserved(struct daptrace_target *t, unsigned int n)
{
	struct daptrace_region *r;
	unsigned int room;

	daptrace_for_each_region(r, t) {
		room = DAPTRACE_MAX_SAMPLES_PER_AGGR - r->nr_unobserved;
		r->nr_unobserved += min(n, room);
	}
}

/**
 * daptrace_update_age() - age every region by one aggregation window.
 * @ctx:	The context.
 * @threshold:	Largest change of nr_accesses still counted as "similar".
 *
 * A region whose access count changed by more than @threshold since the
 * previous window restarts at age 0, any other region gets one window older.
 * &daptrace_region.idle restarts at 0 on any access at all.
 */
void daptrace_update_age(struct daptrace_ctx *ctx, unsigned int threshold)
{
	struct daptrace_target *t;
	struct daptrace_region *r;

	daptrace_for_each_target(t, ctx) {
		if (t->exited)
			continue;
		daptrace_for_each_region(r, t) {
			if (daptrace_absdiff(r->nr_accesses,
					     r->last_nr_accesses) > threshold)
				r->age = 0;
			else if (r->age < UINT_MAX)
				r->age++;
			if (r->nr_accesses)
				r->idle = 0;
			else if (r->idle < UINT_MAX)
				r->idle++;
		}
	}
}

/* @windows of @from_us each, in windows of @to_us: the nearest whole count. */
static unsigned int daptrace_windows_in(unsigned int windows,
					unsigned long from_us, unsigned long to_us)
{
	/* windows < 2^32, from_us <= DAPTRACE_MAX_AGGR_US < 2^27: no overflow */
	u64 n = div64_u64((u64)windows * from_us + to_us / 2, to_us);

	return min_t(u64, n, UINT_MAX);
}

/*
 * A region's age and idle time count aggregation windows, and readers take
 * them in windows of the interval each snapshot says it had (age x aggr_us:
 * record, report, stat's idle-time percentiles).  When the intervals goal
 * changes the aggregation interval, windows already counted were of the
 * old length: convert them, as DAMON does (damon_age_for_new_attrs()), or
 * every idle time after a change is off by the ratio of the two intervals
 * (the intervals goal moves it by up to x1.25 a step, and by x100 in all).
 * Called after daptrace_update_age() has counted the window that just
 * ended, which had the old length.
 */
static void daptrace_rescale_ages(struct daptrace_ctx *ctx)
{
	unsigned long from = ctx->age_unit_us, to = ctx->attrs.aggr_us;
	struct daptrace_target *t;
	struct daptrace_region *r;

	ctx->age_unit_us = to;
	if (!from || from == to || !to)
		return;
	daptrace_for_each_target(t, ctx) {
		daptrace_for_each_region(r, t) {
			r->age = daptrace_windows_in(r->age, from, to);
			r->idle = daptrace_windows_in(r->idle, from, to);
		}
	}
}

/* Merge @r into its left neighbour @l; statistics are size-weighted. */
static void daptrace_merge_two_regions(struct daptrace_target *t,
				       struct daptrace_region *l,
				       struct daptrace_region *r)
{
	unsigned long sz_l = daptrace_sz_region(l), sz_r = daptrace_sz_region(r);

	l->nr_accesses = daptrace_weighted_avg(l->nr_accesses, sz_l,
					       r->nr_accesses, sz_r);
	l->last_nr_accesses = daptrace_weighted_avg(l->last_nr_accesses, sz_l,
						    r->last_nr_accesses, sz_r);
	l->age = daptrace_weighted_avg(l->age, sz_l, r->age, sz_r);
	l->nr_unobserved = daptrace_weighted_avg(l->nr_unobserved, sz_l,
						 r->nr_unobserved, sz_r);
	l->idle = min(l->idle, r->idle);
	l->ar.end = r->ar.end;
	daptrace_destroy_region(t, r);
}

/*
 * Whether two adjacent regions' counts are close enough to merge them.
 *
 * Against a region that saw no access at all, half of @threshold is the
 * limit (DAMON uses @threshold for every pair).  "Never accessed" versus
 * "accessed now and then" is the line a reclaim policy acts on, and a small
 * hot set inside a large cold region shows up as only a few accesses of that
 * region: with 20 samples per window, a 4 MiB hot set in a 40 MiB region
 * reads about 2, which the full threshold merges straight back into its cold
 * neighbours, so the hot set can take seconds to be found (the unit test
 * finds_small_hot_set measures it).  Memory touched at any steady rate
 * almost never reads exactly 0 in a window, so the rule costs next to no
 * extra regions.
 */
static bool daptrace_similar(unsigned int a, unsigned int b,
			     unsigned int threshold)
{
	if (!a || !b)
		threshold = max(1U, threshold / 2);
	return daptrace_absdiff(a, b) <= threshold;
}

/* The node most of @r's present samples of this window were on, -1: none. */
static int daptrace_main_node(const struct daptrace_region *r)
{
	int nid, best = -1;

	for (nid = 0; nid < DAPTRACE_NR_NODE_SLOTS; nid++)
		if (r->node_samples[nid] &&
		    (best < 0 || r->node_samples[nid] > r->node_samples[best]))
			best = nid;
	return best;
}

/*
 * Neighbours whose sampled pages lived mostly on different NUMA nodes stay
 * apart, so that regions become homogeneous in placement as in access: the
 * bytes per node of a region on one node are exact, while a region that
 * straddles two nodes only gives an estimate from its samples, whose spread
 * is several percent of its size even over many windows.  Random splits cut
 * straddling regions, and this keeps the pieces apart.  Without placement
 * (nothing present, or one node) it never refuses.
 */
static bool daptrace_same_node(const struct daptrace_region *l,
			       const struct daptrace_region *r)
{
	int a = daptrace_main_node(l), b = daptrace_main_node(r);

	return a < 0 || b < 0 || a == b;
}

/*
 * Neighbours last accessed at clearly different times stay apart: their
 * idle times may differ by an eighth of the younger one's, or two windows.
 * Memory accessed less than once a window (a set read once a second) shows
 * up in a window or two and reads 0 in between, where the count alone lets
 * it merge straight back into its never-accessed neighbours, and each time
 * it is seen again the region it lies in reaches a random distance into
 * them.  A policy acting on idle time then keeps that memory as recently
 * used (the unit test warm_set_does_not_hold_cold_neighbour measures it).
 * Kept apart, the cold cut-offs of such a region age on, and each sighting
 * cuts the region closer to the memory really accessed.  Pieces of one
 * region have the same idle time, so this never refuses within one history.
 * An eighth, not a half as it was: memory idle for 12.8 s and
 * memory idle for 20.8 s merged, their ages averaged (merges weigh ages by
 * size), split and merged again window after window, until four areas of
 * one process idle for 13 to 37 s all read 24 s (`daptrace stat`'s
 * idle-time percentiles; bench/follow.sh, aging); idle times are what a
 * policy and the percentiles read, to a tenth.
 */
static bool daptrace_same_history(unsigned int a, unsigned int b)
{
	unsigned int young = min(a, b), old = max(a, b);

	return old - young <= max(young / 8, 2U);
}

/*
 * Memory the module could observe and memory it could not stay apart: a
 * merge would average an unknown into a count, and a region half of which
 * is a PFN mapping would read half as cold as it is.
 */
static bool daptrace_same_observability(const struct daptrace_region *l,
					const struct daptrace_region *r)
{
	return !l->nr_unobserved == !r->nr_unobserved;
}

/*
 * One left-to-right pass over a target.  A merged region keeps absorbing its
 * right neighbours while the conditions hold, as in DAMON; with @keep_apart,
 * only neighbours on the same node (daptrace_same_node()), of the same
 * access history (daptrace_same_history()) and equally observable
 * (daptrace_same_observability()).
 */
static void daptrace_merge_regions_of(struct daptrace_target *t,
				      unsigned int threshold,
				      unsigned long sz_limit, bool keep_apart)
{
	struct daptrace_region *r, *next, *prev = NULL;
	unsigned int oldest = 0;

	daptrace_for_each_region_safe(r, next, t) {
		/*
		 * Against both ends of what @prev has absorbed (its idle is
		 * the youngest): pairwise alone, a row of idle times falling
		 * by halves (a scan's trail) would collapse into one region.
		 */
		if (prev && prev->ar.end == r->ar.start &&
		    daptrace_similar(prev->nr_accesses, r->nr_accesses, threshold) &&
		    (!keep_apart || (daptrace_same_node(prev, r) &&
				     daptrace_same_observability(prev, r) &&
				     daptrace_same_history(prev->idle, r->idle) &&
				     daptrace_same_history(oldest, r->idle))) &&
		    daptrace_sz_region(prev) + daptrace_sz_region(r) <= sz_limit) {
			oldest = max(oldest, r->idle);
			daptrace_merge_two_regions(t, prev, r);
		} else {
			prev = r;
			oldest = r->idle;
		}
	}
}

/* Whose regions a merge pass merges. */
enum daptrace_merge_which {
	DAPTRACE_MERGE_RAN,	/* the targets that ran in the window */
	DAPTRACE_MERGE_ALL,	/* every target */
	DAPTRACE_MERGE_QUIET,	/* the quiet ones only */
};

static bool daptrace_merge_includes(enum daptrace_merge_which which,
				    const struct daptrace_target *t)
{
	bool quiet = t->quiet || t->merged_idle;

	switch (which) {
	case DAPTRACE_MERGE_ALL:
		return true;
	case DAPTRACE_MERGE_QUIET:
		return quiet;
	default:
		return !quiet;
	}
}

/*
 * One merge pass over the targets @which says, with @own those that ran
 * within their own size limit too (daptrace_own_sz_limit()); returns the
 * regions that count against max_nr_regions (daptrace_budgeted()), and in
 * @total all of them.
 */
static unsigned int daptrace_merge_pass(struct daptrace_ctx *ctx,
					unsigned int threshold,
					unsigned long sz_limit, bool keep_apart,
					bool own, enum daptrace_merge_which which,
					unsigned int *total)
{
	struct daptrace_target *t;
	unsigned int nr = 0;

	*total = 0;
	daptrace_for_each_target(t, ctx) {
		unsigned int before = t->nr_regions;
		unsigned long limit = sz_limit;

		if (t->exited)
			continue;
		if (own && daptrace_budgeted(t))
			limit = min(limit, daptrace_own_sz_limit(ctx, t));
		if (daptrace_merge_includes(which, t))
			daptrace_merge_regions_of(t, threshold, limit, keep_apart);
		/* Merged after all: sampled afresh, see &daptrace_target.quiet. */
		if (t->nr_regions != before && t->quiet) {
			t->quiet = false;
			t->merged_idle = true;
		}
		*total += t->nr_regions;
		if (daptrace_budgeted(t))
			nr += t->nr_regions;
	}
	return nr;
}

/**
 * daptrace_merge_regions() - merge adjacent regions of similar access counts.
 * @ctx:	The context.
 * @threshold:	Largest nr_accesses difference of two regions to merge.
 * @sz_limit:	Largest size of a merged region.
 *
 * Adjacent regions of one target (never across targets, never across an
 * unmapped gap) whose nr_accesses differ by at most @threshold (half of it if
 * one of them is 0, see daptrace_similar()) are merged while the result stays
 * within @sz_limit, which keeps the regions from collapsing below about
 * min_nr_regions.  While there are still more than max_nr_regions regions,
 * the pass is repeated with a doubled threshold as long as that may still
 * make a difference (DAMON's loop), i.e. until even the halved threshold
 * covers every possible count.  Neighbours on different NUMA nodes or last
 * accessed at clearly different times are not merged in these passes
 * (daptrace_same_node(), daptrace_same_history()).
 *
 * Quiet targets (&daptrace_target.quiet) are left as they are, but where
 * the regions take more than half of max_nr_regions.  Then a quiet target's
 * regions are merged too, as any other's: a target is split only while its
 * pieces fit (daptrace_split_regions()), and processes that ran once and
 * then slept keep the regions their first windows split them into, since
 * a quiet target is never merged otherwise.  With enough of them (the
 * whole machine: 220 sleeping processes) they hold the budget, and the
 * targets that do run are never split again: a cgroup whose 64 MiB went
 * idle in four steps read as one region, accessed, its idle-time
 * percentiles all wrong.  Merging them frees the room; what it costs is one
 * prepare of their merged regions (which are no longer quiet), once.
 *
 * max_nr_regions bounds the regions of the targets that ran in the window
 * (daptrace_budgeted()): those of quiet targets, which cost next to
 * nothing, are not counted (but in @crowded, above).  So a process that
 * wakes among hundreds that sleep, whose one region per mapped range alone
 * can be more than max_nr_regions (512 targets of 3), is split as if it
 * were alone, where counting them all left it one region per range: its
 * hot set never found.  What the ring holds (max_nr_regions +
 * min_nr_regions + 7 per target) is kept by the last step, which also
 * merges while there are more than 3 regions per target in all.
 *
 * The size limit is DAMON's, total size / min_nr_regions over all targets
 * (daptrace_aggregate()), and for a target that ran also its own size /
 * min_nr_regions, while every target that ran can have 4 min_nr_regions
 * within max_nr_regions (daptrace_own_limits()): the resolution it would
 * have alone.  With the total alone, one process among hundreds that sleep
 * merged into regions of a tenth of all of their sizes: the aging workload's
 * four 16 MiB areas, idle for 37, 29, 21 and 13 s, read as one region of
 * the size-weighted age, 24 s, and `daptrace stat`'s idle-time percentiles
 * were one value for all of them (bench/follow.sh, aging).
 *
 * If even then the count is above max_nr_regions (possible after new ranges
 * appeared, when @sz_limit forbids every merge, or with regions on many
 * nodes), the passes are repeated without the own limits, then without
 * placement and history; and only then is @sz_limit doubled with any
 * access difference, placement and history allowed, quiet targets
 * included, until the bound holds.  DAMON
 * lacks this step; it makes max_nr_regions a hard limit after every
 * aggregation, unless there are more separate address ranges than
 * max_nr_regions.
 */
void daptrace_merge_regions(struct daptrace_ctx *ctx, unsigned int threshold,
			    unsigned long sz_limit)
{
	unsigned long max_nr = ctx->attrs.max_nr_regions;
	unsigned long max_total = max_nr + 3UL * daptrace_nr_live_targets(ctx);
	unsigned int max_thres = daptrace_max_nr_accesses(&ctx->attrs);
	bool crowded = daptrace_nr_regions(ctx) > max_nr / 2;
	bool own = daptrace_own_limits(ctx), apart = true;
	unsigned int nr, total, first = threshold;

	for (;;) {
		do {
			nr = daptrace_merge_pass(ctx, threshold, sz_limit, apart,
						 own, crowded ? DAPTRACE_MERGE_ALL :
						 DAPTRACE_MERGE_RAN, &total);
			threshold = threshold > UINT_MAX / 2 ? UINT_MAX :
				    max(1U, threshold * 2);
		} while (nr > max_nr && threshold / 4 < max_thres);
		if (nr <= max_nr || (!own && !apart))
			break;
		/*
		 * Still over the bound: the own limits give way, then the
		 * histories and placement, each from the first threshold
		 * again, before the last step merges any access difference
		 * (a hot region merged into cold neighbours reads cold).
		 */
		apart = apart && own;
		own = false;
		threshold = first;
	}

	/* Over the bound: everyone; over the ring's room alone: the quiet. */
	while ((nr > max_nr || total > max_total) && sz_limit < ULONG_MAX) {
		sz_limit = sz_limit > ULONG_MAX / 2 ? ULONG_MAX : sz_limit * 2;
		nr = daptrace_merge_pass(ctx, UINT_MAX, sz_limit, false, false,
					 nr > max_nr ? DAPTRACE_MERGE_ALL :
					 DAPTRACE_MERGE_QUIET, &total);
	}
}

/**
 * daptrace_reset_aggregated() - start a new aggregation window.
 * @ctx:	The context.
 *
 * Remembers each region's count as last_nr_accesses (for daptrace_update_age())
 * and clears it.
 */
void daptrace_reset_aggregated(struct daptrace_ctx *ctx)
{
	struct daptrace_target *t;
	struct daptrace_region *r;

	daptrace_for_each_target(t, ctx) {
		if (t->exited)
			continue;
		daptrace_for_each_region(r, t) {
			r->last_nr_accesses = r->nr_accesses;
			r->nr_accesses = 0;
			r->nr_unobserved = 0;
			daptrace_reset_placement(r);
		}
	}
}

/*
 * Cut @r at @sz_left bytes from its start; the new right piece inherits the
 * statistics.  On allocation failure @r simply stays whole: a missed split is
 * harmless, the next window tries again.
 */
static int daptrace_split_region_at(struct daptrace_target *t,
				    struct daptrace_region *r,
				    unsigned long sz_left)
{
	struct daptrace_region *n;

	n = daptrace_region_new(r->ar.start + sz_left, r->ar.end);
	if (!n)
		return -ENOMEM;
	daptrace_copy_stats(n, r);
	r->ar.end = n->ar.start;
	if (r->sampling_addr >= r->ar.end) {
		n->sampling_addr = r->sampling_addr;
		r->sampling_addr = r->ar.start;
	}
	daptrace_insert_region_after(t, r, n);
	return 0;
}

static void daptrace_split_regions_of(struct daptrace_ctx *ctx,
				      struct daptrace_target *t,
				      unsigned int nr_pieces)
{
	unsigned long unit = ctx->min_region_sz, sz, sz_sub, k;
	struct daptrace_region *r, *next;
	unsigned int i;

	daptrace_for_each_region_safe(r, next, t) {
		sz = daptrace_sz_region(r);
		for (i = 0; i < nr_pieces - 1 && sz > 2 * unit; i++) {
			/*
			 * A random cut at 10%..90% of the region; written so
			 * that a huge region cannot overflow the product.
			 */
			k = ctx->rand(ctx->rand_arg, 9) + 1;
			sz_sub = ALIGN_DOWN(sz / 10 * k + sz % 10 * k / 10, unit);
			if (!sz_sub || sz_sub >= sz)
				continue;
			if (daptrace_split_region_at(t, r, sz_sub))
				return;
			/* Like DAMON, cut the left piece further. */
			sz = sz_sub;
		}
	}
}

/*
 * Cut @t's regions larger than its own size limit (daptrace_own_sz_limit())
 * into even pieces within it, if all the cuts fit in @room more regions;
 * returns false, having cut nothing, if they do not or none is needed.
 */
static bool daptrace_split_to_own_limit(struct daptrace_ctx *ctx,
					struct daptrace_target *t,
					unsigned long room)
{
	unsigned long unit = ctx->min_region_sz, need = 0, sz, piece, limit;
	struct daptrace_region *r, *next;

	/* pieces on the boundaries' granularity, none past the limit */
	limit = max(ALIGN_DOWN(daptrace_own_sz_limit(ctx, t), unit), unit);
	daptrace_for_each_region(r, t) {
		sz = daptrace_sz_region(r);
		if (sz > limit)
			need += DIV64_U64_ROUND_UP(sz, limit) - 1;
	}
	if (!need || need > room)
		return false;
	daptrace_for_each_region_safe(r, next, t) {
		sz = daptrace_sz_region(r);
		if (sz <= limit)
			continue;
		piece = ALIGN(DIV64_U64_ROUND_UP(sz, DIV64_U64_ROUND_UP(sz, limit)), unit);
		while (sz > piece) {
			/* on allocation failure @r stays as it is: harmless */
			if (daptrace_split_region_at(t, r, piece))
				return true;
			r = list_next_entry(r, list);
			sz -= piece;
		}
	}
	return true;
}

/**
 * daptrace_split_regions() - split every region at random points.
 * @ctx:	The context.
 *
 * Random cuts let region boundaries find the real boundaries between memory
 * of different hotness; the next merge undoes cuts that found nothing.  A
 * target is split only while its pieces fit: the count after its split
 * stays within max_nr_regions, counting the targets that ran
 * (daptrace_budgeted(): see daptrace_merge_regions()).  With one target
 * that is DAMON's rule
 * (nothing is split while there are more than max_nr_regions / 2 regions).
 * With many, DAMON's rule counts every target's regions: idle processes,
 * which keep at least one region per mapped range and are not split (below),
 * can hold more than half of the budget on their own, and then no target is
 * ever split again, however differently its memory is accessed (220 idle
 * processes held 660 of 1000 regions in the whole-machine benchmark, and a
 * busy 64 MiB mapping among them stayed one region).  Counting the room left
 * target by target gives it to the targets that can use it.  If the
 * previous split was entirely merged back (the count before splitting is
 * unchanged) and there are fewer than max_nr_regions / 3 regions, three
 * pieces are tried instead, in case the differently accessed part lies in a
 * region's middle; a target with no room for three gets two if those fit.
 *
 * Quiet targets (&daptrace_target.quiet) are not split, nor those the
 * merge just merged for being quiet (&daptrace_target.merged_idle): a cut
 * would only give a piece a sample that must be prepared, for nothing
 * learnt.  A target that ran after quiet windows (&daptrace_target.woke)
 * may wake with its regions merged far past what it would have alone
 * (crowded, above: one region per mapped range, a 32 MiB range whose 4 MiB
 * hot set then waits for window after window of halving).  Its regions
 * larger than its own size / min_nr_regions are cut at once into even
 * pieces within that limit, budget permitting, instead of the random split
 * of that window: among 4096 sleeping targets, the hot set was one region
 * of its own in the first window after the wake (bench/targets.sh).  Where
 * the own limits are off (daptrace_own_limits()), the next merge may put
 * pieces that read alike back together, so that resolution may last one
 * window; the cut is still made there: with it, a target that ran 4
 * windows in 8 found its hot set in every window it ran, without it in
 * 177 of 500 (a simulation of three targets in 25 regions).
 *
 * Where the room cannot split every target that ran, the targets take
 * turns: the walk starts at the first target the previous split refused
 * for want of the room the targets before it took (&daptrace_ctx.split_from)
 * and goes round the list.  Walked in list order from the first, the first
 * targets took the room every window and the last ones' regions were never
 * cut again: with 150 targets that ran under the defaults (10 and 1000),
 * 6 to 23 of them never found their hot set (seeds 1-20 of a simulation).
 * The start moves on by at least one target in each window in which one is
 * refused so, and only past targets that were split (or could not be even
 * with all the room), so each target whose split fits the room on its own
 * is split at least once in any nr_targets such windows.  Where none is
 * refused for the others' splits, the walk starts from the first target,
 * as it always did: nothing changes while there is room for everyone.
 *
 * &daptrace_ctx.last_nr_regions records the count before splitting, as in
 * DAMON.
 */
void daptrace_split_regions(struct daptrace_ctx *ctx)
{
	unsigned long max_nr = ctx->attrs.max_nr_regions;
	unsigned int nr = daptrace_nr_budgeted(ctx), before = nr;
	unsigned int nr_pieces = 2, pieces, had, from, i, pass;
	unsigned int next_from = 0;
	struct daptrace_target *t;
	bool split = false;

	if (nr == ctx->last_nr_regions && nr < max_nr / 3)
		nr_pieces = 3;

	/* an index, not a pointer: targets come and go between windows */
	from = ctx->nr_targets ? ctx->split_from % ctx->nr_targets : 0;
	for (pass = 0; pass < 2; pass++) {
		i = 0;
		daptrace_for_each_target(t, ctx) {
			/* from @from to the end, then from the start to @from */
			if (pass == (i++ >= from))
				continue;
			if (t->exited || t->quiet || t->merged_idle) {
				t->merged_idle = false;
				continue;
			}
			had = t->nr_regions;
			if (t->woke &&
			    daptrace_split_to_own_limit(ctx, t, nr < max_nr ? max_nr - nr : 0)) {
				nr += t->nr_regions - had;
				split = true;
				continue;
			}
			pieces = nr_pieces;
			/* each region becomes at most @pieces: had * (pieces - 1) more */
			if (pieces == 3 && nr + 2UL * had > max_nr)
				pieces = 2;
			if (nr + (unsigned long)had * (pieces - 1) > max_nr) {
				/* refused for the room the ones before it took */
				if (!next_from && nr > before)
					next_from = i;
				continue;
			}
			daptrace_split_regions_of(ctx, t, pieces);
			nr += t->nr_regions - had;
			split = true;
		}
	}
	/* the first target refused for the others' splits starts the next split */
	ctx->split_from = next_from ? next_from - 1 : 0;
	/* as DAMON: the count a split started from (unchanged where its rule held) */
	if (split || before <= max_nr / 2)
		ctx->last_nr_regions = before;
}

/**
 * daptrace_aggregate() - end an aggregation window.
 * @ctx:	The context.
 * @nr_samples:	The window's sampling rounds: the highest count a region
 *		can have reached in it.
 *
 * Call once per window, after the window's snapshot was published: ages the
 * regions (in windows of the aggregation interval now in force, which the
 * intervals goal may just have changed: daptrace_rescale_ages()), merges
 * similar neighbours, starts the next window's counts and splits.  Both the
 * age threshold and the first merge threshold are a tenth of the highest
 * count the window allowed, and merged regions may grow to total size /
 * min_nr_regions (at least min_region_sz), as in DAMON (those of a target
 * that ran to its own size / min_nr_regions while the budget allows:
 * daptrace_merge_regions()).  DAMON's windows
 * always have aggr_us / sample_us rounds (it counts them); ours end on
 * time, and a worker that was not scheduled (a busy machine) made fewer:
 * 3 or 4 instead of 20 (selftests/follow/tree under TCG beside a compile:
 * checks 5.8 sampling intervals apart).  A tenth of the nominal 20 then
 * merged a region read accessed at 3 of 3 checks with one read at 1 of
 * them: the hot set with part of the cold memory beside it.
 */
void daptrace_aggregate(struct daptrace_ctx *ctx, unsigned int nr_samples)
{
	unsigned int threshold = max(1U, nr_samples / 10);
	unsigned long sz_limit;

	sz_limit = daptrace_total_sz(ctx) /
		   max(ctx->attrs.min_nr_regions, 1UL);
	sz_limit = max(sz_limit, ctx->min_region_sz);

	daptrace_update_age(ctx, threshold);
	daptrace_rescale_ages(ctx);
	daptrace_merge_regions(ctx, threshold, sz_limit);
	daptrace_reset_aggregated(ctx);
	daptrace_split_regions(ctx);
}

/* Cuts that keeping @k[0..@n) apart takes in [@start, @end). */
static unsigned int daptrace_touched_cuts(const struct daptrace_addr_range *k,
					  unsigned int n, unsigned long start,
					  unsigned long end)
{
	unsigned int i, cuts = 0;

	for (i = 0; i < n; i++)
		cuts += (k[i].start > start) + (k[i].end < end);
	return cuts;
}

/**
 * daptrace_split_touched() - cut a region at the edges of what was touched.
 * @ctx:	The context (granularity).
 * @t:		The region's target.
 * @r:		The region.
 * @runs:	Address ranges found touched in the window just ended, sorted
 *		by start; the parts outside @r are ignored.
 * @nr:		Entries of @runs.
 * @room:	Regions this may add at most (what max_nr_regions leaves).
 *
 * The operations learn which parts of a large region were touched from
 * page-table entries above the ptes (the upper-level scan, kernel/upper.c):
 * one accessed bit per 2 MiB or 1 GiB.  A region's one sample per interval
 * almost never lands on a few MiB accessed in hundreds of GiB, so the
 * region reads cold, is never split where the accesses are, and the
 * accessed memory is never found; cut at the touched runs, the accesses get
 * a region of their own, which the next window's samples measure.  The cut
 * decides nothing about counts: a touched run that turns out cold (a chunk
 * touched once, a bit that says more than an access) reads 0 and is merged
 * back, a run found untouched that was accessed is only not cut out yet.
 *
 * Each run becomes a region, and so does each untouched stretch between
 * them.  If that takes more cuts than @room, the two runs with the smallest
 * gap between them are joined (the gap goes with them) until it does not;
 * a run that still needs more (@room below 2) is not cut out.  Runs are
 * widened to the granularity; more than DAPTRACE_MAX_TOUCHED_RUNS are
 * joined to the last one.  The pieces inherit @r's statistics.  On
 * allocation failure the cuts made so far stay.
 *
 * Return: the number of regions added.
 */
unsigned int daptrace_split_touched(struct daptrace_ctx *ctx,
				    struct daptrace_target *t,
				    struct daptrace_region *r,
				    const struct daptrace_addr_range *runs,
				    unsigned int nr, unsigned long room)
{
	struct daptrace_addr_range k[DAPTRACE_MAX_TOUCHED_RUNS];
	unsigned long unit = ctx->min_region_sz, s, e, gap, best;
	unsigned int i, n = 0, at, added = 0;
	struct daptrace_region *cur = r;

	for (i = 0; i < nr; i++) {
		if (runs[i].end <= r->ar.start || runs[i].start >= r->ar.end ||
		    runs[i].start >= runs[i].end)
			continue;
		s = max(ALIGN_DOWN(runs[i].start, unit), r->ar.start);
		/* r->ar.end is aligned: no rounding past it */
		e = runs[i].end >= r->ar.end ? r->ar.end :
		    min(ALIGN(runs[i].end, unit), r->ar.end);
		if (n && s <= k[n - 1].end) {
			k[n - 1].end = max(k[n - 1].end, e);
			continue;
		}
		if (n == DAPTRACE_MAX_TOUCHED_RUNS) {
			k[n - 1].end = e;
			continue;
		}
		k[n].start = s;
		k[n].end = e;
		n++;
	}
	while (n > 1 &&
	       daptrace_touched_cuts(k, n, r->ar.start, r->ar.end) > room) {
		at = 0;
		best = ULONG_MAX;
		for (i = 0; i + 1 < n; i++) {
			gap = k[i + 1].start - k[i].end;
			if (gap < best) {
				best = gap;
				at = i;
			}
		}
		k[at].end = k[at + 1].end;
		for (i = at + 1; i + 1 < n; i++)
			k[i] = k[i + 1];
		n--;
	}
	if (!n || daptrace_touched_cuts(k, n, r->ar.start, r->ar.end) > room)
		return 0;
	/* Left to right: each cut leaves its right piece to the next. */
	for (i = 0; i < 2 * n; i++) {
		s = i % 2 ? k[i / 2].end : k[i / 2].start;
		if (s <= cur->ar.start || s >= cur->ar.end)
			continue;
		if (daptrace_split_region_at(t, cur, s - cur->ar.start))
			break;
		cur = list_next_entry(cur, list);
		added++;
	}
	return added;
}

/* Add to the tuner's sums, halving them all rather than overflowing. */
static void daptrace_tuner_add(struct daptrace_tuner *tu, u64 events,
			       u64 max_events)
{
	while (tu->max_events > U64_MAX - max_events) {
		tu->events >>= 1;
		tu->max_events >>= 1;
		events >>= 1;
		max_events >>= 1;
	}
	tu->events += events;
	tu->max_events += max_events;
}

/*
 * How to scale the sampling interval, in basis points, for a measured
 * share of accesses @score_bp in basis points of the goal (10000: the goal
 * is met): DAMON's feedback (mm/damon/core.c, kdamond_tune_intervals()).
 * Under the goal the interval grows by the share missing, at most doubling
 * at a score of 0, so that more accesses fall in each check; over it the
 * interval shrinks by the excess, but by at most half (at twice the goal or
 * more), so that a burst does not throw the interval far below where it
 * belongs.
 */
static u64 daptrace_intervals_adaptation_bp(u64 score_bp)
{
	if (score_bp <= 10000)
		return 20000 - score_bp;
	return 5000 + (score_bp < 20000 ? 20000 - score_bp : 1) / 2;
}

/**
 * daptrace_tune_intervals() - the intervals goal, once per window.
 * @ctx:	The context, at the end of a window whose counts are still in
 *		its regions.
 * @nr_samples:	The window's sampling rounds.
 * @sample_us:	Receives the new sampling interval.
 * @aggr_us:	Receives the new aggregation interval: the sampling
 *		interval times the samples per window there were when the
 *		tuning started (&daptrace_tuner.aggr_samples), so windows
 *		keep their resolution; the sampling interval stops where
 *		that would pass DAPTRACE_MAX_AGGR_US.
 * @update_us:	Receives the new update interval: the one there was when
 *		the tuning started, or @aggr_us if longer, so that it comes
 *		back down with the aggregation interval.
 *
 * Measures the window (the size-weighted accesses against the most the
 * observed checks could have seen; unobserved checks count in neither),
 * and every goal_aggrs windows tunes the sampling interval to the goal:
 * see daptrace_intervals_adaptation_bp(), within goal_min_sample_us and
 * goal_max_sample_us.  A target whose memory shows fewer accesses per check
 * than the goal gets longer intervals, in which a cold-looking region has
 * more time to show an access (DAMON_STAT's default is 4 %).  Windows in
 * which no check observed anything (every target unobservable or gone, no
 * region, every check skipped) carry no information: if all of the
 * measure's windows were such, nothing is tuned (a score of 0 would double
 * the interval, up to its maximum, for a monitor that saw nothing).
 *
 * Return: true if the intervals should change (to the values given).
 */
bool daptrace_tune_intervals(struct daptrace_ctx *ctx, unsigned int nr_samples,
			     unsigned long *sample_us, unsigned long *aggr_us,
			     unsigned long *update_us)
{
	const struct daptrace_attrs *a = &ctx->attrs;
	struct daptrace_tuner *tu = &ctx->tuner;
	const struct daptrace_target *t;
	const struct daptrace_region *r;
	u64 pages, target, score_bp, next, lo, hi;
	unsigned int observed;

	if (!a->goal_aggrs)
		return false;
	if (!tu->aggr_samples) {
		/* validated: aggr_us >= sample_us > 0 */
		tu->aggr_samples = max(a->aggr_us / a->sample_us, 1UL);
		tu->update_us = a->update_us;
	}
	daptrace_for_each_target(t, ctx) {
		if (t->exited)
			continue;
		daptrace_for_each_region(r, t) {
			pages = daptrace_sz_region(r) / ctx->min_region_sz;
			observed = nr_samples > r->nr_unobserved ?
				   nr_samples - r->nr_unobserved : 0;
			daptrace_tuner_add(tu, pages * min(r->nr_accesses, observed),
					   pages * observed);
		}
	}
	if (++tu->windows < a->goal_aggrs)
		return false;

	target = mul_u64_u64_div_u64(tu->max_events, a->goal_access_bp, 10000);
	score_bp = mul_u64_u64_div_u64(tu->events, 10000, max_t(u64, target, 1));
	observed = tu->max_events != 0;
	tu->events = 0;
	tu->max_events = 0;
	tu->windows = 0;
	if (!observed)
		return false;
	next = mul_u64_u64_div_u64(a->sample_us,
				   daptrace_intervals_adaptation_bp(score_bp),
				   10000);
	/* The aggregation interval's cap bounds the sampling interval. */
	hi = min_t(u64, a->goal_max_sample_us,
		   DAPTRACE_MAX_AGGR_US / tu->aggr_samples);
	lo = min_t(u64, a->goal_min_sample_us, hi);
	next = clamp_t(u64, next, max_t(u64, lo, 1), max_t(u64, hi, 1));
	if (next == a->sample_us)
		return false;
	*sample_us = next;
	*aggr_us = next * tu->aggr_samples;
	*update_us = max(tu->update_us, *aggr_us);
	return true;
}

/*
 * Candidates are sorted with a counting pass on the top bits of their
 * position (into this many buckets, in place) and an insertion sort within
 * the buckets.  Uniform draws leave a few per bucket, so the cost is linear:
 * sort()'s m log m indirect comparisons of 512 candidates cost more than all
 * the probes' page walks of a window (measured under the emulator, with
 * probe_us, at 0.5 ms a window).
 */
#define DAPTRACE_PROBE_BUCKETS	128

/* Sort @pr[0..@m) by @addr, each a position in [0, @total). */
static void daptrace_probes_sort(struct daptrace_probe *pr, unsigned int m,
				 u64 total)
{
	u16 next[DAPTRACE_PROBE_BUCKETS], end[DAPTRACE_PROBE_BUCKETS];
	unsigned int shift = 0, b, c, i, j;
	struct daptrace_probe tmp;

	BUILD_BUG_ON(DAPTRACE_MAX_PROBE_DRAWS > U16_MAX);
	while ((total - 1) >> shift >= DAPTRACE_PROBE_BUCKETS)
		shift++;
	memset(end, 0, sizeof(end));
	for (i = 0; i < m; i++)
		end[pr[i].addr >> shift]++;
	for (b = 0, i = 0; b < DAPTRACE_PROBE_BUCKETS; b++) {
		next[b] = i;
		i += end[b];
		end[b] = i;
	}
	/* Each swap puts one candidate into its bucket for good. */
	for (b = 0; b < DAPTRACE_PROBE_BUCKETS; b++) {
		while (next[b] < end[b]) {
			c = pr[next[b]].addr >> shift;
			if (c == b) {
				next[b]++;
				continue;
			}
			tmp = pr[next[c]];
			pr[next[c]++] = pr[next[b]];
			pr[next[b]] = tmp;
		}
	}
	for (i = 1; i < m; i++) {
		tmp = pr[i];
		for (j = i; j > 0 && pr[j - 1].addr > tmp.addr; j--)
			pr[j] = pr[j - 1];
		pr[j] = tmp;
	}
}

/*
 * Are @t's pages drawn as probes for the window that starts?  Not if none
 * of its threads ran in the last DAPTRACE_PROBE_QUIET_WINDOWS windows (a
 * stopped or sleeping process): its probes would only confirm "not
 * accessed", where its regions read not accessed too, at the price of a
 * walk, a clear and a TLB flush each window, most of what such a target
 * cost otherwise.  A target that runs now and then, quiet in fewer windows
 * in a row, is probed in every window, those it runs in included.  One
 * that wakes after longer is left out of the estimate in the window it
 * wakes in (the estimate is of the targets that ran lately), and probed
 * from the next.
 */
static bool daptrace_probed(const struct daptrace_target *t)
{
	return !t->exited && t->idle_windows < DAPTRACE_PROBE_QUIET_WINDOWS;
}

/**
 * daptrace_probes_wanted() - is any target probed in the window that starts?
 * @ctx:	The context.
 *
 * Return: false while every target is long quiet (daptrace_probed()): the
 * worker then skips the probes' work, their cost bound included, so that
 * such windows leave probe_us and the bound's averages as they were.
 */
bool daptrace_probes_wanted(const struct daptrace_ctx *ctx)
{
	struct daptrace_target *t;

	daptrace_for_each_target(t, ctx)
		if (daptrace_probed(t) && t->nr_regions)
			return true;
	return false;
}

/**
 * daptrace_probes_pick() - draw a window's probe candidates.
 * @ctx:	The context, with @ctx->probes room for @n *
 *		DAPTRACE_PROBE_DRAWS entries.
 * @n:		Probes wanted.
 *
 * DAPTRACE_PROBE_DRAWS candidates per probe are drawn uniformly, with
 * replacement, from every byte the regions of the probed targets cover
 * (as min_region_sz units; daptrace_probed()); daptrace_probes_select()
 * keeps, of each probe's candidates, the first in mapped memory.  They are
 * sorted by target, in context order, and address, and each is given its
 * region.  The caller marks next the candidates where nothing is mapped.
 *
 * Return: the number of candidates, @n * DAPTRACE_PROBE_DRAWS or 0 if no
 * probed target has regions; also stored in @ctx->nr_probes.
 */
unsigned int daptrace_probes_pick(struct daptrace_ctx *ctx, unsigned int n)
{
	struct daptrace_target *t;
	struct daptrace_region *r;
	struct daptrace_probe *pr = ctx->probes;
	u64 total = 0, base = 0;
	unsigned int i, m;

	ctx->nr_probes = 0;
	ctx->probe_slots = 0;
	if (!ctx->probes || !n)
		return 0;
	n = min(n, DAPTRACE_MAX_PROBE_PAGES);
	m = n * DAPTRACE_PROBE_DRAWS;
	daptrace_for_each_target(t, ctx)
		if (daptrace_probed(t))
			daptrace_for_each_region(r, t)
				total += daptrace_sz_region(r) / ctx->min_region_sz;
	if (!total)
		return 0;
	/*
	 * The positions, in units from the first region (a unit index of a
	 * 64-bit address space fits an unsigned long), in @addr until they
	 * become addresses below.
	 */
	for (i = 0; i < m; i++) {
		pr[i].addr = daptrace_rand_below(ctx, total);
		pr[i].draw = i;
	}
	daptrace_probes_sort(pr, m, total);
	i = 0;
	daptrace_for_each_target(t, ctx) {
		if (!daptrace_probed(t))
			continue;
		daptrace_for_each_region(r, t) {
			u64 units = daptrace_sz_region(r) / ctx->min_region_sz;

			for (; i < m && pr[i].addr < base + units; i++) {
				struct daptrace_probe *p = &pr[i];

				p->t = t;
				p->r = r;
				p->addr = r->ar.start + (unsigned long)(p->addr - base) *
					  ctx->min_region_sz;
				p->state = 0;
				p->seen = DAPTRACE_PROBE_OLD;
			}
			base += units;
		}
	}
	ctx->nr_probes = i;
	ctx->probe_slots = n;
	return i;
}

/**
 * daptrace_probes_select() - keep one candidate per probe, in mapped memory.
 * @ctx:	The context, after daptrace_probes_pick() and after the
 *		operations marked the candidates where nothing is mapped
 *		DAPTRACE_PROBE_UNMAPPED.
 *
 * Of each probe's candidates, the first drawn that is not marked stays:
 * rejection sampling, so a probe kept is uniform over the mapped bytes the
 * regions cover and independent of the others (the choice depends on the
 * draws' order, never on where they fell).  A probe all of whose
 * candidates are unmapped is dropped: the window has fewer probes, which
 * its counts say, rather than probes that can only say "not accessed".
 * Memory mapped during the window is not probed.  The order stays sorted.
 *
 * Return: the probes kept; also stored in @ctx->nr_probes.
 */
unsigned int daptrace_probes_select(struct daptrace_ctx *ctx)
{
	u8 first[DAPTRACE_MAX_PROBE_PAGES];
	unsigned int i, kept = 0, n = ctx->probe_slots;

	if (!n)
		return ctx->nr_probes = 0;
	BUILD_BUG_ON(DAPTRACE_PROBE_DRAWS > U8_MAX);
	memset(first, DAPTRACE_PROBE_DRAWS, n);
	for (i = 0; i < ctx->nr_probes; i++) {
		const struct daptrace_probe *p = &ctx->probes[i];

		if (p->seen != DAPTRACE_PROBE_UNMAPPED &&
		    p->draw / n < first[p->draw % n])
			first[p->draw % n] = p->draw / n;
	}
	for (i = 0; i < ctx->nr_probes; i++) {
		const struct daptrace_probe *p = &ctx->probes[i];

		if (p->seen != DAPTRACE_PROBE_UNMAPPED &&
		    p->draw / n == first[p->draw % n])
			ctx->probes[kept++] = *p;
	}
	ctx->nr_probes = kept;
	return kept;
}

/**
 * daptrace_probes_account() - compare a window's probes with its regions.
 * @ctx:	The context, at the end of the window: the probes' truth has
 *		been read, the regions still hold the window's counts.
 * @nr_samples:	Sampling rounds of the window.
 * @c:		Counts to add to.
 *
 * A region read accessed if any of its checks saw an access; it has no
 * verdict if none of its checks was observed (nr_unobserved equals the
 * window's rounds), and its probes then count as unobserved.
 */
void daptrace_probes_account(const struct daptrace_ctx *ctx,
			     unsigned int nr_samples,
			     struct daptrace_probe_counts *c)
{
	unsigned int i;

	for (i = 0; i < ctx->nr_probes; i++) {
		const struct daptrace_probe *p = &ctx->probes[i];
		bool truth, claim;

		c->nr++;
		if (p->seen == DAPTRACE_PROBE_UNOBSERVED ||
		    (!p->r->nr_accesses && p->r->nr_unobserved >= nr_samples)) {
			c->unobserved++;
			continue;
		}
		truth = p->seen == DAPTRACE_PROBE_YOUNG;
		claim = p->r->nr_accesses > 0;
		if (truth)
			claim ? c->tp++ : c->fn++;
		else
			claim ? c->fp++ : c->tn++;
	}
}

/*
 * The most probe pages whose cost stays within @bp of the worker's CPU, at
 * @cost per probe page and @other of other worker CPU per window, that
 * kept multiplied by DAPTRACE_PROBE_COST_WINDOWS (as the averages are).
 */
static u64 daptrace_probes_within(u64 other, u64 cost, unsigned long bp)
{
	/* n c / (n c + O) <= bp / 10000  <=>  n <= bp O / ((10000 - bp) c) */
	return mul_u64_u64_div_u64(other, bp,
				   (DAPTRACE_MAX_PROBE_MAX_CPU_BP - bp) *
				   DAPTRACE_PROBE_COST_WINDOWS * cost);
}

/*
 * A window's times are capped (at 1000 s) so that the averages' arithmetic
 * cannot overflow: daptrace_probes_within()'s product stays below 2^56 and
 * its quotient fits 64 bits.  No window is that long (the aggregation
 * interval is at most 100 s).
 */
#define DAPTRACE_PROBE_MAX_WINDOW_NS	1000000000000ULL

/*
 * @avg, an exponential average kept multiplied by @w (see
 * &struct daptrace_probe_budget), after a window that read @v.  Its decay
 * rounds up, so that a count that stops reaches 0 (rounded down, it would
 * stay at w - 1 forever: a floor still raised long after the last access).
 * The price: a rising average stops up to w - 1 short of w v, so small
 * counts are averaged multiplied by a scale (below) that makes that little.
 */
static u64 daptrace_probe_avg(u64 avg, u64 v, unsigned int w, bool first)
{
	return first ? w * v : avg - div_u64(avg + w - 1, w) + v;
}

/*
 * The precision floor's averages are kept multiplied by this besides
 * DAPTRACE_PROBE_FLOOR_WINDOWS: at a few probe pages a window, the
 * average's rounding (up to a window's weight off the truth) would move the
 * floor by a quarter.
 */
#define DAPTRACE_PROBE_FLOOR_SCALE	64U

/**
 * daptrace_probes_precision() - the probes' precision floor: how many probe
 * pages a window needs for the estimate to be as exact as it says.
 * @ctx:	The context, at the end of a window.
 * @c:		The window's probe counts (daptrace_probes_account()).
 * @max:	The ceiling (probe_pages).
 * @aggr_us:	The aggregation interval in force.
 *
 * The estimate of recall is r = tp / (tp + fn) over the accessed probe
 * pages of a pool of windows spanning DAPTRACE_PROBE_POOL_US (the CLI's).
 * For its 95 % interval to be within +-0.04 the pool must hold
 * K = z^2 r (1 - r) / 0.04^2 accessed probe pages (z = 1.96: 600 at
 * r = 0.5, as many as the CLI's pool asks for; 216 at 0.9; none where
 * every accessed probe page was in an accessed region).  Within +-0.04 at
 * 95 % is within +-0.05 at 98.6 %.  With a share a = (tp + fn) / asked of
 * the probe pages asked for that are accessed (those dropped for landing
 * in gaps or left unobserved count as not accessed: the budget gives
 * pages to ask for) and W = DAPTRACE_PROBE_POOL_US / @aggr_us windows in a
 * pool (at most the CLI's DAPTRACE_PROBE_POOL_MAX_WINDOWS), that is
 * P = K / (a W) probe pages a window, rounded up.
 *
 * r comes from tp and fn averaged over the last windows (exponentially, a
 * window weighing 1/DAPTRACE_PROBE_FLOOR_WINDOWS, 1/64: about a pool at
 * the default 100 ms windows), a from the accessed and asked pages over
 * fewer (1/DAPTRACE_PROBE_SHARE_WINDOWS, 1/16).  P is 0:
 *  - while the slow averages hold fewer than DAPTRACE_PROBE_FLOOR_MIN pages
 *    of tp or of fn: a recall near 1 (or 0) shows a stray fn (tp) now and
 *    then, which alone would lift the floor for dozens of windows each
 *    time where accessed pages are rare (a small hot set in much cold
 *    memory: 0.8 % of the probe pages accessed).  At the floor of 2, a
 *    recall of 0.9 over half-accessed memory shows 6 fn in 64 windows;
 *  - where P is above @max: not even the ceiling gives the pool its K
 *    (accessed memory a small share of the mapped: a = 2 %, r = 0.5 makes
 *    P = 300; or few windows in 10 s), and the bound decides, for the
 *    next DAPTRACE_PROBE_FLOOR_HOLD windows too; a larger probe_pages
 *    lets the floor act there.  This is also what ends the floor when the
 *    accesses stop: a falls faster than r's averages fade.
 * daptrace_probes_budget() keeps at least P probe pages a window, whatever
 * they cost.
 *
 * Where it matters.  The cost bound gives the probes 5 % of the worker's
 * CPU; where the regions are few and checked rarely that is 2 probe pages
 * a window, and a recall near 0.5 (coarse regions over mixed memory) was
 * then within 0.05 of the truth in 37-74 % of windows.  P is 12 there (r
 * 0.5, half the probe pages accessed, 100 windows in 10 s).
 *
 * Return: P, also in @ctx->budget.need.
 */
unsigned int daptrace_probes_precision(struct daptrace_ctx *ctx,
				       const struct daptrace_probe_counts *c,
				       unsigned int max, unsigned long aggr_us)
{
	struct daptrace_probe_budget *b = &ctx->budget;
	const unsigned int ws = DAPTRACE_PROBE_FLOOR_WINDOWS;
	const unsigned int wf = DAPTRACE_PROBE_SHARE_WINDOWS;
	const unsigned int scale = DAPTRACE_PROBE_FLOOR_SCALE;
	const u64 least = (u64)DAPTRACE_PROBE_FLOOR_MIN * scale;
	u64 asked = ctx->probe_slots, windows, k, d, need;
	bool first = !b->asked;

	if (!asked)
		return b->need;	/* no probe asked for: nothing new to go by */
	/*
	 * tp and fn start from nothing, not from the first window's counts:
	 * those would stand for DAPTRACE_PROBE_FLOOR_WINDOWS windows, and one
	 * miss among the first window's two probe pages would pass
	 * DAPTRACE_PROBE_FLOOR_MIN sixteen times over (a recall of 0.98 read
	 * as 0.5 for 15 s).  a is a ratio of two counts of the same windows:
	 * seeding both is exact.
	 */
	b->tp = daptrace_probe_avg(b->tp, (u64)c->tp * scale, ws, false);
	b->fn = daptrace_probe_avg(b->fn, (u64)c->fn * scale, ws, false);
	b->accessed = daptrace_probe_avg(b->accessed, ((u64)c->tp + c->fn) * scale,
					 wf, first);
	b->asked = daptrace_probe_avg(b->asked, asked * scale, wf, first);
	if (b->hold) {
		b->hold--;
		return b->need = 0;
	}
	if (b->tp < least || b->fn < least || !b->accessed)
		return b->need = 0;
	windows = clamp_t(u64, DAPTRACE_PROBE_POOL_US / max(aggr_us, 1UL), 1,
			  DAPTRACE_PROBE_POOL_MAX_WINDOWS);
	/*
	 * k = 2^10 K r (1 - r), then P = k / (2^10 a W), rounded up (to
	 * the nearest, the pool fell short of K: 200 of 216 at r = 0.9).
	 * Nothing overflows: tp + fn <= 64 * 64 * 256 = 2^20, so
	 * 2^10 K tp fn stays below 2^60 (tp fn <= (tp + fn)^2 / 4); k is
	 * below 2^20, asked below 2^18 (16 * 64 * 256), k asked below 2^38,
	 * and so is the divisor, accessed * W * 2^10.
	 */
	k = div64_u64((u64)DAPTRACE_PROBE_PRECISION_K * b->tp * b->fn * 1024,
		      (b->tp + b->fn) * (b->tp + b->fn));
	d = b->accessed * windows * 1024;
	need = DIV64_U64_ROUND_UP(k * b->asked, d);
	/*
	 * Beyond the ceiling no count reaches it: the bound decides, for
	 * DAPTRACE_PROBE_FLOOR_HOLD windows.  Without the hold a P just above
	 * the ceiling flapped: at 2 probe pages a window a is known to a
	 * third (a few accessed pages in the average), P read under the
	 * ceiling now and then, the count jumped to it, a measured there read
	 * P above it again, and back to 2: a third of the windows at the
	 * ceiling, the probes at 70 % of the worker's CPU against the 5 %
	 * bound, and still short of K.
	 */
	if (need > max) {
		b->hold = DAPTRACE_PROBE_FLOOR_HOLD;
		return b->need = 0;
	}
	return b->need = (unsigned int)need;
}

/**
 * daptrace_probes_budget() - the probes' cost bound: how many probe pages
 * the window that starts gets.
 * @ctx:	The context, between a window's end (its probes accounted)
 *		and the next one's daptrace_probes_pick(); @ctx->probe_slots
 *		still says how many the window that ended asked for.
 * @max:	The user's ceiling (probe_pages); 0: no probes.
 * @max_cpu_bp:	The bound: the probes' share of the worker's CPU time, in
 *		basis points; DAPTRACE_MAX_PROBE_MAX_CPU_BP: no bound.
 * @probe_ns:	The time of the probe work in the window that ended (what
 *		probe_us counts: wall time, so at least its CPU time).
 * @cpu_ns:	The worker's CPU time in that window, the probes' included.
 *
 * The bound is on the share that probe_us / worker_cpu_us reports, so the
 * law measures that share's two parts rather than predicting them: a
 * fixed ratio of a probe's cost to a region check's (a feed-forward from
 * regions * samples per window) would be wrong by a factor of 3 or more
 * somewhere.  What a probe page costs beside its two page walks (its 8 VMA
 * lookups, its share of a TLB flush) varies with the kernel (for the same
 * workload the probes' share was 5 % on 5.10 and 15 % on 7.3), the flush
 * policy (with tlb_flush none the probes flush alone) and the address
 * space (draws that land in gaps); and what the worker spends besides its
 * checks (aggregation, map updates, a flush per pass, wake-ups) dominates
 * where regions are few.
 *
 * The measure.  Per window, P the probe time, n the probe pages asked for
 * and O = cpu - P the worker's other CPU time, which does not depend on n.
 * The cost of a probe page is c = P / n.  The share of n probe pages is
 * then n c / (n c + O), within a bound b for n <= N(b) = b O / ((1 - b) c).
 * P, n and O are averaged over the last windows (exponentially, a window
 * weighing 1/DAPTRACE_PROBE_COST_WINDOWS), and the law takes the dearer of
 * that average and the last window alone: the smaller O, the larger c.  So
 * a rise in cost counts at once, and a fall only once it lasts.
 *
 * The law.  With F = min(DAPTRACE_PROBE_MIN_PAGES, @max), the first window
 * gets F (nothing is measured yet, and a start at @max could cost many
 * times the bound); after each window, with n the count in force:
 *
 *	n > N(b)		n <- N(3/4 b)			(too dear)
 *	n <= N(b / 2)		n <- min(2 n, N(3/4 b))		(cheap)
 *	else			n stays				(the band)
 *
 * with N rounded down, and n kept within [F, @max].  A cut aims at the
 * middle of the band; a rise stops at the first count inside it, so the
 * probes take between half the bound and all of it, less where a probe
 * page is a large part of that (a count is whole).
 *
 * Why it is stable.  The law has no integrator: a change is a function of
 * the measured costs, and those hardly depend on n (O not at all; c only
 * through the work that is the same for any number of probes, as a flush,
 * which makes c larger at small n).  With such a fixed part f besides v per
 * probe page, c measured at n is f / n + v and the step from n to N(3/4 b)
 * is n <- t n / (f + v n) (t = 3/4 b O / (1 - 3/4 b)): it rises with n and
 * lies between n and the fixed point n* = (t - f) / v, on whichever side n
 * is, closing the gap by the factor f / t < 1 each window, so it converges
 * without overshoot; where t <= f no count meets the bound and n falls to
 * F.  Noise moves the count only when O / c moves by more than the band
 * allows from where the last change put it: down by a quarter (at b = 5 %,
 * N(b) is 1.35 N(3/4 b)) or up by half (N(b / 2) is 0.66 N(3/4 b)); the
 * average keeps one window's luck from growing the count, and the
 * dearer-of-two rule makes noise err toward fewer probes, never more.  The
 * doubling limit keeps the count from jumping to @max on a cost seen for a
 * window or two.
 *
 * How fast.  A rise in cost shows in the last window: if the count no
 * longer meets the bound at the new cost, it is cut at the next window to
 * the count that meets 3/4 b at that cost, so only the window in which the
 * cost rose exceeds the bound (from the middle of the band that takes a
 * rise by more than a third; from its lower edge, by more than double).
 * A fall in cost raises the count by at most a doubling per window, as
 * fast as the average follows: from F to 64 in 5 windows or a few more.
 *
 * The floors.  F probe pages a window hold even where they cost more than
 * the bound, and so does the precision floor P (daptrace_probes_precision(),
 * at most @max): the count the estimate needs to be within +-0.04 at 95 %
 * over its pool.  The estimate is pooled over windows by probe pages, not
 * by windows (the CLI and the recall goal both sum tp and fn), so a count
 * that varies does not bias it.  F = 2 alone gives 200 probe pages at the
 * CLI's 10 s pool and 100 ms windows, an interval of about +-0.1 where half
 * of them are accessed: the bound left exactly that where regions are
 * few and checked rarely (10 regions, one check a window: 64 probe pages
 * took half the worker's CPU, so N(b) is a few probe pages or none), and
 * 37-74 % of windows had an estimate within 0.05 of the truth.  Where a
 * floor binds the worker does little else: its share is large only of
 * little.
 *
 * Return: the probe pages to ask daptrace_probes_pick() for; also in
 * @ctx->budget.nr.
 */
unsigned int daptrace_probes_budget(struct daptrace_ctx *ctx, unsigned int max,
				    unsigned long max_cpu_bp, u64 probe_ns,
				    u64 cpu_ns)
{
	struct daptrace_probe_budget *b = &ctx->budget;
	const unsigned int w = DAPTRACE_PROBE_COST_WINDOWS;
	unsigned int floor = min(max(DAPTRACE_PROBE_MIN_PAGES, b->need), max);
	u64 n = b->nr, cost, other, mid;

	if (!max || max_cpu_bp >= DAPTRACE_MAX_PROBE_MAX_CPU_BP)
		return b->nr = max;
	if (!b->nr)
		return b->nr = floor;

	/*
	 * No probe asked for in the window (no probed target had regions):
	 * it says nothing of their cost, and averaging it in would decay the
	 * probes' time and pages toward a ratio that reads them as free.
	 */
	if (!ctx->probe_slots)
		return b->nr;

	probe_ns = min_t(u64, probe_ns, DAPTRACE_PROBE_MAX_WINDOW_NS);
	cpu_ns = min_t(u64, cpu_ns, DAPTRACE_PROBE_MAX_WINDOW_NS);
	other = cpu_ns > probe_ns ? cpu_ns - probe_ns : 0;
	b->probe_ns = daptrace_probe_avg(b->probe_ns, probe_ns, w, !b->windows);
	b->slots = daptrace_probe_avg(b->slots,
				      (u64)ctx->probe_slots * DAPTRACE_PROBE_SLOTS_SCALE,
				      w, !b->windows);
	b->other_ns = daptrace_probe_avg(b->other_ns, other, w, !b->windows);
	b->windows = min(b->windows + 1, w);

	/* The dearer of the average and the last window (scaled as it). */
	cost = max(div64_u64(b->probe_ns * DAPTRACE_PROBE_SLOTS_SCALE, b->slots),
		   div64_u64(probe_ns, ctx->probe_slots));
	cost = max_t(u64, cost, 1);
	other = min(b->other_ns, w * other);

	mid = daptrace_probes_within(other, cost, max_cpu_bp * 3 / 4);
	if (n > daptrace_probes_within(other, cost, max_cpu_bp))
		n = mid;
	else if (n <= daptrace_probes_within(other, cost, max_cpu_bp / 2))
		n = min(2 * n, mid);
	b->nr = clamp_t(u64, n, floor, max);
	return b->nr;
}

/*
 * Is the recall @tp / @n on the far side of @g (basis points) beyond
 * doubt?  Wilson's score test, which is what "@g lies outside the Wilson
 * interval" means: (tp - n g)^2 > z^2 n g (1 - g), here scaled by 10000^2
 * and with z = 3 (99.7 %: the test is repeated window by window, see
 * daptrace_tune_recall()), in integers: @n is at most a few thousand, so
 * the square stays far below 2^64.
 */
static bool daptrace_recall_beyond(u64 tp, u64 n, u64 g, bool below)
{
	u64 d, lhs;

	if (below ? tp * 10000 >= g * n : tp * 10000 <= g * n)
		return false;
	d = below ? g * n - tp * 10000 : tp * 10000 - g * n;
	lhs = d * d;
	return lhs > 9 * n * g * (10000 - g);
}

/*
 * A window's counts, taken at @from samples per window, restated at @to so
 * that the merge and age thresholds of the aggregation that follows, and
 * the next window's comparison with this one, see one scale (DAMON rescales
 * the same way when its intervals change).  A count that was not 0 stays
 * not 0: "accessed in the window" must survive a halving.
 */
static unsigned int daptrace_rescale(unsigned int v, unsigned long from,
				     unsigned long to)
{
	if (!v)
		return 0;
	return (unsigned int)clamp_t(u64, div_u64((u64)v * to, (u32)from), 1, to);
}

static void daptrace_rescale_counts(struct daptrace_ctx *ctx,
				    unsigned long from, unsigned long to)
{
	struct daptrace_target *t;
	struct daptrace_region *r;

	daptrace_for_each_target(t, ctx) {
		if (t->exited)
			continue;
		daptrace_for_each_region(r, t) {
			r->nr_accesses = daptrace_rescale(r->nr_accesses, from, to);
			r->last_nr_accesses = daptrace_rescale(r->last_nr_accesses,
							       from, to);
			r->nr_unobserved = daptrace_rescale(r->nr_unobserved,
							    from, to);
		}
	}
}

/*
 * The recall goal's samples per window S when it leaves them at @s: the
 * sampling interval at the aggregation interval in force, and the user's
 * own when S is back where the tuning started (aggr_us / sample_us rounds
 * down, so aggr_us / S need not be it).
 */
static unsigned long daptrace_recall_sample_us(const struct daptrace_ctx *ctx,
					       unsigned long s)
{
	const struct daptrace_recall_tuner *rt = &ctx->recall;
	const struct daptrace_attrs *a = &ctx->attrs;

	if (s == rt->samples_floor && a->aggr_us == rt->aggr_us)
		return rt->sample_us;
	return a->aggr_us / s;
}

/**
 * daptrace_tune_recall() - the recall goal: tune the samples per window and
 * the region budget.
 * @ctx:	The context, at the end of a window whose counts are still in
 *		its regions, after daptrace_tune_intervals().
 * @c:		The window's probe counts.
 * @cpu_ns:	The worker's CPU time in the window.
 * @wall_ns:	The window's length.
 * @max_nr_regions: Receives the region budget to put in force.
 * @sample_us:	Receives the sampling interval to put in force; the
 *		aggregation interval stays as it is.
 *
 * The measure.  Windows are pooled, and after each one, once the pool holds
 * at least DAPTRACE_RECALL_MIN_WINDOWS windows and DAPTRACE_RECALL_MIN_PROBES
 * accessed probe pages (tp + fn = n), a decision is taken as soon as the
 * evidence for a step is clear, or at the latest at DAPTRACE_RECALL_PROBES
 * accessed pages (then possibly "unchanged"); after a decision the pool
 * starts anew, so no measurement serves two decisions and the windows after
 * a step are measured before the next one.  "Clear": the Wilson interval of
 * tp / n at z = 3 lies wholly on that side of the threshold
 * (daptrace_recall_beyond()); z = 3 rather than 2 because the test is
 * repeated after every window of a pool (a few dozen looks at most).
 *
 * The two actuators.  S = aggr_us / sample_us, the samples per window, and
 * B = max_nr_regions, the region budget.  A region reads accessed if any of
 * its S checks saw an access, so of a region whose pages are accessed with
 * probability f per sample the accessed memory it misses is (1 - f)^S: S
 * raises the recall even of regions that mix hot and cold memory.  B raises
 * it only through splits that merge/split keeps apart, which needs counts
 * with levels; with S = 1 every count is 0 or 1, the merge threshold is 1,
 * and an accessed region merges with an idle neighbour (measured: B 10 ->
 * 164 left the recall of alternating hot and cold 2 MiB blocks at 0.5).  The
 * cost is a check per region per sample, C ~ S * B: a doubling of S
 * doubles C, a budget step of 5/4 multiplies it by 5/4.
 *
 * The law.  G is the goal, h the hysteresis (DAPTRACE_RECALL_HYST_BP), C the
 * worker's CPU share over the pool and Cmax its bound, N
 * DAPTRACE_RECALL_MIN_SAMPLES; S0 and B0 (the floors) are S and B when the
 * tuning started, Smax = aggr_us / intervals_goal_min_sample_us (at most
 * DAPTRACE_MAX_SAMPLES_PER_AGGR), cap DAPTRACE_MAX_NR_REGIONS, Gs = max(G + h,
 * 1 - (1 - G)^2), and Sshort the largest S at which the recall was last
 * found below G (0: none):
 *
 *	C > Cmax		give back, the last actuator taken first:
 *				B > B0: B <- max(B0, 4/5 B),
 *				else S > S0: S <- max(S0, S / 2); Sshort <- 0
 *	recall < G (clear)	Sshort <- max(Sshort, S); take the first of
 *				  S < N:  S <- min(Smax, 2 S)
 *				  B < cap: B <- min(cap, 5/4 B + 1)
 *				  S <- min(Smax, 2 S)
 *				that is below its bound and that the CPU
 *				bound allows (2 C, 5/4 C <= Cmax)
 *	recall > G + h (clear), B > B0	B <- max(B0, 9/10 B)
 *	recall > Gs, S > S0		S <- max(S0, S / 2), but if S / 2
 *					  <= Sshort only at the W-th such
 *					  decision since Sshort was set
 *	else				unchanged
 *
 * "recall > Gs" is clear, or the estimate of a full pool: with G = 90 %,
 * Gs is 99 %, which no pool of DAPTRACE_RECALL_PROBES can show beyond
 * doubt (at z = 3 that takes 900 accessed probes, all found).  W starts
 * at DAPTRACE_RECALL_SHORT_WAIT, doubles (to at most
 * DAPTRACE_RECALL_MAX_SHORT_WAIT) when the decision after a give-back of
 * samples finds the recall below G, and is reset when it does not.
 *
 * Samples come first while a window has fewer than N (below N the merge
 * threshold, a tenth of the highest count, is floored at 1: the counts
 * cannot keep hot and mixed regions apart, so more regions do not help),
 * regions next, samples again once the budget is at its cap.  They are
 * given back in the reverse order, so the cheaper configuration that met
 * the goal is the one the loop returns to.
 *
 * Why it is stable.  Each actuator moves only on a fresh measurement, so
 * each step's effect is measured before the next (no integral wind-up,
 * dead time of one pool); it moves geometrically inside its bounds; noise
 * alone moves it rarely (0.13 % per look and side at z = 3); and each has a
 * band in which it holds.  The budget: recall does not fall as B grows, and
 * an up-step and a down-step make B * 5/4 * 9/10 = 1.125 B, so a cycle
 * would need the recall to rise by more than h over 12.5 % of budget and
 * fall back below G when B drops again: the hysteresis must exceed the
 * recall's sensitivity over one step, which 5 points does for a monotone
 * recall curve.  The samples: a factor of 2 can move the recall by far
 * more than h (a half-accessed region: 0.75 at S = 2, 0.94 at S = 4), so
 * their band comes from the miss model instead.  Halving S turns each
 * region's miss (1 - f)^S into at most (1 - f)^(S/2) (a sampling interval
 * twice as long sees an access at least as often), and the mean over
 * regions of square roots is at most the square root of the mean (Jensen):
 * the miss after a halving is at most the square root of the miss before.
 * From a recall above 1 - (1 - G)^2 a halving therefore lands at G or
 * above, where no up-step is taken.  The model leaves out the region
 * layout, which fewer samples coarsen (at S = 1 hot and idle neighbours
 * merge), and a full pool's estimate can pass Gs by chance; Sshort covers
 * both: an S at which the recall was found short is returned to only after
 * W decisions that found the recall comfortably above, and W doubles each
 * time such a return is found short again, so a wrong give-back recurs ever
 * more rarely (a probe, not a cycle: at most one decision in W spent short,
 * besides the pool that finds it).  The CPU bound overrides
 * everything (it is checked first, and an up-step that would cross it by
 * the proportional cost model is not taken), so the loop settles at the
 * cheapest configuration that meets the goal, or at the CPU bound with the
 * goal unmet, which the published estimate then shows.
 *
 * With the intervals goal.  The two goals share the sampling interval by
 * owning different coordinates of it: the intervals goal owns the time
 * scale (it scales sample_us and aggr_us together and never changes S),
 * the recall goal owns S (it changes sample_us at a fixed aggr_us and hands
 * the new S to the intervals goal, &daptrace_tuner.aggr_samples, which its
 * next step keeps).  Both stay within intervals_goal_min_sample_us.  The
 * intervals goal's measure, the share of checks that see an access, depends
 * on how long a sampling interval is, not on how many a window holds, so
 * its fixed point does not move with S (a step of S only disturbs it for
 * a tuning or two, after which aggr_us has followed S); the recall goal
 * then settles S at that time scale.  The coupling runs one way, so the
 * two loops cannot drive each other around in circles.
 *
 * Return: true if the budget or the sampling interval changes (to the
 * values given); the regions' counts are then restated at the new S.
 */
bool daptrace_tune_recall(struct daptrace_ctx *ctx,
			  const struct daptrace_probe_counts *c,
			  u64 cpu_ns, u64 wall_ns,
			  unsigned long *max_nr_regions, unsigned long *sample_us)
{
	struct daptrace_recall_tuner *rt = &ctx->recall;
	const struct daptrace_attrs *a = &ctx->attrs;
	unsigned long b = a->max_nr_regions, nb = b;
	unsigned long s, ns, smax, lo, probed;
	u64 n, g = a->recall_goal_bp, cmax = a->recall_max_cpu_bp, gs;
	u64 cpu, lim;
	bool s_ok, b_ok, short_now = false;

	*max_nr_regions = b;
	*sample_us = a->sample_us;
	if (!g)
		return false;
	/* validated: aggr_us >= sample_us > 0 */
	s = a->aggr_us / a->sample_us;
	if (!rt->floor) {
		rt->floor = b;
		rt->samples_floor = s;
		rt->sample_us = a->sample_us;
		rt->aggr_us = a->aggr_us;
		rt->short_wait = DAPTRACE_RECALL_SHORT_WAIT;
	}
	ns = s;
	rt->tp += c->tp;
	rt->fn += c->fn;
	rt->cpu_ns += cpu_ns;
	rt->wall_ns += wall_ns;
	rt->windows++;
	n = rt->tp + rt->fn;
	if (n < DAPTRACE_RECALL_MIN_PROBES || rt->windows < DAPTRACE_RECALL_MIN_WINDOWS ||
	    !rt->wall_ns)
		return false;

	lo = max(a->goal_min_sample_us, DAPTRACE_MIN_SAMPLE_US);
	smax = min(a->aggr_us / lo, DAPTRACE_MAX_SAMPLES_PER_AGGR);
	/* C compared with a share of Cmax: cpu / wall against cmax / 10000 */
	cpu = rt->cpu_ns * 10000;
	lim = cmax * rt->wall_ns;
	/* 1 - (1 - G)^2, in basis points, and at least G + h */
	gs = 10000 - (10000 - g) * (10000 - g) / 10000;
	gs = max(gs, g + DAPTRACE_RECALL_HYST_BP);

	if (cpu > lim) {
		if (b > rt->floor) {
			nb = max(rt->floor, b * 4 / 5);
		} else if (s > rt->samples_floor) {
			ns = max(rt->samples_floor, s / 2);
			rt->samples_short = 0;
		}
	} else if (daptrace_recall_beyond(rt->tp, n, g, true)) {
		short_now = true;
		rt->samples_short = max(rt->samples_short, s);
		rt->short_age = 0;
		s_ok = s < smax && cpu * 2 <= lim;
		b_ok = b < DAPTRACE_MAX_NR_REGIONS && cpu * 5 <= lim * 4;
		if (s_ok && s < DAPTRACE_RECALL_MIN_SAMPLES)
			ns = min(smax, s * 2);
		else if (b_ok)
			nb = min(DAPTRACE_MAX_NR_REGIONS, b * 5 / 4 + 1);
		else if (s_ok)
			ns = min(smax, s * 2);
	} else if (b > rt->floor && g + DAPTRACE_RECALL_HYST_BP < 10000 &&
		   daptrace_recall_beyond(rt->tp, n, g + DAPTRACE_RECALL_HYST_BP,
					  false)) {
		nb = max(rt->floor, b * 9 / 10);
	} else if (s > rt->samples_floor && gs < 10000 &&
		   (daptrace_recall_beyond(rt->tp, n, gs, false) ||
		    (n >= DAPTRACE_RECALL_PROBES && rt->tp * 10000 > gs * n))) {
		/* S / 2 was found short: wait, then try it again */
		if (s / 2 > rt->samples_short ||
		    ++rt->short_age >= rt->short_wait) {
			ns = max(rt->samples_floor, s / 2);
			if (ns <= rt->samples_short)
				rt->samples_short = 0;
			rt->short_age = 0;
		}
	} else if (n < DAPTRACE_RECALL_PROBES) {
		return false;	/* no clear evidence yet: measure on */
	}
	/* A give-back judged by the decision after it. */
	probed = rt->probed;
	rt->probed = ns < s ? ns : 0;
	if (probed == s && !short_now)
		rt->short_wait = DAPTRACE_RECALL_SHORT_WAIT;
	else if (probed == s)
		rt->short_wait = min(rt->short_wait * 2, DAPTRACE_RECALL_MAX_SHORT_WAIT);
	rt->tp = 0;
	rt->fn = 0;
	rt->cpu_ns = 0;
	rt->wall_ns = 0;
	rt->windows = 0;
	nb = max(nb, a->min_nr_regions);
	*max_nr_regions = nb;
	if (ns != s) {
		*sample_us = daptrace_recall_sample_us(ctx, ns);
		/* the S that sampling interval really gives */
		ns = a->aggr_us / *sample_us;
		daptrace_rescale_counts(ctx, s, ns);
		if (ctx->tuner.aggr_samples)
			ctx->tuner.aggr_samples = ns;
	}
	return nb != b || *sample_us != a->sample_us;
}

/**
 * daptrace_snapshot_fill() - copy the regions of all targets.
 * @ctx:	The context.
 * @recs:	Room for @max records.
 * @max:	Capacity of @recs.
 * @phys_addr:	Give the physical address of each region's last present
 *		sample; else DAPTRACE_NO_PHYS (it is opt-in: see the
 *		phys_addr attribute).
 *
 * Targets come in context order, regions in address order.  A target that
 * exited in the window being published still has the regions measured for it
 * (the worker frees them after the publish); earlier exited ones have none.
 *
 * Return: the number of records written, at most @max.
 */
unsigned int daptrace_snapshot_fill(const struct daptrace_ctx *ctx,
				    struct daptrace_region_rec *recs,
				    unsigned int max, bool phys_addr)
{
	const struct daptrace_target *t;
	const struct daptrace_region *r;
	unsigned int n = 0, i;

	daptrace_for_each_target(t, ctx) {
		daptrace_for_each_region(r, t) {
			if (n >= max)
				return n;
			recs[n].start = r->ar.start;
			recs[n].end = r->ar.end;
			recs[n].nr_accesses = r->nr_accesses;
			recs[n].age = r->age;
			recs[n].pid = t->pid_nr;
			recs[n].nr_unobserved = r->nr_unobserved;
			recs[n].phys_addr = !phys_addr ||
				r->last_pfn == DAPTRACE_NO_PFN ?
				DAPTRACE_NO_PHYS :
				(__u64)r->last_pfn * ctx->min_region_sz;
			recs[n].nr_present = r->nr_present;
			recs[n].nr_huge = r->nr_huge;
			for (i = 0; i < DAPTRACE_REC_NODES; i++)
				recs[n].node_samples[i] =
					i < DAPTRACE_NR_NODE_SLOTS ?
					r->node_samples[i] : 0;
			n++;
		}
	}
	return n;
}
