// SPDX-License-Identifier: GPL-2.0
/*
 * Reclaim and migration must not make cold memory read hot, and must not
 * make hot memory read cold.  The check counts, besides the accessed bit,
 * what reclaim leaves behind when it takes a reference away (the idle
 * flag cleared, the referenced or active flag, a move into the youngest
 * MGLRU generation of some moment since prepare: kernel/walk.c).  These
 * move too without an access:
 *
 *  - prepare hands reclaim the reference whose accessed bit it clears
 *    (folio_set_young(), 6.12 and 7.3); reclaim's folio_referenced()
 *    counts it, and keeps or activates the folio: referenced flag, new
 *    generation, active flag, all inside the sample the bit was cleared for;
 *  - isolation and putback (migration that fails, compaction, reclaim) put
 *    the same folio back into another MGLRU generation (an inactive one
 *    into the second youngest or an older one, which the check does not
 *    count; one isolated from the two youngest into the youngest, which
 *    makes the check unobserved), the aging's inc_min_seq() moves the
 *    oldest generation up by one (not counted), and migration puts a new
 *    folio, with another generation, under the sampled address.
 *
 * A child maps a cold set (touched once, never after) between two hot sets
 * (every page touched every TOUCH_MS), in one mapping: the regions over
 * the cold set do not merge with its neighbours, and those inside it are
 * its own.  Under memcg reclaim onto zram (memory.reclaim, or memory.high
 * lowered on kernels without it), or under move_pages(2) back and forth
 * between two NUMA nodes, at most COLD_MAX of the checks of regions inside
 * the cold set may see an access, and at least HOT_MIN of those inside the
 * hot sets must.  Each runs with the classic LRU and, where the kernel has
 * it, with MGLRU (enabled for the test and put back); with MGLRU the
 * memory is aged before and during the moves, as any reclaim ages it, so
 * that the cold set lies in older generations than where a move puts it.
 * 5.10 has neither the young flag nor MGLRU: there the test only bounds.
 *
 * "Hot" is what the child did, not what it meant to do: under memcg reclaim
 * the kernel may swap the hot sets out faster than the child pages them
 * back in (MGLRU once reclaimed 170 MiB for 30 asked here, 35699 swap-ins),
 * and a child stalled on swap-ins does not touch every hot page in every
 * sample.  Under the moves it can stall too (a touch of a page being moved
 * waits for the move; on 6.1 with the classic LRU the child was hot in 0
 * to 7 of the 12 windows in four boots, why is not pinned down).  The
 * child logs the start and end of each pass over the hot sets; the hot
 * bound holds over the windows in which every hot page was touched
 * at least once per SAMPLE_MS (each pass ended within SAMPLE_MS of the
 * previous one's start), and the test says how many those were.  The cold
 * bound holds over every window.
 *
 * The bounds are on observed checks.  A check that finds its page moved
 * (a migration entry, or an old entry mapping another page than its
 * prepare recorded) is unobserved: whether the kernel carried the accessed
 * bit across the move (6.1 does where swap entries have room for it;
 * 5.10 never) is more than a module can know.  Moving the cold set must
 * therefore leave unobserved checks behind, not "not accessed" ones.
 *
 * Automatic NUMA balancing is off while pages move (and put back after):
 * its scanner maps the child's memory PROT_NONE to take hinting faults, and
 * the cold set, never touched again, keeps those ptes from the first scan
 * on.  6.1's move_pages(2) looks each page up with follow_page(), whose
 * follow_page_pte() takes a PROT_NONE pte for no page unless FOLL_FORCE
 * (gup_can_follow_protnone()): -ENOENT in its status, the page stays.  On
 * 6.1 most of the cold set stopped moving a second or two into the moves
 * (47-80 % of its pages -ENOENT, in whole batches), and so did the checks
 * that find a page moved.  5.10 (whose follow_page() does not set
 * FOLL_NUMA) and 6.12 and later (folio_walk_start(), or no
 * FOLL_HONOR_NUMA_FAULT) move such pages; the balancing's own moves and
 * faults are no part of the test either.  The test bounds how much of the
 * cold set moved.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <linux/mempolicy.h>

#include "kselftest_harness.h"
#include "daptrace_sysfs.h"
#include "dt_child.h"
#include "dt_lru_gen.h"
#include "dt_cgroup.h"

#define CG		DT_CG_ROOT "/daptrace-lru-cold"
#define VMSTAT		"/proc/vmstat"
#define NUMAB		"/proc/sys/kernel/numa_balancing"
#define PAGE		4096UL
#define COLD_BYTES	(32UL << 20)
#define HOT_BYTES	(4UL << 20)
#define SAMPLE_MS	50	/* a sample: what reclaim may do inside one */
#define AGGR_MS		1000
#define TOUCH_MS	20
#define PERIOD_MS	50	/* of the reclaim and of the moves */
#define RECLAIM_BYTES	(128UL << 10)
#define MOVE_PAGES	512	/* per period, cycling through each set */
#define COLD_PLACED_MIN	0.9	/* of the cold set's moves; 6.1 with hinting: 0.2-0.53 */
#define WINDOWS		12
#define COLD_MAX	0.01
#define COLD_MIN_CHECKS	200	/* a region inside the cold set, most windows */
#define MIN_REGIONS	200	/* see FIXTURE_SETUP */
#define AGINGS		3
#define HOT_MIN		0.8
#define PASS_LOG	8192	/* passes logged: > the measurement's ~700 */

/*
 * The child's passes over the hot sets, in memory it shares with the test:
 * pass i (of @nr, in order) ran from start_ns to end_ns, CLOCK_MONOTONIC as
 * the snapshots' windows.
 */
struct pass_log {
	unsigned long long nr;
	struct {
		unsigned long long start_ns, end_ns;
	} p[PASS_LOG];
};

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* MPOL_MF_MOVE for move_pages(2), without libnuma in the static build. */
static long sys_move_pages(pid_t pid, unsigned long n, void **pages,
			   const int *nodes, int *status, int flags)
{
	return syscall(SYS_move_pages, pid, n, pages, nodes, status, flags);
}

static long long get_ll(const char *path)
{
	char buf[64];

	return dt_read_path(path, buf, sizeof(buf)) < 0 ? -1 : atoll(buf);
}

/*
 * @hot is the first hot set, @cold follows it, the second hot set follows
 * @cold.  Wait for @start, fault the sets in (charged to the memcg the child is in
 * by then), say so on @ready, then touch the hot set once per TOUCH_MS,
 * forever, logging each pass in @log; the cold set never again.
 */
static void child(volatile char *hot, volatile char *cold, struct pass_log *log,
		  int start, int ready)
{
	char c = 0;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (read(start, &c, 1) != 1)
		_exit(1);
	for (size_t off = 0; off < COLD_BYTES; off += PAGE)
		cold[off] = 1;
	for (size_t off = 0; off < HOT_BYTES; off += PAGE)
		hot[off] = hot[HOT_BYTES + COLD_BYTES + off] = 1;
	if (write(ready, &c, 1) != 1)
		_exit(1);
	for (unsigned long long i = 0;; i++) {
		unsigned long long t0 = now_ns();

		for (size_t off = 0; off < HOT_BYTES; off += PAGE) {
			hot[off]++;
			hot[HOT_BYTES + COLD_BYTES + off]++;
		}
		log->p[i % PASS_LOG].start_ns = t0;
		log->p[i % PASS_LOG].end_ns = now_ns();
		/* the pass before the count that shows it */
		__atomic_store_n(&log->nr, i + 1, __ATOMIC_RELEASE);
		dt_sleep_ms(TOUCH_MS);
	}
}

/* zram swap, as policy/reclaim.sh sets it up; 0 or why not. */
static const char *swap_on(bool *added)
{
	*added = false;
	if (!system("grep -q zram0 /proc/swaps"))
		return NULL;
	if (system("if [ -f /lib/modules/order ]; then while read -r m; do "
		   "grep -q \"^$m \" /proc/modules || insmod /lib/modules/$m.ko || exit 1; "
		   "done < /lib/modules/order; fi; [ -e /sys/block/zram0 ] && "
		   "echo 256M > /sys/block/zram0/disksize && "
		   "mkswap /dev/zram0 > /dev/null && swapon /dev/zram0"))
		return "no zram swap (zram.ko not in the initramfs or failed to load)";
	*added = true;
	return NULL;
}

static void swap_off(void)
{
	if (system("swapoff /dev/zram0 && echo 1 > /sys/block/zram0/reset"))
		fprintf(stderr, "# swapoff /dev/zram0 failed\n");
}

struct driver {
	pthread_t thread;
	volatile bool stop;
	pid_t pid;
	unsigned long hot, cold;	/* the second hot set follows cold */
	unsigned long rounds;	/* reclaim writes, or move_pages calls */
	unsigned long moved;	/* pages move_pages placed */
	/* per set (cold, hot, hot): pages asked to move, placed, -ENOENT */
	unsigned long tried[3], placed[3], enoent[3];
	bool age;		/* mover: age MGLRU once per lap of the cold set */
	unsigned long agings;
	int err;		/* the first errno that is not expected */
	unsigned long long cold_unobserved;	/* measure(): the cold set's */
};

/*
 * Reclaim RECLAIM_BYTES from the child's memcg per PERIOD_MS: with
 * memory.reclaim (5.19) if there is one, else by lowering memory.high
 * below the usage (the write reclaims down to it) and lifting it again.
 * EAGAIN from memory.reclaim (it reclaimed less) is no error.
 */
static void *reclaimer(void *arg)
{
	struct driver *d = arg;
	bool has_reclaim = !access(CG "/memory.reclaim", W_OK);
	char val[32];

	snprintf(val, sizeof(val), "%lu", RECLAIM_BYTES);
	while (!d->stop) {
		int ret;

		if (has_reclaim) {
			ret = dt_write_path(CG "/memory.reclaim", val);
			if (ret == -EAGAIN)
				ret = 0;
		} else {
			long long cur = get_ll(CG "/memory.current");

			snprintf(val, sizeof(val), "%lld",
				 cur > (long long)RECLAIM_BYTES ?
				 cur - (long long)RECLAIM_BYTES : 0);
			ret = cur < 0 ? -EIO : dt_write_path(CG "/memory.high", val);
			if (!ret)
				ret = dt_write_path(CG "/memory.high", "max");
		}
		if (ret && !d->err)
			d->err = -ret;
		d->rounds++;
		dt_sleep_ms(PERIOD_MS);
	}
	return NULL;
}

/*
 * Move MOVE_PAGES pages of each set per PERIOD_MS to the other node,
 * cycling through the sets: every page moves about every
 * COLD_BYTES / PAGE / MOVE_PAGES periods, node 0 -> 1 -> 0.  With @d->age,
 * MGLRU ages the memory once before each lap of the cold set, as it does
 * under any reclaim, so that a cold page moved again lies one generation
 * older than where the last move put it (the youngest or the second
 * youngest), and never reaches the oldest, which a forced aging moves.
 */
static void *mover(void *arg)
{
	struct driver *d = arg;
	void *pages[MOVE_PAGES];
	int nodes[MOVE_PAGES], status[MOVE_PAGES];
	unsigned long next[3] = { 0 }, lap[3] = { 0 };
	unsigned long size[3] = { COLD_BYTES, HOT_BYTES, HOT_BYTES };
	unsigned long base[3] = { d->cold, d->hot, d->cold + COLD_BYTES };

	while (!d->stop) {
		if (d->age && !next[0]) {
			int err = dt_lru_gen_age(&d->agings);

			if (err && !d->err)
				d->err = err;
		}
		for (int s = 0; s < 3; s++) {
			for (int i = 0; i < MOVE_PAGES; i++) {
				pages[i] = (void *)(base[s] + next[s]);
				nodes[i] = !(lap[s] & 1);
				next[s] += PAGE;
				if (next[s] == size[s]) {
					next[s] = 0;
					lap[s]++;
				}
			}
			/*
			 * > 0: that many pages stayed (a failed migration, a
			 * busy page), no error; their status says where.
			 */
			if (sys_move_pages(d->pid, MOVE_PAGES, pages, nodes,
					   status, MPOL_MF_MOVE) < 0) {
				if (!d->err)
					d->err = errno;
				continue;
			}
			for (int i = 0; i < MOVE_PAGES; i++) {
				d->moved += status[i] == nodes[i];
				d->placed[s] += status[i] == nodes[i];
				d->enoent[s] += status[i] == -ENOENT;
			}
			d->tried[s] += MOVE_PAGES;
		}
		d->rounds++;
		dt_sleep_ms(PERIOD_MS);
	}
	return NULL;
}

FIXTURE(lru_cold) {
	pid_t child;
	volatile char *hot, *cold;
	struct pass_log *log;
	char enabled[32];
	char numab[16];		/* NUMAB as found, if the test set it */
	bool swap_added, cgroup;
};

FIXTURE_VARIANT(lru_cold) {
	bool mglru;
};

FIXTURE_VARIANT_ADD(lru_cold, classic) {
	.mglru = false,
};

FIXTURE_VARIANT_ADD(lru_cold, mglru) {
	.mglru = true,
};

FIXTURE_SETUP(lru_cold)
{
	bool has_mglru = !access(LRU_GEN_ENABLED, F_OK);

	self->child = 0;
	self->log = MAP_FAILED;
	self->enabled[0] = self->numab[0] = 0;
	self->swap_added = self->cgroup = false;
	DT_SKIP_UNLESS_LOADED();
	if (variant->mglru && !has_mglru)
		SKIP(return, "no MGLRU in this kernel (%s missing)", LRU_GEN_ENABLED);
	if (has_mglru) {
		ASSERT_LT(0, dt_read_path(LRU_GEN_ENABLED, self->enabled,
					  sizeof(self->enabled)));
		ASSERT_EQ(0, dt_lru_gen_set(variant->mglru ? "y" : "n"))
			TH_LOG("switch MGLRU %s", variant->mglru ? "on" : "off");
	}
	ASSERT_EQ(0, dt_reset());
	/*
	 * Only regions wholly inside the cold set count as its checks, so
	 * some must lie there in every window, whatever the layout.  The
	 * monitored span keeps the gap between the data and the heap (the
	 * two larger gaps are cut out), and x86-64 places the heap up to
	 * 1 GiB past the data (arch_randomize_brk()): with 10 regions,
	 * merges up to a tenth of a span of 40 MiB to 1.1 GiB left the cold
	 * set inside no region in most windows of some boots.  A 200th is
	 * at most 5.6 MiB: 3 or more regions inside the cold set.
	 */
	ASSERT_EQ(0, dt_set_attrs(SAMPLE_MS * 1000, AGGR_MS * 1000,
				  AGGR_MS * 1000, MIN_REGIONS, 1000));
	/*
	 * Hot, cold, hot, in one mapping: the regions over the cold set do
	 * not merge with its neighbours, so some lie inside it.
	 */
	self->hot = mmap(NULL, 2 * HOT_BYTES + COLD_BYTES, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->hot);
	self->cold = self->hot + HOT_BYTES;
	self->log = mmap(NULL, sizeof(*self->log), PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->log);
	/* 4 KiB pages: reclaim and migration handle each of them. */
	ASSERT_EQ(0, madvise((void *)self->hot, 2 * HOT_BYTES + COLD_BYTES,
			     MADV_NOHUGEPAGE));
}

FIXTURE_TEARDOWN(lru_cold)
{
	dt_reset();
	if (self->child > 0)
		dt_reap(self->child);
	if (self->log != MAP_FAILED)
		munmap(self->log, sizeof(*self->log));
	if (self->cgroup)
		rmdir(CG);
	if (self->swap_added)
		swap_off();
	if (self->enabled[0] && dt_lru_gen_set(self->enabled))
		TH_LOG("could not restore %s", LRU_GEN_ENABLED);
	if (self->numab[0] && dt_write_path(NUMAB, self->numab))
		TH_LOG("could not restore %s", NUMAB);
}

/*
 * Start the child, in the test's memcg if @cg, and monitor it once its
 * memory is in.
 */
static void spawn(struct __test_metadata *_metadata,
		  FIXTURE_DATA(lru_cold) *self, bool cg)
{
	int start[2], ready[2];
	char c = 0, pid[16];

	ASSERT_EQ(0, pipe(start));
	ASSERT_EQ(0, pipe(ready));
	self->child = fork();
	ASSERT_LE(0, self->child);
	if (self->child == 0) {
		close(start[1]);
		close(ready[0]);
		child(self->hot, self->cold, self->log, start[0], ready[1]);
	}
	close(start[0]);
	close(ready[1]);
	if (cg) {
		snprintf(pid, sizeof(pid), "%d", self->child);
		ASSERT_EQ(0, dt_write_path(CG "/cgroup.procs", pid));
	}
	ASSERT_EQ(1, write(start[1], &c, 1));
	ASSERT_EQ(1, read(ready[0], &c, 1)) TH_LOG("the child set up its memory");
	close(start[1]);
	close(ready[0]);
	ASSERT_EQ(0, dt_add_target(self->child));
}

/* What a window said of the hot sets, kept until the child's log is in. */
struct hot_windows {
	unsigned int nr;
	struct {
		unsigned long long start_ns, end_ns;
		unsigned long long checks, unobserved, accesses;
	} w[WINDOWS];
};

static void keep_hot(const struct daptrace_snap_hdr *sh, const struct dt_tally *w,
		     unsigned int n, void *arg)
{
	struct hot_windows *h = arg;

	(void)n;
	if (h->nr == WINDOWS)
		return;
	h->w[h->nr].start_ns = sh->start_ns;
	h->w[h->nr].end_ns = sh->end_ns;
	h->w[h->nr].checks = w[1].checks + w[2].checks;
	h->w[h->nr].unobserved = w[1].unobserved + w[2].unobserved;
	h->w[h->nr].accesses = w[1].accesses + w[2].accesses;
	h->nr++;
}

/*
 * Was every hot page touched at least once per SAMPLE_MS in [@lo, @hi]?
 * Between a page's touch in pass i and in pass i + 1 lie at most end of
 * i + 1 - start of i, so: passes from the last that ended before @lo to
 * one that ended at @hi or later, each ending within SAMPLE_MS of the
 * previous one's start.
 */
static bool touched_throughout(const struct pass_log *log, unsigned long long lo,
			       unsigned long long hi)
{
	unsigned long long nr = __atomic_load_n(&log->nr, __ATOMIC_ACQUIRE);
	unsigned long long first = nr > PASS_LOG ? nr - PASS_LOG : 0, i;

	for (i = first; i < nr && log->p[i % PASS_LOG].end_ns < lo; i++)
		;
	if (i == nr || i == first)
		return false;	/* none around @lo: not touched, or not logged */
	for (i--; i + 1 < nr && log->p[i % PASS_LOG].end_ns < hi; i++)
		if (log->p[(i + 1) % PASS_LOG].end_ns - log->p[i % PASS_LOG].start_ns >
		    SAMPLE_MS * 1000000ULL)
			return false;
	return log->p[i % PASS_LOG].end_ns >= hi;
}

/*
 * Tally both sets over WINDOWS while @fn drives the kernel; report and
 * bound both directions: the cold set over every window, the hot sets over
 * those in which the child touched them throughout.
 */
static void measure(struct __test_metadata *_metadata,
		    FIXTURE_DATA(lru_cold) *self, void *(*fn)(void *),
		    const char *what, struct driver *d)
{
	unsigned long cold_lo = (unsigned long)self->cold;
	struct dt_tally t[3] = {
		{ .lo = cold_lo, .hi = cold_lo + COLD_BYTES },
		{ .lo = cold_lo - HOT_BYTES, .hi = cold_lo },
		{ .lo = cold_lo + COLD_BYTES, .hi = cold_lo + COLD_BYTES + HOT_BYTES },
	};
	long long out0 = dt_read_key(VMSTAT, "pswpout");
	long long in0 = dt_read_key(VMSTAT, "pswpin");
	unsigned long long hot_checks = 0, hot_unobserved = 0, hot_accesses = 0;
	struct hot_windows hw = { 0 };
	unsigned int hot_windows = 0;
	unsigned long long all;
	double cold, hot;
	int seen;

	d->pid = self->child;
	d->cold = t[0].lo;
	d->hot = t[1].lo;
	ASSERT_EQ(0, pthread_create(&d->thread, NULL, fn, d));
	seen = dt_tally_ranges_each(self->child, t, 3, 2, WINDOWS, keep_hot, &hw);
	d->stop = true;
	pthread_join(d->thread, NULL);
	/* the pass running at the last window's end has ended by now */
	dt_sleep_ms(SAMPLE_MS);
	for (unsigned int i = 0; i < hw.nr; i++) {
		if (!touched_throughout(self->log, hw.w[i].start_ns, hw.w[i].end_ns))
			continue;
		hot_windows++;
		hot_checks += hw.w[i].checks;
		hot_unobserved += hw.w[i].unobserved;
		hot_accesses += hw.w[i].accesses;
	}
	TH_LOG("%s: %d windows; %lu rounds, %lu pages moved, %lu agings, "
	       "first error %d; pswpout +%lld, pswpin +%lld",
	       what, seen, d->rounds, d->moved, d->agings, d->err,
	       dt_read_key(VMSTAT, "pswpout") - out0, dt_read_key(VMSTAT, "pswpin") - in0);
	for (int s = 0; fn == mover && s < 3; s++)
		TH_LOG("%s: %s set: %lu pages asked to move, %lu placed, %lu not "
		       "found (-ENOENT)", what, s ? (s == 1 ? "first hot" : "second hot") :
		       "cold", d->tried[s], d->placed[s], d->enoent[s]);
	TH_LOG("%s: cold set: %llu checks, %llu accesses, %llu unobserved",
	       what, t[0].checks, t[0].accesses, t[0].unobserved);
	TH_LOG("%s: hot sets: %llu and %llu checks, %llu and %llu accesses, "
	       "%llu and %llu unobserved", what, t[1].checks, t[2].checks,
	       t[1].accesses, t[2].accesses, t[1].unobserved, t[2].unobserved);
	TH_LOG("%s: cold set: %.0f%% of its bytes in regions with an access",
	       what, 100 * t[0].hot_seen / (t[0].hot_bytes ? t[0].hot_bytes : 1));
	d->cold_unobserved = t[0].unobserved;
	ASSERT_EQ(WINDOWS, seen);
	ASSERT_EQ(0, d->err) TH_LOG("%s: %s", what, strerror(d->err));
	ASSERT_LE(COLD_MIN_CHECKS, t[0].checks - t[0].unobserved)
		TH_LOG("%s: observed checks of regions inside the cold set", what);
	cold = (double)t[0].accesses / (t[0].checks - t[0].unobserved);
	TH_LOG("%s: cold set read accessed in %.4f of its observed checks (at most %.2f)",
	       what, cold, COLD_MAX);
	EXPECT_GE(COLD_MAX, cold) TH_LOG("%s: the cold set reads cold", what);
	TH_LOG("%s: the child touched its hot sets throughout %u of the %u windows",
	       what, hot_windows, hw.nr);
	if (!hot_windows)
		SKIP(return, "%s: the hot sets were hot in no window (the child's passes "
		     "were more than %d ms apart: swap-ins, or waits for pages being "
		     "moved, stalled it)", what, SAMPLE_MS);
	ASSERT_LT(0, hot_checks - hot_unobserved);
	hot = (double)hot_accesses / (hot_checks - hot_unobserved);
	all = t[1].checks - t[1].unobserved + t[2].checks - t[2].unobserved;
	TH_LOG("%s: hot sets read accessed in %.3f of their observed checks in those "
	       "windows (at least %.2f; %.3f over all windows)", what, hot, HOT_MIN,
	       all ? (double)(t[1].accesses + t[2].accesses) / all : 0);
	EXPECT_LE(HOT_MIN, hot) TH_LOG("%s: the hot set reads hot", what);
}

TEST_F_TIMEOUT(lru_cold, reclaim, 180)
{
	struct driver d = { .stop = false };
	const char *why;

	why = swap_on(&self->swap_added);
	if (why)
		SKIP(return, "%s", why);
	why = dt_cgroup_memory(CG);
	if (why)
		SKIP(return, "%s", why);
	self->cgroup = true;
	spawn(_metadata, self, true);
	measure(_metadata, self, reclaimer, "memcg reclaim", &d);
	EXPECT_LT(0, dt_read_key(VMSTAT, "pswpout")) TH_LOG("reclaim swapped");
}

TEST_F_TIMEOUT(lru_cold, migration, 180)
{
	struct driver d = { .stop = false, .age = variant->mglru };
	char numab[16];
	long long hinted;
	int status = -1;
	void *page = (void *)self->cold;

	if (access("/sys/devices/system/node/node1", F_OK))
		SKIP(return, "no second NUMA node to move pages to");
	/*
	 * No NUMA hinting ptes, which 6.1's move_pages() cannot move (the
	 * comment at the top); none before the child's memory is in either.
	 * No NUMAB: no NUMA balancing in this kernel.
	 */
	if (dt_read_path(NUMAB, numab, sizeof(numab)) > 0) {
		ASSERT_EQ(0, dt_write_path(NUMAB, "0")) TH_LOG("NUMA balancing off");
		strcpy(self->numab, numab);
	}
	hinted = dt_read_key(VMSTAT, "numa_pte_updates");
	spawn(_metadata, self, false);
	/*
	 * MGLRU: age the memory, as any reclaim does, so that the cold set
	 * sits in older generations than the hot one (a folio's first
	 * aging takes the accessed bit of its fault).
	 */
	if (variant->mglru) {
		unsigned long agings = 0;

		for (int i = 0; i < AGINGS; i++)
			ASSERT_EQ(0, dt_lru_gen_age(&agings)) TH_LOG("aging");
		ASSERT_LT(0, agings);
	}
	/* Where the first cold page is. */
	ASSERT_EQ(0, sys_move_pages(self->child, 1, &page, NULL, &status, 0));
	ASSERT_EQ(0, status) TH_LOG("the cold set starts on node 0");
	measure(_metadata, self, mover, "move_pages", &d);
	TH_LOG("move_pages: NUMA balancing %s, numa_pte_updates +%lld",
	       self->numab[0] ? "off" : "absent",
	       hinted < 0 ? 0 : dt_read_key(VMSTAT, "numa_pte_updates") - hinted);
	EXPECT_LT(0, d.moved) TH_LOG("pages moved between the nodes");
	ASSERT_LT(0, d.tried[0]);
	EXPECT_LE(COLD_PLACED_MIN, (double)d.placed[0] / d.tried[0])
		TH_LOG("the cold set moved: %lu of %lu pages placed", d.placed[0],
		       d.tried[0]);
	EXPECT_LT(0, d.cold_unobserved)
		TH_LOG("checks of moved cold pages are unobserved, not 'not accessed'");
}

TEST_HARNESS_MAIN
