// SPDX-License-Identifier: GPL-2.0-only
/*
 * Regret bookkeeping on the host: the engine acts on a simulated target
 * whose pages are mapped or not (pageout) or on a node (migrate); the test
 * brings pages back at chosen times and checks what each window counted,
 * per scheme and per cgroup, and what it could not check.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "policy.h"
#include "policy_fixture.h"

#define KiB	4096ULL		/* one simulated page */
#define NPAGES	1024
#define MS	1000000LL	/* ns */
#define SEC	(1000 * MS)

/* page i of target 42 is at i * KiB; 43's pages are the same */
static int present[2][NPAGES];	/* pageout: mapped */
static int node_of[2][NPAGES];	/* migrate: node, -1 not present */
static int probe_fails;
static int nr_probes;

static int ti_of(pid_t pid)
{
	return pid == 43;
}

static uint64_t fake_act(struct pol_engine *e, const struct pol_scheme *s,
			 struct pol_target *t, uint64_t start, uint64_t len, int *err)
{
	int ti = ti_of(t->pid);

	(void)e;
	*err = 0;
	for (uint64_t p = start / KiB; p < (start + len) / KiB && p < NPAGES; p++) {
		if (s->action == POL_PAGEOUT)
			present[ti][p] = 0;
		else if (node_of[ti][p] >= 0)
			node_of[ti][p] = s->node;
	}
	return len;
}

static int fake_probe(struct pol_engine *e, struct pol_target *t, const struct pol_scheme *s,
		      uint64_t start, uint32_t npages, uint64_t *gone, uint64_t *here)
{
	int ti = ti_of(t->pid);

	(void)e;
	nr_probes++;
	if (probe_fails)
		return -ESRCH;
	for (uint32_t i = 0; i < npages; i++) {
		uint64_t p = start / KiB + i;
		int g, h;

		if (s->action == POL_PAGEOUT) {
			h = present[ti][p];
			g = !h;
		} else {
			g = node_of[ti][p] == s->node;
			h = node_of[ti][p] >= 0 && !g;
		}
		if (g)
			gone[i / 64] |= 1ULL << (i % 64);
		if (h)
			here[i / 64] |= 1ULL << (i % 64);
	}
	return 0;
}

static int fake_cgroup(pid_t pid, char *buf, size_t len)
{
	snprintf(buf, len, pid == 43 ? "/b" : "/a");
	return 0;
}

static int fake_maps(struct maps *m)
{
	if (m->e)
		return 0;
	m->e = calloc(1, sizeof(*m->e));
	m->e[0] = (struct maps_entry){ .start = 0, .end = NPAGES * KiB,
				       .label = strdup("[heap]") };
	m->n = 1;
	return 0;
}

static struct daptrace_snapshot snap;

/* every page of both targets idle (so the schemes act on all of it) */
static void snap_idle(int nr_targets)
{
	memset(&snap, 0, sizeof(snap));
	snap.nr_samples = 20;
	snap.aggr_us = 100000;
	snap.nr_regions = (uint32_t)nr_targets;
	snap.regions = regs;
	for (int i = 0; i < 2; i++)
		regs[i] = (struct daptrace_region){ .start = 0, .end = NPAGES * KiB,
			.nr_accesses = 0, .age = 100, .pid = 42 + i };
}

/* Every page of @nr_targets targets idle, shown to @e at @t: schemes act on all. */
static void act_on_idle(struct pol_engine *e, int nr_targets, int64_t t)
{
	snap_idle(nr_targets);
	pol_engine_apply(e, &snap, t);
}

static void engine_of(struct pol_engine *e, struct pol_scheme *s, int n, int nr_targets)
{
	pid_t pids[2] = { 42, 43 };

	pol_engine_init(e, s, n, pids, nr_targets);
	e->act = fake_act;
	e->maps_refresh = fake_maps;
	e->probe = fake_probe;
	e->cgroup_of = fake_cgroup;
	e->page_size = KiB;
	for (int t = 0; t < 2; t++)
		for (int p = 0; p < NPAGES; p++) {
			present[t][p] = 1;
			node_of[t][p] = 0;
		}
	probe_fails = 0;
	nr_probes = 0;
}

/* A snapshot with nothing to do (all accessed): only the windows move. */
static void tick(struct pol_engine *e, int64_t t)
{
	struct daptrace_snapshot quiet = snap;
	struct daptrace_region r[2] = { regs[0], regs[1] };

	r[0].nr_accesses = r[1].nr_accesses = 20;
	quiet.regions = r;
	pol_engine_apply(e, &quiet, t);
}

static const struct pol_regret *find(const struct pol_engine *e, int scheme, const char *cg)
{
	for (int i = 0; i < e->nr_regret; i++)
		if (e->regret[i].scheme == scheme && !strcmp(e->regret[i].cgroup, cg))
			return &e->regret[i];
	return NULL;
}

/*
 * Pageout of 1024 pages, 100 of which were not mapped (not taken away by
 * the call): acted = 924 pages.  10 come back at +0.5 s, 20 more at +5 s,
 * 40 more at +30 s; one of the first 10 goes out again before the 10 s
 * check (sticky: still counted).  Windows close at their edges only.
 */
TEST(pageout_windows)
{
	struct pol_scheme s = parsed("pageout freq=0-0 reapply=0s");
	const struct pol_regret *r;
	struct pol_engine e;

	engine_of(&e, &s, 1, 1);
	for (int p = 900; p < 1000; p++)
		present[0][p] = 0;
	act_on_idle(&e, 1, 1 * SEC);
	r = find(&e, 0, "/a");
	ASSERT_NE(NULL, r);
	EXPECT_EQ(924 * KiB, r->acted);
	EXPECT_EQ(0, r->checked[0]);

	for (int p = 0; p < 10; p++)
		present[0][p] = 1;
	tick(&e, 1 * SEC + 500 * MS);
	EXPECT_EQ(0, r->checked[0]);		/* the 1 s window is still open */
	tick(&e, 2 * SEC + 50 * MS);
	EXPECT_EQ(924 * KiB, r->checked[0]);
	EXPECT_EQ(10 * KiB, r->back[0]);
	EXPECT_EQ(0, r->checked[1]);

	for (int p = 10; p < 30; p++)
		present[0][p] = 1;
	present[0][0] = 0;			/* out again: still came back once */
	/* back in a page that was not taken away by the call: not counted */
	present[0][950] = 1;
	tick(&e, 11 * SEC + 50 * MS);
	EXPECT_EQ(924 * KiB, r->checked[1]);
	EXPECT_EQ(30 * KiB, r->back[1]);

	for (int p = 30; p < 70; p++)
		present[0][p] = 1;
	tick(&e, 40 * SEC);
	EXPECT_EQ(0, r->checked[2]);
	tick(&e, 61 * SEC + 50 * MS);
	EXPECT_EQ(924 * KiB, r->checked[2]);
	EXPECT_EQ(70 * KiB, r->back[2]);
	for (int w = 0; w < POL_REGRET_WINDOWS; w++)
		EXPECT_EQ(0, r->unknown[w]);
	EXPECT_EQ(0, e.nr_rent);		/* every window closed: forgotten */
	EXPECT_EQ(0, e.regret_pages);
	engine_done(&e, &s, 1);
}

/* Once every page taken is back, later windows know it without a probe. */
TEST(all_back_needs_no_more_probes)
{
	struct pol_scheme s = parsed("pageout freq=0-0 reapply=0s");
	const struct pol_regret *r;
	struct pol_engine e;
	int probes;

	engine_of(&e, &s, 1, 1);
	e.act_chunk = UINT64_MAX;		/* one call, one piece */
	act_on_idle(&e, 1, 1 * SEC);
	EXPECT_EQ(2, nr_probes);		/* before and after the call */
	for (int p = 0; p < NPAGES; p++)
		present[0][p] = 1;
	tick(&e, 2 * SEC + 50 * MS);
	probes = nr_probes;
	EXPECT_EQ(3, probes);
	tick(&e, 11 * SEC + 50 * MS);
	tick(&e, 61 * SEC + 50 * MS);
	EXPECT_EQ(probes, nr_probes);
	r = find(&e, 0, "/a");
	ASSERT_NE(NULL, r);
	for (int w = 0; w < POL_REGRET_WINDOWS; w++) {
		EXPECT_EQ(NPAGES * KiB, r->checked[w]);
		EXPECT_EQ(NPAGES * KiB, r->back[w]);
	}
	engine_done(&e, &s, 1);
}

/*
 * A window whose check comes more than half a window late is unknown, not
 * guessed; a target that leaves makes the open windows unknown; a probe
 * that fails after the call makes the call unknown (unknown_calls).
 */
TEST(late_gone_and_failed_are_unknown)
{
	struct pol_scheme s = parsed("pageout freq=0-0 reapply=0s");
	const struct pol_regret *r;
	struct pol_engine e;

	engine_of(&e, &s, 1, 1);
	act_on_idle(&e, 1, 1 * SEC);
	r = find(&e, 0, "/a");
	ASSERT_NE(NULL, r);
	EXPECT_EQ(NPAGES * KiB, r->acted);
	/* 1 s edge at 2 s; first look at 2.6 s: more than 0.5 s late */
	tick(&e, 2 * SEC + 600 * MS);
	EXPECT_EQ(0, r->checked[0]);
	EXPECT_EQ(NPAGES * KiB, r->unknown[0]);
	tick(&e, 11 * SEC + 50 * MS);
	EXPECT_EQ(NPAGES * KiB, r->checked[1]);
	pol_engine_remove_target(&e, 42);
	EXPECT_EQ(NPAGES * KiB, r->unknown[2]);
	EXPECT_EQ(0, r->checked[2]);
	EXPECT_EQ(0, e.nr_rent);

	/* a new target, whose probe fails */
	ASSERT_LE(0, pol_engine_add_target(&e, 43));
	probe_fails = 1;
	snap_idle(2);
	regs[0].pid = 43;
	snap.nr_regions = 1;
	pol_engine_apply(&e, &snap, 70 * SEC);
	r = find(&e, 0, "/b");
	ASSERT_NE(NULL, r);
	EXPECT_EQ(2, r->unknown_calls);		/* two calls of 2 MiB */
	EXPECT_EQ(0, r->acted);
	EXPECT_EQ(NPAGES * KiB, s.st.sz_applied - NPAGES * KiB);	/* still applied */
	engine_done(&e, &s, 1);
}

/*
 * Per scheme and per cgroup: two targets in two cgroups, a pageout scheme
 * and a migrate_cold one, each counted apart; a page the policy acts on
 * again is checked just before (it came back in between).
 */
TEST(per_scheme_and_cgroup)
{
	struct pol_scheme s[2] = {
		parsed("pageout freq=0-0 addr=0-0x200000 reapply=0s"),
		parsed("migrate_cold 1 freq=0-0 addr=0x200000-0x400000 reapply=0s"),
	};
	const struct pol_regret *a0, *b0, *a1;
	struct pol_engine e;

	engine_of(&e, s, 2, 2);
	act_on_idle(&e, 2, 1 * SEC);
	a0 = find(&e, 0, "/a");
	b0 = find(&e, 0, "/b");
	a1 = find(&e, 1, "/a");
	ASSERT_NE(NULL, a0);
	ASSERT_NE(NULL, b0);
	ASSERT_NE(NULL, a1);
	EXPECT_EQ(512 * KiB, a0->acted);
	EXPECT_EQ(512 * KiB, b0->acted);
	EXPECT_EQ(512 * KiB, a1->acted);
	/* target 42: 5 pages back in memory, 7 migrated back to node 0 */
	for (int p = 0; p < 5; p++)
		present[0][p] = 1;
	for (int p = 512; p < 519; p++)
		node_of[0][p] = 0;
	/* target 43: 3 pages back */
	for (int p = 100; p < 103; p++)
		present[1][p] = 1;
	/*
	 * Accessed regions make identity forget, so both schemes act again at
	 * +0.3 s, on the pages that were back too (each checked first).
	 */
	tick(&e, 1 * SEC + 200 * MS);
	pol_engine_apply(&e, &snap, 1 * SEC + 300 * MS);
	EXPECT_EQ(0, present[1][100]);
	tick(&e, 2 * SEC + 50 * MS);
	EXPECT_EQ(512 * KiB, a0->checked[0]);
	EXPECT_EQ(5 * KiB, a0->back[0]);
	EXPECT_EQ(7 * KiB, a1->back[0]);
	EXPECT_EQ(3 * KiB, b0->back[0]);
	EXPECT_EQ(512 * KiB, b0->checked[0]);
	/* the second calls took the pages that were back again: counted twice */
	EXPECT_EQ(515 * KiB, b0->acted);
	EXPECT_EQ(517 * KiB, a0->acted);
	EXPECT_EQ(519 * KiB, a1->acted);
	ASSERT_NE(NULL, find(&e, 1, "/b"));
	EXPECT_EQ(512 * KiB, find(&e, 1, "/b")->acted);
	engine_done(&e, s, 2);
}

/* Actions without a per-page outcome are not followed, and nothing is probed. */
TEST(unobserved_actions_are_not_claimed)
{
	struct pol_scheme s = parsed("cold freq=0-0 reapply=0s");
	struct pol_engine e;

	engine_of(&e, &s, 1, 1);
	act_on_idle(&e, 1, 1 * SEC);
	EXPECT_EQ(NPAGES * KiB, s.st.sz_applied);
	EXPECT_EQ(0, e.nr_regret);
	EXPECT_EQ(0, nr_probes);
	EXPECT_EQ(POL_REGRET_NONE, pol_regret_how_of(POL_COLD));
	EXPECT_EQ(POL_REGRET_RESIDENT, pol_regret_how_of(POL_PAGEOUT));
	EXPECT_EQ(POL_REGRET_NODE, pol_regret_how_of(POL_MIGRATE_HOT));
	engine_done(&e, &s, 1);
}

/*
 * cgroup=: a scheme acts only on the targets of its cgroup or below (the
 * path as /proc/PID/cgroup names it, by whole components); a copy made
 * with pol_scheme_dup() owns its strings.
 */
TEST(scheme_cgroup_filter_and_dup)
{
	struct pol_scheme s[3] = {
		parsed("stat freq=0-0 cgroup=/b"),
		parsed("stat freq=0-0 cgroup=/"),
		parsed("stat freq=0-0 cgroup=/a/x"),
	};
	struct pol_scheme d;
	struct pol_engine e;

	engine_of(&e, s, 3, 2);
	act_on_idle(&e, 2, 1 * SEC);
	EXPECT_EQ(NPAGES * KiB, s[0].st.sz_applied);		/* 43 only */
	EXPECT_EQ(2 * NPAGES * KiB, s[1].st.sz_applied);	/* both */
	EXPECT_EQ(0, s[2].st.sz_applied);			/* neither */
	EXPECT_TRUE(pol_cgroup_within("/a", "/a/b"));
	EXPECT_FALSE(pol_cgroup_within("/a", "/ab"));
	EXPECT_TRUE(pol_cgroup_within("/", "/ab"));
	ASSERT_EQ(0, pol_scheme_dup(&d, &s[0]));
	EXPECT_STREQ("/b", d.cgroup);
	EXPECT_NE(s[0].cgroup, d.cgroup);
	EXPECT_EQ(0, d.st.sz_applied);
	engine_done(&e, s, 3);
	EXPECT_STREQ("/b", d.cgroup);		/* its own copy */
	pol_scheme_free(&d);
}

/*
 * Identity and idle clocks are per target: two processes (forked workers,
 * two containers of one image) use the same addresses.  One's accesses
 * must neither make the other's idle memory "accessed" (it would never be
 * reclaimed) nor make its acted-on ranges new decisions (they would be
 * paged out again and again while idle).
 */
TEST(identity_and_idle_are_per_target)
{
	struct pol_scheme s[2] = {
		parsed("pageout freq=0-0 reapply=0s addr=0-0x200000"),
		parsed("pageout freq=0-0 idle=1s reapply=0s addr=0x200000-0x400000"),
	};
	uint64_t before;
	struct pol_engine e;

	engine_of(&e, s, 2, 2);
	snap_idle(2);
	/* first window: scheme 0 acts on both targets' [0, 2M) */
	pol_engine_apply(&e, &snap, 1 * SEC);
	EXPECT_EQ(2 * 512 * KiB, s[0].st.sz_applied);
	/* then 43 is busy everywhere, 42 stays idle, for 2 s */
	regs[1].nr_accesses = 20;
	before = s[0].st.sz_applied;
	for (int64_t t = 1 * SEC + 100 * MS; t <= 3 * SEC; t += 100 * MS)
		pol_engine_apply(&e, &snap, t);
	/* 42's [0, 2M) was acted on and not accessed since: not again */
	EXPECT_EQ(before, s[0].st.sz_applied);
	/* 42's [2M, 4M) idle 2 s by its own accesses: paged out; 43's not */
	EXPECT_EQ(512 * KiB, s[1].st.sz_applied);
	EXPECT_EQ(0, present[0][600]);
	EXPECT_EQ(1, present[1][600]);
	engine_done(&e, s, 2);
}

static int self_in_a(pid_t pid, char *buf, size_t len)
{
	snprintf(buf, len, pid == getpid() ? "/a" : "/b");
	return 0;
}

/*
 * A scheme with cgroup= reads its rss and refault goals from the
 * processes of its cgroup only (one goal per cgroup): here this process
 * is in /a, its parent in /b.
 */
TEST(goals_count_the_scheme_cgroup_only)
{
	struct pol_scheme s[2] = {
		parsed("pageout quota=1M/1s goal=rss:1G cgroup=/a"),
		parsed("pageout quota=1M/1s goal=rss:1G"),
	};
	pid_t pids[2] = { getpid(), getppid() };
	uint64_t self_rss, parent_rss;
	struct pol_engine e;
	double v[2];

	ASSERT_EQ(0, pol_pid_rss(pids[0], &self_rss));
	ASSERT_EQ(0, pol_pid_rss(pids[1], &parent_rss));
	pol_engine_init(&e, s, 2, pids, 2);
	e.cgroup_of = self_in_a;
	ASSERT_EQ(0, pol_goal_read(&e, &s[0].goals[0], &v[0]));
	ASSERT_EQ(0, pol_goal_read(&e, &s[1].goals[0], &v[1]));
	/* the parent's rss is in the unfiltered sum only (rss moves a little) */
	EXPECT_LT(v[0], (double)self_rss * 1.5 + 1048576);
	EXPECT_GT(v[1], v[0] + (double)parent_rss / 2);
	engine_done(&e, s, 2);
}

static int64_t mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * SEC + ts.tv_nsec;
}

static size_t not_resident(const uint8_t *base, size_t pages, size_t psz, unsigned char *vec)
{
	size_t n = 0;

	if (mincore((void *)base, pages * psz, vec))
		return SIZE_MAX;
	for (size_t i = 0; i < pages; i++)
		n += !(vec[i] & 1);
	return n;
}

/*
 * The real probe and the real call on this process's own clean file pages
 * (no swap needed): what the engine says MADV_PAGEOUT took away and what
 * came back must be exactly what mincore(2) says.  MADV_RANDOM keeps the
 * kernel from reading neighbours ahead into the page cache (resident for
 * mincore, but not mapped).
 */
TEST(real_probe_matches_mincore)
{
	enum { PAGES = 256 };
	size_t psz = (size_t)sysconf(_SC_PAGESIZE), out, back = 0;
	char path[] = "/var/tmp/daptrace-regret-XXXXXX";
	struct pol_scheme sc = parsed("pageout freq=0-0 reapply=0s");
	static unsigned char vec[PAGES], buf[1 << 16];
	const struct pol_regret *r;
	struct daptrace_region reg;
	struct pol_engine e;
	volatile uint8_t sum = 0;
	pid_t self = getpid();
	int64_t t0;
	uint8_t *m;
	int fd = mkstemp(path);

	ASSERT_LE(0, fd);
	unlink(path);
	memset(buf, 0x5a, sizeof(buf));
	for (size_t off = 0; off < PAGES * psz; off += sizeof(buf))
		ASSERT_EQ((ssize_t)sizeof(buf), write(fd, buf, sizeof(buf)));
	ASSERT_EQ(0, fsync(fd));
	/*
	 * Out of the page cache, to be read back by the faults: pages the
	 * write()s left cached were unmapped by MADV_PAGEOUT but sometimes not
	 * freed (the last 16 of them, in 9 runs of 20), which mincore counts
	 * as resident and pagemap as not mapped (docs/policy.md, "Regret").
	 */
	ASSERT_EQ(0, posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED));
	m = mmap(NULL, PAGES * psz, PROT_READ, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, m);
	ASSERT_EQ(0, madvise(m, PAGES * psz, MADV_RANDOM));
	for (size_t i = 0; i < PAGES; i++)
		sum += m[i * psz];
	ASSERT_EQ(0, not_resident(m, PAGES, psz, vec));

	pol_engine_init(&e, &sc, 1, &self, 1);
	if (e.t[0].pidfd < 0)
		SKIP(goto out, "pidfd_open: %s", strerror(-e.t[0].pidfd));
	reg = (struct daptrace_region){ .start = (uintptr_t)m, .end = (uintptr_t)m + PAGES * psz,
					.age = 100, .pid = self };
	memset(&snap, 0, sizeof(snap));
	snap.nr_samples = 20;
	snap.aggr_us = 100000;
	snap.nr_regions = 1;
	snap.regions = &reg;
	t0 = mono();
	pol_engine_apply(&e, &snap, t0);
	if (sc.st.errs[POL_EPERM] || sc.st.errs[POL_EOTHER])
		SKIP(goto out, "process_madvise(MADV_PAGEOUT) on itself failed (errno %d)",
		     sc.st.other_errno);
	out = not_resident(m, PAGES, psz, vec);
	if (!out)
		SKIP(goto out, "MADV_PAGEOUT took no clean file page here");
	r = find(&e, 0, e.nr_regret ? e.regret[0].cgroup : "");
	ASSERT_NE(NULL, r);
	EXPECT_EQ(out * psz, r->acted) TH_LOG("mincore: %zu pages out", out);
	/* read every 3rd page again; count what mincore says was out just before */
	for (size_t i = 0; i < PAGES; i += 3) {
		back += !(vec[i] & 1);
		sum += m[i * psz];
	}
	/* the 1 s window closes; the 10 s one is left open */
	tick(&e, mono() + 1 * SEC + 50 * MS);
	EXPECT_EQ(out * psz, r->checked[0]);
	EXPECT_EQ(back * psz, r->back[0]);
	EXPECT_EQ(out - back, not_resident(m, PAGES, psz, vec));
	EXPECT_EQ(0, r->unknown[0]);
	EXPECT_EQ(0, r->checked[1]);
out:
	engine_done(&e, &sc, 1);
	munmap(m, PAGES * psz);
	close(fd);
}

TEST_HARNESS_MAIN
