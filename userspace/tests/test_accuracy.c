// SPDX-License-Identifier: GPL-2.0-only
/*
 * The accuracy estimate (cli/common/accuracy.c): Wilson's interval against
 * published values, pooling by time, the one-line form and the warning,
 * and the #probes row through the record writer and reader.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/accuracy.h"
#include "kselftest_harness.h"
#include "common/recfile.h"

#define NEAR(a, b)	((a) - (b) < 0.0005 && (b) - (a) < 0.0005)

/* Values from Newcombe (1998), table I, and the limits. */
TEST(wilson)
{
	struct acc_interval i;

	acc_wilson95(81, 263, &i);
	EXPECT_TRUE(NEAR(i.lo, 0.2553) && NEAR(i.hi, 0.3662))
		TH_LOG("81/263: [%.4f, %.4f]", i.lo, i.hi);
	acc_wilson95(15, 148, &i);
	EXPECT_TRUE(NEAR(i.lo, 0.0624) && NEAR(i.hi, 0.1605))
		TH_LOG("15/148: [%.4f, %.4f]", i.lo, i.hi);
	acc_wilson95(0, 20, &i);
	EXPECT_TRUE(i.lo == 0 && NEAR(i.hi, 0.1611)) TH_LOG("0/20: hi %.4f", i.hi);
	acc_wilson95(29, 29, &i);
	EXPECT_TRUE(NEAR(i.lo, 0.8830) && i.hi == 1) TH_LOG("29/29: lo %.4f", i.lo);
	acc_wilson95(0, 0, &i);
	EXPECT_EQ(0, i.n) TH_LOG("nothing to rest on: no estimate");
}

TEST(pool_by_time)
{
	struct acc_pool *p = malloc(sizeof(*p));
	struct rec_probes c = { .pages = 64, .tp = 9, .fn = 1, .fp = 2, .tn = 50,
				.unobserved = 2 };
	struct acc_estimate e;
	char line[256];

	ASSERT_NE(NULL, p);
	acc_pool_init(p, 1000000000ULL, UINT64_MAX);
	EXPECT_EQ(0, acc_pool_estimate(p, &e));
	for (uint64_t t = 1; t <= 30; t++)
		acc_pool_add(p, t * 100000000ULL, &c);
	ASSERT_EQ(1, acc_pool_estimate(p, &e));
	/* windows ending within the last second: 2.1 s .. 3.0 s */
	EXPECT_EQ(10, e.windows);
	EXPECT_EQ(640, e.pages);
	EXPECT_EQ(20, e.unobserved);
	EXPECT_EQ(100, e.recall.n);
	EXPECT_TRUE(NEAR(e.recall.est, 0.9));
	EXPECT_EQ(110, e.precision.n);
	acc_format(&e, line, sizeof(line));
	EXPECT_EQ(0, strncmp(line, "estimated recall 0.90 [0.83-0.94], precision 0.82",
			     strlen("estimated recall 0.90 [0.83-0.94], precision 0.82")))
		TH_LOG("%s", line);
	EXPECT_EQ(0, acc_warn(stderr, "# ", &e, ACC_DEF_WARN_RECALL)) TH_LOG("0.90: no warning");
	/* the truth misses half: the upper bound falls below 0.8 */
	c.tp = 5;
	c.fn = 5;
	for (uint64_t t = 31; t <= 40; t++)
		acc_pool_add(p, t * 100000000ULL, &c);
	acc_pool_estimate(p, &e);
	EXPECT_TRUE(NEAR(e.recall.est, 0.5));
	EXPECT_EQ(1, acc_warn(stderr, "# ", &e, ACC_DEF_WARN_RECALL));
	/* no accessed probe: recall unknown, said so */
	c = (struct rec_probes){ .pages = 64, .tn = 64 };
	acc_pool_init(p, 1, 0);
	acc_pool_add(p, 1, &c);
	acc_pool_estimate(p, &e);
	acc_format(&e, line, sizeof(line));
	EXPECT_NE(NULL, strstr(line, "recall unknown")) TH_LOG("%s", line);
	EXPECT_EQ(0, acc_warn(stderr, "# ", &e, ACC_DEF_WARN_RECALL));
	free(p);
}

/* The fewest windows that give the recall min_accessed probes, within the span. */
TEST(pool_by_probes)
{
	struct acc_pool *p = malloc(sizeof(*p));
	struct rec_probes c = { .pages = 64, .tp = 20, .fn = 12, .tn = 32 };
	struct acc_estimate e;

	ASSERT_NE(NULL, p);
	acc_pool_init(p, 10000000000ULL, 600);
	for (uint64_t t = 1; t <= 50; t++)
		acc_pool_add(p, t * 100000000ULL, &c);
	acc_pool_estimate(p, &e);
	/* 32 accessed a window: 19 windows give 608, 18 only 576 */
	EXPECT_EQ(19, e.windows);
	EXPECT_EQ(608, e.recall.n);
	EXPECT_TRUE(e.recall.hi - e.recall.lo < 0.1) TH_LOG("[%.3f, %.3f]", e.recall.lo,
							     e.recall.hi);
	/* few accessed probes: the whole span, no more */
	c = (struct rec_probes){ .pages = 64, .tp = 1, .tn = 63 };
	for (uint64_t t = 51; t <= 250; t++)
		acc_pool_add(p, t * 100000000ULL, &c);
	acc_pool_estimate(p, &e);
	EXPECT_EQ(100, e.windows);
	free(p);
}

/*
 * The module's cost bound (probe_max_cpu_bp) varies the probe pages a
 * window has: the pool weighs probe pages, not windows.  A window of 60
 * accessed probe pages, all read accessed, and three of 2, read not
 * accessed: the recall is 60 / 66, not the mean of the windows' 1, 0, 0,
 * 0; precision likewise over the pages; the interval rests on 66 pages.
 * And windows of 2 probes fill a pool only by time, as they should.
 */
TEST(pool_weighs_probes_not_windows)
{
	struct acc_pool *p = malloc(sizeof(*p));
	struct rec_probes many = { .pages = 64, .tp = 60, .fp = 4 };
	struct rec_probes few = { .pages = 2, .fn = 2 };
	struct acc_estimate e;
	struct acc_interval want;

	ASSERT_NE(NULL, p);
	acc_pool_init(p, 10000000000ULL, 600);
	acc_pool_add(p, 100000000ULL, &many);
	for (uint64_t t = 2; t <= 4; t++)
		acc_pool_add(p, t * 100000000ULL, &few);
	ASSERT_EQ(1, acc_pool_estimate(p, &e));
	EXPECT_EQ(4, e.windows);
	EXPECT_EQ(70, e.pages);
	EXPECT_EQ(60, e.recall.k);
	EXPECT_EQ(66, e.recall.n);
	EXPECT_TRUE(NEAR(e.recall.est, 60.0 / 66)) TH_LOG("recall %.4f", e.recall.est);
	EXPECT_TRUE(NEAR(e.precision.est, 60.0 / 64)) TH_LOG("precision %.4f",
							     e.precision.est);
	acc_wilson95(60, 66, &want);
	EXPECT_TRUE(NEAR(e.recall.lo, want.lo) && NEAR(e.recall.hi, want.hi));

	/*
	 * 2 probe pages a window (the module's floor), both accessed, one
	 * read accessed: the 10 s span bounds the pool, 200 accessed pages
	 * give +-0.07 at a recall of 0.5.
	 */
	few = (struct rec_probes){ .pages = 2, .tp = 1, .fn = 1 };
	for (uint64_t t = 5; t <= 300; t++)
		acc_pool_add(p, t * 100000000ULL, &few);
	acc_pool_estimate(p, &e);
	EXPECT_EQ(100, e.windows);
	EXPECT_EQ(200, e.recall.n);
	EXPECT_TRUE(e.recall.hi - e.recall.lo < 0.15) TH_LOG("[%.3f, %.3f]", e.recall.lo,
							      e.recall.hi);
	free(p);
}

struct got {
	int n, with;
	struct rec_probes c[4];
};

static int collect(void *arg, const struct rec_snapshot *s, const struct rec_info *info)
{
	struct got *g = arg;

	if (s->has_probes && g->with < 4)
		g->c[g->with++] = s->probes;
	g->n++;
	return 0;
}

/* A #probes row goes with the next #snap; bad sums and seqs are errors. */
TEST(record_rows)
{
	static const char *const head =
		"# daptrace-record v2\n#meta,sample_us,5000\n#meta,aggr_us,100000\n"
		"#target,42,wl\ntime_ns,seq,pid,start,end,nr_accesses,age,label\n";
	static const struct {
		const char *probes, *err;
	} bad[] = {
		{ "#probes,1,64,30,10,4,18,3", "add up" },
		{ "#probes,2,64,30,10,4,18,2", "#probes row of seq 2" },
	};
	struct rec_snapshot s = { .seq = 3, .end_ns = 5, .nr_samples = 20, .has_probes = 1,
				  .probes = { 64, 30, 10, 4, 18, 2 } };
	struct rec_info info = { 0 };
	struct got g = { 0 };
	char err[256], *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	ASSERT_NE(NULL, f);
	fputs(head, f);
	ASSERT_EQ(0, rec_write_snapshot(f, &s));
	s.seq = 4;
	s.has_probes = 0;
	ASSERT_EQ(0, rec_write_snapshot(f, &s));
	fputs("#eof\n", f);
	fclose(f);
	EXPECT_NE(NULL, strstr(buf, "#probes,3,64,30,10,4,18,2\n#snap,3,")) TH_LOG("%s", buf);
	f = fmemopen(buf, len, "r");
	ASSERT_EQ(0, rec_read(f, "mem", 0, collect, &g, &info, err, sizeof(err)))
		TH_LOG("%s", err);
	fclose(f);
	rec_info_free(&info);
	EXPECT_EQ(2, g.n);
	ASSERT_EQ(1, g.with);
	EXPECT_EQ(30, g.c[0].tp);
	EXPECT_EQ(2, g.c[0].unobserved);
	free(buf);

	/* the counts must add up to the pages, and belong to the #snap that follows */
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		buf = NULL;
		f = open_memstream(&buf, &len);
		fprintf(f, "%s%s\n#snap,1,0,5,0,20,0,0\n#eof\n", head, bad[i].probes);
		fclose(f);
		f = fmemopen(buf, len, "r");
		memset(&info, 0, sizeof(info));
		EXPECT_NE(0, rec_read(f, "mem", 0, collect, &g, &info, err, sizeof(err)))
			TH_LOG("%s was read", bad[i].probes);
		EXPECT_NE(NULL, strstr(err, bad[i].err)) TH_LOG("%s: %s", bad[i].probes, err);
		fclose(f);
		rec_info_free(&info);
		free(buf);
	}
}

TEST_HARNESS_MAIN
