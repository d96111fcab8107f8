// SPDX-License-Identifier: GPL-2.0-only
/*
 * Attribute validation and write ordering (each kernel write is validated
 * against the current values of the others), plus the control files, on a
 * fake sysfs tree.  Write order is observed with inotify (IN_CLOSE_WRITE).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>

#include "kselftest_harness.h"
#include "fake_sysfs.h"
#include "daptrace.h"

/* The field a plan step for @id sets: the test's own map, not the library's. */
static uint64_t *field(struct daptrace_attrs *a, enum daptrace_attr_id id)
{
	uint64_t *const of[DAPTRACE_ATTR_NR_NUMERIC] = {
		[DAPTRACE_ATTR_SAMPLE] = &a->sample_us,
		[DAPTRACE_ATTR_AGGR] = &a->aggr_us,
		[DAPTRACE_ATTR_UPDATE] = &a->update_us,
		[DAPTRACE_ATTR_MIN_REGIONS] = &a->min_nr_regions,
		[DAPTRACE_ATTR_MAX_REGIONS] = &a->max_nr_regions,
	};

	return of[id];
}

static const uint64_t times[] = {
	100, 101, 1000, 5000, 99999, 100000, 1000000, 9999999, 10000000,
	10000001, 100000000, 1000000000, 3600000000ULL,
};
static const uint64_t counts[] = { 3, 4, 10, 999, 1000, 19999, 20000 };

static int attrs_equal(const struct daptrace_attrs *a, const struct daptrace_attrs *b)
{
	return a->sample_us == b->sample_us && a->aggr_us == b->aggr_us &&
	       a->update_us == b->update_us && a->min_nr_regions == b->min_nr_regions &&
	       a->max_nr_regions == b->max_nr_regions && a->tlb_flush == b->tlb_flush;
}

static uint64_t pick(const uint64_t *v, size_t n)
{
	return v[(size_t)rand() % n];
}

static void random_valid(struct daptrace_attrs *a)
{
	do {
		a->sample_us = pick(times, 13);
		a->aggr_us = pick(times, 13);
		a->update_us = pick(times, 13);
		a->min_nr_regions = pick(counts, 7);
		a->max_nr_regions = pick(counts, 7);
		a->tlb_flush = DAPTRACE_TLB_ROUND;
	} while (daptrace_attrs_validate(a, NULL));
}

TEST(plan_keeps_every_step_valid)
{
	struct daptrace_attr_step steps[32];

	srand(12345);
	for (int iter = 0; iter < 200000; iter++) {
		struct daptrace_attrs cur, want;
		const char *why = NULL;
		int n;

		random_valid(&cur);
		random_valid(&want);
		n = daptrace_attrs_plan(&cur, &want, steps, 32);
		ASSERT_GE(n, 0) TH_LOG("no plan from %llu/%llu/%llu to %llu/%llu/%llu",
				       (unsigned long long)cur.sample_us,
				       (unsigned long long)cur.aggr_us,
				       (unsigned long long)cur.update_us,
				       (unsigned long long)want.sample_us,
				       (unsigned long long)want.aggr_us,
				       (unsigned long long)want.update_us);
		for (int i = 0; i < n; i++) {
			ASSERT_LT(steps[i].attr, DAPTRACE_ATTR_NR_NUMERIC) TH_LOG("step %d", i);
			*field(&cur, steps[i].attr) = steps[i].value;
			ASSERT_EQ(0, daptrace_attrs_validate(&cur, &why))
				TH_LOG("step %d (%s=%llu) is invalid: %s", i,
				       daptrace_attr_file(steps[i].attr),
				       (unsigned long long)steps[i].value, why);
		}
		ASSERT_TRUE(attrs_equal(&cur, &want));
	}
}

TEST(plan_needs_an_intermediate_value)
{
	struct daptrace_attrs cur, want;
	struct daptrace_attr_step steps[32];
	int n;

	daptrace_attrs_default(&cur);
	cur.sample_us = 100;
	cur.aggr_us = 100;
	want = cur;
	want.sample_us = 1000000;
	want.aggr_us = 100000000;
	want.update_us = 100000000;
	n = daptrace_attrs_plan(&cur, &want, steps, 32);
	ASSERT_GE(n, 4);	/* update, aggr to 100 x 100000, sample, aggr */
}

TEST(validate_messages)
{
	struct daptrace_attrs a;
	const char *why;

	daptrace_attrs_default(&a);
	EXPECT_EQ(0, daptrace_attrs_validate(&a, &why));
	a.aggr_us = 1000;
	EXPECT_EQ(-EINVAL, daptrace_attrs_validate(&a, &why));
	EXPECT_STREQ("aggregation interval must be >= sample interval", why);
	daptrace_attrs_default(&a);
	a.sample_us = 99;
	EXPECT_EQ(-EINVAL, daptrace_attrs_validate(&a, &why));
	daptrace_attrs_default(&a);
	a.min_nr_regions = 2;
	EXPECT_EQ(-EINVAL, daptrace_attrs_validate(&a, &why));
	daptrace_attrs_default(&a);
	a.max_nr_regions = 20001;
	EXPECT_EQ(-EINVAL, daptrace_attrs_validate(&a, &why));
	daptrace_attrs_default(&a);
	a.sample_us = 100;
	a.aggr_us = 10000001;	/* > 100000 samples */
	a.update_us = 10000001;
	EXPECT_EQ(-EINVAL, daptrace_attrs_validate(&a, &why));
	EXPECT_STREQ("aggregation interval must be <= 100000 sample intervals", why);
}

FIXTURE(tree) {
	char dir[256];
	struct daptrace *d;
	int ino;
};

FIXTURE_SETUP(tree)
{
	ASSERT_EQ(0, fake_tree_create(self->dir, sizeof(self->dir)));
	ASSERT_EQ(0, daptrace_open_root(&self->d, self->dir));
	self->ino = inotify_init1(IN_NONBLOCK);
	ASSERT_GE(self->ino, 0);
	ASSERT_GE(inotify_add_watch(self->ino, self->dir, IN_CLOSE_WRITE), 0);
}

FIXTURE_TEARDOWN(tree)
{
	close(self->ino);
	daptrace_close(self->d);
	fake_tree_destroy(self->dir);
}

/* Names of the files closed after writing, in order, comma separated. */
static const char *written(int ino)
{
	static char out[512];
	char buf[8192] __attribute__((aligned(8)));
	ssize_t n;

	out[0] = '\0';
	while ((n = read(ino, buf, sizeof(buf))) > 0) {
		for (char *p = buf; p < buf + n;) {
			struct inotify_event *e = (struct inotify_event *)p;

			if (e->len && e->name[0] != '.') {
				if (out[0])
					strncat(out, ",", sizeof(out) - strlen(out) - 1);
				strncat(out, e->name, sizeof(out) - strlen(out) - 1);
			}
			p += sizeof(*e) + e->len;
		}
	}
	return out;
}

/* daptrace_set_attrs(@a) on the tree, which must succeed; the files it wrote. */
static const char *set_attrs_written(struct __test_metadata *_metadata,
				     FIXTURE_DATA(tree) *self, const struct daptrace_attrs *a)
{
	ASSERT_EQ(0, daptrace_set_attrs(self->d, a)) TH_LOG("%s", daptrace_last_error());
	return written(self->ino);
}

TEST_F(tree, grow_writes_outermost_first)
{
	struct daptrace_attrs a, back;
	char buf[64];

	daptrace_attrs_default(&a);
	a.sample_us = 10000;
	a.aggr_us = 2000000;
	a.update_us = 20000000;
	EXPECT_STREQ("update_us,aggr_us,sample_us", set_attrs_written(_metadata, self, &a));
	ASSERT_GT(fake_read(self->dir, "aggr_us", buf, sizeof(buf)), 0);
	EXPECT_STREQ("2000000\n", buf);
	ASSERT_EQ(0, daptrace_get_attrs(self->d, &back));
	EXPECT_TRUE(attrs_equal(&a, &back));
}

TEST_F(tree, shrink_writes_innermost_first)
{
	struct daptrace_attrs a;

	daptrace_attrs_default(&a);
	a.sample_us = 1000;
	a.aggr_us = 2000;
	a.update_us = 4000;
	a.min_nr_regions = 3;
	a.max_nr_regions = 5;
	EXPECT_STREQ("sample_us,aggr_us,update_us,min_nr_regions,max_nr_regions",
		     set_attrs_written(_metadata, self, &a));
}

TEST_F(tree, regions_grow_max_first)
{
	struct daptrace_attrs a;

	daptrace_attrs_default(&a);
	a.min_nr_regions = 2000;
	a.max_nr_regions = 5000;
	EXPECT_STREQ("max_nr_regions,min_nr_regions", set_attrs_written(_metadata, self, &a));
}

TEST_F(tree, only_changes_are_written)
{
	struct daptrace_attrs a;
	char buf[64];

	daptrace_attrs_default(&a);
	a.tlb_flush = DAPTRACE_TLB_ROUND;
	EXPECT_STREQ("tlb_flush", set_attrs_written(_metadata, self, &a));
	ASSERT_GT(fake_read(self->dir, "tlb_flush", buf, sizeof(buf)), 0);
	EXPECT_STREQ("round\n", buf);
	EXPECT_STREQ("", set_attrs_written(_metadata, self, &a));
}

TEST_F(tree, invalid_attrs_write_nothing)
{
	struct daptrace_attrs a;

	daptrace_attrs_default(&a);
	a.aggr_us = 10;
	EXPECT_EQ(-EINVAL, daptrace_set_attrs(self->d, &a));
	EXPECT_NE(NULL, strstr(daptrace_last_error(), "invalid attributes (aggregation interval must be >= sample interval)"))
		TH_LOG("%s", daptrace_last_error());
	EXPECT_STREQ("", written(self->ino));
}

TEST_F(tree, intervals_goal_round_trip)
{
	struct daptrace_intervals_goal g, back;

	daptrace_intervals_goal_default(&g);
	EXPECT_EQ(400, g.access_bp);
	EXPECT_EQ(3, g.aggrs);
	g.min_sample_us = 1000;
	g.max_sample_us = 40000;
	ASSERT_EQ(0, daptrace_set_intervals_goal(self->d, &g));
	ASSERT_EQ(0, daptrace_get_intervals_goal(self->d, &back));
	EXPECT_EQ(0, memcmp(&g, &back, sizeof(g)));
}

TEST_F(tree, invalid_intervals_goal_writes_nothing)
{
	static const struct {
		struct daptrace_intervals_goal g;
		const char *why;
	} cases[] = {
		{ { 0, 3, 5000, 10000000 }, "access share must be > 0" },
		{ { 10001, 3, 5000, 10000000 }, "access share must be > 0" },
		{ { 400, 1001, 5000, 10000000 }, "goal windows must be <= 1000" },
		{ { 400, 3, 99, 10000000 }, "minimum sample interval must be >= 100 us" },
		{ { 400, 3, 5000, 10000001 }, "maximum sample interval must be <= 10 s" },
		{ { 400, 3, 50000, 5000 }, "minimum sample interval must be <= the maximum" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		EXPECT_EQ(-EINVAL, daptrace_set_intervals_goal(self->d, &cases[i].g));
		EXPECT_NE(NULL, strstr(daptrace_last_error(), cases[i].why))
			TH_LOG("%s", daptrace_last_error());
		EXPECT_STREQ("", written(self->ino));
	}
}

TEST_F(tree, errors_name_the_file)
{
	struct daptrace_attrs a;
	char path[300];

	ASSERT_EQ(0, fake_write(self->dir, "aggr_us", "lots\n"));
	EXPECT_EQ(-EINVAL, daptrace_get_attrs(self->d, &a));
	EXPECT_NE(NULL, strstr(daptrace_last_error(), "/aggr_us: unexpected content 'lots'"))
		TH_LOG("%s", daptrace_last_error());
	ASSERT_EQ(0, fake_write(self->dir, "aggr_us", "100000\n"));
	ASSERT_EQ(0, fake_write(self->dir, "tlb_flush", "sometimes\n"));
	EXPECT_EQ(-EINVAL, daptrace_get_attrs(self->d, &a));
	EXPECT_NE(NULL, strstr(daptrace_last_error(), "tlb_flush: unknown policy 'sometimes'"));
	snprintf(path, sizeof(path), "%s/state", self->dir);
	unlink(path);
	EXPECT_EQ(-ENOENT, daptrace_start(self->d));
	EXPECT_NE(NULL, strstr(daptrace_last_error(), "/state for writing: No such file"))
		TH_LOG("%s", daptrace_last_error());
}

TEST_F(tree, targets_state_counters)
{
	struct daptrace_target t[4];
	struct daptrace_counters c;
	char buf[64], path[512];

	ASSERT_EQ(0, daptrace_add_target(self->d, 1234));
	ASSERT_GT(fake_read(self->dir, "target", buf, sizeof(buf)), 0);
	EXPECT_STREQ("1234\n", buf);
	ASSERT_EQ(0, daptrace_remove_target(self->d, 1234));
	ASSERT_GT(fake_read(self->dir, "target_remove", buf, sizeof(buf)), 0);
	EXPECT_STREQ("1234\n", buf);
	EXPECT_EQ(-EINVAL, daptrace_add_target(self->d, 0));

	ASSERT_EQ(0, daptrace_get_targets(self->d, t, 4));
	ASSERT_EQ(0, fake_write(self->dir, "target_status",
				"12 monitoring\n13 exited\n14 idle\n"));
	ASSERT_EQ(3, daptrace_get_targets(self->d, t, 4));
	EXPECT_EQ(13, t[1].pid);
	EXPECT_EQ(DAPTRACE_TARGET_EXITED, t[1].state);
	EXPECT_EQ(DAPTRACE_TARGET_IDLE, t[2].state);
	ASSERT_EQ(0, fake_write(self->dir, "target_status", "12 sleeping\n"));
	EXPECT_EQ(-EPROTO, daptrace_get_targets(self->d, t, 4));
	EXPECT_NE(NULL, strstr(daptrace_last_error(), "unknown state 'sleeping'"));
	/* a page of them, then how many more: the count comes from nr_targets */
	ASSERT_EQ(0, fake_write(self->dir, "target_status",
				"12 monitoring\n13 exited\n14 joining\n# 4000 more\n"));
	ASSERT_EQ(3, daptrace_get_targets(self->d, t, 4));
	EXPECT_EQ(13, t[1].pid);
	EXPECT_EQ(DAPTRACE_TARGET_JOINING, t[2].state);
	/* a module without nr_targets: the targets listed */
	snprintf(path, sizeof(path), "%s/nr_targets", self->dir);
	unlink(path);
	EXPECT_EQ(3, daptrace_nr_targets(self->d));
	ASSERT_EQ(0, fake_write(self->dir, "nr_targets", "4002\n"));
	EXPECT_EQ(4002, daptrace_nr_targets(self->d));
	ASSERT_EQ(0, fake_write(self->dir, "nr_targets", "many\n"));
	EXPECT_EQ(-EINVAL, daptrace_nr_targets(self->d));

	EXPECT_EQ(0, daptrace_is_on(self->d));
	ASSERT_EQ(0, daptrace_start(self->d));
	ASSERT_GT(fake_read(self->dir, "state", buf, sizeof(buf)), 0);
	EXPECT_STREQ("on\n", buf);
	EXPECT_EQ(1, daptrace_is_on(self->d));
	ASSERT_EQ(0, daptrace_stop(self->d));
	EXPECT_EQ(0, daptrace_is_on(self->d));

	ASSERT_EQ(0, fake_write(self->dir, "worker_cpu_us", "777\n"));
	ASSERT_EQ(0, fake_write(self->dir, "nr_snapshots_missed", "3\n"));
	ASSERT_EQ(0, daptrace_get_counters(self->d, &c));
	EXPECT_EQ(777, c.worker_cpu_us);
	EXPECT_EQ(3, c.nr_snapshots_missed);
}

TEST(library_reads_a_counter_by_name)
{
	char dir[256];
	struct daptrace *d;
	uint64_t v = 0;

	ASSERT_EQ(0, fake_tree_create(dir, sizeof(dir)));
	ASSERT_EQ(0, fake_write(dir, "nr_samples_late", "17\n"));
	ASSERT_EQ(0, daptrace_open_root(&d, dir));
	EXPECT_EQ(0, daptrace_read_counter(d, "nr_samples_late", &v));
	EXPECT_EQ(17, v);
	EXPECT_EQ(-ENOENT, daptrace_read_counter(d, "nr_samples_busy", &v));
	EXPECT_EQ(-EINVAL, daptrace_read_counter(d, "../state", &v));
	EXPECT_EQ(-EINVAL, daptrace_read_counter(d, "", &v));
	ASSERT_EQ(0, fake_write(dir, "nr_samples_busy", "x\n"));
	EXPECT_EQ(-EINVAL, daptrace_read_counter(d, "nr_samples_busy", &v));
	EXPECT_NE(NULL, strstr(daptrace_last_error(), "nr_samples_busy"));
	daptrace_close(d);
	fake_tree_destroy(dir);
}

TEST_HARNESS_MAIN
