// SPDX-License-Identifier: GPL-2.0
/*
 * Memory the module cannot observe is reported as such (nr_unobserved),
 * never as not accessed; hugetlb memory it can observe reads hot when hot:
 *  - a process with an MMU notifier (a secondary MMU, as KVM gives the QEMU
 *    that runs a guest; here selftests/vm/testmod/dt_notifier.ko) is not
 *    observable at all: every check of every region is unobserved, and no
 *    access is counted, however hot its memory;
 *  - a private 2 MiB hugetlb hot set reads hot (recall >= 0.95, as the
 *    issue asks), its cold part cold, with no unobserved check: before the
 *    walk learnt hugetlb, all of it read as never accessed;
 *  - a shared hugetlb mapping covering an aligned GiB, whose pmd tables
 *    processes may share, is unobserved there, not cold.
 * A child does the accesses; the test reads the snapshot ring.
 */
#define _GNU_SOURCE
#include <sys/mman.h>

#include "kselftest_harness.h"
#include "daptrace_sysfs.h"
#include "dt_child.h"

#define NOTIFIER_KO	"/lib/daptrace/testmod/dt_notifier.ko"
#define HUGE		(2UL << 20)
#define NR_HUGE		"/proc/sys/vm/nr_hugepages"

struct toucher_args {
	size_t len, align, touch, hot;
	int flags;
};

static void toucher(int ready_fd, void *arg)
{
	const struct toucher_args *a = arg;
	unsigned long addr;
	volatile char *p;
	size_t off;

	p = dt_map_touched(a->len, a->flags, 0);
	if (!p)
		_exit(1);
	p = (char *)(((unsigned long)p + a->align - 1) & ~(a->align - 1));
	for (off = 0; off < a->touch; off += 4096)
		p[off] = 1;
	addr = (unsigned long)p;
	dt_child_ready(ready_fd, &addr, sizeof(addr));
	while (!a->hot)
		pause();
	for (;;)
		for (off = 0; off < a->hot; off += 4096)
			p[off]++;
}

/*
 * Fork a child that maps @len bytes with @flags, touches @touch bytes once
 * and then writes to @hot bytes forever (one byte per page), or sleeps;
 * both from the first address of the mapping aligned to @align.  Reports
 * that address through a pipe.
 */
static pid_t spawn_toucher(size_t len, int flags, size_t align, size_t touch,
			   size_t hot, unsigned long *addr)
{
	struct toucher_args a = {
		.len = len, .align = align, .touch = touch, .hot = hot,
		.flags = flags,
	};

	return dt_fork_ready(toucher, &a, addr, sizeof(*addr), NULL);
}

/* dt_tally_ranges(), logged. */
static int tally_ranges(struct __test_metadata *_metadata, pid_t pid,
			struct dt_tally *t, unsigned int n, unsigned int skip,
			unsigned int windows)
{
	int seen = dt_tally_ranges(pid, t, n, skip, windows);

	for (unsigned int k = 0; k < n; k++)
		TH_LOG("[%#lx, %#lx): %d windows, %llu checks, %llu unobserved, %llu accesses, %.2f of bytes seen accessed",
		       t[k].lo, t[k].hi, seen, t[k].checks, t[k].unobserved,
		       t[k].accesses,
		       t[k].hot_bytes ? t[k].hot_seen / t[k].hot_bytes : 0);
	return seen == (int)windows ? 0 : -1;
}

/* tally_ranges() of one range, after the first snapshot. */
static int tally_range(struct __test_metadata *_metadata, pid_t pid,
		       unsigned long lo, unsigned long hi, unsigned int windows,
		       struct dt_tally *t)
{
	t->lo = lo;
	t->hi = hi;
	return tally_ranges(_metadata, pid, t, 1, 1, windows);
}

/* Ask for @n huge pages; returns the old count, or -1 if fewer came. */
static long reserve_huge(long n)
{
	char buf[32];
	long old, now;
	int fd = open(NR_HUGE, O_RDWR);

	if (fd < 0 || read(fd, buf, sizeof(buf) - 1) <= 0) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	old = atol(buf);
	snprintf(buf, sizeof(buf), "%ld", n);
	if (pwrite(fd, buf, strlen(buf), 0) < 0 ||
	    pread(fd, buf, sizeof(buf) - 1, 0) <= 0) {
		close(fd);
		return -1;
	}
	close(fd);
	now = atol(buf);
	return now >= n ? old : -1;
}

static void release_huge(long n)
{
	char buf[32];
	int fd = open(NR_HUGE, O_WRONLY);

	if (fd < 0)
		return;
	snprintf(buf, sizeof(buf), "%ld", n);
	if (write(fd, buf, strlen(buf)) < 0)
		perror(NR_HUGE);
	close(fd);
}

FIXTURE(unobs) {
	pid_t child;
	long huge_before;
};

FIXTURE_SETUP(unobs)
{
	self->child = 0;
	self->huge_before = -1;
	DT_SKIP_UNLESS_LOADED();
	ASSERT_EQ(0, dt_reset());
	ASSERT_EQ(0, dt_set_attrs(5000, 100000, 1000000, 10, 1000));
}

FIXTURE_TEARDOWN(unobs)
{
	dt_reset();
	if (self->child > 0) {
		kill(self->child, SIGKILL);
		waitpid(self->child, NULL, 0);
	}
	if (self->huge_before >= 0)
		release_huge(self->huge_before);
}

TEST_F_TIMEOUT(unobs, secondary_mmu_makes_a_target_unobservable, 120)
{
	char cmd[128];
	unsigned long addr;
	struct dt_tally t;

	/* Kbuild builds the helper exactly when CONFIG_MMU_NOTIFIER=y. */
	if (access(NOTIFIER_KO, F_OK))
		SKIP(return, "kernel without CONFIG_MMU_NOTIFIER: no secondary MMU can exist");
	self->child = spawn_toucher(8 << 20, MAP_PRIVATE | MAP_ANONYMOUS, 4096,
				    8 << 20, 8 << 20, &addr);
	ASSERT_LT(0, self->child);
	ASSERT_EQ(0, dt_add_target(self->child));
	/* Observable first: the hot mapping reads hot. */
	ASSERT_EQ(0, tally_range(_metadata, self->child, addr, addr + (8 << 20), 5, &t));
	EXPECT_EQ(0, t.unobserved);
	EXPECT_LT(0, t.accesses);

	snprintf(cmd, sizeof(cmd), "insmod %s pid=%d", NOTIFIER_KO, self->child);
	ASSERT_EQ(0, system(cmd)) TH_LOG("%s", cmd);
	ASSERT_EQ(0, tally_range(_metadata, self->child, 0, ~0UL, 5, &t));
	EXPECT_EQ(t.checks, t.unobserved) TH_LOG("every check unobserved");
	EXPECT_EQ(0, t.accesses) TH_LOG("no access counted");
	EXPECT_EQ(0, system("rmmod dt_notifier"));
}

TEST_F_TIMEOUT(unobs, private_hugetlb_hot_set_reads_hot, 120)
{
	unsigned long addr;
	struct dt_tally r[2], *hot = &r[0], *cold = &r[1];

	self->huge_before = reserve_huge(32);
	if (self->huge_before < 0)
		SKIP(return, "could not reserve 32 huge pages");
	self->child = spawn_toucher(64 << 20, MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB,
				    HUGE, 64 << 20, 16 << 20, &addr);
	ASSERT_LT(0, self->child);
	ASSERT_EQ(0, dt_add_target(self->child));
	/*
	 * Regions adapt at every window (update_us = aggr_us) for 2 s before
	 * the tally: a region still straddling the hot set and the cold part
	 * would read part of the cold as hot.
	 */
	ASSERT_EQ(0, dt_set_attrs(5000, 100000, 100000, 10, 1000));
	r[0].lo = addr;
	r[0].hi = addr + (16 << 20);
	r[1].lo = addr + (24 << 20);
	r[1].hi = addr + (64 << 20);
	ASSERT_EQ(0, tally_ranges(_metadata, self->child, r, 2, 20, 10));
	EXPECT_EQ(0, hot->unobserved + cold->unobserved);
	EXPECT_LE(0.95, hot->hot_seen / hot->hot_bytes) TH_LOG("recall of the hot set");
	EXPECT_GT(0.2, cold->hot_seen / cold->hot_bytes) TH_LOG("the cold part");
}

TEST_F_TIMEOUT(unobs, shared_hugetlb_page_tables_are_unobserved, 120)
{
	unsigned long addr, giga;
	struct dt_tally t;

	self->huge_before = reserve_huge(8);
	if (self->huge_before < 0)
		SKIP(return, "could not reserve 8 huge pages");
	/*
	 * 2 GiB of shared hugetlb address space, NORESERVE: it covers an
	 * aligned GiB (where huge_pmd_share() may share the pmd table), and
	 * only the 8 pages touched there need memory.  (Where the process
	 * never faulted, its pud is empty: nothing there can have been
	 * accessed by it, and that reads as such.)
	 */
	self->child = spawn_toucher(2UL << 30, MAP_SHARED | MAP_ANONYMOUS |
				    MAP_HUGETLB | MAP_NORESERVE, 1UL << 30,
				    16 << 20, 16 << 20, &addr);
	if (self->child == -ECHILD)
		SKIP(return, "a 2 GiB shared hugetlb mapping failed");
	ASSERT_LT(0, self->child);
	giga = addr;
	ASSERT_EQ(0, dt_add_target(self->child));
	ASSERT_EQ(0, tally_range(_metadata, self->child, giga, giga + (1UL << 30),
				 5, &t));
	EXPECT_LT(0, t.checks);
	EXPECT_EQ(t.checks, t.unobserved) TH_LOG("the shareable GiB is unobserved");
}

TEST_HARNESS_MAIN
