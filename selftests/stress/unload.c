// SPDX-License-Identifier: GPL-2.0
/*
 * rmmod torture: the module is unloaded and loaded again eight times while
 * monitoring runs at 1 ms sampling, with two readers blocked in poll() (on
 * snapshot_seq and on state), a reader looping over the snapshot ring and a
 * writer hammering the configuration files -- at random moments, including
 * right after "on" (worker maybe not started yet) and while the last target
 * is being killed (worker ending by itself).  Every reader must wake and see
 * ENODEV, nobody may hang, no worker thread may survive, and the reloaded
 * module must start from its defaults and monitor again.
 *
 * (selftests/abi/unload.c checks one unload per situation; this one repeats
 * them with everything at once and random timing.)
 */
#define _GNU_SOURCE
#include <poll.h>

#include "kselftest_harness.h"
#include "stress.h"

#define CYCLES		8
#define NOTICE_MS	5000

struct report {
	int read_err[2];	/* pollers: errno of the read after waking */
	int poll_ret[2];
	long long ring_reads;
	int ring_err;
};

/* Poll @name until a read after a wake-up fails; exits 0 then, 1 on timeout. */
static void poller(const char *name, struct report *rep, int idx, int ready_fd)
{
	char path[256], buf[64];
	struct pollfd p;
	int fd;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	fd = open(dt_path(name, path, sizeof(path)), O_RDONLY);
	if (fd < 0 || pread(fd, buf, sizeof(buf), 0) < 0)
		_exit(2);
	if (write(ready_fd, "r", 1) != 1)
		_exit(2);
	for (;;) {
		p = (struct pollfd){ .fd = fd, .events = POLLPRI | POLLERR };
		rep->poll_ret[idx] = poll(&p, 1, 20000);
		if (pread(fd, buf, sizeof(buf), 0) < 0) {
			rep->read_err[idx] = errno;
			_exit(0);
		}
		if (rep->poll_ret[idx] == 0)
			_exit(1);
	}
}

static void ring_reader(struct report *rep, int ready_fd)
{
	char path[256];
	int fd;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	fd = open(dt_path("snapshots", path, sizeof(path)), O_RDONLY);
	if (fd < 0 || write(ready_fd, "r", 1) != 1)
		_exit(2);
	rep->ring_err = dt_read_ring_until_error(fd, &rep->ring_reads);
	_exit(0);
}

/* Writes anything anywhere until killed; errors are expected. */
static void writer(pid_t target, int ready_fd)
{
	static const char * const files[] = { "sample_us", "aggr_us", "state",
					      "target", "target_remove",
					      "tlb_flush", "max_nr_regions" };
	char val[32];

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (write(ready_fd, "r", 1) != 1)
		_exit(2);
	for (;;) {
		const char *f = files[st_rand_below(7)];

		if (!strcmp(f, "state"))
			snprintf(val, sizeof(val), "%s", st_rand_below(2) ? "on" : "off");
		else if (!strcmp(f, "tlb_flush"))
			snprintf(val, sizeof(val), "%s", st_rand_below(2) ? "mm" : "round");
		else if (f[0] == 't')
			snprintf(val, sizeof(val), "%d", target);
		else
			snprintf(val, sizeof(val), "%u", 1000 + st_rand_below(20000));
		dt_write(f, val);
		usleep(st_rand_below(500));
	}
}

FIXTURE(rmmod) {
	const char *ko;
	pid_t target, kids[4];
	struct report *rep;
};

FIXTURE_SETUP(rmmod)
{
	self->target = 0;
	memset(self->kids, 0, sizeof(self->kids));
	self->rep = NULL;
	DT_SKIP_UNLESS_RELOADABLE(self->ko);
	ASSERT_EQ(0, dt_reset());
	self->rep = dt_shared(sizeof(*self->rep));
	ASSERT_NE(NULL, self->rep);
}

FIXTURE_TEARDOWN(rmmod)
{
	int i;

	if (!dt_loaded() && self->ko)
		dt_module_load(self->ko);
	if (dt_loaded())
		dt_reset();
	for (i = 0; i < 4; i++)
		dt_reap(self->kids[i]);
	dt_reap(self->target);
	if (self->rep)
		munmap(self->rep, sizeof(*self->rep));
}

/* Monitoring on, of the target (a new one if the last was killed). */
static void monitor_target(struct __test_metadata *_metadata,
			   FIXTURE_DATA(rmmod) *self)
{
	if (!self->target) {
		self->target = st_toucher(8, 1000);
		ASSERT_LT(0, self->target);
	}
	ASSERT_EQ(0, dt_add_target(self->target));
	ASSERT_EQ(0, dt_set_attrs(1000, 10000, 10000, 10, 500));
	ASSERT_EQ(0, dt_write("state", "on"));
}

static void expect_defaults(struct __test_metadata *_metadata)
{
	char buf[64];

	EXPECT_FALSE(dt_is_on());
	EXPECT_EQ(0, dt_read("target", buf, sizeof(buf)));
	EXPECT_EQ(0, dt_read_ll("snapshot_seq"));
	EXPECT_EQ(0, dt_read_ll("nr_snapshots"));
	EXPECT_EQ(DT_DEF_SAMPLE_US, dt_read_ll("sample_us"));
	EXPECT_EQ(DT_DEF_AGGR_US, dt_read_ll("aggr_us"));
	EXPECT_EQ(DT_DEF_MAX_NR_REGIONS, dt_read_ll("max_nr_regions"));
	ASSERT_LT(0, dt_read("tlb_flush", buf, sizeof(buf)));
	EXPECT_STREQ(DT_DEF_TLB_FLUSH, buf);
}

TEST_F_TIMEOUT(rmmod, rmmod_insmod_cycles_under_load, 240)
{
	struct report *rep = self->rep;
	int cycle, i, status, pfd[2];
	unsigned int delay_ms;
	bool kill_target;
	double t_rmmod;
	char c;

	ksft_print_msg("seed %#llx (DT_STRESS_SEED)\n", st_seed());
	for (cycle = 0; cycle < CYCLES; cycle++) {
		delay_ms = cycle == 0 ? 0 : st_rand_below(300);
		kill_target = cycle % 3 == 2;
		memset(rep, 0, sizeof(*rep));
		monitor_target(_metadata, self);

		ASSERT_EQ(0, pipe(pfd));
		for (i = 0; i < 4; i++) {
			self->kids[i] = fork();
			ASSERT_LE(0, self->kids[i]);
			if (self->kids[i])
				continue;
			close(pfd[0]);
			st_rand_state += getpid();
			if (i < 2)
				poller(i ? "state" : "snapshot_seq", rep, i, pfd[1]);
			else if (i == 2)
				ring_reader(rep, pfd[1]);
			else
				writer(self->target, pfd[1]);
		}
		close(pfd[1]);
		for (i = 0; i < 4; i++)
			ASSERT_EQ(1, read(pfd[0], &c, 1)) TH_LOG("helper %d failed", i);
		close(pfd[0]);

		dt_sleep_ms(delay_ms);
		if (kill_target)
			kill(self->target, SIGKILL);
		t_rmmod = dt_now_ms();
		ASSERT_EQ(0, dt_module_unload()) TH_LOG("cycle %d: rmmod", cycle);
		ASSERT_FALSE(dt_loaded());
		EXPECT_EQ(0, st_wait_workers(0, 2000)) TH_LOG("worker survived rmmod");

		kill(self->kids[3], SIGKILL);	/* the writer */
		for (i = 0; i < 4; i++) {
			status = dt_wait_exit(self->kids[i], NOTICE_MS);
			EXPECT_NE(-1, status)
				TH_LOG("cycle %d: helper %d hangs after rmmod", cycle, i);
			if (status == -1)
				continue;
			self->kids[i] = 0;
			if (i < 3)
				EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status))
					TH_LOG("cycle %d: reader %d status %#x", cycle,
					       i, status);
		}
		EXPECT_EQ(ENODEV, rep->read_err[0]);
		EXPECT_EQ(ENODEV, rep->read_err[1]);
		EXPECT_EQ(ENODEV, rep->ring_err);
		ksft_print_msg("cycle %d: rmmod after %u ms%s, readers done %.0f ms "
			       "later (%lld ring reads)\n", cycle, delay_ms,
			       kill_target ? " with the target killed" : "",
			       dt_now_ms() - t_rmmod, rep->ring_reads);
		if (kill_target) {
			waitpid(self->target, NULL, 0);
			self->target = 0;
		}

		ASSERT_EQ(0, dt_module_load(self->ko)) TH_LOG("insmod %s", self->ko);
		ASSERT_TRUE(dt_loaded());
		expect_defaults(_metadata);
		if (_metadata->exit_code)
			break;
	}

	/* The last module loaded monitors as it should. */
	monitor_target(_metadata, self);
	EXPECT_LE(0, st_wait_ge("nr_snapshots", 5, 10000));
	EXPECT_EQ(0, dt_write("state", "off"));
	EXPECT_EQ(0, st_wait_workers(0, 2000));
}

TEST_HARNESS_MAIN
