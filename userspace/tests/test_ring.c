// SPDX-License-Identifier: GPL-2.0-only
/*
 * The library's snapshot reader against a fake sysfs tree: in-order reads,
 * exact missed counts for overwritten slots, torn slots, generation change,
 * forward-compatible record sizes, bad rings, and waiting.
 */
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <string.h>
#include <time.h>

#include "kselftest_harness.h"
#include "fake_sysfs.h"
#include "daptrace.h"

FIXTURE(ring) {
	char dir[256];
	struct daptrace *d;
	struct daptrace_snapshot s;
	struct fake_ring r;
};

FIXTURE_SETUP(ring)
{
	ASSERT_EQ(0, fake_tree_create(self->dir, sizeof(self->dir)));
	self->r = (struct fake_ring){ .nr_slots = 4, .max_regions = 16, .generation = 1 };
	ASSERT_EQ(0, fake_ring_init(self->dir, &self->r));
	ASSERT_EQ(0, daptrace_open_root(&self->d, self->dir)) TH_LOG("%s", daptrace_last_error());
	ASSERT_EQ(0, daptrace_reader_init(self->d)) TH_LOG("%s", daptrace_last_error());
	memset(&self->s, 0, sizeof(self->s));
}

FIXTURE_TEARDOWN(ring)
{
	daptrace_snapshot_free(&self->s);
	daptrace_close(self->d);
	fake_tree_destroy(self->dir);
}

TEST_F(ring, reads_in_order)
{
	for (uint64_t seq = 1; seq <= 3; seq++)
		ASSERT_EQ(0, fake_publish(self->dir, &self->r, seq, 5, 42));
	EXPECT_EQ(0, daptrace_reader_slots(self->d));	/* nothing read yet */
	for (uint64_t seq = 1; seq <= 3; seq++) {
		ASSERT_EQ(1, daptrace_read_next(self->d, &self->s)) TH_LOG("%s", daptrace_last_error());
		EXPECT_EQ(seq, self->s.seq);
		EXPECT_EQ(0, self->s.missed_before);
		ASSERT_EQ(5, self->s.nr_regions);
		EXPECT_EQ(20, self->s.nr_samples);
		EXPECT_EQ(self->s.start_ns + 100000000ULL, self->s.end_ns);
		for (uint32_t i = 0; i < 5; i++) {
			EXPECT_EQ(42, self->s.regions[i].pid);
			EXPECT_EQ(0x10000000ULL + i * 4096ULL, self->s.regions[i].start);
			EXPECT_EQ((seq + i) % 21, self->s.regions[i].nr_accesses);
			EXPECT_EQ(i, self->s.regions[i].age);
			EXPECT_EQ(20, self->s.regions[i].nr_present);
			EXPECT_EQ(i, self->s.regions[i].node_samples[0]);
			EXPECT_EQ(20 - i, self->s.regions[i].node_samples[1]);
			EXPECT_EQ(0x40000000ULL + i * 4096ULL, self->s.regions[i].phys_addr);
		}
		EXPECT_EQ(4, daptrace_reader_slots(self->d));
		EXPECT_EQ(1, self->s.placement);
		/* 4 KiB regions: i/20 of the pages on node 0 */
		EXPECT_EQ(4096ULL * 3 / 20,
			  daptrace_region_node_bytes(&self->s, &self->s.regions[3], 0));
		EXPECT_EQ(4096ULL * 17 / 20,
			  daptrace_region_node_bytes(&self->s, &self->s.regions[3], 1));
		EXPECT_EQ(4096ULL, daptrace_region_node_bytes(&self->s, &self->s.regions[3], -1));
		EXPECT_EQ(0, daptrace_region_node_bytes(&self->s, &self->s.regions[3],
							DAPTRACE_NR_NODES));
	}
	EXPECT_EQ(0, daptrace_read_next(self->d, &self->s));
	EXPECT_EQ(0, daptrace_reader_missed(self->d));
}

TEST_F(ring, starts_after_newest)
{
	/* snapshots from before reader_init are not part of this run */
	ASSERT_EQ(0, fake_publish(self->dir, &self->r, 1, 1, 42));
	ASSERT_EQ(0, daptrace_reader_init(self->d));
	EXPECT_EQ(0, daptrace_read_next(self->d, &self->s));
	ASSERT_EQ(0, fake_publish(self->dir, &self->r, 2, 1, 42));
	ASSERT_EQ(1, daptrace_read_next(self->d, &self->s));
	EXPECT_EQ(2, self->s.seq);
}

TEST_F(ring, overwritten_slots_exact_missed)
{
	/* 10 published into 4 slots: 1..6 are gone, 7..10 readable */
	for (uint64_t seq = 1; seq <= 10; seq++)
		ASSERT_EQ(0, fake_publish(self->dir, &self->r, seq, 2, 42));
	ASSERT_EQ(1, daptrace_read_next(self->d, &self->s));
	EXPECT_EQ(7, self->s.seq);
	EXPECT_EQ(6, self->s.missed_before);
	for (uint64_t seq = 8; seq <= 10; seq++) {
		ASSERT_EQ(1, daptrace_read_next(self->d, &self->s));
		EXPECT_EQ(seq, self->s.seq);
		EXPECT_EQ(0, self->s.missed_before);
	}
	EXPECT_EQ(0, daptrace_read_next(self->d, &self->s));
	EXPECT_EQ(6, daptrace_reader_missed(self->d));
}

TEST_F(ring, overwritten_before_seq_file_updated)
{
	struct daptrace_snap_hdr h = { .nr_regions = 0, .nr_samples = 20 };

	/* newest says 3, but the writer already put 5 into slot 1 */
	for (uint64_t seq = 1; seq <= 3; seq++)
		ASSERT_EQ(0, fake_publish(self->dir, &self->r, seq, 1, 42));
	ASSERT_EQ(0, fake_slot_write(self->dir, &self->r, 5, 5, &h, NULL));
	ASSERT_EQ(1, daptrace_read_next(self->d, &self->s));
	EXPECT_EQ(2, self->s.seq);
	EXPECT_EQ(1, self->s.missed_before);
}

struct delayed_fix {
	const char *dir;
	const struct fake_ring *r;
	uint64_t seq;
};

static void *fix_slot_later(void *arg)
{
	struct delayed_fix *f = arg;
	struct timespec ts = { 0, 5 * 1000 * 1000 };

	nanosleep(&ts, NULL);
	fake_publish(f->dir, f->r, f->seq, 3, 42);
	return NULL;
}

TEST_F(ring, torn_slot_is_retried)
{
	struct daptrace_snap_hdr h = { .nr_regions = 3 };
	struct delayed_fix fix = { self->dir, &self->r, 2 };
	pthread_t t;

	ASSERT_EQ(0, fake_publish(self->dir, &self->r, 1, 3, 42));
	/* slot of seq 2 is being written (seq 0) although snapshot_seq says 2 */
	ASSERT_EQ(0, fake_slot_write(self->dir, &self->r, 2, 0, &h, NULL));
	ASSERT_EQ(0, fake_write(self->dir, "snapshot_seq", "%020d\n", 2));
	ASSERT_EQ(1, daptrace_read_next(self->d, &self->s));
	EXPECT_EQ(1, self->s.seq);
	ASSERT_EQ(0, pthread_create(&t, NULL, fix_slot_later, &fix));
	ASSERT_EQ(1, daptrace_read_next(self->d, &self->s)) TH_LOG("%s", daptrace_last_error());
	pthread_join(t, NULL);
	EXPECT_EQ(2, self->s.seq);
	EXPECT_EQ(0, self->s.missed_before);
	EXPECT_EQ(3, self->s.nr_regions);
}

TEST_F(ring, torn_forever_counts_missed_and_returns)
{
	struct daptrace_snap_hdr h = { .nr_regions = 3 };

	ASSERT_EQ(0, fake_slot_write(self->dir, &self->r, 1, 0, &h, NULL));
	ASSERT_EQ(0, fake_write(self->dir, "snapshot_seq", "%020d\n", 1));
	EXPECT_EQ(0, daptrace_read_next(self->d, &self->s));
	EXPECT_EQ(1, daptrace_reader_missed(self->d));
	ASSERT_EQ(0, fake_publish(self->dir, &self->r, 2, 1, 42));
	ASSERT_EQ(1, daptrace_read_next(self->d, &self->s));
	EXPECT_EQ(2, self->s.seq);
	EXPECT_EQ(1, self->s.missed_before);	/* reported with the next one */
}

TEST_F(ring, generation_change)
{
	struct fake_ring g2 = { .nr_slots = 8, .max_regions = 32, .generation = 2 };

	ASSERT_EQ(0, fake_publish(self->dir, &self->r, 1, 2, 42));
	ASSERT_EQ(0, fake_publish(self->dir, &self->r, 2, 2, 42));
	ASSERT_EQ(1, daptrace_read_next(self->d, &self->s));
	EXPECT_EQ(1, self->s.seq);
	/* off/on: 3 and 4 went into the old ring; the new one starts at 5 */
	ASSERT_EQ(0, fake_ring_init(self->dir, &g2));
	ASSERT_EQ(0, fake_publish(self->dir, &g2, 5, 20, 43));
	ASSERT_EQ(0, fake_publish(self->dir, &g2, 6, 20, 43));
	ASSERT_EQ(1, daptrace_read_next(self->d, &self->s)) TH_LOG("%s", daptrace_last_error());
	EXPECT_EQ(5, self->s.seq);
	EXPECT_EQ(3, self->s.missed_before);	/* 2, 3, 4 */
	EXPECT_EQ(20, self->s.nr_regions);
	EXPECT_EQ(43, self->s.regions[19].pid);
	ASSERT_EQ(1, daptrace_read_next(self->d, &self->s));
	EXPECT_EQ(6, self->s.seq);
	EXPECT_EQ(3, daptrace_reader_missed(self->d));
}

TEST_F(ring, larger_records_from_a_newer_kernel)
{
	/* region_size 96 > sizeof(rec): the reader must stride by it, not by sizeof() */
	struct daptrace_ring_hdr h = {
		.magic = DAPTRACE_RING_MAGIC, .version = DAPTRACE_RING_VERSION,
		.hdr_size = 64, .slot_size = 48 + 2 * 96, .nr_slots = 2,
		.region_size = 96, .max_regions = 2, .generation = 9,
		/* and the header of a module from before the probe counts */
		.snap_hdr_size = DAPTRACE_SNAP_HDR_SIZE_V1,
	};
	unsigned char buf[64 + 2 * (48 + 192)] = { 0 };
	struct daptrace_snap_hdr sh = { .seq = 1, .nr_regions = 2, .nr_samples = 20 };
	struct daptrace_region_rec rec = { .start = 8192, .end = 12288,
					   .nr_accesses = 7, .pid = 42, .nr_unobserved = 4,
					   .nr_present = 5, .node_samples = { 2, 3 } };
	char path[300];
	FILE *f;

	memcpy(buf, &h, sizeof(h));
	memcpy(buf + 64 + 1 * 240, &sh, DAPTRACE_SNAP_HDR_SIZE_V1);
	memcpy(buf + 64 + 240 + 48, &rec, sizeof(rec));
	rec.start = 12288;
	rec.end = 16384;
	memcpy(buf + 64 + 240 + 48 + 96, &rec, sizeof(rec));
	snprintf(path, sizeof(path), "%s/snapshots", self->dir);
	f = fopen(path, "r+");
	ASSERT_NE(NULL, f);
	ASSERT_EQ(1, fwrite(buf, sizeof(buf), 1, f));
	fclose(f);
	ASSERT_EQ(0, fake_write(self->dir, "snapshot_seq", "%020d\n", 1));
	ASSERT_EQ(1, daptrace_read_next(self->d, &self->s)) TH_LOG("%s", daptrace_last_error());
	ASSERT_EQ(2, self->s.nr_regions);
	EXPECT_EQ(8192, self->s.regions[0].start);
	EXPECT_EQ(12288, self->s.regions[1].start);
	EXPECT_EQ(16384, self->s.regions[1].end);
	EXPECT_EQ(7, self->s.regions[1].nr_accesses);
	EXPECT_EQ(0, self->s.probes) TH_LOG("a 48-byte header has no probe counts");
	EXPECT_EQ(1, self->s.placement);
	EXPECT_EQ(3, self->s.regions[1].node_samples[1]);
	/* checks that could not observe the page, carried as they came */
	EXPECT_EQ(4, self->s.regions[1].nr_unobserved);
}

TEST_F(ring, bad_magic_is_an_error)
{
	char path[300];
	FILE *f;

	ASSERT_EQ(0, fake_publish(self->dir, &self->r, 1, 1, 42));
	snprintf(path, sizeof(path), "%s/snapshots", self->dir);
	f = fopen(path, "r+");
	ASSERT_NE(NULL, f);
	fputs("XXXX", f);
	fclose(f);
	EXPECT_EQ(-EPROTO, daptrace_read_next(self->d, &self->s));
	EXPECT_NE(NULL, strstr(daptrace_last_error(), "snapshots: bad magic"))
		TH_LOG("%s", daptrace_last_error());
}

TEST_F(ring, too_many_regions_is_an_error)
{
	struct daptrace_snap_hdr h = { .nr_regions = 17 };	/* max is 16 */

	ASSERT_EQ(0, fake_slot_write(self->dir, &self->r, 1, 1, &h, NULL));
	ASSERT_EQ(0, fake_write(self->dir, "snapshot_seq", "%020d\n", 1));
	EXPECT_EQ(-EPROTO, daptrace_read_next(self->d, &self->s));
	EXPECT_NE(NULL, strstr(daptrace_last_error(), "seq 1 has 17 regions, max 16"))
		TH_LOG("%s", daptrace_last_error());
}

TEST_F(ring, wait)
{
	struct timespec a, b;
	long ms;

	clock_gettime(CLOCK_MONOTONIC, &a);
	EXPECT_EQ(0, daptrace_wait(self->d, 50));
	clock_gettime(CLOCK_MONOTONIC, &b);
	ms = (b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000;
	EXPECT_GE(ms, 45);
	ASSERT_EQ(0, fake_publish(self->dir, &self->r, 1, 1, 42));
	EXPECT_EQ(1, daptrace_wait(self->d, 10000));
}

TEST(no_ring_yet)
{
	struct daptrace_snapshot s = { 0 };
	struct daptrace *d;
	char dir[256];

	ASSERT_EQ(0, fake_tree_create(dir, sizeof(dir)));
	ASSERT_EQ(0, daptrace_open_root(&d, dir));
	EXPECT_EQ(-EINVAL, daptrace_read_next(d, &s));	/* not initialised */
	ASSERT_EQ(0, daptrace_reader_init(d));
	EXPECT_EQ(0, daptrace_read_next(d, &s));
	daptrace_close(d);
	fake_tree_destroy(dir);
}

TEST(missing_root)
{
	struct daptrace *d;

	EXPECT_EQ(-ENOENT, daptrace_open_root(&d, "/nonexistent/daptrace"));
	EXPECT_NE(NULL, strstr(daptrace_last_error(), "is daptrace.ko loaded?"));
	setenv("DAPTRACE_SYSFS", "/nonexistent/fake", 1);
	EXPECT_EQ(-ENOENT, daptrace_open(&d));
	EXPECT_NE(NULL, strstr(daptrace_last_error(), "/nonexistent/fake"));
}

/*
 * The race the ring generation exists for, played step by step: the reader
 * copies seq 5 out of ring A (generation 1), then, just before it re-reads
 * the slot's seq, monitoring goes off, max_nr_regions changes and it goes on
 * again: ring B (generation 2, smaller slots) publishes seq 9 and the
 * 8 bytes at seq 5's old offset are now region data that read as 5 (the
 * test plants them in whichever record fields lie there).
 * The seq check alone passes; the reader must still reject the copy.
 * pread() is wrapped (-Wl,--wrap=pread) to run the writer at that moment.
 */
ssize_t __real_pread(int fd, void *buf, size_t count, off_t off);
ssize_t __wrap_pread(int fd, void *buf, size_t count, off_t off);

static struct {
	const char *dir;
	off_t seq_off;		/* where the reader re-reads seq 5 in ring A */
	size_t in_rec;		/* its offset in ring B's records */
	int fired;
} swap_ring;

ssize_t __wrap_pread(int fd, void *buf, size_t count, off_t off)
{
	if (swap_ring.dir && !swap_ring.fired && count == sizeof(uint64_t) &&
	    off == swap_ring.seq_off) {
		struct fake_ring b = { .nr_slots = 4, .max_regions = 2, .generation = 2 };
		struct daptrace_snap_hdr h = { .nr_regions = 2, .nr_samples = 20,
					       .sample_us = 5000, .aggr_us = 100000 };
		struct daptrace_region_rec rec[2] = {
			{ .start = 0x20000000, .end = 0x20001000, .nr_accesses = 5, .pid = 43 },
			{ .start = 0x20001000, .end = 0x20002000, .nr_accesses = 5, .pid = 43 },
		};
		const uint64_t five = 5;

		/* region data that reads as seq 5 at its old offset */
		memcpy((char *)rec + swap_ring.in_rec, &five, sizeof(five));
		swap_ring.fired = 1;
		if (fake_ring_init(swap_ring.dir, &b) ||
		    fake_slot_write(swap_ring.dir, &b, 9, 9, &h, rec) ||
		    fake_write(swap_ring.dir, "snapshot_seq", "%020llu\n", 9ULL))
			abort();
	}
	return __real_pread(fd, buf, count, off);
}

TEST_F(ring, torn_across_reallocation_is_rejected)
{
	off_t slot_a = fake_slot_size(4);
	off_t off_b_rec0 = sizeof(struct daptrace_ring_hdr) + fake_slot_size(2) +
			   sizeof(struct daptrace_snap_hdr);
	int nr_read = 0;

	self->r.max_regions = 4;
	ASSERT_EQ(0, fake_ring_init(self->dir, &self->r));
	for (uint64_t seq = 1; seq <= 5; seq++)
		ASSERT_EQ(0, fake_publish(self->dir, &self->r, seq, 4, 42));
	for (uint64_t seq = 2; seq <= 4; seq++) {
		ASSERT_EQ(1, daptrace_read_next(self->d, &self->s));
		ASSERT_EQ(seq, self->s.seq);
	}
	swap_ring.dir = self->dir;
	swap_ring.seq_off = sizeof(struct daptrace_ring_hdr) + (5 % 4) * slot_a;
	swap_ring.fired = 0;
	/*
	 * The set-up this test is about: seq 5's old offset falls on 8 bytes
	 * of ring B's two records, which the writer fills so that they read
	 * as 5.
	 */
	ASSERT_LE(off_b_rec0, swap_ring.seq_off);
	ASSERT_GE(off_b_rec0 + 2 * (off_t)sizeof(struct daptrace_region_rec),
		  swap_ring.seq_off + (off_t)sizeof(uint64_t));
	swap_ring.in_rec = (size_t)(swap_ring.seq_off - off_b_rec0);

	while (daptrace_read_next(self->d, &self->s) == 1) {
		EXPECT_NE(5, self->s.seq) TH_LOG("a copy torn across rings passed as valid");
		EXPECT_EQ(43, self->s.regions[0].pid);
		nr_read++;
	}
	swap_ring.dir = NULL;
	ASSERT_TRUE(swap_ring.fired) TH_LOG("the reader never re-read seq 5's slot");
	EXPECT_EQ(1, nr_read) TH_LOG("only ring B's seq 9 is valid");
	EXPECT_EQ(10, daptrace_reader_next_seq(self->d));
}

/* A module without placement (32-byte records): read fine, placement off. */
TEST_F(ring, reads_records_without_placement)
{
	struct daptrace_ring_hdr h;
	struct daptrace_snap_hdr sh = { .seq = 1, .nr_regions = 2, .nr_samples = 20 };
	struct daptrace_region_rec rec = { .start = 4096, .end = 8192, .nr_accesses = 7,
					   .pid = 42, .nr_present = 9 };
	char path[512];
	off_t off;
	int fd;

	daptrace_close(self->d);
	snprintf(path, sizeof(path), "%s/snapshots", self->dir);
	fd = open(path, O_RDWR);
	ASSERT_LE(0, fd);
	ASSERT_EQ(sizeof(h), pread(fd, &h, sizeof(h), 0));
	h.region_size = DAPTRACE_REGION_REC_SIZE_V1;
	ASSERT_EQ(sizeof(h), pwrite(fd, &h, sizeof(h), 0));
	off = h.hdr_size + (1 % h.nr_slots) * h.slot_size;
	ASSERT_EQ(sizeof(sh), pwrite(fd, &sh, sizeof(sh), off));
	/* two packed v1 records; the second's bytes 32.. would be garbage */
	ASSERT_EQ(32, pwrite(fd, &rec, 32, off + h.snap_hdr_size));
	rec.start = 8192;
	rec.end = 12288;
	ASSERT_EQ(sizeof(rec), pwrite(fd, &rec, sizeof(rec), off + h.snap_hdr_size + 32));
	close(fd);

	ASSERT_EQ(0, daptrace_open_root(&self->d, self->dir)) TH_LOG("%s", daptrace_last_error());
	ASSERT_EQ(0, daptrace_reader_init(self->d)) TH_LOG("%s", daptrace_last_error());
	ASSERT_EQ(0, fake_write(self->dir, "snapshot_seq", "%020d\n", 1));
	ASSERT_EQ(1, daptrace_read_next(self->d, &self->s)) TH_LOG("%s", daptrace_last_error());
	ASSERT_EQ(2, self->s.nr_regions);
	EXPECT_EQ(0, self->s.placement);
	EXPECT_EQ(4096, self->s.regions[0].start);
	EXPECT_EQ(8192, self->s.regions[1].start);
	EXPECT_EQ(7, self->s.regions[1].nr_accesses);
	EXPECT_EQ(0, self->s.regions[1].nr_present);
	EXPECT_EQ(DAPTRACE_PHYS_NONE, self->s.regions[1].phys_addr);
	EXPECT_EQ(0, daptrace_region_node_bytes(&self->s, &self->s.regions[0], 0));
}

TEST_HARNESS_MAIN
