// SPDX-License-Identifier: GPL-2.0
/*
 * The state machine: "on" needs a target, on/off/on cycles, repeated words
 * are no-ops, configuration writes while on fail with EBUSY and change
 * nothing, counters move while on, a target's exit is reported and the
 * last one's exit turns monitoring off by itself (state is pollable).
 */
#define _GNU_SOURCE
#include <poll.h>

#include "kselftest_harness.h"
#include "daptrace_sysfs.h"
#include "dt_child.h"

/* Fast windows for the tests that wait for the worker: 2 ms / 10 ms. */
#define FAST_SAMPLE_US	2000
#define FAST_AGGR_US	10000

FIXTURE(state) {
	pid_t child[4];
	int nr;
};

FIXTURE_SETUP(state)
{
	DT_SKIP_UNLESS_LOADED();
	ASSERT_EQ(0, dt_reset()) TH_LOG("cannot reset daptrace to defaults");
	self->nr = 0;
}

FIXTURE_TEARDOWN(state)
{
	int i;

	dt_reset();
	for (i = 0; i < self->nr; i++)
		dt_reap(self->child[i]);
}

/* A target with @mib MiB mapped and touched, added to the target list. */
static pid_t add_child(struct __test_metadata *_metadata,
		       FIXTURE_DATA(state) *self, size_t mib)
{
	pid_t pid;

	ASSERT_GT(4, self->nr);
	pid = dt_spawn(mib << 20, 4096);
	ASSERT_LT(0, pid) TH_LOG("fork a target: %s", strerror(-pid));
	self->child[self->nr++] = pid;
	ASSERT_EQ(0, dt_add_target(pid)) TH_LOG("add target %d", pid);
	return pid;
}

/* Kill and reap child @i so its pid is gone, not a zombie. */
static void end_child(FIXTURE_DATA(state) *self, int i)
{
	dt_reap(self->child[i]);
	self->child[i] = 0;
}

static void expect_state(struct __test_metadata *_metadata, const char *want)
{
	char buf[16];

	ASSERT_LE(0, dt_read("state", buf, sizeof(buf)));
	EXPECT_STREQ(want, buf);
}

/* Wait up to @ms for target_status of @pid to read @want; elapsed ms or -1. */
static double wait_status(pid_t pid, const char *want, unsigned int ms)
{
	double t0 = dt_now_ms();
	char word[32];

	do {
		if (!dt_target_status(pid, word, sizeof(word)) && !strcmp(word, want))
			return dt_now_ms() - t0;
		dt_sleep_ms(5);
	} while (dt_now_ms() - t0 < ms);
	return -1;
}

TEST_F(state, on_without_target_fails_einval)
{
	EXPECT_EQ(-EINVAL, dt_write("state", "on")) TH_LOG("no target");
	expect_state(_metadata, "off");
}

TEST_F(state, off_while_off_is_noop)
{
	EXPECT_EQ(0, dt_write("state", "off"));
	EXPECT_EQ(0, dt_write("state", "off\n")) TH_LOG("echo off");
	expect_state(_metadata, "off");
}

TEST_F(state, unknown_words_rejected)
{
	static const char * const bad[] = {
		"ON", "Off", "1", "0", "start", "on ", " on", "on\n\n", "\n",
		"o", "onn",
	};
	size_t i;

	add_child(_metadata, self, 0);
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		EXPECT_EQ(-EINVAL, dt_write("state", bad[i]))
			TH_LOG("state \"%s\": want EINVAL", bad[i]);
		expect_state(_metadata, "off");
	}
	EXPECT_EQ(0, dt_write_len("state", "", 0)) TH_LOG("empty write: no-op");
	expect_state(_metadata, "off");
}

TEST_F(state, on_off_on_cycle)
{
	pid_t pid = add_child(_metadata, self, 0);
	char word[32];

	ASSERT_EQ(0, dt_write("state", "on"));
	expect_state(_metadata, "on");
	ASSERT_EQ(0, dt_target_status(pid, word, sizeof(word)));
	EXPECT_STREQ("monitoring", word);
	EXPECT_EQ(0, dt_write("state", "on\n")) TH_LOG("on while on: no-op");
	expect_state(_metadata, "on");

	ASSERT_EQ(0, dt_write("state", "off"));
	expect_state(_metadata, "off");
	ASSERT_EQ(0, dt_target_status(pid, word, sizeof(word)));
	EXPECT_STREQ("idle", word);

	ASSERT_EQ(0, dt_write("state", "on")) TH_LOG("on again after off");
	expect_state(_metadata, "on");
	ASSERT_EQ(0, dt_write("state", "off"));
	expect_state(_metadata, "off");
}

TEST_F(state, config_writes_while_on_fail_ebusy_unchanged)
{
	static const struct { const char *file, *val; } writes[] = {
		{ "sample_us", "2000" }, { "aggr_us", "200000" },
		{ "update_us", "2000000" }, { "min_nr_regions", "20" },
		{ "max_nr_regions", "500" }, { "tlb_flush", "none" },
		{ "probe_pages", "8" }, { "probe_max_cpu_bp", "1000" },
		{ "recall_goal_bp", "9000" }, { "upper_scan", "off" },
	};
	char before[64], after[256], want[64];
	pid_t pid, other;
	size_t i;

	pid = add_child(_metadata, self, 0);
	ASSERT_EQ(0, dt_write("state", "on"));
	for (i = 0; i < ARRAY_SIZE(writes); i++) {
		ASSERT_LE(0, dt_read(writes[i].file, before, sizeof(before)));
		EXPECT_EQ(-EBUSY, dt_write(writes[i].file, writes[i].val))
			TH_LOG("%s = %s while on: want EBUSY", writes[i].file,
			       writes[i].val);
		ASSERT_LE(0, dt_read(writes[i].file, after, sizeof(after)));
		EXPECT_STREQ(before, after)
			TH_LOG("%s changed by a refused write", writes[i].file);
	}
	other = dt_spawn(0, 0);
	ASSERT_LT(0, other);
	self->child[self->nr++] = other;
	/* Targets may change while on: abi/targets. */
	ASSERT_LE(0, dt_read("target", after, sizeof(after)));
	snprintf(want, sizeof(want), "%d", pid);
	EXPECT_STREQ(want, after) TH_LOG("target list changed by refused writes");
	expect_state(_metadata, "on");

	/* After "off" the same writes go through. */
	ASSERT_EQ(0, dt_write("state", "off"));
	for (i = 0; i < ARRAY_SIZE(writes); i++) {
		const char *f = writes[i].file, *v = writes[i].val;

		EXPECT_EQ(0, dt_write(f, v)) TH_LOG("write %s after off", f);
	}
	EXPECT_EQ(0, dt_add_target(other));
}

TEST_F_TIMEOUT(state, counters_move_while_on, 60)
{
	long long samples, snaps, cpu, regions, seq0, seq, late, probe, nr_probe;
	double t0;

	add_child(_metadata, self, 64);
	seq0 = dt_read_ll("snapshot_seq");
	ASSERT_EQ(0, dt_write("state", "on"));
	t0 = dt_now_ms();
	while (dt_read_ll("nr_snapshots") < 5 && dt_now_ms() - t0 < 20000)
		dt_sleep_ms(50);
	samples = dt_read_ll("nr_samples");
	snaps = dt_read_ll("nr_snapshots");
	cpu = dt_read_ll("worker_cpu_us");
	regions = dt_read_ll("nr_regions");
	seq = dt_read_ll("snapshot_seq");
	late = dt_read_ll("nr_samples_late");
	probe = dt_read_ll("probe_us");
	nr_probe = dt_read_ll("nr_probe_pages");
	TH_LOG("after %.0f ms: nr_samples %lld nr_snapshots %lld worker_cpu_us %lld "
	       "probe_us %lld nr_probe_pages %lld nr_regions %lld nr_samples_late %lld "
	       "snapshot_seq %lld -> %lld", dt_now_ms() - t0, samples, snaps, cpu, probe,
	       nr_probe, regions, late, seq0, seq);
	EXPECT_LE(5, snaps) TH_LOG("5 snapshots of 100 ms within 20 s");
	EXPECT_LE(snaps, samples) TH_LOG("every window has a sample");
	EXPECT_LT(0, cpu) TH_LOG("the worker used CPU time");
	EXPECT_LT(0, probe) TH_LOG("the accuracy probes (probe_pages 64) took time");
	/* The cost bound's count: from its floor (2) to probe_pages. */
	EXPECT_LE(2, nr_probe) TH_LOG("nr_probe_pages at least the floor");
	EXPECT_GE(64, nr_probe) TH_LOG("nr_probe_pages at most probe_pages");
	EXPECT_LE((long long)DT_DEF_MIN_NR_REGIONS, regions)
		TH_LOG("nr_regions within [min_nr_regions, max_nr_regions]");
	EXPECT_GE((long long)DT_DEF_MAX_NR_REGIONS, regions);
	EXPECT_LE(seq0 + snaps, seq) TH_LOG("snapshot_seq advanced per snapshot");
	EXPECT_LE(0, late);

	/* After "off" the counters keep their values (one last snapshot). */
	ASSERT_EQ(0, dt_write("state", "off"));
	snaps = dt_read_ll("nr_snapshots");
	samples = dt_read_ll("nr_samples");
	dt_sleep_ms(300);
	EXPECT_EQ(snaps, dt_read_ll("nr_snapshots")) TH_LOG("frozen after off");
	EXPECT_EQ(samples, dt_read_ll("nr_samples")) TH_LOG("frozen after off");
	EXPECT_EQ(dt_read_ll("snapshot_seq"), seq0 + snaps)
		TH_LOG("one seq per snapshot, including the last one");

	/* "on" resets them. */
	ASSERT_EQ(0, dt_write("state", "on"));
	EXPECT_GT(samples, dt_read_ll("nr_samples")) TH_LOG("reset by on");
	EXPECT_GT(snaps, dt_read_ll("nr_snapshots")) TH_LOG("reset by on");

	/* Without probes, probe_us stays 0 while the worker works. */
	ASSERT_EQ(0, dt_write("state", "off"));
	ASSERT_EQ(0, dt_write("probe_pages", "0"));
	ASSERT_EQ(0, dt_write("state", "on"));
	t0 = dt_now_ms();
	while (dt_read_ll("nr_snapshots") < 3 && dt_now_ms() - t0 < 20000)
		dt_sleep_ms(50);
	EXPECT_LE(3, dt_read_ll("nr_snapshots"));
	EXPECT_EQ(0, dt_read_ll("probe_us")) TH_LOG("no probes, no probe time");
	EXPECT_EQ(0, dt_read_ll("nr_probe_pages")) TH_LOG("no probes asked for");
	ASSERT_EQ(0, dt_write("state", "off"));
	EXPECT_EQ(0, dt_write("probe_pages", "64"));

	/* Without a bound, probe_pages every window. */
	ASSERT_EQ(0, dt_write("probe_max_cpu_bp", "10000"));
	ASSERT_EQ(0, dt_write("state", "on"));
	t0 = dt_now_ms();
	while (dt_read_ll("nr_snapshots") < 2 && dt_now_ms() - t0 < 20000)
		dt_sleep_ms(50);
	EXPECT_EQ(64, dt_read_ll("nr_probe_pages")) TH_LOG("probe_max_cpu_bp 10000: no bound");
	ASSERT_EQ(0, dt_write("state", "off"));
	EXPECT_EQ(0, dt_write("probe_max_cpu_bp", "500"));
}

/* One target exits: reported as exited, the others go on. */
TEST_F_TIMEOUT(state, exit_of_one_target_is_reported, 60)
{
	char word[32];
	double ms;
	pid_t a, b;

	ASSERT_EQ(0, dt_set_attrs(FAST_SAMPLE_US, FAST_AGGR_US, DT_DEF_UPDATE_US,
				  DT_DEF_MIN_NR_REGIONS, DT_DEF_MAX_NR_REGIONS));
	a = add_child(_metadata, self, 0);
	b = add_child(_metadata, self, 0);
	ASSERT_EQ(0, dt_write("state", "on"));
	end_child(self, 0);
	ms = wait_status(a, "exited", 10000);
	TH_LOG("exit noticed after %.1f ms (aggregation %d ms)", ms,
	       FAST_AGGR_US / 1000);
	EXPECT_LE(0, ms) TH_LOG("target %d not reported exited within 10 s", a);
	ASSERT_EQ(0, dt_target_status(b, word, sizeof(word)));
	EXPECT_STREQ("monitoring", word) TH_LOG("the other target goes on");
	expect_state(_metadata, "on");
}

/*
 * The last live target exits: monitoring stops by itself within a few
 * aggregation intervals, state readers polling it wake up, the last
 * snapshot says so, and "on" now fails with ESRCH.
 */
TEST_F_TIMEOUT(state, exit_of_last_target_turns_off, 60)
{
	struct daptrace_snap_hdr sh;
	struct daptrace_ring_hdr rh;
	char buf[16], word[32], path[256];
	struct pollfd pfd;
	long long seq;
	double t0, ms;
	pid_t a;
	int fd, ret;

	ASSERT_EQ(0, dt_set_attrs(FAST_SAMPLE_US, FAST_AGGR_US, DT_DEF_UPDATE_US,
				  DT_DEF_MIN_NR_REGIONS, DT_DEF_MAX_NR_REGIONS));
	a = add_child(_metadata, self, 0);
	ASSERT_EQ(0, dt_write("state", "on"));
	/*
	 * Regions first: a target killed before the worker's first map update
	 * has none to carry into its last window (seen once on 6.12).
	 */
	t0 = dt_now_ms();
	while (dt_read_ll("nr_regions") <= 0 && dt_now_ms() - t0 < 5000)
		dt_sleep_ms(1);
	ASSERT_LT(0, dt_read_ll("nr_regions")) TH_LOG("no regions 5 s after on");

	fd = open(dt_path("state", path, sizeof(path)), O_RDONLY);
	ASSERT_LE(0, fd);
	ASSERT_LT(0, read(fd, buf, sizeof(buf))) TH_LOG("read arms poll");
	t0 = dt_now_ms();
	end_child(self, 0);
	pfd = (struct pollfd){ .fd = fd, .events = POLLPRI | POLLERR };
	ret = poll(&pfd, 1, 10000);
	ms = dt_now_ms() - t0;
	TH_LOG("state poll woke after %.1f ms (aggregation %d ms)", ms,
	       FAST_AGGR_US / 1000);
	EXPECT_EQ(1, ret) TH_LOG("poll on state did not wake within 10 s");
	EXPECT_TRUE(pfd.revents & POLLPRI);
	close(fd);

	t0 = dt_now_ms();
	while (dt_is_on() && dt_now_ms() - t0 < 5000)
		dt_sleep_ms(5);
	expect_state(_metadata, "off");
	ASSERT_EQ(0, dt_target_status(a, word, sizeof(word)));
	EXPECT_STREQ("exited", word);

	/* The newest snapshot is the last one and says a target exited. */
	seq = dt_read_ll("snapshot_seq");
	fd = open(dt_path("snapshots", path, sizeof(path)), O_RDONLY);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, dt_ring_hdr(fd, &rh));
	ASSERT_EQ(0, dt_slot_hdr(fd, &rh, seq, &sh));
	EXPECT_EQ(seq, sh.seq);
	EXPECT_TRUE(sh.flags & DAPTRACE_SNAP_LAST) TH_LOG("flags %#x", sh.flags);
	EXPECT_TRUE(sh.flags & DAPTRACE_SNAP_TARGET_EXITED)
		TH_LOG("flags %#x", sh.flags);
	/* ... and carries the regions measured in that window (issue 14). */
	EXPECT_LT(0, sh.nr_regions) TH_LOG("the last window lost its regions");
	if (sh.nr_regions) {
		struct daptrace_region_rec rec;

		ASSERT_EQ(sizeof(rec), dt_pread_all(fd, &rec, sizeof(rec),
						    dt_slot_off(&rh, seq) + rh.snap_hdr_size));
		EXPECT_EQ(a, rec.pid);
		EXPECT_LT(rec.start, rec.end);
	}
	close(fd);

	/* Nothing left to monitor; the target stays "exited". */
	EXPECT_EQ(-ESRCH, dt_write("state", "on")) TH_LOG("every target exited");
	expect_state(_metadata, "off");
	ASSERT_EQ(0, dt_target_status(a, word, sizeof(word)));
	EXPECT_STREQ("exited", word) TH_LOG("after the refused \"on\"");
	/* Off by itself means off: configuration is writable again. */
	EXPECT_EQ(0, dt_write("aggr_us", "20000"));
	EXPECT_EQ(0, dt_remove_target(a));
}

/*
 * A target written while the worker is ending (its last target exited, the
 * last snapshot is out) is either applied, and monitored, or refused with
 * EAGAIN; never accepted as "joining" and then left unsampled with state
 * reading "off".  The write is timed into that moment: woken by the last
 * snapshot's notification, while the worker frees the exited target's
 * thousands of regions.  Each round ends one of three ways: the target
 * joined (state stays on), it was refused, or it came after the worker
 * ended (a plain write to a stopped monitor, not "joining").
 */
TEST_F_TIMEOUT(state, target_written_while_ending, 300)
{
	unsigned int round, joined = 0, refused = 0, late = 0, lost = 0;
	char buf[32], word[32], path[256];
	struct pollfd pfd;
	double t0;
	pid_t a, b;
	int fd, err;

	ASSERT_EQ(0, dt_set_attrs(FAST_SAMPLE_US, FAST_AGGR_US, DT_DEF_UPDATE_US,
				  5000, 5000));
	b = dt_spawn(0, 0);
	ASSERT_LT(0, b);
	self->child[self->nr++] = b;
	for (round = 0; round < 40 && refused + lost < 5; round++) {
		a = dt_spawn(64 << 20, 4096);
		ASSERT_LT(0, a);
		ASSERT_EQ(0, dt_add_target(a));
		ASSERT_EQ(0, dt_write("state", "on"));
		t0 = dt_now_ms();
		while (dt_read_ll("nr_regions") < 1000 && dt_now_ms() - t0 < 5000)
			dt_sleep_ms(1);
		fd = open(dt_path("snapshot_seq", path, sizeof(path)), O_RDONLY);
		ASSERT_LE(0, fd);
		dt_reap(a);
		ASSERT_LT(0, pread(fd, buf, sizeof(buf), 0)) TH_LOG("arms poll");
		pfd = (struct pollfd){ .fd = fd, .events = POLLPRI | POLLERR };
		poll(&pfd, 1, 5000);
		err = dt_add_target(b);
		close(fd);
		word[0] = 0;
		if (!err)
			dt_target_status(b, word, sizeof(word));
		if (err == -EAGAIN) {
			refused++;
		} else if (!err && !strcmp(word, "joining")) {
			/* Accepted to join: it must be monitored. */
			t0 = dt_now_ms();
			while (dt_now_ms() - t0 < 20 * FAST_AGGR_US / 1000 &&
			       (dt_is_on() && !dt_target_status(b, word, sizeof(word)) &&
				!strcmp(word, "joining")))
				dt_sleep_ms(1);
			dt_sleep_ms(2 * FAST_AGGR_US / 1000);
			if (dt_is_on())
				joined++;
			else
				lost++;
		} else {
			EXPECT_EQ(0, err) TH_LOG("round %u: %s", round, strerror(-err));
			late++;
		}
		dt_write("state", "off");
		dt_remove_target(a);
		dt_remove_target(b);
	}
	TH_LOG("%u rounds: joined %u, refused %u, after the end %u, "
	       "accepted and left unsampled %u", round, joined, refused, late, lost);
	EXPECT_EQ(0U, lost) TH_LOG("accepted as joining, then state off");
}

TEST_HARNESS_MAIN
