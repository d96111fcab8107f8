// SPDX-License-Identifier: GPL-2.0-only
/*
 * daptrace exporter's pieces on their own: the model (top N + other, working set, idle buckets, DAMON_STAT percentiles worked
 * out by hand), the metric catalogue built from them, and the policy stats
 * file written by the policy's own writer.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "exporter/exporter.h"
#include "exporter/metric_set.h"
#include "policy.h"

static char *render(const struct metric_set *m, int om)
{
	size_t len;

	return mset_render(m, om, &len);
}

/* A snapshot of regions given as {pid, size, nr_accesses, age}. */
struct reg {
	pid_t pid;
	uint64_t size;
	uint32_t nr_accesses, age;
};

static void make_snapshot(struct daptrace_snapshot *s, struct daptrace_region *r,
			  const struct reg *in, unsigned int n)
{
	uint64_t addr = 0x100000;

	*s = (struct daptrace_snapshot){
		.seq = 7, .aggr_us = 100000, .sample_us = 5000, .nr_samples = 20,
		.start_ns = 1000000000, .end_ns = 1100000000, .regions = r, .nr_regions = n,
	};
	for (unsigned int i = 0; i < n; i++) {
		r[i] = (struct daptrace_region){
			.start = addr, .end = addr + in[i].size, .pid = in[i].pid,
			.nr_accesses = in[i].nr_accesses, .age = in[i].age,
		};
		addr += in[i].size;
	}
}

static const char *names(void *ctx, pid_t pid)
{
	(void)ctx;
	return pid == 10 ? "big" : pid == 20 ? "mid" : "small";
}

TEST(model_top_n_and_other)
{
	/* pid 10: 10 MiB, 20: 6 MiB, 30: 2 MiB, 40: 2 MiB (a tie: 30 first) */
	static const struct reg in[] = {
		{ 20, 4 << 20, 3, 0 }, { 20, 2 << 20, 0, 99 },		/* idle 10 s */
		{ 10, 8 << 20, 0, 9 }, { 10, 2 << 20, 1, 5 },		/* idle 1 s */
		{ 40, 1 << 20, 0, 0 }, { 30, 2 << 20, 0, 599 },		/* 0.1 s; 60 s */
		{ 40, 1 << 20, 5, 2 },
	};
	struct exp_config c = { .top_n = 2, .idle_us = { 1000000, 10000000, 60000000 },
				.nr_idle = 3 };
	struct daptrace_region r[8];
	struct daptrace_snapshot s;
	struct exp_view v = { 0 };

	make_snapshot(&s, r, in, sizeof(in) / sizeof(in[0]));
	ASSERT_EQ(0, exp_view_update(&v, &c, &s, names, NULL, NULL));
	ASSERT_EQ(3, v.nr_groups);
	EXPECT_EQ(4, v.nr_targets);
	EXPECT_EQ(7, v.seq);
	EXPECT_EQ(10, v.g[0].pid);
	EXPECT_STREQ("big", v.g[0].comm);
	EXPECT_EQ(10 << 20, v.g[0].bytes);
	EXPECT_EQ(2 << 20, v.g[0].wss_bytes);
	EXPECT_EQ(8 << 20, v.g[0].idle_bytes[0]);	/* (9 + 1) x 100 ms = 1 s */
	EXPECT_EQ(0, v.g[0].idle_bytes[1]);
	EXPECT_EQ(2, v.g[0].nr_regions);
	EXPECT_EQ(20, v.g[1].pid);
	EXPECT_EQ(6 << 20, v.g[1].bytes);
	EXPECT_EQ(4 << 20, v.g[1].wss_bytes);
	EXPECT_EQ(2 << 20, v.g[1].idle_bytes[1]);
	EXPECT_EQ(0, v.g[1].idle_bytes[2]);
	/* other: 30 and 40 summed */
	EXPECT_EQ(0, v.g[2].pid);
	EXPECT_STREQ("", v.g[2].comm);
	EXPECT_EQ(2, v.g[2].nr_targets);
	EXPECT_EQ(4 << 20, v.g[2].bytes);
	EXPECT_EQ(1 << 20, v.g[2].wss_bytes);
	EXPECT_EQ(2 << 20, v.g[2].idle_bytes[0]);
	EXPECT_EQ(2 << 20, v.g[2].idle_bytes[2]);
	EXPECT_EQ(3, v.g[2].nr_regions);
	for (int i = 0; i < 3; i++) {
		EXPECT_EQ(0, v.g[i].unobservable_bytes);
	}

	/* fewer targets than N: each its own, and an empty other */
	c.top_n = 10;
	ASSERT_EQ(0, exp_view_update(&v, &c, &s, names, NULL, NULL));
	ASSERT_EQ(5, v.nr_groups);
	EXPECT_EQ(30, v.g[2].pid);	/* 2 MiB each: the lower pid first */
	EXPECT_EQ(40, v.g[3].pid);
	EXPECT_EQ(0, v.g[4].pid);
	EXPECT_EQ(0, v.g[4].nr_targets);
	EXPECT_EQ(0, v.g[4].bytes);

	/* no regions at all: just other */
	s.nr_regions = 0;
	ASSERT_EQ(0, exp_view_update(&v, &c, &s, names, NULL, NULL));
	EXPECT_EQ(1, v.nr_groups);
	EXPECT_EQ(0, v.g[0].nr_regions);
	exp_view_free(&v);
}

TEST(model_percentiles_as_damon_stat)
{
	/*
	 * One target, 100 bytes: sorted by DAMON_STAT's idle time (windows of
	 * 100 ms, accessed ones negative):
	 *   30 B accessed, age 4: -0.5 s     cumulative 30 %
	 *   20 B accessed, age 0: -0.1 s     50 %
	 *   10 B idle, age 0:      0.1 s     60 %
	 *   40 B idle, age 29:     3 s       100 %
	 * P is the time of the first region where cumulative % >= P.
	 */
	static const struct reg in[] = {
		{ 5, 10, 0, 0 }, { 5, 40, 0, 29 }, { 5, 30, 2, 4 }, { 5, 20, 1, 0 },
	};
	struct exp_config c = { .top_n = 1, .pct = { 0, 25, 30, 31, 50, 55, 60, 99, 100 },
				.nr_pct = 9 };
	static const int64_t want[] = { -500000, -500000, -500000, -100000, -100000,
					100000, 100000, 3000000, 3000000 };
	struct daptrace_region r[4];
	struct daptrace_snapshot s;
	struct exp_view v = { 0 };

	make_snapshot(&s, r, in, 4);
	ASSERT_EQ(0, exp_view_update(&v, &c, &s, NULL, NULL, NULL));
	ASSERT_EQ(2, v.nr_groups);
	for (int i = 0; i < c.nr_pct; i++) {
		EXPECT_EQ(want[i], v.g[0].idle_pct_us[i]) TH_LOG("p%u", c.pct[i]);
	}
	EXPECT_EQ(50, v.g[0].wss_bytes);
	exp_view_free(&v);
}

/* Value of the sample line that starts with @series ("name{labels}"). */
static int sample(const char *text, const char *series, double *v)
{
	size_t n = strlen(series);

	for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
		if (!strncmp(p, series, n) && p[n] == ' ')
			return sscanf(p + n + 1, "%lf", v) == 1 ? 0 : -1;
	return -1;
}

/* A series ("name{labels}") a rendering must hold, and its value. */
struct want_sample {
	const char *series;
	double value;
};

/* Each of the @n series of @w is in @text, with its value. */
static void expect_samples(struct __test_metadata *_metadata, const char *text,
			   const struct want_sample *w, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		double x = NAN;

		EXPECT_EQ(0, sample(text, w[i].series, &x))
			TH_LOG("no %s in:\n%s", w[i].series, text);
		EXPECT_EQ(w[i].value, x) TH_LOG("%s", w[i].series);
	}
}

#define EXPECT_SAMPLES(text, w) expect_samples(_metadata, text, w, sizeof(w) / sizeof(w[0]))

/*
 * A region none of whose checks could be made says nothing of its accesses:
 * its bytes are not observable, in neither the working set, the idle bytes
 * nor the percentiles, however old its age (before, they read as idle).  A
 * window with no sampling round observed nothing at all.
 */
TEST(model_unobserved_is_neither_idle_nor_working_set)
{
	static const struct reg in[] = {
		{ 10, 4 << 20, 0, 50 },		/* every check unobserved */
		{ 10, 2 << 20, 0, 50 },		/* 5 of 20 unobserved: idle 5.1 s */
		{ 10, 1 << 20, 3, 0 },		/* accessed */
	};
	struct exp_config c = { .top_n = 1, .idle_us = { 1000000 }, .nr_idle = 1,
				.pct = { 50, 100 }, .nr_pct = 2 };
	struct daptrace_region r[3];
	struct daptrace_snapshot s;
	struct exp_view v = { 0 };
	struct metric_set m;
	struct exp_health h = { .module_loaded = 1, .on = 1 };
	struct exp_counts n = { 0 };
	double x;
	char *text;

	make_snapshot(&s, r, in, 3);
	r[0].nr_unobserved = 20;
	r[1].nr_unobserved = 5;
	ASSERT_EQ(0, exp_view_update(&v, &c, &s, names, NULL, NULL));
	EXPECT_EQ(7 << 20, v.g[0].bytes);
	EXPECT_EQ(4 << 20, v.g[0].unobservable_bytes);
	EXPECT_EQ(1 << 20, v.g[0].wss_bytes);
	EXPECT_EQ(2 << 20, v.g[0].idle_bytes[0]);
	/* of the 3 observed MiB: 1 accessed (-0.1 s), then 2 idle (5.1 s) */
	EXPECT_EQ(5100000, v.g[0].idle_pct_us[0]);
	EXPECT_EQ(5100000, v.g[0].idle_pct_us[1]);
	mset_init(&m);
	exp_metrics_build(&m, &c, &v, &h, &n, NULL);
	text = render(&m, 0);
	ASSERT_NE(NULL, text);
	EXPECT_EQ(0, sample(text, "daptrace_not_observable_bytes{target=\"10\",comm=\"big\"}",
			    &x));
	EXPECT_EQ(4 << 20, x);
	free(text);
	mset_free(&m);

	/* no sampling round in the window: nothing observed */
	s.nr_samples = 0;
	r[0].nr_unobserved = 0;
	r[1].nr_unobserved = 0;
	r[2].nr_accesses = 0;
	ASSERT_EQ(0, exp_view_update(&v, &c, &s, names, NULL, NULL));
	EXPECT_EQ(7 << 20, v.g[0].unobservable_bytes);
	EXPECT_EQ(0, v.g[0].wss_bytes);
	EXPECT_EQ(0, v.g[0].idle_bytes[0]);
	exp_view_free(&v);
}

/* The mapped ranges of pid 5 only: [0x102000, 0x106000). */
static int maps_of_5(void *ctx, pid_t pid, const struct rec_range **r, size_t *n)
{
	static const struct rec_range five[] = { { 0x102000, 0x106000 } };

	(void)ctx;
	if (pid != 5)
		return 0;
	*r = five;
	*n = 1;
	return 1;
}

/*
 * The working set is the bytes of the accessed regions inside the target's
 * mappings; a target whose mappings are not known has its accessed regions
 * counted whole, and those bytes said apart.  From 0x100000:
 *   pid 5: 16 KiB accessed, 8 KiB of it mapped; 16 KiB idle, 8 KiB mapped
 *   pid 6:  8 KiB accessed, its map unknown
 * Idle bytes stay the regions' (holes included).
 */
TEST(model_working_set_of_mapped_bytes)
{
	static const struct reg in[] = { { 5, 0x4000, 1, 0 }, { 5, 0x4000, 0, 9 },
					 { 6, 0x2000, 3, 0 } };
	static const struct want_sample want[] = {
		{ "daptrace_working_set_bytes{target=\"5\",comm=\"\"}", 0x2000 },
		{ "daptrace_working_set_mapping_unknown_bytes{target=\"5\",comm=\"\"}", 0 },
		{ "daptrace_working_set_bytes{target=\"other\",comm=\"\"}", 0x2000 },
		{ "daptrace_working_set_mapping_unknown_bytes{target=\"other\",comm=\"\"}",
		  0x2000 },
	};
	struct exp_config c = { .top_n = 1, .idle_us = { 1000000 }, .nr_idle = 1 };
	struct exp_health h = { .module_loaded = 1, .on = 1 };
	struct exp_counts n = { 0 };
	struct exp_view v = { 0 };
	struct daptrace_snapshot s;
	struct daptrace_region r[3];
	struct metric_set m;
	char *text;

	make_snapshot(&s, r, in, 3);
	ASSERT_EQ(0, exp_view_update(&v, &c, &s, NULL, maps_of_5, NULL));
	ASSERT_EQ(2, v.nr_groups);
	EXPECT_EQ(5, v.g[0].pid);
	EXPECT_EQ(0x8000, v.g[0].bytes);
	EXPECT_EQ(0x4000, v.g[0].idle_bytes[0]);
	mset_init(&m);
	exp_metrics_build(&m, &c, &v, &h, &n, NULL);
	text = render(&m, 0);
	ASSERT_NE(NULL, text);
	EXPECT_SAMPLES(text, want);
	free(text);
	mset_free(&m);
	exp_view_free(&v);
}

/* Write @text as @dir/@pid/maps ("" removes it); 0 or -1. */
static int fake_maps(const char *dir, pid_t pid, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%d", dir, (int)pid);
	mkdir(path, 0700);
	snprintf(path, sizeof(path), "%s/%d/maps", dir, (int)pid);
	if (!*text)
		return unlink(path);
	f = fopen(path, "w");
	if (!f)
		return -1;
	fputs(text, f);
	return fclose(f) ? -1 : 0;
}

/*
 * The exporter's maps of the targets: read as a target shows up, again
 * when older than the period, kept when a read fails, forgotten when the
 * target is no longer in the snapshot; a target never read has none.
 */
TEST(maps_read_kept_and_forgotten)
{
	static const struct reg in[] = { { 5, 0x1000, 1, 0 }, { 6, 0x1000, 1, 0 } };
	char dir[] = "/tmp/daptrace-exp-maps-XXXXXX";
	struct exp_maps mp = { .proc = dir };
	const struct rec_range *mr;
	struct daptrace_region r[2];
	struct daptrace_snapshot s;
	size_t nr;

	ASSERT_NE(NULL, mkdtemp(dir));
	ASSERT_EQ(0, fake_maps(dir, 5, "00100000-00102000 r--p 00000000 08:01 42 /bin/a\n"
				      "00102000-00104000 rw-p 00000000 00:00 0\n"
				      "00200000-00201000 rw-p 00000000 00:00 0 [heap]\n"));
	make_snapshot(&s, r, in, 2);
	ASSERT_EQ(0, exp_maps_update(&mp, &s, 1, 1000));
	ASSERT_EQ(1, exp_maps_of(&mp, 5, &mr, &nr));
	ASSERT_EQ(2, nr);
	EXPECT_EQ(0x100000, mr[0].start);
	EXPECT_EQ(0x104000, mr[0].end);
	EXPECT_EQ(0x200000, mr[1].start);
	/* pid 6 has no maps file: not known */
	EXPECT_EQ(0, exp_maps_of(&mp, 6, &mr, &nr));
	/* not read again within the period, read after it */
	ASSERT_EQ(0, fake_maps(dir, 5, "00300000-00301000 rw-p 00000000 00:00 0\n"));
	ASSERT_EQ(0, exp_maps_update(&mp, &s, 500, 1000));
	ASSERT_EQ(1, exp_maps_of(&mp, 5, &mr, &nr));
	EXPECT_EQ(2, nr);
	ASSERT_EQ(0, exp_maps_update(&mp, &s, 1001, 1000));
	ASSERT_EQ(1, exp_maps_of(&mp, 5, &mr, &nr));
	ASSERT_EQ(1, nr);
	EXPECT_EQ(0x300000, mr[0].start);
	/* a read that fails keeps the last one */
	ASSERT_EQ(0, fake_maps(dir, 5, ""));
	ASSERT_EQ(0, exp_maps_update(&mp, &s, 3000, 1000));
	EXPECT_EQ(1, exp_maps_of(&mp, 5, &mr, &nr));
	/* pid 5 is no longer a target: forgotten */
	s.regions = &r[1];
	s.nr_regions = 1;
	ASSERT_EQ(0, exp_maps_update(&mp, &s, 3001, 1000));
	EXPECT_EQ(0, exp_maps_of(&mp, 5, &mr, &nr));
	EXPECT_EQ(1, mp.n);
	exp_maps_free(&mp);
	for (pid_t pid = 5; pid <= 6; pid++) {
		char sub[64];

		snprintf(sub, sizeof(sub), "%s/%d", dir, (int)pid);
		rmdir(sub);
	}
	rmdir(dir);
}

TEST(catalogue_from_a_view)
{
	static const struct reg in[] = { { 10, 8 << 20, 0, 9 }, { 10, 2 << 20, 1, 5 } };
	struct exp_config c = { .top_n = 10, .idle_us = { 500000, 1000000 }, .nr_idle = 2,
				.pct = { 50 }, .nr_pct = 1 };
	struct exp_health h = { .module_loaded = 1, .on = 1, .have_counters = 1,
				.c = { .nr_snapshots = 12, .worker_cpu_us = 2500000 },
				.have_late = 1, .samples_late = 3 };
	struct exp_counts n = { .snapshots_read = 11, .snapshots_missed = 1 };
	static const struct want_sample want_view[] = {
		{ "daptrace_working_set_bytes{target=\"10\",comm=\"big\"}", 2 << 20 },
		{ "daptrace_target_bytes{target=\"other\",comm=\"\"}", 0 },
		{ "daptrace_idle_bytes{target=\"10\",comm=\"big\","
		  "min_idle_seconds=\"0.5\"}", 8 << 20 },
		{ "daptrace_idle_bytes{target=\"10\",comm=\"big\","
		  "min_idle_seconds=\"1\"}", 8 << 20 },
		/* 2 MiB accessed (age 5: -0.6 s) of 10: the median is in the idle 8 */
		{ "daptrace_idle_time_seconds{target=\"10\",comm=\"big\",percentile=\"50\"}", 1 },
		{ "daptrace_not_observable_bytes{target=\"10\",comm=\"big\"}", 0 },
		{ "daptrace_last_snapshot_seq", 7 },
		{ "daptrace_worker_cpu_seconds_total", 2.5 },
		{ "daptrace_samples_late_total", 3 },
		{ "daptrace_exporter_snapshots_missed_total", 1 },
		{ "daptrace_monitor_on", 1 },
	};
	struct daptrace_region r[2];
	struct daptrace_snapshot s;
	struct exp_view v = { 0 };
	struct metric_set m;
	double x;
	char *text;

	make_snapshot(&s, r, in, 2);
	ASSERT_EQ(0, exp_view_update(&v, &c, &s, names, NULL, NULL));
	mset_init(&m);
	exp_metrics_build(&m, &c, &v, &h, &n, NULL);
	EXPECT_EQ(0, m.dropped);
	text = render(&m, 0);
	ASSERT_NE(NULL, text);
	EXPECT_SAMPLES(text, want_view);
	/* other has no regions: no percentile */
	EXPECT_EQ(-1, sample(text, "daptrace_idle_time_seconds{target=\"other\",comm=\"\","
			     "percentile=\"50\"}", &x));
	/* a counter the module did not have is left out, not made 0 */
	EXPECT_EQ(-1, sample(text, "daptrace_samples_busy_total", &x));
	free(text);
	mset_free(&m);

	/* monitoring off: no target series (they would repeat the last window) */
	h.on = 0;
	mset_init(&m);
	exp_metrics_build(&m, &c, &v, &h, &n, NULL);
	text = render(&m, 0);
	EXPECT_EQ(NULL, strstr(text, "daptrace_working_set_bytes"));
	EXPECT_EQ(0, sample(text, "daptrace_last_snapshot_seq", &x));
	EXPECT_EQ(7, x);
	free(text);
	mset_free(&m);

	/* the module gone: that, and the exporter's own, only */
	h = (struct exp_health){ .on = -1 };
	v.valid = 0;
	mset_init(&m);
	exp_metrics_build(&m, &c, &v, &h, &n, NULL);
	text = render(&m, 0);
	EXPECT_EQ(0, sample(text, "daptrace_module_loaded", &x));
	EXPECT_EQ(0, x);
	EXPECT_EQ(-1, sample(text, "daptrace_monitor_on", &x));
	EXPECT_EQ(NULL, strstr(text, "daptrace_working_set_bytes"));
	EXPECT_NE(NULL, strstr(text, "daptrace_exporter_snapshots_read_total 11\n"));
	free(text);
	mset_free(&m);
	exp_view_free(&v);
}

TEST(policy_stats_known_and_generic_fields)
{
	char path[] = "/tmp/daptrace-exp-policy-XXXXXX";
	struct pol_scheme sc[2];
	struct pol_regret rg[2] = {
		{ .scheme = 0, .cgroup = (char *)"/sys.slice/a", .acted = 8192, .unknown_calls = 1,
		  .checked = { 8192, 4096, 0 }, .back = { 4096, 4096, 0 },
		  .unknown = { 0, 4096, 0 } },
		{ .scheme = 0, .cgroup = (char *)"/b", .acted = 4096 },
	};
	struct pol_engine e = { .s = sc, .nr_schemes = 2, .nr_snapshots = 40, .nr_missed = 2,
				.regret = rg, .nr_regret = 2 };
	static const struct want_sample want_known[] = {
		{ "daptrace_policy_stats_up", 1 },
		{ "daptrace_policy_snapshots_total", 40 },
		{ "daptrace_policy_elapsed_seconds", 12.5 },
		{ "daptrace_policy_tried_bytes_total{scheme=\"0\","
		  "action=\"pageout\",node=\"-1\"}", 1 << 20 },
		{ "daptrace_policy_applied_regions_total{scheme=\"0\","
		  "action=\"pageout\",node=\"-1\"}", 3 },
		{ "daptrace_policy_errors_total{scheme=\"0\","
		  "action=\"pageout\",node=\"-1\",error=\"eperm\"}", 2 },
		/* regret: per cgroup and window (docs/exporter.md) */
		{ "daptrace_policy_regret_bytes_total{scheme=\"0\","
		  "action=\"pageout\",node=\"-1\",cgroup=\"/sys.slice/a\",window=\"1s\"}", 4096 },
		{ "daptrace_policy_regret_checked_bytes_total{scheme=\"0\","
		  "action=\"pageout\",node=\"-1\",cgroup=\"/sys.slice/a\",window=\"1s\"}", 8192 },
		{ "daptrace_policy_regret_unknown_bytes_total{scheme=\"0\","
		  "action=\"pageout\",node=\"-1\",cgroup=\"/sys.slice/a\",window=\"10s\"}", 4096 },
		{ "daptrace_policy_regret_acted_bytes_total{scheme=\"0\","
		  "action=\"pageout\",node=\"-1\",cgroup=\"/b\"}", 4096 },
		{ "daptrace_policy_regret_unknown_calls_total{scheme=\"0\","
		  "action=\"pageout\",node=\"-1\",cgroup=\"/sys.slice/a\"}", 1 },
		{ "daptrace_policy_regret_bytes_total{scheme=\"0\","
		  "action=\"pageout\",node=\"-1\",cgroup=\"/b\",window=\"60s\"}", 0 },
	};
	static const struct want_sample want_generic[] = {
		{ "daptrace_policy_enabled", 1 },
		{ "daptrace_policy_effective_quota_bytes{scheme=\"0\","
		  "action=\"pageout\",node=\"-1\"}", 1048576 },
		/* a gauge may not end in _total */
		{ "daptrace_policy_esz{scheme=\"0\",action=\"pageout\",node=\"-1\"}", 9 },
		{ "daptrace_policy_tuning{scheme=\"0\",action=\"pageout\","
		  "node=\"-1\",key=\"score\"}", 0.25 },
		{ "daptrace_policy_goals_target_value{scheme=\"0\","
		  "action=\"pageout\",node=\"-1\",index=\"0\",metric=\"some_mem_psi_us\"}", 1000 },
		{ "daptrace_policy_goals_current_value{scheme=\"0\","
		  "action=\"pageout\",node=\"-1\",index=\"0\",metric=\"some_mem_psi_us\"}", 250.5 },
	};
	struct exp_policy p = { .path = path };
	struct exp_counts n = { 0 };
	struct metric_set m;
	double x;
	char *text;
	FILE *f;
	int fd;

	memset(sc, 0, sizeof(sc));
	pol_scheme_init(&sc[0], POL_PAGEOUT);
	pol_scheme_init(&sc[1], POL_MIGRATE_HOT);
	snprintf(sc[0].name, sizeof(sc[0].name), "pageout \"idle\"");
	snprintf(sc[1].name, sizeof(sc[1].name), "migrate_hot 0");
	sc[1].node = 0;
	sc[0].st.sz_tried = 1 << 20;
	sc[0].st.nr_applied = 3;
	sc[0].st.errs[0] = 2;
	fd = mkstemp(path);
	ASSERT_LE(0, fd);
	close(fd);
	/* the policy's own writer, so the two cannot drift apart */
	ASSERT_EQ(0, pol_stats_save(path, &e, 12.5, 1));
	exp_policy_refresh(&p, &n, 1);
	EXPECT_EQ(1, p.up);
	EXPECT_EQ(0, n.policy_errors);
	mset_init(&m);
	exp_policy_metrics(&p, &m);
	text = render(&m, 0);
	EXPECT_EQ(0, m.dropped) TH_LOG("%s", text);
	EXPECT_SAMPLES(text, want_known);
	EXPECT_EQ(0, sample(text, "daptrace_policy_scheme_info{scheme=\"1\","
			    "action=\"migrate_hot\",node=\"0\",text=\"migrate_hot 0\"}", &x));
	EXPECT_NE(NULL, strstr(text, "text=\"pageout \\\"idle\\\"\""));
	free(text);
	mset_free(&m);

	/* fields this exporter has no table row for show up all the same */
	f = fopen(path, "w");
	ASSERT_NE(NULL, f);
	fputs("{\"elapsed_s\": 3, \"quota_tuner\": \"temporal\", \"enabled\": true,"
	      " \"schemes\": [{\"scheme\": \"s\", \"action\": \"pageout\", \"node\": -1,"
	      "  \"sz_tried\": 5, \"effective_quota_bytes\": 1048576,"
	      "  \"esz_total\": 9, \"tuning\": {\"score\": 0.25, \"bad\": [1]},"
	      "  \"goals\": [{\"metric\": \"some_mem_psi_us\", \"target_value\": 1000,"
	      "              \"current_value\": 250.5}, 7],"
	      "  \"deep\": {\"a\": {\"b\": 1}}}]}\n", f);
	fclose(f);
	p.checked_ns = 0;
	exp_policy_refresh(&p, &n, 2);
	EXPECT_EQ(1, p.up);
	mset_init(&m);
	exp_policy_metrics(&p, &m);
	text = render(&m, 0);
	EXPECT_SAMPLES(text, want_generic);
	/* tuning.bad (an array), goals[1] (no object), deep.a (an object): counted */
	EXPECT_EQ(3, m.dropped) TH_LOG("%s", text);
	free(text);
	mset_free(&m);

	/* broken, then gone: counted once each, and the series go */
	f = fopen(path, "w");
	ASSERT_NE(NULL, f);
	fputs("{\"schemes\": [", f);
	fclose(f);
	p.checked_ns = 0;
	exp_policy_refresh(&p, &n, 3);
	EXPECT_EQ(0, p.up);
	EXPECT_EQ(1, n.policy_errors);
	unlink(path);
	for (int i = 0; i < 3; i++) {
		p.checked_ns = 0;
		exp_policy_refresh(&p, &n, 4 + i);
	}
	EXPECT_EQ(2, n.policy_errors);
	mset_init(&m);
	exp_policy_metrics(&p, &m);
	text = render(&m, 0);
	EXPECT_STREQ("# HELP daptrace_policy_stats_up 1 if the policy stats file "
		     "(--policy-stats) was read and parsed.\n"
		     "# TYPE daptrace_policy_stats_up gauge\n"
		     "daptrace_policy_stats_up 0\n", text);
	free(text);
	mset_free(&m);
	exp_policy_free(&p);
}

TEST_HARNESS_MAIN
