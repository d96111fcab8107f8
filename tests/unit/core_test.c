// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit tests of kernel/core.c: the region model, attribute validation,
 * three regions, splits, merges, ages, set_regions and snapshot assembly.
 *
 * The core is compiled unchanged against the shim in shim/linux/.  Tests run
 * with byte granularity (or a small power of two where alignment matters) and
 * a fixed-seed PRNG, so every run takes the same path.  Tables read as
 * "old regions / input / expected regions".
 */
#include <stdio.h>
#include <string.h>

#include "kselftest_harness.h"

#ifdef DAPTRACE_MEMCHECK
/*
 * The memcheck build runs under valgrind, some 30 times slower: the
 * statistical tests (100 simulated runs each) need more than the harness's
 * 30 s.  The timeout only catches a hang; no bound of a test changes.
 */
#undef TEST_TIMEOUT_DEFAULT
#define TEST_TIMEOUT_DEFAULT 900
#endif

#include <linux/limits.h>
#include <linux/minmax.h>
#include <linux/slab.h>
#include <linux/daptrace.h>
#include "core.h"

#define MAX_RGNS	64

/* ---- random sources -------------------------------------------------- */

struct prng {
	u64 s;
};

static u32 prng_next(struct prng *p)
{
	/* xorshift64 */
	p->s ^= p->s << 13;
	p->s ^= p->s >> 7;
	p->s ^= p->s << 17;
	return (u32)(p->s >> 32);
}

static u32 prng_rand(void *arg, u32 ceil)
{
	return (u32)(((u64)prng_next(arg) * ceil) >> 32);
}

/* Replays a fixed list of values (modulo the bound), for exact split tests. */
struct script {
	const u32 *vals;
	unsigned int nr, pos;
};

static u32 script_rand(void *arg, u32 ceil)
{
	struct script *sc = arg;

	return sc->vals[sc->pos++ % sc->nr] % ceil;
}

/* ---- helpers --------------------------------------------------------- */

struct rgn {
	unsigned long start, end;
	unsigned int nr, last, age;
};

static void ctx_setup(struct daptrace_ctx *ctx, unsigned long unit,
		      struct prng *p, u64 seed)
{
	p->s = seed;
	daptrace_ctx_init(ctx, unit, prng_rand, p);
	shim_alloc_budget = -1;
}

static struct daptrace_target *add_target(struct daptrace_ctx *ctx, int pid,
					  const struct rgn *rs, unsigned int n)
{
	struct daptrace_target *t = daptrace_target_new(pid, NULL);
	struct daptrace_region *r;
	unsigned int i;

	if (!t)
		abort();
	for (i = 0; i < n; i++) {
		r = daptrace_region_new(rs[i].start, rs[i].end);
		if (!r)
			abort();
		r->nr_accesses = rs[i].nr;
		r->last_nr_accesses = rs[i].last;
		r->age = rs[i].age;
		daptrace_add_region(t, r);
	}
	daptrace_add_target(ctx, t);
	return t;
}

static void ctx_fini(struct daptrace_ctx *ctx)
{
	struct daptrace_target *t, *next;

	daptrace_for_each_target_safe(t, next, ctx)
		daptrace_destroy_target(ctx, t);
}

/* The usual start of a test: seed 1, one target (pid 1) holding @rs. */
static struct daptrace_target *one_target(struct daptrace_ctx *ctx,
					  unsigned long unit, struct prng *p,
					  const struct rgn *rs, unsigned int n)
{
	ctx_setup(ctx, unit, p, 1);
	return add_target(ctx, 1, rs, n);
}

/* Read a target's regions into @out; returns how many (at most MAX_RGNS). */
static unsigned int dump(const struct daptrace_target *t, struct rgn *out)
{
	const struct daptrace_region *r;
	unsigned int n = 0;

	daptrace_for_each_region(r, t) {
		if (n == MAX_RGNS)
			break;
		out[n].start = r->ar.start;
		out[n].end = r->ar.end;
		out[n].nr = r->nr_accesses;
		out[n].last = r->last_nr_accesses;
		out[n].age = r->age;
		n++;
	}
	return n;
}

static void print_rgns(const char *what, const struct rgn *rs, unsigned int n)
{
	unsigned int i;

	fprintf(stderr, "#   %s:", what);
	for (i = 0; i < n; i++)
		fprintf(stderr, " [%lu,%lu)/%u/%u/%u", rs[i].start, rs[i].end,
			rs[i].nr, rs[i].last, rs[i].age);
	fprintf(stderr, "\n");
}

/* Compare boundaries, and the statistics too if @stats. */
static bool rgns_equal(const struct rgn *a, unsigned int na,
		       const struct rgn *b, unsigned int nb, bool stats)
{
	unsigned int i;

	if (na != nb)
		return false;
	for (i = 0; i < na; i++) {
		if (a[i].start != b[i].start || a[i].end != b[i].end)
			return false;
		if (stats && (a[i].nr != b[i].nr || a[i].last != b[i].last ||
			      a[i].age != b[i].age))
			return false;
	}
	return true;
}

static void expect_rgns(struct __test_metadata *_metadata, const char *name,
			const struct daptrace_target *t,
			const struct rgn *exp, unsigned int nr_exp, bool stats)
{
	struct rgn got[MAX_RGNS];
	unsigned int n = dump(t, got);

	if (!rgns_equal(got, n, exp, nr_exp, stats)) {
		TH_LOG("case '%s': regions differ", name);
		print_rgns("expected", exp, nr_exp);
		print_rgns("got     ", got, n);
		ASSERT_TRUE(false);
	}
	ASSERT_EQ(nr_exp, t->nr_regions);
}

/*
 * The structural invariants every operation must keep: regions non-empty,
 * sorted, disjoint, aligned to the granularity, the sampling address inside
 * its region, and nr_regions equal to the list length.
 */
static const char *check_ctx(const struct daptrace_ctx *ctx)
{
	const struct daptrace_target *t;
	const struct daptrace_region *r;
	unsigned long unit = ctx->min_region_sz, prev_end;
	unsigned int n, nt = 0;

	daptrace_for_each_target(t, ctx) {
		n = 0;
		prev_end = 0;
		nt++;
		daptrace_for_each_region(r, t) {
			if (r->ar.start >= r->ar.end)
				return "empty region";
			if (n && r->ar.start < prev_end)
				return "regions overlap or are unsorted";
			if (r->ar.start % unit || r->ar.end % unit)
				return "region not aligned to min_region_sz";
			if (r->sampling_addr < r->ar.start ||
			    r->sampling_addr >= r->ar.end)
				return "sampling_addr outside its region";
			prev_end = r->ar.end;
			n++;
		}
		if (n != t->nr_regions)
			return "nr_regions differs from the list length";
	}
	if (nt != ctx->nr_targets)
		return "nr_targets differs from the list length";
	return NULL;
}

#define ASSERT_VALID(ctx) do {						\
	const char *__why = check_ctx(ctx);				\
	if (__why)							\
		TH_LOG("invariant broken: %s", __why);			\
	ASSERT_EQ(NULL, __why);						\
} while (0)

/*
 * The end of a table case: @t holds exactly @exp (statistics too), the
 * invariants hold, and the context is freed for the next case.
 */
static void finish_case(struct __test_metadata *_metadata,
			struct daptrace_ctx *ctx, const char *name,
			const struct daptrace_target *t,
			const struct rgn *exp, unsigned int nr_exp)
{
	expect_rgns(_metadata, name, t, exp, nr_exp, true);
	ASSERT_VALID(ctx);
	ctx_fini(ctx);
}

/* ---- attributes ------------------------------------------------------ */

TEST(attrs_default_is_valid)
{
	struct daptrace_attrs a;

	daptrace_attrs_default(&a);
	ASSERT_EQ(0, daptrace_attrs_validate(&a));
	ASSERT_EQ(5000UL, a.sample_us);
	ASSERT_EQ(100000UL, a.aggr_us);
	ASSERT_EQ(1000000UL, a.update_us);
	ASSERT_EQ(10UL, a.min_nr_regions);
	ASSERT_EQ(1000UL, a.max_nr_regions);
	ASSERT_EQ(20U, daptrace_max_nr_accesses(&a));
}

TEST(attrs_validate)
{
	static const struct {
		const char *name;
		struct daptrace_attrs a;	/* sample aggr update min max */
		int ret;
	} cases[] = {
		{ "all zero", { 0, 0, 0, 0, 0 }, -EINVAL },
		{ "sample 0", { 0, 100000, 1000000, 10, 1000 }, -EINVAL },
		{ "sample below min", { 99, 100000, 1000000, 10, 1000 }, -EINVAL },
		{ "sample at min", { 100, 100000, 1000000, 10, 1000 }, 0 },
		{ "sample at max", { 10000000, 10000000, 10000000, 10, 1000 }, 0 },
		{ "sample above max",
		  { 10000001, 10000001, 10000001, 10, 1000 }, -EINVAL },
		{ "aggr 0", { 5000, 0, 1000000, 10, 1000 }, -EINVAL },
		{ "aggr below sample", { 5000, 4999, 1000000, 10, 1000 }, -EINVAL },
		{ "aggr == sample", { 5000, 5000, 1000000, 10, 1000 }, 0 },
		{ "aggr at max", { 5000, 100000000, 100000000, 10, 1000 }, 0 },
		{ "aggr above max",
		  { 5000, 100000001, 100000001, 10, 1000 }, -EINVAL },
		{ "update 0", { 5000, 100000, 0, 10, 1000 }, -EINVAL },
		{ "update below aggr", { 5000, 100000, 99999, 10, 1000 }, -EINVAL },
		{ "update == aggr", { 5000, 100000, 100000, 10, 1000 }, 0 },
		{ "update at max", { 5000, 100000, 3600000000UL, 10, 1000 }, 0 },
		{ "update above max",
		  { 5000, 100000, 3600000001UL, 10, 1000 }, -EINVAL },
		{ "samples/aggr at max", { 100, 10000000, 10000000, 10, 1000 }, 0 },
		{ "samples/aggr above max",
		  { 100, 10000100, 10000100, 10, 1000 }, -EINVAL },
		{ "min 0", { 5000, 100000, 1000000, 0, 1000 }, -EINVAL },
		{ "min 2", { 5000, 100000, 1000000, 2, 1000 }, -EINVAL },
		{ "min 3", { 5000, 100000, 1000000, 3, 1000 }, 0 },
		{ "max 0", { 5000, 100000, 1000000, 10, 0 }, -EINVAL },
		{ "max below min", { 5000, 100000, 1000000, 10, 9 }, -EINVAL },
		{ "max == min", { 5000, 100000, 1000000, 10, 10 }, 0 },
		{ "max at cap", { 5000, 100000, 1000000, 10, 20000 }, 0 },
		{ "max above cap", { 5000, 100000, 1000000, 10, 20001 }, -EINVAL },
		{ "min at cap", { 5000, 100000, 1000000, 20000, 20000 }, 0 },
		/* the intervals goal: sample aggr update min max bp aggrs lo hi */
		{ "goal off, sample outside its bounds",
		  { 5000, 100000, 1000000, 10, 1000, 400, 0, 100, 4000 }, 0 },
		{ "goal bounds reversed",
		  { 5000, 100000, 1000000, 10, 1000, 400, 0, 6000, 5000 }, -EINVAL },
		{ "goal aggrs above cap",
		  { 5000, 100000, 1000000, 10, 1000, 400, 1001, 5000, 10000000 }, -EINVAL },
		{ "goal on", { 5000, 100000, 1000000, 10, 1000, 400, 3, 5000, 10000000 }, 0 },
		{ "goal bp 0", { 5000, 100000, 1000000, 10, 1000, 0, 3, 5000, 10000000 }, -EINVAL },
		{ "goal bp 10000", { 5000, 100000, 1000000, 10, 1000, 10000, 3, 5000, 10000000 }, 0 },
		{ "goal bp 10001", { 5000, 100000, 1000000, 10, 1000, 10001, 3, 5000, 10000000 }, -EINVAL },
		{ "goal min below cap", { 5000, 100000, 1000000, 10, 1000, 400, 3, 99, 10000000 }, -EINVAL },
		{ "goal max above cap", { 5000, 100000, 1000000, 10, 1000, 400, 3, 5000, 10000001 }, -EINVAL },
		{ "goal sample below min", { 5000, 100000, 1000000, 10, 1000, 400, 3, 6000, 10000000 }, -EINVAL },
		{ "goal sample above max", { 5000, 100000, 1000000, 10, 1000, 400, 3, 100, 4000 }, -EINVAL },
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		struct daptrace_attrs a = cases[i].a;
		int ret;

		/* Cases that do not name the goal take its defaults. */
		if (!a.goal_access_bp && !a.goal_aggrs && !a.goal_min_sample_us &&
		    !a.goal_max_sample_us) {
			a.goal_access_bp = DAPTRACE_DEF_GOAL_ACCESS_BP;
			a.goal_min_sample_us = DAPTRACE_DEF_GOAL_MIN_SAMPLE_US;
			a.goal_max_sample_us = DAPTRACE_DEF_GOAL_MAX_SAMPLE_US;
		}
		/* and the recall goal's, off */
		a.recall_max_cpu_bp = DAPTRACE_DEF_RECALL_MAX_CPU_BP;
		ret = daptrace_attrs_validate(&a);

		if (ret != cases[i].ret)
			TH_LOG("case '%s'", cases[i].name);
		EXPECT_EQ(cases[i].ret, ret);
	}
}

TEST(max_nr_accesses)
{
	struct daptrace_attrs a = { 5000, 100000, 1000000, 10, 1000 };

	ASSERT_EQ(20U, daptrace_max_nr_accesses(&a));
	a.aggr_us = 104999;	/* rounds down */
	ASSERT_EQ(20U, daptrace_max_nr_accesses(&a));
	a.sample_us = 0;
	ASSERT_EQ(0U, daptrace_max_nr_accesses(&a));
}

/* ---- layout: the three regions ---------------------------------------- */

TEST(layout_three_regions)
{
	static const struct {
		const char *name;
		struct daptrace_addr_range maps[8];
		unsigned int nr;
		int ret;
		struct daptrace_addr_range exp[3];
	} cases[] = {
		{ "heap / libs / stack",
		  { { 0x1000, 0x3000 }, { 0x4000, 0x5000 },	/* text, heap */
		    { 0x100000, 0x101000 }, { 0x102000, 0x103000 }, /* mmap */
		    { 0x7f0000, 0x800000 } },			/* stack */
		  5, 3,
		  { { 0x1000, 0x5000 }, { 0x100000, 0x103000 },
		    { 0x7f0000, 0x800000 } } },
		{ "exactly three mappings",
		  { { 0, 10 }, { 20, 30 }, { 40, 50 } }, 3, 3,
		  { { 0, 10 }, { 20, 30 }, { 40, 50 } } },
		{ "equal gaps: the lower ones win",
		  { { 0, 10 }, { 20, 30 }, { 40, 50 }, { 60, 70 } }, 4, 3,
		  { { 0, 10 }, { 20, 30 }, { 40, 70 } } },
		{ "biggest gap first",
		  { { 0, 10 }, { 1000, 1010 }, { 1100, 1110 } }, 3, 3,
		  { { 0, 10 }, { 1000, 1010 }, { 1100, 1110 } } },
		{ "biggest gap last, results sorted by address",
		  { { 0, 10 }, { 20, 30 }, { 1000, 1010 }, { 1050, 1060 } },
		  4, 3,
		  { { 0, 30 }, { 1000, 1010 }, { 1050, 1060 } } },
		{ "second biggest gap first",
		  { { 0, 10 }, { 100, 110 }, { 120, 130 }, { 5000, 5010 } },
		  4, 3,
		  { { 0, 10 }, { 100, 130 }, { 5000, 5010 } } },
		{ "only two mappings: the two", { { 0, 10 }, { 20, 30 } }, 2, 2,
		  { { 0, 10 }, { 20, 30 } } },
		{ "one mapping: itself", { { 0, 10 } }, 1, 1, { { 0, 10 } } },
		{ "no mapping: nothing", { { 0, 0 } }, 0, 0 },
		{ "touching mappings leave one gap: two clusters",
		  { { 0, 10 }, { 10, 20 }, { 30, 40 } }, 3, 2,
		  { { 0, 20 }, { 30, 40 } } },
		{ "three clusters of touching mappings",
		  { { 0, 10 }, { 10, 20 }, { 100, 110 }, { 110, 120 },
		    { 5000, 5010 }, { 5010, 5020 } }, 6, 3,
		  { { 0, 20 }, { 100, 120 }, { 5000, 5020 } } },
		{ "overlapping mappings",
		  { { 0, 10 }, { 5, 20 }, { 30, 40 } }, 3, -EINVAL },
		{ "unsorted mappings",
		  { { 30, 40 }, { 0, 10 }, { 50, 60 } }, 3, -EINVAL },
		{ "empty mapping",
		  { { 0, 10 }, { 20, 20 }, { 30, 40 } }, 3, -EINVAL },
	};
	struct daptrace_addr_range out[3];
	unsigned int i, j;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		struct daptrace_layout l;
		int ret;

		daptrace_layout_init(&l);
		for (j = 0; j < cases[i].nr; j++)
			daptrace_layout_add(&l, cases[i].maps[j].start,
					    cases[i].maps[j].end);
		ret = daptrace_layout_ranges(&l, out);
		if (ret != cases[i].ret)
			TH_LOG("case '%s'", cases[i].name);
		ASSERT_EQ(cases[i].ret, ret);
		for (j = 0; j < (unsigned int)(ret > 0 ? ret : 0); j++) {
			if (out[j].start != cases[i].exp[j].start ||
			    out[j].end != cases[i].exp[j].end)
				TH_LOG("case '%s': range %u is [%lx,%lx)",
				       cases[i].name, j, out[j].start, out[j].end);
			EXPECT_EQ(cases[i].exp[j].start, out[j].start);
			EXPECT_EQ(cases[i].exp[j].end, out[j].end);
		}
	}
}

/* ---- evenly split ---------------------------------------------------- */

TEST(evenly_split)
{
	static const struct {
		const char *name;
		unsigned long unit;
		struct rgn old[3];
		unsigned int nr_old, idx, nr_pieces;
		int ret;
		struct rgn exp[8];
		unsigned int nr_exp;
	} cases[] = {
		{ "halves", 1, { { 0, 10 } }, 1, 0, 2, 0,
		  { { 0, 5 }, { 5, 10 } }, 2 },
		{ "last takes the remainder", 1, { { 0, 10 } }, 1, 0, 3, 0,
		  { { 0, 3 }, { 3, 6 }, { 6, 10 } }, 3 },
		{ "one piece is a no-op", 1, { { 0, 10 } }, 1, 0, 1, 0,
		  { { 0, 10 } }, 1 },
		{ "too small: one byte each", 1, { { 0, 3 } }, 1, 0, 5, 0,
		  { { 0, 1 }, { 1, 2 }, { 2, 3 } }, 3 },
		{ "pages, aligned down", 4096, { { 0, 5 * 4096 } }, 1, 0, 2, 0,
		  { { 0, 2 * 4096 }, { 2 * 4096, 5 * 4096 } }, 2 },
		{ "one page stays whole", 4096, { { 4096, 8192 } }, 1, 0, 4, 0,
		  { { 4096, 8192 } }, 1 },
		{ "three pages, ten wanted", 4096, { { 4096, 4 * 4096 } }, 1, 0,
		  10, 0,
		  { { 4096, 2 * 4096 }, { 2 * 4096, 3 * 4096 },
		    { 3 * 4096, 4 * 4096 } }, 3 },
		{ "statistics are inherited", 1, { { 0, 4, 5, 6, 7 } }, 1, 0, 2,
		  0, { { 0, 2, 5, 6, 7 }, { 2, 4, 5, 6, 7 } }, 2 },
		{ "middle region keeps the neighbours", 1,
		  { { 0, 10, 1 }, { 10, 20, 2 }, { 20, 30, 3 } }, 3, 1, 2, 0,
		  { { 0, 10, 1 }, { 10, 15, 2 }, { 15, 20, 2 }, { 20, 30, 3 } },
		  4 },
		{ "zero pieces", 1, { { 0, 10 } }, 1, 0, 0, -EINVAL,
		  { { 0, 10 } }, 1 },
	};
	struct daptrace_ctx ctx;
	struct prng p;
	unsigned int i, j;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		struct daptrace_target *t;
		struct daptrace_region *r;

		t = one_target(&ctx, cases[i].unit, &p, cases[i].old,
			       cases[i].nr_old);
		j = 0;
		daptrace_for_each_region(r, t)
			if (j++ == cases[i].idx)
				break;
		ASSERT_EQ(cases[i].ret,
			  daptrace_evenly_split_region(&ctx, t, r,
						       cases[i].nr_pieces));
		finish_case(_metadata, &ctx, cases[i].name, t, cases[i].exp,
			    cases[i].nr_exp);
	}
	ASSERT_EQ(0, shim_nr_live);
}

/* ---- init regions ---------------------------------------------------- */

TEST(init_regions_exact)
{
	static const struct {
		const char *name;
		unsigned long unit, min, max;
		struct daptrace_addr_range ranges[5];
		unsigned int nr_ranges;
		struct rgn exp[12];
		unsigned int nr_exp;
	} cases[] = {
		{ "one range into min pieces", 1, 10, 1000,
		  { { 0, 100 } }, 1,
		  { { 0, 10 }, { 10, 20 }, { 20, 30 }, { 30, 40 }, { 40, 50 },
		    { 50, 60 }, { 60, 70 }, { 70, 80 }, { 80, 90 }, { 90, 100 } },
		  10 },
		{ "three equal ranges: 4 + 3 + 3", 1, 10, 1000,
		  { { 0, 100 }, { 200, 300 }, { 1000, 1100 } }, 3,
		  { { 0, 25 }, { 25, 50 }, { 50, 75 }, { 75, 100 },
		    { 200, 233 }, { 233, 266 }, { 266, 300 },
		    { 1000, 1033 }, { 1033, 1066 }, { 1066, 1100 } }, 10 },
		{ "tiny ranges keep one region each", 4096, 10, 1000,
		  { { 0, 1000 * 4096 }, { 2000 * 4096, 2001 * 4096 },
		    { 3000 * 4096, 3010 * 4096 } }, 3,
		  { { 0, 125 * 4096 }, { 125 * 4096, 250 * 4096 },
		    { 250 * 4096, 375 * 4096 }, { 375 * 4096, 500 * 4096 },
		    { 500 * 4096, 625 * 4096 }, { 625 * 4096, 750 * 4096 },
		    { 750 * 4096, 875 * 4096 }, { 875 * 4096, 1000 * 4096 },
		    { 2000 * 4096, 2001 * 4096 },
		    { 3000 * 4096, 3010 * 4096 } }, 10 },
		{ "address space smaller than min", 1, 10, 1000,
		  { { 0, 2 }, { 10, 11 }, { 20, 22 } }, 3,
		  { { 0, 1 }, { 1, 2 }, { 10, 11 }, { 20, 21 }, { 21, 22 } }, 5 },
		{ "more ranges than max: one each", 1, 3, 3,
		  { { 0, 10 }, { 20, 30 }, { 40, 50 }, { 60, 70 }, { 80, 90 } },
		  5,
		  { { 0, 10 }, { 20, 30 }, { 40, 50 }, { 60, 70 }, { 80, 90 } },
		  5 },
		{ "aligned outwards", 4096, 3, 3,
		  { { 100, 5000 } }, 1,
		  { { 0, 4096 }, { 4096, 8192 } }, 2 },
		{ "ranges sharing a page after alignment", 4096, 3, 3,
		  { { 0, 100 }, { 200, 300 }, { 5000, 9000 } }, 3,
		  { { 0, 4096 }, { 4096, 8192 }, { 8192, 12288 } }, 3 },
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		struct daptrace_target *t;
		struct daptrace_ctx ctx;
		struct prng p;

		ctx_setup(&ctx, cases[i].unit, &p, 1);
		ctx.attrs.min_nr_regions = cases[i].min;
		ctx.attrs.max_nr_regions = cases[i].max;
		t = add_target(&ctx, 1, NULL, 0);
		ASSERT_EQ(0, daptrace_init_regions(&ctx, t, cases[i].ranges,
						   cases[i].nr_ranges));
		finish_case(_metadata, &ctx, cases[i].name, t, cases[i].exp,
			    cases[i].nr_exp);
	}
	ASSERT_EQ(0, shim_nr_live);
}

/*
 * Counts for many sizes and target numbers.  Each of N targets gets
 * want = min(ceil(min / N), max / N) regions, at least one per range and at
 * most one per granule: so all together reach min_nr_regions and stay within
 * max_nr_regions whenever the sizes and the number of ranges allow.
 */
TEST(init_regions_counts)
{
	static const unsigned long mins[] = { 3, 10, 17, 100, 999, 20000 };
	static const unsigned long maxs_add[] = { 0, 1, 50, 1000 };
	struct daptrace_addr_range ranges[3];
	unsigned int i, j, k, m, nr_tgts;
	struct prng p;

	p.s = 42;
	for (k = 0; k < 40; k++) {
		for (i = 0; i < ARRAY_SIZE(mins); i++) {
			for (j = 0; j < ARRAY_SIZE(maxs_add); j++) {
				unsigned long min = mins[i];
				unsigned long max = min + maxs_add[j];
				unsigned long units = 0, sz, base = 0, want;
				struct daptrace_target *t[3];
				struct daptrace_ctx ctx;
				struct prng p2;
				unsigned int n;

				if (max > DAPTRACE_MAX_NR_REGIONS)
					continue;
				ctx_setup(&ctx, 4096, &p2, 7);
				ctx.attrs.min_nr_regions = min;
				ctx.attrs.max_nr_regions = max;
				nr_tgts = 1 + k % 3;
				for (m = 0; m < nr_tgts; m++)
					t[m] = add_target(&ctx, m + 1, NULL, 0);
				for (m = 0; m < 3; m++) {
					/* 1 page .. 4 GiB, sometimes tiny */
					sz = 1 + prng_rand(&p, k % 2 ? 1000 : 1U << 20);
					base += (1 + prng_rand(&p, 1000)) * 4096UL;
					ranges[m].start = base;
					base += sz * 4096;
					ranges[m].end = base;
					units += sz;
				}
				for (m = 0; m < nr_tgts; m++)
					ASSERT_EQ(0, daptrace_init_regions(&ctx, t[m],
									   ranges, 3));
				ASSERT_VALID(&ctx);
				n = daptrace_nr_regions(&ctx);

				want = (min + nr_tgts - 1) / nr_tgts;
				if (want > max / nr_tgts)
					want = max / nr_tgts;
				if (want < 3)
					want = 3;
				if (want > units)
					want = units;
				if (n != want * nr_tgts)
					TH_LOG("min %lu max %lu units %lu targets %u: %u regions",
					       min, max, units, nr_tgts, n);
				ASSERT_EQ(want * nr_tgts, n);
				if (max >= 3 * nr_tgts)
					ASSERT_LE(n, max);
				if ((min + nr_tgts - 1) / nr_tgts <= max / nr_tgts)
					ASSERT_GE(n, min_t(unsigned long, min,
							   units * nr_tgts));
				ASSERT_EQ(units * 4096 * nr_tgts, daptrace_total_sz(&ctx));
				ctx_fini(&ctx);
			}
		}
	}
	ASSERT_EQ(0, shim_nr_live);
}

/* An exited target gets no share: the live one gets all of min_nr_regions. */
TEST(init_regions_share_ignores_exited)
{
	static const struct daptrace_addr_range ranges[] = { { 0, 1000 } };
	struct daptrace_target *live, *gone;
	struct daptrace_ctx ctx;
	struct prng p;

	ctx_setup(&ctx, 1, &p, 1);
	ctx.attrs.min_nr_regions = 10;
	ctx.attrs.max_nr_regions = 10;
	gone = add_target(&ctx, 1, NULL, 0);
	live = add_target(&ctx, 2, NULL, 0);
	gone->exited = true;
	ASSERT_EQ(1U, daptrace_nr_live_targets(&ctx));
	ASSERT_EQ(0, daptrace_init_regions(&ctx, live, ranges, 1));
	EXPECT_EQ(10U, live->nr_regions);
	ctx_fini(&ctx);
	ASSERT_EQ(0, shim_nr_live);
}

TEST(init_regions_bad_input)
{
	static const struct daptrace_addr_range unsorted[] = {
		{ 100, 200 }, { 0, 10 },
	};
	static const struct daptrace_addr_range empty[] = { { 10, 10 } };
	static const struct rgn old[] = { { 0, 10, 1 } };
	static const struct daptrace_addr_range ok[] = { { 0, 10 } };
	struct daptrace_target *t;
	struct daptrace_ctx ctx;
	struct prng p;

	t = one_target(&ctx, 1, &p, old, 1);
	ASSERT_EQ(-EINVAL, daptrace_init_regions(&ctx, t, ok, 0));
	ASSERT_EQ(-EINVAL, daptrace_init_regions(&ctx, t, unsorted, 2));
	ASSERT_EQ(-EINVAL, daptrace_init_regions(&ctx, t, empty, 1));
	expect_rgns(_metadata, "unchanged", t, old, 1, true);
	ctx_fini(&ctx);
	ASSERT_EQ(0, shim_nr_live);
}

/* ---- age, reset -------------------------------------------------------- */

TEST(update_age)
{
	static const struct {
		unsigned int nr, last, age, threshold, exp_age;
	} cases[] = {
		{ 10, 2, 5, 3, 0 },		/* big rise: reset */
		{ 2, 10, 5, 3, 0 },		/* big fall: reset */
		{ 10, 7, 5, 3, 6 },		/* within threshold: older */
		{ 10, 6, 5, 3, 0 },		/* just beyond */
		{ 0, 0, 0, 1, 1 },
		{ 3, 3, 100, 0, 101 },
		{ 5, 5, 0xffffffffU, 1, 0xffffffffU },	/* saturates */
	};
	struct rgn rs[ARRAY_SIZE(cases)];
	struct daptrace_region *r;
	struct daptrace_target *t, *gone;
	struct daptrace_ctx ctx;
	struct prng p;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		struct rgn one = { 0, 10, cases[i].nr, cases[i].last,
				   cases[i].age };

		t = one_target(&ctx, 1, &p, &one, 1);
		daptrace_update_age(&ctx, cases[i].threshold);
		r = list_first_entry(&t->regions, struct daptrace_region, list);
		EXPECT_EQ(cases[i].exp_age, r->age);
		ctx_fini(&ctx);
	}

	/* An exited target is left alone. */
	ctx_setup(&ctx, 1, &p, 1);
	memset(rs, 0, sizeof(rs));
	rs[0].end = 10;
	rs[0].age = 3;
	gone = add_target(&ctx, 2, rs, 1);
	gone->exited = true;
	daptrace_update_age(&ctx, 1);
	daptrace_reset_aggregated(&ctx);
	expect_rgns(_metadata, "exited", gone, rs, 1, true);
	ctx_fini(&ctx);
	ASSERT_EQ(0, shim_nr_live);
}

TEST(reset_aggregated)
{
	static const struct rgn old[] = { { 0, 10, 7, 3, 2 }, { 10, 20, 0, 9, 1 } };
	static const struct rgn exp[] = { { 0, 10, 0, 7, 2 }, { 10, 20, 0, 0, 1 } };
	struct daptrace_target *t;
	struct daptrace_ctx ctx;
	struct prng p;

	t = one_target(&ctx, 1, &p, old, 2);
	daptrace_reset_aggregated(&ctx);
	expect_rgns(_metadata, "reset", t, exp, 2, true);
	ctx_fini(&ctx);
}

/* ---- merge ----------------------------------------------------------- */

TEST(merge)
{
	static const struct {
		const char *name;
		struct rgn old[6];
		unsigned int nr_old, threshold;
		unsigned long sz_limit;
		struct rgn exp[6];
		unsigned int nr_exp;
	} cases[] = {
		{ "size-weighted statistics",
		  { { 0, 10, 4, 1, 2 }, { 10, 30, 1, 7, 8 } }, 2, 3, 100,
		  /* nr (40+20)/30, last (10+140)/30, age (20+160)/30 */
		  { { 0, 30, 2, 5, 6 } }, 1 },
		{ "difference above threshold",
		  { { 0, 10, 4 }, { 10, 30, 0 } }, 2, 3, 100,
		  { { 0, 10, 4 }, { 10, 30, 0 } }, 2 },
		{ "difference equal to threshold",
		  { { 0, 10, 4 }, { 10, 30, 1 } }, 2, 3, 100,
		  { { 0, 30, 2 } }, 1 },
		{ "combined size above limit",
		  { { 0, 10, 4 }, { 10, 30, 4 } }, 2, 3, 29,
		  { { 0, 10, 4 }, { 10, 30, 4 } }, 2 },
		{ "combined size at limit",
		  { { 0, 10, 4 }, { 10, 30, 4 } }, 2, 3, 30,
		  { { 0, 30, 4 } }, 1 },
		{ "never across a gap",
		  { { 0, 10, 4 }, { 11, 30, 4 } }, 2, 3, 100,
		  { { 0, 10, 4 }, { 11, 30, 4 } }, 2 },
		{ "chains until a different one",
		  { { 0, 10, 5 }, { 10, 20, 5 }, { 20, 30, 5 }, { 30, 40, 9 } },
		  4, 1, 100,
		  { { 0, 30, 5 }, { 30, 40, 9 } }, 2 },
		{ "chains until the size limit",
		  { { 0, 10, 5 }, { 10, 20, 5 }, { 20, 30, 5 }, { 30, 40, 5 },
		    { 40, 50, 5 } }, 5, 1, 20,
		  { { 0, 20, 5 }, { 20, 40, 5 }, { 40, 50, 5 } }, 3 },
		{ "against 0, half the threshold: 2 stays apart",
		  { { 0, 10, 0 }, { 10, 30, 2 } }, 2, 3, 100,
		  { { 0, 10, 0 }, { 10, 30, 2 } }, 2 },
		{ "against 0, half the threshold: 1 merges",
		  { { 0, 10, 1 }, { 10, 30, 0 } }, 2, 3, 100,
		  { { 0, 30, 0 } }, 1 },
		{ "against 0, a threshold of 1 is kept",
		  { { 0, 10, 0 }, { 10, 30, 1 } }, 2, 1, 100,
		  { { 0, 30, 0 } }, 1 },
		{ "zero threshold merges only equal counts",
		  { { 0, 10, 5 }, { 10, 20, 5 }, { 20, 30, 6 } }, 3, 0, 100,
		  { { 0, 20, 5 }, { 20, 30, 6 } }, 2 },
	};
	struct daptrace_ctx ctx;
	struct prng p;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		struct daptrace_target *t;

		t = one_target(&ctx, 1, &p, cases[i].old, cases[i].nr_old);
		daptrace_merge_regions(&ctx, cases[i].threshold,
				       cases[i].sz_limit);
		finish_case(_metadata, &ctx, cases[i].name, t, cases[i].exp,
			    cases[i].nr_exp);
	}
	ASSERT_EQ(0, shim_nr_live);
}

TEST(merge_not_across_targets)
{
	static const struct rgn a[] = { { 0, 10, 3 } };
	static const struct rgn b[] = { { 10, 20, 3 } };
	struct daptrace_target *ta, *tb;
	struct daptrace_ctx ctx;
	struct prng p;

	ctx_setup(&ctx, 1, &p, 1);
	ctx.attrs.max_nr_regions = 1;	/* even under pressure */
	ta = add_target(&ctx, 1, a, 1);
	tb = add_target(&ctx, 2, b, 1);
	daptrace_merge_regions(&ctx, 1, 1000);
	expect_rgns(_metadata, "a", ta, a, 1, true);
	expect_rgns(_metadata, "b", tb, b, 1, true);
	ctx_fini(&ctx);
}

TEST(merge_weights_do_not_overflow)
{
	struct rgn old[2] = {
		{ 0, 1UL << 60, 100000, 100000, 0xfffffffeU },
		{ 1UL << 60, 1UL << 61, 0, 0, 0 },
	};
	struct daptrace_region *r;
	struct daptrace_target *t;
	struct daptrace_ctx ctx;
	struct prng p;

	if (sizeof(long) < 8)
		SKIP(return, "needs a 64-bit unsigned long");
	t = one_target(&ctx, 1, &p, old, 2);
	daptrace_merge_regions(&ctx, 0xffffffffU, ~0UL);
	ASSERT_EQ(1U, t->nr_regions);
	r = list_first_entry(&t->regions, struct daptrace_region, list);
	ASSERT_EQ(50000U, r->nr_accesses);
	ASSERT_EQ(50000U, r->last_nr_accesses);
	ASSERT_EQ(0x7fffffffU, r->age);
	ctx_fini(&ctx);
}

/* DAMON's loop: the threshold doubles while there are too many regions. */
TEST(merge_threshold_loop)
{
	struct rgn old[MAX_RGNS];
	struct daptrace_target *t;
	struct daptrace_ctx ctx;
	struct prng p;
	unsigned int i;

	ctx_setup(&ctx, 1, &p, 1);
	ctx.attrs.min_nr_regions = 3;
	ctx.attrs.max_nr_regions = 10;
	/* 60 regions alternating cold and hot: 0 and 20 (the maximum) */
	memset(old, 0, sizeof(old));
	for (i = 0; i < 60; i++) {
		old[i].start = i * 10;
		old[i].end = i * 10 + 10;
		old[i].nr = i % 2 ? 20 : 0;
	}
	t = add_target(&ctx, 1, old, 60);
	daptrace_merge_regions(&ctx, 2, 600 / 3);
	ASSERT_VALID(&ctx);
	ASSERT_LE(t->nr_regions, 10U);
	ASSERT_EQ(600UL, daptrace_total_sz(&ctx));
	/* 20 regions of 10 bytes fit the 200-byte limit: 3 regions. */
	ASSERT_EQ(3U, t->nr_regions);

	/* Below max_nr_regions the threshold is not raised. */
	ctx_fini(&ctx);
	t = one_target(&ctx, 1, &p, old, 60);
	daptrace_merge_regions(&ctx, 2, 600 / 3);
	ASSERT_EQ(60U, t->nr_regions);
	ctx_fini(&ctx);
	ASSERT_EQ(0, shim_nr_live);
}

/*
 * The threshold loop goes on until even the halved threshold (against a
 * region with no access) covers every count: 0 next to the maximum merges
 * before the size-limit fallback is needed.
 */
TEST(merge_threshold_loop_reaches_zero_pairs)
{
	static const struct rgn old[] = {
		{ 0, 10, 0 }, { 10, 20, 20 }, { 20, 30, 0 }, { 30, 40, 20 },
	};
	struct daptrace_target *t;
	struct daptrace_ctx ctx;
	struct prng p;

	ctx_setup(&ctx, 1, &p, 1);
	ctx.attrs.min_nr_regions = 3;
	ctx.attrs.max_nr_regions = 3;
	t = add_target(&ctx, 1, old, 4);
	daptrace_merge_regions(&ctx, 2, 20);
	ASSERT_VALID(&ctx);
	/* 20-byte limit kept: the pairs merged by count, not by the fallback */
	ASSERT_EQ(2U, t->nr_regions);
	ctx_fini(&ctx);
	ASSERT_EQ(0, shim_nr_live);
}

/*
 * One target of 12 adjacent 10-byte regions from 0, each with @nr accesses,
 * in a context bounded to exactly 10 regions: two over max_nr_regions.
 */
static struct daptrace_target *twelve_over_ten(struct daptrace_ctx *ctx,
					       struct prng *p, unsigned int nr)
{
	struct rgn old[12];
	unsigned int i;

	ctx_setup(ctx, 1, p, 1);
	ctx->attrs.min_nr_regions = 10;
	ctx->attrs.max_nr_regions = 10;
	memset(old, 0, sizeof(old));
	for (i = 0; i < ARRAY_SIZE(old); i++) {
		old[i].start = i * 10;
		old[i].end = i * 10 + 10;
		old[i].nr = nr;
	}
	return add_target(ctx, 1, old, ARRAY_SIZE(old));
}

/* When the size limit blocks every merge, max_nr_regions still holds. */
TEST(merge_size_limit_fallback)
{
	struct daptrace_target *t;
	struct daptrace_ctx ctx;
	struct prng p;

	t = twelve_over_ten(&ctx, &p, 3);
	daptrace_merge_regions(&ctx, 2, 120 / 10);
	ASSERT_VALID(&ctx);
	ASSERT_EQ(6U, t->nr_regions);
	ASSERT_EQ(120UL, daptrace_total_sz(&ctx));
	ctx_fini(&ctx);
}

/* Neighbours on different NUMA nodes stay apart, unless over max_nr_regions. */
TEST(merge_keeps_nodes_apart)
{
	static const struct rgn old[] = {
		{ 0, 10, 3 }, { 10, 20, 3 }, { 20, 30, 3 }, { 30, 40, 3 },
	};
	/* main node of each region's samples; -1: no present sample */
	static const int node[] = { 0, 0, 1, -1 };
	static const struct rgn want[] = { { 0, 20, 3 }, { 20, 40, 3 } };
	struct daptrace_region *r;
	struct daptrace_target *t;
	struct daptrace_ctx ctx;
	struct prng p;
	unsigned int i = 0;

	t = one_target(&ctx, 1, &p, old, 4);
	daptrace_for_each_region(r, t) {
		if (node[i] >= 0) {
			r->nr_present = 2;
			r->node_samples[node[i]] = 2;
		}
		i++;
	}
	daptrace_merge_regions(&ctx, 1, 1000);
	expect_rgns(_metadata, "by node", t, want, 2, false);

	/* max_nr_regions stays a hard bound: placement gives way. */
	ctx.attrs.max_nr_regions = 1;
	daptrace_merge_regions(&ctx, 1, 1000);
	ASSERT_EQ(1U, t->nr_regions);
	ctx_fini(&ctx);
}

/*
 * Regions the module could not observe stay apart from observed ones of the
 * same count: an unknown averaged into "not accessed" would read as cold.
 */
TEST(merge_keeps_unobserved_apart)
{
	static const struct rgn old[] = {
		{ 0, 10, 0 }, { 10, 20, 0 }, { 20, 30, 0 }, { 30, 40, 0 },
	};
	static const unsigned int unobserved[] = { 0, 0, 20, 20 };
	static const struct rgn want[] = { { 0, 20, 0 }, { 20, 40, 0 } };
	struct daptrace_region *r;
	struct daptrace_target *t;
	struct daptrace_ctx ctx;
	struct prng p;
	unsigned int i = 0;

	t = one_target(&ctx, 1, &p, old, 4);
	daptrace_for_each_region(r, t)
		r->nr_unobserved = unobserved[i++];
	daptrace_merge_regions(&ctx, 1, 1000);
	expect_rgns(_metadata, "by observability", t, want, 2, false);
	r = list_last_entry(&t->regions, struct daptrace_region, list);
	EXPECT_EQ(20U, r->nr_unobserved);

	/* max_nr_regions stays a hard bound: observability gives way. */
	ctx.attrs.max_nr_regions = 1;
	daptrace_merge_regions(&ctx, 1, 1000);
	ASSERT_EQ(1U, t->nr_regions);
	r = list_first_entry(&t->regions, struct daptrace_region, list);
	EXPECT_EQ(10U, r->nr_unobserved) TH_LOG("size-weighted");
	ctx_fini(&ctx);
}

/*
 * Unobserved checks count as neither access nor none; a window's reset
 * forgets them, and the checks skipped while a target did not run are
 * unobserved only for a target none of whose checks can be observed.
 */
/*
 * Probe candidates: DAPTRACE_PROBE_DRAWS per probe, each draw once, sorted,
 * each inside its own region, none in an exited target's, spread by size
 * (a region of 9/10 of the bytes gets most of them).
 */
TEST(probes_pick)
{
	static const struct rgn a[] = { { 0, 100, 0 }, { 100, 1000, 0 } };
	static const struct rgn b[] = { { 5000, 5010, 0 } };
	struct daptrace_probe probes[DAPTRACE_MAX_PROBE_DRAWS];
	bool drawn[DAPTRACE_MAX_PROBE_DRAWS] = {};
	struct daptrace_target *ta, *tb, *tc;
	struct daptrace_ctx ctx;
	unsigned int i, in_big = 0;
	struct prng p;

	ctx_setup(&ctx, 1, &p, 3);
	EXPECT_EQ(0U, daptrace_probes_pick(&ctx, 8)) TH_LOG("no room given");
	ctx.probes = probes;
	EXPECT_EQ(0U, daptrace_probes_pick(&ctx, 8)) TH_LOG("no regions");
	ta = add_target(&ctx, 1, a, 2);
	tc = add_target(&ctx, 3, b, 1);
	tc->exited = true;
	tb = add_target(&ctx, 2, b, 1);
	ASSERT_EQ(DAPTRACE_MAX_PROBE_DRAWS,
		  daptrace_probes_pick(&ctx, DAPTRACE_MAX_PROBE_PAGES + 5));
	EXPECT_EQ(DAPTRACE_MAX_PROBE_DRAWS, ctx.nr_probes);
	EXPECT_EQ(DAPTRACE_MAX_PROBE_PAGES, ctx.probe_slots);
	for (i = 0; i < ctx.nr_probes; i++) {
		struct daptrace_probe *q = &probes[i];

		ASSERT_TRUE(q->t == ta || q->t == tb);
		EXPECT_GE(q->addr, q->r->ar.start);
		EXPECT_LT(q->addr, q->r->ar.end);
		EXPECT_EQ(DAPTRACE_PROBE_OLD, q->seen);
		ASSERT_LT(q->draw, DAPTRACE_MAX_PROBE_DRAWS);
		EXPECT_FALSE(drawn[q->draw]);
		drawn[q->draw] = true;
		if (i)
			EXPECT_TRUE((probes[i - 1].t == q->t &&
				     probes[i - 1].addr <= q->addr) ||
				    (probes[i - 1].t == ta && q->t == tb));
		in_big += q->r->ar.start == 100;
	}
	/* 900 of 1010 units: expect 1825 of 2048 (sd 14), far from 1024 or 2048 */
	EXPECT_GT(in_big, 1750U);
	EXPECT_LT(in_big, 1900U);
	ctx_fini(&ctx);
}

/*
 * A target that did not run in DAPTRACE_PROBE_QUIET_WINDOWS windows in a row
 * gets no probe; one quiet for fewer (running now and then) still does.  With
 * every target long quiet there are none, nor probe slots (the cost bound
 * sees no probe asked for).
 */
TEST(probes_skip_long_quiet_targets)
{
	static const struct rgn a[] = { { 0, 100, 0 } };
	static const struct rgn b[] = { { 1000, 5000, 0 } };
	struct daptrace_probe probes[DAPTRACE_MAX_PROBE_DRAWS];
	unsigned int i, in_a = 0, in_b = 0;
	struct daptrace_target *ta, *tb;
	struct daptrace_ctx ctx;
	struct prng p;

	ctx_setup(&ctx, 1, &p, 5);
	ctx.probes = probes;
	ta = add_target(&ctx, 1, a, 1);
	tb = add_target(&ctx, 2, b, 1);
	tb->quiet = true;
	tb->idle_windows = DAPTRACE_PROBE_QUIET_WINDOWS - 1;
	ASSERT_EQ(64U * DAPTRACE_PROBE_DRAWS, daptrace_probes_pick(&ctx, 64));
	for (i = 0; i < ctx.nr_probes; i++)
		in_b += probes[i].t == tb;
	EXPECT_LT(0U, in_b) TH_LOG("quiet for a few windows: still probed");
	tb->idle_windows = DAPTRACE_PROBE_QUIET_WINDOWS;
	ASSERT_EQ(64U * DAPTRACE_PROBE_DRAWS, daptrace_probes_pick(&ctx, 64));
	for (i = 0; i < ctx.nr_probes; i++)
		in_a += probes[i].t == ta;
	EXPECT_EQ(ctx.nr_probes, in_a) TH_LOG("long quiet: %u probes in it",
					      ctx.nr_probes - in_a);
	EXPECT_TRUE(daptrace_probes_wanted(&ctx));
	ta->idle_windows = UINT_MAX;
	EXPECT_FALSE(daptrace_probes_wanted(&ctx)) TH_LOG("all long quiet");
	EXPECT_EQ(0U, daptrace_probes_pick(&ctx, 64)) TH_LOG("all long quiet");
	EXPECT_EQ(0U, ctx.nr_probes);
	EXPECT_EQ(0U, ctx.probe_slots);
	ctx_fini(&ctx);
}

/*
 * The candidates' sort on spans from one unit to 2^50: sorted, inside their
 * regions, over both regions of a span whose top bits alone tell them apart.
 */
TEST(probes_pick_sorts_any_span)
{
	static const struct rgn one[] = { { 7, 8, 0 } };
	static const struct rgn wide[] = { { 0, 1UL << 50, 0 },
					   { 1UL << 50, (1UL << 50) + 1000, 0 } };
	struct daptrace_probe probes[64 * DAPTRACE_PROBE_DRAWS];
	struct daptrace_ctx ctx;
	unsigned int i, low = 0;
	struct prng p;

	ctx_setup(&ctx, 1, &p, 9);
	ctx.probes = probes;
	add_target(&ctx, 1, one, 1);
	ASSERT_EQ(ARRAY_SIZE(probes), daptrace_probes_pick(&ctx, 64));
	for (i = 0; i < ctx.nr_probes; i++)
		EXPECT_EQ(7UL, probes[i].addr);
	ctx_fini(&ctx);

	ctx_setup(&ctx, 1, &p, 10);
	ctx.probes = probes;
	add_target(&ctx, 1, wide, 2);
	ASSERT_EQ(ARRAY_SIZE(probes), daptrace_probes_pick(&ctx, 64));
	for (i = 0; i < ctx.nr_probes; i++) {
		EXPECT_GE(probes[i].addr, probes[i].r->ar.start);
		EXPECT_LT(probes[i].addr, probes[i].r->ar.end);
		if (i)
			EXPECT_LE(probes[i - 1].addr, probes[i].addr);
		low += probes[i].addr < (1UL << 49);
	}
	/* half below 2^49 (sd 11) */
	EXPECT_GT(low, 200U);
	EXPECT_LT(low, 312U);
	ctx_fini(&ctx);
}

/*
 * Selection: with the low half of the bytes unmapped, every probe kept is
 * in the high half, at most one per probe (its first mapped draw), nearly
 * every probe finds one (all eight draws unmapped: 1/256), and the kept ones
 * spread over the mapped half as uniformly as draws do; the sorted order
 * stays.  Nothing unmapped: each probe keeps its first draw.
 */
TEST(probes_select)
{
	static const struct rgn a[] = { { 0, 1000, 0 }, { 1000, 2000, 0 } };
	struct daptrace_probe probes[64 * DAPTRACE_PROBE_DRAWS];
	unsigned int i, n, w, kept = 0, upper = 0, picked = 0;
	struct daptrace_ctx ctx;
	struct prng p;

	ctx_setup(&ctx, 1, &p, 5);
	ctx.probes = probes;
	add_target(&ctx, 1, a, 2);
	for (w = 0; w < 100; w++) {
		bool slot[64] = {};

		ASSERT_EQ(ARRAY_SIZE(probes), daptrace_probes_pick(&ctx, 64));
		for (i = 0; i < ctx.nr_probes; i++)
			if (probes[i].addr < 1000)
				probes[i].seen = DAPTRACE_PROBE_UNMAPPED;
		n = daptrace_probes_select(&ctx);
		ASSERT_EQ(n, ctx.nr_probes);
		for (i = 0; i < ctx.nr_probes; i++) {
			const struct daptrace_probe *q = &probes[i];

			ASSERT_GE(q->addr, 1000U);
			EXPECT_FALSE(slot[q->draw % 64]);
			slot[q->draw % 64] = true;
			if (i)
				EXPECT_LE(probes[i - 1].addr, q->addr);
			upper += q->addr >= 1500;
		}
		kept += ctx.nr_probes;
	}
	/* 6400 probes, 6375 expected (sd 5) */
	EXPECT_GT(kept, 6350U);
	EXPECT_LE(kept, 6400U);
	/* half of those above 1500 (sd 39) */
	EXPECT_GT(upper, kept / 2 - 150);
	EXPECT_LT(upper, kept / 2 + 150);

	daptrace_probes_pick(&ctx, 64);
	ASSERT_EQ(64U, daptrace_probes_select(&ctx));
	for (i = 0; i < 64; i++)
		picked += probes[i].draw < 64;
	EXPECT_EQ(64U, picked) TH_LOG("the first draws stay");
	ctx_fini(&ctx);
}

/* Truth against claims: the four cells, and unobserved apart. */
TEST(probes_account)
{
	static const struct rgn a[] = { { 0, 10, 3 }, { 10, 20, 0 }, { 20, 30, 0 } };
	struct daptrace_probe probes[6];
	struct daptrace_probe_counts c = {};
	struct daptrace_region *r[3];
	struct daptrace_target *t;
	struct daptrace_ctx ctx;
	struct prng p;

	ctx_setup(&ctx, 1, &p, 3);
	t = add_target(&ctx, 1, a, 3);
	r[0] = list_first_entry(&t->regions, struct daptrace_region, list);
	r[1] = list_next_entry(r[0], list);
	r[2] = list_next_entry(r[1], list);
	r[2]->nr_unobserved = 20;	/* every check of the window */
	probes[0] = (struct daptrace_probe){ t, r[0], 1, 0, DAPTRACE_PROBE_YOUNG };
	probes[1] = (struct daptrace_probe){ t, r[0], 2, 0, DAPTRACE_PROBE_OLD };
	probes[2] = (struct daptrace_probe){ t, r[1], 11, 0, DAPTRACE_PROBE_YOUNG };
	probes[3] = (struct daptrace_probe){ t, r[1], 12, 0, DAPTRACE_PROBE_OLD };
	probes[4] = (struct daptrace_probe){ t, r[1], 13, 0, DAPTRACE_PROBE_UNOBSERVED };
	probes[5] = (struct daptrace_probe){ t, r[2], 21, 0, DAPTRACE_PROBE_YOUNG };
	ctx.probes = probes;
	ctx.nr_probes = 6;
	daptrace_probes_account(&ctx, 20, &c);
	EXPECT_EQ(6U, c.nr);
	EXPECT_EQ(1U, c.tp);
	EXPECT_EQ(1U, c.fp);
	EXPECT_EQ(1U, c.fn);
	EXPECT_EQ(1U, c.tn);
	EXPECT_EQ(2U, c.unobserved) TH_LOG("unreadable truth, region without a verdict");
	/* Some checks observed: the region's "not accessed" is a verdict. */
	r[2]->nr_unobserved = 19;
	memset(&c, 0, sizeof(c));
	daptrace_probes_account(&ctx, 20, &c);
	EXPECT_EQ(2U, c.fn);
	EXPECT_EQ(1U, c.unobserved);
	ctx_fini(&ctx);
}

/* ---- the probes' cost bound (daptrace_probes_budget()) --------------- */

/*
 * What the worker's windows cost, in ns: the probe work is @fixed (the
 * same for any number of probe pages, as a flush of their own) plus
 * @per_probe per probe page asked for; the rest of the worker's CPU time,
 * @other, comes from the regions' checks and the per-window work, and
 * does not depend on the probes.  The values are of the order measured
 * under the emulator: a region check (check + prepare) ~1.35 us, a probe
 * page (two walks, 8 VMA lookups) ~2.5 us, ~50 us of other work a window.
 */
struct cost_model {
	const char *name;
	u64 per_probe;
	u64 fixed;
	u64 other;
};

#define REGION_CHECK_NS	1350ULL
#define WINDOW_NS	50000ULL
/* @r regions checked @s times a window. */
#define OTHER_NS(r, s)	((r) * (s) * REGION_CHECK_NS + WINDOW_NS)

static const struct cost_model hotcold = { "hotcold: 100 regions, 20 checks",
					   2500, 5000, OTHER_NS(100, 20) };
static const struct cost_model blocks = { "blocks: 300 regions, 20 checks",
					  2500, 5000, OTHER_NS(300, 20) };
static const struct cost_model coarse = { "coarse: 10 regions, 1 check",
					  2500, 5000, OTHER_NS(10, 1) };

/* What a run of windows showed: the sums are probe_us and worker_cpu_us. */
struct budget_run {
	u64 probe_ns, cpu_ns;
	unsigned int lo, hi;		/* fewest and most probe pages a window */
	unsigned int changes;		/* windows whose count differs from the one before */
	unsigned int over;		/* windows whose probes cost more than the bound */
	unsigned int most_up;		/* largest factor of a rise, in percent */
};

static void budget_run_init(struct budget_run *run)
{
	memset(run, 0, sizeof(*run));
	run->lo = U32_MAX;
}

/* @v moved by up to +-@pct percent, at random. */
static u64 noisy(struct prng *p, u64 v, unsigned int pct)
{
	if (!pct)
		return v;
	return v * (100 - pct + prng_rand(p, 2 * pct + 1)) / 100;
}

/*
 * @k windows at the counts the law gives, as the worker runs them: each
 * window's probe work and CPU time fed to the law before the next is
 * picked.  The law's first call (when monitoring starts) comes first if it
 * has not been made.
 */
static void budget_windows(struct daptrace_ctx *ctx, const struct cost_model *m,
			   unsigned int max, unsigned long bp, unsigned int k,
			   struct prng *noise, unsigned int pct, struct budget_run *run)
{
	if (!ctx->budget.nr)
		daptrace_probes_budget(ctx, max, bp, 0, 0);
	while (k--) {
		unsigned int n = ctx->budget.nr, next;
		u64 probe = n ? noisy(noise, m->fixed + m->per_probe * n, pct) : 0;
		u64 cpu = noisy(noise, m->other, pct) + probe;

		ctx->probe_slots = n;	/* as daptrace_probes_pick() leaves it */
		run->probe_ns += probe;
		run->cpu_ns += cpu;
		run->lo = min(run->lo, n);
		run->hi = max(run->hi, n);
		run->over += probe * 10000 > bp * cpu;
		next = daptrace_probes_budget(ctx, max, bp, probe, cpu);
		run->changes += next != n;
		if (n && next > n)
			run->most_up = max(run->most_up, next * 100 / n);
	}
}

/* The run's share of the worker's CPU, in basis points, rounded up. */
static u64 budget_share_bp(const struct budget_run *run)
{
	return (run->probe_ns * 10000 + run->cpu_ns - 1) / run->cpu_ns;
}

/*
 * From the start, under each cost model, the count converges, stays within
 * the bound over the run (the share probe_us / worker_cpu_us reports) and
 * in every window once settled, and is never above probe_pages nor below
 * the floor; where the bound leaves room it is used (at least half of it).
 */
TEST(probes_budget_converges)
{
	/* per probe page / fixed / other, and where the count must end */
	static const struct {
		struct cost_model m;
		unsigned int lo, hi;
	} cases[] = {
		{ hotcold, 30, 50 },
		{ blocks, 64, 64 },
		{ coarse, 2, 2 },
		/* probes flushing alone (tlb_flush none): dear at any count */
		{ { "own flush: 30 us a window", 2500, 30000, OTHER_NS(100, 20) }, 15, 30 },
		/* 3 times dearer against the checks (7.3 against 5.10) */
		{ { "dear probes: 7.5 us each", 7500, 5000, OTHER_NS(100, 20) }, 10, 20 },
		/* fewer samples a window (auto-tuned intervals) */
		{ { "76 regions, 5 checks", 2500, 5000, OTHER_NS(76, 5) }, 3, 8 },
	};
	const unsigned long bp = DAPTRACE_DEF_PROBE_MAX_CPU_BP;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		const struct cost_model *m = &cases[i].m;
		struct budget_run run, tail;
		struct daptrace_ctx ctx;
		struct prng p;
		u64 share;

		ctx_setup(&ctx, 1, &p, 1);
		budget_run_init(&run);
		budget_windows(&ctx, m, 64, bp, 50, NULL, 0, &run);
		budget_run_init(&tail);
		budget_windows(&ctx, m, 64, bp, 50, NULL, 0, &tail);
		share = budget_share_bp(&tail);
		TH_LOG("%s: %u probe pages a window, %llu bp of the worker's CPU "
		       "(%llu bp over the first 50 windows)", m->name, ctx.budget.nr,
		       (unsigned long long)share,
		       (unsigned long long)budget_share_bp(&run));
		EXPECT_EQ(0U, tail.changes) TH_LOG("%s: settled after 50 windows", m->name);
		EXPECT_LE(cases[i].lo, tail.lo) TH_LOG("%s", m->name);
		EXPECT_GE(cases[i].hi, tail.hi) TH_LOG("%s", m->name);
		EXPECT_LE(DAPTRACE_PROBE_MIN_PAGES, run.lo) TH_LOG("%s: the floor", m->name);
		EXPECT_GE(64U, run.hi) TH_LOG("%s: the ceiling", m->name);
		if (tail.lo == DAPTRACE_PROBE_MIN_PAGES)
			continue;	/* the floor holds whatever it costs */
		EXPECT_GE(bp, budget_share_bp(&run)) TH_LOG("%s: within the bound from the start",
							    m->name);
		EXPECT_EQ(0U, run.over + tail.over) TH_LOG("%s: no window over the bound",
							   m->name);
		/* one probe page more would cost at least half the bound */
		if (tail.hi < 64)
			EXPECT_LE(bp / 2, (m->fixed + m->per_probe * (tail.hi + 1)) * 10000 /
				  (m->other + m->fixed + m->per_probe * (tail.hi + 1)))
				TH_LOG("%s: uses the room it has", m->name);
	}
}

/* The first window, the ceiling, the floor, no bound, nothing measurable. */
TEST(probes_budget_limits)
{
	const unsigned long bp = DAPTRACE_DEF_PROBE_MAX_CPU_BP;
	static const struct cost_model free_probes = { "free", 0, 0, OTHER_NS(100, 20) };
	struct budget_run run;
	struct daptrace_ctx ctx;
	struct prng p;

	ctx_setup(&ctx, 1, &p, 1);
	EXPECT_EQ(DAPTRACE_PROBE_MIN_PAGES, daptrace_probes_budget(&ctx, 64, bp, 0, 0))
		TH_LOG("the first window, with nothing measured, gets the floor");
	/* nothing asked for (no live target had regions): nothing to go by */
	ctx.probe_slots = 0;
	EXPECT_EQ(DAPTRACE_PROBE_MIN_PAGES, daptrace_probes_budget(&ctx, 64, bp, 0, 1000000));

	/* a ceiling below the floor: the ceiling */
	ctx_setup(&ctx, 1, &p, 1);
	budget_run_init(&run);
	budget_windows(&ctx, &blocks, 1, bp, 20, NULL, 0, &run);
	EXPECT_EQ(1U, run.lo);
	EXPECT_EQ(1U, run.hi);
	ctx_setup(&ctx, 1, &p, 1);
	EXPECT_EQ(0U, daptrace_probes_budget(&ctx, 0, bp, 0, 0)) TH_LOG("probe_pages 0");

	/* no bound: probe_pages every window, even the coarse ones */
	ctx_setup(&ctx, 1, &p, 1);
	budget_run_init(&run);
	budget_windows(&ctx, &coarse, 64, DAPTRACE_MAX_PROBE_MAX_CPU_BP, 20, NULL, 0, &run);
	EXPECT_EQ(64U, run.lo);
	EXPECT_EQ(64U, run.hi);

	/* probes too cheap to measure: up to the ceiling, a doubling a window */
	ctx_setup(&ctx, 1, &p, 1);
	budget_run_init(&run);
	budget_windows(&ctx, &free_probes, 200, bp, 8, NULL, 0, &run);
	EXPECT_EQ(200U, ctx.budget.nr);
	EXPECT_GE(200U, run.most_up);

	/* the largest bound short of none, the smallest, on a dear window */
	ctx_setup(&ctx, 1, &p, 1);
	budget_run_init(&run);
	budget_windows(&ctx, &hotcold, 256, DAPTRACE_MAX_PROBE_MAX_CPU_BP - 1, 20, NULL, 0, &run);
	EXPECT_EQ(256U, ctx.budget.nr);
	ctx_setup(&ctx, 1, &p, 1);
	budget_run_init(&run);
	budget_windows(&ctx, &hotcold, 256, 1, 20, NULL, 0, &run);
	EXPECT_EQ(DAPTRACE_PROBE_MIN_PAGES, run.hi);

	/* windows of the longest kind, the dearest probes: no overflow */
	ctx_setup(&ctx, 1, &p, 1);
	daptrace_probes_budget(&ctx, 256, bp, 0, 0);
	ctx.probe_slots = DAPTRACE_PROBE_MIN_PAGES;
	EXPECT_EQ(DAPTRACE_PROBE_MIN_PAGES,
		  daptrace_probes_budget(&ctx, 256, bp, U64_MAX, U64_MAX));
	ctx_setup(&ctx, 1, &p, 1);
	daptrace_probes_budget(&ctx, 256, bp, 0, 0);
	ctx.probe_slots = DAPTRACE_PROBE_MIN_PAGES;
	EXPECT_EQ(4U, daptrace_probes_budget(&ctx, 256, bp, 1, U64_MAX))
		TH_LOG("cheap beyond measure: a doubling a window at most");
	ctx.probe_slots = 4;
	EXPECT_EQ(8U, daptrace_probes_budget(&ctx, 256, 9999, 1, U64_MAX))
		TH_LOG("the largest bound short of none: the largest quotient");
	ctx.probe_slots = 8;
	EXPECT_EQ(DAPTRACE_PROBE_MIN_PAGES,
		  daptrace_probes_budget(&ctx, 256, 9999, U64_MAX, U64_MAX))
		TH_LOG("the probes' time all of the worker's: cut to the floor");
}

/*
 * The precision floor (daptrace_probes_precision()): @k windows under cost
 * model @m in which a share @a_pm (per mille) of the probe pages is
 * accessed and a share @r_pm of those lies in accessed regions, counted
 * exactly over the run (the fractions carried from window to window).
 * Returns the accessed probe pages of the last @pool windows.
 */
static u64 precision_windows(struct daptrace_ctx *ctx, const struct cost_model *m,
			     unsigned int max, unsigned int k, unsigned int a_pm,
			     unsigned int r_pm, unsigned long aggr_us, unsigned int pool,
			     unsigned int *hi)
{
	const unsigned long bp = DAPTRACE_DEF_PROBE_MAX_CPU_BP;
	u64 acc_carry = 0, tp_carry = 0, pooled = 0;
	unsigned int i;

	*hi = 0;

	if (!ctx->budget.nr)
		daptrace_probes_budget(ctx, max, bp, 0, 0);
	for (i = 0; i < k; i++) {
		unsigned int n = ctx->budget.nr, acc, tp;
		u64 probe = n ? m->fixed + m->per_probe * n : 0;
		struct daptrace_probe_counts c = { .nr = n };

		acc_carry += (u64)n * a_pm;
		acc = acc_carry / 1000;
		acc_carry %= 1000;
		tp_carry += (u64)acc * r_pm;
		tp = tp_carry / 1000;
		tp_carry %= 1000;
		c.tp = tp;
		c.fn = acc - tp;
		c.tn = n - acc;
		if (i >= k - pool)
			pooled += acc;
		ctx->probe_slots = n;
		daptrace_probes_precision(ctx, &c, max, aggr_us);
		daptrace_probes_budget(ctx, max, bp, probe, m->other + probe);
		*hi = max(*hi, ctx->budget.nr);
	}
	return pooled;
}

/*
 * Coarse regions over half-accessed memory (a recall of 0.5, half the probe
 * pages accessed): the cost bound alone leaves the floor of 2 probe pages a
 * window, 100 accessed ones in the CLI's 10 s pool, an interval of +-0.1.
 * The precision floor raises the count until a pool holds the 600 that
 * make it +-0.04 at 95 %, whatever the probes cost; not where even
 * probe_pages would fall short (long windows, rare accessed pages) but
 * with a larger probe_pages; back down once nothing is accessed; and not
 * at all where the recall reads 1, nor on a stray miss among rare
 * accessed pages.
 */
TEST(probes_precision_floor)
{
	/* 100 ms windows: 100 of them in a pool */
	const unsigned long aggr_us = 100000;
	struct daptrace_ctx ctx;
	unsigned int hi;
	struct prng p;
	u64 pooled;

	ctx_setup(&ctx, 1, &p, 1);
	pooled = precision_windows(&ctx, &coarse, 64, 300, 500, 500, aggr_us, 100, &hi);
	TH_LOG("coarse, recall 0.5: %u probe pages a window, %llu accessed in a pool",
	       ctx.budget.nr, (unsigned long long)pooled);
	EXPECT_EQ(12U, ctx.budget.nr);
	EXPECT_LE(600U, pooled) TH_LOG("the interval within +-0.04");
	/* then nothing accessed: back to the cost bound's count */
	precision_windows(&ctx, &coarse, 64, 200, 0, 500, aggr_us, 100, &hi);
	EXPECT_EQ(0U, ctx.budget.need);
	EXPECT_EQ(DAPTRACE_PROBE_MIN_PAGES, ctx.budget.nr) TH_LOG("nothing accessed");

	/*
	 * A recall of 0.9: 216 accessed probe pages needed, at the steady
	 * state (P rounded to the nearest gave 4 a window there: 200).
	 */
	ctx_setup(&ctx, 1, &p, 1);
	pooled = precision_windows(&ctx, &coarse, 64, 800, 500, 900, aggr_us, 100, &hi);
	EXPECT_LE(216U, pooled) TH_LOG("recall 0.9: %u a window", ctx.budget.nr);
	EXPECT_GE(6U, ctx.budget.nr);

	/* 1 s windows: 10 in a pool, 120 a window needed: beyond 64, within 128 */
	ctx_setup(&ctx, 1, &p, 1);
	precision_windows(&ctx, &coarse, 64, 200, 500, 500, 1000000, 10, &hi);
	EXPECT_EQ(DAPTRACE_PROBE_MIN_PAGES, ctx.budget.nr) TH_LOG("out of reach");
	ctx_setup(&ctx, 1, &p, 1);
	precision_windows(&ctx, &coarse, 128, 200, 500, 500, 1000000, 10, &hi);
	/* rounded up: the averages' own rounding may add one */
	EXPECT_LE(120U, ctx.budget.nr) TH_LOG("probe_pages 128");
	EXPECT_GE(121U, ctx.budget.nr);
	/* accessed memory 2 % of the probe pages: 300 needed, the bound decides */
	ctx_setup(&ctx, 1, &p, 1);
	precision_windows(&ctx, &hotcold, 64, 400, 20, 500, aggr_us, 100, &hi);
	EXPECT_LE(30U, ctx.budget.nr);
	EXPECT_GE(50U, hi);
	/*
	 * 1 ms windows: the CLI pools at most 1024 of them, not 10000:
	 * 600 / (0.1 x 1024) = 6 a window (600 / (0.1 x 10000): 1, under the
	 * floor of 2).
	 */
	ctx_setup(&ctx, 1, &p, 1);
	precision_windows(&ctx, &coarse, 64, 3000, 100, 500, 1000, 1024, &hi);
	EXPECT_EQ(6U, ctx.budget.nr);

	/* every accessed probe page in an accessed region: the bound alone */
	ctx_setup(&ctx, 1, &p, 1);
	precision_windows(&ctx, &coarse, 64, 100, 500, 1000, aggr_us, 100, &hi);
	EXPECT_EQ(DAPTRACE_PROBE_MIN_PAGES, ctx.budget.nr);
	/* nothing accessed */
	ctx_setup(&ctx, 1, &p, 1);
	precision_windows(&ctx, &coarse, 64, 100, 0, 500, aggr_us, 100, &hi);
	EXPECT_EQ(DAPTRACE_PROBE_MIN_PAGES, ctx.budget.nr);

	/* fine regions, where the bound gives many: unchanged by the floor */
	ctx_setup(&ctx, 1, &p, 1);
	precision_windows(&ctx, &hotcold, 64, 100, 250, 950, aggr_us, 100, &hi);
	EXPECT_LE(30U, ctx.budget.nr);
	EXPECT_GE(50U, ctx.budget.nr);
	/* a small hot set (1 % accessed), one miss in 100: no jump to the ceiling */
	ctx_setup(&ctx, 1, &p, 1);
	precision_windows(&ctx, &hotcold, 64, 1000, 10, 990, aggr_us, 100, &hi);
	EXPECT_GE(50U, hi) TH_LOG("a stray miss raised the count to %u", hi);
}

/*
 * The cost bound's average of the probe pages asked for follows a rise to
 * within 1 %: kept unscaled, 2 then 4 a window read 13 of 16 (an average
 * whose decay rounds up stops up to a window's weight short), and a probe
 * page 23 % dearer than it was.
 */
TEST(probes_budget_slots_average)
{
	const unsigned long bp = DAPTRACE_DEF_PROBE_MAX_CPU_BP;
	const u64 want = 4ULL * DAPTRACE_PROBE_COST_WINDOWS * DAPTRACE_PROBE_SLOTS_SCALE;
	struct daptrace_ctx ctx;
	struct prng p;
	unsigned int i;

	ctx_setup(&ctx, 1, &p, 1);
	daptrace_probes_budget(&ctx, 64, bp, 0, 0);
	for (i = 0; i < 100; i++) {
		ctx.probe_slots = i < 10 ? 2 : 4;
		daptrace_probes_budget(&ctx, 64, bp, 1000, 1000000);
	}
	TH_LOG("slots average %llu of %llu", (unsigned long long)ctx.budget.slots,
	       (unsigned long long)want);
	EXPECT_LE(want * 99, ctx.budget.slots * 100);
	EXPECT_GE(want, ctx.budget.slots);
}

/*
 * Near the ceiling and at the start.  A P just above probe_pages (a = 9.2 %,
 * r = 0.5: P = 69 of 64) is out of reach, but at 2 probe pages a window a
 * is known to a third and P read under 64 now and then: the count jumped to
 * 64, a measured there put P above it again, back to 2; 674 of 2800
 * windows at 64, the probes at 70 % of the worker's CPU.  Once out of
 * reach the floor now stays off DAPTRACE_PROBE_FLOOR_HOLD windows.  And one
 * miss among the first window's probe pages (a recall of 0.98) stood for
 * 64 windows of misses: the count rose to 12 and stayed above 2 for 15 s.
 */
TEST(probes_precision_floor_steady)
{
	const unsigned long bp = DAPTRACE_DEF_PROBE_MAX_CPU_BP;
	/* the first accessed probe page a hit (the carry), as precision_windows() */
	u64 acc_carry = 0, tp_carry = 999;
	unsigned int i, hi, at_max = 0, n, acc, tp;
	struct daptrace_ctx ctx;
	struct prng p;

	ctx_setup(&ctx, 1, &p, 1);
	daptrace_probes_budget(&ctx, 64, bp, 0, 0);
	for (i = 0; i < 3000; i++) {
		struct daptrace_probe_counts c = { .nr = ctx.budget.nr };
		u64 probe;

		n = ctx.budget.nr;
		probe = coarse.fixed + coarse.per_probe * n;
		acc_carry += (u64)n * 92;
		acc = acc_carry / 1000;
		acc_carry %= 1000;
		tp_carry += (u64)acc * 500;
		tp = tp_carry / 1000;
		tp_carry %= 1000;
		c.tp = tp;
		c.fn = acc - tp;
		c.tn = n - acc;
		ctx.probe_slots = n;
		daptrace_probes_precision(&ctx, &c, 64, 100000);
		daptrace_probes_budget(&ctx, 64, bp, probe, coarse.other + probe);
		at_max += i >= 200 && ctx.budget.nr == 64;
	}
	TH_LOG("P near the ceiling: %u of 2800 windows at 64", at_max);
	EXPECT_GE(2800U / DAPTRACE_PROBE_FLOOR_HOLD, at_max);

	/* the first accessed probe page a miss, the rest at 0.98 */
	ctx_setup(&ctx, 1, &p, 1);
	daptrace_probes_budget(&ctx, 64, DAPTRACE_DEF_PROBE_MAX_CPU_BP, 0, 0);
	n = ctx.budget.nr;
	{
		struct daptrace_probe_counts c = { .nr = n, .fn = 1, .tn = n - 1 };

		ctx.probe_slots = n;
		daptrace_probes_precision(&ctx, &c, 64, 100000);
	}
	EXPECT_EQ(0U, ctx.budget.need) TH_LOG("one miss");
	precision_windows(&ctx, &coarse, 64, 300, 500, 980, 100000, 1, &hi);
	EXPECT_GE(2U, hi) TH_LOG("a first miss raised the count to %u", hi);
}

/*
 * Windows that asked for no probe page (no probed target had regions) tell
 * the law nothing: after a stretch of them the count is the one it had.
 * Averaged in, they decayed the probes' time toward a few ns over a few
 * slots (rounded down, the slots never reached 0), a probe page read as
 * free, and the count doubled.
 */
TEST(probes_budget_unchanged_without_probes)
{
	const unsigned long bp = DAPTRACE_DEF_PROBE_MAX_CPU_BP;
	struct budget_run run;
	struct daptrace_ctx ctx;
	struct prng p;
	unsigned int settled, i;

	ctx_setup(&ctx, 1, &p, 1);
	budget_run_init(&run);
	budget_windows(&ctx, &hotcold, 64, bp, 40, NULL, 0, &run);
	settled = ctx.budget.nr;
	EXPECT_GT(64U, settled);
	for (i = 0; i < 40; i++) {
		ctx.probe_slots = 0;
		daptrace_probes_budget(&ctx, 64, bp, 0, hotcold.other);
	}
	EXPECT_EQ(settled, ctx.budget.nr) TH_LOG("nothing asked: nothing to go by");
}

/*
 * The count follows the cost both ways: it is cut at the next window when
 * the cost rises (only the window in which it rose is over the bound), and
 * comes back up, by at most a doubling a window, when it falls.
 */
TEST(probes_budget_follows_cost)
{
	const unsigned long bp = DAPTRACE_DEF_PROBE_MAX_CPU_BP;
	struct cost_model dearer = hotcold;
	struct budget_run run;
	struct daptrace_ctx ctx;
	struct prng p;
	unsigned int settled;

	ctx_setup(&ctx, 1, &p, 1);
	budget_run_init(&run);
	budget_windows(&ctx, &hotcold, 64, bp, 40, NULL, 0, &run);
	settled = ctx.budget.nr;
	EXPECT_GT(64U, settled);

	/* the targets go quiet: the worker's other work collapses */
	budget_run_init(&run);
	budget_windows(&ctx, &coarse, 64, bp, 1, NULL, 0, &run);
	EXPECT_EQ(1U, run.over) TH_LOG("the window in which the cost rose");
	EXPECT_EQ(DAPTRACE_PROBE_MIN_PAGES, ctx.budget.nr) TH_LOG("cut at once");
	budget_windows(&ctx, &coarse, 64, bp, 20, NULL, 0, &run);
	EXPECT_EQ(DAPTRACE_PROBE_MIN_PAGES, run.lo);
	EXPECT_EQ(DAPTRACE_PROBE_MIN_PAGES, ctx.budget.nr);

	/* the cost falls: back up, a doubling a window at most */
	budget_run_init(&run);
	budget_windows(&ctx, &blocks, 64, bp, 12, NULL, 0, &run);
	EXPECT_EQ(64U, ctx.budget.nr) TH_LOG("back at the ceiling within 12 windows");
	EXPECT_GE(200U, run.most_up);
	EXPECT_EQ(0U, run.over);

	/*
	 * The first cost again: from above, the count is cut to the middle
	 * of the band, where from below it stopped at its lower edge.
	 */
	budget_windows(&ctx, &hotcold, 64, bp, 40, NULL, 0, &run);
	TH_LOG("hotcold: %u probe pages from below, %u from above", settled,
	       ctx.budget.nr);
	EXPECT_LE(settled, ctx.budget.nr);
	settled = ctx.budget.nr;
	budget_run_init(&run);
	budget_windows(&ctx, &hotcold, 64, bp, 10, NULL, 0, &run);
	EXPECT_EQ(0U, run.changes);
	EXPECT_GE(bp, budget_share_bp(&run));
	EXPECT_LE(bp / 2, budget_share_bp(&run));

	/* each probe page three times dearer: cut at the next window */
	dearer.per_probe *= 3;
	budget_run_init(&run);
	budget_windows(&ctx, &dearer, 64, bp, 40, NULL, 0, &run);
	EXPECT_GE(1U, run.over);
	EXPECT_GT(settled, ctx.budget.nr);
	EXPECT_GE(bp, budget_share_bp(&run));
}

/*
 * Window-to-window noise of +-20 % on both the probes' time and the rest
 * (preemption, a map update, a busy mmap_lock) neither moves a settled
 * count up and down nor takes the run over the bound.
 */
TEST(probes_budget_holds_under_noise)
{
	const unsigned long bp = DAPTRACE_DEF_PROBE_MAX_CPU_BP;
	struct budget_run run;
	struct daptrace_ctx ctx;
	struct prng p, noise = { 42 };

	ctx_setup(&ctx, 1, &p, 1);
	budget_run_init(&run);
	budget_windows(&ctx, &hotcold, 64, bp, 30, &noise, 20, &run);
	budget_run_init(&run);
	budget_windows(&ctx, &hotcold, 64, bp, 1000, &noise, 20, &run);
	TH_LOG("%u..%u probe pages a window, %u changes in 1000 windows, %llu bp",
	       run.lo, run.hi, run.changes, (unsigned long long)budget_share_bp(&run));
	EXPECT_GE(10U, run.changes);
	EXPECT_GE(bp, budget_share_bp(&run));
	EXPECT_LE(bp / 2, budget_share_bp(&run));
}

/*
 * The recall goal pools its windows by probe pages, not by windows: a
 * window with 200 accessed probe pages, all read accessed, and four with
 * one each, read not accessed, make a recall of 200 / 204, not the mean of
 * 1, 0, 0, 0, 0.  With counts that vary from window to window the latter
 * would be biased toward the windows with few probes.
 */
TEST(recall_pooled_by_probe_pages)
{
	struct daptrace_probe_counts many = { .nr = 200, .tp = 200 };
	struct daptrace_probe_counts one = { .nr = 1, .fn = 1 };
	unsigned long b, sample;
	struct daptrace_ctx ctx;
	unsigned int i;
	struct prng p;

	ctx_setup(&ctx, 1, &p, 1);
	ctx.attrs.recall_goal_bp = 9000;
	EXPECT_FALSE(daptrace_tune_recall(&ctx, &many, 1000000, 100000000, &b, &sample));
	for (i = 0; i < 4; i++)
		EXPECT_FALSE(daptrace_tune_recall(&ctx, &one, 1000000, 100000000, &b,
						  &sample)) TH_LOG("0.98 is not below 0.9");
	EXPECT_EQ(200U, ctx.recall.tp);
	EXPECT_EQ(4U, ctx.recall.fn);
}

/*
 * Feed @k windows of counts @c; returns what the last one decided, and
 * how many windows decided something other than 0 in *@early.
 */
static unsigned long feed(struct daptrace_ctx *ctx, struct daptrace_probe_counts c,
			  unsigned int k, u64 cpu, unsigned int *early)
{
	unsigned long r = 0, b, sample;
	bool changed;

	*early = 0;
	while (k--) {
		changed = daptrace_tune_recall(ctx, &c, cpu, 100000000, &b, &sample);
		r = changed && b != ctx->attrs.max_nr_regions ? b : 0;
		*early += changed && k;
	}
	return r;
}

/*
 * As the worker does: feed @k windows and put what the last one decided in
 * force; returns whether it changed anything.  The pool is fresh after.
 */
static bool feed_apply(struct daptrace_ctx *ctx, struct daptrace_probe_counts c,
		       unsigned int k, u64 cpu)
{
	unsigned long b = 0, sample = 0;
	bool changed = false;

	while (k--) {
		changed = daptrace_tune_recall(ctx, &c, cpu, 100000000, &b, &sample);
		if (changed && k)
			return false;	/* earlier than the caller expected */
	}
	ctx->attrs.max_nr_regions = b;
	ctx->attrs.sample_us = sample;
	return changed;
}

/* The recall goal's control law, step by step (daptrace_tune_recall()). */
TEST(tune_recall)
{
	struct daptrace_probe_counts half = { .tp = 10, .fn = 10 };	/* 0.5 */
	struct daptrace_probe_counts all = { .tp = 20 };
	struct daptrace_probe_counts band = { .tp = 37, .fn = 3 };	/* 0.925 */
	struct daptrace_probe_counts near = { .tp = 22, .fn = 3 };	/* 0.88 */
	const u64 cheap = 1000000, dear = 10000000;	/* 1 %, 10 % of 100 ms */
	struct daptrace_ctx ctx;
	unsigned int early;
	struct prng p;

	ctx_setup(&ctx, 1, &p, 1);
	EXPECT_EQ(0, daptrace_attrs_validate(&ctx.attrs));
	EXPECT_EQ(0UL, feed(&ctx, half, 20, cheap, &early)) TH_LOG("off");
	ctx.attrs.recall_goal_bp = 9000;
	EXPECT_EQ(0, daptrace_attrs_validate(&ctx.attrs));
	ctx.attrs.recall_goal_bp = 10001;
	EXPECT_EQ(-EINVAL, daptrace_attrs_validate(&ctx.attrs));
	ctx.attrs.recall_goal_bp = 9000;
	ctx.attrs.recall_max_cpu_bp = 0;
	EXPECT_EQ(-EINVAL, daptrace_attrs_validate(&ctx.attrs));
	ctx.attrs.recall_max_cpu_bp = 500;

	/* 0.5 against 0.9: clear at the fifth window (100 probes), up by 5/4 */
	EXPECT_EQ(1251UL, feed(&ctx, half, 5, cheap, &early));
	EXPECT_EQ(0U, early) TH_LOG("not before 5 windows and 100 probes");
	ctx.attrs.max_nr_regions = 1251;
	/* below, but a step would cross 5 % of a CPU (4.5 % * 5/4): hold */
	EXPECT_EQ(0UL, feed(&ctx, half, 5, 4500000, &early));
	/* over the CPU bound: down by 4/5, not below where it started */
	EXPECT_EQ(1000UL, feed(&ctx, all, 5, dear, &early));
	ctx.attrs.max_nr_regions = 1000;
	/* in the band [0.90, 0.95]: no step, the pool starts anew at 400 */
	EXPECT_EQ(0UL, feed(&ctx, band, 10, cheap, &early));
	EXPECT_EQ(0U, ctx.recall.windows) TH_LOG("a decision to hold resets the pool");
	/* 0.88 is not below 0.9 beyond doubt, even at 400 probes */
	EXPECT_EQ(0UL, feed(&ctx, near, 16, cheap, &early));
	EXPECT_EQ(0U, early);
	EXPECT_EQ(0U, ctx.recall.windows);
	/* far above, at the floor: hold */
	EXPECT_EQ(0UL, feed(&ctx, all, 10, cheap, &early));
	/* above it: give back a tenth, once 180 probes make it clear */
	ctx.attrs.max_nr_regions = 2000;
	ctx.recall.tp = 0;	/* a fresh pool (the hold above left one window) */
	ctx.recall.fn = 0;
	ctx.recall.cpu_ns = 0;
	ctx.recall.wall_ns = 0;
	ctx.recall.windows = 0;
	EXPECT_EQ(1800UL, feed(&ctx, all, 9, cheap, &early));
	EXPECT_EQ(0U, early);
	/* the cap */
	ctx.attrs.max_nr_regions = DAPTRACE_MAX_NR_REGIONS;
	EXPECT_EQ(0UL, feed(&ctx, half, 5, cheap, &early));
}

/*
 * A context for tune_recall_samples: a 100 ms window sampled every
 * @sample_us, a budget of 10 regions, a recall goal of 0.9.
 */
static void recall_setup(struct daptrace_ctx *ctx, struct prng *p,
			 unsigned long sample_us)
{
	ctx_setup(ctx, 1, p, 1);
	ctx->attrs.sample_us = sample_us;
	ctx->attrs.aggr_us = 100000;
	ctx->attrs.max_nr_regions = 10;
	ctx->attrs.recall_goal_bp = 9000;
}

/*
 * The recall goal's second actuator: with one sample per window counts are
 * 0 or 1 and more regions cannot keep hot and cold memory apart, so the
 * samples per window come first (a shorter sampling interval, the window
 * kept), then the budget; they are given back in the reverse order, within
 * the CPU bound and intervals_goal_min_sample_us; a sample count found short
 * is returned to only after a wait that doubles each time it is found short
 * again; the intervals goal keeps the new count.
 */
TEST(tune_recall_samples)
{
	static const struct rgn three[] = { { 0, 10, 1, 1 }, { 10, 20, 0, 1 },
					    { 20, 30, 0, 0 } };
	struct daptrace_probe_counts half = { .tp = 10, .fn = 10 };	/* 0.5 */
	struct daptrace_probe_counts all = { .tp = 20 };
	struct daptrace_probe_counts band = { .tp = 37, .fn = 3 };	/* 0.925 */
	const u64 cheap = 1000000;	/* 1 % of 100 ms */
	unsigned long sample, aggr, update;
	struct daptrace_region *r[3];
	struct daptrace_target *t;
	struct daptrace_ctx ctx;
	struct prng p;
	unsigned int i;

	recall_setup(&ctx, &p, 100000);
	ASSERT_EQ(0, daptrace_attrs_validate(&ctx.attrs));
	t = add_target(&ctx, 1, three, 3);
	r[0] = list_first_entry(&t->regions, struct daptrace_region, list);
	r[1] = list_next_entry(r[0], list);
	r[2] = list_next_entry(r[1], list);

	/* one sample per window, recall 0.5: two samples, not more regions */
	EXPECT_TRUE(feed_apply(&ctx, half, 5, cheap));
	EXPECT_EQ(50000UL, ctx.attrs.sample_us);
	EXPECT_EQ(100000UL, ctx.attrs.aggr_us) TH_LOG("the window is kept");
	EXPECT_EQ(10UL, ctx.attrs.max_nr_regions);
	/* the window's counts restated at two samples, for the merge */
	EXPECT_EQ(2U, r[0]->nr_accesses);
	EXPECT_EQ(2U, r[0]->last_nr_accesses);
	EXPECT_EQ(0U, r[1]->nr_accesses);
	EXPECT_EQ(2U, r[1]->last_nr_accesses);
	EXPECT_EQ(0U, r[2]->last_nr_accesses);
	/* 4, 8, then 16 (>= DAPTRACE_RECALL_MIN_SAMPLES): then the budget */
	EXPECT_TRUE(feed_apply(&ctx, half, 5, cheap));
	EXPECT_EQ(25000UL, ctx.attrs.sample_us);
	EXPECT_TRUE(feed_apply(&ctx, half, 5, cheap));
	EXPECT_EQ(12500UL, ctx.attrs.sample_us);
	EXPECT_TRUE(feed_apply(&ctx, half, 5, cheap));
	EXPECT_EQ(6250UL, ctx.attrs.sample_us);
	EXPECT_EQ(10UL, ctx.attrs.max_nr_regions);
	EXPECT_TRUE(feed_apply(&ctx, half, 5, cheap));
	EXPECT_EQ(6250UL, ctx.attrs.sample_us);
	EXPECT_EQ(13UL, ctx.attrs.max_nr_regions);

	/* recall 1.0: the budget is given back first, to where it started */
	EXPECT_TRUE(feed_apply(&ctx, all, 9, cheap));
	EXPECT_EQ(11UL, ctx.attrs.max_nr_regions);
	EXPECT_TRUE(feed_apply(&ctx, all, 9, cheap));
	EXPECT_EQ(10UL, ctx.attrs.max_nr_regions);
	EXPECT_EQ(6250UL, ctx.attrs.sample_us);
	/*
	 * Then samples, above 1 - (1 - 0.9)^2 = 0.99 over a full pool; 8
	 * was found short, so only at the 4th such decision.
	 */
	for (i = 0; i < 3; i++) {
		EXPECT_FALSE(feed_apply(&ctx, all, 20, cheap));
		EXPECT_EQ(6250UL, ctx.attrs.sample_us);
	}
	EXPECT_TRUE(feed_apply(&ctx, all, 20, cheap));
	EXPECT_EQ(12500UL, ctx.attrs.sample_us);
	/* short again at 8: back to 16, and the wait doubles */
	EXPECT_TRUE(feed_apply(&ctx, half, 5, cheap));
	EXPECT_EQ(6250UL, ctx.attrs.sample_us);
	EXPECT_EQ(8U, ctx.recall.short_wait);
	for (i = 0; i < 7; i++)
		EXPECT_FALSE(feed_apply(&ctx, all, 20, cheap));
	EXPECT_TRUE(feed_apply(&ctx, all, 20, cheap));
	EXPECT_EQ(12500UL, ctx.attrs.sample_us);
	/* 0.925 at 8: the give-back held, the wait is reset */
	EXPECT_FALSE(feed_apply(&ctx, band, 10, cheap));
	EXPECT_EQ(DAPTRACE_RECALL_SHORT_WAIT, ctx.recall.short_wait);
	/* 0.925 is not above 0.99: 8 samples hold */
	EXPECT_FALSE(feed_apply(&ctx, band, 10, cheap));
	EXPECT_EQ(12500UL, ctx.attrs.sample_us);

	/* over the CPU bound with the budget at its floor: samples go */
	EXPECT_TRUE(feed_apply(&ctx, band, 5, 10000000));
	EXPECT_EQ(25000UL, ctx.attrs.sample_us);
	/* a doubling that would cross it (3 % * 2): the budget instead */
	EXPECT_TRUE(feed_apply(&ctx, half, 5, 3000000));
	EXPECT_EQ(25000UL, ctx.attrs.sample_us);
	EXPECT_EQ(13UL, ctx.attrs.max_nr_regions);
	ctx_fini(&ctx);

	/* never shorter than intervals_goal_min_sample_us: the budget */
	recall_setup(&ctx, &p, 50000);
	ctx.attrs.goal_min_sample_us = 50000;
	EXPECT_TRUE(feed_apply(&ctx, half, 5, cheap));
	EXPECT_EQ(50000UL, ctx.attrs.sample_us);
	EXPECT_EQ(13UL, ctx.attrs.max_nr_regions);
	ctx_fini(&ctx);

	/* the user's interval comes back exactly, though 100000 / 3 is not it */
	recall_setup(&ctx, &p, 30000);
	EXPECT_TRUE(feed_apply(&ctx, half, 5, cheap));
	EXPECT_EQ(16666UL, ctx.attrs.sample_us);
	EXPECT_TRUE(feed_apply(&ctx, band, 5, 10000000));
	EXPECT_EQ(30000UL, ctx.attrs.sample_us);
	ctx_fini(&ctx);

	/* with the intervals goal: it keeps the samples per window set here */
	recall_setup(&ctx, &p, 100000);
	ctx.attrs.update_us = 1000000;
	ctx.attrs.goal_aggrs = 1;
	ASSERT_EQ(0, daptrace_attrs_validate(&ctx.attrs));
	t = add_target(&ctx, 1, three, 3);
	/* started (one sample per window); accesses at the goal: no change */
	daptrace_tune_intervals(&ctx, 1, &sample, &aggr, &update);
	EXPECT_EQ(1UL, ctx.tuner.aggr_samples);
	EXPECT_TRUE(feed_apply(&ctx, half, 5, cheap));
	EXPECT_EQ(50000UL, ctx.attrs.sample_us);
	EXPECT_EQ(2UL, ctx.tuner.aggr_samples);
	/* nothing seen: the intervals goal doubles both, at 2 per window */
	list_for_each_entry(r[0], &t->regions, list)
		r[0]->nr_accesses = 0;
	EXPECT_TRUE(daptrace_tune_intervals(&ctx, 2, &sample, &aggr, &update));
	EXPECT_EQ(100000UL, sample);
	EXPECT_EQ(200000UL, aggr);
	ctx_fini(&ctx);
}

TEST(unobserved_accounting)
{
	static const struct rgn one[] = { { 0, 10, 0 }, { 10, 20, 0 } };
	struct daptrace_region_rec recs[2];
	struct daptrace_region *r;
	struct daptrace_target *t;
	struct daptrace_ctx ctx;
	struct prng p;

	ctx_setup(&ctx, 1, &p, 1);
	t = add_target(&ctx, 7, one, 2);
	r = list_first_entry(&t->regions, struct daptrace_region, list);
	daptrace_account_unobserved(r);
	daptrace_account_access(r, true);
	EXPECT_EQ(1U, r->nr_unobserved);
	EXPECT_EQ(1U, r->nr_accesses);

	daptrace_repeat_idle(t, 3);
	EXPECT_EQ(1U, r->nr_unobserved) TH_LOG("an observable target idles");
	daptrace_repeat_unobserved(t, 2);
	EXPECT_EQ(3U, r->nr_unobserved) TH_LOG("skipped checks found unobserved");
	EXPECT_EQ(2U, list_last_entry(&t->regions, struct daptrace_region,
				      list)->nr_unobserved);
	r->nr_unobserved = 1;
	list_last_entry(&t->regions, struct daptrace_region, list)->nr_unobserved = 0;
	t->unobservable = true;
	daptrace_repeat_idle(t, 3);
	EXPECT_EQ(4U, r->nr_unobserved);
	EXPECT_EQ(3U, list_last_entry(&t->regions, struct daptrace_region,
				      list)->nr_unobserved);
	daptrace_repeat_idle(t, DAPTRACE_MAX_SAMPLES_PER_AGGR);
	EXPECT_EQ(DAPTRACE_MAX_SAMPLES_PER_AGGR, r->nr_unobserved)
		TH_LOG("saturates");

	ASSERT_EQ(2U, daptrace_snapshot_fill(&ctx, recs, 2, true));
	EXPECT_EQ(DAPTRACE_MAX_SAMPLES_PER_AGGR, recs[0].nr_unobserved);

	daptrace_reset_aggregated(&ctx);
	EXPECT_EQ(0U, r->nr_unobserved);
	ctx_fini(&ctx);
}

/*
 * The intervals goal: DAMON's feedback on the share of accesses seen, once
 * every goal_aggrs windows, within its bounds, the aggregation interval
 * following at the same number of samples per window.
 */
TEST(tune_intervals)
{
	static const struct {
		const char *name;
		unsigned int acc[2], unobs[2];	/* of two equal regions */
		unsigned long lo, hi;
		bool change;
		unsigned long sample, aggr;
	} cases[] = {
		{ "none seen: doubles", { 0, 0 }, { 0, 0 }, 100, 10000000,
		  true, 10000, 200000 },
		{ "all seen: halves at most", { 25, 25 }, { 0, 0 }, 100, 10000000,
		  true, 2500, 50000 },
		{ "at the goal (4 %): stays", { 2, 0 }, { 0, 0 }, 100, 10000000,
		  false },
		{ "half the goal: 1.5 times", { 1, 0 }, { 0, 0 }, 100, 10000000,
		  true, 7500, 150000 },
		{ "at the max: stays", { 0, 0 }, { 0, 0 }, 100, 5000, false },
		{ "clamped to the max", { 0, 0 }, { 0, 0 }, 100, 8000,
		  true, 8000, 160000 },
		{ "unobserved count in neither", { 0, 1 }, { 25, 24 }, 100, 10000000,
		  true, 2500, 50000 },
		{ "nothing observed: no information, stays", { 0, 0 }, { 25, 25 },
		  100, 10000000, false },
	};
	static const struct rgn two[] = { { 0, 4096, 0 }, { 4096, 8192, 0 } };
	unsigned long sample, aggr, update;
	struct daptrace_region *r;
	struct daptrace_target *t;
	struct daptrace_ctx ctx;
	struct prng p;
	unsigned int i, j, w;
	bool changed;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		t = one_target(&ctx, 4096, &p, two, 2);
		ctx.attrs.goal_access_bp = 400;
		ctx.attrs.goal_min_sample_us = cases[i].lo;
		ctx.attrs.goal_max_sample_us = cases[i].hi;
		ASSERT_FALSE(daptrace_tune_intervals(&ctx, 20, &sample, &aggr,
						     &update))
			TH_LOG("off: aggrs 0");
		ctx.attrs.goal_aggrs = 3;
		for (w = 0; w < 3; w++) {
			j = 0;
			daptrace_for_each_region(r, t) {
				r->nr_accesses = cases[i].acc[j];
				r->nr_unobserved = cases[i].unobs[j++];
			}
			changed = daptrace_tune_intervals(&ctx, 25, &sample,
							  &aggr, &update);
			if (w < 2)
				EXPECT_FALSE(changed) TH_LOG("%s: window %u", cases[i].name, w);
		}
		EXPECT_EQ(cases[i].change, changed) TH_LOG("%s", cases[i].name);
		if (changed && cases[i].change) {
			EXPECT_EQ(cases[i].sample, sample) TH_LOG("%s", cases[i].name);
			EXPECT_EQ(cases[i].aggr, aggr) TH_LOG("%s", cases[i].name);
		}
		EXPECT_EQ(0U, ctx.tuner.windows) TH_LOG("restarts the measure");
		ctx_fini(&ctx);
	}

	/* No region at all: nothing observed either. */
	ctx_setup(&ctx, 4096, &p, 1);
	add_target(&ctx, 1, NULL, 0);
	ctx.attrs.goal_aggrs = 1;
	EXPECT_FALSE(daptrace_tune_intervals(&ctx, 20, &sample, &aggr, &update))
		TH_LOG("no region: no information, stays");
	ctx_fini(&ctx);
}

/*
 * The intervals goal keeps the samples per window it started with (DAMON's
 * aggr_samples), also where the aggregation interval would pass its cap,
 * and the update interval, raised to follow the aggregation interval, comes
 * back down with it.  A workload idle for long, then warm: from 5 ms /
 * 100 ms / 1 s up to the cap, and back.
 */
TEST(tune_intervals_keeps_ratio)
{
	static const struct rgn two[] = { { 0, 4096, 0 }, { 4096, 8192, 0 } };
	unsigned long sample, aggr, update, max_aggr = 0;
	struct daptrace_region *r;
	struct daptrace_target *t;
	struct daptrace_ctx ctx;
	struct prng p;
	unsigned int w;

	t = one_target(&ctx, 4096, &p, two, 2);
	ctx.attrs.goal_aggrs = 1;
	ctx.attrs.goal_min_sample_us = 5000;
	ctx.attrs.goal_max_sample_us = DAPTRACE_MAX_SAMPLE_US;
	for (w = 0; w < 40; w++) {
		/* 20 windows of nothing accessed, then 20 of all of it. */
		daptrace_for_each_region(r, t)
			r->nr_accesses = w < 20 ? 0 : 20;
		if (!daptrace_tune_intervals(&ctx, 20, &sample, &aggr, &update))
			continue;
		EXPECT_EQ(20 * sample, aggr)
			TH_LOG("window %u: %lu us / %lu us", w, sample, aggr);
		EXPECT_LE(aggr, update) TH_LOG("window %u", w);
		max_aggr = max(max_aggr, aggr);
		ctx.attrs.sample_us = sample;
		ctx.attrs.aggr_us = aggr;
		ctx.attrs.update_us = update;
		EXPECT_EQ(0, daptrace_attrs_validate(&ctx.attrs))
			TH_LOG("window %u", w);
	}
	EXPECT_EQ(DAPTRACE_MAX_AGGR_US, max_aggr) TH_LOG("up to the cap");
	EXPECT_EQ(5000UL, ctx.attrs.sample_us) TH_LOG("warm: back to the lower bound");
	EXPECT_EQ(100000UL, ctx.attrs.aggr_us) TH_LOG("at 20 samples per window");
	EXPECT_EQ(1000000UL, ctx.attrs.update_us)
		TH_LOG("and the update interval back to where it was");
	ctx_fini(&ctx);
}

TEST(update_idle)
{
	static const struct {
		unsigned int nr, last, idle, exp_idle, exp_age;
	} cases[] = {
		{ 0, 0, 7, 8, 4 },		/* no access: one window more */
		{ 1, 0, 7, 0, 4 },		/* one access resets it ... */
		{ 1, 1, 7, 0, 4 },		/* ... where age goes on */
		{ 0, 5, 0, 1, 0 },
		{ 0, 0, 0xffffffffU, 0xffffffffU, 4 },	/* saturates */
	};
	struct daptrace_region *r;
	struct daptrace_target *t;
	struct daptrace_ctx ctx;
	struct prng p;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		struct rgn one = { 0, 10, cases[i].nr, cases[i].last, 3 };

		t = one_target(&ctx, 1, &p, &one, 1);
		r = list_first_entry(&t->regions, struct daptrace_region, list);
		r->idle = cases[i].idle;
		daptrace_update_age(&ctx, 2);
		EXPECT_EQ(cases[i].exp_idle, r->idle);
		EXPECT_EQ(cases[i].exp_age, r->age);
		ctx_fini(&ctx);
	}
	ASSERT_EQ(0, shim_nr_live);
}

TEST(merge_keeps_histories_apart)
{
	static const struct {
		const char *what;
		unsigned int idle[6];
		unsigned int nr_want;
		unsigned long ends[6];	/* right ends of the merged regions */
	} cases[] = {
		/* 0..2 one history; 9, 30, 60 each its own (more than an eighth apart) */
		{ "pairs", { 0, 2, 9, 30, 60, 0xffffffffU }, 5, { 20, 30, 40, 50, 60 } },
		/* falling by halves: 4 and 2 pairwise, but not 1 after them (4 - 1 > 2) */
		{ "falling", { 16, 8, 4, 2, 1, 0 }, 4, { 10, 20, 40, 60 } },
		{ "rising", { 0, 1, 2, 4, 8, 16 }, 4, { 30, 40, 50, 60 } },
		/*
		 * long idle: within an eighth one history (128 and 136), not
		 * 136 and 208 (12.8 and 20.8 s at 100 ms: under the 2x of
		 * before, they merged and `daptrace stat` read one age for both)
		 */
		{ "long", { 128, 136, 208, 216, 400, 420 }, 3, { 20, 40, 60 } },
	};
	static const struct rgn old[] = {
		{ 0, 10 }, { 10, 20 }, { 20, 30 }, { 30, 40 }, { 40, 50 }, { 50, 60 },
	};
	struct rgn want[6];
	struct daptrace_region *r;
	struct daptrace_target *t;
	struct daptrace_ctx ctx;
	struct prng p;
	unsigned int i, k;

	for (k = 0; k < ARRAY_SIZE(cases); k++) {
		t = one_target(&ctx, 1, &p, old, ARRAY_SIZE(old));
		i = 0;
		daptrace_for_each_region(r, t)
			r->idle = cases[k].idle[i++];
		daptrace_merge_regions(&ctx, 1, 1000);
		memset(want, 0, sizeof(want));
		for (i = 0; i < cases[k].nr_want; i++) {
			want[i].start = i ? cases[k].ends[i - 1] : 0;
			want[i].end = cases[k].ends[i];
		}
		expect_rgns(_metadata, cases[k].what, t, want, cases[k].nr_want, false);
		/* a merged region was last accessed when its youngest part was */
		i = 0;
		daptrace_for_each_region(r, t) {
			unsigned int j, young = 0xffffffffU;

			for (j = 0; j < ARRAY_SIZE(old); j++)
				if (old[j].start >= r->ar.start && old[j].end <= r->ar.end)
					young = min(young, cases[k].idle[j]);
			EXPECT_EQ(young, r->idle);
		}

		/* max_nr_regions stays a hard bound: history gives way. */
		ctx.attrs.max_nr_regions = 1;
		daptrace_merge_regions(&ctx, 1, 1000);
		ASSERT_EQ(1U, t->nr_regions);
		r = list_first_entry(&t->regions, struct daptrace_region, list);
		EXPECT_EQ(cases[k].idle[0] == 128 ? 128U : 0U, r->idle);
		ctx_fini(&ctx);
	}
	ASSERT_EQ(0, shim_nr_live);
}

/* ---- split ----------------------------------------------------------- */

TEST(split_two_then_three_pieces)
{
	static const u32 half[] = { 4 };	/* cut at 5/10 */
	static const struct rgn old[] = { { 0, 100, 3, 4, 5 } };
	static const struct rgn two[] = {
		{ 0, 50, 3, 4, 5 }, { 50, 100, 3, 4, 5 },
	};
	static const struct rgn three[] = {
		{ 0, 25, 3, 4, 5 }, { 25, 50, 3, 4, 5 }, { 50, 100, 3, 4, 5 },
	};
	struct script sc = { half, 1, 0 };
	struct daptrace_target *t;
	struct daptrace_ctx ctx;

	daptrace_ctx_init(&ctx, 1, script_rand, &sc);
	t = add_target(&ctx, 1, old, 1);
	daptrace_split_regions(&ctx);
	expect_rgns(_metadata, "two pieces", t, two, 2, true);
	ASSERT_EQ(1U, ctx.last_nr_regions);
	ctx_fini(&ctx);

	/* The previous split was merged back: the count is unchanged. */
	daptrace_ctx_init(&ctx, 1, script_rand, &sc);
	t = add_target(&ctx, 1, old, 1);
	ctx.last_nr_regions = 1;
	daptrace_split_regions(&ctx);
	expect_rgns(_metadata, "three pieces", t, three, 3, true);
	ctx_fini(&ctx);

	/* ... but not three if that could pass max / 3. */
	daptrace_ctx_init(&ctx, 1, script_rand, &sc);
	ctx.attrs.max_nr_regions = 3;
	t = add_target(&ctx, 1, old, 1);
	ctx.last_nr_regions = 1;
	daptrace_split_regions(&ctx);
	expect_rgns(_metadata, "two at max 3", t, two, 2, true);
	ctx_fini(&ctx);
	ASSERT_EQ(0, shim_nr_live);
}

TEST(split_not_above_half_of_max)
{
	static const struct rgn old[] = { { 0, 100 }, { 100, 200 }, { 200, 300 } };
	struct daptrace_target *t;
	struct daptrace_ctx ctx;
	struct prng p;

	ctx_setup(&ctx, 1, &p, 1);
	ctx.attrs.max_nr_regions = 5;		/* 3 > 5 / 2 */
	t = add_target(&ctx, 1, old, 3);
	ctx.last_nr_regions = 77;
	daptrace_split_regions(&ctx);
	expect_rgns(_metadata, "no split", t, old, 3, false);
	ASSERT_EQ(77U, ctx.last_nr_regions);
	ctx.attrs.max_nr_regions = 6;		/* 3 <= 6 / 2 */
	daptrace_split_regions(&ctx);
	ASSERT_EQ(6U, t->nr_regions);
	ctx_fini(&ctx);
}

TEST(split_granularity)
{
	static const struct rgn two_pages[] = { { 0, 8192 } };
	static const struct rgn three_pages[] = { { 0, 3 * 4096 } };
	struct daptrace_target *t;
	struct daptrace_ctx ctx;
	struct prng p;
	unsigned int i;

	t = one_target(&ctx, 4096, &p, two_pages, 1);
	daptrace_split_regions(&ctx);
	expect_rgns(_metadata, "2 pages stay whole", t, two_pages, 1, false);
	ctx_fini(&ctx);

	for (i = 0; i < 200; i++) {
		ctx_setup(&ctx, 4096, &p, i + 1);
		t = add_target(&ctx, 1, three_pages, 1);
		ctx.last_nr_regions = 1;	/* try three pieces */
		daptrace_split_regions(&ctx);
		ASSERT_VALID(&ctx);
		ASSERT_LE(t->nr_regions, 3U);
		ASSERT_EQ(3 * 4096UL, daptrace_total_sz(&ctx));
		ctx_fini(&ctx);
	}
}

/*
 * @n quiet targets of two regions each (0-100, 100-200) and, after them, a
 * busy one of one region (0-1000), under a budget of 20 regions.
 */
static struct daptrace_target *busy_among_quiet(struct daptrace_ctx *ctx, struct prng *p,
						struct daptrace_target **quiet, int n)
{
	static const struct rgn idle[] = { { 0, 100 }, { 100, 200 } };
	static const struct rgn busy[] = { { 0, 1000 } };
	int i;

	ctx_setup(ctx, 1, p, 5);
	ctx->attrs.max_nr_regions = 20;
	for (i = 0; i < n; i++) {
		quiet[i] = add_target(ctx, i + 1, idle, 2);
		quiet[i]->quiet = true;
	}
	return add_target(ctx, n + 1, busy, 1);
}

/*
 * Quiet targets holding more than half of max_nr_regions do not stop the
 * split of a busy one: their regions are not counted against the budget,
 * and it is split while its own pieces fit.  (DAMON's rule, no split over
 * max / 2 in all, left it one region; counting the quiet ones' regions, 4.)
 */
TEST(split_busy_target_among_quiet_ones)
{
	struct daptrace_target *quiet[8], *t;
	struct daptrace_ctx ctx;
	struct prng p;
	int i;

	t = busy_among_quiet(&ctx, &p, quiet, 8);
	ASSERT_EQ(17U, daptrace_nr_regions(&ctx));	/* over 20 / 2 */
	daptrace_split_regions(&ctx);
	ASSERT_VALID(&ctx);
	ASSERT_EQ(2U, t->nr_regions);
	ASSERT_EQ(1U, ctx.last_nr_regions);		/* the busy one's */
	for (i = 0; i < 8; i++)
		ASSERT_EQ(2U, quiet[i]->nr_regions);
	/* 2, 4, 8, up to 16 (a piece of 2 bytes or less is not cut); never past 20 */
	daptrace_split_regions(&ctx);
	daptrace_split_regions(&ctx);
	daptrace_split_regions(&ctx);
	ASSERT_LT(8U, t->nr_regions);
	ASSERT_GE(16U, t->nr_regions);
	for (i = 0; i < 4; i++) {
		daptrace_split_regions(&ctx);
		ASSERT_GE(20U, t->nr_regions);
	}
	ASSERT_EQ(16U + t->nr_regions, daptrace_nr_regions(&ctx));
	ctx_fini(&ctx);
	ASSERT_EQ(0, shim_nr_live);
}

/*
 * 64 targets of three 100-byte ranges (@quiet, not marked quiet) and, after
 * them, one of three 1000-byte ranges, returned; min_nr_regions 10, and
 * @max_nr regions: bench/targets.sh's hundreds of sleeping processes of
 * three ranges, over the budget on their own.
 */
static struct daptrace_target *busy_after_64_sleeping(struct daptrace_ctx *ctx, struct prng *p,
						      u64 seed, struct daptrace_target **quiet,
						      unsigned long max_nr)
{
	static const struct rgn ranges[] = { { 0, 100 }, { 1000, 1100 }, { 5000, 5100 } };
	static const struct rgn busy[] = {
		{ 0, 1000 }, { 10000, 11000 }, { 50000, 51000 },
	};
	unsigned int i;

	ctx_setup(ctx, 1, p, seed);
	ctx->attrs.min_nr_regions = 10;
	ctx->attrs.max_nr_regions = max_nr;
	for (i = 0; i < 64; i++)
		quiet[i] = add_target(ctx, i + 1, ranges, ARRAY_SIZE(ranges));
	return add_target(ctx, 100, busy, ARRAY_SIZE(busy));
}

/*
 * A process that wakes among many that sleep, whose one region per mapped
 * range alone is more than max_nr_regions (64 targets of three ranges
 * under a budget of 100: bench/targets.sh's 512 targets of 3 under 1000),
 * is split and stays split through the windows' merges, as it would be
 * alone; the sleeping ones keep their three.  Counting every target's
 * regions, nothing was ever split: the waking target's hot set was never
 * found (recall 0.00 among 512).
 */
TEST(busy_target_split_when_quiet_ones_exceed_max)
{
	struct daptrace_target *quiet[64], *t;
	struct daptrace_region *r;
	struct daptrace_ctx ctx;
	struct prng p;
	unsigned int round, i;

	t = busy_after_64_sleeping(&ctx, &p, 11, quiet, 100);
	for (round = 0; round < 8; round++) {
		for (i = 0; i < ARRAY_SIZE(quiet); i++)
			quiet[i]->quiet = true;
		/* the busy target's first half hot, the rest cold */
		daptrace_for_each_region(r, t)
			r->nr_accesses = r->ar.start < 500 ? 20 : 0;
		daptrace_aggregate(&ctx, daptrace_max_nr_accesses(&ctx.attrs));
		ASSERT_VALID(&ctx);
	}
	TH_LOG("busy target: %u regions; all: %u", t->nr_regions,
	       daptrace_nr_regions(&ctx));
	EXPECT_LE(8U, t->nr_regions) TH_LOG("split, and kept split by the merges");
	EXPECT_GE(100U, t->nr_regions);
	for (i = 0; i < ARRAY_SIZE(quiet); i++)
		ASSERT_EQ(3U, quiet[i]->nr_regions);
	ctx_fini(&ctx);
	ASSERT_EQ(0, shim_nr_live);
}

/*
 * A target that runs among many that sleep is merged within its own size /
 * min_nr_regions (1000 / 10), the resolution it would have alone: ten
 * pieces of one access level stay ten, where the total's limit (64 x 300 +
 * 1000) / 10 merged them into one (four areas of different idle times read
 * as one region of their average age: `daptrace stat`'s percentiles).
 * Where min_nr_regions for every target that ran does not fit in
 * max_nr_regions, the total's limit alone, as DAMON.
 */
TEST(ran_target_merged_within_its_own_limit)
{
	static const struct rgn ranges[] = { { 0, 100 }, { 1000, 1100 }, { 5000, 5100 } };
	struct daptrace_target *quiet[64], *t, *t2 = NULL;
	struct rgn busy[10];
	struct daptrace_ctx ctx;
	unsigned int i, c;
	struct prng p;

	for (i = 0; i < ARRAY_SIZE(busy); i++)
		busy[i] = (struct rgn){ .start = i * 100, .end = i * 100 + 100 };
	for (c = 0; c < 2; c++) {
		ctx_setup(&ctx, 1, &p, 23 + c);
		ctx.attrs.min_nr_regions = 10;
		ctx.attrs.max_nr_regions = c ? 15 : 100;
		for (i = 0; i < ARRAY_SIZE(quiet); i++) {
			quiet[i] = add_target(&ctx, i + 1, ranges, ARRAY_SIZE(ranges));
			quiet[i]->quiet = true;
		}
		t = add_target(&ctx, 100, busy, ARRAY_SIZE(busy));
		/* a second that ran: 20 regions wanted, over 15 */
		if (c)
			t2 = add_target(&ctx, 101, busy, ARRAY_SIZE(busy));
		daptrace_merge_regions(&ctx, 1, daptrace_total_sz(&ctx) / 10);
		ASSERT_VALID(&ctx);
		TH_LOG("case %u: %u regions", c, t->nr_regions);
		if (!c) {
			ASSERT_EQ(10U, t->nr_regions);
		} else {
			ASSERT_EQ(1U, t->nr_regions);
			ASSERT_EQ(1U, t2->nr_regions);
		}
		ctx_fini(&ctx);
		ASSERT_EQ(0, shim_nr_live);
	}
}

/*
 * Two targets that ran, each over the budget on its own after a map update
 * (a hot region of 55 bytes, then cold pieces of 55): min_nr_regions 10 each
 * fits max_nr_regions 20, so each is merged within its own limit (1000 / 10),
 * where no two 55-byte pieces fit.  The own limit must give way before
 * max_nr_regions does: the total's limit (2000 / 10) merges the cold pieces
 * three by three and keeps the hot region apart, as before the own limit;
 * the last resort (any access difference, twice the total's limit) merged
 * the hot region into its cold neighbours and read it at 1 of 20.
 */
TEST(own_limit_gives_way_before_the_last_resort)
{
	struct daptrace_target *t[2];
	struct daptrace_region *r;
	struct rgn rs[19];
	struct daptrace_ctx ctx;
	unsigned int i;
	struct prng p;

	for (i = 0; i < 18; i++)
		rs[i] = (struct rgn){ .start = i * 55, .end = i * 55 + 55,
				      .nr = i ? 0 : 20, .last = i ? 0 : 20 };
	rs[18] = (struct rgn){ .start = 990, .end = 1000 };
	ctx_setup(&ctx, 1, &p, 29);
	ctx.attrs.min_nr_regions = 10;
	ctx.attrs.max_nr_regions = 20;
	for (i = 0; i < 2; i++)
		t[i] = add_target(&ctx, i + 1, rs, ARRAY_SIZE(rs));
	daptrace_merge_regions(&ctx, 1, daptrace_total_sz(&ctx) / 10);
	ASSERT_VALID(&ctx);
	ASSERT_GE(20U, daptrace_nr_budgeted(&ctx));
	for (i = 0; i < 2; i++) {
		r = list_first_entry(&t[i]->regions, struct daptrace_region, list);
		TH_LOG("target %u: %u regions, the first [%lu, %lu) at %u", i,
		       t[i]->nr_regions, r->ar.start, r->ar.end, r->nr_accesses);
		EXPECT_EQ(55UL, r->ar.end);
		EXPECT_EQ(20U, r->nr_accesses);
	}
	ctx_fini(&ctx);
	ASSERT_EQ(0, shim_nr_live);
}

/*
 * Over max_nr_regions (new ranges mapped since the last window) with cold
 * neighbours idle for different times, kept apart (daptrace_same_history():
 * within an eighth), the count is brought under the bound first by giving
 * up the histories, with access differences still in force: the hot region
 * stays apart.  The last resort (any access difference) merged it into its
 * cold neighbours: one region at 1 of 20, idle 0, `daptrace stat` showing
 * 70 bytes accessed now and then where 10 are accessed every sample.
 */
TEST(history_gives_way_before_access_differences)
{
	static const struct rgn old[] = {
		{ 0, 10, 20, 20 }, { 10, 20 }, { 20, 30 }, { 30, 40 },
		{ 40, 50 }, { 50, 60 }, { 60, 70 },
	};
	static const unsigned int idle[] = { 0, 10, 20, 40, 80, 160, 320 };
	struct daptrace_region *r;
	struct daptrace_target *t;
	struct daptrace_ctx ctx;
	unsigned int i = 0;
	struct prng p;

	t = one_target(&ctx, 1, &p, old, ARRAY_SIZE(old));
	ctx.attrs.min_nr_regions = 1;
	ctx.attrs.max_nr_regions = 4;
	daptrace_for_each_region(r, t)
		r->idle = idle[i++];
	daptrace_merge_regions(&ctx, 1, 1000);
	ASSERT_VALID(&ctx);
	ASSERT_GE(4U, t->nr_regions);
	r = list_first_entry(&t->regions, struct daptrace_region, list);
	TH_LOG("%u regions, the first [%lu, %lu) at %u", t->nr_regions,
	       r->ar.start, r->ar.end, r->nr_accesses);
	EXPECT_EQ(10UL, r->ar.end);
	EXPECT_EQ(20U, r->nr_accesses);
	ctx_fini(&ctx);
	ASSERT_EQ(0, shim_nr_live);
}

/*
 * Counts of a window in which @t ran, 20 samples: @hs..@he accessed at
 * every one, the rest never; a region's count is its accessed share.
 */
static void count_hot_set(struct daptrace_target *t, unsigned long hs, unsigned long he)
{
	struct daptrace_region *r;

	daptrace_for_each_region(r, t) {
		unsigned long s = max(r->ar.start, hs), e = min(r->ar.end, he);
		unsigned long sz = daptrace_sz_region(r);

		r->nr_accesses = ((e > s ? e - s : 0) * 20 + sz / 2) / sz;
	}
}

/*
 * Does a region of @t over @hs..@he read accessed (15 of 20 or more: at
 * least three quarters of it in the hot set)?
 */
static bool hot_set_found(const struct daptrace_target *t, unsigned long hs, unsigned long he)
{
	const struct daptrace_region *r;

	daptrace_for_each_region(r, t)
		if (r->ar.start < he && r->ar.end > hs && r->nr_accesses >= 15)
			return true;
	return false;
}

/*
 * Three targets that run every window, of 1000 bytes each with a hot set of
 * 100, min_nr_regions 10 and max_nr_regions 40: 3 x 10 fits, so each is
 * merged within its own limit (100), and holds 10 to 20 regions.  A target
 * is split only while all of its pieces fit (daptrace_split_regions()): 10
 * to 20 more.  With the first split first, the budget had no room left for
 * the others, and their regions were never cut again: here the second and
 * third targets' hot sets read as a region of 100 to 600 bytes at 3 to 11 of
 * 20 samples in every one of 100 windows (a target never found its hot set
 * with 17 of seeds 1-20; at the defaults, 10 and 1000, 48 of 90 targets).
 */
TEST(own_limit_leaves_room_to_split)
{
	static const struct rgn one[] = { { 0, 1000 } };
	static const unsigned long hot[3] = { 0, 500, 500 };
	unsigned int w, i, found[3] = { 0 };
	struct daptrace_target *t[3];
	struct daptrace_ctx ctx;
	struct prng p;

	ctx_setup(&ctx, 1, &p, 3);
	ctx.attrs.min_nr_regions = 10;
	ctx.attrs.max_nr_regions = 40;
	for (i = 0; i < 3; i++)
		t[i] = add_target(&ctx, i + 1, one, 1);
	for (w = 0; w < 200; w++) {
		for (i = 0; i < 3; i++) {
			count_hot_set(t[i], hot[i], hot[i] + 100);
			found[i] += w >= 100 && hot_set_found(t[i], hot[i], hot[i] + 100);
		}
		daptrace_aggregate(&ctx, 20);
		ASSERT_VALID(&ctx);
		ASSERT_GE(40U, daptrace_nr_budgeted(&ctx));
	}
	for (i = 0; i < 3; i++) {
		TH_LOG("target %u: %u regions, its hot set found in %u of 100 windows",
		       i, t[i]->nr_regions, found[i]);
		EXPECT_LE(90U, found[i]);
	}
	ctx_fini(&ctx);
	ASSERT_EQ(0, shim_nr_live);
}

/*
 * Fifteen targets that run every window, of 1000 bytes each with a hot set
 * of 100 at its own offset, min_nr_regions 10 and max_nr_regions 100: too
 * many for the own limits (4 x 15 x 10 > 100), and a budget that cannot
 * split every target in a window.  A target is split only while its pieces
 * fit (daptrace_split_regions()); walked in list order, the first targets
 * took the room every window, and the last ones' regions were never cut:
 * with 5 of seeds 1-20, 1 to 3 targets never found their hot set in the
 * last 100 of 300 windows (at the defaults, 10 and 1000, 6 to 23 of 150
 * targets with each seed).  The split resumes where the room ran out,
 * so every target gets its turn: each finds its hot set in 100 of 100.
 */
TEST(crowded_split_takes_turns)
{
	static const struct rgn one[] = { { 0, 1000 } };
	unsigned int w, i, seed, found[15];
	struct daptrace_target *t[15];
	struct daptrace_ctx ctx;
	unsigned long hs;
	struct prng p;

	for (seed = 1; seed <= 20; seed++) {
		ctx_setup(&ctx, 1, &p, seed);
		ctx.attrs.min_nr_regions = 10;
		ctx.attrs.max_nr_regions = 100;
		for (i = 0; i < ARRAY_SIZE(t); i++) {
			t[i] = add_target(&ctx, i + 1, one, 1);
			found[i] = 0;
		}
		for (w = 0; w < 300; w++) {
			for (i = 0; i < ARRAY_SIZE(t); i++) {
				hs = i * 337 % 900;
				count_hot_set(t[i], hs, hs + 100);
				found[i] += w >= 200 && hot_set_found(t[i], hs, hs + 100);
			}
			daptrace_aggregate(&ctx, 20);
			ASSERT_VALID(&ctx);
			ASSERT_GE(100U, daptrace_nr_budgeted(&ctx));
		}
		for (i = 0; i < ARRAY_SIZE(t); i++) {
			if (found[i] < 90)
				TH_LOG("seed %u, target %u: %u regions, its hot set found in %u of 100 windows",
				       seed, i, t[i]->nr_regions, found[i]);
			EXPECT_LE(90U, found[i]);
		}
		ctx_fini(&ctx);
		ASSERT_EQ(0, shim_nr_live);
	}
}

/*
 * A target that wakes among many that sleep, its regions merged to one per
 * mapped range while it slept (64 targets of three ranges under a budget
 * of 100, as bench/targets.sh's 4096 under 1000), gets the resolution it
 * would have alone in the first aggregation after it ran: every region
 * within its own size / min_nr_regions (3000 / 10).  Before, it was halved
 * window by window (at most two pieces of each range, one of them at least
 * half of the range: 500 > 300), and a 4 MiB hot set in a 32 MiB range
 * waited for windows of halving.  Without room for all the cuts, it is
 * split as any target, and one that did not sleep before it ran (not
 * woken) too.
 */
TEST(woken_target_split_to_its_own_resolution)
{
	struct daptrace_target *quiet[64], *t;
	struct daptrace_region *r;
	struct daptrace_ctx ctx;
	unsigned int i, c;
	struct prng p;

	for (c = 0; c < 3; c++) {
		t = busy_after_64_sleeping(&ctx, &p, 17 + c, quiet, c == 1 ? 8 : 100);
		for (i = 0; i < ARRAY_SIZE(quiet); i++)
			quiet[i]->quiet = true;
		t->woke = c != 2;
		daptrace_aggregate(&ctx, daptrace_max_nr_accesses(&ctx.attrs));
		ASSERT_VALID(&ctx);
		TH_LOG("case %u: %u regions", c, t->nr_regions);
		if (c == 0) {
			ASSERT_EQ(12U, t->nr_regions);	/* 4 of 250 in each range */
			daptrace_for_each_region(r, t)
				ASSERT_GE(300UL, daptrace_sz_region(r));
		} else {
			/* no room for 9 cuts, or not woken: 2 or 3 of a range */
			ASSERT_LE(3U, t->nr_regions);
			ASSERT_GE(c == 1 ? 8U : 9U, t->nr_regions);
		}
		for (i = 0; i < ARRAY_SIZE(quiet); i++)
			ASSERT_EQ(3U, quiet[i]->nr_regions);
		ASSERT_EQ(3000UL + 64 * 300, daptrace_total_sz(&ctx));
		ctx_fini(&ctx);
		ASSERT_EQ(0, shim_nr_live);
	}
}

/*
 * Sleeping targets split while they ran keep their regions only while the
 * budget has room: past half of it they merge, and a target that runs
 * gets the room they held.
 */
TEST(merge_quiet_targets_when_crowded)
{
	struct daptrace_target *quiet[8], *t;
	struct daptrace_ctx ctx;
	struct prng p;
	int i;

	t = busy_among_quiet(&ctx, &p, quiet, 8);
	ASSERT_EQ(17U, daptrace_nr_regions(&ctx));	/* over 20 / 2 */
	daptrace_merge_regions(&ctx, 1, 1000);
	ASSERT_VALID(&ctx);
	for (i = 0; i < 8; i++) {
		ASSERT_EQ(1U, quiet[i]->nr_regions);
		/* merged: to be prepared afresh, and not split at once */
		ASSERT_FALSE(quiet[i]->quiet);
		ASSERT_TRUE(quiet[i]->merged_idle);
	}
	ASSERT_EQ(1U, t->nr_regions);
	/* 9 regions: the busy one splits until its pieces no longer fit */
	daptrace_split_regions(&ctx);
	ASSERT_EQ(2U, t->nr_regions);
	for (i = 0; i < 8; i++) {
		ASSERT_EQ(1U, quiet[i]->nr_regions);
		ASSERT_FALSE(quiet[i]->merged_idle);
		/* the next window's end finds them idle again */
		quiet[i]->quiet = true;
	}
	daptrace_split_regions(&ctx);
	ASSERT_EQ(4U, t->nr_regions);
	daptrace_split_regions(&ctx);
	ASSERT_EQ(8U, t->nr_regions);
	ctx_fini(&ctx);
	ASSERT_EQ(0, shim_nr_live);
}

/* Under half of the budget, quiet targets are left as they are. */
TEST(quiet_targets_kept_when_room)
{
	struct daptrace_target *quiet[4];
	struct daptrace_ctx ctx;
	struct prng p;
	int i;

	busy_among_quiet(&ctx, &p, quiet, 4);
	ASSERT_EQ(9U, daptrace_nr_regions(&ctx));	/* not over 20 / 2 */
	daptrace_merge_regions(&ctx, 1, 1000);
	for (i = 0; i < 4; i++) {
		ASSERT_EQ(2U, quiet[i]->nr_regions);
		ASSERT_TRUE(quiet[i]->quiet);
	}
	ctx_fini(&ctx);
	ASSERT_EQ(0, shim_nr_live);
}

/* Whatever the count, a split never leads past max_nr_regions. */
TEST(split_never_exceeds_max)
{
	struct rgn old[MAX_RGNS];
	unsigned int max, n, i, last;
	struct prng p;

	memset(old, 0, sizeof(old));
	for (i = 0; i < MAX_RGNS; i++) {
		old[i].start = i * 1000;
		old[i].end = i * 1000 + 1000;
	}
	for (max = 3; max <= 2 * MAX_RGNS; max++) {
		for (n = 1; n <= MAX_RGNS; n++) {
			for (last = 0; last < 2; last++) {
				struct daptrace_ctx ctx;

				ctx_setup(&ctx, 1, &p, max * 1000 + n);
				ctx.attrs.max_nr_regions = max;
				ctx.last_nr_regions = last ? n : 0;
				add_target(&ctx, 1, old, n);
				daptrace_split_regions(&ctx);
				ASSERT_LE(daptrace_nr_regions(&ctx), max > n ? max : n);
				ASSERT_EQ(n * 1000UL, daptrace_total_sz(&ctx));
				ASSERT_VALID(&ctx);
				ctx_fini(&ctx);
			}
		}
	}
	ASSERT_EQ(0, shim_nr_live);
}

/* ---- set regions ------------------------------------------------------- */

TEST(set_regions)
{
	static const struct {
		const char *name;
		unsigned long unit;
		struct rgn old[4];
		unsigned int nr_old;
		struct daptrace_addr_range ranges[5];
		unsigned int nr_ranges;
		struct rgn exp[8];
		unsigned int nr_exp;
	} cases[] = {
		{ "map shrinks", 1,
		  { { 0, 10, 1, 1, 1 }, { 10, 20, 2, 2, 2 }, { 20, 30, 3, 3, 3 } }, 3,
		  { { 5, 25 } }, 1,
		  { { 5, 10, 1, 1, 1 }, { 10, 20, 2, 2, 2 }, { 20, 25, 3, 3, 3 } }, 3 },
		{ "map grows", 1,
		  { { 0, 10, 1, 1, 1 }, { 10, 20, 2, 2, 2 }, { 20, 30, 3, 3, 3 } }, 3,
		  { { 0, 40 } }, 1,
		  { { 0, 10, 1, 1, 1 }, { 10, 20, 2, 2, 2 }, { 20, 40, 3, 3, 3 } }, 3 },
		{ "map moves away", 1,
		  { { 0, 10, 1, 1, 1 }, { 10, 20, 2, 2, 2 } }, 2,
		  { { 100, 200 } }, 1,
		  { { 100, 200 } }, 1 },
		{ "front unmapped", 1,
		  { { 0, 10, 1, 1, 1 }, { 10, 20, 2, 2, 2 }, { 20, 30, 3, 3, 3 } }, 3,
		  { { 15, 50 } }, 1,
		  { { 15, 20, 2, 2, 2 }, { 20, 50, 3, 3, 3 } }, 2 },
		{ "new gap cuts a region", 1,
		  { { 0, 100, 4, 5, 6 } }, 1,
		  { { 0, 30 }, { 60, 100 } }, 2,
		  { { 0, 30, 4, 5, 6 }, { 60, 100, 4, 5, 6 } }, 2 },
		{ "several gaps cut several regions", 1,
		  { { 0, 50, 1, 1, 1 }, { 50, 100, 2, 2, 2 } }, 2,
		  { { 0, 20 }, { 30, 40 }, { 45, 70 }, { 80, 90 } }, 4,
		  { { 0, 20, 1, 1, 1 }, { 30, 40, 1, 1, 1 }, { 45, 50, 1, 1, 1 },
		    { 50, 70, 2, 2, 2 }, { 80, 90, 2, 2, 2 } }, 5 },
		{ "new range created", 1,
		  { { 0, 10, 1, 1, 1 } }, 1,
		  { { 0, 10 }, { 20, 30 } }, 2,
		  { { 0, 10, 1, 1, 1 }, { 20, 30 } }, 2 },
		{ "new range in between", 1,
		  { { 0, 10, 1, 1, 1 }, { 50, 60, 2, 2, 2 } }, 2,
		  { { 0, 10 }, { 20, 30 }, { 50, 60 } }, 3,
		  { { 0, 10, 1, 1, 1 }, { 20, 30 }, { 50, 60, 2, 2, 2 } }, 3 },
		{ "hole inside a range is filled", 1,
		  { { 0, 10, 1, 1, 1 }, { 20, 30, 2, 2, 2 } }, 2,
		  { { 0, 30 } }, 1,
		  { { 0, 10, 1, 1, 1 }, { 10, 20 }, { 20, 30, 2, 2, 2 } }, 3 },
		{ "regions past the last range go", 1,
		  { { 0, 10, 1, 1, 1 }, { 20, 30, 2, 2, 2 }, { 40, 50, 3, 3, 3 } }, 3,
		  { { 0, 5 } }, 1,
		  { { 0, 5, 1, 1, 1 } }, 1 },
		{ "no ranges: nothing left", 1,
		  { { 0, 10, 1, 1, 1 } }, 1,
		  { { 0, 0 } }, 0,
		  { { 0, 0 } }, 0 },
		{ "no regions yet", 1,
		  { { 0, 0 } }, 0,
		  { { 0, 10 }, { 20, 30 } }, 2,
		  { { 0, 10 }, { 20, 30 } }, 2 },
		{ "unchanged", 1,
		  { { 0, 10, 1, 1, 1 }, { 10, 20, 2, 2, 2 }, { 30, 40, 3, 3, 3 } }, 3,
		  { { 0, 20 }, { 30, 40 } }, 2,
		  { { 0, 10, 1, 1, 1 }, { 10, 20, 2, 2, 2 }, { 30, 40, 3, 3, 3 } }, 3 },
		{ "range aligned outwards", 4096,
		  { { 0, 8192, 1, 1, 1 } }, 1,
		  { { 100, 5000 } }, 1,
		  { { 0, 8192, 1, 1, 1 } }, 1 },
		{ "ranges sharing a page", 4096,
		  { { 0, 8192, 1, 1, 1 } }, 1,
		  { { 0, 100 }, { 200, 5000 } }, 2,
		  { { 0, 4096, 1, 1, 1 }, { 4096, 8192, 1, 1, 1 } }, 2 },
	};
	struct daptrace_ctx ctx;
	struct prng p;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		struct daptrace_target *t;
		bool same = cases[i].nr_exp == cases[i].nr_old;
		unsigned int k;

		for (k = 0; same && k < cases[i].nr_old; k++)
			same = cases[i].old[k].start == cases[i].exp[k].start &&
			       cases[i].old[k].end == cases[i].exp[k].end;
		t = one_target(&ctx, cases[i].unit, &p, cases[i].old,
			       cases[i].nr_old);
		/* daptrace_va_update() skips the refit where nothing would change */
		EXPECT_EQ(same, daptrace_regions_fit(&ctx, t, cases[i].ranges,
						     cases[i].nr_ranges))
			TH_LOG("%s: regions_fit before", cases[i].name);
		t->quiet = true;
		ASSERT_EQ(0, daptrace_set_regions(&ctx, t, cases[i].ranges,
						  cases[i].nr_ranges));
		/* the prepare pass must walk the new regions */
		ASSERT_FALSE(t->quiet) TH_LOG("%s: still quiet", cases[i].name);
		EXPECT_TRUE(daptrace_regions_fit(&ctx, t, cases[i].ranges,
						 cases[i].nr_ranges))
			TH_LOG("%s: regions_fit after", cases[i].name);
		finish_case(_metadata, &ctx, cases[i].name, t, cases[i].exp,
			    cases[i].nr_exp);
	}
	ASSERT_EQ(0, shim_nr_live);
}

TEST(set_regions_bad_input)
{
	static const struct rgn old[] = { { 0, 10, 1, 2, 3 } };
	static const struct daptrace_addr_range overlap[] = {
		{ 0, 20 }, { 10, 30 },
	};
	static const struct daptrace_addr_range empty[] = { { 0, 20 }, { 30, 30 } };
	struct daptrace_target *t;
	struct daptrace_ctx ctx;
	struct prng p;

	t = one_target(&ctx, 1, &p, old, 1);
	t->quiet = true;
	ASSERT_EQ(-EINVAL, daptrace_set_regions(&ctx, t, overlap, 2));
	ASSERT_EQ(-EINVAL, daptrace_set_regions(&ctx, t, empty, 2));
	EXPECT_FALSE(daptrace_regions_fit(&ctx, t, overlap, 2));
	EXPECT_FALSE(daptrace_regions_fit(&ctx, t, empty, 2));
	expect_rgns(_metadata, "unchanged", t, old, 1, true);
	ASSERT_TRUE(t->quiet);
	ctx_fini(&ctx);
}

/* ---- allocation failures ------------------------------------------------ */

/* One allocating call under test for enomem_sweep(). */
typedef int (*enomem_op)(struct daptrace_ctx *ctx, struct daptrace_target *t,
			 const void *arg);

struct ranges_arg {
	const struct daptrace_addr_range *ranges;
	unsigned int nr;
};

static int op_set_regions(struct daptrace_ctx *ctx, struct daptrace_target *t,
			  const void *arg)
{
	const struct ranges_arg *a = arg;

	return daptrace_set_regions(ctx, t, a->ranges, a->nr);
}

static int op_init_regions(struct daptrace_ctx *ctx, struct daptrace_target *t,
			   const void *arg)
{
	const struct ranges_arg *a = arg;

	return daptrace_init_regions(ctx, t, a->ranges, a->nr);
}

static int op_split_first(struct daptrace_ctx *ctx, struct daptrace_target *t,
			  const void *arg)
{
	struct daptrace_region *r;

	r = list_first_entry(&t->regions, struct daptrace_region, list);
	return daptrace_evenly_split_region(ctx, t, r,
					    *(const unsigned int *)arg);
}

/*
 * Fail the N-th allocation for N = 0, 1, ... until @op succeeds on a fresh
 * target holding @old: each failure must return -ENOMEM, leave the target
 * exactly as it was and leak nothing; the success must leave @want_nr
 * regions.  Returns the first budget that succeeded.
 */
static long enomem_sweep(struct __test_metadata *_metadata,
			 const struct rgn *old, unsigned int nr_old,
			 enomem_op op, const void *arg, unsigned int want_nr)
{
	struct rgn got[MAX_RGNS];
	struct daptrace_target *t;
	struct daptrace_ctx ctx;
	struct prng p;
	long budget, live;
	int ret;

	for (budget = 0; ; budget++) {
		t = one_target(&ctx, 1, &p, old, nr_old);
		live = shim_nr_live;
		shim_alloc_budget = budget;
		ret = op(&ctx, t, arg);
		shim_alloc_budget = -1;
		ASSERT_VALID(&ctx);
		if (!ret) {
			ASSERT_EQ(want_nr, t->nr_regions);
			ctx_fini(&ctx);
			return budget;
		}
		ASSERT_EQ(-ENOMEM, ret);
		ASSERT_EQ(live, shim_nr_live);
		ASSERT_TRUE(rgns_equal(got, dump(t, got), old, nr_old, true));
		ctx_fini(&ctx);
	}
}

TEST(enomem_set_regions)
{
	static const struct rgn old[] = {
		{ 0, 50, 1, 1, 1 }, { 50, 100, 2, 2, 2 }, { 200, 300, 3, 3, 3 },
	};
	static const struct daptrace_addr_range ranges[] = {
		{ 0, 20 }, { 30, 40 }, { 45, 70 }, { 80, 90 }, { 150, 400 },
	};
	const struct ranges_arg arg = { ranges, ARRAY_SIZE(ranges) };

	ASSERT_GT(enomem_sweep(_metadata, old, ARRAY_SIZE(old),
			       op_set_regions, &arg, 6), 0);
	ASSERT_EQ(0, shim_nr_live);
}

TEST(enomem_init_and_evenly_split)
{
	static const struct rgn old[] = { { 0, 7, 1, 1, 1 } };
	static const struct daptrace_addr_range ranges[] = {
		{ 0, 100 }, { 200, 300 }, { 1000, 1100 },
	};
	const struct ranges_arg arg = { ranges, ARRAY_SIZE(ranges) };
	const unsigned int pieces = 7;

	ASSERT_GT(enomem_sweep(_metadata, old, ARRAY_SIZE(old),
			       op_init_regions, &arg, 10), 0);
	ASSERT_EQ(6, enomem_sweep(_metadata, old, ARRAY_SIZE(old),
				  op_split_first, &pieces, pieces));

	shim_alloc_budget = 0;
	ASSERT_EQ(NULL, daptrace_target_new(1, NULL));
	ASSERT_EQ(NULL, daptrace_region_new(0, 10));
	shim_alloc_budget = -1;
	ASSERT_EQ(0, shim_nr_live);
}

/* A split that cannot allocate leaves fewer, but valid, regions. */
TEST(enomem_aggregate)
{
	static const struct rgn old[] = {
		{ 0, 1000, 3 }, { 1000, 2000, 9 }, { 3000, 4000, 0 },
	};
	struct daptrace_ctx ctx;
	struct prng p;
	long budget;

	for (budget = 0; budget < 8; budget++) {
		ctx_setup(&ctx, 1, &p, 3);
		add_target(&ctx, 1, old, 3);
		shim_alloc_budget = budget;
		daptrace_aggregate(&ctx, daptrace_max_nr_accesses(&ctx.attrs));
		shim_alloc_budget = -1;
		ASSERT_VALID(&ctx);
		ASSERT_LE(daptrace_nr_regions(&ctx), 3 + budget);
		ASSERT_EQ(3000UL, daptrace_total_sz(&ctx));
		ctx_fini(&ctx);
	}
	ASSERT_EQ(0, shim_nr_live);
}

/*
 * One aggregation, exactly: ages are updated before the merge (which
 * weights them), the merge sees this window's counts, the reset comes before
 * the split.  Attributes: 20 samples per window, so the threshold is 2.
 */
TEST(aggregate_order)
{
	static const u32 half[] = { 4 };	/* every cut at 5/10 */
	static const struct rgn old[] = {
		{ 0, 10, 10, 10, 4 }, { 10, 20, 11, 0, 9 }, { 20, 1000, 0, 0, 7 },
	};
	static const struct rgn exp[] = {
		/* merged: nr (100 + 110) / 20, last 100 / 20, age (50 + 0) / 20 */
		{ 0, 10, 0, 10, 2 }, { 10, 20, 0, 10, 2 },
		{ 20, 510, 0, 0, 8 }, { 510, 1000, 0, 0, 8 },
	};
	struct script sc = { half, 1, 0 };
	struct daptrace_target *t;
	struct daptrace_ctx ctx;

	daptrace_ctx_init(&ctx, 1, script_rand, &sc);
	ctx.attrs.min_nr_regions = 3;		/* size limit 1000 / 3 */
	t = add_target(&ctx, 1, old, 3);
	daptrace_aggregate(&ctx, daptrace_max_nr_accesses(&ctx.attrs));
	expect_rgns(_metadata, "aggregate", t, exp, 4, true);
	ASSERT_EQ(2U, ctx.last_nr_regions);
	ctx_fini(&ctx);
	ASSERT_EQ(0, shim_nr_live);
}

/*
 * The thresholds are a tenth of the rounds the window had, not of the
 * nominal aggr_us / sample_us: a worker that was not scheduled (a busy
 * machine) ends its window on time with fewer rounds.  At 3 of a nominal
 * 20, a region read accessed 3 times and its neighbour read once differ
 * by two thirds of what the window could show, and stay apart; at 20
 * rounds the same counts are alike (a tenth: 2) and merge.  No split:
 * max_nr_regions leaves no room.
 */
TEST(aggregate_thresholds_follow_the_window)
{
	static const u32 half[] = { 4 };
	static const struct rgn old[] = {
		{ 0, 100, 3 }, { 100, 200, 1 }, { 200, 1000, 0 },
	};
	/* 3 rounds: 3 and 1 apart; 1 and 0 merge (against 0, a threshold of 1) */
	static const struct rgn starved[] = { { 0, 100 }, { 100, 1000 } };
	/* 20 rounds: 3 and 1 merge (reading 2), which stays apart from 0 */
	static const struct rgn full[] = { { 0, 200 }, { 200, 1000 } };
	static const struct {
		unsigned int nr_samples;
		const struct rgn *exp;
	} cases[] = { { 3, starved }, { 20, full } };
	struct daptrace_target *t;
	struct daptrace_ctx ctx;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		struct script sc = { half, 1, 0 };

		daptrace_ctx_init(&ctx, 1, script_rand, &sc);
		ASSERT_EQ(20U, daptrace_max_nr_accesses(&ctx.attrs));
		ctx.attrs.min_nr_regions = 1;
		ctx.attrs.max_nr_regions = 3;
		t = add_target(&ctx, 1, old, ARRAY_SIZE(old));
		daptrace_aggregate(&ctx, cases[i].nr_samples);
		expect_rgns(_metadata, cases[i].nr_samples == 3 ? "3 rounds" : "20 rounds",
			    t, cases[i].exp, 2, false);
		ctx_fini(&ctx);
	}
	ASSERT_EQ(0, shim_nr_live);
}

/*
 * A quiet target (none of its threads ran in the window) keeps its regions
 * and their sampling addresses through an aggregation: ages move on and
 * counts restart, nothing is merged or split; the other target is
 * aggregated as usual.
 */
/*
 * Ages and idle times count windows of the aggregation interval: when the
 * intervals goal changes it, the windows already counted are converted, so
 * that age x aggr_us stays the time it was.
 */
TEST(aggregate_converts_ages_when_the_interval_changes)
{
	static const struct rgn idle[] = { { 0, 1000, 0, 0, 9 } };
	struct daptrace_target *t;
	struct daptrace_region *r;
	struct daptrace_ctx ctx;
	struct prng p;

	ctx_setup(&ctx, 1, &p, 7);
	ctx.attrs.min_nr_regions = 1;
	ctx.attrs.max_nr_regions = 1;
	ctx.attrs.aggr_us = 100000;
	t = add_target(&ctx, 1, idle, 1);
	r = list_first_entry(&t->regions, struct daptrace_region, list);
	r->idle = 9;
	/* the first aggregation takes the interval the windows are of */
	daptrace_aggregate(&ctx, daptrace_max_nr_accesses(&ctx.attrs));
	ASSERT_EQ(10U, r->age);
	ASSERT_EQ(10U, r->idle);
	/* 11 windows of 100 ms, then 200 ms ones: 5.5, rounded to 6 */
	ctx.attrs.aggr_us = 200000;
	daptrace_aggregate(&ctx, daptrace_max_nr_accesses(&ctx.attrs));
	ASSERT_EQ(6U, r->age);
	ASSERT_EQ(6U, r->idle);
	/* unchanged: one window older */
	daptrace_aggregate(&ctx, daptrace_max_nr_accesses(&ctx.attrs));
	ASSERT_EQ(7U, r->age);
	/* 8 windows of 200 ms in windows of 50 ms */
	ctx.attrs.aggr_us = 50000;
	daptrace_aggregate(&ctx, daptrace_max_nr_accesses(&ctx.attrs));
	ASSERT_EQ(32U, r->age);
	ASSERT_EQ(32U, r->idle);
	/* no count past UINT_MAX */
	r->age = ~0U - 1;
	r->idle = ~0U - 1;
	ctx.attrs.aggr_us = 5000;
	daptrace_aggregate(&ctx, daptrace_max_nr_accesses(&ctx.attrs));
	ASSERT_EQ(~0U, r->age);
	ASSERT_EQ(~0U, r->idle);
	ctx_fini(&ctx);
	ASSERT_EQ(0, shim_nr_live);
}

TEST(aggregate_leaves_quiet_target)
{
	static const struct rgn old[] = {
		{ 0, 100, 0, 0, 4 }, { 100, 200, 0, 0, 4 }, { 200, 1000, 0, 0, 4 },
	};
	static const struct rgn kept[] = {
		{ 0, 100, 0, 0, 5 }, { 100, 200, 0, 0, 5 }, { 200, 1000, 0, 0, 5 },
	};
	unsigned long addrs[3] = { 50, 150, 999 };
	struct daptrace_target *quiet, *busy;
	struct daptrace_region *r;
	struct daptrace_ctx ctx;
	unsigned int i = 0;
	struct prng p;

	ctx_setup(&ctx, 1, &p, 7);
	ctx.attrs.min_nr_regions = 2;
	quiet = add_target(&ctx, 1, old, 3);
	busy = add_target(&ctx, 2, old, 3);
	daptrace_for_each_region(r, quiet)
		r->sampling_addr = addrs[i++];
	quiet->quiet = true;
	daptrace_aggregate(&ctx, daptrace_max_nr_accesses(&ctx.attrs));
	ASSERT_VALID(&ctx);
	expect_rgns(_metadata, "quiet target kept", quiet, kept, 3, true);
	ASSERT_TRUE(quiet->quiet);
	i = 0;
	daptrace_for_each_region(r, quiet)
		ASSERT_EQ(addrs[i++], r->sampling_addr);
	/*
	 * merged within its own size limit (1000 / 2, not the total's
	 * 2000 / 2): 0-200 and 200-1000, then each cut in two or three
	 */
	ASSERT_GE(busy->nr_regions, 4U);
	ASSERT_LE(busy->nr_regions, 6U);
	ctx_fini(&ctx);
	ASSERT_EQ(0, shim_nr_live);
}

/*
 * Quiet targets are outside max_nr_regions but not unbounded: past
 * max_nr_regions + 3 per target in all (within what the snapshot ring
 * holds) a quiet target is merged, even where its regions differ, and is
 * quiet no longer, so that the prepare pass walks its merged regions.
 * Below that it keeps what it has; a target that ran is held to the bound.
 */
TEST(aggregate_merges_quiet_target_over_max)
{
	struct rgn old[16];
	struct daptrace_target *t;
	struct daptrace_ctx ctx;
	struct prng p;
	unsigned int i, quiet;

	memset(old, 0, sizeof(old));
	for (i = 0; i < ARRAY_SIZE(old); i++) {
		old[i].start = i * 10;
		old[i].end = i * 10 + 10;
		old[i].nr = i % 2 ? 20 : 0;	/* no two neighbours alike */
	}
	for (quiet = 0; quiet < 2; quiet++) {
		ctx_setup(&ctx, 1, &p, 1);
		ctx.attrs.min_nr_regions = 10;
		ctx.attrs.max_nr_regions = 10;
		t = add_target(&ctx, 1, old, ARRAY_SIZE(old));
		t->quiet = quiet;
		daptrace_aggregate(&ctx, daptrace_max_nr_accesses(&ctx.attrs));
		ASSERT_VALID(&ctx);
		TH_LOG("%s: %u regions", quiet ? "quiet" : "ran", t->nr_regions);
		ASSERT_LE(t->nr_regions, quiet ? 13U : 10U);
		ASSERT_FALSE(t->quiet);
		ASSERT_EQ(160UL, daptrace_total_sz(&ctx));
		ctx_fini(&ctx);
	}
}

/* ---- sampling ---------------------------------------------------------- */

TEST(pick_sampling_addr)
{
	struct daptrace_region *r;
	struct daptrace_ctx ctx;
	unsigned int i, hits = 0, high = 0;
	struct prng p;

	ctx_setup(&ctx, 4096, &p, 99);
	r = daptrace_region_new(4096, 11 * 4096);
	ASSERT_NE(NULL, r);
	for (i = 0; i < 1000; i++) {
		daptrace_pick_sampling_addr(&ctx, r);
		ASSERT_GE(r->sampling_addr, 4096UL);
		ASSERT_LT(r->sampling_addr, 11 * 4096UL);
		ASSERT_EQ(0UL, r->sampling_addr % 4096);
		hits |= 1U << (r->sampling_addr / 4096 - 1);
	}
	ASSERT_EQ(0x3ffU, hits);		/* every page gets picked */

	if (sizeof(long) >= 8) {
		/* More than 2^32 granules: the upper bits must be reached. */
		ctx_setup(&ctx, 1, &p, 99);
		r->ar.start = 1UL << 40;
		r->ar.end = 1UL << 42;
		for (i = 0; i < 1000; i++) {
			daptrace_pick_sampling_addr(&ctx, r);
			ASSERT_GE(r->sampling_addr, r->ar.start);
			ASSERT_LT(r->sampling_addr, r->ar.end);
			high += r->sampling_addr >= (1UL << 41) + (1UL << 40);
		}
		/* a third land in the top third, give or take */
		ASSERT_GT(high, 270U);
		ASSERT_LT(high, 400U);

		/* the widest region possible */
		r->ar.start = 0;
		r->ar.end = ~0UL;
		for (i = 0; i < 100; i++)
			daptrace_pick_sampling_addr(&ctx, r);
		ASSERT_LT(r->sampling_addr, ~0UL);
	}
	kfree(r);
	ASSERT_EQ(0, shim_nr_live);
}

TEST(account_access)
{
	struct daptrace_region *r = daptrace_region_new(0, 10);

	ASSERT_NE(NULL, r);
	daptrace_account_access(r, true);
	daptrace_account_access(r, false);
	daptrace_account_access(r, true);
	ASSERT_EQ(2U, r->nr_accesses);
	r->nr_accesses = DAPTRACE_MAX_SAMPLES_PER_AGGR;
	daptrace_account_access(r, true);
	ASSERT_EQ(DAPTRACE_MAX_SAMPLES_PER_AGGR, r->nr_accesses);
	kfree(r);
}

/*
 * Placement: only present samples count, per node below the slot count, the
 * last present pfn wins, those a huge entry mapped count in nr_huge too, and
 * a new window (or a hole piece) starts empty.
 */
TEST(account_placement)
{
	static const struct rgn a[] = { { 0, 4096, 0, 0, 0 } };
	struct daptrace_region_rec rec;
	struct daptrace_region *r;
	struct daptrace_target *t;
	struct daptrace_ctx ctx;
	struct prng p;

	ctx_setup(&ctx, 1, &p, 1);
	ctx.min_region_sz = 4096;	/* phys_addr = pfn * page size */
	t = add_target(&ctx, 10, a, 1);
	r = list_first_entry(&t->regions, struct daptrace_region, list);
	EXPECT_EQ(DAPTRACE_NO_PFN, r->last_pfn);
	r->sample_pfn = DAPTRACE_NO_PFN;
	daptrace_account_placement(r, -1);		/* not present */
	r->sample_pfn = 7;
	r->sample_huge = true;			/* in a THP */
	daptrace_account_placement(r, 1);
	r->sample_pfn = 9;
	r->sample_huge = false;
	daptrace_account_placement(r, 0);
	r->sample_pfn = 11;
	daptrace_account_placement(r, DAPTRACE_NR_NODE_SLOTS);	/* high node */
	r->sample_pfn = 12;
	daptrace_account_placement(r, -1);		/* no memmap */
	EXPECT_EQ(4U, r->nr_present);
	EXPECT_EQ(1U, r->nr_huge);
	EXPECT_EQ(1U, r->node_samples[0]);
	EXPECT_EQ(1U, r->node_samples[1]);
	EXPECT_EQ(12UL, r->last_pfn);
	ASSERT_EQ(1U, daptrace_snapshot_fill(&ctx, &rec, 1, false));
	EXPECT_EQ(DAPTRACE_NO_PHYS, rec.phys_addr) TH_LOG("opt-in");
	ASSERT_EQ(1U, daptrace_snapshot_fill(&ctx, &rec, 1, true));
	EXPECT_EQ(12ULL * 4096, rec.phys_addr);
	EXPECT_EQ(4U, rec.nr_present);
	EXPECT_EQ(1U, rec.nr_huge);
	EXPECT_EQ(1U, rec.node_samples[0]);
	EXPECT_EQ(1U, rec.node_samples[1]);
	EXPECT_EQ(0U, rec.node_samples[2]);

	r->nr_present = DAPTRACE_MAX_SAMPLES_PER_AGGR;	/* saturates */
	daptrace_account_placement(r, 0);
	EXPECT_EQ(DAPTRACE_MAX_SAMPLES_PER_AGGR, r->nr_present);
	EXPECT_EQ(1U, r->node_samples[0]);

	/* an idle target's skipped checks repeat the last sample, huge or not */
	r->sample_huge = true;
	r->nr_present = 2;
	r->nr_huge = 0;
	daptrace_repeat_placement(t, 3);
	EXPECT_EQ(5U, r->nr_present);
	EXPECT_EQ(3U, r->nr_huge);

	daptrace_reset_aggregated(&ctx);
	EXPECT_EQ(0U, r->nr_present);
	EXPECT_EQ(0U, r->nr_huge);
	EXPECT_EQ(0U, r->node_samples[1]);
	EXPECT_EQ(DAPTRACE_NO_PFN, r->last_pfn);
	ctx_fini(&ctx);
}

/* ---- snapshot ------------------------------------------------------------ */

TEST(snapshot_fill)
{
	static const struct rgn a[] = { { 0, 10, 1, 0, 2 }, { 10, 30, 3, 0, 4 } };
	static const struct rgn b[] = { { 100, 200, 5, 0, 6 } };
	static const struct rgn c[] = { { 500, 600, 7, 0, 8 } };
	static const struct {
		u64 start, end;
		u32 nr, age;
		s32 pid;
	} exp[] = {
		{ 0, 10, 1, 2, 10 }, { 10, 30, 3, 4, 10 }, { 100, 200, 5, 6, 20 },
		{ 500, 600, 7, 8, 30 },
	};
	struct daptrace_region_rec recs[5];
	struct daptrace_target *gone;
	struct daptrace_ctx ctx;
	struct prng p;
	unsigned int i, n;

	ctx_setup(&ctx, 1, &p, 1);
	add_target(&ctx, 10, a, 2);
	gone = add_target(&ctx, 20, b, 1);
	/* Exited in the window being published: its regions still count. */
	gone->exited = true;
	add_target(&ctx, 30, c, 1);

	memset(recs, 0xff, sizeof(recs));
	n = daptrace_snapshot_fill(&ctx, recs, 5, true);
	ASSERT_EQ(4U, n);
	for (i = 0; i < n; i++) {
		EXPECT_EQ(exp[i].start, recs[i].start);
		EXPECT_EQ(exp[i].end, recs[i].end);
		EXPECT_EQ(exp[i].nr, recs[i].nr_accesses);
		EXPECT_EQ(exp[i].age, recs[i].age);
		EXPECT_EQ(exp[i].pid, recs[i].pid);
		EXPECT_EQ(0U, recs[i].nr_unobserved);
		/* nothing sampled yet: no placement */
		EXPECT_EQ(DAPTRACE_NO_PHYS, recs[i].phys_addr);
		EXPECT_EQ(0U, recs[i].nr_present);
		EXPECT_EQ(0U, recs[i].nr_huge);
		EXPECT_EQ(0U, recs[i].node_samples[0]);
		EXPECT_EQ(0U, recs[i].node_samples[DAPTRACE_REC_NODES - 1]);
	}
	/* untouched past the count */
	EXPECT_EQ(~0ULL, (unsigned long long)recs[4].start);

	/* Freed after that publish: in no later snapshot. */
	daptrace_free_target_regions(gone);
	memset(recs, 0xff, sizeof(recs));
	ASSERT_EQ(3U, daptrace_snapshot_fill(&ctx, recs, 5, true));
	EXPECT_EQ(500U, (unsigned int)recs[2].start);

	memset(recs, 0xff, sizeof(recs));
	ASSERT_EQ(2U, daptrace_snapshot_fill(&ctx, recs, 2, true));
	EXPECT_EQ(10U, (unsigned int)recs[1].start);
	EXPECT_EQ(~0ULL, (unsigned long long)recs[2].start);
	ASSERT_EQ(0U, daptrace_snapshot_fill(&ctx, recs, 0, true));
	ctx_fini(&ctx);
}

/* ---- targets -------------------------------------------------------------- */

TEST(targets_and_counts)
{
	static const struct rgn a[] = { { 0, 10 }, { 10, 30 } };
	static const struct rgn b[] = { { 100, 200 } };
	struct daptrace_target *ta, *tb;
	struct daptrace_region *r, *n;
	struct daptrace_ctx ctx;
	struct prng p;

	ta = one_target(&ctx, 1, &p, a, 2);
	tb = add_target(&ctx, 2, b, 1);
	ASSERT_EQ(2U, ctx.nr_targets);
	ASSERT_EQ(3U, daptrace_nr_regions(&ctx));
	ASSERT_EQ(130UL, daptrace_total_sz(&ctx));

	/* insert after the first region */
	r = list_first_entry(&ta->regions, struct daptrace_region, list);
	r->ar.end = 5;
	n = daptrace_region_new(5, 10);
	ASSERT_NE(NULL, n);
	daptrace_insert_region_after(ta, r, n);
	ASSERT_EQ(3U, ta->nr_regions);
	ASSERT_VALID(&ctx);

	daptrace_destroy_region(ta, n);
	ASSERT_EQ(2U, ta->nr_regions);
	daptrace_free_target_regions(tb);
	ASSERT_EQ(0U, tb->nr_regions);
	ASSERT_TRUE(list_empty(&tb->regions));
	daptrace_destroy_target(&ctx, tb);
	ASSERT_EQ(1U, ctx.nr_targets);
	ASSERT_VALID(&ctx);
	ctx_fini(&ctx);
	ASSERT_EQ(0U, ctx.nr_targets);
	ASSERT_EQ(0, shim_nr_live);
}

/* ---- the whole loop, randomized -------------------------------------------- */

/* Hot spots that move now and then, and some noise. */
static bool fake_accessed(struct prng *p, unsigned long unit,
			  unsigned long addr, unsigned int epoch,
			  unsigned int noise)
{
	unsigned long hot = (epoch * 7919UL % 64) * 256 * unit;

	if (prng_rand(p, 100) < noise)
		return prng_rand(p, 2);
	if (addr >= hot && addr < hot + 1024 * unit)
		return prng_rand(p, 10) < 9;
	return prng_rand(p, 100) < 3;
}

static unsigned int random_ranges(struct prng *p, unsigned long unit,
				  struct daptrace_addr_range *out)
{
	unsigned int n = 1 + prng_rand(p, 5), i;
	unsigned long base = prng_rand(p, 64) * unit;

	for (i = 0; i < n; i++) {
		out[i].start = base;
		base += (1 + prng_rand(p, 4096)) * unit;
		out[i].end = base;
		/* touching or apart */
		base += prng_rand(p, 4) ? (1 + prng_rand(p, 1024)) * unit : 0;
	}
	return n;
}

/*
 * Sample a synthetic workload (@noise percent of the checks are coin flips),
 * aggregate, and now and then change the memory map or let a target exit;
 * after every step the invariants must hold, merge and split must conserve
 * the total size, and an aggregation must leave at most max_nr_regions.
 */
static void random_run(struct __test_metadata *_metadata, unsigned long unit,
		       u64 seed, unsigned int iters, unsigned long min_nr,
		       unsigned long max_nr, unsigned int noise)
{
	struct daptrace_addr_range ranges[5];
	struct daptrace_region_rec *recs;
	struct daptrace_target *t, *tgts[2];
	struct daptrace_region *r;
	struct daptrace_ctx ctx;
	struct prng p, world;
	unsigned int it, s, i, n, max_acc, peak = 0;
	unsigned long sz;
	bool acc;

	ctx_setup(&ctx, unit, &p, seed);
	world.s = seed ^ 0x5deece66dULL;
	ctx.attrs.min_nr_regions = min_nr;
	ctx.attrs.max_nr_regions = max_nr;
	max_acc = daptrace_max_nr_accesses(&ctx.attrs);
	recs = calloc(DAPTRACE_MAX_NR_REGIONS, sizeof(*recs));
	ASSERT_NE(NULL, recs);

	for (i = 0; i < 2; i++)
		tgts[i] = add_target(&ctx, 100 + i, NULL, 0);
	for (i = 0; i < 2; i++) {
		n = random_ranges(&world, unit, ranges);
		ASSERT_EQ(0, daptrace_init_regions(&ctx, tgts[i], ranges, n));
	}
	ASSERT_VALID(&ctx);

	for (it = 0; it < iters; it++) {
		for (s = 0; s < max_acc; s++) {
			daptrace_for_each_target(t, &ctx) {
				if (t->exited)
					continue;
				daptrace_for_each_region(r, t)
					daptrace_pick_sampling_addr(&ctx, r);
				daptrace_for_each_region(r, t) {
					acc = fake_accessed(&world, unit,
							    r->sampling_addr,
							    it / 100, noise);
					daptrace_account_access(r, acc);
				}
			}
		}
		n = daptrace_snapshot_fill(&ctx, recs, DAPTRACE_MAX_NR_REGIONS, true);
		ASSERT_EQ(daptrace_nr_regions(&ctx), n);
		for (i = 0; i < n; i++)
			ASSERT_LE(recs[i].nr_accesses, max_acc);

		sz = daptrace_total_sz(&ctx);
		daptrace_aggregate(&ctx, daptrace_max_nr_accesses(&ctx.attrs));
		ASSERT_VALID(&ctx);
		ASSERT_EQ(sz, daptrace_total_sz(&ctx));
		ASSERT_LE(daptrace_nr_regions(&ctx), max_nr);
		if (daptrace_nr_regions(&ctx) > peak)
			peak = daptrace_nr_regions(&ctx);
		daptrace_for_each_target(t, &ctx)
			daptrace_for_each_region(r, t) {
				ASSERT_EQ(0U, r->nr_accesses);
				ASSERT_LE(r->last_nr_accesses, max_acc);
				ASSERT_LE(r->age, it + 1);
			}

		t = tgts[prng_rand(&world, 2)];
		if (it % 50 == 49 && !t->exited) {
			/* The memory map changed. */
			n = random_ranges(&world, unit, ranges);
			ASSERT_EQ(0, daptrace_set_regions(&ctx, t, ranges, n));
			ASSERT_VALID(&ctx);
			sz = 0;
			for (i = 0; i < n; i++)
				sz += ranges[i].end - ranges[i].start;
			i = 0;
			daptrace_for_each_region(r, t) {
				/* covered exactly, aligned ranges here */
				while (r->ar.start >= ranges[i].end)
					i++;
				ASSERT_GE(r->ar.start, ranges[i].start);
				ASSERT_LE(r->ar.end, ranges[i].end);
				sz -= daptrace_sz_region(r);
			}
			ASSERT_EQ(0UL, sz);
		}
		if (it == iters / 2) {
			/* What the worker does when a target exits. */
			tgts[1]->exited = true;
			daptrace_free_target_regions(tgts[1]);
		}
	}
	ctx_fini(&ctx);
	free(recs);
	ksft_print_msg("%u aggregations, at most %u regions (max %lu)\n",
		       iters, peak, max_nr);
	ASSERT_EQ(0, shim_nr_live);
}

TEST(random_invariants_bytes)
{
	random_run(_metadata, 1, 0x1234abcdULL, 2000, 10, 100, 0);
}

TEST(random_invariants_pages)
{
	random_run(_metadata, 4096, 0xfeedfaceULL, 2000, 10, 100, 0);
}

/* Mostly noise: few merges, so the counts press against max. */
TEST(random_invariants_noisy)
{
	random_run(_metadata, 4096, 0xc0ffeeULL, 2000, 10, 40, 80);
}

/* min == max and barely above the number of ranges. */
TEST(random_invariants_tight)
{
	random_run(_metadata, 1, 0xabcdefULL, 2000, 12, 12, 30);
}

/* ---- finding a small hot set ------------------------------------------ */

/*
 * The whole loop on a modelled process: default attributes, 4 KiB pages,
 * 2 GiB monitored of which a 4 MiB hot set (every sample of it reads
 * accessed) sits in the middle, the rest never accessed.  Per run of 100
 * windows (10 s) the first second is warm-up and the hot-byte recall of the
 * others (regions with at least half the samples accessed) is ranked.  With
 * fixed seeds the result is exact; it measures how reliably the split/merge
 * policy finds a hot set 1/512 of the address space.  DAMON's merge rule
 * (no halved threshold against 0) fails 23 of these 100 runs, this one 4.
 */
#define HS_RUNS		100
#define HS_WINDOWS	100
#define HS_SETTLE	10

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* A modelled process: one target with 4 KiB pages over @ranges. */
static struct daptrace_target *model_process(struct daptrace_ctx *ctx, struct prng *p,
					     u64 seed,
					     const struct daptrace_addr_range *ranges,
					     unsigned int n)
{
	struct daptrace_target *t;

	ctx_setup(ctx, 4096, p, seed);
	t = daptrace_target_new(1, NULL);
	if (!t)
		abort();
	daptrace_add_target(ctx, t);
	if (daptrace_init_regions(ctx, t, ranges, n))
		abort();
	return t;
}

/*
 * One modelled window: @nr checks of every region of @t, a check reading
 * accessed where it lands in the hot set [@hs, @he).  Returns the hot bytes
 * in regions read hot (at least half of the checks).
 */
static unsigned long hot_set_window(struct daptrace_ctx *ctx, struct daptrace_target *t,
				    unsigned long hs, unsigned long he, unsigned int nr)
{
	struct daptrace_region *r;
	unsigned long found = 0, a, b;
	unsigned int i;

	for (i = 0; i < nr; i++) {
		daptrace_for_each_region(r, t) {
			daptrace_pick_sampling_addr(ctx, r);
			daptrace_account_access(r, r->sampling_addr >= hs &&
						r->sampling_addr < he);
		}
	}
	daptrace_for_each_region(r, t) {
		a = max(r->ar.start, hs);
		b = min(r->ar.end, he);
		if (2 * r->nr_accesses >= nr && b > a)
			found += b - a;
	}
	return found;
}

/* Median recall of one run. */
static double hot_set_run(u64 seed, unsigned int *max_regions)
{
	const unsigned long mib = 1UL << 20, base = 0x7f0000000000UL;
	const struct daptrace_addr_range ranges[] = {
		{ 0x400000, 0x421000 },
		{ base - 1024 * mib, base + 1024 * mib },
		{ 0x7ffff0000000UL, 0x7ffff0021000UL },
	};
	const unsigned long hs = base + 510 * mib, he = hs + 4 * mib;
	double recall[HS_WINDOWS - HS_SETTLE];
	struct daptrace_target *t;
	struct daptrace_ctx ctx;
	unsigned int w, nr;
	struct prng p;

	t = model_process(&ctx, &p, seed, ranges, ARRAY_SIZE(ranges));
	nr = daptrace_max_nr_accesses(&ctx.attrs);
	for (w = 0; w < HS_WINDOWS; w++) {
		unsigned long found = hot_set_window(&ctx, t, hs, he, nr);

		if (w >= HS_SETTLE)
			recall[w - HS_SETTLE] = (double)found / (he - hs);
		*max_regions = max(*max_regions, t->nr_regions);
		daptrace_aggregate(&ctx, daptrace_max_nr_accesses(&ctx.attrs));
	}
	ctx_fini(&ctx);
	qsort(recall, ARRAY_SIZE(recall), sizeof(recall[0]), cmp_double);
	return recall[ARRAY_SIZE(recall) / 2];
}

/*
 * The recall goal in a closed loop on a modelled blocks workload (as in
 * selftests/functional/recall_goal): 128 MiB of alternating hot and cold
 * 2 MiB blocks (a hot page reads accessed at every check), one check per
 * 100 ms window, a budget of 10 regions, 64 probe pages per window, the
 * worker's CPU time taken as 10 us per check.  Returns the pooled
 * estimated recall of the last @tail of @windows windows; the budget and
 * samples per window the run ended with go to *@b and *@s.
 */
static double blocks_run(u64 seed, unsigned long goal_bp, unsigned long budget,
			 unsigned int windows, unsigned int tail,
			 unsigned long *b, unsigned long *s)
{
	const unsigned long mib = 1UL << 20, base = 0x7f0000000000UL;
	const struct daptrace_addr_range ranges[] = {
		{ 0x400000, 0x421000 },
		{ base, base + 128 * mib },
		{ 0x7ffff0000000UL, 0x7ffff0021000UL },
	};
	struct daptrace_probe probes[64 * DAPTRACE_PROBE_DRAWS];
	unsigned long nb, ns, tp = 0, fn = 0;
	struct daptrace_target *t;
	struct daptrace_region *r;
	struct daptrace_ctx ctx;
	unsigned int w, i, nr;
	struct prng p;

	ctx_setup(&ctx, 4096, &p, seed);
	ctx.attrs.sample_us = 100000;
	ctx.attrs.aggr_us = 100000;
	ctx.attrs.min_nr_regions = 10;
	ctx.attrs.max_nr_regions = budget;
	ctx.attrs.recall_goal_bp = goal_bp;
	if (daptrace_attrs_validate(&ctx.attrs))
		abort();
	t = daptrace_target_new(1, NULL);
	if (!t)
		abort();
	daptrace_add_target(&ctx, t);
	if (daptrace_init_regions(&ctx, t, ranges, ARRAY_SIZE(ranges)))
		abort();
	ctx.probes = probes;
#define BLOCK_HOT(a) ((a) >= base && (a) < base + 128 * mib && \
		      !((((a) - base) / (2 * mib)) & 1))
	for (w = 0; w < windows; w++) {
		struct daptrace_probe_counts c = {};

		daptrace_probes_pick(&ctx, 64);
		daptrace_probes_select(&ctx);
		for (i = 0; i < ctx.nr_probes; i++)
			probes[i].seen = BLOCK_HOT(probes[i].addr) ?
					 DAPTRACE_PROBE_YOUNG : DAPTRACE_PROBE_OLD;
		nr = daptrace_max_nr_accesses(&ctx.attrs);
		for (i = 0; i < nr; i++) {
			daptrace_for_each_region(r, t) {
				daptrace_pick_sampling_addr(&ctx, r);
				daptrace_account_access(r, BLOCK_HOT(r->sampling_addr));
			}
		}
		daptrace_probes_account(&ctx, nr, &c);
		if (w >= windows - tail) {
			tp += c.tp;
			fn += c.fn;
		}
		if (daptrace_tune_recall(&ctx, &c, 10000ULL * nr * t->nr_regions,
					 100000000, &nb, &ns)) {
			ctx.attrs.max_nr_regions = nb;
			ctx.attrs.sample_us = ns;
		}
		ctx.nr_probes = 0;
		daptrace_aggregate(&ctx, daptrace_max_nr_accesses(&ctx.attrs));
	}
#undef BLOCK_HOT
	*b = ctx.attrs.max_nr_regions;
	*s = ctx.attrs.aggr_us / ctx.attrs.sample_us;
	ctx_fini(&ctx);
	return tp + fn ? (double)tp / (tp + fn) : -1;
}

/*
 * Without the goal the recall stays near 0.5; the budget the goal reached
 * in the VM when it tuned only that (164) leaves it below 0.7; the goal,
 * adding samples per window first, brings it to 0.9 (4 or 8 samples).
 */
TEST(recall_goal_blocks)
{
	unsigned long b, s;
	double none, budget, goal;
	unsigned int run;

	for (run = 0; run < 5; run++) {
		/* 40 s, the last 8 s measured */
		none = blocks_run(run + 1, 0, 10, 400, 80, &b, &s);
		EXPECT_EQ(10UL, b);
		EXPECT_EQ(1UL, s);
		/* the actuator the goal had before: 164 regions, one sample */
		budget = blocks_run(run + 1, 0, 164, 400, 80, &b, &s);
		goal = blocks_run(run + 1, 9000, 10, 400, 80, &b, &s);
		printf("# seed %u: recall without the goal %.3f, with 164 regions %.3f, with the goal %.3f (%lu regions, %lu samples per window)\n",
		       run + 1, none, budget, goal, b, s);
		EXPECT_LT(none, 0.7);
		EXPECT_LE(budget, goal - 0.15) TH_LOG("more regions alone help little");
		EXPECT_GE(goal, 0.9);
		EXPECT_GT(s, 1UL);
	}
	ASSERT_EQ(0, shim_nr_live);
}

TEST(finds_small_hot_set)
{
	unsigned int run, good = 0, max_regions = 0;

	for (run = 0; run < HS_RUNS; run++)
		if (hot_set_run(run + 1, &max_regions) >= 0.9)
			good++;
	printf("# %u of %u runs: median recall >= 0.9; at most %u regions\n",
	       good, HS_RUNS, max_regions);
	ASSERT_GE(good, 95U);
	ASSERT_LE(max_regions, DAPTRACE_DEF_MAX_NR_REGIONS);
	ASSERT_EQ(0, shim_nr_live);
}

/*
 * A starved worker (selftests/follow/tree on a busy host: four processes
 * of two spinning threads each on the guest's two CPUs) ends its windows
 * on time with 4 sampling rounds instead of 20.  Modelled: one process,
 * its 32 MiB mapping in a 48 MiB range besides 200 MiB of heap, a 4 MiB
 * hot set read accessed at every check, windows of 4 rounds of a nominal
 * 20.  Per run the median, over the windows after the first 20, of the
 * precision (the hot set's share of the mapping's bytes read hot);
 * wanted: at least 0.96 in nine runs of ten, and 0.985 in half of them.
 * With the fixed seeds: 0.971 and 0.992; at the thresholds of the nominal
 * 20 rounds (a tenth: 2, which merges a count of 4 with one of 2, and so
 * the hot set with part of its neighbours), 0.939 and 0.973.
 */
#define SW_RUNS		40
#define SW_WINDOWS	60
#define SW_SETTLE	20

static double starved_run(u64 seed, unsigned int nr)
{
	const unsigned long mib = 1UL << 20, base = 0x7f0000000000UL;
	const struct daptrace_addr_range ranges[] = {
		{ 0x400000, 0x400000 + 200 * mib },
		{ base, base + 48 * mib },
		{ 0x7ffff0000000UL, 0x7ffff0021000UL },
	};
	const unsigned long ms = base + 10 * mib, me = ms + 32 * mib;
	const unsigned long hs = ms + 12 * mib, he = hs + 4 * mib;
	double prec[SW_WINDOWS - SW_SETTLE];
	struct daptrace_target *t;
	struct daptrace_region *r;
	struct daptrace_ctx ctx;
	unsigned int w, i;
	struct prng p;

	t = model_process(&ctx, &p, seed, ranges, ARRAY_SIZE(ranges));
	for (w = 0; w < SW_WINDOWS; w++) {
		unsigned long pred = 0, pred_hot = 0;

		for (i = 0; i < nr; i++)
			daptrace_for_each_region(r, t) {
				daptrace_pick_sampling_addr(&ctx, r);
				daptrace_account_access(r, r->sampling_addr >= hs &&
							r->sampling_addr < he);
			}
		daptrace_for_each_region(r, t) {
			unsigned long a = max(r->ar.start, ms), b = min(r->ar.end, me);
			unsigned long c = max(r->ar.start, hs), d = min(r->ar.end, he);

			if (b <= a || 2 * r->nr_accesses < nr)
				continue;
			pred += b - a;
			pred_hot += d > c ? d - c : 0;
		}
		if (w >= SW_SETTLE)
			prec[w - SW_SETTLE] = pred ? (double)pred_hot / pred : 0;
		daptrace_aggregate(&ctx, nr);
	}
	ctx_fini(&ctx);
	qsort(prec, ARRAY_SIZE(prec), sizeof(prec[0]), cmp_double);
	return prec[ARRAY_SIZE(prec) / 2];
}

TEST(finds_hot_set_in_starved_windows)
{
	double prec[SW_RUNS];
	unsigned int run;

	for (run = 0; run < SW_RUNS; run++)
		prec[run] = starved_run(run + 1, 4);
	qsort(prec, SW_RUNS, sizeof(prec[0]), cmp_double);
	printf("# 4 rounds of 20: runs' median precision: worst %.3f, p10 %.3f, median %.3f\n",
	       prec[0], prec[SW_RUNS / 10], prec[SW_RUNS / 2]);
	EXPECT_GE(prec[SW_RUNS / 10], 0.96);
	EXPECT_GE(prec[SW_RUNS / 2], 0.985);
	ASSERT_EQ(0, shim_nr_live);
}

/*
 * A policy's view of a warm set next to a cold one, modelled after
 * selftests/policy/reclaim: 128 MiB never accessed, directly above it
 * 32 MiB read once a second (a burst seen by 3 of a window's 20 samples),
 * above that 32 MiB hot.  A policy paging out memory idle for 5 s can take
 * a cold page only if no region holding it showed an access in the last
 * 50 windows.  Per run, the cold bytes so held at 10, 15 and 20 s after the
 * start; the test wants them under 2 % of the cold set at 15 s in nine
 * runs of ten (the reclaim test's goal is 90 % of the cold set paged out
 * within 30 s), in this layout and mirrored (merging goes left to right).
 * With fixed seeds the result is exact.
 */
#define WB_RUNS		100
#define WB_WINDOWS	200
#define WB_IDLE		50

static void warm_boundary_run(u64 seed, bool mirrored, double held[3],
			      unsigned int *max_regions)
{
	const unsigned long mib = 1UL << 20, base = 0x7f0000000000UL;
	/* cold, warm, hot upwards; mirrored: hot, warm, cold */
	const unsigned long cs = mirrored ? base + 64 * mib : base, ce = cs + 128 * mib;
	const unsigned long ws = mirrored ? base + 32 * mib : ce, we = ws + 32 * mib;
	const unsigned long hs = mirrored ? base : we, he = hs + 32 * mib;
	const struct daptrace_addr_range ranges[] = {
		{ 0x400000, 0x421000 },
		{ base, base + 192 * mib },
		{ 0x7ffff0000000UL, 0x7ffff0021000UL },
	};
	static int last[32768];		/* per cold page: last window held */
	struct daptrace_target *t;
	struct daptrace_region *r;
	struct daptrace_ctx ctx;
	unsigned int w, i, nr, k = 0;
	struct prng p;

	t = model_process(&ctx, &p, seed, ranges, ARRAY_SIZE(ranges));
	for (i = 0; i < ARRAY_SIZE(last); i++)
		last[i] = -WB_IDLE;
	nr = daptrace_max_nr_accesses(&ctx.attrs);
	for (w = 0; w < WB_WINDOWS; w++) {
		unsigned long a, b, held_pages = 0;

		for (i = 0; i < nr; i++) {
			bool warm = w % 10 == 3 && i >= 8 && i < 11;

			daptrace_for_each_region(r, t) {
				unsigned long s;

				daptrace_pick_sampling_addr(&ctx, r);
				s = r->sampling_addr;
				daptrace_account_access(r, (s >= hs && s < he) ||
							(warm && s >= ws && s < we));
			}
		}
		daptrace_for_each_region(r, t) {
			a = max(r->ar.start, cs);
			b = min(r->ar.end, ce);
			if (!r->nr_accesses || b <= a)
				continue;
			for (; a < b; a += 4096)
				last[(a - cs) / 4096] = w;
		}
		for (i = 0; i < ARRAY_SIZE(last); i++)
			held_pages += (int)w - last[i] < WB_IDLE;
		if (w == 99 || w == 149 || w == 199)
			held[k++] = (double)held_pages / ARRAY_SIZE(last);
		*max_regions = max(*max_regions, t->nr_regions);
		daptrace_aggregate(&ctx, daptrace_max_nr_accesses(&ctx.attrs));
	}
	ctx_fini(&ctx);
}

TEST(warm_set_does_not_hold_cold_neighbour)
{
	unsigned int run, good, max_regions = 0, j, m;
	double held[WB_RUNS][3], col[WB_RUNS];

	for (m = 0; m < 2; m++) {
		good = 0;
		for (run = 0; run < WB_RUNS; run++) {
			warm_boundary_run(run + 1, m, held[run], &max_regions);
			if (held[run][1] < 0.02)
				good++;
		}
		for (j = 0; j < 3; j++) {
			for (run = 0; run < WB_RUNS; run++)
				col[run] = held[run][j];
			qsort(col, WB_RUNS, sizeof(col[0]), cmp_double);
			printf("# %s: cold held at %u s: median %.3f, p90 %.3f, max %.3f\n",
			       m ? "cold above warm" : "cold below warm", 10 + 5 * j,
			       col[WB_RUNS / 2], col[WB_RUNS * 9 / 10], col[WB_RUNS - 1]);
		}
		printf("# %u of %u runs: < 2%% of the cold set held at 15 s; at most %u regions\n",
		       good, WB_RUNS, max_regions);
		EXPECT_GE(good, 90U);
	}
	ASSERT_EQ(0, shim_nr_live);
}

/* ---- touched-chunk split (the upper-level scan) ------------------------ */

struct touched_case {
	const char *name;
	struct daptrace_addr_range runs[4];
	unsigned int nr_runs;
	unsigned long room;
	unsigned int added;
	struct rgn exp[8];
	unsigned int nr_exp;
};

/*
 * What daptrace_split_touched() makes of one region [0, 1000) (granularity
 * 4, stats 5/3/7) given the runs found touched and the room left.
 */
TEST(split_touched_cuts)
{
	static const struct touched_case cases[] = {
		{ "interior run", { { 200, 300 } }, 1, 10, 2,
		  { { 0, 200, 5, 3, 7 }, { 200, 300, 5, 3, 7 },
		    { 300, 1000, 5, 3, 7 } }, 3 },
		{ "run at the start", { { 0, 300 } }, 1, 10, 1,
		  { { 0, 300, 5, 3, 7 }, { 300, 1000, 5, 3, 7 } }, 2 },
		{ "run at the end", { { 900, 1000 } }, 1, 10, 1,
		  { { 0, 900, 5, 3, 7 }, { 900, 1000, 5, 3, 7 } }, 2 },
		{ "all touched", { { 0, 1000 } }, 1, 10, 0,
		  { { 0, 1000, 5, 3, 7 } }, 1 },
		{ "widened to the granularity", { { 197, 303 } }, 1, 10, 2,
		  { { 0, 196, 5, 3, 7 }, { 196, 304, 5, 3, 7 },
		    { 304, 1000, 5, 3, 7 } }, 3 },
		{ "parts outside ignored", { { 900, 1200 }, { 1500, 1600 } }, 2, 10, 1,
		  { { 0, 900, 5, 3, 7 }, { 900, 1000, 5, 3, 7 } }, 2 },
		{ "touching runs are one", { { 100, 200 }, { 200, 300 } }, 2, 10, 2,
		  { { 0, 100, 5, 3, 7 }, { 100, 300, 5, 3, 7 },
		    { 300, 1000, 5, 3, 7 } }, 3 },
		{ "three runs, room for all", { { 100, 200 }, { 252, 300 }, { 700, 800 } },
		  3, 6, 6,
		  { { 0, 100, 5, 3, 7 }, { 100, 200, 5, 3, 7 }, { 200, 252, 5, 3, 7 },
		    { 252, 300, 5, 3, 7 }, { 300, 700, 5, 3, 7 }, { 700, 800, 5, 3, 7 },
		    { 800, 1000, 5, 3, 7 } }, 7 },
		{ "room 4: the smallest gap joined", { { 100, 200 }, { 252, 300 }, { 700, 800 } },
		  3, 4, 4,
		  { { 0, 100, 5, 3, 7 }, { 100, 300, 5, 3, 7 }, { 300, 700, 5, 3, 7 },
		    { 700, 800, 5, 3, 7 }, { 800, 1000, 5, 3, 7 } }, 5 },
		{ "room 3: all joined", { { 100, 200 }, { 252, 300 }, { 700, 800 } },
		  3, 3, 2,
		  { { 0, 100, 5, 3, 7 }, { 100, 800, 5, 3, 7 },
		    { 800, 1000, 5, 3, 7 } }, 3 },
		{ "room 1: an interior run stays", { { 200, 300 } }, 1, 1, 0,
		  { { 0, 1000, 5, 3, 7 } }, 1 },
		{ "room 1: a run at the start is cut", { { 0, 300 } }, 1, 1, 1,
		  { { 0, 300, 5, 3, 7 }, { 300, 1000, 5, 3, 7 } }, 2 },
		{ "nothing touched", { }, 0, 10, 0,
		  { { 0, 1000, 5, 3, 7 } }, 1 },
	};
	const struct rgn whole[] = { { 0, 1000, 5, 3, 7 } };
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		const struct touched_case *c = &cases[i];
		struct daptrace_target *t;
		struct daptrace_ctx ctx;
		struct prng p;

		t = one_target(&ctx, 4, &p, whole, 1);
		EXPECT_EQ(c->added, daptrace_split_touched(&ctx, t,
				list_first_entry(&t->regions, struct daptrace_region, list),
				c->runs, c->nr_runs, c->room)) TH_LOG("case '%s'", c->name);
		expect_rgns(_metadata, c->name, t, c->exp, c->nr_exp, true);
		ASSERT_EQ(NULL, check_ctx(&ctx)) TH_LOG("case '%s'", c->name);
		ctx_fini(&ctx);
	}
	ASSERT_EQ(0, shim_nr_live);
}

/* More runs than kept: the rest joins the last one, and nothing is lost. */
TEST(split_touched_many_runs)
{
	struct daptrace_addr_range runs[DAPTRACE_MAX_TOUCHED_RUNS + 8];
	const struct rgn whole[] = { { 0, 100000 } };
	struct daptrace_target *t;
	struct daptrace_region *r;
	struct daptrace_ctx ctx;
	unsigned int i, added;
	struct prng p;

	for (i = 0; i < ARRAY_SIZE(runs); i++) {
		runs[i].start = 1000 * (i + 1);
		runs[i].end = runs[i].start + 100;
	}
	t = one_target(&ctx, 1, &p, whole, 1);
	r = list_first_entry(&t->regions, struct daptrace_region, list);
	added = daptrace_split_touched(&ctx, t, r, runs, ARRAY_SIZE(runs), 1000);
	ASSERT_EQ(2 * DAPTRACE_MAX_TOUCHED_RUNS, added);
	ASSERT_EQ(NULL, check_ctx(&ctx));
	/* the last region cut out reaches to the last run's end */
	r = list_last_entry(&t->regions, struct daptrace_region, list);
	ASSERT_EQ(runs[ARRAY_SIZE(runs) - 1].end, r->ar.start);
	ctx_fini(&ctx);
	ASSERT_EQ(0, shim_nr_live);
}

/*
 * The case the upper-level scan exists for (issue 35): a hot set of 8 MiB at
 * a random 2 MiB-aligned place in a 1 TiB mapping, touched continuously,
 * the rest never, with DAMON's defaults (20 samples a window, 10..1000
 * regions).  A region's sample lands on the hot set with a chance of 8 MiB
 * in some 100 GiB: regions read cold, and nothing ever cuts the hot set
 * out.  With the scan, the operations observe every other window (arm,
 * then collect: kernel/vaddr.c) and hand the touched 2 MiB chunks of each
 * region of at least 32 MiB to daptrace_split_touched().  Found: regions
 * read hot (at least half the samples) cover 90 % of the hot set.  With the
 * scan every run finds it within 10 windows (an observation, then a window
 * of samples).  Without, a region's rare hit is kept apart from its
 * never-accessed neighbours (daptrace_same_history()) and cut closer at
 * each sighting, so the hot set is found too, but later: in 1 TiB after
 * tens to hundreds of windows (median 83, at most 5 runs in 100 within
 * 10); in 16 GiB (regions of about 1.6 GiB, which a window's samples hit
 * with a chance of 1 in 10) after a median of 11 windows.  The scan is
 * asked to be at least three times faster than that median.  Fixed seeds:
 * exact.
 */
#define SP_RUNS		100
#define SP_WINDOWS	300
#define SP_FAST		10

static int cmp_uint(const void *a, const void *b)
{
	unsigned int x = *(const unsigned int *)a, y = *(const unsigned int *)b;

	return x < y ? -1 : x > y;
}

static unsigned int sparse_run(u64 seed, unsigned long span, bool upper,
			       unsigned int *max_regions)
{
	const unsigned long mib = 1UL << 20, chunk = 2 * mib, base = 0x7e0000000000UL;
	const struct daptrace_addr_range ranges[] = {
		{ 0x400000, 0x421000 },
		{ base, base + span },
		{ 0x7ffff0000000UL, 0x7ffff0021000UL },
	};
	struct daptrace_region *r, *next;
	struct daptrace_target *t;
	unsigned long hs, he, room;
	struct daptrace_ctx ctx;
	unsigned int w, nr;
	struct prng p;

	t = model_process(&ctx, &p, seed, ranges, ARRAY_SIZE(ranges));
	hs = base + (prng_next(&p) % ((span - 8 * mib) / chunk)) * chunk;
	he = hs + 8 * mib;
	nr = daptrace_max_nr_accesses(&ctx.attrs);
	for (w = 0; w < SP_WINDOWS; w++) {
		unsigned long found = hot_set_window(&ctx, t, hs, he, nr);

		if (found * 10 >= (he - hs) * 9)
			break;
		*max_regions = max(*max_regions, t->nr_regions);
		daptrace_aggregate(&ctx, daptrace_max_nr_accesses(&ctx.attrs));
		if (!upper || w % 2 == 0)
			continue;
		/* the chunks found touched: the hot set's, in large regions */
		daptrace_for_each_region_safe(r, next, t) {
			struct daptrace_addr_range run = { hs, he };

			if (daptrace_sz_region(r) < 32 * mib)
				continue;
			room = ctx.attrs.max_nr_regions - t->nr_regions;
			daptrace_split_touched(&ctx, t, r, &run, 1, room);
		}
		*max_regions = max(*max_regions, t->nr_regions);
	}
	ctx_fini(&ctx);
	return w;
}

static void sparse_runs(struct __test_metadata *_metadata, unsigned long span,
			unsigned int max_fast)
{
	unsigned int run, w, with_max = 0, without_fast = 0, max_regions = 0;
	unsigned int without[SP_RUNS];

	for (run = 0; run < SP_RUNS; run++) {
		w = sparse_run(run + 1, span, true, &max_regions);
		with_max = max(with_max, w);
		without[run] = sparse_run(run + 1, span, false, &max_regions);
		without_fast += without[run] < SP_FAST;
	}
	qsort(without, SP_RUNS, sizeof(without[0]), cmp_uint);
	printf("# %lu GiB: with the scan found within %u windows in every run; without: within %u in %u of %u runs, median %u, p10 %u, p90 %u windows (%u: not in %u)\n",
	       span >> 30, with_max + 1, SP_FAST, without_fast, SP_RUNS,
	       without[SP_RUNS / 2] + 1, without[SP_RUNS / 10] + 1,
	       without[SP_RUNS * 9 / 10] + 1, SP_WINDOWS + 1, SP_WINDOWS);
	ASSERT_LT(with_max, SP_FAST);
	ASSERT_LE(without_fast, max_fast);
	/* the scan finds it several times faster than the median without */
	ASSERT_GE(without[SP_RUNS / 2], 3 * (with_max + 1));
	ASSERT_LE(max_regions, DAPTRACE_DEF_MAX_NR_REGIONS);
	ASSERT_EQ(0, shim_nr_live);
}

TEST(sparse_hot_set_needs_touched_split)
{
	sparse_runs(_metadata, 1UL << 40, SP_RUNS / 20);
}

TEST(sparse_16g_hot_set_needs_touched_split)
{
	sparse_runs(_metadata, 16UL << 30, SP_RUNS);
}

TEST_HARNESS_MAIN
