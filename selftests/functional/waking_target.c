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
 * are the 4096 targets.  Once the windows are quiet, the stopped one is
 * resumed while the worker sleeps through a window (the windows are 400 ms
 * here, so that the boundary's work for 4096 targets leaves most of one to
 * sleep), and sweeps its hot set over and over.  The window is judged if
 * the worker made no pass in it but its last (one sample), and that pass
 * began after the first sweep that started after the resume was done: then
 * every page the pass checks in the hot set was cleared before the resume
 * (the prepare pass ran before the worker slept: it is seen asleep first)
 * and written after it, so its recall (hot bytes in regions with an access,
 * over all hot bytes) must be 1.  Else (the sweep ended after the last pass
 * began, or the worker was not idle) the target is stopped again and the
 * scenario repeated, up to TRIES times; none judged is a failure.
 *
 * The hot set is mapped far from every other mapping, so that it is a range
 * of its own (the two largest gaps are cut out) and no region holds both
 * hot and never-touched pages: one sample per region decides the window.
 * The next window's recall is logged, not asserted: what its checks read
 * depends on how much of each 5 ms the target ran, which neither the guest's
 * scheduler nor the emulator's host promises (a loaded host made it 0.84).
 * Before the fix the judged window read 0 unless the target's turn to be
 * asked fell in it (1 in 64).
 */
#define _GNU_SOURCE
#include <sys/mman.h>
#include <poll.h>

#include "kselftest_harness.h"
#include "daptrace_sysfs.h"
#include "dt_child.h"

#define HOT_BYTES	(32UL << 20)
/* 16 TiB: far above a non-PIE binary and its heap, far below the mmaps. */
#define HOT_ADDR	(16UL << 40)
#define NR_SLEEPERS	(DT_MAX_TARGETS - 1)
#define AGGR_US		(4 * DT_DEF_AGGR_US)
#define TRIES		5

static pid_t sleepers[NR_SLEEPERS];
/* The hot child writes here the sweep that followed each resume. */
static int hot_sweep_fd = -1;
static unsigned int nr_sleepers;

/* The hot child's clock: the snapshots' (CLOCK_MONOTONIC, ktime_get()). */
struct sweep {
	__u64 start_ns, end_ns;
};

static int resumed;

static void on_sigcont(int sig)
{
	__atomic_store_n(&resumed, 1, __ATOMIC_SEQ_CST);
}

static __u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static void hot_child(int ready_fd, void *arg)
{
	volatile char *p = mmap((void *)HOT_ADDR, HOT_BYTES,
				PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
				-1, 0);
	unsigned long addr = (unsigned long)p;
	struct sweep sw;
	bool report;
	size_t off;

	if (p == MAP_FAILED || signal(SIGCONT, on_sigcont) == SIG_ERR)
		_exit(1);
	for (off = 0; off < HOT_BYTES; off += 4096)
		p[off] = 1;
	/* Stopped before it goes on (see the caller). */
	dt_child_ready(ready_fd, &addr, sizeof(addr));
	raise(SIGSTOP);
	/*
	 * The first sweep begun after a resume is reported when done: the
	 * handler ran when the resume was delivered, before that sweep.
	 */
	for (;;) {
		report = __atomic_exchange_n(&resumed, 0, __ATOMIC_SEQ_CST);
		sw.start_ns = now_ns();
		for (off = 0; off < HOT_BYTES; off += 4096)
			p[off]++;
		sw.end_ns = now_ns();
		if (report)
			dt_child_ready(ready_fd, &sw, sizeof(sw));
	}
}

/* A child that writes one byte per page of @HOT_BYTES forever; @addr. */
static pid_t spawn_hot(unsigned long *addr)
{
	return dt_fork_ready(hot_child, NULL, addr, sizeof(*addr),
			     &hot_sweep_fd);
}

/* Wait until @pid is stopped (state T in /proc/PID/stat). */
static bool wait_stopped(pid_t pid)
{
	double t0 = dt_now_ms();

	while (dt_now_ms() - t0 < 5000) {
		if (dt_task_state(pid) == 'T')
			return true;
		dt_sleep_ms(1);
	}
	return false;
}

/* Wait until @n more windows are published; false after a minute. */
static bool wait_windows(long long n)
{
	long long seq = dt_read_ll("snapshot_seq");
	double t0 = dt_now_ms();

	while (dt_read_ll("snapshot_seq") < seq + n && dt_now_ms() - t0 < 60000)
		dt_sleep_ms(50);
	return dt_read_ll("snapshot_seq") >= seq + n;
}

/*
 * Wait until the worker sleeps within a window, its boundary's work (the
 * prepare pass included) done: seen asleep between two reads of the same
 * snapshot_seq, which were published before it (its one sleep is
 * worker_sleep_until(), interruptible; the rest of its work shows R or D).
 * Return: that snapshot_seq (the window is the next), or -1 after 10 s.
 */
static long long wait_worker_asleep(pid_t worker)
{
	double t0 = dt_now_ms();
	long long seq;

	while (dt_now_ms() - t0 < 10000) {
		seq = dt_read_ll("snapshot_seq");
		if (dt_task_state(worker) == 'S' &&
		    dt_read_ll("snapshot_seq") == seq)
			return seq;
		dt_sleep_ms(1);
	}
	return -1;
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
	ASSERT_EQ(0, dt_set_attrs(DT_DEF_SAMPLE_US, AGGR_US, DT_DEF_UPDATE_US,
				  DT_DEF_MIN_NR_REGIONS, DT_DEF_MAX_NR_REGIONS));
}

FIXTURE_TEARDOWN(waking)
{
	dt_reset();
	if (self->hot > 0) {
		kill(self->hot, SIGCONT);
		dt_reap(self->hot);
	}
	if (hot_sweep_fd >= 0)
		close(hot_sweep_fd);
	hot_sweep_fd = -1;
	while (nr_sleepers)
		dt_reap(sleepers[--nr_sleepers]);
}

/* Log window @seq's recall of the hot set; 0 if read, else -1. */
static int log_window(struct __test_metadata *_metadata, int fd,
		      const struct daptrace_ring_hdr *rh, void *slot,
		      long long seq, pid_t hot, unsigned long addr,
		      __u64 wake_ns, const char *what, double *rec)
{
	const struct daptrace_snap_hdr *sh = slot;
	unsigned long long unobs;

	if (dt_read_slot(fd, rh, seq, slot))
		return -1;
	*rec = recall(rh, slot, hot, addr, addr + HOT_BYTES, &unobs);
	TH_LOG("%s (seq %llu, %u samples, %llu ms, last pass %u us, began %lld us after the sweep's end): recall %.3f, unobserved checks %llu",
	       what, (unsigned long long)sh->seq, sh->nr_samples,
	       (unsigned long long)(sh->end_ns - sh->start_ns) / 1000000,
	       sh->last_pass_us,
	       ((long long)(sh->end_ns - sh->last_pass_us * 1000ULL) -
		(long long)wake_ns) / 1000, *rec, unobs);
	return 0;
}

TEST_F_TIMEOUT(waking, one_of_4096_wakes, 900)
{
	struct daptrace_ring_hdr rh;
	struct daptrace_snap_hdr *sh;
	unsigned long addr;
	long long from;
	unsigned int tries;
	bool judged = false;
	double rec, next;
	struct pollfd pfd;
	struct sweep sw;
	char path[256];
	void *slot;
	pid_t pid, worker;
	int fd;

	self->hot = spawn_hot(&addr);
	ASSERT_LT(0, self->hot) TH_LOG("fork the hot target");
	ASSERT_EQ(HOT_ADDR, addr);
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
	worker = dt_worker_pid();
	ASSERT_LT(0, worker) TH_LOG("no daptrace worker kthread");
	fd = open(dt_path("snapshots", path, sizeof(path)), O_RDONLY);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, dt_ring_hdr(fd, &rh));
	slot = malloc(rh.slot_size);
	ASSERT_NE(NULL, slot);
	sh = slot;

	/* Quiet windows first: every target found idle. */
	ASSERT_TRUE(wait_windows(10)) TH_LOG("10 windows");
	for (tries = 0; tries < TRIES && !judged; tries++) {
		from = wait_worker_asleep(worker);
		ASSERT_LE(0, from) TH_LOG("the worker never slept in 10 s");
		kill(self->hot, SIGCONT);
		pfd = (struct pollfd){ .fd = hot_sweep_fd, .events = POLLIN };
		ASSERT_EQ(1, poll(&pfd, 1, 60000))
			TH_LOG("the hot target did not sweep in 60 s");
		ASSERT_EQ(sizeof(sw), read(hot_sweep_fd, &sw, sizeof(sw)));
		ASSERT_TRUE(wait_windows(from + 2 - dt_read_ll("snapshot_seq")))
			TH_LOG("the window it woke in never ended");
		ASSERT_EQ(0, log_window(_metadata, fd, &rh, slot, from + 1, self->hot, addr,
					sw.end_ns, "the window it woke in", &rec));
		/* A window's last pass asked 4096 targets: it took a while. */
		ASSERT_LT(0U, sh->last_pass_us);
		ASSERT_GT(sh->end_ns - sh->start_ns, sh->last_pass_us * 1000ULL)
			TH_LOG("last pass longer than the window");
		judged = sh->nr_samples == 1 &&
			 sh->end_ns - sh->last_pass_us * 1000ULL > sw.end_ns;
		if (judged) {
			EXPECT_EQ(1.0, rec) TH_LOG("the window it woke in");
			if (wait_windows(1))
				log_window(_metadata, fd, &rh, slot, from + 2, self->hot,
					   addr, sw.end_ns, "the next (not judged)",
					   &next);
			break;
		}
		TH_LOG("try %u: not judged (%s): stop it and again", tries + 1,
		       sh->nr_samples != 1 ? "the worker was not idle" :
		       "its sweep ended after the last pass began");
		/* Stopped, found idle by a last pass, quiet again. */
		kill(self->hot, SIGSTOP);
		ASSERT_TRUE(wait_stopped(self->hot));
		ASSERT_TRUE(wait_windows(3));
	}
	free(slot);
	close(fd);
	ASSERT_TRUE(judged) TH_LOG("no window judged in %u tries", TRIES);
}

TEST_HARNESS_MAIN
