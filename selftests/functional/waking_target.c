// SPDX-License-Identifier: GPL-2.0
/*
 * Among many idle targets, one that wakes is measured from the window it
 * woke in (kernel/vaddr.c, daptrace_va_sample()): with 4096 targets an idle
 * one is asked whether it ran only every 64 passes, more than three default
 * windows, and while every target is idle the worker sleeps to the next
 * aggregation, so its turns came round once per window; until then its
 * checks read "not accessed".  Now every window's last pass asks every
 * target, and the checks skipped before a target is found running are
 * unobserved, not cold.
 *
 * 4095 sleeping processes and one stopped process with a 32 MiB hot set
 * are the 4096 targets; once the windows are quiet, the stopped one is
 * resumed late in a window, and writes its hot set from then on.
 * Its recall (hot bytes in regions with an access, over all hot bytes) in
 * each of the first two windows whose last pass began after it ran must be
 * >= 0.9.
 *
 * Not simply the window it woke in: its last pass asks 4096 targets, the
 * hot one first, and the window's end is read after the pass.  Woken after
 * its own check in that pass, it is rightly measured from the next window
 * on, though it ran before the published end (the snapshot says by how much
 * the end is blurred: last_pass_us).  Before the fix its checks read "not
 * accessed" for 64 passes, past the windows judged here.
 */
#define _GNU_SOURCE
#include <sys/mman.h>
#include <poll.h>

#include "kselftest_harness.h"
#include "daptrace_sysfs.h"
#include "dt_child.h"

#define HOT_BYTES	(32UL << 20)
#define NR_SLEEPERS	(DT_MAX_TARGETS - 1)

static pid_t sleepers[NR_SLEEPERS];
/* The hot child writes here when it first runs after its SIGCONT. */
static int hot_running_fd = -1;
static unsigned int nr_sleepers;

static void hot_child(int ready_fd, void *arg)
{
	volatile char *p = dt_map_touched(HOT_BYTES, MAP_PRIVATE | MAP_ANONYMOUS,
					  4096);
	unsigned long addr = (unsigned long)p;
	struct timespec ts;
	__u64 ran_ns;
	size_t off;

	if (!p)
		_exit(1);
	/* Stopped before it goes on (see the caller). */
	dt_child_ready(ready_fd, &addr, sizeof(addr));
	raise(SIGSTOP);
	/* Resumed: one sweep, then say when (see the caller), and on. */
	for (off = 0; off < HOT_BYTES; off += 4096)
		p[off]++;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	ran_ns = ts.tv_sec * 1000000000ULL + ts.tv_nsec;
	dt_child_ready(ready_fd, &ran_ns, sizeof(ran_ns));
	for (;;)
		for (off = 0; off < HOT_BYTES; off += 4096)
			p[off]++;
}

/* A child that writes one byte per page of @HOT_BYTES forever; @addr. */
static pid_t spawn_hot(unsigned long *addr)
{
	return dt_fork_ready(hot_child, NULL, addr, sizeof(*addr),
			     &hot_running_fd);
}

/* Wait until @pid is stopped (state T in /proc/PID/stat). */
static bool wait_stopped(pid_t pid)
{
	char path[64], buf[256], *c;
	double t0 = dt_now_ms();
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	while (dt_now_ms() - t0 < 5000) {
		f = fopen(path, "r");
		if (!f)
			return false;
		c = fgets(buf, sizeof(buf), f) ? strrchr(buf, ')') : NULL;
		fclose(f);
		if (c && c[1] == ' ' && c[2] == 'T')
			return true;
		dt_sleep_ms(1);
	}
	return false;
}

/* Recall of [lo, hi) of @pid in the copied slot @buf. */
static double recall(const struct daptrace_ring_hdr *rh, const void *buf,
		     pid_t pid, unsigned long lo, unsigned long hi,
		     unsigned long long *unobserved)
{
	const struct daptrace_snap_hdr *sh = buf;
	struct dt_tally t = { .lo = lo, .hi = hi };
	unsigned int i;

	for (i = 0; i < sh->nr_regions; i++) {
		const struct daptrace_region_rec *r = dt_slot_rec(rh, buf, i);

		if (r->pid == pid)
			dt_tally_region(&t, r, sh->nr_samples);
	}
	*unobserved = t.unobserved;
	return t.hot_bytes ? t.hot_seen / t.hot_bytes : -1;
}

FIXTURE(waking) {
	pid_t hot;
};

FIXTURE_SETUP(waking)
{
	self->hot = 0;
	DT_SKIP_UNLESS_LOADED();
	ASSERT_EQ(0, dt_reset()) TH_LOG("cannot reset daptrace to defaults");
}

FIXTURE_TEARDOWN(waking)
{
	dt_reset();
	if (self->hot > 0) {
		kill(self->hot, SIGCONT);
		dt_reap(self->hot);
	}
	while (nr_sleepers)
		dt_reap(sleepers[--nr_sleepers]);
}

TEST_F_TIMEOUT(waking, one_of_4096_wakes, 900)
{
	struct daptrace_ring_hdr rh;
	struct daptrace_snap_hdr *sh;
	unsigned long long unobs[2];
	unsigned long addr;
	double rec[2], t0;
	long long seq, from;
	char path[256], buf[32];
	struct pollfd pfd;
	__u64 wake_ns;
	unsigned int got = 0, tries;
	void *slot;
	int fd, sfd;
	pid_t pid;

	self->hot = spawn_hot(&addr);
	ASSERT_LT(0, self->hot) TH_LOG("fork the hot target");
	ASSERT_TRUE(wait_stopped(self->hot));
	ASSERT_EQ(0, dt_add_target(self->hot));
	while (nr_sleepers < NR_SLEEPERS) {
		pid = dt_spawn(0, 0);
		ASSERT_LT(0, pid) TH_LOG("sleeper %u", nr_sleepers);
		sleepers[nr_sleepers++] = pid;
		ASSERT_EQ(0, dt_add_target(pid)) TH_LOG("target %u", nr_sleepers);
	}
	ASSERT_EQ(DT_MAX_TARGETS, dt_read_ll("nr_targets"));

	ASSERT_EQ(0, dt_write("state", "on"));
	/* Quiet windows first: every target found idle. */
	seq = dt_read_ll("snapshot_seq");
	t0 = dt_now_ms();
	while (dt_read_ll("snapshot_seq") < seq + 10 && dt_now_ms() - t0 < 120000)
		dt_sleep_ms(50);
	ASSERT_LE(seq + 10, dt_read_ll("snapshot_seq")) TH_LOG("10 windows");

	/*
	 * Resume it in the middle of a window: after the pass that prepares
	 * the window's samples (which asks every quiet target, so one resumed
	 * before it is found running there), before the window's last pass
	 * (which, asking 4096 targets, takes a good part of the window here).
	 * So: 50 ms into a 100 ms window, timed from its start's publish,
	 * unless another publish came meanwhile.
	 */
	sfd = open(dt_path("snapshot_seq", path, sizeof(path)), O_RDONLY);
	ASSERT_LE(0, sfd);
	for (tries = 0; tries < 100; tries++) {
		ASSERT_LT(0, pread(sfd, buf, sizeof(buf), 0));
		pfd = (struct pollfd){ .fd = sfd, .events = POLLPRI | POLLERR };
		ASSERT_EQ(1, poll(&pfd, 1, 10000)) TH_LOG("no window in 10 s");
		from = dt_read_ll("snapshot_seq");
		dt_sleep_ms(DT_DEF_AGGR_US / 1000 / 2);
		if (dt_read_ll("snapshot_seq") == from)
			break;
	}
	ASSERT_GT(100, tries) TH_LOG("no window longer than 50 ms");
	kill(self->hot, SIGCONT);
	close(sfd);
	/*
	 * The wake is when it had run one sweep, not when it was sent
	 * SIGCONT: on a busy emulated machine it may be scheduled much later.
	 * Its clock is the snapshots' (CLOCK_MONOTONIC, ktime_get()).  Every
	 * check of it since its last prepare before the wake together covers
	 * that sweep, so a window whose last pass began after it sees each page.
	 */
	pfd = (struct pollfd){ .fd = hot_running_fd, .events = POLLIN };
	ASSERT_EQ(1, poll(&pfd, 1, 60000)) TH_LOG("the hot target did not run in 60 s");
	ASSERT_EQ(sizeof(wake_ns), read(hot_running_fd, &wake_ns, sizeof(wake_ns)));

	fd = open(dt_path("snapshots", path, sizeof(path)), O_RDONLY);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, dt_ring_hdr(fd, &rh));
	slot = malloc(rh.slot_size);
	ASSERT_NE(NULL, slot);
	sh = slot;
	/* Before the wake: stopped, nothing accessed (for the log). */
	for (seq = from - 2; seq <= from; seq++) {
		if (dt_read_slot(fd, &rh, seq, slot))
			continue;
		rec[0] = recall(&rh, slot, self->hot, addr, addr + HOT_BYTES,
				&unobs[0]);
		TH_LOG("window before the wake (seq %llu, %u samples): recall %.3f",
		       (unsigned long long)sh->seq, sh->nr_samples, rec[0]);
	}
	/* The first two windows whose last pass began after the wake (see the top). */
	for (seq = from; got < 2 && seq < from + 20; ) {
		if (dt_read_ll("snapshot_seq") <= seq) {
			dt_sleep_ms(10);
			continue;
		}
		if (dt_read_slot(fd, &rh, ++seq, slot))
			continue;
		/* A window's last pass asked 4096 targets: it took a while. */
		ASSERT_LT(0U, sh->last_pass_us);
		ASSERT_GT(sh->end_ns - sh->start_ns, sh->last_pass_us * 1000ULL)
			TH_LOG("seq %llu: last pass longer than the window",
			       (unsigned long long)sh->seq);
		if (sh->end_ns - sh->last_pass_us * 1000ULL < wake_ns) {
			rec[0] = recall(&rh, slot, self->hot, addr,
					addr + HOT_BYTES, &unobs[0]);
			TH_LOG("window %s the wake (seq %llu, %u samples, last pass %u us, woke %lld us before its end): recall %.3f",
			       sh->end_ns > wake_ns ? "with" : "before",
			       (unsigned long long)sh->seq, sh->nr_samples,
			       sh->last_pass_us,
			       ((long long)sh->end_ns - (long long)wake_ns) / 1000,
			       rec[0]);
			continue;
		}
		rec[got] = recall(&rh, slot, self->hot, addr, addr + HOT_BYTES,
				  &unobs[got]);
		TH_LOG("window %u after the wake (seq %llu, %u samples, %llu ms, last pass %u us, woke %lld us before its end): "
		       "recall %.3f, unobserved checks %llu", got + 1,
		       (unsigned long long)sh->seq, sh->nr_samples,
		       (unsigned long long)(sh->end_ns - sh->start_ns) / 1000000,
		       sh->last_pass_us,
		       ((long long)sh->end_ns - (long long)wake_ns) / 1000,
		       rec[got], unobs[got]);
		got++;
	}
	free(slot);
	close(fd);
	ASSERT_EQ(2U, got) TH_LOG("two windows after the wake");
	EXPECT_LE(0.9, rec[0]) TH_LOG("first window after the wake");
	EXPECT_LE(0.9, rec[1]) TH_LOG("second window after the wake");
}

TEST_HARNESS_MAIN
