// SPDX-License-Identifier: GPL-2.0
/*
 * A target that maps and unmaps in a loop keeps a writer queued on its
 * mmap lock, and sampling passes yield to it and are cut short.  With more
 * regions than a pass walks before it yields (after a cut, 1024 and a batch
 * at most, or what 250 us allow: kernel/vaddr.c), the regions past that
 * point must still take their turn.  Here 2500 regions: the test itself is
 * the target, one thread touches a 64 MiB buffer (and a 16 MiB array in the
 * bss, whose regions come first) without pause and another maps and unmaps
 * a page every CHURN_US.  The
 * buffer's regions past position 1200 must take their turns: observed in
 * at least half the share of their checks that the array's regions before
 * position 1000 are, and then read at least half as hot.  (A pass cut
 * short leaves the regions it did not reach unobserved, not cold: so the
 * comparison is of observed checks.)  The churn has a CPU of its own, and
 * the toucher and the worker share the other: a writer then arrives during
 * every pass, so every pass is cut.  Left to the scheduler, the three
 * shared both CPUs and the churn cut anywhere from none to nearly all of
 * the passes from one boot to the next.  When passes always began at the
 * first region, the buffer's regions there were never observed.
 *
 * A cut pass observes what 250 us of walking reach: about a hundred
 * regions under TCG, a few tens on a debug kernel, where 8 windows are
 * little more than one turn through the 2500 and which regions a turn
 * favours decides the comparison.  So windows are read until each set has
 * MIN_OBSERVED observed checks (several turns), MIN_WINDOWS at least.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>

#include "kselftest_harness.h"
#include "daptrace_sysfs.h"

#define BUF_BYTES	(64UL << 20)
#define PAGE		4096UL
#define PAST_HOLD	1200	/* regions a cut pass may walk, and some */
#define MIN_WINDOWS	8
#define MAX_WINDOWS	250	/* 100 s */
#define MIN_OBSERVED	500	/* observed checks of each set, to compare */
#define EARLY		1000	/* regions the pass reaches before a cut */
#define EARLY_BYTES	(16UL << 20)
#define CHURN_US	200	/* between map changes, so most passes can begin */

static volatile int stop;
static char *buf;
/* In the bss, at the lowest addresses of the target: its first regions. */
static char early[EARLY_BYTES] __attribute__((aligned(4096)));

static cpu_set_t *cpu(int nr, cpu_set_t *set)
{
	CPU_ZERO(set);
	CPU_SET(nr, set);
	return set;
}

/* Checks of a set of regions over the windows: made, unobserved, accessed. */
struct tally {
	unsigned int n;			/* region records */
	unsigned long long checks, unobserved, accesses;
};

static void add(struct tally *t, const struct daptrace_region_rec *r,
		unsigned int nr_samples)
{
	t->n++;
	t->checks += nr_samples;
	t->unobserved += r->nr_unobserved;
	t->accesses += r->nr_accesses;
}

/* The share of the checks that were observed. */
static double observed(const struct tally *t)
{
	return t->checks ? (double)(t->checks - t->unobserved) / t->checks : 0;
}

/* The share of the observed checks that found an access. */
static double hot(const struct tally *t)
{
	unsigned long long o = t->checks - t->unobserved;

	return o ? (double)t->accesses / o : 0;
}

static void *toucher(void *arg)
{
	unsigned long off;

	while (!stop) {
		for (off = 0; off < BUF_BYTES; off += PAGE)
			((volatile char *)buf)[off]++;
		for (off = 0; off < EARLY_BYTES; off += PAGE)
			((volatile char *)early)[off]++;
	}
	return arg;
}

static void *churner(void *arg)
{
	void *p;

	while (!stop) {
		p = mmap(NULL, PAGE, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p != MAP_FAILED)
			munmap(p, PAGE);
		usleep(CHURN_US);
	}
	return arg;
}

FIXTURE(churn) {
	pthread_t threads[2];
	int nr_threads;
	int fd;		/* snapshots */
	void *recs;
};

FIXTURE_SETUP(churn)
{
	char path[256];

	self->nr_threads = 0;
	self->fd = -1;
	self->recs = NULL;
	DT_SKIP_UNLESS_LOADED();
	ASSERT_EQ(0, dt_reset()) TH_LOG("cannot reset daptrace to defaults");
	self->fd = open(dt_path("snapshots", path, sizeof(path)), O_RDONLY);
	ASSERT_LE(0, self->fd) TH_LOG("open snapshots: %s", strerror(errno));
	buf = mmap(NULL, BUF_BYTES, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, buf);
	/* One accessed bit per 4 KiB page, as the regions are sized. */
	madvise(buf, BUF_BYTES, MADV_NOHUGEPAGE);
	memset(buf, 1, BUF_BYTES);
	madvise(early, EARLY_BYTES, MADV_NOHUGEPAGE);
	memset(early, 1, EARLY_BYTES);
}

FIXTURE_TEARDOWN(churn)
{
	int i;

	stop = 1;
	for (i = 0; i < self->nr_threads; i++)
		pthread_join(self->threads[i], NULL);
	dt_reset();
	if (self->fd >= 0)
		close(self->fd);
	free(self->recs);
}

TEST_F_TIMEOUT(churn, regions_past_a_cut_pass_are_sampled, 180)
{
	unsigned long lo = (unsigned long)buf, hi = lo + BUF_BYTES;
	unsigned long elo = (unsigned long)early, ehi = elo + EARLY_BYTES;
	struct daptrace_ring_hdr rh;
	struct daptrace_snap_hdr sh;
	long long busy, samples, seq;
	struct tally early_t = { 0 }, past_t = { 0 };
	unsigned int i, k;
	cpu_set_t set;
	char pid[32];
	pid_t worker;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		SKIP(return, "needs 2 CPUs, one of them for the churn");
	ASSERT_EQ(0, pthread_create(&self->threads[0], NULL, toucher, NULL));
	self->nr_threads++;
	ASSERT_EQ(0, pthread_setaffinity_np(self->threads[0], sizeof(set),
					    cpu(0, &set)));
	ASSERT_EQ(0, pthread_create(&self->threads[1], NULL, churner, NULL));
	self->nr_threads++;
	ASSERT_EQ(0, pthread_setaffinity_np(self->threads[1], sizeof(set),
					    cpu(1, &set)));
	snprintf(pid, sizeof(pid), "%d", getpid());
	ASSERT_EQ(0, dt_write("target", pid));
	ASSERT_EQ(0, dt_set_attrs(20000, 400000, 10000000, 2500, 3000));
	ASSERT_EQ(0, dt_write("state", "on"));
	worker = dt_worker_pid();
	ASSERT_LT(0, worker) TH_LOG("no daptrace kthread found in /proc");
	ASSERT_EQ(0, sched_setaffinity(worker, sizeof(set), cpu(0, &set)))
		TH_LOG("pin the worker: %s", strerror(errno));
	dt_sleep_ms(3000);
	ASSERT_EQ(0, dt_ring_hdr(self->fd, &rh));
	self->recs = malloc((size_t)rh.max_regions * rh.region_size);
	ASSERT_NE(NULL, self->recs);
	busy = dt_read_ll("nr_samples_busy");
	samples = dt_read_ll("nr_samples");

	for (i = 0; i < MIN_WINDOWS ||
		    early_t.checks - early_t.unobserved < MIN_OBSERVED ||
		    past_t.checks - past_t.unobserved < MIN_OBSERVED; i++) {
		ASSERT_GT(MAX_WINDOWS, i)
			TH_LOG("%llu and %llu checks observed in %d windows: the regions are not taking turns",
			       early_t.checks - early_t.unobserved,
			       past_t.checks - past_t.unobserved, MAX_WINDOWS);
		dt_sleep_ms(400);
		seq = dt_read_ll("snapshot_seq");
		ASSERT_EQ(0, dt_slot_hdr(self->fd, &rh, seq, &sh));
		ASSERT_LE(sh.nr_regions, rh.max_regions);
		ASSERT_EQ((ssize_t)sh.nr_regions * rh.region_size,
			  dt_pread_all(self->fd, self->recs,
				       (size_t)sh.nr_regions * rh.region_size,
				       dt_slot_off(&rh, seq) + rh.snap_hdr_size));
		/* A slot rewritten while read: its seq changed. */
		ASSERT_EQ(0, dt_slot_hdr(self->fd, &rh, seq, &sh));
		ASSERT_EQ((__u64)seq, sh.seq) TH_LOG("fell behind the ring");
		ASSERT_LT(0, sh.nr_samples);
		for (k = 0; k < sh.nr_regions; k++) {
			struct daptrace_region_rec *r = (void *)((char *)self->recs +
						(size_t)k * rh.region_size);

			if (k < EARLY && r->start >= elo && r->end <= ehi)
				add(&early_t, r, sh.nr_samples);
			else if (k >= PAST_HOLD && r->start >= lo && r->end <= hi)
				add(&past_t, r, sh.nr_samples);
		}
	}
	busy = dt_read_ll("nr_samples_busy") - busy;
	samples = dt_read_ll("nr_samples") - samples;
	TH_LOG("the bss's %u regions before position %d: observed in %.3f of their checks, accessed in %.3f of those",
	       early_t.n, EARLY, observed(&early_t), hot(&early_t));
	TH_LOG("the buffer's %u regions past %d: observed in %.3f of their checks, accessed in %.3f of those (%u windows); passes cut %lld in %lld samples",
	       past_t.n, PAST_HOLD, observed(&past_t), hot(&past_t), i,
	       busy, samples);
	/* With the writer on a CPU of its own, every pass yields and is cut. */
	ASSERT_LE(samples, busy * 5)
		TH_LOG("the churn cut only %lld passes in %lld samples",
		       busy, samples);
	ASSERT_LE(MIN_WINDOWS, early_t.n) TH_LOG("the bss is not before position %d", EARLY);
	ASSERT_LE(100, past_t.n) TH_LOG("the buffer is not past position %d", PAST_HOLD);
	/* The regions every pass reaches are the reference. */
	ASSERT_LT(0, early_t.checks - early_t.unobserved)
		TH_LOG("no check of the first regions was observed");
	EXPECT_LE(0.5 * observed(&early_t), observed(&past_t))
		TH_LOG("the regions past a cut take their turns");
	ASSERT_LT(0, past_t.checks - past_t.unobserved);
	EXPECT_LE(0.5 * hot(&early_t), hot(&past_t))
		TH_LOG("observed, they read hot as the first regions do");
}

TEST_HARNESS_MAIN
