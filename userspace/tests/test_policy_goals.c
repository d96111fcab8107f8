// SPDX-License-Identifier: GPL-2.0-only
/*
 * Quota goals on the host: the goal= grammar (table), the checks made
 * before anything starts against a fake /proc and /sys (PSI off, a cgroup
 * without memory.pressure, the targets' common cgroup), and the tuner
 * against simulated plants: it converges and holds without ringing, a goal
 * out of reach leaves it at a bound without winding up, a metric that
 * cannot be read is counted and winds the action down.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "policy.h"
#include "policy_fixture.h"
#include "policy/policy_record.h"
#include "common/recfile.h"

#define SEC 1000000000LL

static const struct {
	const char *spec;
	enum pol_goal_metric metric;
	enum pol_goal_src src;
	double target;
	int direction;
} goal_cases[] = {
	{ "pageout quota=64M/1s goal=psi:2ms", POL_GOAL_PSI, POL_SRC_SYSTEM, 2000, 1 },
	/* DAMOS's unit, µs per window; a percent is of the window */
	{ "pageout quota=64M/2s goal=psi:0.1%", POL_GOAL_PSI, POL_SRC_SYSTEM, 2000, 1 },
	{ "cold quota=1M/1s goal=psi@targets:1%", POL_GOAL_PSI, POL_SRC_TARGETS, 10000, 1 },
	{ "pageout quota=1M/1s goal=psi@/app.slice:5ms", POL_GOAL_PSI, POL_SRC_CGROUP,
	  5000, 1 },
	{ "pageout quota=1M/1s goal=free:10%", POL_GOAL_FREE, POL_SRC_SYSTEM, 10, 1 },
	{ "pageout quota=1M/1s goal=used@node1:99.5%", POL_GOAL_USED, POL_SRC_NODE, 99.5,
	  -1 },
	{ "pageout quota=1M/1s goal=rss:512M", POL_GOAL_RSS, POL_SRC_TARGETS, 512 * MiB, -1 },
	{ "pageout quota=1M/1s goal=refault:100", POL_GOAL_REFAULT, POL_SRC_TARGETS, 100, 1 },
	{ "pageout quota=1M/1s goal=memcg@targets:1G", POL_GOAL_MEMCG, POL_SRC_TARGETS,
	  1024 * MiB, -1 },
	{ "willneed quota=1M/1s goal=rss:1G", POL_GOAL_RSS, POL_SRC_TARGETS, 1024 * MiB, 1 },
	{ "pageout quota=1M/1s goal=user@/tmp/x:0.25", POL_GOAL_USER, POL_SRC_FILE, 0.25,
	  1 },
	/* a migration to N fills N and empties the node the pages leave */
	{ "migrate_hot 0 quota=1M/1s goal=used@node0:95%", POL_GOAL_USED, POL_SRC_NODE, 95,
	  1 },
	{ "migrate_cold 1 quota=1M/1s goal=free@node0:7%", POL_GOAL_FREE, POL_SRC_NODE, 7,
	  1 },
	{ "migrate_cold 1 quota=1M/1s goal=free@node1:7%", POL_GOAL_FREE, POL_SRC_NODE, 7,
	  -1 },
	{ "stat quota=1M/1s goal=psi:1ms", POL_GOAL_PSI, POL_SRC_SYSTEM, 1000, 1 },

};

static const struct {
	const char *spec;
	const char *err;
} goal_errors[] = {
	{ "pageout goal=psi:1ms", "needs quota=MAX/INTERVAL" },
	{ "pageout quota=1M/1s goal=pressure:1ms", "unknown metric 'pressure'" },
	{ "pageout quota=1M/1s goal=psi", "expected METRIC[@SOURCE]:TARGET" },
	{ "pageout quota=1M/1s goal=psi:", "expected METRIC[@SOURCE]:TARGET" },
	{ "pageout quota=1M/1s goal=:1ms", "expected METRIC[@SOURCE]:TARGET" },
	{ "pageout quota=1M/1s goal=psi@:1ms", "empty @SOURCE" },
	{ "pageout quota=1M/1s goal=psi:0ms", "psi target '0ms'" },
	{ "pageout quota=1M/1s goal=psi:2s", "at most the window" },
	{ "pageout quota=1M/1s goal=psi:101%", "up to 100%" },
	{ "pageout quota=1M/1s goal=psi:-1%", "psi target '-1%'" },
	{ "pageout quota=1M/1s goal=psi:1e3us", "psi target '1e3us'" },
	{ "pageout quota=1M/1s goal=psi:0.00001%", "less than 1 us" },
	{ "pageout quota=1M/1s goal=free:100%", "below 100" },
	{ "pageout quota=1M/1s goal=free:0%", "above 0" },
	{ "pageout quota=1M/1s goal=free:10", "free target '10'" },
	{ "pageout quota=1M/1s goal=free:nan%", "free target 'nan%'" },
	{ "pageout quota=1M/1s goal=free@node:10%", "expected @nodeN" },
	{ "pageout quota=1M/1s goal=free@node4096:10%", "expected @nodeN" },
	{ "pageout quota=1M/1s goal=used@cg:10%", "expected @nodeN" },
	{ "pageout quota=1M/1s goal=rss:0", "rss target '0'" },
	{ "pageout quota=1M/1s goal=rss:1X", "rss target '1X'" },
	{ "pageout quota=1M/1s goal=rss@targets:1G", "rss takes no @SOURCE" },
	{ "pageout quota=1M/1s goal=refault@/a:1", "refault takes no @SOURCE" },
	{ "pageout quota=1M/1s goal=refault:0", "refault target '0'" },
	{ "migrate_hot 0 quota=1M/1s goal=refault:10", "refault does not suit migrate_hot" },
	{ "willneed quota=1M/1s goal=refault:10", "only pageout and cold raise" },
	{ "pageout quota=1M/1s goal=memcg:1G", "memcg needs @targets or @CGROUP" },
	{ "pageout quota=1M/1s goal=user:1", "user needs @FILE" },
	{ "pageout quota=1M/1s goal=user@/tmp/x:0", "above 0" },
	{ "pageout quota=1M/1s goal=user@/tmp/x:inf", "user target 'inf'" },
	{ "migrate_hot 0 quota=1M/1s goal=psi:1ms", "psi does not suit migrate_hot" },
	{ "migrate_hot 0 quota=1M/1s goal=rss:1G", "rss does not suit migrate_hot" },
	{ "migrate_cold 1 quota=1M/1s goal=used:50%", "name a node" },
	{ "willneed quota=1M/1s goal=psi:1ms", "only pageout and cold raise memory pressure" },
	{ "pageout quota=1M/1s goal=rss:1G goal=rss:1G goal=rss:1G goal=rss:1G goal=rss:1G",
	  "more than 4 goal=" },
};

TEST(goal_parse_table)
{
	for (size_t i = 0; i < sizeof(goal_cases) / sizeof(goal_cases[0]); i++) {
		struct pol_scheme s;
		char err[POL_ERRMSG_LEN] = "";

		ASSERT_EQ(0, pol_scheme_parse(goal_cases[i].spec, &s, err, sizeof(err)))
			TH_LOG("'%s': %s", goal_cases[i].spec, err);
		ASSERT_EQ(1, s.nr_goals);
		EXPECT_EQ(goal_cases[i].metric, s.goals[0].metric) TH_LOG("%s", goal_cases[i].spec);
		EXPECT_EQ(goal_cases[i].src, s.goals[0].src) TH_LOG("%s", goal_cases[i].spec);
		EXPECT_EQ(goal_cases[i].target, s.goals[0].target) TH_LOG("%s", goal_cases[i].spec);
		EXPECT_EQ(goal_cases[i].direction, s.goals[0].direction)
			TH_LOG("%s", goal_cases[i].spec);
		EXPECT_STREQ(strstr(goal_cases[i].spec, "goal=") + 5, s.goals[0].spec);
		pol_scheme_free(&s);
	}
	for (size_t i = 0; i < sizeof(goal_errors) / sizeof(goal_errors[0]); i++) {
		struct pol_scheme s;
		char err[POL_ERRMSG_LEN] = "";
		int ret = pol_scheme_parse(goal_errors[i].spec, &s, err, sizeof(err));

		EXPECT_EQ(-EINVAL, ret) TH_LOG("'%s' accepted", goal_errors[i].spec);
		EXPECT_NE(NULL, strstr(err, goal_errors[i].err))
			TH_LOG("'%s': message '%s'", goal_errors[i].spec, err);
		if (!ret)
			pol_scheme_free(&s);
	}
}

/* ---- a fake /proc and /sys ------------------------------------------- */

static char root[] = "/tmp/daptrace-goals-XXXXXX";

static void put(const char *rel, const char *text)
{
	char path[512], *p;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	for (p = path + strlen(root) + 1; (p = strchr(p, '/')); p++) {
		*p = '\0';
		mkdir(path, 0755);
		*p = '/';
	}
	f = fopen(path, "w");
	if (!f)
		abort();
	fputs(text, f);
	fclose(f);
}

static void fake_tree(void)
{
	if (!mkdtemp(root))
		abort();
	put("proc/meminfo", "MemTotal:       4000000 kB\nMemFree:        1000000 kB\n");
	put("sys/devices/system/node/node0/meminfo",
	    "Node 0 MemTotal:       2000000 kB\nNode 0 MemFree:         100000 kB\n");
	put("proc/pressure/memory", "some avg10=0.00 avg60=0.00 avg300=0.00 total=1000\n"
	    "full avg10=0.00 avg60=0.00 avg300=0.00 total=10\n");
	put("proc/self/mountinfo",
	    "22 1 0:21 / /sys rw,nosuid - sysfs sysfs rw\n"
	    "30 22 0:26 / /sys/fs/cgroup rw,nosuid shared:4 - cgroup2 cgroup2 rw\n");
	put("proc/101/cgroup", "0::/a/b\n");
	put("proc/102/cgroup", "1:name=systemd:/x\n0::/a/c\n");
	put("proc/103/cgroup", "0::/ab\n");
	put("proc/104/cgroup", "0::/\n");
	put("proc/105/cgroup", "4:memory:/v1only\n");
	put("proc/101/statm", "1000 300 10 1 0 200 0\n");
	/* a comm with ") " in it: fields are counted from the last ')' */
	put("proc/101/stat", "101 (wl) x) S 1 1 1 0 -1 4194304 10 0 7 0 5 6\n");
	put("sys/fs/cgroup/a/memory.pressure", "some avg10=1.00 avg60=0.00 avg300=0.00 total=5000\n"
	    "full avg10=0.00 avg60=0.00 avg300=0.00 total=10\n");
	put("sys/fs/cgroup/a/memory.current", "104857600\n");
	put("sys/fs/cgroup/a/b/memory.current", "1048576\n");	/* no memory.pressure */
	put("sys/fs/cgroup/a/c/memory.pressure", "junk\n");
	put("user-value", "0.5\n");
	put("user-junk", "fast\n");
	pol_sysroot = root;
}

static void rm_tree(void)
{
	char cmd[600];

	pol_sysroot = "";
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	if (system(cmd))
		abort();
	strcpy(root, "/tmp/daptrace-goals-XXXXXX");
}

/* Parse @spec and run the pre-start checks for @pids; the message in @err. */
static int check(const char *spec, const pid_t *pids, int nr, char *err, struct pol_scheme *out)
{
	struct pol_scheme s;
	char buf[512];
	int ret;

	/* "@ROOT" in the spec is the fake tree (user files are not under sysroot) */
	const char *at = strstr(spec, "@ROOT");

	if (at)
		snprintf(buf, sizeof(buf), "%.*s@%s%s", (int)(at - spec), spec, root, at + 5);
	else
		snprintf(buf, sizeof(buf), "%s", spec);
	if (pol_scheme_parse(buf, &s, err, POL_ERRMSG_LEN))
		return -100;
	snprintf(s.origin, sizeof(s.origin), "--scheme 1");
	ret = pol_scheme_check_goals(&s, pids, nr, err, POL_ERRMSG_LEN);
	if (out && !ret)
		*out = s;
	else
		pol_scheme_free(&s);
	return ret;
}

TEST(goal_checks_before_start)
{
	static const struct {
		const char *spec;
		pid_t pids[2];
		int nr;
		int ok;
		const char *want;	/* ok: the end of the path read; else the message */
	} cases[] = {
		{ "pageout quota=1M/1s goal=psi:1ms", { 0 }, 0, 1, "/proc/pressure/memory" },
		/* the deepest cgroup holding all targets, by whole path components */
		{ "pageout quota=1M/1s goal=psi@targets:1ms", { 101, 102 }, 2, 1,
		  "/sys/fs/cgroup/a/memory.pressure" },
		{ "pageout quota=1M/1s goal=psi@targets:1ms", { 101 }, 1, 0,
		  "a/b/memory.pressure does not exist: PSI is off" },
		{ "pageout quota=1M/1s goal=psi@targets:1ms", { 102, 102 }, 2, 0,
		  "unexpected contents" },
		{ "pageout quota=1M/1s goal=memcg@targets:1G", { 101, 102 }, 2, 1,
		  "/sys/fs/cgroup/a/memory.current" },
		{ "pageout quota=1M/1s goal=memcg@targets:1G", { 101, 103 }, 2, 0,
		  "the targets are in the root cgroup" },
		{ "pageout quota=1M/1s goal=memcg@targets:1G", { 101 }, 1, 1,
		  "/sys/fs/cgroup/a/b/memory.current" },
		/* the root cgroup's pressure is the system's */
		{ "pageout quota=1M/1s goal=psi@targets:1ms", { 101, 104 }, 2, 1,
		  "/proc/pressure/memory" },
		{ "pageout quota=1M/1s goal=psi@targets:1ms", { 105 }, 1, 0,
		  "process 105 is in no cgroup v2 hierarchy" },
		{ "pageout quota=1M/1s goal=psi@targets:1ms", { 999 }, 1, 0, "no such process: 999" },
		{ "pageout quota=1M/1s goal=psi@/a:1ms", { 0 }, 0, 1,
		  "/sys/fs/cgroup/a/memory.pressure" },
		{ "pageout quota=1M/1s goal=psi@/sys/fs/cgroup/a:1ms", { 0 }, 0, 1,
		  "/sys/fs/cgroup/a/memory.pressure" },
		{ "pageout quota=1M/1s goal=psi@a:1ms", { 0 }, 0, 1,
		  "/sys/fs/cgroup/a/memory.pressure" },
		{ "pageout quota=1M/1s goal=psi@/nope:1ms", { 0 }, 0, 0,
		  "/sys/fs/cgroup/nope: no such cgroup" },
		{ "pageout quota=1M/1s goal=memcg@/a/c:1G", { 0 }, 0, 0,
		  "a/c/memory.current does not exist: the root cgroup has none" },
		{ "pageout quota=1M/1s goal=free@node0:10%", { 0 }, 0, 1, NULL },
		{ "pageout quota=1M/1s goal=free@node1:10%", { 0 }, 0, 0,
		  "node 1 does not exist" },
		{ "pageout quota=1M/1s goal=user@ROOT/user-value:1", { 0 }, 0, 1, "/user-value" },
		{ "pageout quota=1M/1s goal=user@ROOT/user-junk:1", { 0 }, 0, 0,
		  "user-junk does not hold a number" },
		{ "pageout quota=1M/1s goal=user@ROOT/none:1", { 0 }, 0, 0,
		  "none: No such file or directory" },
	};
	char err[POL_ERRMSG_LEN];

	fake_tree();
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct pol_scheme s;
		int ret = check(cases[i].spec, cases[i].pids, cases[i].nr, err, &s);

		if (!cases[i].ok) {
			EXPECT_EQ(-EINVAL, ret) TH_LOG("%zu '%s' passed", i, cases[i].spec);
			EXPECT_NE(NULL, strstr(err, cases[i].want))
				TH_LOG("%zu '%s': '%s'", i, cases[i].spec, err);
			/* the message names the scheme and the goal */
			EXPECT_EQ(0, strncmp(err, "--scheme 1 (pageout): goal=", 27)) TH_LOG("%s", err);
			continue;
		}
		ASSERT_EQ(0, ret) TH_LOG("%zu '%s': %s", i, cases[i].spec, err);
		if (cases[i].want) {
			const char *p = s.goals[0].path;

			ASSERT_NE(NULL, p);
			EXPECT_STREQ(cases[i].want, p + strlen(p) - strlen(cases[i].want))
				TH_LOG("%zu: %s", i, p);
		}
		pol_scheme_free(&s);
	}
	rm_tree();
}

TEST(goal_checks_psi_off)
{
	static const pid_t pid = 101;
	char err[POL_ERRMSG_LEN], path[600];

	fake_tree();
	/* psi=0: no /proc/pressure at all */
	snprintf(path, sizeof(path), "%s/proc/pressure/memory", root);
	ASSERT_EQ(0, unlink(path));
	EXPECT_EQ(-EINVAL, check("pageout quota=1M/1s goal=psi:1ms", NULL, 0, err, NULL));
	EXPECT_NE(NULL, strstr(err, "/proc/pressure/memory does not exist: PSI is off "
			       "(psi=0 on the kernel command line")) TH_LOG("%s", err);
	/* no cgroup v2 mounted: a cgroup source cannot be found */
	put("proc/self/mountinfo", "22 1 0:21 / /sys rw,nosuid - sysfs sysfs rw\n");
	EXPECT_EQ(-EINVAL, check("pageout quota=1M/1s goal=psi@targets:1ms", &pid, 1, err, NULL));
	EXPECT_NE(NULL, strstr(err, "no cgroup v2 hierarchy is mounted")) TH_LOG("%s", err);
	rm_tree();
}

TEST(metrics_read)
{
	struct pol_engine e;
	struct pol_scheme s;
	pid_t pid = 101;
	char err[POL_ERRMSG_LEN];
	uint64_t u;
	double v;

	fake_tree();
	ASSERT_EQ(0, check("pageout quota=1M/1s goal=used@node0:50% goal=free:10% goal=rss:1M "
			   "goal=psi:1ms", &pid, 1, err, &s)) TH_LOG("%s", err);
	ASSERT_EQ(0, pol_pid_majflt(101, &u));
	EXPECT_EQ(7, u);
	pol_engine_init(&e, &s, 1, &pid, 1);
	e.t[0].pidfd = -1;
	ASSERT_EQ(0, pol_goal_read(&e, &s.goals[0], &v));
	EXPECT_EQ(95, v);				/* node 0: 1.9 of 2 GB used */
	ASSERT_EQ(0, pol_goal_read(&e, &s.goals[1], &v));
	EXPECT_EQ(25, v);
	ASSERT_EQ(0, pol_goal_read(&e, &s.goals[2], &v));
	EXPECT_EQ(300.0 * sysconf(_SC_PAGESIZE), v);
	/* psi: the first read is a baseline, then the stall since */
	EXPECT_EQ(-EAGAIN, pol_goal_read(&e, &s.goals[3], &v));
	put("proc/pressure/memory", "some avg10=0.00 avg60=0.00 avg300=0.00 total=1750\n");
	ASSERT_EQ(0, pol_goal_read(&e, &s.goals[3], &v));
	EXPECT_EQ(750, v);
	/* an exited target: rss cannot be read */
	e.t[0].gone = 1;
	EXPECT_EQ(-ESRCH, pol_goal_read(&e, &s.goals[2], &v));
	pol_engine_free(&e);
	pol_scheme_free(&s);

	/* refaults: the targets' major faults since the last window */
	ASSERT_EQ(0, check("pageout quota=1M/1s goal=refault:10", &pid, 1, err, &s)) TH_LOG("%s", err);
	pol_engine_init(&e, &s, 1, &pid, 1);
	EXPECT_EQ(-EAGAIN, pol_goal_read(&e, &s.goals[0], &v));
	put("proc/101/stat", "101 (wl) x) S 1 1 1 0 -1 4194304 10 0 19 0 5 6\n");
	ASSERT_EQ(0, pol_goal_read(&e, &s.goals[0], &v));
	EXPECT_EQ(12, v);
	pol_engine_free(&e);
	pol_scheme_free(&s);
	rm_tree();
}

/* ---- the tuner against simulated plants ---------------------------- */

static uint64_t rng = 0x2545f4914f6cdd1dULL;

static double uniform(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return ((double)(rng >> 11) + 0.5) / 9007199254740992.0;
}

/* Log-normal noise of mean 1: what one window's stall measure looks like. */
static double noise(double sigma)
{
	double n = sqrt(-2 * log(uniform())) * cos(2 * M_PI * uniform());

	return exp(sigma * n - sigma * sigma / 2);
}

/*
 * Pressure as reclaim causes it: paged-out memory that is still in use comes
 * back a window or two later, and each refault stalls.  psi(k) =
 * c * max(0, q(k - delay) - free_q) * noise, free_q the part of the quota
 * that costs nothing (cold memory).  The noise is log-normal (@spike 0) or
 * spiky: 0 in most windows, 1/@spike times the mean in a share @spike of
 * them, as pressure in the test VM looks.  Reports the windows until the
 * 5-window mean of psi first comes within +-20 % of the target, the share
 * of the windows after @settle whose 5-window mean stayed within +-20 %,
 * the mean psi after @settle over the target, and the swing of q after
 * @settle (max/min of its 10-window mean).
 */
struct sim {
	int reach;
	double within, mean, swing;
};

static struct sim simulate(int delay, double free_frac, double sigma, double spike,
			   int windows, int settle)
{
	const uint64_t qmax = 256 * MiB, qmin = qmax / 1024, qstar = 48 * MiB;
	const double target = 1000, free_q = free_frac * (double)qstar;
	const double c = target / ((double)qstar - free_q);
	struct pol_rate_tuner rt = { .ramp = 1 };
	uint64_t q = qmin, hist[8] = { 0 };
	double psi[1024], qs[1024], lo = 1e300, hi = 0, sum = 0;
	struct sim r = { -1, 0, 0, 0 };
	int in = 0, n = 0;

	for (int k = 0; k < windows; k++) {
		double p, noisef;
		uint64_t qd;

		hist[k % 8] = q;
		qd = k >= delay ? hist[(k - delay) % 8] : qmin;
		noisef = spike > 0 ? (uniform() < spike ? 1 / spike : 0) : noise(sigma);
		p = c * fmax(0, (double)qd - free_q) * noisef;
		psi[k] = p;
		qs[k] = (double)q;
		/* the scheme uses all it is given (plenty of candidates) */
		q = pol_tune_rate(&rt, q, q, p / target, qmin, qmax);
		if (k >= 9) {
			double m = 0, mq = 0;

			for (int j = k - 4; j <= k; j++)
				m += psi[j] / 5;
			for (int j = k - 9; j <= k; j++)
				mq += qs[j] / 10;
			if (r.reach < 0 && fabs(m / target - 1) <= 0.2)
				r.reach = k;
			if (k >= settle) {
				in += fabs(m / target - 1) <= 0.2;
				sum += psi[k];
				n++;
				lo = fmin(lo, mq);
				hi = fmax(hi, mq);
			}
		}
	}
	r.within = (double)in / n;
	r.mean = sum / n / target;
	r.swing = hi / lo;
	return r;
}

TEST(tuner_converges_and_holds)
{
	/* pressure in proportion to paging, now or a window or two later */
	for (int delay = 0; delay <= 2; delay++) {
		struct sim r = simulate(delay, 0, 0.1, 0, 300, 60);

		TH_LOG("delay %d: reached in %d windows, %.2f held, mean %.2f, q swing %.2f",
		       delay, r.reach, r.within, r.mean, r.swing);
		/* from the floor (1/1024) to the goal: 10 doublings and the approach */
		EXPECT_LE(0, r.reach);
		EXPECT_GE(25, r.reach);
		/* held within +-20 % (5-window means) and no ringing of the quota */
		EXPECT_LE(0.95, r.within);
		EXPECT_GE(1.3, r.swing);
	}
	/* half the quota pages out cold memory for free: a steeper plant */
	{
		struct sim r = simulate(1, 0.5, 0.1, 0, 300, 60);

		TH_LOG("knee: reached in %d windows, %.2f held, mean %.2f, q swing %.2f", r.reach,
		       r.within, r.mean, r.swing);
		EXPECT_GE(25, r.reach);
		EXPECT_LE(0.9, r.within);
		EXPECT_GE(1.3, r.swing);
	}
}

/*
 * Spiky pressure (0 in 70 % of the windows): no law holds each 5-window
 * mean within +-20 % of a signal that noisy, but the mean pressure must
 * sit on the target, not above it (a law in log s settles at several times
 * the target here), and the quota must not swing by more than the noise.
 */
TEST(tuner_tracks_the_mean_of_spiky_pressure)
{
	double mean = 0, swing = 0;

	for (int seed = 0; seed < 8; seed++) {
		struct sim r;

		rng = 0x2545f4914f6cdd1dULL + (uint64_t)seed * 7919;
		r = simulate(1, 0, 0, 0.3, 1000, 100);
		mean += r.mean / 8;
		swing += r.swing / 8;
	}
	TH_LOG("spiky: mean pressure %.2f of the target, q swing %.2f", mean, swing);
	EXPECT_LE(0.8, mean);
	EXPECT_GE(1.2, mean);
	EXPECT_GE(6, swing);
}

/*
 * For contrast, DAMOS's law (q' = q (2 - s), K = 1 in the terms of
 * tuner.c, on one window) and ours on the same noiseless plant with a
 * window of delay: after 100 windows ours has settled, DAMOS's still rings
 * (its loop has poles on the unit circle there), the reason for the gentler
 * gain.
 */
TEST(tuner_settles_where_damos_law_rings)
{
	const uint64_t qmax = 256 * MiB, qmin = qmax / 1024, qstar = 48 * MiB;
	const double target = 1000, c = target / (double)qstar;
	double lo[2] = { 1e300, 1e300 }, hi[2] = { 0, 0 };

	for (int law = 0; law < 2; law++) {
		struct pol_rate_tuner rt = { .ramp = 1 };
		uint64_t q = qmin, prev = qmin;

		for (int k = 0; k < 200; k++) {
			double s = c * (double)prev / target, n;

			prev = q;
			if (law) {
				n = s >= 2 ? (double)qmin : (double)q * (2 - s);
				q = n < qmin ? qmin : n > qmax ? qmax : (uint64_t)n;
			} else {
				q = pol_tune_rate(&rt, q, q, s, qmin, qmax);
			}
			if (k >= 100) {
				lo[law] = fmin(lo[law], (double)q);
				hi[law] = fmax(hi[law], (double)q);
			}
		}
	}
	EXPECT_GE(1.02, hi[0] / lo[0]) TH_LOG("ours swings %.2f", hi[0] / lo[0]);
	EXPECT_LE(1.3, hi[1] / lo[1]) TH_LOG("DAMOS's swings only %.2f", hi[1] / lo[1]);
}

TEST(tuner_unreachable_goals)
{
	const uint64_t qmax = 256 * MiB, qmin = qmax / 1024;
	struct pol_rate_tuner rt = { .ramp = 1 };
	uint64_t q = qmin;
	int k;

	/* paging costs next to no pressure (a tenth of the goal): up to the cap, no further */
	for (k = 0; k < 30; k++)
		q = pol_tune_rate(&rt, q, q, 0.1, qmin, qmax);
	EXPECT_EQ(qmax, q);
	/*
	 * It becomes reachable (the goal sits at a quarter of the cap): no windup
	 * to unwind, the quota comes down from the first window on; x0.81 per
	 * window at 4x the goal, plus the average's lag, is under 20 windows.
	 */
	for (k = 0; k < 40; k++) {
		double s = (double)q / (double)(qmax / 4);

		q = pol_tune_rate(&rt, q, q, s, qmin, qmax);
		if (!k)
			EXPECT_GT(qmax, q);
		if (fabs((double)q / (double)(qmax / 4) - 1) <= 0.2)
			break;
	}
	EXPECT_GE(20, k) TH_LOG("took %d windows", k);
	/* pressure from elsewhere, 5x the goal whatever we do: down to the floor */
	for (k = 0; k < 60; k++)
		q = pol_tune_rate(&rt, q, q, 5, qmin, qmax);
	EXPECT_EQ(qmin, q);
}

/*
 * Once settled the quota climbs at most x1.0625 a window; after 20 windows
 * without any pressure at all it doubles again, until pressure comes back;
 * if that is past the goal, the doublings the delay hid are undone.
 */
TEST(tuner_quiet_spell_restarts_the_ramp)
{
	const uint64_t qmax = 256 * MiB, qmin = qmax / 1024;
	struct pol_rate_tuner rt = { .ramp = 1 };
	uint64_t q = qmin, prev;
	int k;

	q = pol_tune_rate(&rt, q, q, 1, qmin, qmax);	/* at the goal: settled */
	for (k = 1; k <= 19; k++) {
		prev = q;
		q = pol_tune_rate(&rt, q, q, 0, qmin, qmax);
		EXPECT_GE(prev * 1.0625 + 1, q) TH_LOG("window %d", k);
	}
	prev = q;
	q = pol_tune_rate(&rt, q, q, 0, qmin, qmax);
	EXPECT_EQ(2 * prev, q);
	/* pressure again, at half the goal: back to small steps */
	prev = q;
	q = pol_tune_rate(&rt, q, q, 0.5, qmin, qmax);
	EXPECT_GE(prev * 1.0625 + 1, q);
	EXPECT_LT(prev, q);
	/* a ramp that runs past the goal undoes two doublings at once */
	for (k = 0; k < 20; k++)
		q = pol_tune_rate(&rt, q, q, 0, qmin, qmax);
	prev = q;
	q = pol_tune_rate(&rt, q, q, 150, qmin, qmax);
	EXPECT_EQ(prev / 4, q);
}

TEST(tuner_no_windup_when_the_quota_is_not_used)
{
	const uint64_t qmax = 256 * MiB, qmin = qmax / 1024;
	struct pol_rate_tuner rt = { .ramp = 1 };
	uint64_t q = qmin;

	/* no pressure, but only 1 MiB per window to act on: the ceiling follows use */
	for (int k = 0; k < 30; k++) {
		uint64_t used = q < MiB ? q : MiB;

		q = pol_tune_rate(&rt, q, used, 0, qmin, qmax);
		EXPECT_GE(2 * MiB, q);
	}
	/* a window without any use goes back to the floor's double */
	EXPECT_EQ(2 * qmin, pol_tune_rate(&rt, q, 0, 0, qmin, qmax));
	/* unknown metric: held */
	EXPECT_EQ(q, pol_tune_rate(&rt, q, 0, -1, qmin, qmax));
}

/* ---- the tuner in the engine ------------------------------------------ */

static double plant_value, plant_user;
static int plant_fail, plant_counter;
static uint64_t acted_bytes;

static int plant_read(struct pol_engine *e, struct pol_goal *g, double *v)
{
	(void)e;
	if (plant_fail)
		return -EIO;
	/* as pol_goal_read() for psi and refault: a counter's first read is its baseline */
	if (plant_counter && !g->have_total) {
		g->have_total = 1;
		return -EAGAIN;
	}
	*v = g->metric == POL_GOAL_USER ? plant_user : plant_value;
	return 0;
}

static uint64_t plant_act(struct pol_engine *e, const struct pol_scheme *s,
			  struct pol_target *t, uint64_t start, uint64_t len, int *err)
{
	(void)e; (void)s; (void)t; (void)start;
	acted_bytes += len;
	*err = 0;
	return len;
}

static int one_map(struct maps *m)
{
	if (m->e)
		return 0;
	m->e = calloc(1, sizeof(*m->e));
	m->e[0] = (struct maps_entry){ .start = 0, .end = 4096 * MiB,
				       .label = strdup("[anon]") };
	m->n = 1;
	return 0;
}

static void engine_with_plant(struct pol_engine *e, struct pol_scheme *s,
			      struct daptrace_snapshot *snap)
{
	engine_fake(e, s, 1, plant_act, one_map);
	e->goal_read = plant_read;
	/* one region, always re-actable (accessed a little in each window) */
	regs[0] = REGION(0, 4096 * MiB, 1, 5);
	snap_of(snap, 1);
	plant_fail = 0;
	plant_counter = 0;
	acted_bytes = 0;
}

/*
 * A rate goal read from a counter (refault, psi): the first window only
 * takes the baseline, and the ramp must still start there: the quota
 * doubles from the floor each window (256 KiB to 256 MiB in 10) while the
 * metric stays at 0.  It used to start only on a first window that read a
 * value, so a counter's goal climbed x1.0625 a window instead.
 */
TEST(tuner_ramp_starts_after_a_counter_baseline)
{
	struct pol_scheme s = parsed("pageout freq=0-100 quota=256M/1s goal=refault:100");
	struct daptrace_snapshot snap;
	struct pol_engine e;

	engine_with_plant(&e, &s, &snap);
	plant_counter = 1;
	plant_value = 0;
	pol_engine_apply(&e, &snap, SEC);
	EXPECT_EQ(pol_tune_floor(&s), s.quota_eff);
	for (int k = 1; k <= 10; k++) {
		pol_engine_apply(&e, &snap, (k + 1) * SEC);
		EXPECT_EQ(pol_tune_floor(&s) << k, s.quota_eff) TH_LOG("window %d", k + 1);
	}
	EXPECT_EQ(256 * MiB, s.quota_eff);
	pol_engine_free(&e);
	pol_scheme_free(&s);
}

/*
 * Pressure while the scheme has taken nothing away is not its own (nothing
 * it paged out can fault back): the ramp goes on through it, and ends on
 * the first window after the scheme acted that still reads it.
 */
TEST(tuner_ramp_ignores_pressure_before_any_action)
{
	struct pol_scheme s = parsed("pageout freq=0-0 quota=256M/1s goal=refault:100");
	struct daptrace_snapshot snap;
	struct pol_engine e;
	int k;

	engine_with_plant(&e, &s, &snap);
	plant_value = 1000;	/* 10x the goal, from the start */
	for (k = 0; k < 5; k++)	/* the region is accessed: freq=0-0 takes none of it */
		pol_engine_apply(&e, &snap, (k + 1) * SEC);
	EXPECT_EQ(0, acted_bytes);
	EXPECT_EQ(1, s.goals[0].rt.ramp);
	/* nothing used: the ramp's quota stays at twice the floor, no windup */
	EXPECT_EQ(2 * pol_tune_floor(&s), s.quota_eff);
	regs[0].nr_accesses = 0;	/* idle now: the scheme acts */
	pol_engine_apply(&e, &snap, ++k * SEC);
	EXPECT_EQ(2 * pol_tune_floor(&s), acted_bytes);
	pol_engine_apply(&e, &snap, ++k * SEC);
	EXPECT_EQ(0, s.goals[0].rt.ramp);
	EXPECT_GT(2 * pol_tune_floor(&s), s.quota_eff);
	pol_engine_free(&e);
	pol_scheme_free(&s);
}

/*
 * A level goal on an integrating plant: RSS falls by what is paged out and
 * grows back by 8 MiB per window.  It settles on the target without
 * undershooting it and without the offset the regrowth would leave a
 * purely proportional law.
 */
TEST(tuner_level_goal_settles_without_overshoot)
{
	struct pol_scheme s = parsed("pageout freq=0-100 quota=256M/1s goal=rss:600M");
	struct daptrace_snapshot snap;
	struct pol_engine e;
	double rss = 1000.0 * MiB, lowest = rss;
	int k, settled = -1;

	engine_with_plant(&e, &s, &snap);
	for (k = 0; k < 60; k++) {
		plant_value = rss;
		acted_bytes = 0;
		pol_engine_apply(&e, &snap, (k + 1) * SEC);
		rss = rss - (double)acted_bytes + 8.0 * MiB;
		lowest = fmin(lowest, rss);
		if (settled < 0 && fabs(rss / (600.0 * MiB) - 1) <= 0.05)
			settled = k;
	}
	EXPECT_LE(0, settled);
	EXPECT_GE(20, settled) TH_LOG("settled after %d windows", settled);
	EXPECT_LE(600.0 * MiB * 0.95, lowest) TH_LOG("undershot to %.0f MiB", lowest / MiB);
	EXPECT_GE(0.02, fabs(rss / (600.0 * MiB) - 1)) TH_LOG("ended at %.1f MiB", rss / MiB);
	/* the engine acted on no more than each window's quota */
	EXPECT_EQ(60, s.tune.windows + 1);
	pol_engine_free(&e);
	pol_scheme_free(&s);
}

/* Past the target, a level goal pauses the scheme: nothing is acted on. */
TEST(tuner_level_goal_pauses_past_the_target)
{
	struct pol_scheme s = parsed("pageout freq=0-100 quota=64M/1s goal=rss:600M");
	struct daptrace_snapshot snap;
	struct pol_engine e;

	engine_with_plant(&e, &s, &snap);
	plant_value = 500.0 * MiB;
	for (int k = 0; k < 5; k++)
		pol_engine_apply(&e, &snap, (k + 1) * SEC);
	EXPECT_EQ(0, acted_bytes);
	EXPECT_EQ(0, s.quota_eff);
	EXPECT_EQ(4, s.tune.paused);
	pol_engine_free(&e);
	pol_scheme_free(&s);
}

/*
 * A metric that cannot be read: counted, the quota held for 3 windows, then
 * halved each window (a blind goal winds the action down), and tuning goes
 * on when the metric comes back.
 */
TEST(tuner_missing_metric)
{
	struct pol_scheme s = parsed("pageout freq=0-100 quota=256M/1s goal=user@/x:100");
	struct daptrace_snapshot snap;
	struct pol_engine e;
	uint64_t held;
	int k;

	engine_with_plant(&e, &s, &snap);
	plant_user = 0;		/* far below: the quota doubles to the cap */
	for (k = 0; k < 14; k++)
		pol_engine_apply(&e, &snap, (k + 1) * SEC);
	EXPECT_EQ(256 * MiB, s.quota_eff);
	held = s.quota_eff;
	plant_fail = 1;
	for (int m = 1; m <= 6; m++, k++) {
		pol_engine_apply(&e, &snap, (k + 1) * SEC);
		uint64_t want = m <= 3 ? held : held >> (m - 3);

		EXPECT_EQ(want, s.quota_eff) TH_LOG("miss %d", m);
	}
	EXPECT_EQ(6, s.goals[0].nr_errors);
	EXPECT_EQ(EIO, s.goals[0].last_err);
	plant_fail = 0;
	plant_user = 1000;	/* 10x the goal: back down */
	pol_engine_apply(&e, &snap, (k + 1) * SEC);
	EXPECT_GT(held >> 3, s.quota_eff);
	EXPECT_EQ(0, s.goals[0].misses);
	pol_engine_free(&e);
	pol_scheme_free(&s);
}

/* Several goals: the smallest proposal wins, none is pushed past its target. */
TEST(tuner_several_goals_take_the_smallest)
{
	struct pol_scheme s = parsed("pageout freq=0-100 quota=256M/1s goal=user@/x:100 "
				     "goal=rss:600M");
	struct daptrace_snapshot snap;
	struct pol_engine e;

	engine_with_plant(&e, &s, &snap);
	/* user says "more" (0 of 100), but rss is below its target: pause */
	plant_user = 0;
	plant_value = 500.0 * MiB;
	for (int k = 0; k < 3; k++)
		pol_engine_apply(&e, &snap, (k + 1) * SEC);
	EXPECT_EQ(0, s.quota_eff);
	EXPECT_EQ(0, acted_bytes);
	EXPECT_LT(s.goals[1].q, s.goals[0].q);
	/* rss far above its target: the user goal's doubling quota is the smaller */
	plant_value = 4000.0 * MiB;
	pol_engine_apply(&e, &snap, 4 * SEC);
	EXPECT_EQ(s.goals[0].q, s.quota_eff);
	EXPECT_LT(s.goals[0].q, s.goals[1].q);
	pol_engine_free(&e);
	pol_scheme_free(&s);
}

TEST(stats_and_record_show_the_goals)
{
	struct pol_scheme s = parsed("pageout freq=0-100 quota=256M/1s goal=user@/x:100");
	struct daptrace_snapshot snap;
	struct pol_engine e;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	engine_with_plant(&e, &s, &snap);
	plant_user = 50;
	pol_engine_apply(&e, &snap, SEC);
	pol_engine_apply(&e, &snap, 2 * SEC);
	buf = stats_text(&e, 0);
	ASSERT_NE(NULL, buf);
	EXPECT_NE(NULL, strstr(buf, ",quota_bytes,tune_windows,tune_at_max,tune_paused,goal1,"
			       "goal1_unit,goal1_target,goal1_current,goal1_errors,goal2,"))
		TH_LOG("%s", buf);
	EXPECT_NE(NULL, strstr(buf, ",1,0,0,\"user@/x:100\",number,100,50,0,,,,,")) TH_LOG("%s", buf);
	free(buf);
	buf = stats_text(&e, 1);
	ASSERT_NE(NULL, buf);
	EXPECT_NE(NULL, strstr(buf, "\"goal\":\"user@\\/x:100\"")) TH_LOG("%s", buf);
	EXPECT_NE(NULL, strstr(buf, "\"current\":50")) TH_LOG("%s", buf);
	EXPECT_NE(NULL, strstr(buf, "\"quota_max_bytes\":268435456")) TH_LOG("%s", buf);
	free(buf);
	/* the record's #goal rows: a reader takes them for comments */
	f = open_memstream(&buf, &len);
	{
		struct rec_region rr = { .start = 0, .end = 4096, .pid = 42, .label = "[anon]",
					 .phys_addr = REC_PHYS_NONE };
		struct rec_snapshot rs = { .seq = 1, .end_ns = 100, .nr_regions = 1,
					   .nr_samples = 20, .regions = &rr };
		struct rec_kv kv = { "reason", "test" };
		struct rec_target tg = { .pid = 42, .comm = "t" };
		struct rec_info info;
		char err[256];
		FILE *in;

		ASSERT_EQ(0, rec_write_header(f, NULL, 0, &tg, 1));
		ASSERT_EQ(0, rec_write_snapshot(f, &rs));
		ASSERT_EQ(0, policy_rec_tune(f, &s, 2 * SEC));
		rs.seq = 2;
		ASSERT_EQ(0, rec_write_snapshot(f, &rs));
		ASSERT_EQ(0, rec_write_trailer(f, &kv, 1));
		fclose(f);
		EXPECT_NE(NULL, strstr(buf, "\n#goal,2000000000,\"0:pageout\",\"user@/x:100\",100,50,"))
			TH_LOG("%s", buf);
		in = fmemopen(buf, len, "r");
		memset(&info, 0, sizeof(info));
		EXPECT_EQ(0, rec_read(in, "r", 0, NULL, NULL, &info, err, sizeof(err)))
			TH_LOG("%s", err);
		EXPECT_EQ(2, info.nr_snapshots);
		rec_info_free(&info);
		fclose(in);
	}
	free(buf);
	pol_engine_free(&e);
	pol_scheme_free(&s);
}

TEST_HARNESS_MAIN
