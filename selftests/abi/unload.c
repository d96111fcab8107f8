// SPDX-License-Identifier: GPL-2.0
/*
 * Module unload with readers in flight: a reader blocked in poll() on
 * snapshot_seq, or one reading snapshots in a loop, must not hang or crash
 * when the module goes away -- its poll returns or its next read fails with
 * ENODEV.  The module is always loaded again (DAPTRACE_KO names it).
 */
#define _GNU_SOURCE
#include <poll.h>

#include "kselftest_harness.h"
#include "daptrace_sysfs.h"
#include "dt_child.h"

/* How long the reader may take to notice the unload. */
#define NOTICE_MS	3000
/* The reader's own give-up time: a reader that never wakes ends here. */
#define READER_POLL_MS	8000

struct reader_report {
	double woke_ms;		/* CLOCK_MONOTONIC when poll returned */
	int poll_ret;
	int revents;
	int read_err;		/* errno of the read after the wake-up */
	long long nr_reads;	/* snapshots reader: reads before the error */
};

FIXTURE(unload) {
	const char *ko;
	pid_t target, reader;
	struct reader_report *rep;
};

FIXTURE_SETUP(unload)
{
	self->target = self->reader = 0;
	self->rep = NULL;
	DT_SKIP_UNLESS_RELOADABLE(self->ko);
	ASSERT_EQ(0, dt_reset());
	self->rep = dt_shared(sizeof(*self->rep));
	ASSERT_NE(NULL, self->rep);
	self->target = dt_spawn(0, 0);
	ASSERT_LT(0, self->target);
}

FIXTURE_TEARDOWN(unload)
{
	/* Always leave a loaded, idle module behind. */
	if (!dt_loaded() && self->ko)
		dt_module_load(self->ko);
	if (dt_loaded())
		dt_reset();
	dt_reap(self->reader);
	dt_reap(self->target);
	if (self->rep)
		munmap(self->rep, sizeof(*self->rep));
}

/* Child: open, read (arms poll), poll until a wake-up with a failing read. */
static void poll_reader(int ready_fd, void *arg)
{
	struct reader_report *rep = arg;
	char path[256], buf[32], c = 0;
	struct pollfd p;
	int fd;

	fd = open(dt_path("snapshot_seq", path, sizeof(path)), O_RDONLY);
	if (fd < 0 || pread(fd, buf, sizeof(buf), 0) <= 0)
		_exit(2);
	dt_child_ready(ready_fd, &c, 1);
	for (;;) {
		p = (struct pollfd){ .fd = fd, .events = POLLPRI | POLLERR };
		rep->poll_ret = poll(&p, 1, READER_POLL_MS);
		rep->woke_ms = dt_now_ms();
		rep->revents = p.revents;
		if (pread(fd, buf, sizeof(buf), 0) < 0) {
			rep->read_err = errno;
			_exit(0);
		}
		if (rep->poll_ret == 0)
			_exit(1);	/* timed out, file still fine */
	}
}

static pid_t start_poll_reader(struct reader_report *rep)
{
	char c;

	return dt_fork_ready(poll_reader, rep, &c, 1, NULL);
}

static void unload_with_poller(struct __test_metadata *_metadata,
			       FIXTURE_DATA(unload) *self, bool on)
{
	double t_rmmod;
	int status;

	ASSERT_EQ(0, dt_add_target(self->target));
	if (on) {
		/* Windows longer than the test: only the unload publishes. */
		ASSERT_EQ(0, dt_set_attrs(5000, 60000000, 60000000, 10, 1000));
		ASSERT_EQ(0, dt_write("state", "on"));
	}
	self->reader = start_poll_reader(self->rep);
	ASSERT_LT(0, self->reader);
	dt_sleep_ms(200);	/* let it block in poll() */

	t_rmmod = dt_now_ms();
	ASSERT_EQ(0, dt_module_unload()) TH_LOG("rmmod with a reader in poll()");
	ASSERT_FALSE(dt_loaded());
	status = dt_wait_exit(self->reader, READER_POLL_MS + 2000);
	ASSERT_NE(-1, status) TH_LOG("reader still blocked: hung");
	self->reader = 0;
	TH_LOG("monitoring %s: reader woke %.1f ms after rmmod (poll %d, revents "
	       "%#x), then read: %s", on ? "on" : "off",
	       self->rep->woke_ms - t_rmmod, self->rep->poll_ret,
	       self->rep->revents, strerror(self->rep->read_err));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
		TH_LOG("reader: read still worked after its wake-up");
	EXPECT_EQ(ENODEV, self->rep->read_err) TH_LOG("read of a removed file");
	EXPECT_EQ(1, self->rep->poll_ret) TH_LOG("poll woke, did not time out");
	EXPECT_GT(NOTICE_MS, self->rep->woke_ms - t_rmmod)
		TH_LOG("the unload should wake a poller promptly");

	ASSERT_EQ(0, dt_module_load(self->ko)) TH_LOG("insmod %s", self->ko);
	ASSERT_TRUE(dt_loaded());
}

TEST_F_TIMEOUT(unload, rmmod_wakes_poller_while_on, 60)
{
	unload_with_poller(_metadata, self, true);
}

TEST_F_TIMEOUT(unload, rmmod_wakes_poller_while_off, 60)
{
	unload_with_poller(_metadata, self, false);
}

/* A reader looping over the ring while the module goes away gets ENODEV. */
TEST_F_TIMEOUT(unload, rmmod_while_reading_snapshots, 60)
{
	struct reader_report *rep = self->rep;
	double t_rmmod;
	int status;
	pid_t pid;

	ASSERT_EQ(0, dt_add_target(self->target));
	ASSERT_EQ(0, dt_set_attrs(2000, 10000, 1000000, 10, 1000));
	ASSERT_EQ(0, dt_write("state", "on"));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		char path[256];
		int fd;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		fd = open(dt_path("snapshots", path, sizeof(path)), O_RDONLY);
		if (fd < 0)
			_exit(2);
		rep->read_err = dt_read_ring_until_error(fd, &rep->nr_reads);
		rep->woke_ms = dt_now_ms();
		_exit(0);
	}
	self->reader = pid;
	while (rep->nr_reads < 100)
		dt_sleep_ms(10);
	t_rmmod = dt_now_ms();
	ASSERT_EQ(0, dt_module_unload()) TH_LOG("rmmod with a reader reading");
	status = dt_wait_exit(pid, 10000);
	ASSERT_NE(-1, status) TH_LOG("reader did not notice the unload");
	self->reader = 0;
	TH_LOG("%lld reads, then %s %.1f ms after rmmod", rep->nr_reads,
	       strerror(rep->read_err), rep->woke_ms - t_rmmod);
	EXPECT_EQ(ENODEV, rep->read_err);
	ASSERT_EQ(0, dt_module_load(self->ko)) TH_LOG("insmod %s", self->ko);
}

/*
 * The files go with rmmod, not some time later: with
 * CONFIG_DEBUG_KOBJECT_RELEASE a kobject's release (and, without an explicit
 * kobject_del(), the removal of its files) is delayed by seconds, and a write
 * in that gap runs the freed module's store handler.  Right after rmmod an
 * open file must fail with ENODEV, a new open with ENOENT, and loading the
 * module again must not find /sys/kernel/daptrace still there.
 */
TEST_F_TIMEOUT(unload, write_state_right_after_rmmod, 60)
{
	char path[256];
	int fd, fd2, i;
	ssize_t n;

	ASSERT_EQ(0, dt_add_target(self->target));
	fd = open(dt_path("state", path, sizeof(path)), O_WRONLY);
	ASSERT_LE(0, fd) TH_LOG("open state: %s", strerror(errno));
	ASSERT_EQ(0, dt_module_unload()) TH_LOG("rmmod");
	for (i = 0; i < 100; i++) {
		n = write(fd, "on", 2);
		EXPECT_EQ(-1, n) TH_LOG("write %d to an open state file after rmmod", i);
		EXPECT_EQ(ENODEV, errno);
		fd2 = open(path, O_WRONLY);
		EXPECT_EQ(-1, fd2) TH_LOG("%s still there after rmmod", path);
		if (fd2 >= 0)
			close(fd2);
		else
			EXPECT_EQ(ENOENT, errno);
	}
	close(fd);
	n = dt_module_load(self->ko);
	ASSERT_EQ(0, n) TH_LOG("insmod right after rmmod: %s", strerror(-n));
	ASSERT_TRUE(dt_loaded());
}

TEST_HARNESS_MAIN
