// SPDX-License-Identifier: GPL-2.0
/*
 * snapshot_seq is pollable: a reader blocked in poll(POLLPRI | POLLERR)
 * after reading the file wakes when the next snapshot is published, within
 * about one aggregation interval, and not while nothing is published.
 */
#define _GNU_SOURCE
#include <poll.h>

#include "kselftest_harness.h"
#include "daptrace_sysfs.h"

/* 100 ms windows; under TCG allow up to 2 s for a wake-up. */
#define AGGR_MS		100
#define WAKE_LIMIT_MS	2000
#define NR_WAKES	5

FIXTURE(poll) {
	pid_t child;
	int fd;
};

FIXTURE_SETUP(poll)
{
	char path[256];

	self->child = 0;
	self->fd = -1;
	if (getuid())
		SKIP(return, "needs root");
	if (!dt_loaded())
		SKIP(return, "daptrace not loaded (%s missing)", DT_SYSFS);
	ASSERT_EQ(0, dt_reset()) TH_LOG("cannot reset daptrace to defaults");
	self->child = dt_spawn(0, 0);
	ASSERT_LT(0, self->child);
	ASSERT_EQ(0, dt_add_target(self->child));
	ASSERT_EQ(0, dt_set_attrs(5000, AGGR_MS * 1000, DT_DEF_UPDATE_US,
				  DT_DEF_MIN_NR_REGIONS, DT_DEF_MAX_NR_REGIONS));
	self->fd = open(dt_path("snapshot_seq", path, sizeof(path)), O_RDONLY);
	ASSERT_LE(0, self->fd) TH_LOG("open snapshot_seq: %s", strerror(errno));
}

FIXTURE_TEARDOWN(poll)
{
	if (self->fd >= 0)
		close(self->fd);
	dt_reset();
	dt_reap(self->child);
}

/* Read the open file from the start: the value, and it re-arms poll. */
static long long reread(int fd)
{
	char buf[32];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);

	if (n <= 0)
		return -1;
	buf[n] = '\0';
	return strtoll(buf, NULL, 10);
}

TEST_F_TIMEOUT(poll, wakes_after_each_publish, 60)
{
	double t0, ms, min = 1e9, max = 0, sum = 0;
	struct pollfd pfd;
	long long seq, next;
	int i, ret;

	ASSERT_EQ(0, dt_write("state", "on"));
	seq = reread(self->fd);
	ASSERT_LE(0, seq);
	for (i = 0; i < NR_WAKES; i++) {
		pfd = (struct pollfd){ .fd = self->fd, .events = POLLPRI | POLLERR };
		t0 = dt_now_ms();
		ret = poll(&pfd, 1, WAKE_LIMIT_MS);
		ms = dt_now_ms() - t0;
		ASSERT_EQ(1, ret) {
			TH_LOG("wake %d: poll returned %d after %.1f ms; want a "
			       "wake-up within %d ms (aggregation %d ms)", i,
			       ret, ms, WAKE_LIMIT_MS, AGGR_MS);
		}
		EXPECT_TRUE(pfd.revents & POLLPRI) TH_LOG("revents %#x", pfd.revents);
		next = reread(self->fd);
		EXPECT_LT(seq, next) TH_LOG("woke without a new snapshot");
		seq = next;
		min = ms < min ? ms : min;
		max = ms > max ? ms : max;
		sum += ms;
	}
	TH_LOG("poll wake-up latency over %d publishes: min %.1f avg %.1f max "
	       "%.1f ms, aggregation interval %d ms", NR_WAKES, min,
	       sum / NR_WAKES, max, AGGR_MS);
	EXPECT_GT(WAKE_LIMIT_MS, max);
}

/* A publish between read and poll is not lost: poll returns at once. */
TEST_F(poll, publish_before_poll_is_not_lost)
{
	struct pollfd pfd = { .fd = self->fd, .events = POLLPRI | POLLERR };
	long long seq;
	double t0;

	seq = reread(self->fd);
	ASSERT_EQ(0, dt_write("state", "on"));
	t0 = dt_now_ms();
	while (dt_read_ll("snapshot_seq") <= seq && dt_now_ms() - t0 < 5000)
		dt_sleep_ms(5);
	ASSERT_LT(seq, dt_read_ll("snapshot_seq")) TH_LOG("nothing published");
	ASSERT_EQ(0, dt_write("state", "off"));
	EXPECT_EQ(1, poll(&pfd, 1, 0)) TH_LOG("pending event must show at once");
	EXPECT_TRUE(pfd.revents & POLLPRI);
}

/* No publish, no wake-up: monitoring off, poll times out. */
TEST_F(poll, no_wake_while_off)
{
	struct pollfd pfd = { .fd = self->fd, .events = POLLPRI | POLLERR };

	ASSERT_LE(0, reread(self->fd));
	EXPECT_EQ(0, poll(&pfd, 1, 3 * AGGR_MS)) {
		TH_LOG("poll woke (revents %#x) though monitoring is off",
		       pfd.revents);
	}
}

TEST_HARNESS_MAIN
