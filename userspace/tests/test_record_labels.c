// SPDX-License-Identifier: GPL-2.0-only
/*
 * When the recorder reads a target's map again (record_labels.h), counted
 * in reads of a fake /proc/<pid>/maps on a clock the test turns: the
 * first of a process's three initial regions spans its binary, the gap
 * brk randomisation leaves and its heap, and is "[unmapped]".  A hole the
 * last read showed must not make every window read the map again (with
 * 512 targets that was most of the recorder's time); a region where the
 * map has nothing new must.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "kselftest_harness.h"
#include "record/record_labels.h"

#define MS		1000000LL
#define EVERY		(1000 * MS)	/* the periodic re-read */
#define RETRY		(100 * MS)	/* the early one, at most this often */
#define PID		4242

/* binary, a 64 MiB hole, heap; libc; stack */
static const char *const maps_v1 =
	"10000000-10004000 r--p 00000000 08:01 42 /usr/bin/app\n"
	"14000000-14021000 rw-p 00000000 00:00 0 [heap]\n"
	"7f0000000000-7f0000200000 r-xp 00000000 08:01 7 /usr/lib/libc.so.6\n"
	"7ffc00000000-7ffc00021000 rw-p 00000000 00:00 0 [stack]\n";
/* and an 8 MiB buffer mapped since, below libc */
static const char *const maps_v2 =
	"10000000-10004000 r--p 00000000 08:01 42 /usr/bin/app\n"
	"14000000-14021000 rw-p 00000000 00:00 0 [heap]\n"
	"7eff00000000-7eff00800000 rw-p 00000000 00:00 0\n"
	"7f0000000000-7f0000200000 r-xp 00000000 08:01 7 /usr/lib/libc.so.6\n"
	"7ffc00000000-7ffc00021000 rw-p 00000000 00:00 0 [stack]\n";

struct ctx {
	struct rec_tgt t;
	struct rec_labels l;
	char proc[PATH_MAX];
	struct daptrace_region regs[8];
	struct daptrace_snapshot s;
};

static struct rec_tgt *find(void *c, pid_t pid)
{
	return pid == PID ? &((struct ctx *)c)->t : NULL;
}

static int write_maps(struct ctx *c, const char *text)
{
	char path[PATH_MAX + 32];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%d/maps", c->proc, PID);
	f = fopen(path, "w");
	if (!f)
		return -1;
	fputs(text, f);
	return fclose(f);
}

/* A snapshot of @n regions of the target, @ranges as start, end pairs. */
static void set_regions(struct ctx *c, const uint64_t *ranges, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		c->regs[i] = (struct daptrace_region){
			.start = ranges[2 * i], .end = ranges[2 * i + 1], .pid = PID,
		};
	c->s = (struct daptrace_snapshot){ .regions = c->regs, .nr_regions = n,
					   .nr_samples = 20 };
}

/* What the last refresh labelled region @i, and what the map says now. */
static const char *label(struct ctx *c, uint32_t i)
{
	const char *l = rec_label(&c->l, &c->s, &c->regs[i]);

	return strcmp(l, maps_label(&c->t.maps, c->regs[i].start, c->regs[i].end)) ?
	       "(stale)" : l;
}

/* The three initial regions of maps_v1: the first is mostly hole. */
static const uint64_t three[] = {
	0x10000000, 0x14021000,
	0x7f0000000000, 0x7f0000200000,
	0x7ffc00000000, 0x7ffc00021000,
};

FIXTURE(labels) {
	struct ctx c;
};

FIXTURE_SETUP(labels)
{
	char dir[PATH_MAX + 16];
	const char *tmp = getenv("TMPDIR");

	memset(&self->c, 0, sizeof(self->c));
	snprintf(self->c.proc, sizeof(self->c.proc), "%s/daptrace-proc-XXXXXX",
		 tmp && *tmp ? tmp : "/tmp");
	ASSERT_NE(NULL, mkdtemp(self->c.proc));
	snprintf(dir, sizeof(dir), "%s/%d", self->c.proc, PID);
	ASSERT_EQ(0, mkdir(dir, 0700));
	ASSERT_EQ(0, write_maps(&self->c, maps_v1));
	self->c.t.maps.pid = PID;
	self->c.t.maps.proc = self->c.proc;
	/* it joined at t = 0 */
	rec_tgt_read(&self->c.t, 0);
	set_regions(&self->c, three, 3);
}

FIXTURE_TEARDOWN(labels)
{
	char path[PATH_MAX + 32];

	rec_tgt_free(&self->c.t);
	rec_labels_free(&self->c.l);
	snprintf(path, sizeof(path), "%s/%d/maps", self->c.proc, PID);
	unlink(path);
	snprintf(path, sizeof(path), "%s/%d", self->c.proc, PID);
	rmdir(path);
	rmdir(self->c.proc);
}

/* 30 windows 100 ms apart: the join's read and one a second, no more. */
TEST_F(labels, a_hole_shown_by_the_last_read_reads_nothing_more)
{
	struct ctx *c = &self->c;

	for (int w = 1; w <= 30; w++) {
		rec_labels_refresh(&c->l, &c->s, w * 100 * MS, EVERY, RETRY, find, c);
		EXPECT_STREQ("[unmapped]", label(c, 0));
		EXPECT_STREQ("/usr/lib/libc.so.6", label(c, 1));
		EXPECT_STREQ("[stack]", label(c, 2));
	}
	/* at 0 (join), 1, 2 and 3 s */
	EXPECT_EQ(4, c->t.maps.nr_reads);
}

/* The worker splits the hole region: its pieces are in the same hole. */
TEST_F(labels, pieces_of_a_known_hole_read_nothing)
{
	static const uint64_t split[] = {
		0x10000000, 0x11000000,
		0x11000000, 0x13ff0000,
		0x13ff0000, 0x14021000,
		0x7f0000000000, 0x7f0000200000,
		0x7ffc00000000, 0x7ffc00021000,
	};
	struct ctx *c = &self->c;

	rec_labels_refresh(&c->l, &c->s, 100 * MS, EVERY, RETRY, find, c);
	set_regions(c, split, 5);
	for (int w = 2; w <= 9; w++)
		rec_labels_refresh(&c->l, &c->s, w * 100 * MS, EVERY, RETRY, find, c);
	EXPECT_STREQ("[unmapped]", label(c, 0));
	EXPECT_STREQ("[unmapped]", label(c, 1));
	EXPECT_STREQ("[heap]", label(c, 2));
	EXPECT_EQ(1, c->t.maps.nr_reads);
}

/*
 * A mapping made after the read: the worker's next regions cover it, the
 * map read at the join has nothing there.  It is read again at once, and
 * no more once the new map shows the region.
 */
TEST_F(labels, a_region_outside_the_map_reads_it_again)
{
	static const uint64_t grown[] = {
		0x10000000, 0x14021000,
		0x7eff00000000, 0x7f0000200000,
		0x7ffc00000000, 0x7ffc00021000,
	};
	struct ctx *c = &self->c;

	rec_labels_refresh(&c->l, &c->s, 100 * MS, EVERY, RETRY, find, c);
	ASSERT_EQ(1, c->t.maps.nr_reads);
	ASSERT_EQ(0, write_maps(c, maps_v2));
	set_regions(c, grown, 3);
	/* 4 GiB of the new region's 4 GiB + 2 MiB: unknown to the old map */
	rec_labels_refresh(&c->l, &c->s, 200 * MS, EVERY, RETRY, find, c);
	EXPECT_EQ(2, c->t.maps.nr_reads);
	for (int w = 3; w <= 9; w++)
		rec_labels_refresh(&c->l, &c->s, w * 100 * MS, EVERY, RETRY, find, c);
	EXPECT_EQ(2, c->t.maps.nr_reads);
	EXPECT_STREQ("[unmapped]", label(c, 0));
	EXPECT_STREQ("[unmapped]", label(c, 1));
}

/* Early reads stay rate-limited: at most one per RETRY. */
TEST_F(labels, early_reads_wait_for_the_retry_interval)
{
	static const uint64_t moved[] = {
		0x10000000, 0x14021000,
		0x7eff00000000, 0x7f0000200000,
		0x7ffc00000000, 0x7ffc00021000,
	};
	static const uint64_t moved_again[] = {
		0x10000000, 0x14021000,
		0x7efe00000000, 0x7f0000200000,
		0x7ffc00000000, 0x7ffc00021000,
	};
	struct ctx *c = &self->c;

	rec_labels_refresh(&c->l, &c->s, 100 * MS, EVERY, RETRY, find, c);
	set_regions(c, moved, 3);
	rec_labels_refresh(&c->l, &c->s, 120 * MS, EVERY, RETRY, find, c);
	EXPECT_EQ(2, c->t.maps.nr_reads);
	/* 30 ms after that read: another region unknown to it waits */
	set_regions(c, moved_again, 3);
	rec_labels_refresh(&c->l, &c->s, 150 * MS, EVERY, RETRY, find, c);
	EXPECT_EQ(2, c->t.maps.nr_reads);
	rec_labels_refresh(&c->l, &c->s, 220 * MS, EVERY, RETRY, find, c);
	EXPECT_EQ(3, c->t.maps.nr_reads);
}

/*
 * Each read goes into the record once (its #maps rows, recfile.h), the
 * pieces of a mapping and adjacent mappings joined into one range; a read
 * that finds the same ranges, or an exited process's empty map, adds none.
 */
TEST_F(labels, each_read_goes_into_the_record_once)
{
	static const char *const adjacent =
		"10000000-10004000 r--p 00000000 08:01 42 /usr/bin/app\n"
		"10004000-10008000 r-xp 00004000 08:01 42 /usr/bin/app\n"
		"10008000-10009000 rw-p 00000000 00:00 0\n"
		"14000000-14021000 rw-p 00000000 00:00 0 [heap]\n";
	struct maps_rows rows = { 0 };
	struct ctx *c = &self->c;

	/* the join's read: maps_v1's four mappings, apart */
	ASSERT_EQ(0, maps_rows_add(&rows, &c->t.maps, 7, &c->t.written));
	ASSERT_EQ(1, rows.n);
	EXPECT_EQ(PID, rows.v[0].pid);
	EXPECT_EQ(7, rows.v[0].time_ns);
	EXPECT_EQ(4, rows.v[0].nr);
	EXPECT_EQ(0x7ffc00021000, rows.r[3].end);
	/* not read since, or read and the same */
	ASSERT_EQ(0, maps_rows_add(&rows, &c->t.maps, 8, &c->t.written));
	EXPECT_EQ(1, rows.n);
	rec_tgt_read(&c->t, EVERY / 2);
	ASSERT_EQ(0, maps_rows_add(&rows, &c->t.maps, 8, &c->t.written));
	EXPECT_EQ(1, rows.n);
	EXPECT_EQ(4, rows.nr);
	ASSERT_EQ(0, write_maps(c, adjacent));
	rec_tgt_read(&c->t, EVERY);
	maps_rows_reset(&rows);
	ASSERT_EQ(0, maps_rows_add(&rows, &c->t.maps, 9, &c->t.written));
	ASSERT_EQ(1, rows.n);
	ASSERT_EQ(2, rows.v[0].nr);
	EXPECT_EQ(0x10000000, rows.r[0].start);
	EXPECT_EQ(0x10009000, rows.r[0].end);
	EXPECT_EQ(0x14000000, rows.r[1].start);
	EXPECT_EQ(0x14021000, rows.r[1].end);
	ASSERT_EQ(0, write_maps(c, ""));
	rec_tgt_read(&c->t, 2 * EVERY);
	maps_rows_reset(&rows);
	ASSERT_EQ(0, maps_rows_add(&rows, &c->t.maps, 10, &c->t.written));
	EXPECT_EQ(0, rows.n);
	maps_rows_free(&rows);
}

TEST_HARNESS_MAIN
