// SPDX-License-Identifier: GPL-2.0
/*
 * Lifecycle torture: targets that exit at random times, exec a new image,
 * are SIGKILLed mid-sample, fork; 1000 on/off cycles; two writers racing on
 * the same attributes and targets; a target churning its memory map (mmap,
 * munmap, mremap, mprotect, THP faults, splits and collapses) under 1 ms
 * sampling with the map re-read at every aggregation.  Each case asserts what
 * a user can observe: state, target_status, counters moving, snapshots
 * consistent, worker threads in /proc, vmalloc use.  Kernel warnings fail it
 * through the harness's log scan.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <sys/syscall.h>

#include "kselftest_harness.h"
#include "stress.h"

#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE	25
#endif

#define MIB		(1UL << 20)
/* Fixed addresses the exec and fork cases recognise in snapshots. */
#define OLD_IMAGE_ADDR	0x600000000000UL
#define NEW_IMAGE_ADDR	0x500000000000UL
#define MARK_LEN	(4 * MIB)

/*
 * The exec case re-executes this binary with DT_STRESS_ROLE=exec-image: the
 * new image maps NEW_IMAGE_ADDR, says so on fd DT_STRESS_FD and keeps
 * touching it.  Runs before the harness's main().
 */
__attribute__((constructor)) static void exec_image_role(void)
{
	const char *role = getenv("DT_STRESS_ROLE");
	const char *fd_env = getenv("DT_STRESS_FD");
	volatile char *p;
	size_t off;
	char c = 'x';

	if (!role || strcmp(role, "exec-image") || !fd_env)
		return;
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	p = mmap((void *)NEW_IMAGE_ADDR, MARK_LEN, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (p == MAP_FAILED)
		_exit(2);
	for (;;) {
		for (off = 0; off < MARK_LEN; off += 4096)
			p[off]++;
		if (c && write(atoi(fd_env), &c, 1) == 1)
			c = 0;
		usleep(1000);
	}
}

static const char *snap_err(int err)
{
	return err ? strerror(-err) : "ok";
}

/* Does any record of @pid in @s intersect [start, end)? */
static bool snap_covers(const struct st_snap *s, pid_t pid, unsigned long start,
			unsigned long end, unsigned int *accesses)
{
	bool hit = false;
	unsigned int i;

	for (i = 0; i < s->nr; i++) {
		const struct daptrace_region_rec *r = &s->recs[i];

		if (r->pid != pid || r->end <= start || r->start >= end)
			continue;
		hit = true;
		if (accesses)
			*accesses += r->nr_accesses;
	}
	return hit;
}

static long long vmalloc_used_kb(void)
{
	char line[128];
	long long kb = -1;
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmallocUsed: %lld kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

FIXTURE(life) {
	pid_t kids[16];
	int nr;
	struct st_snap *snap;
};

FIXTURE_SETUP(life)
{
	self->nr = 0;
	self->snap = NULL;
	DT_SKIP_UNLESS_LOADED();
	ASSERT_EQ(0, dt_reset()) TH_LOG("cannot reset daptrace to defaults");
	self->snap = malloc(sizeof(*self->snap));
	ASSERT_NE(NULL, self->snap);
	ksft_print_msg("seed %#llx (DT_STRESS_SEED)\n", st_seed());
}

FIXTURE_TEARDOWN(life)
{
	int i;

	dt_reset();
	for (i = 0; i < self->nr; i++)
		dt_reap(self->kids[i]);
	free(self->snap);
}

static pid_t keep(FIXTURE_DATA(life) *self, pid_t pid)
{
	if (pid > 0 && self->nr < 16)
		self->kids[self->nr++] = pid;
	return pid;
}

/*
 * Eight targets die one by one at random times while monitoring runs at
 * 1 ms sampling: each is reported "exited" within a few windows, its records
 * vanish from later snapshots, a snapshot carries TARGET_EXITED, and after
 * the last one monitoring turns off by itself and its thread is gone.
 */
TEST_F_TIMEOUT(life, targets_exit_at_random_times, 120)
{
	pid_t pid[8];
	bool flagged = false;
	long long seq0, seq1, seq;
	int i, j, err, status;

	for (i = 0; i < 8; i++) {
		pid[i] = keep(self, st_toucher(2, 1000));
		ASSERT_LT(0, pid[i]);
		ASSERT_EQ(0, dt_add_target(pid[i]));
	}
	ASSERT_EQ(0, dt_set_attrs(1000, 10000, 10000, 10, 200));
	ASSERT_EQ(0, dt_write("state", "on"));
	ASSERT_LE(0, st_wait_ge("nr_snapshots", 3, 10000));
	for (i = 0; i < 8; i++) {
		dt_sleep_ms(st_rand_below(60));
		seq0 = dt_read_ll("snapshot_seq");
		kill(pid[i], SIGKILL);
		waitpid(pid[i], &status, 0);
		self->kids[i] = 0;
		EXPECT_LE(0, st_wait_status(pid[i], "exited", 5000))
			TH_LOG("target %d (#%d) not reported exited", pid[i], i);
		if (i == 7)
			break;
		EXPECT_TRUE(dt_is_on()) TH_LOG("off with %d targets alive", 7 - i);
		/*
		 * Snapshots published after the exit was noticed are free of
		 * it, and the first of them says a target left.
		 */
		seq1 = dt_read_ll("snapshot_seq");
		ASSERT_LE(0, st_wait_ge("snapshot_seq", seq1 + 2, 5000));
		for (seq = seq0 + 1; seq <= seq1 + 2; seq++) {
			err = st_read_snapshot(seq, self->snap);
			if (err)
				continue;	/* overwritten already: fine */
			flagged |= self->snap->hdr.flags & DAPTRACE_SNAP_TARGET_EXITED;
		}
		err = st_read_newest(self->snap);
		ASSERT_EQ(0, err) TH_LOG("newest snapshot: %s", snap_err(err));
		EXPECT_EQ(NULL, st_snap_problem(self->snap, pid + i + 1, 7 - i));
		for (j = 0; j <= i; j++)
			EXPECT_FALSE(snap_covers(self->snap, pid[j], 0, ~0UL, NULL))
				TH_LOG("records of exited target %d", pid[j]);
	}
	EXPECT_TRUE(flagged) TH_LOG("no snapshot carried TARGET_EXITED");
	EXPECT_LE(0, st_wait_str("state", "off", 5000))
		TH_LOG("still on after the last target exited");
	EXPECT_EQ(0, st_wait_workers(0, 2000));
	EXPECT_EQ(-ESRCH, dt_write("state", "on"));
}

/*
 * The target execs: the old image had OLD_IMAGE_ADDR mapped, the new one
 * maps NEW_IMAGE_ADDR and touches it.  Monitoring goes on; after an update
 * interval the regions cover the new mapping (and see its accesses) and no
 * longer the old one.
 */
TEST_F_TIMEOUT(life, target_exec_regions_follow_new_image, 120)
{
	int ready[2], go[2];
	unsigned int acc = 0;
	double t0, t_old = -1, t_new = -1, t_acc = -1;
	char c, fdbuf[16];
	pid_t pid;
	int err;

	ASSERT_EQ(0, pipe(ready));
	ASSERT_EQ(0, pipe(go));
	pid = keep(self, fork());
	ASSERT_LE(0, pid);
	if (pid == 0) {
		char *argv[] = { "lifecycle-exec-image", NULL };
		volatile char *p;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		p = mmap((void *)OLD_IMAGE_ADDR, MARK_LEN, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
		if (p == MAP_FAILED)
			_exit(2);
		p[0] = 1;
		if (write(ready[1], "o", 1) != 1 || read(go[0], &c, 1) != 1)
			_exit(3);
		snprintf(fdbuf, sizeof(fdbuf), "%d", ready[1]);
		setenv("DT_STRESS_ROLE", "exec-image", 1);
		setenv("DT_STRESS_FD", fdbuf, 1);
		execv("/proc/self/exe", argv);
		_exit(4);
	}
	close(ready[1]);
	close(go[0]);
	ASSERT_EQ(1, read(ready[0], &c, 1));
	ASSERT_EQ(0, dt_add_target(pid));
	/* Update at every 10th aggregation: regions change only then. */
	ASSERT_EQ(0, dt_set_attrs(1000, 10000, 100000, 10, 200));
	ASSERT_EQ(0, dt_write("state", "on"));
	ASSERT_LE(0, st_wait_ge("nr_snapshots", 3, 10000));
	ASSERT_EQ(0, st_read_newest(self->snap));
	EXPECT_TRUE(snap_covers(self->snap, pid, OLD_IMAGE_ADDR,
				OLD_IMAGE_ADDR + MARK_LEN, NULL))
		TH_LOG("the old image's mapping is not monitored");

	ASSERT_EQ(1, write(go[1], "g", 1));
	ASSERT_EQ(1, read(ready[0], &c, 1)) TH_LOG("exec'd image did not start");
	t0 = dt_now_ms();
	while (dt_now_ms() - t0 < 10000 && (t_old < 0 || t_new < 0 || t_acc < 0)) {
		dt_sleep_ms(10);
		err = st_read_newest(self->snap);
		if (err)
			continue;
		if (t_old < 0 && !snap_covers(self->snap, pid, OLD_IMAGE_ADDR,
					      OLD_IMAGE_ADDR + MARK_LEN, NULL))
			t_old = dt_now_ms() - t0;
		if (snap_covers(self->snap, pid, NEW_IMAGE_ADDR,
				NEW_IMAGE_ADDR + MARK_LEN, &acc)) {
			if (t_new < 0)
				t_new = dt_now_ms() - t0;
			if (t_acc < 0 && acc)
				t_acc = dt_now_ms() - t0;
		}
		EXPECT_EQ(NULL, st_snap_problem(self->snap, &pid, 1));
	}
	TH_LOG("after exec: old mapping gone from regions at %.0f ms, new one "
	       "covered at %.0f ms, its accesses seen at %.0f ms", t_old, t_new,
	       t_acc);
	EXPECT_LE(0, t_old) TH_LOG("regions still cover the old image");
	EXPECT_LE(0, t_new) TH_LOG("regions never covered the new image");
	EXPECT_LE(0, t_acc) TH_LOG("accesses of the new image never seen");
	EXPECT_TRUE(dt_is_on());
	EXPECT_LE(0, st_wait_status(pid, "monitoring", 10));
	EXPECT_EQ(0, dt_write("state", "off"));
	close(ready[0]);
	close(go[1]);
}

/*
 * A target SIGKILLed at a random moment (also racing "on" itself), at 1 ms
 * sampling with the map re-read every aggregation: monitoring turns off by
 * itself, the target reads "exited", the counters agree with the sequence
 * numbers, the last snapshot is marked LAST and consistent, no thread stays.
 */
TEST_F_TIMEOUT(life, sigkill_target_at_random_times, 180)
{
	int i, iters = 40, raced_on = 0, late_kills = 0, err;
	long long seq0, seq1, nsnap;
	pid_t pid, killer;

	ASSERT_EQ(0, dt_set_attrs(1000, 10000, 10000, 10, 200));
	for (i = 0; i < iters; i++) {
		unsigned int delay_us = st_rand_below(30000);
		bool race = i % 4 == 3;

		pid = st_toucher(4, 0);
		ASSERT_LT(0, pid);
		ASSERT_EQ(0, dt_add_target(pid));
		seq0 = dt_read_ll("snapshot_seq");
		killer = 0;
		if (race) {	/* kill within +-1 ms of the "on" write */
			killer = fork();
			ASSERT_LE(0, killer);
			if (!killer) {
				usleep(st_rand_below(2000));
				kill(pid, SIGKILL);
				_exit(0);
			}
		}
		err = dt_write("state", "on");
		if (race) {
			EXPECT_TRUE(!err || err == -ESRCH) TH_LOG("on: %s", strerror(-err));
			raced_on += err == -ESRCH;
			waitpid(killer, NULL, 0);
		} else {
			ASSERT_EQ(0, err);
			usleep(delay_us);
			late_kills += delay_us > 10000;
			kill(pid, SIGKILL);
		}
		waitpid(pid, NULL, 0);
		EXPECT_LE(0, st_wait_str("state", "off", 5000))
			TH_LOG("iteration %d: still on after the target died", i);
		EXPECT_LE(0, st_wait_status(pid, "exited", 1000));
		EXPECT_EQ(0, st_wait_workers(0, 2000)) TH_LOG("iteration %d", i);
		seq1 = dt_read_ll("snapshot_seq");
		nsnap = dt_read_ll("nr_snapshots");
		if (!err) {
			EXPECT_EQ(seq1 - seq0, nsnap)
				TH_LOG("iteration %d: seq %lld -> %lld but %lld snapshots",
				       i, seq0, seq1, nsnap);
			EXPECT_LE(1, nsnap) TH_LOG("iteration %d: no last snapshot", i);
			err = st_read_snapshot(seq1, self->snap);
			EXPECT_EQ(0, err) TH_LOG("last snapshot: %s", snap_err(err));
			if (!err) {
				EXPECT_TRUE(self->snap->hdr.flags & DAPTRACE_SNAP_LAST);
				EXPECT_EQ(NULL, st_snap_problem(self->snap, &pid, 1));
			}
		}
		ASSERT_EQ(0, dt_remove_target(pid));
		if (_metadata->exit_code)
			break;
	}
	TH_LOG("%d kills, %d raced \"on\" and made it fail with ESRCH, %d after "
	       "more than one window", i, raced_on, late_kills);
}

/*
 * The target forks: a long-lived child and a stream of short-lived ones.
 * Only the parent is monitored -- the long-lived child's own mapping never
 * shows up in the regions -- and the parent stays monitored after its
 * children die.
 */
TEST_F_TIMEOUT(life, target_forks_child_not_monitored, 120)
{
	int pfd[2], forks = 0, uncovered = 0;
	long long nsnap;
	char buf[256];
	double t0;
	ssize_t n;
	pid_t pid;

	ASSERT_EQ(0, pipe(pfd));
	pid = keep(self, fork());
	ASSERT_LE(0, pid);
	if (pid == 0) {
		volatile char *p = mmap(NULL, 2 * MIB, PROT_READ | PROT_WRITE,
					MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		pid_t kid, longlived;
		size_t off;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (p == MAP_FAILED)
			_exit(2);
		for (off = 0; off < 2 * MIB; off += 4096)
			p[off] = 1;
		longlived = fork();
		if (longlived == 0) {
			volatile char *q;

			prctl(PR_SET_PDEATHSIG, SIGKILL);
			q = mmap((void *)OLD_IMAGE_ADDR, MARK_LEN,
				 PROT_READ | PROT_WRITE, MAP_PRIVATE |
				 MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
			if (q == MAP_FAILED)
				_exit(2);
			for (;;) {
				for (off = 0; off < MARK_LEN; off += 4096)
					q[off]++;
				usleep(1000);
			}
		}
		if (write(pfd[1], &longlived, sizeof(longlived)) != sizeof(longlived))
			_exit(3);
		for (;;) {	/* fork storm: COW of the whole 2 MiB each time */
			kid = fork();
			if (kid == 0) {
				for (off = 0; off < 2 * MIB; off += 4096)
					p[off]++;
				_exit(0);
			}
			if (kid > 0)
				waitpid(kid, NULL, 0);
			for (off = 0; off < 2 * MIB; off += 4096)
				p[off]++;
			if (write(pfd[1], "f", 1) != 1)
				_exit(4);
		}
	}
	close(pfd[1]);
	ASSERT_EQ(sizeof(pid_t), read(pfd[0], &self->kids[self->nr], sizeof(pid_t)));
	self->nr++;	/* the long-lived child, reaped by teardown */
	fcntl(pfd[0], F_SETFL, O_NONBLOCK);
	ASSERT_EQ(0, dt_add_target(pid));
	ASSERT_EQ(0, dt_set_attrs(1000, 10000, 20000, 10, 200));
	ASSERT_EQ(0, dt_write("state", "on"));
	t0 = dt_now_ms();
	while (dt_now_ms() - t0 < 3000) {
		dt_sleep_ms(20);
		while ((n = read(pfd[0], buf, sizeof(buf))) > 0)
			forks += n;
		if (st_read_newest(self->snap))
			continue;
		EXPECT_EQ(NULL, st_snap_problem(self->snap, &pid, 1));
		uncovered += !snap_covers(self->snap, pid, OLD_IMAGE_ADDR,
					  OLD_IMAGE_ADDR + MARK_LEN, NULL);
		EXPECT_FALSE(snap_covers(self->snap, pid, OLD_IMAGE_ADDR,
					 OLD_IMAGE_ADDR + MARK_LEN, NULL))
			TH_LOG("the child's mapping shows up in the parent's regions");
		if (_metadata->exit_code)
			break;
	}
	TH_LOG("%d forks of the target while monitoring, %d snapshots checked",
	       forks, uncovered);
	EXPECT_LT(10, forks);
	EXPECT_LT(10, uncovered);
	EXPECT_LE(0, st_wait_status(pid, "monitoring", 10));
	/* The children go; the parent is still monitored. */
	dt_reap(self->kids[self->nr - 1]);
	self->kids[--self->nr] = 0;
	kill(pid, SIGSTOP);
	nsnap = dt_read_ll("nr_snapshots");
	EXPECT_LE(0, st_wait_ge("nr_snapshots", nsnap + 5, 5000));
	EXPECT_TRUE(dt_is_on());
	EXPECT_LE(0, st_wait_status(pid, "monitoring", 10));
	kill(pid, SIGCONT);
	EXPECT_EQ(0, dt_write("state", "off"));
	close(pfd[0]);
}

/*
 * 1000 on/off cycles: state reads what was written, every cycle publishes
 * its last snapshot and the sequence numbers agree with nr_snapshots, and
 * afterwards no worker thread and no ring (vmalloc) is left over.
 */
TEST_F_TIMEOUT(life, on_off_1000_cycles, 240)
{
	long long vm0, vm1, seq0, seq1, nsnap, no_last = 0;
	char buf[16];
	double t0;
	pid_t pid;
	int i, workers0;

	pid = keep(self, st_toucher(4, 2000));
	ASSERT_LT(0, pid);
	ASSERT_EQ(0, dt_add_target(pid));
	/* 0.5 ms / 2 ms windows: a cycle usually spans a few of them. */
	ASSERT_EQ(0, dt_set_attrs(500, 2000, 2000, 10, 1000));
	workers0 = st_count_workers();
	EXPECT_EQ(0, workers0);
	vm0 = vmalloc_used_kb();
	t0 = dt_now_ms();
	for (i = 0; i < 1000; i++) {
		seq0 = dt_read_ll("snapshot_seq");
		ASSERT_EQ(0, dt_write("state", "on")) TH_LOG("cycle %d", i);
		ASSERT_LT(0, dt_read("state", buf, sizeof(buf)));
		ASSERT_STREQ("on", buf) TH_LOG("cycle %d", i);
		if (i % 100 == 99) {
			ASSERT_LE(0, st_wait_ge("nr_snapshots", 3, 5000));
		} else if (i % 3) {
			usleep(st_rand_below(3000));
		}
		ASSERT_EQ(0, dt_write("state", "off")) TH_LOG("cycle %d", i);
		ASSERT_LT(0, dt_read("state", buf, sizeof(buf)));
		ASSERT_STREQ("off", buf) TH_LOG("cycle %d", i);
		seq1 = dt_read_ll("snapshot_seq");
		nsnap = dt_read_ll("nr_snapshots");
		ASSERT_EQ(seq1 - seq0, nsnap) TH_LOG("cycle %d", i);
		no_last += !nsnap;
	}
	ksft_print_msg("1000 cycles in %.1f s; %lld stopped before publishing "
		       "anything\n", (dt_now_ms() - t0) / 1000, no_last);
	EXPECT_EQ(0, st_wait_workers(0, 2000)) TH_LOG("worker threads leaked");
	EXPECT_LE(0, st_wait_status(pid, "idle", 10));
	/* Each "on" allocates a ring; "off" keeps the last one only. */
	vm1 = vmalloc_used_kb();
	TH_LOG("VmallocUsed %lld -> %lld kB", vm0, vm1);
	EXPECT_GT(vm0 + 16384, vm1) TH_LOG("vmalloc grows: rings leaked?");
	EXPECT_EQ(0, no_last) TH_LOG("\"off\" must publish a last snapshot");
}

/* --- two writers --------------------------------------------------------- */

struct race {
	volatile int gen[2];		/* each writer's arrival at the barrier */
	volatile int go;
	int ret[2];
};

/* Wait until both writers arrived at barrier @round (numbers only grow). */
static void race_barrier(struct race *r, int me, int round)
{
	__atomic_store_n(&r->gen[me], round, __ATOMIC_SEQ_CST);
	while (__atomic_load_n(&r->gen[!me], __ATOMIC_SEQ_CST) < round)
		sched_yield();
}

enum race_op { R_ADD, R_REMOVE, R_ATTR, R_ON, R_OFF, R_ATTR_VS_ON, NR_RACE_OPS };

static int race_do(enum race_op op, int me, pid_t pid, unsigned long val)
{
	switch (op) {
	case R_ADD:
		return dt_add_target(pid);
	case R_REMOVE:
		return dt_remove_target(pid);
	case R_ATTR:
		return dt_write_ul("sample_us", val);
	case R_ON:
		return dt_write("state", "on");
	case R_OFF:
		return dt_write("state", "off");
	default:
		return me ? dt_write("state", "on") : dt_write_ul("sample_us", val);
	}
}

/*
 * Two writers hit the same files at the same moment, 300 rounds of six
 * operations: a pid is added exactly once (the other gets EEXIST) and
 * removed exactly once (ENOENT), a raced attribute ends as one of the two
 * values, two "on"s make one worker, two "off"s none, and an attribute
 * write racing "on" either lands before it (and is in force) or gets EBUSY.
 */
TEST_F_TIMEOUT(life, two_writers_race, 180)
{
	struct race *r = mmap(NULL, sizeof(*r), PROT_READ | PROT_WRITE,
			      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	int round, op, other, rounds = 300, n_busy = 0, n_before = 0;
	unsigned long vals[2];
	long long v;
	pid_t pid;

	ASSERT_NE(MAP_FAILED, r);
	memset(r, 0, sizeof(*r));
	pid = keep(self, st_toucher(2, 2000));
	ASSERT_LT(0, pid);
	ASSERT_EQ(0, dt_set_attrs(1000, 10000, 10000, 10, 100));
	other = fork();
	ASSERT_LE(0, other);
	if (other == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		for (round = 1; round <= rounds * NR_RACE_OPS; round++) {
			op = (round - 1) % NR_RACE_OPS;
			race_barrier(r, 1, 2 * round - 1);
			r->ret[1] = race_do(op, 1, pid, 1000 + 2 * round + 1);
			race_barrier(r, 1, 2 * round);
			/* the parent checks, then releases the next round */
			while (__atomic_load_n(&r->go, __ATOMIC_SEQ_CST) < round)
				sched_yield();
		}
		_exit(0);
	}
	keep(self, other);
	for (round = 1; round <= rounds * NR_RACE_OPS; round++) {
		op = (round - 1) % NR_RACE_OPS;
		/* R_ADD starts without the target, R_ON needs it back */
		if (op == R_ON)
			ASSERT_EQ(0, dt_add_target(pid));
		vals[0] = 1000 + 2 * round;
		vals[1] = 1000 + 2 * round + 1;
		race_barrier(r, 0, 2 * round - 1);
		r->ret[0] = race_do(op, 0, pid, vals[0]);
		race_barrier(r, 0, 2 * round);
		switch (op) {
		case R_ADD:
			EXPECT_TRUE((!r->ret[0] && r->ret[1] == -EEXIST) ||
				    (!r->ret[1] && r->ret[0] == -EEXIST))
				TH_LOG("round %d: add/add %d %d", round, r->ret[0],
				       r->ret[1]);
			break;
		case R_REMOVE:
			EXPECT_TRUE((!r->ret[0] && r->ret[1] == -ENOENT) ||
				    (!r->ret[1] && r->ret[0] == -ENOENT))
				TH_LOG("round %d: remove/remove %d %d", round,
				       r->ret[0], r->ret[1]);
			ASSERT_EQ(-ENOENT, dt_remove_target(pid));
			break;
		case R_ATTR:
			EXPECT_EQ(0, r->ret[0]);
			EXPECT_EQ(0, r->ret[1]);
			v = dt_read_ll("sample_us");
			EXPECT_TRUE(v == (long long)vals[0] || v == (long long)vals[1])
				TH_LOG("round %d: sample_us %lld", round, v);
			break;
		case R_ON:
			EXPECT_EQ(0, r->ret[0]);
			EXPECT_EQ(0, r->ret[1]);
			EXPECT_TRUE(dt_is_on());
			EXPECT_EQ(1, st_wait_workers(1, 2000)) TH_LOG("round %d", round);
			break;
		case R_OFF:
			EXPECT_EQ(0, r->ret[0]);
			EXPECT_EQ(0, r->ret[1]);
			EXPECT_FALSE(dt_is_on());
			EXPECT_EQ(0, st_wait_workers(0, 2000)) TH_LOG("round %d", round);
			break;
		default:
			EXPECT_EQ(0, r->ret[1]) TH_LOG("round %d: on", round);
			v = dt_read_ll("sample_us");
			if (r->ret[0] == -EBUSY) {
				n_busy++;
				EXPECT_NE((long long)vals[0], v);
			} else {
				n_before++;
				EXPECT_EQ(0, r->ret[0]);
				EXPECT_EQ((long long)vals[0], v);
			}
			/* the worker runs with what was in force at "on" */
			ASSERT_EQ(0, dt_write("state", "off"));
			ASSERT_EQ(0, dt_remove_target(pid));
			break;
		}
		__atomic_store_n(&r->go, round, __ATOMIC_SEQ_CST);
		if (_metadata->exit_code)
			break;
	}
	TH_LOG("%d rounds; attribute vs \"on\": %d before, %d EBUSY", round - 1,
	       n_before, n_busy);
	munmap(r, sizeof(*r));
}

/* --- map churn ----------------------------------------------------------- */

struct churn_stats {
	volatile int stop;
	unsigned long ops, mmaps, munmaps, mremaps, mprotects, thp_touch,
		      dontneed, collapse_ok, collapse_einval, collapse_other,
		      shmem_collapse_ok;
};

static void churn(struct churn_stats *cs)
{
	enum { POOL = 32 };
	struct { char *p; size_t len; } pool[POOL] = { { 0 } };
	const size_t huge = 2 * MIB, thp_len = 8 * MIB;
	char *thp_raw, *thp, *shm = MAP_FAILED;
	size_t off, len;
	int i, memfd;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	thp_raw = mmap(NULL, thp_len + huge, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (thp_raw == MAP_FAILED)
		_exit(2);
	thp = (char *)(((unsigned long)thp_raw + huge - 1) & ~(huge - 1));
	madvise(thp, thp_len, MADV_HUGEPAGE);
	/* shmem collapse needs a 2 MiB aligned mapping: carve one out */
	memfd = memfd_create("churn", 0);
	shm = mmap(NULL, 4 * MIB + huge, PROT_NONE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (memfd >= 0 && !ftruncate(memfd, 4 * MIB) && shm != MAP_FAILED) {
		shm = (char *)(((unsigned long)shm + huge - 1) & ~(huge - 1));
		shm = mmap(shm, 4 * MIB, PROT_READ | PROT_WRITE,
			   MAP_SHARED | MAP_FIXED, memfd, 0);
		if (shm != MAP_FAILED)
			madvise(shm, 4 * MIB, MADV_HUGEPAGE);
	} else {
		shm = MAP_FAILED;
	}
	while (!cs->stop) {
		i = st_rand_below(POOL);
		cs->ops++;
		switch (st_rand_below(10)) {
		case 0: case 1: case 2:		/* map / unmap */
			if (pool[i].p) {
				munmap(pool[i].p, pool[i].len);
				pool[i].p = NULL;
				cs->munmaps++;
				break;
			}
			len = (1 + st_rand_below(64)) * 4096;
			pool[i].p = mmap(NULL, len, PROT_READ | PROT_WRITE,
					 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			if (pool[i].p == MAP_FAILED) {
				pool[i].p = NULL;
				break;
			}
			pool[i].len = len;
			for (off = 0; off < len; off += 4096)
				pool[i].p[off] = 1;
			cs->mmaps++;
			break;
		case 3: {			/* mremap: grow, shrink or move */
			char *np;

			if (!pool[i].p)
				break;
			len = (1 + st_rand_below(128)) * 4096;
			np = mremap(pool[i].p, pool[i].len, len, MREMAP_MAYMOVE);
			if (np == MAP_FAILED)
				break;
			pool[i].p = np;
			pool[i].len = len;
			mprotect(np, len, PROT_READ | PROT_WRITE);
			np[len - 1] = 1;
			cs->mremaps++;
			break;
		}
		case 4:				/* mprotect a part: splits VMAs */
			if (!pool[i].p)
				break;
			off = st_rand_below(pool[i].len / 4096) * 4096;
			mprotect(pool[i].p + off, 4096, st_rand_below(2) ?
				 PROT_READ : PROT_READ | PROT_WRITE);
			cs->mprotects++;
			break;
		case 5: case 6:			/* THP faults */
			mprotect(thp, thp_len, PROT_READ | PROT_WRITE);
			for (off = 0; off < thp_len; off += 4096)
				thp[off]++;
			cs->thp_touch++;
			break;
		case 7:				/* split: zap part of a huge page */
			off = st_rand_below(thp_len / 4096 - 128) * 4096;
			madvise(thp + off, (1 + st_rand_below(128)) * 4096,
				MADV_DONTNEED);
			if (st_rand_below(4) == 0)	/* or its protection */
				mprotect(thp + off, 4096, PROT_READ);
			else
				mprotect(thp, thp_len, PROT_READ | PROT_WRITE);
			cs->dontneed++;
			break;
		case 8:				/* collapse (6.1: EINVAL) */
			mprotect(thp, thp_len, PROT_READ | PROT_WRITE);
			for (off = 0; off < thp_len; off += 4096)
				thp[off]++;
			if (!madvise(thp, thp_len, MADV_COLLAPSE))
				cs->collapse_ok++;
			else if (errno == EINVAL)
				cs->collapse_einval++;
			else
				cs->collapse_other++;
			break;
		default:			/* shmem: collapse retracts tables */
			if (shm == MAP_FAILED)
				break;
			for (off = 0; off < 4 * MIB; off += 4096)
				shm[off]++;
			if (st_rand_below(2))
				madvise(shm, 4 * MIB, MADV_DONTNEED);
			else if (!madvise(shm, 4 * MIB, MADV_COLLAPSE))
				cs->shmem_collapse_ok++;
			break;
		}
	}
	_exit(0);
}

static long long vmstat(const char *name)
{
	char key[64];
	long long v, found = 0;
	FILE *f = fopen("/proc/vmstat", "r");

	if (!f)
		return -1;
	while (fscanf(f, "%63s %lld", key, &v) == 2)
		if (!strcmp(key, name))
			found = v;
	fclose(f);
	return found;
}

static int write_file(const char *path, const char *val, char *old, size_t len)
{
	int fd, n;

	if (old) {
		fd = open(path, O_RDONLY);
		if (fd < 0)
			return -errno;
		n = read(fd, old, len - 1);
		close(fd);
		old[n > 0 ? n : 0] = '\0';
		/* "always [madvise] never" -> "madvise" */
		if (strchr(old, '[')) {
			char *s = strchr(old, '[') + 1;

			memmove(old, s, strcspn(s, "]"));
			old[strcspn(s, "]")] = '\0';
		}
	}
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -errno;
	n = write(fd, val, strlen(val));
	close(fd);
	return n < 0 ? -errno : 0;
}

#define THP_DIR	"/sys/kernel/mm/transparent_hugepage/"

/*
 * A target that maps/unmaps, mremaps, mprotects, faults THPs, splits them
 * (MADV_DONTNEED and mprotect on parts) and collapses them (MADV_COLLAPSE,
 * anon and shmem, and a khugepaged told to scan fast), monitored at 1 ms
 * sampling with the map re-read at every 10 ms aggregation and tlb_flush
 * "mm".  Monitoring must keep running with consistent snapshots, and the
 * target must survive.
 */
TEST_F_TIMEOUT(life, map_churn_with_thp_split_collapse, 180)
{
	enum { MIN_OPS = 1000, HANG_SECS = 120 };
	struct churn_stats *cs = mmap(NULL, sizeof(*cs), PROT_READ | PROT_WRITE,
				      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	char shmem_old[64] = "", sleep_old[64] = "", scan_old[64] = "";
	char thp_old[64] = "";
	long long split0, coll0, fault0, nsnap, nsamp;
	int checked = 0, status, secs = 8;
	double t0, elapsed;
	pid_t pid;

	ASSERT_NE(MAP_FAILED, cs);
	memset(cs, 0, sizeof(*cs));
	write_file(THP_DIR "shmem_enabled", "advise", shmem_old, sizeof(shmem_old));
	write_file(THP_DIR "khugepaged/scan_sleep_millisecs", "10", sleep_old,
		   sizeof(sleep_old));
	write_file(THP_DIR "khugepaged/pages_to_scan", "8192", scan_old,
		   sizeof(scan_old));
	write_file(THP_DIR "enabled", "always", thp_old, sizeof(thp_old));
	split0 = vmstat("thp_split_pmd");
	coll0 = vmstat("thp_collapse_alloc");
	fault0 = vmstat("thp_fault_alloc");

	pid = keep(self, fork());
	ASSERT_LE(0, pid);
	if (pid == 0)
		churn(cs);
	ASSERT_EQ(0, dt_add_target(pid));
	ASSERT_EQ(0, dt_write("tlb_flush", "mm"));
	ASSERT_EQ(0, dt_set_attrs(1000, 10000, 10000, 10, 500));
	ASSERT_EQ(0, dt_write("state", "on"));
	/*
	 * The churn runs for at least @secs and until it has done MIN_OPS
	 * operations: a slow host (TCG beside a busy build) gets there later,
	 * and only a churn that hangs reaches the limit below.
	 */
	t0 = dt_now_ms();
	while ((elapsed = dt_now_ms() - t0) < secs * 1000 ||
	       (cs->ops <= MIN_OPS && elapsed < HANG_SECS * 1000)) {
		dt_sleep_ms(100);
		if (st_read_newest(self->snap))
			continue;
		checked++;
		EXPECT_EQ(NULL, st_snap_problem(self->snap, &pid, 1))
			TH_LOG("snapshot %llu", (unsigned long long)self->snap->hdr.seq);
		EXPECT_GE(500, self->snap->hdr.nr_regions);
		if (_metadata->exit_code)
			break;
	}
	/* still sampling at the end of the churn, not stalled */
	nsamp = dt_read_ll("nr_samples");
	EXPECT_LE(0, st_wait_ge("nr_samples", nsamp + 10, 2000))
		TH_LOG("sampling stalled under the churn");
	nsnap = dt_read_ll("nr_snapshots");
	nsamp = dt_read_ll("nr_samples");
	EXPECT_TRUE(dt_is_on()) TH_LOG("monitoring stopped during the churn");
	EXPECT_LE(0, st_wait_status(pid, "monitoring", 10));
	cs->stop = 1;
	status = dt_wait_exit(pid, 10000);
	EXPECT_TRUE(status != -1 && WIFEXITED(status) && !WEXITSTATUS(status))
		TH_LOG("churning target died: status %#x", status);
	if (status != -1)
		self->kids[self->nr - 1] = 0;
	EXPECT_EQ(0, dt_write("state", "off"));

	ksft_print_msg("%.1f s: %lu ops (%.0f/s): %lu mmap %lu munmap %lu mremap "
		       "%lu mprotect %lu THP touch %lu split; MADV_COLLAPSE anon "
		       "ok %lu EINVAL %lu other %lu, shmem ok %lu\n",
		       elapsed / 1000, cs->ops, cs->ops / (elapsed / 1000),
		       cs->mmaps, cs->munmaps, cs->mremaps, cs->mprotects,
		       cs->thp_touch, cs->dontneed, cs->collapse_ok,
		       cs->collapse_einval, cs->collapse_other,
		       cs->shmem_collapse_ok);
	ksft_print_msg("THP enabled was \"%s\"; vmstat: thp_fault_alloc +%lld thp_split_pmd +%lld "
		       "thp_collapse_alloc +%lld; daptrace: %lld snapshots, %lld "
		       "samples (%lld late), %d snapshots checked\n", thp_old,
		       vmstat("thp_fault_alloc") - fault0,
		       vmstat("thp_split_pmd") - split0,
		       vmstat("thp_collapse_alloc") - coll0, nsnap, nsamp,
		       dt_read_ll("nr_samples_late"), checked);
	EXPECT_LT(MIN_OPS, cs->ops) TH_LOG("the churn hung: %lu operations in %d s",
					   cs->ops, HANG_SECS);
	EXPECT_LT(0, vmstat("thp_split_pmd") - split0) TH_LOG("no THP was split");
	EXPECT_LT(secs * 10, nsnap) TH_LOG("too few snapshots");
	/*
	 * 1000 rounds a second are the goal; TCG with the churn, khugepaged
	 * and IPIs on two vCPUs manages far fewer (see nr_samples_late), so
	 * this only catches a worker that stalls.
	 */
	EXPECT_LT(secs * 20, nsamp) TH_LOG("too few samples");
	EXPECT_LT(10, checked);

	if (thp_old[0])
		write_file(THP_DIR "enabled", thp_old, NULL, 0);
	if (shmem_old[0])
		write_file(THP_DIR "shmem_enabled", shmem_old, NULL, 0);
	if (sleep_old[0])
		write_file(THP_DIR "khugepaged/scan_sleep_millisecs", sleep_old, NULL, 0);
	if (scan_old[0])
		write_file(THP_DIR "khugepaged/pages_to_scan", scan_old, NULL, 0);
	munmap(cs, sizeof(*cs));
}

TEST_HARNESS_MAIN
