// SPDX-License-Identifier: GPL-2.0
/*
 * snapshot_seq is pollable: a reader blocked in poll(POLLPRI | POLLERR)
 * after reading the file wakes when the next snapshot is published, within
 * about one aggregation interval, and not while nothing is published.  A
 * publish that follows no read of the file notifies nobody (inotify shows
 * it): every poller reads the file before it polls.
 */
#define _GNU_SOURCE
#include <poll.h>
#include <sys/inotify.h>

#include "kselftest_harness.h"
#include "daptrace_sysfs.h"
#include "dt_child.h"

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
	DT_SKIP_UNLESS_LOADED();
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

TEST_F_TIMEOUT(poll, wakes_after_each_publish, 60)
{
	double t0, ms, min = 1e9, max = 0, sum = 0;
	struct pollfd pfd;
	long long seq, next;
	int i, ret;

	ASSERT_EQ(0, dt_write("state", "on"));
	seq = dt_pread_ll(self->fd);
	ASSERT_LE(0, seq);
	for (i = 0; i < NR_WAKES; i++) {
		/*
		 * A read that lands between a publish and its notification
		 * sees the new seq and is woken once more for it: poll
		 * again until a newer one shows.
		 */
		t0 = dt_now_ms();
		do {
			pfd = (struct pollfd){ .fd = self->fd,
					       .events = POLLPRI | POLLERR };
			ret = poll(&pfd, 1, WAKE_LIMIT_MS);
			ms = dt_now_ms() - t0;
			ASSERT_EQ(1, ret) {
				TH_LOG("wake %d: poll returned %d after %.1f ms; want "
				       "a wake-up within %d ms (aggregation %d ms)",
				       i, ret, ms, WAKE_LIMIT_MS, AGGR_MS);
			}
			EXPECT_TRUE(pfd.revents & POLLPRI) TH_LOG("revents %#x", pfd.revents);
			next = dt_pread_ll(self->fd);
		} while (next <= seq && ms < WAKE_LIMIT_MS);
		ASSERT_LT(seq, next) TH_LOG("no new snapshot within %d ms", WAKE_LIMIT_MS);
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

	seq = dt_pread_ll(self->fd);
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

	ASSERT_LE(0, dt_pread_ll(self->fd));
	EXPECT_EQ(0, poll(&pfd, 1, 3 * AGGR_MS)) {
		TH_LOG("poll woke (revents %#x) though monitoring is off",
		       pfd.revents);
	}
}

/* inotify IN_MODIFY events on snapshot_seq within @ms, read one by one. */
static int count_modify_events(int in_fd, int ms)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	struct pollfd pfd = { .fd = in_fd, .events = POLLIN };
	double t0 = dt_now_ms(), left;
	int n = 0;
	ssize_t len;

	/* Each event read at once, lest inotify merge identical ones. */
	while ((left = ms - (dt_now_ms() - t0)) > 0) {
		if (poll(&pfd, 1, (int)left) <= 0)
			continue;
		len = read(in_fd, buf, sizeof(buf));
		for (char *p = buf; len > 0 && p < buf + len;
		     p += sizeof(struct inotify_event) + ((struct inotify_event *)p)->len)
			n += !!(((struct inotify_event *)p)->mask & IN_MODIFY);
	}
	return n;
}

/*
 * Publishes that follow no read of snapshot_seq notify nobody (no kworker
 * woken per window while no one waits): over 8 windows without a read at
 * most one late event from before them; after a read, the next publish
 * notifies once.
 */
TEST_F_TIMEOUT(poll, no_notification_without_a_read, 60)
{
	char path[256];
	int in_fd, n;

	in_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (in_fd < 0 && errno == ENOSYS)
		SKIP(return, "kernel without inotify (CONFIG_INOTIFY_USER)");
	ASSERT_LE(0, in_fd) TH_LOG("inotify_init1: %s", strerror(errno));
	ASSERT_LE(0, inotify_add_watch(in_fd, dt_path("snapshot_seq", path, sizeof(path)),
				       IN_MODIFY)) {
		TH_LOG("inotify_add_watch: %s", strerror(errno));
		close(in_fd);
	}
	ASSERT_EQ(0, dt_write("state", "on"));
	/* Whatever a read before "on" armed is spent in the first windows. */
	count_modify_events(in_fd, 3 * AGGR_MS);
	n = count_modify_events(in_fd, 8 * AGGR_MS);
	EXPECT_GE(1, n) TH_LOG("%d notifications in 8 windows nobody read", n);
	ASSERT_LE(0, dt_pread_ll(self->fd));
	n = count_modify_events(in_fd, WAKE_LIMIT_MS);
	EXPECT_EQ(1, n) TH_LOG("%d notifications in %d ms after one read", n, WAKE_LIMIT_MS);
	close(in_fd);
}

TEST_HARNESS_MAIN
