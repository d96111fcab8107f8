// SPDX-License-Identifier: GPL-2.0-only
/*
 * daptrace stat: the numbers of a canned snapshot (DAMON_STAT's idle-time
 * percentiles, resident weighting, memory that cannot be observed, cgroups
 * folded by depth), and the command end to end on a fake sysfs tree.
 */
#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#include "kselftest_harness.h"
#include "fake_sysfs.h"
#include "run_cmd.h"
#include "session/session.h"
#include "stat/stat_model.h"

#define MiB	(1ULL << 20)

TEST(percentiles_walk_as_damon_stat)
{
	struct stat_idle v[] = { { 1, 100 }, { 2, 100 }, { 3, 100 }, { 4, 100 } };
	struct stat_idle one[] = { { 7, 1 } };
	int64_t p[STAT_PERCENTILES];

	stat_percentiles(v, 4, p);
	EXPECT_EQ(1, p[0]);
	EXPECT_EQ(1, p[25]);
	EXPECT_EQ(2, p[26]);
	EXPECT_EQ(2, p[50]);
	EXPECT_EQ(3, p[75]);
	EXPECT_EQ(4, p[76]);
	EXPECT_EQ(4, p[100]);
	stat_percentiles(one, 1, p);
	EXPECT_EQ(7, p[0]);
	EXPECT_EQ(7, p[100]);
	/* nothing to weigh: zeros */
	stat_percentiles(v, 0, p);
	EXPECT_EQ(0, p[50]);
}

static const char *cg_of(void *ctx, pid_t pid)
{
	(void)ctx;
	return pid == 10 ? "/a/x" : pid == 11 ? "/a/y" : pid == 12 ? "/b" : NULL;
}

/*
 * 10: 4 MiB accessed for 3 windows (-3 s), 4 MiB half resident idle for 10
 * windows (+10 s); 11: 2 MiB idle for 1 window, 2 MiB not observable; 12:
 * 8 MiB reserved, never present (no weight, though idle for a minute).
 */
static void canned(struct daptrace_snapshot *s, struct daptrace_region *r)
{
	r[0] = (struct daptrace_region){ .start = 0, .end = 4 * MiB, .nr_accesses = 5,
					 .age = 2, .pid = 10, .nr_present = 20 };
	r[1] = (struct daptrace_region){ .start = 4 * MiB, .end = 8 * MiB, .age = 9,
					 .pid = 10, .nr_present = 10 };
	r[2] = (struct daptrace_region){ .start = 0, .end = 2 * MiB, .pid = 11,
					 .nr_present = 20 };
	r[3] = (struct daptrace_region){ .start = 2 * MiB, .end = 4 * MiB, .pid = 11,
					 .nr_unobserved = 20 };
	r[4] = (struct daptrace_region){ .start = 0, .end = 8 * MiB, .age = 59, .pid = 12 };
	*s = (struct daptrace_snapshot){ .seq = 1, .nr_samples = 20, .sample_us = 50000,
					 .aggr_us = 1000000, .nr_regions = 5, .regions = r,
					 .placement = 1 };
}

TEST(model_of_a_snapshot)
{
	struct daptrace_region r[5];
	struct daptrace_snapshot s;
	struct stat_model m;

	canned(&s, r);
	ASSERT_EQ(0, stat_model_compute(&m, &s, cg_of, NULL, 0));
	EXPECT_TRUE(m.resident_weighted);
	EXPECT_EQ(3, m.all.nr_procs);
	EXPECT_EQ(8 * MiB, m.all.resident);
	EXPECT_EQ(4 * MiB, m.all.wss);
	EXPECT_EQ(2 * MiB, m.all.unobserved);
	EXPECT_EQ(20 * MiB, m.all.bandwidth);
	EXPECT_EQ(-3000, m.all.idle_ms[0]);
	EXPECT_EQ(-3000, m.all.idle_ms[50]);
	EXPECT_EQ(1000, m.all.idle_ms[51]);
	EXPECT_EQ(1000, m.all.idle_ms[75]);
	EXPECT_EQ(10000, m.all.idle_ms[76]);
	/* the reserved, never present range weighs nothing */
	EXPECT_EQ(10000, m.all.idle_ms[100]);
	ASSERT_EQ(3, m.nr_cg);
	EXPECT_STREQ("/a/x", m.cg[0].key);
	EXPECT_EQ(6 * MiB, m.cg[0].resident);
	EXPECT_EQ(-3000, m.cg[0].idle_ms[66]);
	EXPECT_EQ(10000, m.cg[0].idle_ms[67]);
	EXPECT_EQ(20 * MiB, m.cg[0].bandwidth);
	EXPECT_STREQ("/a/y", m.cg[1].key);
	EXPECT_EQ(2 * MiB, m.cg[1].resident);
	EXPECT_EQ(2 * MiB, m.cg[1].unobserved);
	EXPECT_EQ(1000, m.cg[1].idle_ms[0]);
	EXPECT_STREQ("/b", m.cg[2].key);
	EXPECT_EQ(0, m.cg[2].resident);
	stat_model_free(&m);

	/* folded to depth 1: /a holds both */
	ASSERT_EQ(0, stat_model_compute(&m, &s, cg_of, NULL, 1));
	ASSERT_EQ(2, m.nr_cg);
	EXPECT_STREQ("/a", m.cg[0].key);
	EXPECT_EQ(2, m.cg[0].nr_procs);
	EXPECT_EQ(8 * MiB, m.cg[0].resident);
	stat_model_free(&m);

	/* a module without placement counts: virtual bytes */
	s.placement = 0;
	ASSERT_EQ(0, stat_model_compute(&m, &s, NULL, NULL, 0));
	EXPECT_FALSE(m.resident_weighted);
	EXPECT_EQ(18 * MiB, m.all.resident);
	EXPECT_EQ(0, m.nr_cg);
	/* now the reserved range is most of the bytes: idle a minute */
	EXPECT_EQ(60000, m.all.idle_ms[100]);
	EXPECT_EQ(60000, m.all.idle_ms[70]);
	stat_model_free(&m);

	/*
	 * A window without a sampling round (the worker got none in): no
	 * region was observed, none is idle or in the working set.
	 */
	s.nr_samples = 0;
	ASSERT_EQ(0, stat_model_compute(&m, &s, NULL, NULL, 0));
	EXPECT_EQ(20 * MiB, m.all.unobserved);
	EXPECT_EQ(0, m.all.resident);
	EXPECT_EQ(0, m.all.wss);
	stat_model_free(&m);
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* Window @k (from 1) of the kernel a test plays: its header and two regions. */
typedef void (*play_fn)(uint64_t k, struct daptrace_snap_hdr *h,
			struct daptrace_region_rec *regs);

/* 4 MiB accessed for 2 windows, 4 MiB idle for 5, all resident, in every window. */
static void steady(uint64_t k, struct daptrace_snap_hdr *h, struct daptrace_region_rec *regs)
{
	(void)k;
	*h = (struct daptrace_snap_hdr){ .nr_regions = 2, .nr_samples = 20,
					 .sample_us = 50000, .aggr_us = 1000000 };
	regs[0] = (struct daptrace_region_rec){ .start = 0x10000000, .end = 0x10400000,
						.nr_accesses = 4, .age = 1, .pid = getpid(),
						.nr_present = 20 };
	regs[1] = (struct daptrace_region_rec){ .start = 0x10400000, .end = 0x10800000,
						.age = 4, .pid = getpid(), .nr_present = 20 };
}

/*
 * Run `daptrace stat @args` on a fake sysfs tree while playing the kernel:
 * @nr windows of this test's own memory, as @play says, then a Ctrl-C if
 * @interrupt (stat then reads what is left and reports: no race with a
 * --duration on a loaded machine).  Its output in @out; its exit status
 * returned.
 */
static int run_stat_play(const char *dir, char *const *args, play_fn play, unsigned int nr,
			 int interrupt, char *out, size_t len)
{
	struct fake_ring ring = { .nr_slots = 8, .max_regions = 16, .generation = 1 };
	struct daptrace_region_rec regs[2];
	char *argv[16] = { "daptrace", "stat" }, buf[32];
	int fds[2], status, k = 2;
	uint64_t base = 0;
	size_t got = 0;
	ssize_t n;
	pid_t pid;

	while (*args && k < 15)
		argv[k++] = *args++;
	argv[k] = NULL;
	setenv("DAPTRACE_SYSFS", dir, 1);
	/* sequence numbers go on across runs, as the module's do */
	if (fake_read(dir, "snapshot_seq", buf, sizeof(buf)) > 0)
		base = strtoull(buf, NULL, 10);
	if (pipe(fds))
		return -1;
	pid = fork();
	if (!pid) {
		dup2(fds[1], 1);
		close(fds[0]);
		execv(daptrace_bin(), argv);
		_exit(126);
	}
	close(fds[1]);
	fake_wait_for(dir, "state", "on", 5000);
	if (fake_ring_init(dir, &ring))
		return -1;
	for (uint64_t seq = base + 1; seq <= base + nr; seq++) {
		struct daptrace_snap_hdr h;

		play(seq - base, &h, regs);
		if (fake_slot_write(dir, &ring, seq, seq, &h, regs) ||
		    fake_write(dir, "snapshot_seq", "%020llu\n", (unsigned long long)seq))
			return -1;
		sleep_ms(100);
	}
	if (interrupt)
		kill(pid, SIGINT);
	while (got + 1 < len && (n = read(fds[0], out + got, len - 1 - got)) > 0)
		got += (size_t)n;
	out[got] = '\0';
	close(fds[0]);
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

static int run_stat(const char *dir, char *const *args, char *out, size_t len)
{
	return run_stat_play(dir, args, steady, 3, 0, out, len);
}

/*
 * End to end on a fake sysfs: every process of this machine becomes a
 * target; stat prints the newest window once at the end of --duration as
 * one JSON line, or as text.
 */
TEST(stat_prints_the_machine_once)
{
	struct json_object *j, *v;
	char dir[256], out[1 << 16];

	SKIP_UNLESS_DAPTRACE_BIN();
	ASSERT_EQ(0, fake_tree_create(dir, sizeof(dir)));
	ASSERT_EQ(0, run_stat(dir, (char *[]){ "--json", "-d", "1500ms", NULL }, out,
			      sizeof(out))) TH_LOG("%s", out);
	/* one line, one report */
	ASSERT_NE(NULL, strchr(out, '\n'));
	EXPECT_EQ(NULL, strchr(strchr(out, '\n') + 1, '\n')) TH_LOG("%s", out);
	j = json_tokener_parse(out);
	ASSERT_NE(NULL, j) TH_LOG("%s", out);
	ASSERT_TRUE(json_object_object_get_ex(j, "seq", &v));
	EXPECT_EQ(3, json_object_get_uint64(v));
	ASSERT_TRUE(json_object_object_get_ex(j, "resident_bytes", &v));
	EXPECT_EQ(8 * MiB, json_object_get_uint64(v));
	ASSERT_TRUE(json_object_object_get_ex(j, "wss_bytes", &v));
	EXPECT_EQ(4 * MiB, json_object_get_uint64(v));
	ASSERT_TRUE(json_object_object_get_ex(j, "memory_idle_ms_percentiles", &v));
	ASSERT_EQ(101, json_object_array_length(v));
	EXPECT_EQ(-2000, json_object_get_int64(json_object_array_get_idx(v, 0)));
	EXPECT_EQ(5000, json_object_get_int64(json_object_array_get_idx(v, 100)));
	/* every process of the machine was taken, this one's cgroup listed */
	ASSERT_TRUE(json_object_object_get_ex(j, "targets", &v));
	EXPECT_GT(json_object_get_int(v), 1);
	ASSERT_TRUE(json_object_object_get_ex(j, "cgroups", &v));
	EXPECT_EQ(1, json_object_array_length(v));
	json_object_put(j);

	ASSERT_EQ(0, run_stat(dir, (char *[]){ "-d", "1500ms", "--percentiles", "0,50,100",
					       NULL }, out, sizeof(out))) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, " idle_p0  idle_p50 idle_p100\n")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "\nall ")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "    -2000     -2000      5000\n")) TH_LOG("%s", out);
	fake_tree_destroy(dir);
}

/*
 * Windows of a second from 100 s on (CLOCK_MONOTONIC, so after stat's
 * start): 4 MiB accessed in each, 4 MiB half resident idle from the
 * first window on, accessed in the sixth in every sampling round (all of
 * it comes back).
 */
static uint64_t play_base_ns;

/* The windows start 100 s from now: after stat's start. */
static void play_from_now(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	play_base_ns = ((uint64_t)now.tv_sec + 100) * 1000000000ULL;
}

static void cold_then_back(uint64_t k, struct daptrace_snap_hdr *h,
			   struct daptrace_region_rec *regs)
{
	const uint64_t s = 1000000000ULL;

	*h = (struct daptrace_snap_hdr){ .nr_regions = 2, .nr_samples = 20,
					 .sample_us = 50000, .aggr_us = 1000000,
					 .start_ns = play_base_ns + (k - 1) * s,
					 .end_ns = play_base_ns + k * s };
	regs[0] = (struct daptrace_region_rec){ .start = 0x10000000, .end = 0x10400000,
						.nr_accesses = 5, .age = (uint32_t)k - 1,
						.pid = getpid(), .nr_present = 20 };
	regs[1] = (struct daptrace_region_rec){ .start = 0x10400000, .end = 0x10800000,
						.nr_accesses = k == 6 ? 20 : 0,
						.age = k == 6 ? 0 : (uint32_t)k - 1,
						.pid = getpid(), .nr_present = 10 };
}

/* @j's savings curve of the whole, at threshold @k: the number @key. */
static double curve_num(struct json_object *j, int k, const char *key)
{
	struct json_object *v;

	if (!json_object_object_get_ex(j, "savings", &v) ||
	    !json_object_object_get_ex(v, "all", &v) ||
	    !json_object_object_get_ex(v, "curve", &v) ||
	    !(v = json_object_array_get_idx(v, (size_t)k)) ||
	    !json_object_object_get_ex(v, key, &v))
		return -1;
	return json_object_get_double(v);
}

/*
 * stat --savings follows the curve live, as report savings replays it:
 * the idle half-resident 4 MiB is reclaimed once idle 2 s (window 2) or
 * 4 s (window 4) and held since, 2 MiB saved now; after a sixth window
 * that reads it again, refaulted (4 s and 2 s after), saved now 0; the
 * accessed 4 MiB never.
 */
TEST(savings_curve_live)
{
	struct json_object *j;
	char dir[256], out[1 << 16];

	SKIP_UNLESS_DAPTRACE_BIN();
	play_from_now();
	ASSERT_EQ(0, fake_tree_create(dir, sizeof(dir)));
	ASSERT_EQ(0, run_stat_play(dir, (char *[]){ "--json", "-d", "60s", "--thresholds",
						    "4s,2s", NULL }, cold_then_back, 5, 1, out,
				   sizeof(out))) TH_LOG("%s", out);
	j = json_tokener_parse(out);
	ASSERT_NE(NULL, j) TH_LOG("%s", out);
	EXPECT_EQ(2, curve_num(j, 0, "threshold_s"));
	EXPECT_EQ(4, curve_num(j, 1, "threshold_s"));
	EXPECT_EQ(2 * MiB, curve_num(j, 0, "saved_now_bytes")) TH_LOG("%s", out);
	EXPECT_EQ(2 * MiB, curve_num(j, 1, "saved_now_bytes"));
	EXPECT_EQ(2 * MiB, curve_num(j, 0, "reclaimed_bytes"));
	EXPECT_EQ(0, curve_num(j, 0, "refaulted_bytes"));
	/* held at the end of windows 2-5 and 4-5, of 5 */
	EXPECT_EQ(llround(8.0 * MiB / 5), curve_num(j, 0, "saved_mean_bytes"));
	EXPECT_EQ(llround(4.0 * MiB / 5), curve_num(j, 1, "saved_mean_bytes"));
	json_object_put(j);

	ASSERT_EQ(0, run_stat_play(dir, (char *[]){ "--json", "-d", "60s", "--thresholds",
						    "2s,4s", NULL }, cold_then_back, 6, 1, out,
				   sizeof(out))) TH_LOG("%s", out);
	j = json_tokener_parse(out);
	ASSERT_NE(NULL, j) TH_LOG("%s", out);
	EXPECT_EQ(0, curve_num(j, 0, "saved_now_bytes")) TH_LOG("%s", out);
	EXPECT_EQ(2 * MiB, curve_num(j, 0, "refaulted_bytes"));
	EXPECT_EQ(2 * MiB, curve_num(j, 1, "refaulted_bytes"));
	EXPECT_EQ(4, curve_num(j, 0, "reuse_p50_s"));
	EXPECT_EQ(2, curve_num(j, 1, "reuse_p50_s"));
	/* 2 MiB in 6 s */
	EXPECT_LT(fabs(curve_num(j, 0, "refault_pages_per_s") -
		       2.0 * MiB / (double)sysconf(_SC_PAGESIZE) / 6), 0.001);
	json_object_put(j);

	/* the text: a table after the machine's */
	ASSERT_EQ(0, run_stat_play(dir, (char *[]){ "-d", "60s", "--savings", NULL },
				   cold_then_back, 5, 1, out, sizeof(out))) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "  threshold   saved_now  saved_mean ")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "\nall                                 10.0 s ")) TH_LOG("%s", out);
	fake_tree_destroy(dir);
}

/*
 * As cold_then_back, but the sixth window finds the idle 4 MiB accessed
 * in one round of 20, and its accuracy probes say that of 100 pages in
 * regions read accessed 10 were.
 */
static void cold_then_one_hit(uint64_t k, struct daptrace_snap_hdr *h,
			      struct daptrace_region_rec *regs)
{
	cold_then_back(k, h, regs);
	if (k != 6)
		return;
	regs[1].nr_accesses = 1;
	h->probe_pages = 100;
	h->probe_tp = 10;
	h->probe_fp = 90;
}

/*
 * stat --savings checks the touched shares by the probes as report
 * savings does: the hit says 1 - (19/20)^20 = 64.15 % of the idle region
 * read, the accessed one's 5 of 20 rounds 99.68 %: 81.92 % of the
 * accessed bytes; the probes' 10 of 100 at most 17.437 % (95 %): each
 * share scaled by 0.21286.  Of the 2 MiB reclaimed at 2 s, 64.15 %
 * refaults (1345353 B), and 13.655 % stays back: saved now 1810784 B
 * (751799 as sampled).
 */
TEST(savings_live_checked_by_the_probes)
{
	struct json_object *j, *c;
	char dir[256], out[1 << 16];

	SKIP_UNLESS_DAPTRACE_BIN();
	play_from_now();
	ASSERT_EQ(0, fake_tree_create(dir, sizeof(dir)));
	ASSERT_EQ(0, run_stat_play(dir, (char *[]){ "--json", "-d", "60s", "--thresholds",
						    "2s", NULL }, cold_then_one_hit, 6, 1, out,
				   sizeof(out))) TH_LOG("%s", out);
	j = json_tokener_parse(out);
	ASSERT_NE(NULL, j) TH_LOG("%s", out);
	EXPECT_GT(2, fabs(curve_num(j, 0, "refaulted_bytes") - 1345353)) TH_LOG("%s", out);
	EXPECT_GT(2, fabs(curve_num(j, 0, "saved_now_bytes") - 1810784)) TH_LOG("%s", out);
	ASSERT_TRUE(json_object_object_get_ex(j, "savings", &c));
	ASSERT_TRUE(json_object_object_get_ex(c, "calibration", &c));
	ASSERT_NE(NULL, c) TH_LOG("%s", out);
	ASSERT_TRUE(json_object_object_get_ex(c, "scale", &c));
	EXPECT_GT(0.0001, fabs(json_object_get_double(c) - 0.21286)) TH_LOG("%s", out);
	json_object_put(j);

	ASSERT_EQ(0, run_stat_play(dir, (char *[]){ "-d", "60s", "--savings", NULL },
				   cold_then_one_hit, 6, 1, out, sizeof(out))) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "\n# what a hit takes back to stay: scaled by 0.21 "
				  "(refaults as sampled): of 100 probe pages "))
		TH_LOG("%s", out);
	fake_tree_destroy(dir);
}

/*
 * Bad thresholds are refused with the expected form, before the monitor
 * is touched: still off, no target written.
 */
TEST(bad_thresholds_refused)
{
	static char *const bad[] = { "0s", "1s,,2s", "1s,1s", "", "abc", "1s,", "5" };
	char dir[256], out[4096], buf[64];

	SKIP_UNLESS_DAPTRACE_BIN();
	ASSERT_EQ(0, fake_tree_create(dir, sizeof(dir)));
	setenv("DAPTRACE_SYSFS", dir, 1);
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		EXPECT_EQ(2, run_daptrace(A("stat", "--thresholds", bad[i], "-d", "1s"), out,
					  sizeof(out))) TH_LOG("%s: %s", bad[i], out);
		EXPECT_NE(NULL, strstr(out, "--thresholds: invalid value")) TH_LOG("%s", out);
		EXPECT_NE(NULL, strstr(out, "different idle times above 0")) TH_LOG("%s", out);
	}
	EXPECT_LT(0, fake_read(dir, "state", buf, sizeof(buf)));
	EXPECT_STREQ("off\n", buf);
	EXPECT_EQ(0, fake_read(dir, "target", buf, sizeof(buf)));
	fake_tree_destroy(dir);
}

/*
 * A stat slower than the worker always finds another snapshot waiting.  It
 * must still come back to its signals (and its clock, its reports) within
 * a batch, and read a batch more for the last window.  This kernel
 * publishes BACKLOG snapshots while stat is stopped, sends SIGTERM, and
 * keeps publishing until stat exits, into a ring of 4096 slots: nothing is
 * overwritten, nothing missed, so the last window read is the count read.
 * A stat that reads "until there is none" reads them all first.
 */
TEST(stat_stops_while_snapshots_keep_coming)
{
	enum { BACKLOG = 3000, BUDGET = 4000 };
	struct fake_ring r = { .nr_slots = 4096, .max_regions = 1, .generation = 1 };
	char dir[256], out[512], buf[1 << 16];
	struct json_object *j, *v;
	uint64_t seq = BACKLOG;
	pid_t stat;

	SKIP_UNLESS_DAPTRACE_BIN();
	ASSERT_EQ(0, fake_tree_create(dir, sizeof(dir)));
	snprintf(out, sizeof(out), "%s/stat.json", dir);
	stat = fork();
	if (stat == 0) {
		int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);

		dup2(fd, 1);
		setenv("DAPTRACE_SYSFS", dir, 1);
		execv(daptrace_bin(), A("daptrace", "stat", "--json", "-d", "600s"));
		_exit(126);
	}
	/* "on": the reader is in place, the first snapshot is seq 1 */
	ASSERT_EQ(0, fake_wait_for(dir, "state", "on", 5000));
	ASSERT_EQ(0, fake_ring_init(dir, &r));
	ASSERT_EQ(0, stop_child(stat));
	ASSERT_EQ(0, fake_publish_batch(dir, &r, 1, BACKLOG, getpid()));
	kill(stat, SIGTERM);
	kill(stat, SIGCONT);
	EXPECT_EQ(0, fake_publish_until_exit(dir, &r, &seq, BUDGET, getpid(), stat));

	fake_read(dir, "stat.json", buf, sizeof(buf));
	j = json_tokener_parse(buf);
	ASSERT_NE(NULL, j) TH_LOG("%s", buf);
	ASSERT_TRUE(json_object_object_get_ex(j, "missed", &v));
	EXPECT_EQ(0, json_object_get_uint64(v));
	/* it read, and it stopped after a batch and the last: not the rest */
	ASSERT_TRUE(json_object_object_get_ex(j, "seq", &v));
	EXPECT_GE(json_object_get_uint64(v), 1);
	EXPECT_LE(json_object_get_uint64(v), 2 * SESSION_DRAIN_BATCH)
		TH_LOG("read %llu of %llu published",
		       (unsigned long long)json_object_get_uint64(v), (unsigned long long)seq);
	json_object_put(j);
	fake_tree_destroy(dir);
}

/*
 * stat --interval's turns keep their cadence: every second from the start,
 * whenever the loop (which polls every 250 ms, later on a busy machine)
 * gets to them.  With `last = now` two turns taken 250 ms late moved the
 * third past a 3.5 s --duration: 2 reports, where 3 are due.  Turns
 * missed wholly are skipped, not made up in a burst.
 */
TEST(interval_keeps_its_cadence)
{
	const int64_t s = 1000000000;
	int64_t next = s, polls[] = { s / 4, s + s / 4, 2 * s + s / 2, 3 * s + s / 4 };
	unsigned int reports = 0;

	for (unsigned int i = 0; i < ARRAY_SIZE(polls); i++)
		reports += session_due_every(&next, polls[i], s);
	EXPECT_EQ(3U, reports);
	EXPECT_EQ(4 * s, next);
	/* a stall of 3.5 turns: one report now, the next on the grid */
	EXPECT_TRUE(session_due_every(&next, 7 * s + s / 2, s));
	EXPECT_EQ(8 * s, next);
	EXPECT_FALSE(session_due_every(&next, 8 * s - 1, s));
	EXPECT_TRUE(session_due_every(&next, 8 * s, s));
	EXPECT_EQ(9 * s, next);
}

TEST_HARNESS_MAIN
